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
#include "kernel/time/rates.h"

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

/* A preset's source by name, "none" for none. */
static const char *name_of(const struct rate_source *s)
{
	return s ? s->name : "none";
}

/* Every source states a rate: lpj=, Hyper-V's MSR, kvmclock, KVM's timing leaf, CPUID.15H. */
static void offer_all(void)
{
	rate_offers_reset();
	rate_cmdline.lpj = 1234567;
	hyperv_rate.tsc_hz = 2400000000ULL;
	kvmclock_rate.tsc_hz = 2500000000ULL;
	kvm_timing_rate.tsc_hz = 2600000000ULL;
	rate_cpuid.tsc_hz = 2700000000ULL;
}

DEFINE_TEST(unit_hv_lpj_preset, "lpj presets under hvprobe's policy: the fastest stated rate", 0)
{
	u64 lpj;

	offer_all();
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hvprobe"), NULL, 250, &lpj)), "cmdline",
		      "lpj= first");
	report_eq(lpj, 1234567, "with its value exactly");
	rate_cmdline.lpj = 0;
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hvprobe"), NULL, 250, &lpj)), "hyperv",
		      "then Hyper-V's frequency MSR");
	report_eq(lpj, 9600000, "2.4 GHz at HZ=250");
	hyperv_rate.tsc_hz = 0;
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hvprobe"), NULL, 250, &lpj)), "kvmclock",
		      "then kvmclock");
	report_eq(lpj, 10000000, "2.5 GHz at HZ=250");
	kvmclock_rate.tsc_hz = 0;
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hvprobe"), NULL, 250, &lpj)), "kvm",
		      "then the KVM timing leaf");
	report_eq(lpj, 10400000, "2.6 GHz at HZ=250");
	kvm_timing_rate.tsc_hz = 0;
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hvprobe"), NULL, 250, &lpj)), "none",
		      "CPUID.15H is no preset under auto (it feeds lpj_fine)");
	report_eq(lpj, 0, "and gives no value");

	offer_all();
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hvprobe"), rate_source_named("cpuid"),
					 250, &lpj)),
		      "cpuid", "lpj_source=cpuid takes CPUID.15H even with others offered");
	report_eq(lpj, 10800000, "2.7 GHz at HZ=250");
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hvprobe"), rate_source_named("kvmclock"),
					 1000, &lpj)),
		      "kvmclock", "lpj_source=kvmclock at HZ=1000");
	report_eq(lpj, 2500000, "2.5 GHz at HZ=1000");
	hyperv_rate.tsc_hz = 0;
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hvprobe"), rate_source_named("hyperv"),
					 250, &lpj)),
		      "none", "a named source that offers nothing gives no preset");
	report_eq(lpj, 0, "and no value");
	report_str_eq(rate_absent(rate_source_named("hyperv")), "no Hyper-V leaves",
		      "and says why: its default when hv/ found no block");
	rate_offers_reset();
}

/* Hyper-V's block alone, stating its TSC rate. */
static void offer_hyperv_only(void)
{
	rate_offers_reset();
	hyperv_platform.present = true;
	hyperv_rate.tsc_hz = 2400000000ULL;
}

/* QEMU's Hyper-V enlightenments on KVM: both blocks, each stating rates. */
static void offer_kvm_and_hyperv(void)
{
	rate_offers_reset();
	hyperv_platform.present = true;
	kvm_platform.present = true;
	kvm_platform.detect = 0x40000100;
	hyperv_rate.tsc_hz = 2400000000ULL;
	kvmclock_rate.tsc_hz = 2500000000ULL;
	kvm_timing_rate.tsc_hz = 2600000000ULL;
}

/* Which block Linux takes as the platform when both are offered. */
static void linux_platform_choice(void)
{
	offer_kvm_and_hyperv();
	report(rate_linux_platform() == &kvm_platform,
	       "both blocks: KVM's base 0x40000100 outranks Hyper-V's");
	offer_hyperv_only();
	report(rate_linux_platform() == &hyperv_platform, "Hyper-V alone");
	rate_offers_reset();
	report(!rate_linux_platform(), "neither");
}

