// SPDX-License-Identifier: MIT
/* SMP bring-up; see smp.h and the trampoline's contract in trampoline.S. */
#include "apic/apic.h"
#include "apic/options.h"
#include "apic/smp.h"
#include "kernel/acpi/acpi.h"
#include "kernel/acpi/madt.h"
#include "kernel/acpi/srat.h"
#include "kernel/kernel.h"
#include "kernel/lib/json.h"
#include "kernel/lib/option.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/stats.h"
#include "kernel/lib/string.h"
#include "kernel/options.h"
#include "kernel/test/ktap.h"
#include "kernel/time/clock.h"
#include "kernel/time/delay.h"
#include "kernel/time/lpj.h"
#include "kernel/time/options.h"
#include "kernel/x86/alloc.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"

#define AP_STACK_SIZE (16 * KiB)
/*
 * Hang bounds, not targets: an AP calibrates for ~80 ms, but on a loaded
 * 2-core TCG host 64 APs calibrating at once took over a minute.
 */
#define AP_ONLINE_TIMEOUT_US (10 * 1000000ULL)
#define PARALLEL_TIMEOUT_US (30 * 1000000ULL)
#define PARALLEL_TIMEOUT_PER_AP_US 1000000ULL
/* Linux wakeup_secondary_cpu_via_init(): SIPI settle times. */
#define SIPI_DELAY_MODERN_US 10
#define SIPI_DELAY_LEGACY_US 300
#define SIPI_SETTLE_LEGACY_US 200
/* Levels of CPUID.0BH to look at: SMT, core and the few SDM Vol 2A adds. */
#define TOPOLOGY_MAX_LEVELS 8
/*
 * A parked AP PAUSEs this many times, then HLTs. It has no tick of its
 * own: an APIC timer armed as a backstop on every parked AP doubled each
 * calibration's cost under TCG (16 vCPUs on 4 nodes, a loaded host), so
 * the BSP nudges parked APs instead, once AP_ONLINE_TIMEOUT_US has passed,
 * for them to see their own timeouts.
 */
#define PARK_PAUSES 256
/* The host-parallelism probe: APs in it, their window, and the lead-in. */
#define PROBE_MAX_APS 4
#define PROBE_WINDOW_US 1000
#define PROBE_LEAD_US 200
#define PROBE_ARRIVE_US 5000
#define PROBE_SOLO_TRIES 2
#define PROBE_SOLO_US 500
#define PROBE_ALIVE_TIMEOUT_US (5 * 1000000ULL)

struct ap_table_entry {
	u32 apic_id;
	u32 pad;
	struct percpu *cpu;
};

/* Read by ap_entry64 before an AP has a stack: count, then entries. */
struct {
	u64 count;
	struct ap_table_entry entries[MAX_CPUS];
} smp_ap_table;

static struct {
	struct madt_info madt;
	bool have_madt;
	struct srat_info srat;
	bool have_srat;
	u32 nodes;
	u32 package_shift;
	u64 trampoline;
	/* CPUs the MADT lists that we could not or would not start, and why. */
	char problems[256];
	u64 tsc_start, tsc_end;
	u32 started; /* APs kicked */
	u64 init_udelay; /* what init_udelay= came to, and why */
	const char *init_udelay_why;
} smp;

/*
 * Parallel bring-up's line of calibrating APs: rank r may start once
 * granted > r. The BSP grants the first `concurrency` ranks; each AP that
 * finishes grants one more and wakes its holder.
 */
static struct {
	u32 calibrators;
	volatile u32 granted;
	u32 concurrency;
	char why[160];
	u32 parallelism_x100; /* what the probe measured; 0 when none ran */
	u32 probed;
	volatile u32 probe_round, probe_arrived;
	volatile u64 probe_start, probe_end;
	u64 solo_loops, yardstick_us;
	struct percpu *ranked[MAX_CPUS];
} line;

extern const u8 trampoline_start[], trampoline_end[];
extern const u8 tr_gdt[], tr_gdt_ptr[], tr_far32[], tr_cr3[], tr_protected[];

void ap_main(struct percpu *cpu);

/* APIC ID bits below the package ID: the widest CPUID.0BH level's shift. */
static u32 package_shift(void)
{
	u32 shift = 0;

	for (u32 level = 0; level < TOPOLOGY_MAX_LEVELS; level++) {
		if (cpu_property(X86_PROPERTY_TOPOLOGY_TYPE(level)) == CPUID_TOPOLOGY_TYPE_INVALID)
			break;
		shift = cpu_property(X86_PROPERTY_TOPOLOGY_SHIFT(level));
	}
	if (shift)
		return shift;
	/* Without leaf 0BH: the addressable logical processors per package. */
	for (u32 count = cpu_property(X86_PROPERTY_MAX_LOGICAL_CPUS); (1u << shift) < count;)
		shift++;
	return shift;
}

