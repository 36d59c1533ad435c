// SPDX-License-Identifier: MIT
/*
 * Bring-up rules with no hardware behind them: init_udelay=auto's choice
 * by vendor and family (Linux's smp_quirk_init_udelay()), how many APs
 * may calibrate at once from the host-parallelism probe, and the tick
 * count of Linux's direct calibration at each HZ that the smp DATA sets
 * hvprobe's own counts against. A wrong INIT wait costs every AP 10 ms
 * (2.55 s of a 255-vCPU bring-up); a wrong concurrency makes parallel
 * bring-up slower than serial on a host with few CPUs. And the ICR
 * sequence itself, against a recording model: the fence before an
 * x2APIC IPI, interrupts off around an xAPIC send and its delivery
 * status, and Linux's verdict on a kick. And Linux's TSC-sync check:
 * which AP runs it for how long, each millisecond inside the bring-up.
 */
#include <string.h>

#include "apic/apic.h"
#include "apic/bringup.h"
#include "apic/icr.h"
#include "apic/options.h"
#include "apic/smp/rules.h"
#include "apic/smp/tsc_sync.h"
#include "apic/smp/turns.h"
#include "kernel/test/test.h"
#include "kernel/time/lpj.h"
#include "kernel/time/options.h"

DEFINE_TEST(unit_init_udelay_rule, "init_udelay=auto follows smp_quirk_init_udelay()", 0)
{
	const char *why = NULL;

	report_eq(smp_init_udelay_rule("GenuineIntel", 6, &why), 0, "Intel family 6: 0");
	report(why && strstr(why, "Intel family 6"), "and says so: %s", why);
	report_eq(smp_init_udelay_rule("GenuineIntel", 0xf, &why), 10000,
		  "Intel family 0xF (NetBurst): the legacy 10 ms");
	report_eq(smp_init_udelay_rule("GenuineIntel", 5, &why), 10000, "Intel family 5: 10 ms");
	report(why && strstr(why, "legacy"), "the legacy case says so: %s", why);
	report_eq(smp_init_udelay_rule("AuthenticAMD", 0xe, &why), 10000, "AMD family 0xE: 10 ms");
	report_eq(smp_init_udelay_rule("AuthenticAMD", 0xf, &why), 0, "AMD family 0xF: 0");
	report_eq(smp_init_udelay_rule("AuthenticAMD", 0x19, &why), 0,
		  "AMD family 0x19 (Zen 3): 0");
	report_eq(smp_init_udelay_rule("HygonGenuine", 0x17, &why), 10000,
		  "Hygon family 0x17: 10 ms");
	report_eq(smp_init_udelay_rule("HygonGenuine", 0x18, &why), 0, "Hygon family 0x18: 0");
	report_eq(smp_init_udelay_rule("CentaurHauls", 6, &why), 10000, "Centaur family 6: 10 ms");
	report_eq(smp_init_udelay_rule("", 6, &why), 10000, "no vendor string: 10 ms");
}

