// SPDX-License-Identifier: MIT
/*
 * smp: every vCPU the firmware lists comes online, where the firmware says
 * it is, and NMIs reach every one of them.
 *
 * This is half of experiment 1: how long bringing up N vCPUs takes, and
 * where the time goes (INIT, SIPI, the AP's first instruction, its delay
 * calibration). A pass means every usable MADT CPU (capped by cpus=) came
 * online, each AP read back the APIC ID the MADT gave it, each sits in the
 * node the SRAT assigns, an NMI IPI from the BSP reached every AP and one
 * from every AP reached the BSP. The DATA line carries the per-AP timeline
 * in microseconds from the start of bring-up; the host checks the CPU and
 * node counts against what it gave QEMU.
 */
#include "apic/smp/smp.h"
#include "apic/apic.h"
#include "apic/bringup.h"
#include "apic/options.h"
#include "apic/smp/rules.h"
#include "kernel/lib/json.h"
#include "kernel/test/test.h"
#include "kernel/time/delay.h"
#include "kernel/x86/x86.h"

#define NMI_TIMEOUT_US 1000000

struct nmi_wait {
	const struct percpu *cpu;
	u64 before;
};

static bool nmi_arrived(void *arg)
{
	struct nmi_wait *w = arg;

	return w->cpu->nmi_count > w->before;
}

static void send_nmi_to_bsp(void *arg)
{
	(void)arg;
	apic_send_ipi(cpu_at(0)->apic_id, APIC_ICR_DM_NMI);
}

/* One at a time: x86 holds at most one NMI pending, so a burst may merge. */
static void nmi_checks(void)
{
	u32 to_ap = 0, to_bsp = 0, aps = 0;

	for (u32 i = 1; i < cpu_count(); i++) {
		struct percpu *ap = cpu_at(i);
		struct nmi_wait w = { ap, ap->nmi_count };

		if (ap->state != CPU_ONLINE)
			continue;
		aps++;
		apic_send_ipi(ap->apic_id, APIC_ICR_DM_NMI);
		if (smp_wait(nmi_arrived, &w, NMI_TIMEOUT_US))
			to_ap++;
		else
			report_info("NMI to APIC ID %u did not arrive", ap->apic_id);

		w = (struct nmi_wait){ cpu_at(0), cpu_at(0)->nmi_count };
		if (smp_run_on(ap, send_nmi_to_bsp, NULL, NMI_TIMEOUT_US) &&
		    smp_wait(nmi_arrived, &w, NMI_TIMEOUT_US))
			to_bsp++;
		else
			report_info("NMI from APIC ID %u to the BSP did not arrive", ap->apic_id);
	}
	report_prefix_push("nmi");
	if (!aps) {
		report_skip("no AP online to exchange NMIs with");
	} else {
		report_eq(to_ap, aps, "an NMI IPI from the BSP reaches every AP");
		report_eq(to_bsp, aps, "an NMI IPI from every AP reaches the BSP");
	}
	report_prefix_pop();
}

/*
 * Parallel bring-up lets at most smp_calibrate_concurrency() APs calibrate
 * at once: the most calibrations whose spans overlap, by the TSC, must not
 * exceed it (a sweep over the starts; a span holds [start, start + cost)).
 */
static u32 most_overlapping(void)
{
	u32 most = 0;

	for (u32 i = 1; i < cpu_count(); i++) {
		const struct delay_cpu *a = delay_cpu(i);
		u32 here = 0;

		if (!a->cal_tsc)
			continue;
		for (u32 k = 1; k < cpu_count(); k++) {
			const struct delay_cpu *b = delay_cpu(k);

			here += b->cal_tsc && b->cal_start <= a->cal_start &&
				a->cal_start < b->cal_start + b->cal_tsc;
		}
		most = MAX(most, here);
	}
	return most;
}