static void describe(struct percpu *cpu, u32 apic_id)
{
	cpu->apic_id = apic_id;
	cpu->node = smp_node_of(apic_id);
	cpu->package = apic_id >> smp.package_shift;
}

static struct percpu *new_ap(u32 apic_id)
{
	struct percpu *cpu = boot_alloc(sizeof(*cpu), 64);
	u8 *stack = boot_alloc(AP_STACK_SIZE, 16);

	if (!cpu || !stack)
		return NULL;
	describe(cpu, apic_id);
	cpu->stack_top = (u64)(uintptr_t)(stack + AP_STACK_SIZE);
	smp_ap_table.entries[smp_ap_table.count++] =
		(struct ap_table_entry){ .apic_id = apic_id, .cpu = cpu };
	return cpu;
}

static bool place_trampoline(char *err, size_t errlen)
{
	u64 page = alloc_low_page(boot_info);
	u8 *p = (u8 *)(uintptr_t)page;
	u32 gdt = (u32)page + (u32)(tr_gdt - trampoline_start);
	u32 far32 = (u32)page + (u32)(tr_protected - trampoline_start);
	u32 cr3 = (u32)read_cr3();

	if (!page) {
		snprintf(err, errlen, "no free page below 640 KiB for the AP trampoline");
		return false;
	}
	memcpy(p, trampoline_start, trampoline_end - trampoline_start);
	memcpy(p + (tr_gdt_ptr - trampoline_start) + 2, &gdt, 4);
	memcpy(p + (tr_far32 - trampoline_start), &far32, 4);
	memcpy(p + (tr_cr3 - trampoline_start), &cr3, 4);
	smp.trampoline = page;
	return true;
}

bool smp_init(char *err, size_t errlen)
{
	const struct acpi_header *madt = acpi_ok ? acpi_find(&acpi, "APIC", 0) : NULL;
	const struct acpi_header *srat = acpi_ok ? acpi_find(&acpi, "SRAT", 0) : NULL;
	struct percpu *bsp = this_cpu();
	u32 max_aps = apic_options.cpus;

	smp.package_shift = package_shift();
	smp.have_madt = madt && acpi_madt_parse(madt, &smp.madt);
	smp.have_srat = srat && acpi_srat_parse(srat, &smp.srat);
	smp.nodes = smp.have_srat && smp.srat.node_count ? smp.srat.node_count : 1;

	bsp->apic_id = bsp->hw_apic_id = apic_id();
	describe(bsp, bsp->apic_id);
	bsp->state = CPU_ONLINE;
	cpu_add(bsp);
	if (!smp.have_madt) {
		note(smp.problems, "no usable MADT: only the BSP runs");
		return true;
	}

	for (u32 i = 0; i < smp.madt.cpu_count; i++) {
		u32 id = smp.madt.cpus[i].apic_id;
		struct percpu *cpu;

		if (id == bsp->apic_id)
			continue;
		if (!smp.madt.cpus[i].enabled)
			continue;
		if (cpu_count() - 1 >= max_aps)
			break;
		if (id > apic_max_id()) {
			note(smp.problems, "APIC ID %u is beyond %s's reach", id, apic_mode_name());
			continue;
		}
		if (cpu_count() == MAX_CPUS) {
			note(smp.problems, "more than %d CPUs listed", MAX_CPUS);
			break;
		}
		cpu = new_ap(id);
		if (!cpu) {
			note(smp.problems, "out of memory for CPU %u's data", cpu_count());
			break;
		}
		cpu_add(cpu);
	}
	return cpu_count() == 1 || place_trampoline(err, errlen);
}

static bool withheld(const struct percpu *cpu)
{
	return kernel_options.fault == FAULT_AP_SILENT && cpu->index == cpu_count() - 1;
}

/* INIT, INIT de-assert, SIPI, SIPI: Linux's wakeup_secondary_cpu_via_init(). */
static void kick(struct percpu *cpu)
{
	u32 sipi = APIC_ICR_DM_STARTUP | APIC_ICR_VECTOR(smp.trampoline >> 12);
	bool modern = !smp.init_udelay;

	apic_esr();
	cpu->tsc_init = rdtsc();
	apic_send_ipi(cpu->apic_id, APIC_ICR_DM_INIT | APIC_ICR_LEVEL_ASSERT |
					    APIC_ICR_TRIGGER_LEVEL);
	udelay(smp.init_udelay);
	apic_send_ipi(cpu->apic_id, APIC_ICR_DM_INIT | APIC_ICR_TRIGGER_LEVEL);
	cpu->tsc_sipi = rdtsc();
	/* fault=ap_silent: the last AP gets no SIPI, so it never answers. */
	if (withheld(cpu)) {
		smp.started++;
		return;
	}
	for (int i = 0; i < 2; i++) {
		apic_send_ipi(cpu->apic_id, sipi);
		udelay(modern ? SIPI_DELAY_MODERN_US : SIPI_DELAY_LEGACY_US);
		udelay(modern ? SIPI_DELAY_MODERN_US : SIPI_SETTLE_LEGACY_US);
	}
	cpu->esr = apic_esr();
	smp.started++;
}