DEFINE_TEST(unit_calibrate_concurrency, "APs that may calibrate at once, from the probe", 0)
{
	static const u64 two_cores[4] = { 500, 500, 500, 500 };
	static const u64 one_core[8] = { 125, 125, 125, 125, 125, 125, 125, 125 };
	static const u64 own_cpus[3] = { 990, 1000, 980 };
	static const u64 almost_two[2] = { 900, 880 };
	static const u64 starved[2] = { 600, 500 };
	static const u64 slow[2] = { 400, 300 };
	static const u64 none[2] = { 0, 0 };
	static const u64 four[4] = { 900, 900, 900, 900 };
	static const u64 many[3] = { 5000, 5000, 5000 };
	static const u64 full[2] = { 1000, 1000 };
	u32 x100 = 0;

	/*
	 * Beside the AP already calibrating, the others' combined speed,
	 * less half a CPU for the BSP's tick.
	 */
	report_eq(smp_concurrency_rule(1000, two_cores, 4, &x100), 2,
		  "4 more APs at 2 CPUs' worth: 2 at a time");
	report_eq(x100, 200, "parallelism 2.00");
	report_eq(smp_concurrency_rule(1000, one_core, 8, &x100), 1,
		  "8 more APs at 1 CPU's worth: serialized");
	report_eq(smp_concurrency_rule(1000, own_cpus, 3, &x100), 3,
		  "3 more APs at 2.97 CPUs: 3 at a time");
	report_eq(x100, 297, "parallelism 2.97");
	report_eq(smp_concurrency_rule(1000, four, 4, &x100), 4, "3.6 CPUs: 4");
	report_eq(smp_concurrency_rule(1000, almost_two, 2, &x100), 2, "1.78 CPUs: 2");
	report_eq(smp_concurrency_rule(1000, starved, 2, &x100), 1, "1.10 CPUs: serialized");
	report_eq(smp_concurrency_rule(1000, slow, 2, &x100), 1, "0.70 CPUs: serialized");
	report_eq(smp_concurrency_rule(1000, none, 2, &x100), 1, "APs that never ran: serialized");
	/*
	 * No vCPU runs faster than one host CPU: APs that each counted more
	 * than the BSP alone show that the host took the BSP away for part
	 * of its windows, and the yardstick is the fastest AP's count (a
	 * loaded 2-core TCG host reported 3.55 CPUs, then ran 4
	 * calibrations at once at 1.7 s each).
	 */
	report_eq(smp_concurrency_rule(1000, many, 3, &x100), 3,
		  "APs that counted 5x the BSP: each ran at one CPU, not five");
	report_eq(x100, 300, "parallelism 3.00, by the fastest AP");
	report_eq(smp_concurrency_rule(400, full, 2, &x100), 2,
		  "a BSP starved to 0.4 CPUs, 2 APs at a CPU each: 2, not 3");
	report_eq(x100, 200, "parallelism 2.00, not 5.00");
	report_eq(smp_concurrency_rule(0, two_cores, 4, &x100), 1,
		  "no solo count: 1, no division by 0");
	report_eq(x100, 0, "and no parallelism claimed");
	report_eq(smp_concurrency_rule(1000, two_cores, 0, &x100), 1, "no others: 1");
}

/*
 * Where parallel bring-up kicks APs ahead. Each AP kicked ahead starts
 * beside the one calibrating and takes host time from it: on 2 host
 * cores under TCG, 16 vCPUs with every AP calibrating came up in
 * 1320 ms against serial's 1197, and 4 vCPUs with lpj preset in 6.7 ms
 * against 3.8. So the APs are kicked one by one, each once the one
 * before is online, as serially, wherever nothing can calibrate beside
 * anything: at most one calibrating AP, parallel_calibrate=serialize,
 * or a probe that found no CPU to spare.
 */
DEFINE_TEST(unit_line_kicks, "parallel bring-up kicks ahead only where calibrations overlap", 0)
{
	report_eq(smp_line_start_rule(0, PARALLEL_CALIBRATE_AUTO), SMP_LINE_ONE_BY_ONE,
		  "lpj preset, nobody calibrates: one by one, and no probe");
	report_eq(smp_line_start_rule(1, PARALLEL_CALIBRATE_AUTO), SMP_LINE_ONE_BY_ONE,
		  "one AP calibrates, the rest copy: one by one, and no probe");
	report_eq(smp_line_start_rule(1, PARALLEL_CALIBRATE_CONCURRENT), SMP_LINE_ONE_BY_ONE,
		  "one AP calibrates under concurrent: nothing to overlap");
	report_eq(smp_line_start_rule(15, PARALLEL_CALIBRATE_SERIALIZE), SMP_LINE_ONE_BY_ONE,
		  "serialize: one at a time, as serially");
	report_eq(smp_line_start_rule(2, PARALLEL_CALIBRATE_AUTO), SMP_LINE_PROBE,
		  "two calibrate under auto: the first, then the probe's APs");
	report_eq(smp_line_start_rule(15, PARALLEL_CALIBRATE_AUTO), SMP_LINE_PROBE,
		  "15 calibrate under auto: the probe decides");
	report_eq(smp_line_start_rule(15, PARALLEL_CALIBRATE_CONCURRENT), SMP_LINE_AHEAD,
		  "concurrent: every AP ahead");
	report_eq(smp_line_rest_rule(1), SMP_LINE_ONE_BY_ONE,
		  "the probe found no CPU to spare: the rest one by one");
	report_eq(smp_line_rest_rule(0), SMP_LINE_ONE_BY_ONE, "no concurrency at all: one by one");
	report_eq(smp_line_rest_rule(2), SMP_LINE_AHEAD, "two at a time: the rest ahead");
}

