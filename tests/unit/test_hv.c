// SPDX-License-Identifier: MIT
/*
 * Hypervisor detection and lpj source priority, from constructed CPUID
 * leaves: the signatures hvprobe must recognise, Hyper-V's "Hv#1" rule,
 * QEMU's Hyper-V-plus-KVM layout (KVM at 0x40000100), and which preset a
 * Linux guest would take from what the platform offers.
 */
#include "hv/hv.h"
#include "hv/hyperv.h"
#include "hv/kvm.h"
#include "kernel/cmdline.h"
#include "kernel/lib/string.h"
#include "kernel/test/test.h"
#include "kernel/time/lpj.h"

#define MAX_FAKE 8

struct fake_leaf {
	u32 leaf;
	struct cpuid_regs r;
};

static struct fake_leaf fake[MAX_FAKE];
static u32 fake_count;

static struct cpuid_regs fake_leaf(u32 leaf)
{
	for (u32 i = 0; i < fake_count; i++)
		if (fake[i].leaf == leaf)
			return fake[i].r;
	return (struct cpuid_regs){ 0 };
}

static void add(u32 leaf, u32 eax, const char *sig12)
{
	struct cpuid_regs r = { .eax = eax };

	if (sig12) {
		memcpy(&r.ebx, sig12, 4);
		memcpy(&r.ecx, sig12 + 4, 4);
		memcpy(&r.edx, sig12 + 8, 4);
	}
	fake[fake_count++] = (struct fake_leaf){ leaf, r };
}

DEFINE_TEST(unit_hv_detect, "hypervisor leaves are recognised", 0)
{
	struct hv_info info;

	fake_count = 0;
	add(0x40000000, 0x40000001, "TCGTCGTCGTCG");
	hv_scan(&info, true, fake_leaf);
	report_eq(info.count, 1, "TCG: one block");
	report_eq(info.blocks[0].kind, HV_KIND_TCG, "TCG is recognised");
	report_str_eq(info.blocks[0].signature, "TCGTCGTCGTCG", "its signature is kept");

	hv_scan(&info, false, fake_leaf);
	report_eq(info.count, 0, "no hypervisor bit: no scan");

	/* QEMU with hv-* enlightenments: Hyper-V first, KVM behind it. */
	fake_count = 0;
	add(0x40000000, 0x4000000a, "Microsoft Hv");
	add(0x40000001, HV_INTERFACE_HV1, NULL);
	add(0x40000100, 0x40000101, "KVMKVMKVM\0\0\0");
	hv_scan(&info, true, fake_leaf);
	report_eq(info.count, 2, "Hyper-V and KVM: two blocks");
	report(hv_find(&info, HV_KIND_HYPERV) && hv_find(&info, HV_KIND_HYPERV)->base == 0x40000000,
	       "Hyper-V at 0x40000000");
	report(hv_find(&info, HV_KIND_KVM) && hv_find(&info, HV_KIND_KVM)->base == 0x40000100,
	       "KVM at 0x40000100");
	report_str_eq(hv_find(&info, HV_KIND_KVM)->signature, "KVMKVMKVM",
		      "KVM's NUL padding ends its signature");

	/* "Microsoft Hv" without Hv#1 is not the TLFS interface. */
	fake[1].r.eax = 0;
	hv_scan(&info, true, fake_leaf);
	report_eq(info.blocks[0].kind, HV_KIND_UNKNOWN, "Microsoft Hv without Hv#1 is unknown");

	fake_count = 0;
	add(0x40000000, 0x40000010, "VMwareVMware");
	add(0x40000100, 0x40000104, "XenVMMXenVMM");
	hv_scan(&info, true, fake_leaf);
	report(info.count == 2 && info.blocks[0].kind == HV_KIND_VMWARE &&
		       info.blocks[1].kind == HV_KIND_XEN,
	       "VMware and Xen are recognised");

	/* A max leaf outside its block means nothing lives there. */
	fake_count = 0;
	add(0x40000000, 0x12345678, "KVMKVMKVM\0\0\0");
	hv_scan(&info, true, fake_leaf);
	report_eq(info.count, 0, "a max leaf outside the block is no block");
	fake_count = 0;
	add(0x40000000, 0x40000001, "SomethingNew");
	hv_scan(&info, true, fake_leaf);
	report(info.count == 1 && info.blocks[0].kind == HV_KIND_UNKNOWN,
	       "an unknown signature is listed as unknown");
}