/*
 * Parallel bring-up's kick of APs [first, end): the same sequence to each,
 * every step sent to all of them before the wait that follows it is taken
 * once, as the SDM's MP initialization example broadcasts INIT-SIPI-SIPI
 * (Vol 3A 9.4.4.1), but addressed AP by AP so that cpus= and fault= still
 * hold. Linux 6.5 kicks AP by AP with every wait each time, which costs
 * as much per AP as bringing one up: under TCG an AP is up 20 us after
 * its SIPI, well inside the 40 us of waits that follow it.
 */
static void kick_batch(const u32 *idx, u32 n)
{
	u32 sipi = APIC_ICR_DM_STARTUP | APIC_ICR_VECTOR(smp.trampoline >> 12);
	bool modern = !smp.init_udelay;
	u32 esr;

	apic_esr();
	for (u32 k = 0; k < n; k++) {
		cpu_at(idx[k])->tsc_init = rdtsc();
		apic_send_ipi(cpu_at(idx[k])->apic_id,
			      APIC_ICR_DM_INIT | APIC_ICR_LEVEL_ASSERT | APIC_ICR_TRIGGER_LEVEL);
	}
	udelay(smp.init_udelay);
	for (u32 k = 0; k < n; k++) {
		apic_send_ipi(cpu_at(idx[k])->apic_id, APIC_ICR_DM_INIT | APIC_ICR_TRIGGER_LEVEL);
		cpu_at(idx[k])->tsc_sipi = rdtsc();
	}
	for (int round = 0; round < 2; round++) {
		for (u32 k = 0; k < n; k++)
			if (!withheld(cpu_at(idx[k])))
				apic_send_ipi(cpu_at(idx[k])->apic_id, sipi);
		udelay(modern ? SIPI_DELAY_MODERN_US : SIPI_DELAY_LEGACY_US);
		udelay(modern ? SIPI_DELAY_MODERN_US : SIPI_SETTLE_LEGACY_US);
	}
	esr = apic_esr();
	for (u32 k = 0; k < n; k++)
		cpu_at(idx[k])->esr = esr;
	smp.started += n;
}

/*
 * APs kicked together. Under TCG, APs that start at once slow each other
 * down (each vCPU's INIT and first run take QEMU work that waits for the
 * running vCPUs), so a whole machine kicked at once came up slower than
 * serially: 255 vCPUs in 56-75 ms against 29 ms serially, 16 in 2-46 ms
 * against 2-6 ms, on 2 loaded host cores. Pairs sharing their waits,
 * each kicked once the pair before is alive, came to 29-38 ms and
 * 2.0-2.7 ms: the waits shared, the start-up overlapped with the next
 * kick, and no crowd.
 */
#define KICK_BATCH 2

struct batch {
	u32 idx[KICK_BATCH];
	u32 n;
};

static bool batch_alive(void *arg)
{
	const struct batch *b = arg;

	for (u32 k = 0; k < b->n; k++)
		if (cpu_at(b->idx[k])->state == CPU_OFFLINE)
			return false;
	return true;
}

static void kick_and_wait(struct batch *b)
{
	kick_batch(b->idx, b->n);
	smp_wait(batch_alive, b, AP_ONLINE_TIMEOUT_US);
	b->n = 0;
}

/*
 * Every AP, in batches; `first` (an index, 0 for none) alone before the
 * rest: the first calibrating AP then starts its calibration when it
 * would serially, on the same tick, and a chain of calibrations, each
 * ending on a tick edge, ends no later than the serial one.
 */
static void kick_all(u32 first)
{
	struct batch b = { .n = 0 };

	if (first) {
		b.idx[b.n++] = first;
		kick_and_wait(&b);
	}
	for (u32 i = 1; i < cpu_count(); i++) {
		if (i == first)
			continue;
		b.idx[b.n++] = i;
		if (b.n == KICK_BATCH)
			kick_and_wait(&b);
	}
	if (b.n)
		kick_and_wait(&b);
}

static bool is_online(void *arg)
{
	return ((struct percpu *)arg)->state == CPU_ONLINE;
}

static bool all_online(void *arg)
{
	(void)arg;
	for (u32 i = 1; i < cpu_count(); i++)
		if (cpu_at(i)->state != CPU_ONLINE)
			return false;
	return true;
}

bool smp_wait(bool (*done)(void *arg), void *arg, u64 timeout_us)
{
	u64 start = rdtsc(), limit = timeout_us * (clock.tsc_hz / 1000000);

	for (;;) {
		cli();
		if (done(arg)) {
			sti();
			return true;
		}
		if (rdtsc() - start > limit) {
			sti();
			return false;
		}
		/* STI's shadow covers HLT: a wake-up between check and HLT ends it. */
		asm volatile("sti; hlt" ::: "memory");
	}
}

