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
#include "kernel/lib/printf.h"
#include "kernel/lib/stats.h"
#include "kernel/lib/string.h"
#include "kernel/options.h"
#include "kernel/test/ktap.h"
#include "kernel/time/clock.h"
#include "kernel/time/delay.h"
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
} smp;

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

/* INIT, INIT de-assert, SIPI, SIPI: Linux's wakeup_secondary_cpu_via_init(). */
static void kick(struct percpu *cpu)
{
	u32 sipi = APIC_ICR_DM_STARTUP | APIC_ICR_VECTOR(smp.trampoline >> 12);
	bool modern = !apic_options.init_udelay;

	apic_esr();
	cpu->tsc_init = rdtsc();
	apic_send_ipi(cpu->apic_id, APIC_ICR_DM_INIT | APIC_ICR_LEVEL_ASSERT |
					    APIC_ICR_TRIGGER_LEVEL);
	udelay(apic_options.init_udelay);
	apic_send_ipi(cpu->apic_id, APIC_ICR_DM_INIT | APIC_ICR_TRIGGER_LEVEL);
	cpu->tsc_sipi = rdtsc();
	/* fault=ap_silent: the last AP gets no SIPI, so it never answers. */
	if (kernel_options.fault == FAULT_AP_SILENT && cpu->index == cpu_count() - 1) {
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

void smp_boot(void)
{
	u32 aps = cpu_count() - 1;

	if (!aps)
		return;
	report_info("smp: booting %u APs (bringup=%s, init_udelay=%llu)", aps,
		    bringup_names[apic_options.bringup], apic_options.init_udelay);
	smp.tsc_start = rdtsc();
	if (apic_options.bringup == BRINGUP_PARALLEL) {
		for (u32 i = 1; i < cpu_count(); i++)
			kick(cpu_at(i));
		smp_wait(all_online, NULL, PARALLEL_TIMEOUT_US + aps * PARALLEL_TIMEOUT_PER_AP_US);
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
	delay_calibrate_ap();
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

void smp_ap_json(struct json *j, u32 index)
{
	const struct percpu *c = cpu_at(index);
	bool up = c->state == CPU_ONLINE;

	json_u64(j, "cpu", index);
	json_u64(j, "apic_id", c->apic_id);
	json_u64(j, "node", c->node);
	json_bool(j, "online", up);
	json_u64(j, "init_us", us_since_start(c->tsc_init));
	json_u64(j, "sipi_us", us_since_start(c->tsc_sipi));
	json_u64(j, "alive_us", c->state >= CPU_ALIVE ? us_since_start(c->tsc_alive) : 0);
	json_u64(j, "calibrated_us", up ? us_since_start(c->tsc_calibrated) : 0);
	json_u64(j, "online_us", up ? us_since_start(c->tsc_online) : 0);
	json_u64(j, "lpj", c->lpj);
	json_string(j, "lpj_source", c->lpj_source ? c->lpj_source : "none");
}

void smp_json(struct json *j)
{
	static u64 per_ap[MAX_CPUS];
	u32 n = 0, calibrations = 0;

	for (u32 i = 0; i < cpu_count(); i++) {
		const struct percpu *c = cpu_at(i);

		calibrations += c->calibrated;
		if (i && c->state == CPU_ONLINE)
			per_ap[n++] = tsc_to_us(c->tsc_online - c->tsc_init);
	}
	sort_u64(per_ap, n);

	json_u64(j, "cpus", cpu_online_count());
	json_u64(j, "nodes", smp.nodes);
	json_string(j, "apic", apic_mode_name());
	json_string(j, "bringup", bringup_names[apic_options.bringup]);
	json_u64(j, "init_udelay_us", apic_options.init_udelay);
	json_string(j, "lpj_source", cpu_at(0)->lpj_source);
	json_string(j, "lpj_reuse", lpj_reuse_names[time_options.lpj_reuse]);
	json_u64(j, "calibrations", calibrations);
	json_u64(j, "total_us",
		 smp.tsc_end > smp.tsc_start ? tsc_to_us(smp.tsc_end - smp.tsc_start) : 0);
	json_object_begin(j, "per_ap_us");
	json_u64(j, "min", percentile_u64(per_ap, n, 0));
	json_u64(j, "median", percentile_u64(per_ap, n, 50));
	json_u64(j, "max", percentile_u64(per_ap, n, 100));
	json_object_end(j);
}
