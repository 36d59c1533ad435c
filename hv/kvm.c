// SPDX-License-Identifier: MIT
/*
 * KVM's paravirtual timing on the boot CPU (Linux Documentation/virt/kvm/
 * x86/cpuid.rst and msr.rst): the feature leaf, the timing leaf QEMU adds
 * at base+0x10 (VMware's convention), and kvmclock through
 * MSR_KVM_SYSTEM_TIME_NEW. The caller has matched the "KVMKVMKVM"
 * signature at base. A host that advertises kvmclock but faults on the MSR
 * or never fills the structure is recorded in problems, not fatal.
 */
#include "hv/kvm.h"
#include "hv/hv.h"
#include "kernel/lib/json.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/time/rates.h"
#include "kernel/x86/alloc.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"

/*
 * The host rewrites the structure only while this vCPU is out of guest
 * mode (on entry after a clock update request), so a read sees an odd or
 * moving version only when it spans such exits; one that keeps moving
 * for this many tries is a broken host, not bad luck.
 */
#define PVCLOCK_READ_TRIES 1000

/*
 * msr.rst asks only for 4-byte alignment; keeping the structure inside one
 * page as well spares the host a mapping across two pages. Aligning the
 * 32-byte structure to 32 bytes gives both.
 */
#define PVCLOCK_ALIGN 32

struct kvm_state kvm;

static struct pvclock_vcpu_time_info *pvti;

struct pvclock_snapshot {
	u32 version;
	u64 tsc_timestamp;
	u64 system_time;
	u32 mul;
	s8 shift;
	u8 flags;
};

/*
 * One consistent copy of the structure, and the TSC read between the two
 * version reads when tsc is not NULL. msr.rst "MSR_KVM_SYSTEM_TIME": the
 * version must be even (odd means an update is in progress) and the same
 * before and after. The fields are volatile and x86 does not reorder loads
 * with other loads (SDM Vol 3A 10.2.2), so the version reads bracket the
 * field reads without fences. False when the version never settles.
 */
static bool pvclock_read(struct pvclock_snapshot *s, u64 *tsc)
{
	for (u32 i = 0; i < PVCLOCK_READ_TRIES; i++) {
		u32 version = pvti->version;

		if (version & 1) {
			pause();
			continue;
		}
		barrier();
		if (tsc)
			*tsc = rdtsc();
		s->tsc_timestamp = pvti->tsc_timestamp;
		s->system_time = pvti->system_time;
		s->mul = pvti->tsc_to_system_mul;
		s->shift = pvti->tsc_shift;
		s->flags = pvti->flags;
		barrier();
		if (pvti->version == version) {
			s->version = version;
			return true;
		}
	}
	return false;
}

static void read_cpuid(u32 base)
{
	struct cpuid_regs r;

	kvm.max_leaf = cpuid(base + KVM_CPUID_SIGNATURE).eax;
	/*
	 * Every KVM has the features leaf, and early hosts returned EAX 0 in
	 * the signature leaf (cpuid.rst once documented "eax = 0"), so Linux
	 * reads base+1 regardless of the maximum; so does hvprobe.
	 */
	if (kvm.max_leaf < base + KVM_CPUID_FEATURES)
		note(kvm.problems, "max leaf 0x%x below the features leaf: read anyway",
		     kvm.max_leaf);
	r = cpuid(base + KVM_CPUID_FEATURES);
	kvm.features = r.eax;
	kvm.hints = r.edx;

	/*
	 * QEMU's timing leaf: EAX the TSC and EBX the APIC bus rate in kHz.
	 * A leaf of zeros inside the range is a hole, not a rate of 0.
	 */
	if (kvm.max_leaf >= base + KVM_CPUID_TIMING) {
		r = cpuid(base + KVM_CPUID_TIMING);
		kvm.timing_leaf = r.eax || r.ebx;
		kvm.timing_tsc_khz = r.eax;
		kvm.timing_apic_khz = r.ebx;
	}
}

/*
 * Writing the structure's GPA with bit 0 set asks KVM to fill it; KVM
 * does so before this vCPU re-enters the guest after the WRMSR exit, so
 * the first read already sees a published version. Memory from
 * boot_alloc is identity-mapped, so its address is its GPA, and it is
 * never freed: the host keeps writing there.
 */
