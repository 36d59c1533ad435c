// SPDX-License-Identifier: MIT
/*
 * SMP bring-up: the CPUs the MADT and SRAT give, the trampoline, the
 * serial and linux-6.5 bring-ups and the AP's life, on the floor ap.c
 * lays (the kicks, the wait, each AP's record); parallel.c orders
 * parallel bring-up's calibrations. See smp.h, and the trampoline's
 * contract in trampoline.S.
 */
#include "apic/smp/smp.h"
#include "apic/apic.h"
#include "apic/bringup.h"
#include "apic/options.h"
#include "apic/smp/ap.h"
#include "apic/smp/rules.h"
#include "apic/smp/smp_internal.h"
#include "apic/smp/tsc_sync.h"
#include "kernel/acpi/acpi.h"
#include "kernel/acpi/madt.h"
#include "kernel/acpi/srat.h"
#include "kernel/kernel.h"
#include "kernel/lib/option.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/test/ktap.h"
#include "kernel/time/delay.h"
#include "kernel/time/options.h"
#include "kernel/time/policy.h"
#include "kernel/x86/alloc.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"

#define AP_STACK_SIZE (16 * KiB)
/* Levels of CPUID.0BH to look at: SMT, core and the few SDM Vol 2A adds. */
#define TOPOLOGY_MAX_LEVELS 8

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

/*
 * A mode that holds APs at the alive point: set by the control CPU to let
 * one past (Linux's cpuhp_bp_sync_alive() and cpuhp_ap_sync_alive()).
 */
static u8 released[MAX_CPUS];
/* CPUID.0BH:ECX[15:8] level type 1, SMT (SDM Vol 2A "CPUID", leaf 0BH). */
#define TOPOLOGY_TYPE_SMT 1

extern const u8 smp_trampoline_start[], smp_trampoline_end[];
extern const u8 smp_tr_gdt[], smp_tr_gdt_ptr[], smp_tr_far32[], smp_tr_cr3[], smp_tr_protected[];

void smp_ap_main(struct percpu *cpu);

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

static bool place_trampoline(char *why, size_t whylen)
{
	u64 page = alloc_low_page(boot_info);
	u8 *p = (u8 *)(uintptr_t)page;
	u32 gdt = (u32)page + (u32)(smp_tr_gdt - smp_trampoline_start);
	u32 far32 = (u32)page + (u32)(smp_tr_protected - smp_trampoline_start);
	u32 cr3 = (u32)read_cr3();

	if (!page) {
		snprintf(why, whylen, "no free page below 640 KiB for the AP trampoline");
		return false;
	}
	memcpy(p, smp_trampoline_start, smp_trampoline_end - smp_trampoline_start);
	memcpy(p + (smp_tr_gdt_ptr - smp_trampoline_start) + 2, &gdt, 4);
	memcpy(p + (smp_tr_far32 - smp_trampoline_start), &far32, 4);
	memcpy(p + (smp_tr_cr3 - smp_trampoline_start), &cr3, 4);
	smp.trampoline = page;
	return true;
}

bool smp_init(char *why, size_t whylen)
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
	smp_cpu_bind(bsp);
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
		smp_cpu_bind(cpu);
	}
	return cpu_count() == 1 || place_trampoline(why, whylen);
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
	smp.init_udelay =
		smp_init_udelay_rule(vendor, cpu_signature().family, &smp.init_udelay_why);
}

static bool is_alive(void *arg)
{
	const struct smp_cpu *ap = arg;

	return __atomic_load_n(&ap->cpu->state, __ATOMIC_ACQUIRE) >= CPU_ALIVE;
}

/* Serving, meanwhile, the TSC-sync check the AP may ask for. */
static bool is_online(void *arg)
{
	smp_tsc_sync_serve();
	return smp_seen_online(arg);
}

/* APIC ID bits below the core: the SMT level's shift, 0 without one. */
static u32 smt_shift(void)
{
	if (cpu_property(X86_PROPERTY_TOPOLOGY_TYPE(0)) == TOPOLOGY_TYPE_SMT)
		return cpu_property(X86_PROPERTY_TOPOLOGY_SHIFT(0));
	return 0;
}

/*
 * Linux 6.5's cpuhp_bringup_cpus_parallel(): a first pass kicks every AP
 * (CPUHP_BP_KICK_AP, primary threads first), each with its own
 * INIT-SIPI-SIPI, every wait and its own ESR, as the serial bring-up's,
 * but without waiting for it; each AP runs to the alive point and spins
 * there. A second pass, in the same order, waits for each to be alive
 * (10 s, as cpuhp_bp_sync_alive()), releases it, and waits for it to
 * come online, so that everything after the alive point, calibrate_delay()
 * included, runs on one AP at a time.
 */