/* Hyper-V's presets: its frequency MSR only under hv-preset and hvprobe. */
static void presets_on_hyperv(void)
{
	u64 lpj;

	offer_hyperv_only();
	report_str_eq(name_of(lpj_preset(lpj_policy_named("linux-6.5"), NULL, 250, &lpj)), "none",
		      "linux-6.5 on Hyper-V: no preset from its frequency MSR");
	report_eq(lpj, 0, "and no value");
	report_str_eq(name_of(lpj_preset(lpj_policy_named("linux-6.1"), NULL, 250, &lpj)), "none",
		      "linux-6.1 on Hyper-V: none either");
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hv-preset"), NULL, 250, &lpj)), "hyperv",
		      "hv-preset on Hyper-V: the thread's hv_preset_lpj()");
	report_eq(lpj, 9600000, "2.4 GHz at HZ=250");
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hvprobe"), NULL, 250, &lpj)), "hyperv",
		      "hvprobe's: Hyper-V's MSR, the fastest");
	/*
	 * The patch's hv_preset_lpj() asks x86_platform.calibrate_tsc, which
	 * without Hyper-V's frequency MSRs is still native_calibrate_tsc():
	 * CPUID.15H's rate (its !calibrate_tsc guard never fires).
	 */
	hyperv_rate.tsc_hz = 0;
	rate_cpuid.tsc_hz = 2000000000ULL;
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hv-preset"), NULL, 250, &lpj)), "cpuid",
		      "hv-preset on Hyper-V without frequency MSRs: CPUID.15H, the native hook");
	report_eq(lpj, 8000000, "2.0 GHz at HZ=250");
	report_str_eq(name_of(lpj_preset(lpj_policy_named("linux-6.1"), NULL, 250, &lpj)), "none",
		      "linux-6.1 there: CPUID.15H is no preset");
	rate_offers_reset();
	rate_cpuid.tsc_hz = 2000000000ULL;
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hv-preset"), NULL, 250, &lpj)), "none",
		      "hv-preset off Hyper-V: no hv_preset_lpj(), so no CPUID.15H preset");
	offer_kvm_and_hyperv();
	hyperv_rate.tsc_hz = kvmclock_rate.tsc_hz = 0;
	rate_cpuid.tsc_hz = 2000000000ULL;
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hv-preset"), NULL, 250, &lpj)), "none",
		      "hv-preset with KVM the platform: Hyper-V's code, and the patch, never run");
	offer_hyperv_only();
}

/* KVM the platform: kvmclock, never the timing leaf. */
static void presets_on_kvm(void)
{
	u64 lpj;

	offer_kvm_and_hyperv();
	report_str_eq(name_of(lpj_preset(lpj_policy_named("linux-6.5"), NULL, 250, &lpj)),
		      "kvmclock", "linux-6.5 on KVM with Hyper-V's leaves: kvmclock");
	report_eq(lpj, 10000000, "2.5 GHz at HZ=250");
	report_str_eq(name_of(lpj_preset(lpj_policy_named("linux-6.12"), NULL, 250, &lpj)),
		      "kvmclock", "linux-6.12 there too");
	report_str_eq(name_of(lpj_preset(lpj_policy_named("hv-preset"), NULL, 250, &lpj)),
		      "kvmclock",
		      "hv-preset there too: KVM is the platform, Hyper-V's code never runs");
	rate_offers_reset();
	kvm_platform.present = true;
	kvm_timing_rate.tsc_hz = 2600000000ULL;
	report_str_eq(name_of(lpj_preset(lpj_policy_named("linux-6.1"), NULL, 250, &lpj)), "none",
		      "linux-6.1: KVM's timing leaf is never a preset");
}

/* lpj= and a source named on the command line come first. */
static void presets_from_cmdline(void)
{
	u64 lpj;

	offer_kvm_and_hyperv();
	rate_cmdline.lpj = 1234567;
	report_str_eq(name_of(lpj_preset(lpj_policy_named("linux-6.1"), NULL, 250, &lpj)),
		      "cmdline", "linux-6.1: lpj= first");
	report_str_eq(name_of(lpj_preset(lpj_policy_named("linux-6.5"), rate_source_named("hyperv"),
					 250, &lpj)),
		      "hyperv", "a source named on the command line is taken under any policy");
	rate_offers_reset();
}