DEFINE_TEST(unit_lpj_direct_ticks, "Linux's direct calibration costs 5 * (HZ/100 + 2) ticks", 0)
{
	report_eq(lpj_direct_dct(250), 2, "DELAY_CALIBRATION_TICKS at HZ=250");
	report_eq(lpj_direct_dct(99), 1, "below HZ=100: 1");
	report_eq(lpj_direct_dct(10), 1, "HZ=10: 1");
	report_eq(lpj_direct_ticks(250), 20, "HZ=250: 20 ticks (80 ms)");
	report_eq(lpj_direct_ticks(100), 15, "HZ=100: 15 ticks (150 ms)");
	report_eq(lpj_direct_ticks(1000), 60, "HZ=1000: 60 ticks (60 ms)");
	report_eq(lpj_direct_ticks(300), 25, "HZ=300: 25 ticks");
	report_eq(lpj_direct_ticks(10), 15, "HZ=10: 15 ticks (1.5 s)");
}

/*
 * A recording model of one CPU's APIC for icr_send(): each step is a
 * letter (I interrupts off, i back on, F fence, M WRMSR, W write, R read,
 * P pause), and the ICR stays busy for `busy_reads` reads after a write.
 */
static struct {
	char steps[64];
	u32 n;
	bool irq_on;
	u64 msr_val;
	u32 icr2, icr, busy_reads;
	bool irq_off_at_write; /* interrupts were off at every ICR write */
} icr_model;

static void step(char c)
{
	if (icr_model.n < sizeof(icr_model.steps) - 1)
		icr_model.steps[icr_model.n++] = c;
}

static bool model_irq_save(void)
{
	bool on = icr_model.irq_on;

	step('I');
	icr_model.irq_on = false;
	return on;
}

static void model_irq_restore(bool was_on)
{
	if (was_on) {
		step('i');
		icr_model.irq_on = true;
	}
}

static void model_fence(void)
{
	step('F');
}

static void model_wrmsr(u32 msr, u64 val)
{
	step('M');
	if (msr == MSR_IA32_X2APIC_ICR)
		icr_model.msr_val = val;
}

static u32 model_read(u32 reg)
{
	if (reg != APIC_ICR)
		return 0;
	/* Polls are not recorded one by one: a run of them is one R. */
	if (!icr_model.n || icr_model.steps[icr_model.n - 1] != 'R')
		step('R');
	if (icr_model.busy_reads && icr_model.busy_reads != ~0u)
		icr_model.busy_reads--;
	return icr_model.busy_reads ? APIC_ICR_BUSY : 0;
}

static void model_write(u32 reg, u32 val)
{
	step('W');
	icr_model.irq_off_at_write &= !icr_model.irq_on;
	if (reg == APIC_ICR2)
		icr_model.icr2 = val;
	if (reg == APIC_ICR) {
		icr_model.icr = val;
		if (!icr_model.busy_reads)
			icr_model.busy_reads = 3;
	}
}

static void model_pause(void)
{
}

static const struct icr_ops model_ops = {
	.irq_save = model_irq_save,
	.irq_restore = model_irq_restore,
	.fence = model_fence,
	.wrmsr = model_wrmsr,
	.read = model_read,
	.write = model_write,
	.pause = model_pause,
};

static void icr_model_reset(u32 busy_reads)
{
	memset(&icr_model, 0, sizeof(icr_model));
	icr_model.irq_on = true;
	icr_model.irq_off_at_write = true;
	icr_model.busy_reads = busy_reads;
}

