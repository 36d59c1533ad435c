// SPDX-License-Identifier: MIT
/*
 * Bring-up rules with no hardware behind them: init_udelay=auto's choice
 * by vendor and family (Linux's smp_quirk_init_udelay()), how many APs
 * may calibrate at once from the host-parallelism probe, and the tick
 * count of Linux's direct calibration at each HZ that the smp DATA sets
 * hvprobe's own counts against. A wrong INIT wait costs every AP 10 ms
 * (2.55 s of a 255-vCPU bring-up); a wrong concurrency makes parallel
 * bring-up slower than serial on a host with few CPUs.
 */
#include <string.h>

#include "apic/options.h"
#include "kernel/time/lpj.h"
#include "kernel/test/test.h"

DEFINE_TEST(unit_init_udelay_rule, "init_udelay=auto follows smp_quirk_init_udelay()", 0)
{
	const char *why = NULL;

	report_eq(init_udelay_rule("GenuineIntel", 6, &why), 0, "Intel family 6: 0");
	report(why && strstr(why, "Intel family 6"), "and says so: %s", why);
	report_eq(init_udelay_rule("GenuineIntel", 0xf, &why), 10000,
		  "Intel family 0xF (NetBurst): the legacy 10 ms");
	report_eq(init_udelay_rule("GenuineIntel", 5, &why), 10000, "Intel family 5: 10 ms");
	report(why && strstr(why, "legacy"), "the legacy case says so: %s", why);
	report_eq(init_udelay_rule("AuthenticAMD", 0xe, &why), 10000, "AMD family 0xE: 10 ms");
	report_eq(init_udelay_rule("AuthenticAMD", 0xf, &why), 0, "AMD family 0xF: 0");
	report_eq(init_udelay_rule("AuthenticAMD", 0x19, &why), 0, "AMD family 0x19 (Zen 3): 0");
	report_eq(init_udelay_rule("HygonGenuine", 0x17, &why), 10000, "Hygon family 0x17: 10 ms");
	report_eq(init_udelay_rule("HygonGenuine", 0x18, &why), 0, "Hygon family 0x18: 0");
	report_eq(init_udelay_rule("CentaurHauls", 6, &why), 10000, "Centaur family 6: 10 ms");
	report_eq(init_udelay_rule("", 6, &why), 10000, "no vendor string: 10 ms");
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
	u32 x100 = 0;

	/*
	 * Beside the AP already calibrating, the others' combined speed,
	 * less half a CPU for the BSP's tick.
	 */
	report_eq(calibrate_concurrency(1000, two_cores, 4, &x100), 2,
		  "4 more APs at 2 CPUs' worth: 2 at a time");
	report_eq(x100, 200, "parallelism 2.00");
	report_eq(calibrate_concurrency(1000, one_core, 8, &x100), 1,
		  "8 more APs at 1 CPU's worth: serialized");
	report_eq(calibrate_concurrency(1000, own_cpus, 3, &x100), 3,
		  "3 more APs at 2.97 CPUs: 3 at a time");
	report_eq(x100, 297, "parallelism 2.97");
	report_eq(calibrate_concurrency(1000, four, 4, &x100), 4, "3.6 CPUs: 4");
	report_eq(calibrate_concurrency(1000, almost_two, 2, &x100), 2, "1.78 CPUs: 2");
	report_eq(calibrate_concurrency(1000, starved, 2, &x100), 1, "1.10 CPUs: serialized");
	report_eq(calibrate_concurrency(1000, slow, 2, &x100), 1, "0.70 CPUs: serialized");
	report_eq(calibrate_concurrency(1000, none, 2, &x100), 1,
		  "APs that never ran: serialized");
	report_eq(calibrate_concurrency(1000, many, 3, &x100), 4,
		  "never more than the APs there are");
	report_eq(calibrate_concurrency(0, two_cores, 4, &x100), 1,
		  "no solo count: 1, no division by 0");
	report_eq(x100, 0, "and no parallelism claimed");
	report_eq(calibrate_concurrency(1000, two_cores, 0, &x100), 1, "no others: 1");
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