void smp_wake(const struct percpu *cpu)
{
	apic_send_ipi(cpu->apic_id, APIC_ICR_DM_FIXED | APIC_ICR_VECTOR(APIC_VECTOR_WAKE));
}

/* init_udelay=: a number given wins; auto is Linux's smp_quirk_init_udelay(). */
static void choose_init_udelay(void)
{
	char vendor[13];

	if (apic_options.init_udelay != OPTION_AUTO) {
		smp.init_udelay = apic_options.init_udelay;
		smp.init_udelay_why = "init_udelay= on the command line";
		return;
	}
	cpu_vendor(vendor);
	smp.init_udelay = init_udelay_rule(vendor, cpu_signature().family, &smp.init_udelay_why);
}

/* A loop the probe counts: as many turns as the host lets it run before end. */
static u64 __attribute__((noinline)) spin_until(u64 end)
{
	u64 n = 0;

	while (rdtsc() < end) {
		n++;
		asm volatile("" ::: "memory");
	}
	return n;
}

/* The probe runs on the calibrating APs after the first, which is calibrating meanwhile. */
static bool in_probe(const struct percpu *cpu)
{
	return cpu->lpj_plan == LPJ_PLAN_CALIBRATE && cpu->cal_rank >= 1 &&
	       cpu->cal_rank <= line.probed;
}

/* On a parked AP: run the probe's window once per round it is asked to. */
static bool probe_wanted(const struct percpu *cpu)
{
	return in_probe(cpu) && cpu->probe_round != line.probe_round;
}

/*
 * The window opens once every AP in the probe is running: the last to
 * arrive sets its start a little ahead, so that a vCPU the host wakes
 * late is not counted as slow, only one that the host cannot run beside
 * the others. An AP that waits PROBE_ARRIVE_US for the rest counts 0.
 */
static void probe_run(struct percpu *cpu)
{
	u32 round = line.probe_round;
	u64 per_us = clock.tsc_hz / 1000000, t0 = rdtsc();

	cpu->probe_loops = 0;
	if (__atomic_add_fetch(&line.probe_arrived, 1, __ATOMIC_ACQ_REL) == line.probed) {
		u64 start = rdtsc() + PROBE_LEAD_US * per_us;

		__atomic_store_n(&line.probe_end, start + PROBE_WINDOW_US * per_us,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&line.probe_start, start, __ATOMIC_RELEASE);
	}
	while (!__atomic_load_n(&line.probe_start, __ATOMIC_ACQUIRE) &&
	       rdtsc() - t0 < PROBE_ARRIVE_US * per_us)
		pause();
	if (line.probe_start) {
		while (rdtsc() < line.probe_start)
			pause();
		cpu->probe_loops = spin_until(line.probe_end);
	}
	__atomic_store_n(&cpu->probe_round, round, __ATOMIC_RELEASE);
}

/*
 * Park the calling AP until ready(cpu) or timeout_us: PAUSE a little, then
 * HLT, woken by whoever makes it ready (a fixed IPI), or by the BSP's
 * nudges once a wait runs long (wait_parallel()). A spinning vCPU takes
 * host time its siblings need; a halted one gives it back. False on
 * timeout.
 */
static bool ap_park(struct percpu *cpu, bool (*ready)(const struct percpu *), const char *what,
		    u64 timeout_us)
{
	u64 start = rdtsc(), limit = timeout_us * (clock.tsc_hz / 1000000);
	bool ok = true;

	cpu->waited_for = what;
	cpu->tsc_wait_start = start;
	for (u32 spins = 0; !ready(cpu); spins++) {
		if (probe_wanted(cpu)) {
			probe_run(cpu);
			continue;
		}
		if (rdtsc() - start > limit) {
			ok = false;
			break;
		}
		if (spins < PARK_PAUSES) {
			pause();
			continue;
		}
		cli();
		if (ready(cpu) || probe_wanted(cpu)) {
			sti();
			continue;
		}
		/* STI's shadow covers HLT: a wake-up between check and HLT ends it. */
		asm volatile("sti; hlt" ::: "memory");
	}
	cpu->tsc_wait_end = rdtsc();
	return ok;
}

static bool source_ready(const struct percpu *cpu)
{
	return __atomic_load_n(&cpu->lpj_from->lpj_ready, __ATOMIC_ACQUIRE);
}

static bool my_turn(const struct percpu *cpu)
{
	return cpu->cal_rank < __atomic_load_n(&line.granted, __ATOMIC_ACQUIRE);
}

static u64 parallel_timeout_us(void)
{
	return PARALLEL_TIMEOUT_US + (cpu_count() - 1) * PARALLEL_TIMEOUT_PER_AP_US;
}

/*
 * An AP's lpj in parallel bring-up: a copier waits (parked) for its
 * source, a calibrating AP for its turn; then the plan runs, the next
 * turn is granted and the CPUs waiting on this one are woken. Serially
 * every source is online before its copiers start, and nobody waits.
 */
