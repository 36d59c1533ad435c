// SPDX-License-Identifier: MIT
/*
 * hv: which hypervisor this is, and whether the clocks it offers agree.
 *
 * The preset-lpj half of experiment 1 depends on the hypervisor telling
 * the guest its TSC frequency: Hyper-V through HV_X64_MSR_TSC_FREQUENCY
 * and the reference TSC page, KVM through kvmclock and the timing leaf.
 * A pass means the platform Linux would pick from the leaves (its
 * detect_hypervisor_vendor()) is the one Linux's policies follow (each
 * block is listed with its vendor string, and one hvprobe does not know
 * is no failure, as it is none to Linux), every MSR read was one its
 * privilege bit grants, the reference counter and kvmclock move forward,
 * and every stated TSC frequency agrees with every other within 0.1 %
 * (they describe the same TSC) and with the one measured against the
 * reference timer within 1 %. Interfaces that are
 * not there are SKIPs that name what is missing.
 */
#include "hv/hv.h"
#include "hv/hyperv.h"
#include "hv/kvm.h"
#include "kernel/lib/json.h"
#include "kernel/lib/stats.h"
#include "kernel/test/test.h"
#include "kernel/time/clock.h"
#include "kernel/time/rates.h"

#define STATED_AGREEMENT_PERMILLE 1
#define MEASURED_AGREEMENT_PCT 1
#define WINDOW_US 25000

struct freq {
	const char *name;
	u64 hz;
};

/*
 * A vendor string hvprobe does not know is no failure: Linux passes it
 * over too (ms_hyperv_platform() takes only "Microsoft Hv") and goes on
 * to the next block. What is judged is the platform Linux would pick,
 * from its own detect() rules, against the one hvprobe's Linux policies
 * run the platform code of.
 */
static void detection(void)
{
	const struct rate_platform *p = rate_linux_platform();
	const char *linux_pick =
		hv.linux_platform < HV_KIND_COUNT ? hv_kind_names[hv.linux_platform] : "none";

	report_prefix_push("detect");
	if (!hv.present) {
		report_skip("CPUID.1:ECX[31] clear: no hypervisor");
	} else {
		for (u32 i = 0; i < hv.count; i++)
			report_info("leaves at 0x%x: vendor \"%s\" (%s), max 0x%x",
				    hv.blocks[i].base, hv.blocks[i].signature,
				    hv_kind_names[hv.blocks[i].kind], hv.blocks[i].max_leaf);
		report_str_eq(p ? p->name : "none", linux_pick,
			      "the platform Linux picks is the one the Linux policies follow");
	}
	report_prefix_pop();
}

static const char *first_block_name(void)
{
	return hv.count ? hv.blocks[0].signature : "none";
}

static void hyperv_checks(void)
{
	bool granted = (hyperv.privileges_low & HV_ACCESS_FREQUENCY_MSRS) &&
		       (hyperv.features & HV_FEATURE_FREQUENCY_MSRS_AVAILABLE);

	report_prefix_push("hyperv");
	if (!hyperv.present) {
		report_skip("no Hyper-V leaves (the first block is \"%s\")", first_block_name());
		report_prefix_pop();
		return;
	}
	if (hyperv.problems[0])
		report_info("%s", hyperv.problems);
	report_eq(hyperv.interface, HV_INTERFACE_HV1, "interface signature is Hv#1");
	report(granted || (!hyperv.tsc_hz && !hyperv.apic_hz),
	       "frequency MSRs are read only when EAX[11] and EDX[8] grant them");
	if (granted)
		report(hyperv.tsc_hz && hyperv.apic_hz,
		       "frequency MSRs give %llu Hz TSC, %llu Hz APIC", hyperv.tsc_hz,
		       hyperv.apic_hz);
	if (hyperv.ref_counter || hyperv.tsc_page) {
		u64 a = hyperv_ref_time(), b = hyperv_ref_time();

		report(b >= a && a > 0, "the reference counter moves forward (%llu, %llu)", a, b);
	} else {
		report_skip("no reference counter granted (EAX[1])");
	}
	report_prefix_pop();
}