DEFINE_TEST(unit_icr_send, "an IPI's ICR sequence: the x2APIC fence, the xAPIC's atomic send", 0)
{
	icr_model_reset(0);
	report(icr_send(&model_ops, true, 7, APIC_ICR_DM_NMI), "x2APIC: sent");
	report(!strcmp(icr_model.steps, "FM"), "x2APIC: a fence, then the WRMSR (%s)",
	       icr_model.steps);
	report_eq(icr_model.msr_val, (7ULL << 32) | APIC_ICR_DM_NMI,
		  "x2APIC: destination in the high half");
	report(icr_model.irq_on, "x2APIC: interrupts left on");

	icr_model_reset(0);
	report(icr_send(&model_ops, false, 3, APIC_ICR_DM_INIT), "xAPIC: delivered");
	report(!strcmp(icr_model.steps, "IRWWRi"),
	       "xAPIC: interrupts off, idle wait, ICR2, ICR, delivery wait, on (%s)",
	       icr_model.steps);
	report(icr_model.irq_off_at_write, "xAPIC: no ICR write with interrupts on");
	report_eq(icr_model.icr2, 3u << 24, "xAPIC: destination in ICR2[31:24]");
	report_eq(icr_model.icr, APIC_ICR_DM_INIT, "xAPIC: the command in ICR");

	/* Delivery status that never clears: a failed send, interrupts back on. */
	icr_model_reset(0);
	icr_model.busy_reads = 0;
	report(icr_send(&model_ops, false, 3, APIC_ICR_DM_STARTUP), "xAPIC: busy for a while");
	icr_model_reset(~0u);
	report(!icr_send(&model_ops, false, 3, APIC_ICR_DM_STARTUP),
	       "xAPIC: a delivery status stuck busy is a failed send");
	report(icr_model.irq_on, "xAPIC: interrupts back on after a failed send");

	/* Interrupts already off stay off. */
	icr_model_reset(0);
	icr_model.irq_on = false;
	icr_send(&model_ops, false, 1, APIC_ICR_DM_NMI);
	report(!icr_model.irq_on, "xAPIC: interrupts that were off stay off");
}

DEFINE_TEST(unit_icr_kick_failure, "Linux's verdict on an INIT-SIPI-SIPI sequence", 0)
{
	report(!icr_kick_failure(true, 0), "delivered, no error: started");
	report(!icr_kick_failure(true, APIC_ESR_REDIRECTABLE_IPI),
	       "the redirectable-IPI bit alone is no failure (0xEF)");
	report(icr_kick_failure(false, 0) &&
		       !strcmp(icr_kick_failure(false, 0), "APIC never delivered"),
	       "a send never delivered");
	report(icr_kick_failure(true, BIT(2)) &&
		       !strcmp(icr_kick_failure(true, BIT(2)), "APIC delivery error"),
	       "a send accept error");
}

DEFINE_TEST(unit_ap_bringup_cycles, "per-AP bring-up time survives a TSC offset between CPUs", 0)
{
	bool offset = true;

	/* In step: INIT 1000, SIPI 1100, alive 1300, online 5000, seen 5100. */
	report_eq(smp_ap_bringup_cycles(1000, 1100, 1300, 5000, 5100, &offset), 4000,
		  "TSCs in step: the AP's online stamp less the INIT stamp");
	report(!offset, "and no offset reported");
	/* The AP's TSC 1e9 behind: its stamps are before the SIPI. */
	report_eq(smp_ap_bringup_cycles(1000000000, 1000000100, 300, 4000, 1000004100, &offset),
		  4100, "an AP behind the BSP: the BSP's own span, not a wrapped difference");
	report(offset, "and the offset is reported");
	/* The AP's TSC 1e9 ahead: online after the BSP saw it. */
	report_eq(smp_ap_bringup_cycles(1000, 1100, 1000001300, 1000005000, 5100, &offset), 4100,
		  "an AP ahead of the BSP: the BSP's own span");
	report(offset, "and the offset is reported");
	/* Ahead, never seen online by the BSP: nothing to give. */
	report_eq(smp_ap_bringup_cycles(1000, 1100, 300, 400, 0, &offset), 0,
		  "an AP behind, never seen: 0, not a wrapped difference");
	/* Not seen but in step (an AP the BSP never polled): its own stamps. */
	report_eq(smp_ap_bringup_cycles(1000, 1100, 1300, 5000, 0, &offset), 4000,
		  "in step, not seen: the AP's stamps");
}

static struct {
	u32 woken[8], n;
} turn_log;

static void log_wake(void *ctx, u32 rank)
{
	(void)ctx;
	if (turn_log.n < 8)
		turn_log.woken[turn_log.n++] = rank;
}