static void ap_lpj(struct percpu *cpu)
{
	bool parallel = apic_options.bringup == BRINGUP_PARALLEL;

	if (parallel && cpu->lpj_plan == LPJ_PLAN_COPY && !source_ready(cpu))
		ap_park(cpu, source_ready, "source", parallel_timeout_us());
	else if (parallel && cpu->lpj_plan == LPJ_PLAN_CALIBRATE && !my_turn(cpu))
		ap_park(cpu, my_turn, "turn", parallel_timeout_us());
	delay_calibrate_ap();
	if (!parallel)
		return;
	if (cpu->lpj_plan == LPJ_PLAN_CALIBRATE) {
		u32 next = __atomic_fetch_add(&line.granted, 1, __ATOMIC_ACQ_REL);

		if (next < line.calibrators)
			smp_wake(line.ranked[next]);
	}
	for (u32 i = cpu->index + 1; i < cpu_count(); i++) {
		struct percpu *other = cpu_at(i);

		if (other->lpj_from == cpu && other->lpj_plan == LPJ_PLAN_COPY)
			smp_wake(other);
	}
}

static bool answered(const struct percpu *cpu)
{
	return __atomic_load_n(&cpu->probe_round, __ATOMIC_ACQUIRE) == line.probe_round;
}

/* Each AP in the probe answered, or has left its park to calibrate and never will. */
static bool probe_done(void *arg)
{
	(void)arg;
	for (u32 r = 1; r <= line.probed; r++) {
		const struct percpu *cpu = line.ranked[r];

		if (!answered(cpu) && !cpu->tsc_wait_end && cpu->state != CPU_ONLINE)
			return false;
	}
	return true;
}

static bool probed_alive(void *arg)
{
	(void)arg;
	for (u32 r = 1; r <= line.probed; r++)
		if (line.ranked[r]->state < CPU_ALIVE)
			return false;
	return true;
}

/*
 * How many APs may calibrate at once. Each one that calibrates against
 * the tick needs the host to run it whenever a tick lands; where the host
 * has fewer CPUs than there are calibrating APs, concurrent calibrations
 * only stretch each other (the seed: 16 APs calibrating at once on 2 host
 * cores took 5.5 s, one at a time 1.2 s). So measure: before any AP runs
 * the BSP runs a loop alone (the best of a few short windows); then,
 * while the first calibrating AP is already at work (so that serialized
 * is never slower than serial), up to PROBE_MAX_APS of the other
 * calibrating APs run it together for PROBE_WINDOW_US;
 * their combined count over the BSP's is the parallelism the host has
 * beside the first (calibrate_concurrency()).
 */
static void choose_concurrency(void)
{
	u64 together[PROBE_MAX_APS];
	u32 n = MIN(line.calibrators - 1, (u32)PROBE_MAX_APS);

	if (line.calibrators <= 1) {
		line.concurrency = 1;
		snprintf(line.why, sizeof(line.why), "%u AP calibrates", line.calibrators);
		return;
	}
	if (apic_options.parallel_calibrate == PARALLEL_CALIBRATE_SERIALIZE) {
		line.concurrency = 1;
		snprintf(line.why, sizeof(line.why), "parallel_calibrate=serialize: one at a time");
		return;
	}
	if (apic_options.parallel_calibrate == PARALLEL_CALIBRATE_CONCURRENT) {
		line.concurrency = line.calibrators;
		snprintf(line.why, sizeof(line.why), "parallel_calibrate=concurrent: all at once");
		return;
	}
	line.concurrency = 1;
	line.probed = n;
	if (!smp_wait(probed_alive, NULL, PROBE_ALIVE_TIMEOUT_US)) {
		snprintf(line.why, sizeof(line.why),
			 "auto: the probe's APs did not start in time: one at a time");
		return;
	}
	line.probe_start = line.probe_end = 0;
	line.probe_arrived = 0;
	__atomic_store_n(&line.probe_round, 1, __ATOMIC_RELEASE);
	for (u32 r = 1; r <= n; r++)
		smp_wake(line.ranked[r]);
	if (!smp_wait(probe_done, NULL, PROBE_ALIVE_TIMEOUT_US)) {
		snprintf(line.why, sizeof(line.why),
			 "auto: the probe's APs did not answer: one at a time");
		return;
	}
	/* An AP whose turn came before the probe reached it ran nothing: 0. */
	for (u32 r = 1; r <= n; r++)
		together[r - 1] = answered(line.ranked[r]) ? line.ranked[r]->probe_loops : 0;
	line.concurrency = calibrate_concurrency(line.solo_loops, together, n,
						 &line.parallelism_x100);
	snprintf(line.why, sizeof(line.why), "probe: %u APs beside the first ran at %u.%02u CPUs: %s",
		 n, line.parallelism_x100 / 100, line.parallelism_x100 % 100,
		 line.concurrency == 1 ? "serialized, the host has no CPU to spare" : "concurrent");
}