static void kvmclock_init(void)
{
	struct pvclock_snapshot s;
	u64 phys;
	int v;

	pvti = boot_alloc(sizeof(*pvti), PVCLOCK_ALIGN);
	if (!pvti) {
		note(kvm.problems, "no memory for the kvmclock structure");
		return;
	}
	phys = (u64)(uintptr_t)pvti;
	v = wrmsr_safe(kvm_system_time_msr(kvm.features), phys | KVM_SYSTEM_TIME_ENABLE);
	if (v) {
		note(kvm.problems, "MSR 0x%x (kvmclock) write: vector %d",
		     kvm_system_time_msr(kvm.features), v);
		pvti = NULL;
		return;
	}
	if (!pvclock_read(&s, NULL)) {
		note(kvm.problems, "kvmclock version never settles (last %u)", pvti->version);
		return;
	}
	if (!s.version && !s.mul) {
		note(kvm.problems, "kvmclock structure never updated after enabling");
		return;
	}
	/* A zero multiplier would stop the clock at system_time. */
	if (!s.mul) {
		note(kvm.problems, "kvmclock mul 0 (version %u)", s.version);
		return;
	}
	kvm.kvmclock_tsc_khz = pvclock_tsc_khz(s.mul, s.shift);
	kvm.kvmclock_flags = s.flags;
	kvm.kvmclock = true;
}

/* Read the KVM block at base and enable kvmclock on this CPU (the BSP). */
static void kvm_init(u32 base)
{
	memset(&kvm, 0, sizeof(kvm));
	kvm.present = true;
	kvm.base = base;
	read_cpuid(base);
	/*
	 * The MSRs of CLOCKSOURCE2, else the legacy pair of feature bit 0,
	 * which msr.rst deprecates but Linux's kvmclock_init() still uses,
	 * and takes its lpj preset from (kvm_get_preset_lpj()).
	 */
	if (kvm_system_time_msr(kvm.features))
		kvmclock_init();
}

/* What the clocks may take as stated instead of measuring (kernel/time/rates.h). */
static void kvm_offer(void)
{
	kvm_platform.present = true;
	kvm_platform.detect = kvm.base;
	kvmclock_rate = (struct rate_offer){
		.tsc_hz = kvm.kvmclock ? kvm.kvmclock_tsc_khz * 1000 : 0,
		.absent = "kvmclock not available (KVM_FEATURE_CLOCKSOURCE2 and CLOCKSOURCE clear)",
	};
	kvm_timing_rate = (struct rate_offer){
		.tsc_hz = kvm.timing_leaf ? (u64)kvm.timing_tsc_khz * 1000 : 0,
		.apic_hz = kvm.timing_leaf ? (u64)kvm.timing_apic_khz * 1000 : 0,
		.absent = "no KVM timing leaf (base + 0x10)",
	};
}

static void kvm_start(u32 base)
{
	kvm_init(base);
	kvm_offer();
}

static void kvm_json(struct json *j)
{
	json_hex(j, "base", kvm.base);
	json_hex(j, "features", kvm.features);
	json_bool(j, "kvmclock", kvm.kvmclock);
	json_u64(j, "kvmclock_tsc_khz", kvm.kvmclock_tsc_khz);
	json_bool(j, "timing_leaf", kvm.timing_leaf);
	json_u64(j, "timing_tsc_khz", kvm.timing_tsc_khz);
	json_u64(j, "timing_apic_khz", kvm.timing_apic_khz);
}

DEFINE_HV_INTERFACE(HV_KIND_KVM, kvm_start, kvm_json);

/*
 * ns = system_time + the cycles since tsc_timestamp scaled (msr.rst). The
 * TSC is read inside the version bracket so that it pairs with the
 * timestamp it is subtracted from. 0 when kvmclock is off or the version
 * never settles.
 */
u64 kvm_clock_ns(void)
{
	struct pvclock_snapshot s;
	u64 tsc;

	if (!kvm.kvmclock || !pvclock_read(&s, &tsc))
		return 0;
	return s.system_time + pvclock_scale_delta(tsc - s.tsc_timestamp, s.mul, s.shift);
}