static void boot_held_at_alive(void)
{
	static u32 ids[MAX_CPUS], order[MAX_CPUS];
	u32 n = cpu_count();

	for (u32 i = 0; i < n; i++)
		ids[i] = cpu_at(i)->apic_id;
	smp_bringup_order(ids, n, smt_shift(), order);
	for (u32 k = 0; k + 1 < n; k++)
		smp_kick(smp_cpu(order[k]));
	for (u32 k = 0; k + 1 < n; k++) {
		struct smp_cpu *ap = smp_cpu(order[k]);

		if (smp_kick_failure(order[k]) || !smp_wait(is_alive, ap, AP_ONLINE_TIMEOUT_US))
			continue;
		__atomic_store_n(&released[order[k]], 1, __ATOMIC_RELEASE);
		smp_wait(is_online, ap, AP_ONLINE_TIMEOUT_US);
	}
}

/* One AP after another, each waited for online before the next is kicked. */
static void boot_serial(void)
{
	for (u32 i = 1; i < cpu_count(); i++)
		if (smp_kick(smp_cpu(i)))
			smp_wait(is_online, smp_cpu(i), AP_ONLINE_TIMEOUT_US);
}

void smp_boot(void)
{
	const struct bringup_mode *mode = bringup_mode_chosen();
	u32 aps = cpu_count() - 1;

	choose_init_udelay();
	if (!aps)
		return;
	for (u32 i = 1; i < cpu_count(); i++)
		delay_plan_ap(cpu_at(i));
	report_info("smp: booting %u APs (bringup=%s, init_udelay=%llu: %s)", aps, mode->name,
		    smp.init_udelay, smp.init_udelay_why);
	if (mode->calibration_line)
		smp_parallel_prepare();
	smp.tsc_start = rdtsc();
	if (mode->calibration_line)
		smp_parallel_boot();
	else if (mode->hold_at_alive)
		boot_held_at_alive();
	else
		boot_serial();
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

/*
 * The verdict of Linux's check on this AP: a warp marks the TSC unstable
 * at once, before the AP goes on (mark_tsc_unstable() in
 * check_tsc_sync_source()), or later, by a work item the control CPU runs
 * once it gets to (schedule_work(), tsc_sync.c v6.12): here when the BSP
 * sees the AP online, after the AP's own calibrate_delay_is_known().
 */
static void tsc_sync_verdict(struct smp_cpu *s, bool in_step)
{
	if (lpj_policy_chosen()->warp_mark == LPJ_WARP_MARKS_DEFERRED)
		s->warp_pending = !in_step;
	else
		delay_tsc_sync(in_step);
}

/* The AP's life: tables, APIC, calibration, then idle until given work. */
void smp_ap_main(struct percpu *cpu)
{
	const struct bringup_mode *mode = bringup_mode_chosen();
	struct smp_cpu *s = smp_cpu_of(cpu);
	u32 sync = smp_tsc_sync_mode(mode, lpj_policy_chosen());

	cpu_tables_init(cpu, cpu->index);
	s->tsc_alive = rdtsc();
	cpu->state = CPU_ALIVE;
	apic_init_ap();
	cpu->hw_apic_id = apic_id();
	if (mode->kick_ahead)
		smp_wake(cpu_at(0));
	/* Spin at the alive point until released (cpuhp_ap_sync_alive()). */
	if (mode->hold_at_alive)
		while (!__atomic_load_n(&released[cpu->index], __ATOMIC_ACQUIRE))
			pause();
	/*
	 * check_tsc_warp()'s question: cheaply, whether the AP's TSC reads
	 * earlier than the BSP's stamp before its SIPI; or Linux's check, 6.5's
	 * before the AP calibrates, 6.1's after.
	 */
	if (sync == SMP_TSC_SYNC_STAMPS)
		delay_tsc_sync(s->tsc_alive >= s->tsc_sipi);
	else if (sync == SMP_TSC_SYNC_LINUX_6_5)
		tsc_sync_verdict(s, smp_tsc_sync_ap(cpu));
	smp_ap_lpj(s);
	s->tsc_calibrated = rdtsc();
	if (sync == SMP_TSC_SYNC_LINUX_6_1)
		tsc_sync_verdict(s, smp_tsc_sync_ap(cpu));
	s->tsc_online = rdtsc();
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
		s->work_done++;
		__atomic_store_n(&cpu->work, NULL, __ATOMIC_RELEASE);
		smp_wake(cpu_at(0));
	}
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