static void parallel_checks(void)
{
	const struct bringup_mode *mode = bringup_mode_chosen();
	u32 copied = 0, copied_ok = 0;

	/* A mode that holds APs at the alive point releases one at a time. */
	if (mode->hold_at_alive) {
		report_prefix_push(mode->name);
		report(most_overlapping() <= 1, "one AP calibrates at a time (%u overlapped)",
		       most_overlapping());
		report_prefix_pop();
	}
	if (!mode->calibration_line)
		return;
	report_prefix_push(mode->name);
	report(most_overlapping() <= MAX(smp_calibrate_concurrency(), 1u),
	       "at most %u AP calibrations at once (%u overlapped)",
	       MAX(smp_calibrate_concurrency(), 1u), most_overlapping());
	for (u32 i = 1; i < cpu_count(); i++) {
		const struct delay_cpu *c = delay_cpu(i);

		if (cpu_at(i)->state != CPU_ONLINE || c->lpj_plan != LPJ_PLAN_COPY ||
		    !c->lpj_from || c->calibrated)
			continue;
		copied++;
		copied_ok += c->lpj == delay_cpu(c->lpj_from->index)->lpj;
	}
	if (copied)
		report_eq(copied_ok, copied, "every AP that waited for a sibling took its value");
	report_prefix_pop();
}

/*
 * Each AP's INIT-SIPI-SIPI went through: every send delivered (the
 * xAPIC's delivery status cleared) and no error in the ESR. Linux gives
 * up an AP that fails either, naming it; so does this check.
 */
static void kick_checks(void)
{
	u32 aps = 0, failed = 0;

	for (u32 i = 1; i < cpu_count(); i++) {
		const struct percpu *c = cpu_at(i);
		const struct smp_cpu *s = smp_cpu(i);
		const char *why = smp_kick_failure(i);

		if (s->esr)
			report_info("APIC error status 0x%x after starting APIC ID %u", s->esr,
				    c->apic_id);
		if (!s->tsc_init)
			continue;
		aps++;
		if (why) {
			failed++;
			report_info("CPU %u (APIC ID %u): %s (ESR 0x%x)", i, c->apic_id, why,
				    s->esr);
		}
	}
	if (aps)
		report_eq(failed, 0, "every AP's INIT and SIPIs were delivered without error");
}

/* The summary, then one line per AP ("record": "ap"), none past a line's length. */
static void emit_data(void)
{
	char buf[KTAP_LINE_MAX];
	struct json j;

	report_data_begin(&j, buf, "smp");
	smp_json(&j);
	report_data_end(&j);
	for (u32 i = 1; i < cpu_count(); i++) {
		report_data_begin(&j, buf, "smp");
		json_string(&j, "record", "ap");
		smp_ap_json(&j, i);
		report_data_end(&j);
	}
}

DEFINE_TEST(smp, "every listed CPU comes online where the firmware says", 0)
{
	u32 usable = smp_usable_cpus();
	u32 expected = MIN(usable, apic_options.cpus == CPUS_ALL ? usable : apic_options.cpus + 1);
	u32 online = cpu_online_count(), id_ok = 0, node_ok = 0;

	if (smp_problems()[0])
		report_info("bring-up notes: %s", smp_problems());
	if (smp_madt_problems()[0])
		report_info("MADT: %s", smp_madt_problems());
	if (smp_srat_problems()[0])
		report_info("SRAT: %s", smp_srat_problems());
	report(smp_have_madt(), "the MADT lists %u usable CPUs", usable);
	for (u32 i = 0; i < cpu_count(); i++) {
		const struct percpu *c = cpu_at(i);

		if (c->state != CPU_ONLINE) {
			report_info("APIC ID %u did not come online (state %u, ESR 0x%x)",
				    c->apic_id, c->state, smp_cpu(i)->esr);
			continue;
		}
		id_ok += c->hw_apic_id == c->apic_id;
		node_ok += c->node == smp_node_of(c->hw_apic_id);
	}
	report_eq(online, expected, "every CPU to start is online");
	report_eq(id_ok, online, "each CPU's APIC ID matches its MADT entry");
	report_eq(node_ok, online, "each CPU's node matches the SRAT");
	kick_checks();
	nmi_checks();
	parallel_checks();
	emit_data();
}
