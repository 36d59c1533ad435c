// SPDX-License-Identifier: MIT
/* Whether Linux's timer calibration gets tsc_khz; see linux_tsc.h. */
#include "kernel/time/linux_tsc.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"

bool linux_pit_window_ok(const struct linux_pit_window *w, u32 loopmin)
{
	return w->reads >= loopmin && w->step_max <= 10 * w->step_min;
}

/*
 * tsc_read_refs(): up to MAX_RETRIES tries, the first that spans fewer
 * than the threshold's TSC cycles counts; none does: ULLONG_MAX.
 */
static bool read_refs(const struct linux_tsc_reads *r, struct linux_tsc_verdict *v)
{
	for (u32 i = 0; i < LINUX_READ_REFS_TRIES; i++) {
		u64 took = r->read_ref(r->ctx);

		v->fastest_ref_read = MIN(v->fastest_ref_read, took);
		if (took < LINUX_READ_REFS_THRESHOLD)
			return true;
	}
	return false;
}

/* pit_calibrate_tsc() for one round; without a legacy PIC it only waits and fails. */
static bool pit_round(const struct linux_tsc_reads *r, u32 ms, u32 loopmin,
		      struct linux_pit_window *w)
{
	*w = (struct linux_pit_window){ 0, 0, 0 };
	if (!r->have_pit)
		return false;
	r->pit_window(r->ctx, ms, w);
	return linux_pit_window_ok(w, loopmin);
}

/*
 * The last PIT window's numbers, kept short (the DATA line has room for
 * little): Linux's "Unable to calibrate against PIT" with its reasons.
 */
static void why_pit(char *buf, size_t len, const struct linux_tsc_reads *r,
		    const struct linux_pit_window *w, u32 loopmin)
{
	if (!r->have_pit)
		snprintf(buf, len, "PIT: no legacy PIC");
	else
		snprintf(buf, len, "PIT: %u/%u reads, steps %llu..%llu", w->reads, loopmin,
			 (unsigned long long)w->step_min, (unsigned long long)w->step_max);
}

void linux_tsc_calibrate(const struct linux_tsc_reads *r, struct linux_tsc_verdict *v)
{
	u32 ms = LINUX_CAL_MS, loopmin = LINUX_CAL_PIT_LOOPS;
	struct linux_pit_window w = { 0, 0, 0 };
	char pit[80];

	*v = (struct linux_tsc_verdict){ .fastest_ref_read = ~0ULL };
	for (u32 i = 0; i < LINUX_PIT_ROUNDS; i++) {
		bool ref1 = r->ref && read_refs(r, v);
		bool pit_ok = pit_round(r, ms, loopmin, &w);
		bool ref2 = r->ref && read_refs(r, v);

		/*
		 * A passing PIT window is used whatever the reference says
		 * (matching it, deviating, or failed), and two passing
		 * reference reads are used when the PIT never passes: either
		 * way tsc_khz is known from here on.
		 */
		if (pit_ok) {
			v->ok = true;
			v->pit_windows_ok++;
			snprintf(v->why, sizeof(v->why), "PIT: %u ms window, %u reads", ms,
				 w.reads);
			return;
		}
		if (ref1 && ref2) {
			v->ok = true;
			why_pit(pit, sizeof(pit), r, &w, loopmin);
			snprintf(v->why, sizeof(v->why), "%s reference, read in %llu cycles (%s)",
				 r->ref, (unsigned long long)v->fastest_ref_read, pit);
			return;
		}
		/* Two failed PIT rounds: "give the virtual PC a slightly longer timeframe". */
		if (i == 1) {
			ms = LINUX_CAL2_MS;
			loopmin = LINUX_CAL2_PIT_LOOPS;
		}
	}
	/* "HPET/PMTIMER calibration failed", or "No reference (HPET/PMTIMER) available". */
	why_pit(pit, sizeof(pit), r, &w, loopmin);
	if (!r->ref)
		snprintf(v->why, sizeof(v->why), "%s; no HPET or PM timer", pit);
	else
		snprintf(v->why, sizeof(v->why), "%s; %s reads >= %llu cycles (< %llu wanted)", pit,
			 r->ref, (unsigned long long)v->fastest_ref_read,
			 LINUX_READ_REFS_THRESHOLD);
}

u64 linux_native_tsc_hz(const struct linux_native_tsc *c)
{
	u32 den = c->leaf_15.eax, num = c->leaf_15.ebx;
	u64 crystal_khz;

	if (!c->intel || c->max_leaf < CPUID_LEAF_TSC || !den || !num)
		return 0;
	crystal_khz = c->leaf_15.ecx / 1000;
	/* "Some Intel SoCs like Skylake and Kabylake don't report the crystal clock" */
	if (!crystal_khz && c->max_leaf >= CPUID_LEAF_FREQUENCY)
		crystal_khz = (u64)c->leaf_16.eax * 1000 * den / num;
	return crystal_khz * num / den * 1000;
}
