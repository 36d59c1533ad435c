// SPDX-License-Identifier: MIT
/*
 * Hyper-V arithmetic (Hypervisor TLFS, "Partition Reference TSC Mechanism"
 * and "Reporting the Guest OS Identity"): reference time from the TSC page,
 * the TSC frequency the page's scale implies, and hvprobe's guest OS
 * identity. Pure: shared verbatim with the host unit tests.
 */
#include "hv/hyperv.h"

/*
 * hvprobe's identity in the open-source layout. OS type values are
 * allocated by Microsoft (Linux 0x1, FreeBSD 0x2, Xen 0x3, Illumos 0x4 so
 * far); hvprobe has none, so it takes the field's top value, 0x7F, as far
 * as possible from the allocations, which count up from 1. It must not be
 * Linux's 0x1: a host that keys anything on the Linux identity should not
 * mistake a test kernel for Linux. The version field carries hvprobe's
 * version packed as major << 16 | minor << 8 | patch, the packing Linux
 * uses for its own version in the same field; keep it in step with
 * HVPROBE_VERSION. OS ID (vendor information) and build are unused: 0.
 */
#define HVPROBE_HV_OS_TYPE 0x7fULL
#define HVPROBE_HV_VERSION ((0ULL << 16) | (1ULL << 8) | 0ULL) /* 0.1.0 */

/* v placed in the field mask describes (the lowest set bit is its shift). */
static u64 field_prep(u64 mask, u64 v)
{
	return (v << __builtin_ctzll(mask)) & mask;
}

/*
 * (hi * 2^64 + lo) / d by restoring shift-subtract division, one quotient
 * bit per step, for hi < d so the quotient fits in 64 bits. The kernel
 * links no libgcc, so a 128-bit '/' (a call to __udivti3) is not an option.
 * The running remainder stays below d, but doubling it may carry out of
 * 64 bits; a carry means the true remainder is at least 2^64 > d, so d
 * always goes in, and the 64-bit difference is then exact.
 */
static u64 div128_64(u64 hi, u64 lo, u64 d)
{
	u64 q = 0, r = hi;

	for (int i = 63; i >= 0; i--) {
		u64 carry = r >> 63;

		r = (r << 1) | ((lo >> i) & 1);
		q <<= 1;
		if (carry || r >= d) {
			r -= d;
			q |= 1;
		}
	}
	return q;
}

u64 hv_tsc_page_time(u64 tsc, u64 scale, s64 offset)
{
	/*
	 * ReferenceTime = ((VirtualTsc * TscScale) >> 64) + TscOffset: a full
	 * 64x64 -> 128-bit product keeping the high half (one MUL on x86-64),
	 * then the signed offset added modulo 2^64, which is what a negative
	 * offset means for an unsigned count.
	 */
	u64 high = (u64)(((unsigned __int128)tsc * scale) >> 64);

	return high + (u64)offset;
}

u64 hv_tsc_hz_from_scale(u64 scale)
{
	/*
	 * The page converts cycles to 100 ns units with scale = 10^7 * 2^64 /
	 * f, so f = 10^7 * 2^64 / scale, rounded down. The quotient fits in 64
	 * bits only when scale > 10^7: scale = 10^7 would mean f = 2^64 Hz,
	 * and smaller scales more still. No TSC runs that fast (f >= 2^64 Hz is
	 * 1.8e19 Hz), so such a page is corrupt; saturate to UINT64_MAX rather
	 * than return a wrapped, plausible-looking frequency. At the other
	 * end, scale = UINT64_MAX gives exactly 10 MHz: a TSC at or below the
	 * reference counter's own rate needs scale >= 2^64 and cannot be
	 * described by the page at all.
	 */
	if (!scale)
		return 0;
	if (scale <= HV_REF_COUNT_HZ)
		return UINT64_MAX;
	return div128_64(HV_REF_COUNT_HZ, 0, scale);
}

u64 hv_guest_os_id(void)
{
	/*
	 * TLFS "Guest OS Identity MSR for Open Source Operating Systems":
	 * 63 open source (1), 62:56 OS type, 55:48 OS ID (vendor's additional
	 * information), 47:16 upstream version, 15:0 build number.
	 */
	return HV_GUEST_OS_ID_OPEN_SOURCE | field_prep(HV_GUEST_OS_ID_OS_TYPE, HVPROBE_HV_OS_TYPE) |
	       field_prep(HV_GUEST_OS_ID_OS_ID, 0) |
	       field_prep(HV_GUEST_OS_ID_VERSION, HVPROBE_HV_VERSION) |
	       field_prep(HV_GUEST_OS_ID_BUILD, 0);
}