DEFINE_TEST(unit_hv_lpj_preset, "lpj presets under hvprobe's policy: the fastest stated rate", 0)
{
	struct lpj_offers all = {
		.cmdline_lpj = 1234567,
		.hyperv_tsc_hz = 2400000000ULL,
		.kvmclock_tsc_khz = 2500000,
		.kvm_timing_tsc_khz = 2600000,
		.cpuid_tsc_hz = 2700000000ULL,
	};
	struct lpj_offers o = all;
	u64 lpj;

	report_eq(lpj_preset(LPJ_POLICY_HVPROBE, LPJ_SOURCE_AUTO, &o, 250, &lpj),
		  LPJ_SOURCE_CMDLINE, "lpj= first");
	report_eq(lpj, 1234567, "with its value exactly");
	o.cmdline_lpj = 0;
	report_eq(lpj_preset(LPJ_POLICY_HVPROBE, LPJ_SOURCE_AUTO, &o, 250, &lpj), LPJ_SOURCE_HYPERV,
		  "then Hyper-V's frequency MSR");
	report_eq(lpj, 9600000, "2.4 GHz at HZ=250");
	o.hyperv_tsc_hz = 0;
	report_eq(lpj_preset(LPJ_POLICY_HVPROBE, LPJ_SOURCE_AUTO, &o, 250, &lpj),
		  LPJ_SOURCE_KVMCLOCK, "then kvmclock");
	report_eq(lpj, 10000000, "2.5 GHz at HZ=250");
	o.kvmclock_tsc_khz = 0;
	report_eq(lpj_preset(LPJ_POLICY_HVPROBE, LPJ_SOURCE_AUTO, &o, 250, &lpj), LPJ_SOURCE_KVM,
		  "then the KVM timing leaf");
	report_eq(lpj, 10400000, "2.6 GHz at HZ=250");
	o.kvm_timing_tsc_khz = 0;
	report_eq(lpj_preset(LPJ_POLICY_HVPROBE, LPJ_SOURCE_AUTO, &o, 250, &lpj), LPJ_SOURCE_AUTO,
		  "CPUID.15H is no preset under auto (it feeds lpj_fine)");
	report_eq(lpj, 0, "and gives no value");

	o = all;
	report_eq(lpj_preset(LPJ_POLICY_HVPROBE, LPJ_SOURCE_CPUID, &o, 250, &lpj), LPJ_SOURCE_CPUID,
		  "lpj_source=cpuid takes CPUID.15H even with others offered");
	report_eq(lpj, 10800000, "2.7 GHz at HZ=250");
	report_eq(lpj_preset(LPJ_POLICY_HVPROBE, LPJ_SOURCE_KVMCLOCK, &o, 1000, &lpj),
		  LPJ_SOURCE_KVMCLOCK, "lpj_source=kvmclock at HZ=1000");
	report_eq(lpj, 2500000, "2.5 GHz at HZ=1000");
	report_eq(lpj_preset(LPJ_POLICY_HVPROBE, LPJ_SOURCE_CALIBRATE, &o, 250, &lpj),
		  LPJ_SOURCE_AUTO, "lpj_source=calibrate takes no preset");
	o.hyperv_tsc_hz = 0;
	report_eq(lpj_preset(LPJ_POLICY_HVPROBE, LPJ_SOURCE_HYPERV, &o, 250, &lpj), LPJ_SOURCE_AUTO,
		  "a named source that offers nothing gives no preset");
	report_eq(lpj, 0, "and no value");
}

