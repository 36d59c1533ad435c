// SPDX-License-Identifier: MIT
/* Bring-up's pure rules; see rules.h. */
#include "apic/smp/rules.h"
#include "apic/options.h"
#include "kernel/lib/bits.h"
#include "kernel/lib/string.h"

/* Linux's smp_quirk_init_udelay() (arch/x86/kernel/smpboot.c). */
u64 smp_init_udelay_rule(const char *vendor, u32 family, const char **why)
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

u32 smp_concurrency_rule(u64 solo, const u64 *together, u32 n, u32 *parallelism_x100)
{
	u64 sum = 0, k;

	/*
	 * No vCPU runs faster than a host CPU: an AP that counted more than
	 * the BSP alone shows the BSP lost part of its windows to the host,
	 * and the AP's count is the truer yardstick.
	 */
	for (u32 i = 0; i < n; i++) {
		sum += together[i];
		if (solo)
			solo = MAX(solo, together[i]);
	}
	*parallelism_x100 = solo ? (u32)MIN(sum * 100 / solo, 100000ULL) : 0;
	k = 1 + (*parallelism_x100 >= 50 ? (*parallelism_x100 - 50) / 100 : 0);
	return (u32)MIN(k, (u64)n + 1);
}

u32 smp_line_start_rule(u32 calibrators, u32 parallel_calibrate)
{
	if (calibrators <= 1 || parallel_calibrate == PARALLEL_CALIBRATE_SERIALIZE)
		return SMP_LINE_ONE_BY_ONE;
	if (parallel_calibrate == PARALLEL_CALIBRATE_CONCURRENT)
		return SMP_LINE_AHEAD;
	return SMP_LINE_PROBE;
}

u32 smp_line_rest_rule(u32 concurrency)
{
	return concurrency > 1 ? SMP_LINE_AHEAD : SMP_LINE_ONE_BY_ONE;
}

u64 smp_ap_bringup_cycles(u64 bsp_init, u64 bsp_sipi, u64 ap_alive, u64 ap_online, u64 bsp_seen,
			  bool *offset)
{
	*offset = ap_alive < bsp_sipi || ap_online < ap_alive || (bsp_seen && ap_online > bsp_seen);
	if (!*offset)
		return ap_online - bsp_init;
	return bsp_seen > bsp_init ? bsp_seen - bsp_init : 0;
}

void smp_bringup_order(const u32 *apic_ids, u32 n, u32 smt_shift, u32 *order)
{
	u32 mask = smt_shift >= 32 ? ~0u : (1u << smt_shift) - 1, k = 0;

	for (int secondary = 0; secondary < 2; secondary++)
		for (u32 i = 1; i < n; i++)
			if (!!(apic_ids[i] & mask) == secondary)
				order[k++] = i;
}
