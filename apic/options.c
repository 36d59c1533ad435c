// SPDX-License-Identifier: MIT
/*
 * apic=, bringup=, cpus=, init_udelay= and parallel_calibrate=: see README,
 * "Kernel command line"; and the pure rules behind their auto values.
 */
#include "apic/options.h"
#include "kernel/lib/option.h"
#include "kernel/lib/string.h"
#include "kernel/time/options.h"

struct apic_options apic_options;

const char *const apic_choice_names[] = {
	[APIC_AUTO] = "auto",
	[APIC_XAPIC] = "xapic",
	[APIC_X2APIC] = "x2apic",
};
_Static_assert(ARRAY_SIZE(apic_choice_names) == APIC_CHOICE_COUNT, "apic_choice_names");

const char *const bringup_names[] = {
	[BRINGUP_SERIAL] = "serial",
	[BRINGUP_PARALLEL] = "parallel",
	[BRINGUP_LINUX_6_5] = "linux-6.5",
};
_Static_assert(ARRAY_SIZE(bringup_names) == BRINGUP_COUNT, "bringup_names");

const char *const parallel_calibrate_names[] = {
	[PARALLEL_CALIBRATE_AUTO] = "auto",
	[PARALLEL_CALIBRATE_SERIALIZE] = "serialize",
	[PARALLEL_CALIBRATE_CONCURRENT] = "concurrent",
};
_Static_assert(ARRAY_SIZE(parallel_calibrate_names) == PARALLEL_CALIBRATE_COUNT,
	       "parallel_calibrate_names");

DEFINE_OPTION_ENUM("apic", apic_options.mode, apic_choice_names, APIC_AUTO);
DEFINE_OPTION_ENUM("bringup", apic_options.bringup, bringup_names, BRINGUP_SERIAL);
DEFINE_OPTION_U32("cpus", apic_options.cpus, 0, 65535, CPUS_ALL);
/* SDM Vol 3A 9.4.4.1 waits 10 ms after INIT; auto is Linux's rule by vendor and family. */
DEFINE_OPTION_U64_OR_AUTO("init_udelay", apic_options.init_udelay, 0, 1000000);
DEFINE_OPTION_ENUM("parallel_calibrate", apic_options.parallel_calibrate, parallel_calibrate_names,
		   PARALLEL_CALIBRATE_AUTO);

/* Linux's smp_quirk_init_udelay() (arch/x86/kernel/smpboot.c). */
u64 init_udelay_rule(const char *vendor, u32 family, const char **why)
{
	if (!strcmp(vendor, "GenuineIntel") && family == 0x6) {
		*why = "Intel family 6: none, as Linux's smp_quirk_init_udelay()";
		return 0;
	}
	if (!strcmp(vendor, "AuthenticAMD") && family >= 0xf) {
		*why = "AMD family 0xF+: none, as Linux's smp_quirk_init_udelay()";
		return 0;
	}
	if (!strcmp(vendor, "HygonGenuine") && family >= 0x18) {
		*why = "Hygon family 0x18+: none, as Linux's smp_quirk_init_udelay()";
		return 0;
	}
	*why = "legacy 10 ms: a CPU Linux's smp_quirk_init_udelay() does not trust";
	return INIT_UDELAY_LEGACY_US;
}

u32 calibrate_concurrency(u64 solo, const u64 *together, u32 n, u32 *parallelism_x100)
{
	u64 sum = 0, k;

	for (u32 i = 0; i < n; i++)
		sum += together[i];
	*parallelism_x100 = solo ? (u32)MIN(sum * 100 / solo, 100000ULL) : 0;
	k = 1 + (*parallelism_x100 >= 50 ? (*parallelism_x100 - 50) / 100 : 0);
	return (u32)MIN(k, (u64)n + 1);
}

u64 ap_bringup_cycles(u64 bsp_init, u64 bsp_sipi, u64 ap_alive, u64 ap_online, u64 bsp_seen,
		      bool *offset)
{
	*offset = ap_alive < bsp_sipi || ap_online < ap_alive || (bsp_seen && ap_online > bsp_seen);
	if (!*offset)
		return ap_online - bsp_init;
	return bsp_seen > bsp_init ? bsp_seen - bsp_init : 0;
}

void bringup_order(const u32 *apic_ids, u32 n, u32 smt_shift, u32 *order)
{
	u32 mask = smt_shift >= 32 ? ~0u : (1u << smt_shift) - 1, k = 0;

	for (int secondary = 0; secondary < 2; secondary++)
		for (u32 i = 1; i < n; i++)
			if (!!(apic_ids[i] & mask) == secondary)
				order[k++] = i;
}

/*
 * timer=apic: the APIC timer as a reference (apic/timer.c), auto's last
 * resort, since only a stated rate makes it one.
 */
DEFINE_REFCLOCK_NAME("apic", 40, 50);