/*
 * An AP that never came alive holds no turn and offers no value: its turn
 * goes to the next in line and its copiers are woken to calibrate.
 */
static void give_up_on(struct percpu *dead)
{
	if (dead->lpj_plan == LPJ_PLAN_CALIBRATE) {
		u32 next = __atomic_fetch_add(&line.granted, 1, __ATOMIC_ACQ_REL);

		if (next < line.calibrators)
			smp_wake(line.ranked[next]);
	}
	__atomic_store_n(&dead->lpj_ready, 1, __ATOMIC_RELEASE);
	for (u32 i = dead->index + 1; i < cpu_count(); i++)
		if (cpu_at(i)->lpj_from == dead)
			smp_wake(cpu_at(i));
}

#define PARALLEL_POLL_US 100000

/* Every AP online, or the bound; the ones not alive after AP_ONLINE_TIMEOUT_US are given up. */
static void wait_parallel(void)
{
	u64 start = rdtsc(), per_us = clock.tsc_hz / 1000000;
	bool gave_up = false;

	while (!smp_wait(all_online, NULL, PARALLEL_POLL_US)) {
		u64 us = (rdtsc() - start) / per_us;

		if (us > parallel_timeout_us())
			return;
		if (us < AP_ONLINE_TIMEOUT_US)
			continue;
		/* Parked APs have no tick: a nudge lets each see its own timeout. */
		for (u32 i = 1; i < cpu_count(); i++)
			if (cpu_at(i)->state == CPU_ALIVE)
				smp_wake(cpu_at(i));
		if (gave_up)
			continue;
		for (u32 i = 1; i < cpu_count(); i++)
			if (cpu_at(i)->state == CPU_OFFLINE)
				give_up_on(cpu_at(i));
		gave_up = true;
	}
}

/* The calibrating APs in line, and the probe's yardstick (see choose_concurrency()). */
static void prepare_parallel(void)
{
	u64 t0 = rdtsc();

	line.calibrators = 0;
	for (u32 i = 1; i < cpu_count(); i++) {
		struct percpu *cpu = cpu_at(i);

		if (cpu->lpj_plan == LPJ_PLAN_CALIBRATE) {
			cpu->cal_rank = line.calibrators;
			line.ranked[line.calibrators++] = cpu;
		}
	}
	/*
	 * Before any AP runs: the best of a few short windows, since a host
	 * that takes the BSP away for part of one would make every AP look
	 * faster than one CPU. It is set-up, like the CPU list, and left out
	 * of the bring-up time (its cost is yardstick_us in the DATA): inside
	 * it would move the first calibration a tick later one time in four.
	 */
	if (line.calibrators > 1 && apic_options.parallel_calibrate == PARALLEL_CALIBRATE_AUTO) {
		for (int i = 0; i < PROBE_SOLO_TRIES; i++)
			line.solo_loops = MAX(line.solo_loops,
					      spin_until(rdtsc() + PROBE_SOLO_US *
								   (clock.tsc_hz / 1000000)));
		line.solo_loops = line.solo_loops * PROBE_WINDOW_US / PROBE_SOLO_US;
	}
	line.yardstick_us = tsc_to_us(rdtsc() - t0);
}

/*
 * Linux 6.5+'s shape (cpuhp's parallel bring-up): kick every AP, let their
 * start-up (trampoline, long mode, tables, APIC) run concurrently, and
 * order only what needs it: lpj (see ap_lpj()). The first calibrating AP
 * is kicked first and calibrates at once, as serially; the probe runs
 * beside it once every AP is kicked, and grants more turns if the host
 * has CPUs to spare.
 */
static void boot_parallel(void)
{
	line.granted = 1;
	kick_all(line.calibrators ? line.ranked[0]->index : 0);
	choose_concurrency();
	if (line.concurrency > 1) {
		u32 was = __atomic_fetch_add(&line.granted, line.concurrency - 1, __ATOMIC_ACQ_REL);

		for (u32 r = was; r < was + line.concurrency - 1 && r < line.calibrators; r++)
			smp_wake(line.ranked[r]);
	}
	wait_parallel();
}

void smp_boot(void)
{
	u32 aps = cpu_count() - 1;

	choose_init_udelay();
	if (!aps)
		return;
	for (u32 i = 1; i < cpu_count(); i++)
		delay_plan_ap(cpu_at(i));
	report_info("smp: booting %u APs (bringup=%s, init_udelay=%llu: %s)", aps,
		    bringup_names[apic_options.bringup], smp.init_udelay, smp.init_udelay_why);
	if (apic_options.bringup == BRINGUP_PARALLEL)
		prepare_parallel();
	smp.tsc_start = rdtsc();
	if (apic_options.bringup == BRINGUP_PARALLEL) {
		boot_parallel();
	} else {
		for (u32 i = 1; i < cpu_count(); i++) {
			kick(cpu_at(i));
			smp_wait(is_online, cpu_at(i), AP_ONLINE_TIMEOUT_US);
		}
	}
	smp.tsc_end = rdtsc();
	report_info("smp: brought up %u CPUs", cpu_online_count());
}