DEFINE_TEST(unit_turns, "turns to calibrate: a dead AP neither blocks the line nor adds a turn", 0)
{
	static struct turns t;

	/* 4 in line, one at a time; rank 2 never comes alive before its turn. */
	turns_init(&t, 4, 1);
	turn_log.n = 0;
	turns_give_up(&t, 2, log_wake, NULL);
	report(!turns_mine(&t, 1), "a dead AP's turn to come lets nobody in early");
	report_eq(turn_log.n, 0, "and wakes nobody");
	turns_grant(&t, log_wake, NULL); /* rank 0 done */
	report(turn_log.n == 1 && turn_log.woken[0] == 1, "rank 0 done: rank 1's turn");
	report(!turns_mine(&t, 3), "one at a time still");
	turns_grant(&t, log_wake, NULL); /* rank 1 done */
	report(turn_log.n == 2 && turn_log.woken[1] == 3,
	       "rank 1 done: the dead rank 2 is passed over");
	report(turns_mine(&t, 3), "rank 3 may run");

	/* A dead AP that held its turn gives it back once. */
	turns_init(&t, 3, 1);
	turn_log.n = 0;
	turns_give_up(&t, 0, log_wake, NULL);
	report(turn_log.n == 1 && turn_log.woken[0] == 1, "rank 0 dead with its turn: rank 1's");
	turns_give_up(&t, 0, log_wake, NULL);
	report_eq(turn_log.n, 1, "given up twice, passed on once");
	report(!turns_mine(&t, 2), "rank 2 still waits");

	/* Two at a time, one dead ahead: never three. */
	turns_init(&t, 4, 2);
	turn_log.n = 0;
	turns_give_up(&t, 3, log_wake, NULL);
	turns_grant(&t, log_wake, NULL);
	report(turn_log.n == 1 && turn_log.woken[0] == 2, "two at a time: rank 2 after rank 0");
	turns_grant(&t, log_wake, NULL);
	report_eq(turn_log.n, 1, "rank 3 is dead: nobody to wake");
}

DEFINE_TEST(unit_bringup_order, "linux-6.5 kicks primary threads first, each in CPU order", 0)
{
	/* CPU 0..5 with two threads a core: APIC IDs 0, 1, 2, 3, 4, 5. */
	static const u32 smt2[6] = { 0, 1, 2, 3, 4, 5 };
	static const u32 want2[5] = { 2, 4, 1, 3, 5 };
	static const u32 nosmt[4] = { 0, 1, 2, 3 };
	static const u32 want1[3] = { 1, 2, 3 };
	u32 order[5];
	bool same = true;

	smp_bringup_order(smt2, 6, 1, order);
	for (u32 i = 0; i < 5; i++)
		same &= order[i] == want2[i];
	report(same, "two threads a core: CPUs 2, 4, then 1, 3, 5");
	smp_bringup_order(nosmt, 4, 0, order);
	same = true;
	for (u32 i = 0; i < 3; i++)
		same &= order[i] == want1[i];
	report(same, "no SMT: every AP is a primary thread, in CPU order");
}

DEFINE_TEST(unit_turns_join, "an AP that must calibrate after all joins the line", 0)
{
	static struct turns t;
	u32 r;

	/* Two planned calibrators, one at a time; a copier finds it must calibrate. */
	turns_init(&t, 2, 1);
	turn_log.n = 0;
	r = turns_join(&t);
	report_eq(r, 2, "it takes the next rank");
	report(!turns_mine(&t, r), "and waits while the line is busy");
	turns_grant(&t, log_wake, NULL);
	turns_grant(&t, log_wake, NULL);
	report(turn_log.n == 2 && turn_log.woken[1] == 2, "its turn comes after rank 1's");

	/* A line that has run dry has a free slot: a newcomer goes at once. */
	turns_init(&t, 1, 1);
	turns_grant(&t, log_wake, NULL);
	r = turns_join(&t);
	report(turns_mine(&t, r), "a free slot: at once");
}

