// SPDX-License-Identifier: MIT
/*
 * kvmclock arithmetic (Linux Documentation/virt/kvm/x86/msr.rst,
 * "MSR_KVM_SYSTEM_TIME"): the hypervisor publishes nanoseconds per TSC
 * cycle as a 32.32 fixed-point multiplier mul (always below 1.0) and a
 * binary exponent shift, so that
 *
 *	ns = ((delta << shift) * mul) >> 32	(>> -shift when shift < 0)
 *
 * Pure: shared verbatim with the host unit tests.
 */
#include "hv/kvm.h"

/* Hz in a kHz, times the 2^32 that scales the 32.32 multiplier. */
#define PVCLOCK_KHZ_SCALED (1000000ULL << 32)

/*
 * v << left, or v >> -left when negative. A shift by 64 or more is
 * undefined in C, and x86 would take it modulo 64; every bit is shifted
 * out, so the honest answer is 0. Only a corrupt structure publishes such
 * a shift (KVM's stay within a few bits of 0).
 */
static u64 shift_left(u64 v, int left)
{
	if (left >= 64 || left <= -64)
		return 0;
	return left >= 0 ? v << left : v >> -left;
}

u64 pvclock_tsc_khz(u32 mul, s8 shift)
{
	/*
	 * cycles per ns = 2^32 / (mul * 2^shift), so kHz = (10^6 << 32) / mul
	 * then divided by 2^shift. 10^6 << 32 < 2^52 fits in a u64.
	 */
	if (!mul)
		return 0;
	return shift_left(PVCLOCK_KHZ_SCALED / mul, -shift);
}

u64 pvclock_scale_delta(u64 delta, u32 mul, s8 shift)
{
	/*
	 * delta * mul needs up to 96 bits: a 128-bit product, never a 128-bit
	 * division (that would call libgcc, which the kernel does not link).
	 */
	return (u64)(((unsigned __int128)shift_left(delta, shift) * mul) >> 32);
}

u32 kvm_system_time_msr(u32 features)
{
	if (features & BIT(KVM_FEATURE_CLOCKSOURCE2))
		return MSR_KVM_SYSTEM_TIME_NEW;
	if (features & BIT(KVM_FEATURE_CLOCKSOURCE))
		return MSR_KVM_SYSTEM_TIME;
	return 0;
}