static bool work_done(void *arg)
{
	struct percpu *cpu = arg;

	return cpu->work == NULL;
}

bool smp_run_on(struct percpu *cpu, void (*fn)(void *arg), void *arg, u64 timeout_us)
{
	if (cpu->state != CPU_ONLINE)
		return false;
	cpu->work_arg = arg;
	__atomic_store_n(&cpu->work, fn, __ATOMIC_RELEASE);
	smp_wake(cpu);
	return smp_wait(work_done, cpu, timeout_us);
}

static bool all_work_done(void *arg)
{
	(void)arg;
	for (u32 i = 1; i < cpu_count(); i++)
		if (__atomic_load_n(&cpu_at(i)->work, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

bool smp_run_all(void (*fn)(void *arg), void *arg, u64 timeout_us)
{
	for (u32 i = 1; i < cpu_count(); i++) {
		struct percpu *cpu = cpu_at(i);

		/* An AP still busy with work that timed out earlier is left to it. */
		if (cpu->state != CPU_ONLINE || cpu->work)
			continue;
		cpu->work_arg = arg;
		__atomic_store_n(&cpu->work, fn, __ATOMIC_RELEASE);
		smp_wake(cpu);
	}
	fn(arg);
	return smp_wait(all_work_done, NULL, timeout_us);
}

/* The AP's life: tables, APIC, calibration, then idle until given work. */
void ap_main(struct percpu *cpu)
{
	cpu_tables_init(cpu, cpu->index);
	cpu->tsc_alive = rdtsc();
	cpu->state = CPU_ALIVE;
	apic_init_ap();
	cpu->hw_apic_id = apic_id();
	if (apic_options.bringup == BRINGUP_PARALLEL)
		smp_wake(cpu_at(0));
	ap_lpj(cpu);
	cpu->tsc_calibrated = rdtsc();
	cpu->tsc_online = rdtsc();
	__atomic_store_n(&cpu->state, CPU_ONLINE, __ATOMIC_RELEASE);
	smp_wake(cpu_at(0));

	for (;;) {
		void (*fn)(void *);

		cli();
		fn = __atomic_load_n(&cpu->work, __ATOMIC_ACQUIRE);
		if (!fn) {
			asm volatile("sti; hlt" ::: "memory");
			continue;
		}
		sti();
		fn(cpu->work_arg);
		cpu->work_done++;
		__atomic_store_n(&cpu->work, NULL, __ATOMIC_RELEASE);
		smp_wake(cpu_at(0));
	}
}

u32 smp_calibrating_aps(void)
{
	return line.calibrators;
}

u32 smp_calibrate_concurrency(void)
{
	return line.concurrency;
}

bool smp_have_madt(void)
{
	return smp.have_madt;
}

u32 smp_usable_cpus(void)
{
	return smp.have_madt ? madt_usable_cpus(&smp.madt) : 1;
}

u32 smp_nodes(void)
{
	return smp.nodes;
}

u32 smp_node_of(u32 apic_id)
{
	u32 node = smp.have_srat ? srat_node_of(&smp.srat, apic_id) : 0;

	return node == NODE_NONE ? 0 : node;
}

const char *smp_problems(void)
{
	return smp.problems;
}

const char *smp_madt_problems(void)
{
	return smp.have_madt ? smp.madt.problems : "";
}

const char *smp_srat_problems(void)
{
	return smp.have_srat ? smp.srat.problems : "";
}

static u64 us_since_start(u64 tsc)
{
	return tsc > smp.tsc_start ? tsc_to_us(tsc - smp.tsc_start) : 0;
}

static u64 wait_us(const struct percpu *c)
{
	return c->tsc_wait_end > c->tsc_wait_start ? tsc_to_us(c->tsc_wait_end - c->tsc_wait_start)
						   : 0;
}

void smp_ap_json(struct json *j, u32 index)
{
	const struct percpu *c = cpu_at(index);
	bool up = c->state == CPU_ONLINE;

	json_u64(j, "cpu", index);
	json_u64(j, "apic_id", c->apic_id);
	json_u64(j, "node", c->node);
	json_u64(j, "package", c->package);
	json_bool(j, "online", up);
	json_u64(j, "init_us", us_since_start(c->tsc_init));
	json_u64(j, "sipi_us", us_since_start(c->tsc_sipi));
	json_u64(j, "alive_us", c->state >= CPU_ALIVE ? us_since_start(c->tsc_alive) : 0);
	json_u64(j, "calibrated_us", up ? us_since_start(c->tsc_calibrated) : 0);
	json_u64(j, "online_us", up ? us_since_start(c->tsc_online) : 0);
	json_u64(j, "lpj", c->lpj);
	json_string(j, "lpj_source", c->lpj_source ? c->lpj_source : "none");
	json_string(j, "lpj_plan", lpj_plan_names[c->lpj_plan]);
	if (c->lpj_from)
		json_u64(j, "lpj_from", c->lpj_from->index);
	/* What it parked for: its source's value, or its turn to calibrate. */
	json_string(j, "waited_for", c->waited_for ? c->waited_for : "none");
	json_u64(j, "wait_us", wait_us(c));
	json_u64(j, "cal_us", c->calibrated ? tsc_to_us(c->cal_tsc) : 0);
	json_u64(j, "cal_ticks", c->calibrated ? c->cal_edges : 0);
	json_u64(j, "cal_jiffies", c->calibrated ? c->cal_jiffies : 0);
	if (in_probe(c))
		json_u64(j, "probe_loops", c->probe_loops);
}

static void spread_json(struct json *j, const char *key, u64 *v, u32 n)
{
	sort_u64(v, n);
	json_object_begin(j, key);
	json_u64(j, "n", n);
	json_u64(j, "min", percentile_u64(v, n, 0));
	json_u64(j, "median", percentile_u64(v, n, 50));
	json_u64(j, "max", percentile_u64(v, n, 100));
	json_object_end(j);
}

void smp_json(struct json *j)
{
	static u64 per_ap[MAX_CPUS], waits[MAX_CPUS], cal_us[MAX_CPUS], cal_ticks[MAX_CPUS],
		cal_jiffies[MAX_CPUS];
	u32 n = 0, calibrations = 0, waited = 0, cals = 0;

	for (u32 i = 0; i < cpu_count(); i++) {
		const struct percpu *c = cpu_at(i);

		calibrations += c->calibrated;
		if (c->cal_tsc) {
			cal_us[cals] = tsc_to_us(c->cal_tsc);
			cal_jiffies[cals] = c->cal_jiffies;
			cal_ticks[cals++] = c->cal_edges;
		}
		if (i && c->waited_for)
			waits[waited++] = wait_us(c);
		if (i && c->state == CPU_ONLINE)
			per_ap[n++] = tsc_to_us(c->tsc_online - c->tsc_init);
	}
	sort_u64(per_ap, n);

	json_u64(j, "cpus", cpu_online_count());
	json_u64(j, "nodes", smp.nodes);
	json_string(j, "apic", apic_mode_name());
	json_string(j, "bringup", bringup_names[apic_options.bringup]);
	json_u64(j, "init_udelay_us", smp.init_udelay);
	json_string(j, "init_udelay", apic_options.init_udelay == OPTION_AUTO ? "auto" : "given");
	json_string(j, "init_udelay_why", smp.init_udelay_why ? smp.init_udelay_why : "");
	if (apic_options.bringup == BRINGUP_PARALLEL)
		json_u64(j, "kick_batch", KICK_BATCH);
	json_string(j, "lpj_source", cpu_at(0)->lpj_source);
	json_string(j, "lpj_reuse", lpj_reuse_names[time_options.lpj_reuse]);
	json_string(j, "lpj_policy", lpj_policy_names[time_options.lpj_policy]);
	json_u64(j, "calibrations", calibrations);
	json_u64(j, "total_us",
		 smp.tsc_end > smp.tsc_start ? tsc_to_us(smp.tsc_end - smp.tsc_start) : 0);
	json_object_begin(j, "per_ap_us");
	json_u64(j, "min", percentile_u64(per_ap, n, 0));
	json_u64(j, "median", percentile_u64(per_ap, n, 50));
	json_u64(j, "max", percentile_u64(per_ap, n, 100));
	json_object_end(j);
	/*
	 * Each calibration's cost in µs, in jiffies elapsed, and in ticks:
	 * the edges it waited through, which is what Linux's count for the
	 * method counts (linux_direct_ticks).
	 */
	spread_json(j, "cal_us", cal_us, cals);
	spread_json(j, "cal_jiffies", cal_jiffies, cals);
	spread_json(j, "cal_ticks", cal_ticks, cals);
	json_u64(j, "hz", clock.hz);
	json_u64(j, "linux_direct_ticks", lpj_direct_ticks(clock.hz));
	if (apic_options.bringup == BRINGUP_PARALLEL) {
		json_string(j, "parallel_calibrate",
			    parallel_calibrate_names[apic_options.parallel_calibrate]);
		json_u64(j, "calibrating_aps", line.calibrators);
		json_u64(j, "calibrate_concurrency", line.concurrency);
		json_bool(j, "calibrations_serialized",
			  line.calibrators > 1 && line.concurrency == 1);
		json_string(j, "calibrate_concurrency_why", line.why);
		json_u64(j, "host_parallelism_x100", line.parallelism_x100);
		json_u64(j, "yardstick_us", line.yardstick_us);
		/* n: the APs that parked for a source's value or their turn. */
		spread_json(j, "wait_us", waits, waited);
	}
}