static void kvm_checks(void)
{
	report_prefix_push("kvm");
	if (!kvm.present) {
		report_skip("no KVM leaves (the first block is \"%s\")", first_block_name());
		report_prefix_pop();
		return;
	}
	if (kvm.problems[0])
		report_info("%s", kvm.problems);
	if (kvm_system_time_msr(kvm.features)) {
		u64 a = kvm_clock_ns(), b = kvm_clock_ns();

		report(kvm.kvmclock, "kvmclock is enabled (tsc_khz %llu)", kvm.kvmclock_tsc_khz);
		report(b >= a && a > 0, "kvmclock moves forward (%llu, %llu ns)", a, b);
	} else {
		report_skip("no kvmclock (KVM_FEATURE_CLOCKSOURCE2 and CLOCKSOURCE clear)");
	}
	if (!kvm.timing_leaf)
		report_info("no timing leaf at 0x%x (QEMU adds it with +invtsc or tsc-frequency=)",
			    kvm.base + KVM_CPUID_TIMING);
	report_prefix_pop();
}

/* Every stated frequency, and the pairs that must agree. */
static u32 stated(struct freq *f)
{
	u32 n = 0;

	if (hyperv.tsc_hz)
		f[n++] = (struct freq){ "hyperv-msr", hyperv.tsc_hz };
	if (hyperv.tsc_hz_from_page)
		f[n++] = (struct freq){ "hyperv-tsc-page", hyperv.tsc_hz_from_page };
	if (kvm.kvmclock && kvm.kvmclock_tsc_khz)
		f[n++] = (struct freq){ "kvmclock", kvm.kvmclock_tsc_khz * 1000 };
	if (kvm.timing_leaf && kvm.timing_tsc_khz)
		f[n++] = (struct freq){ "kvm-timing-leaf", (u64)kvm.timing_tsc_khz * 1000 };
	if (clock_tsc_hz_cpuid())
		f[n++] = (struct freq){ "cpuid-0x15", clock_tsc_hz_cpuid() };
	return n;
}

DEFINE_TEST(hv, "the hypervisor is recognised and its clocks agree", 0)
{
	struct freq f[5];
	u32 n = stated(f);
	struct tsc_measurement m = { 0 };
	char buf[2048];
	struct json j;

	if (clock_have_ref())
		m = clock_measure_tsc_median(clock_reference(), WINDOW_US);
	detection();
	hyperv_checks();
	kvm_checks();

	report_prefix_push("frequencies");
	if (!n)
		report_skip("the platform states no TSC frequency (no Hyper-V MSR, kvmclock, "
			    "timing leaf or CPUID.15H)");
	for (u32 a = 0; a < n; a++)
		for (u32 b = a + 1; b < n; b++)
			report(within_permille(f[a].hz, f[b].hz, STATED_AGREEMENT_PERMILLE),
			       "%s and %s agree within 0.1 %% (%llu vs %llu Hz)", f[a].name,
			       f[b].name, f[a].hz, f[b].hz);
	for (u32 a = 0; a < n && m.hz; a++)
		report(within_pct(f[a].hz, m.hz, MEASURED_AGREEMENT_PCT),
		       "%s agrees with the %s-measured TSC within 1 %% (%llu vs %llu Hz; "
		       "%llu ms window, ends within %llu ppm)",
		       f[a].name, clock_reference()->name, f[a].hz, m.hz, m.window_us / 1000,
		       m.uncertainty_ppm);
	report_prefix_pop();

	report_data_begin(&j, buf, "hv");
	hv_json(&j);
	clock_json(&j);
	json_u64(&j, "tsc_hz_measured", m.hz);
	json_u64(&j, "tsc_hz_measured_window_us", m.window_us);
	json_u64(&j, "tsc_hz_measured_uncertainty_ppm", m.uncertainty_ppm);
	report_data_end(&j);
}