DEFINE_TEST(unit_tsc_sync_timeout, "Linux's TSC-sync check: 20 ms, 2 ms or none, per AP", 0)
{
	/* A constant TSC on an Intel CPU, no TSC_ADJUST, 8 CPUs on 2 packages. */
	const struct smp_tsc_sync_facts plain = {
		.constant = true, .intel = true, .possible_cpus = 8, .packages = 2
	};
	struct smp_tsc_sync_facts f = plain;

	report_eq(smp_tsc_sync_timeout_ms(&f), 20, "first CPU of its package: 20 ms");
	f.package_online = true;
	report_eq(smp_tsc_sync_timeout_ms(&f), 2, "a package with a CPU online: 2 ms");
	f.tsc_adjust = true;
	report_eq(smp_tsc_sync_timeout_ms(&f), 0,
		  "TSC_ADJUST and a CPU online in the package: only TSC_ADJUST compared");
	f.package_online = false;
	report_eq(smp_tsc_sync_timeout_ms(&f), 20,
		  "TSC_ADJUST, first CPU of its package: the warp loop, 20 ms");
	f = plain;
	f.reliable = true;
	report_eq(smp_tsc_sync_timeout_ms(&f), 0, "TSC_RELIABLE: skipped, first of a package");
	f.package_online = true;
	report_eq(smp_tsc_sync_timeout_ms(&f), 0, "TSC_RELIABLE: skipped, a sibling");
	f = plain;
	f.unstable = true;
	report_eq(smp_tsc_sync_timeout_ms(&f), 0, "a warp seen already: skipped");
	f = plain;
	f.intel = false;
	report_eq(smp_tsc_sync_timeout_ms(&f), 20, "constant TSC on AMD: checked");
	f.constant = false;
	report_eq(smp_tsc_sync_timeout_ms(&f), 0,
		  "neither constant nor Intel: unsynchronized, skipped");
	f.reliable = true;
	report_eq(smp_tsc_sync_timeout_ms(&f), 0, "reliable but not constant: skipped as reliable");
	f = plain;
	f.constant = false;
	report_eq(smp_tsc_sync_timeout_ms(&f), 20, "Intel without constant TSC: checked");

	/* unsynchronized_tsc() on one package, neither constant nor Intel. */
	f = plain;
	f.constant = f.intel = false;
	f.packages = 1;
	report_eq(smp_tsc_sync_timeout_ms(&f), 0,
		  "num_possible_cpus() > 1 (v6.1-v6.5): unsynchronized, skipped");
	f.unsync_count = lpj_policy_named("linux-6.5")->unsync_count;
	report_eq(smp_tsc_sync_timeout_ms(&f), 0, "linux-6.5 counts possible CPUs: skipped");
	f.unsync_count = lpj_policy_named("linux-6.12")->unsync_count;
	report_eq(smp_tsc_sync_timeout_ms(&f), 20, "linux-6.12 counts packages: checked");
	f.unsync_count = LPJ_UNSYNC_PACKAGES;
	report_eq(smp_tsc_sync_timeout_ms(&f), 20,
		  "topology_max_packages() > 1 (v6.12): one package, checked");
	f.packages = 2;
	report_eq(smp_tsc_sync_timeout_ms(&f), 0,
		  "topology_max_packages() > 1 (v6.12): two packages, skipped");
	f = plain;
	f.constant = f.intel = false;
	f.possible_cpus = 1;
	report_eq(smp_tsc_sync_timeout_ms(&f), 20, "one possible CPU: never unsynchronized");
}

/* Which TSC-sync check runs under bringup=mode and lpj_policy=policy. */
static u32 sync_mode(const char *mode, const char *policy)
{
	return smp_tsc_sync_mode(bringup_mode_named(mode), lpj_policy_named(policy));
}

DEFINE_TEST(unit_tsc_sync_mode, "Linux's TSC-sync check where the policy's version has it", 0)
{
	report_eq(sync_mode("serial", "linux-6.1"), SMP_TSC_SYNC_LINUX_6_1,
		  "serial, linux-6.1: after calibration");
	/*
	 * start_secondary() v6.5 checks before ap_calibrate_delay() in every
	 * bring-up, serial ones (cpuhp.parallel=0, SEV-ES, TDX) included.
	 */
	report_eq(sync_mode("serial", "linux-6.5"), SMP_TSC_SYNC_LINUX_6_5,
		  "serial, linux-6.5: before calibration, as 6.5 checks in every bring-up");
	report_eq(sync_mode("linux-6.5", "linux-6.5"), SMP_TSC_SYNC_LINUX_6_5,
		  "linux-6.5, linux-6.5: before calibration");
	report_eq(sync_mode("serial", "linux-6.12"), SMP_TSC_SYNC_LINUX_6_5,
		  "serial, linux-6.12: before calibration, as 6.5");
	report_eq(sync_mode("linux-6.5", "linux-6.1"), SMP_TSC_SYNC_LINUX_6_1,
		  "linux-6.5's shape under linux-6.1: still 6.1's order");
	report_eq(sync_mode("linux-6.5", "hvprobe"), SMP_TSC_SYNC_STAMPS,
		  "hvprobe's policy: the stamps");
	report_eq(sync_mode("parallel", "linux-6.5"), SMP_TSC_SYNC_STAMPS,
		  "hvprobe's parallel bring-up: the stamps");
	report_eq(sync_mode("serial", "hv-preset"), SMP_TSC_SYNC_LINUX_6_1,
		  "hv-preset, the patch on 6.1: after calibration");
}