DEFINE_TEST(unit_hv_lpj_preset_linux, "lpj presets under Linux's policies: lpj= and kvmclock only",
	    0)
{
	linux_platform_choice();
	presets_on_hyperv();
	presets_on_kvm();
	presets_from_cmdline();
}

static bool write_ok(void)
{
	return true;
}

static bool write_faults(void)
{
	return false;
}

static bool tsc_reliable;

/*
 * What Linux's platform code did to the TSC under policy: its line,
 * *unstable, and tsc_reliable.
 */
static const char *platform_tsc(const struct lpj_policy *policy, bool *unstable)
{
	const struct rate_platform *p = lpj_platform_tsc(policy);

	*unstable = tsc_reliable = false;
	return p ? p->tsc_init(unstable, &tsc_reliable) : "nothing";
}

DEFINE_TEST(unit_hv_tsc_invariant, "Hyper-V's TSC-invariant control under each policy", 0)
{
	bool unstable;

	offer_hyperv_only();
	hyperv_tsc_control = (struct hyperv_tsc_control){ .access = true, .expose = write_ok };
	report_str_eq(platform_tsc(lpj_policy_named("linux-6.5"), &unstable),
		      "HV_X64_MSR_TSC_INVARIANT_CONTROL: invariant TSC exposed",
		      "Hyper-V with HV_ACCESS_TSC_INVARIANT: expose");
	report(!unstable, "and the TSC stays stable");
	report(tsc_reliable, "and reliable (X86_FEATURE_TSC_RELIABLE)");
	hyperv_tsc_control.access = false;
	report_str_eq(platform_tsc(lpj_policy_named("linux-6.1"), &unstable),
		      "running on Hyper-V: TSC marked unstable",
		      "Hyper-V without it: mark_tsc_unstable(\"running on Hyper-V\")");
	report(unstable, "which marks it unstable");
	report(!tsc_reliable, "and not reliable");
	report_str_eq(platform_tsc(lpj_policy_named("hv-preset"), &unstable),
		      "running on Hyper-V: TSC marked unstable",
		      "hv-preset: the same platform code");
	hyperv_tsc_control = (struct hyperv_tsc_control){ .access = true, .expose = write_faults };
	/*
	 * ms_hyperv_init_platform() (mshyperv.c v6.1 to v6.12) writes with a
	 * plain wrmsrl(), whose fault is only warned about, and forces
	 * X86_FEATURE_TSC_RELIABLE whatever the write did.
	 */
	report_str_eq(
		platform_tsc(lpj_policy_named("linux-6.5"), &unstable),
		"HV_X64_MSR_TSC_INVARIANT_CONTROL: the write faulted, TSC reliable all the same",
		"a faulting write: reliable, as Linux forces it");
	report(!unstable, "a faulting write leaves the TSC stable");
	report(tsc_reliable, "a faulting write still sets X86_FEATURE_TSC_RELIABLE");
	offer_kvm_and_hyperv();
	report_str_eq(platform_tsc(lpj_policy_named("linux-6.5"), &unstable), "nothing",
		      "KVM with Hyper-V's leaves: KVM's platform code, not Hyper-V's");
	offer_hyperv_only();
	report_str_eq(platform_tsc(lpj_policy_named("hvprobe"), &unstable), "nothing",
		      "hvprobe's policy leaves the TSC alone");
	hyperv_tsc_control = (struct hyperv_tsc_control){ 0 };
	rate_offers_reset();
}

DEFINE_TEST(unit_kvm_system_time_msr, "kvmclock through the MSR Linux's kvmclock_init() picks", 0)
{
	report_eq(kvm_system_time_msr(BIT(KVM_FEATURE_CLOCKSOURCE2) | BIT(KVM_FEATURE_CLOCKSOURCE)),
		  MSR_KVM_SYSTEM_TIME_NEW, "CLOCKSOURCE2: the new MSR");
	report_eq(kvm_system_time_msr(BIT(KVM_FEATURE_CLOCKSOURCE)), MSR_KVM_SYSTEM_TIME,
		  "legacy CLOCKSOURCE alone: the legacy MSR, still a kvmclock and a preset");
	report_eq(kvm_system_time_msr(0), 0, "neither: no kvmclock");
}