DEFINE_TEST(unit_hv_lpj_preset_linux, "lpj presets under Linux's policies: lpj= and kvmclock only",
	    0)
{
	struct lpj_offers hv_only = { .hyperv = true, .hyperv_tsc_hz = 2400000000ULL };
	struct lpj_offers kvm_hv = { .hyperv = true,
				     .kvm = true,
				     .hyperv_tsc_hz = 2400000000ULL,
				     .kvmclock_tsc_khz = 2500000,
				     .kvm_timing_tsc_khz = 2600000 };
	struct lpj_offers timing_only = { .kvm = true, .kvm_timing_tsc_khz = 2600000 };
	u64 lpj;

	report_eq(lpj_linux_platform(true, true), LPJ_PLATFORM_KVM,
		  "both blocks: KVM's base 0x40000100 outranks Hyper-V's");
	report_eq(lpj_linux_platform(true, false), LPJ_PLATFORM_HYPERV, "Hyper-V alone");
	report_eq(lpj_linux_platform(false, false), LPJ_PLATFORM_NONE, "neither");

	report_eq(lpj_preset(LPJ_POLICY_LINUX_6_5, LPJ_SOURCE_AUTO, &hv_only, 250, &lpj),
		  LPJ_SOURCE_AUTO, "linux-6.5 on Hyper-V: no preset from its frequency MSR");
	report_eq(lpj, 0, "and no value");
	report_eq(lpj_preset(LPJ_POLICY_LINUX_6_1, LPJ_SOURCE_AUTO, &hv_only, 250, &lpj),
		  LPJ_SOURCE_AUTO, "linux-6.1 on Hyper-V: none either");
	report_eq(lpj_preset(LPJ_POLICY_HV_PRESET, LPJ_SOURCE_AUTO, &hv_only, 250, &lpj),
		  LPJ_SOURCE_HYPERV, "hv-preset on Hyper-V: the thread's hv_preset_lpj()");
	report_eq(lpj, 9600000, "2.4 GHz at HZ=250");
	report_eq(lpj_preset(LPJ_POLICY_HVPROBE, LPJ_SOURCE_AUTO, &hv_only, 250, &lpj),
		  LPJ_SOURCE_HYPERV, "hvprobe's: Hyper-V's MSR, the fastest");

	report_eq(lpj_preset(LPJ_POLICY_LINUX_6_5, LPJ_SOURCE_AUTO, &kvm_hv, 250, &lpj),
		  LPJ_SOURCE_KVMCLOCK, "linux-6.5 on KVM with Hyper-V's leaves: kvmclock");
	report_eq(lpj, 10000000, "2.5 GHz at HZ=250");
	report_eq(lpj_preset(LPJ_POLICY_HV_PRESET, LPJ_SOURCE_AUTO, &kvm_hv, 250, &lpj),
		  LPJ_SOURCE_KVMCLOCK,
		  "hv-preset there too: KVM is the platform, Hyper-V's code never runs");
	report_eq(lpj_preset(LPJ_POLICY_LINUX_6_1, LPJ_SOURCE_AUTO, &timing_only, 250, &lpj),
		  LPJ_SOURCE_AUTO, "linux-6.1: KVM's timing leaf is never a preset");
	kvm_hv.cmdline_lpj = 1234567;
	report_eq(lpj_preset(LPJ_POLICY_LINUX_6_1, LPJ_SOURCE_AUTO, &kvm_hv, 250, &lpj),
		  LPJ_SOURCE_CMDLINE, "linux-6.1: lpj= first");
	report_eq(lpj_preset(LPJ_POLICY_LINUX_6_5, LPJ_SOURCE_HYPERV, &kvm_hv, 250, &lpj),
		  LPJ_SOURCE_HYPERV,
		  "a source named on the command line is taken under any policy");
}

DEFINE_TEST(unit_hv_tsc_invariant, "Hyper-V's TSC-invariant control under each policy", 0)
{
	report_eq(lpj_hyperv_tsc(LPJ_POLICY_LINUX_6_5, true, false, true),
		  LPJ_HV_TSC_EXPOSE_INVARIANT, "Hyper-V with HV_ACCESS_TSC_INVARIANT: expose");
	report_eq(lpj_hyperv_tsc(LPJ_POLICY_LINUX_6_1, true, false, false), LPJ_HV_TSC_UNSTABLE,
		  "Hyper-V without it: mark_tsc_unstable(\"running on Hyper-V\")");
	report_eq(lpj_hyperv_tsc(LPJ_POLICY_HV_PRESET, true, false, false), LPJ_HV_TSC_UNSTABLE,
		  "hv-preset: the same platform code");
	report_eq(lpj_hyperv_tsc(LPJ_POLICY_LINUX_6_5, true, true, false), LPJ_HV_TSC_NONE,
		  "KVM with Hyper-V's leaves: KVM's platform code, not Hyper-V's");
	report_eq(lpj_hyperv_tsc(LPJ_POLICY_HVPROBE, true, false, false), LPJ_HV_TSC_NONE,
		  "hvprobe's policy leaves the TSC alone");
}

DEFINE_TEST(unit_kvm_system_time_msr, "kvmclock through the MSR Linux's kvmclock_init() picks", 0)
{
	report_eq(kvm_system_time_msr(BIT(KVM_FEATURE_CLOCKSOURCE2) | BIT(KVM_FEATURE_CLOCKSOURCE)),
		  MSR_KVM_SYSTEM_TIME_NEW, "CLOCKSOURCE2: the new MSR");
	report_eq(kvm_system_time_msr(BIT(KVM_FEATURE_CLOCKSOURCE)), MSR_KVM_SYSTEM_TIME,
		  "legacy CLOCKSOURCE alone: the legacy MSR, still a kvmclock and a preset");
	report_eq(kvm_system_time_msr(0), 0, "neither: no kvmclock");
}