/*
 * check_tsc_sync_source(), tsc_sync.c v6.5:358-361 and 475-508: with
 * TSC_ADJUST the target adjusts its TSC and the pair runs again, up to
 * 3 runs, before the TSC is marked unstable; without it, or when both
 * CPUs saw warps in turn (random_warps), the first warp marks it.
 */
DEFINE_TEST(unit_tsc_sync_retry, "a warp with TSC_ADJUST: adjust and rerun, up to 3 runs", 0)
{
	const char *const linux_policies[] = { "linux-6.1", "linux-6.5", "linux-6.12" };

	for (u32 i = 0; i < ARRAY_SIZE(linux_policies); i++) {
		const struct lpj_policy *p = lpj_policy_named(linux_policies[i]);
		u32 runs = smp_tsc_sync_runs(p, true);

		report_prefix_push(p->name);
		report_eq(runs, 3, "runs with TSC_ADJUST");
		report_eq(smp_tsc_sync_after_run(&runs, 1, 0), SMP_TSC_SYNC_RUN_AGAIN,
			  "first run warped: adjust and rerun");
		report_eq(smp_tsc_sync_after_run(&runs, 1, 0), SMP_TSC_SYNC_RUN_AGAIN,
			  "second run warped: adjust and rerun");
		report_eq(smp_tsc_sync_after_run(&runs, 1, 0), SMP_TSC_SYNC_RUN_UNSTABLE,
			  "third run warped: unstable");
		report_eq(runs, 0, "no run left");
		runs = smp_tsc_sync_runs(p, true);
		report_eq(smp_tsc_sync_after_run(&runs, 1, 0), SMP_TSC_SYNC_RUN_AGAIN,
			  "first run warped");
		report_eq(smp_tsc_sync_after_run(&runs, 0, 0), SMP_TSC_SYNC_RUN_IN_STEP,
			  "the adjusted rerun: in step");
		report_eq(runs, 0, "no run left after a clean run");
		runs = smp_tsc_sync_runs(p, true);
		report_eq(smp_tsc_sync_after_run(&runs, 3, 1), SMP_TSC_SYNC_RUN_UNSTABLE,
			  "random warps: unstable at once");
		runs = smp_tsc_sync_runs(p, false);
		report_eq(runs, 1, "runs without TSC_ADJUST");
		report_eq(smp_tsc_sync_after_run(&runs, 1, 0), SMP_TSC_SYNC_RUN_UNSTABLE,
			  "without TSC_ADJUST the first warp: unstable");
		report_prefix_pop();
	}
	/* The target moves its TSC back by the warp the source saw, or on by its own. */
	report_eq((u64)smp_tsc_adjust_step(120, 500), 120, "this CPU saw the warp: +its own");
	report_eq((u64)smp_tsc_adjust_step(0, 500), (u64)-500, "the source saw it: -the source's");
}

/*
 * hv-preset is the lpj thread's patch on the kernel it was posted
 * against (6.2-rc, so 6.1's rules): every field but its presets is
 * linux-6.1's.
 */
DEFINE_TEST(unit_hv_preset_is_6_1, "hv-preset: linux-6.1's rules plus hv_preset_lpj()", 0)
{
	const struct lpj_policy *p = lpj_policy_named("hv-preset"),
				*base = lpj_policy_named("linux-6.1");

	report_eq(p->linux_platform, base->linux_platform, "Linux's platform code");
	report_eq(p->tsc_khz_refusal, base->tsc_khz_refusal, "tsc_init()'s refusal");
	report_eq(p->copy_rule, base->copy_rule, "calibrate_delay_is_known()'s copy rule");
	report_eq(p->tsc_sync, base->tsc_sync, "the TSC-sync check's place");
	report_eq(p->warp_mark, base->warp_mark, "a warp's mark");
	report_eq(p->unsync_count, base->unsync_count, "unsynchronized_tsc()'s count");
	report_eq(p->tsc_adjust_runs, base->tsc_adjust_runs, "the TSC_ADJUST reruns");
	report((p->preset_flags & base->preset_flags) == base->preset_flags &&
		       p->preset_flags != base->preset_flags,
	       "6.1's presets, and the patch's besides");
}