/* Hyper-V's leaves with vendor at 0x40000000, Hv#1 and the features EAX given. */
static void hyperv_leaves(const char *vendor, u32 max, u32 features)
{
	add(0x40000000, max, vendor);
	add(0x40000001, HV_INTERFACE_HV1, NULL);
	add(0x40000003, features, NULL);
}

/* The platform Linux's detect_hypervisor_vendor() keeps, by name; "none" for none. */
static const char *linux_platform(bool present, u32 *detect)
{
	enum hv_kind k = hv_linux_platform(present, fake_leaf, detect);

	return k == HV_KIND_COUNT ? "none" : hv_kind_names[k];
}

DEFINE_TEST(unit_hv_linux_platform, "the platform Linux picks, whatever vendor is at 0x40000000", 0)
{
	const u32 mandatory = HV_MSR_HYPERCALL_AVAILABLE | HV_MSR_VP_INDEX_AVAILABLE;
	struct hv_info info;
	u32 detect;

	/* -cpu host,hv-passthrough: KVM's own Hyper-V vendor, KVM behind it. */
	fake_count = 0;
	hyperv_leaves("Linux KVM Hv", 0x4000000b, mandatory);
	add(0x40000100, 0x40000101, "KVMKVMKVM\0\0\0");
	report_str_eq(linux_platform(true, &detect), "kvm", "Linux KVM Hv: passed over, KVM found");
	report_eq(detect, 0x40000100, "kvm_cpuid_base() in the next block");
	hv_scan(&info, true, fake_leaf);
	report_str_eq(info.blocks[0].signature, "Linux KVM Hv", "the vendor string is kept");
	report_str_eq(hv_kind_names[info.linux_platform], "kvm", "hv_scan() records Linux's pick");

	/* QEMU's hv-* enlightenments: Microsoft Hv, and KVM outranks it. */
	fake_count = 0;
	hyperv_leaves("Microsoft Hv", 0x4000000a, mandatory);
	report_str_eq(linux_platform(true, &detect), "hyperv", "Microsoft Hv alone (kvm=off)");
	report_eq(detect, 0x40000000, "ms_hyperv_platform() answers 0x40000000");
	add(0x40000100, 0x40000101, "KVMKVMKVM\0\0\0");
	report_str_eq(linux_platform(true, &detect), "kvm",
		      "with KVM's leaves: KVM's 0x40000100 wins");

	fake_count = 0;
	hyperv_leaves("Microsoft Hv", 0x40000004, mandatory);
	report_str_eq(linux_platform(true, &detect), "none",
		      "a max leaf below HYPERV_CPUID_MIN: not Hyper-V");
	fake_count = 0;
	hyperv_leaves("Microsoft Hv", 0x4000000a, HV_MSR_HYPERCALL_AVAILABLE);
	report_str_eq(linux_platform(true, &detect), "none", "no VP index MSR: not Hyper-V");
	fake_count = 0;
	hyperv_leaves("Microsoft Hv", 0x4000000a, HV_MSR_VP_INDEX_AVAILABLE);
	report_str_eq(linux_platform(true, &detect), "none", "no hypercall MSR: not Hyper-V");

	/* hypervisor_cpuid_base(sig, 0) asks nothing of the max leaf. */
	fake_count = 0;
	add(0x40000000, 0, "KVMKVMKVM\0\0\0");
	report_str_eq(linux_platform(true, &detect), "kvm", "KVM with max leaf 0: still KVM");
	report_str_eq(linux_platform(false, &detect), "none", "no hypervisor bit: none");
	fake_count = 0;
	add(0x40000000, 0x40000001, "SomethingNew");
	report_str_eq(linux_platform(true, &detect), "none", "an unknown vendor alone: none");
}
