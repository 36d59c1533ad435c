// SPDX-License-Identifier: MIT
/*
 * cpuinfo: what the CPU and hypervisor say they are.
 *
 * Every figure hvprobe reports is only comparable with others from the
 * same CPU model and hypervisor, so each run records the vendor,
 * family/model/stepping, brand string, the basic and extended maximum
 * leaves and the hypervisor signature (CPUID.1:ECX[31] and leaf
 * 0x40000000; TCG says "TCGTCGTCGTCG", KVM "KVMKVMKVM"). The checks are
 * the invariants these leaves promise on any x86-64 CPU.
 */
#include "kernel/lib/json.h"
#include "kernel/lib/string.h"
#include "kernel/test/test.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/x86.h"

static void regs_to_string(char *out, u32 a, u32 b, u32 c)
{
	memcpy(out, &a, 4);
	memcpy(out + 4, &b, 4);
	memcpy(out + 8, &c, 4);
	out[12] = '\0';
}

DEFINE_TEST(cpuinfo, "CPU and hypervisor identification", 0)
{
	struct cpuid_regs r = cpuid(CPUID_LEAF_VENDOR);
	u32 max_basic = r.eax, max_ext = cpuid_max_leaf(CPUID_LEAF_EXT_MAX), max_hv = 0;
	char vendor[13], hv[13] = "", brand[49] = "", buf[512];
	bool has_hv = cpu_has(X86_FEATURE_HYPERVISOR);
	struct cpu_signature sig = cpu_signature();
	struct json j;

	cpu_vendor(vendor);
	if (has_hv) {
		r = cpuid(CPUID_LEAF_HYPERVISOR);
		max_hv = r.eax;
		regs_to_string(hv, r.ebx, r.ecx, r.edx);
	}
	if (max_ext >= CPUID_LEAF_BRAND0 + 2) {
		for (u32 i = 0; i < 3; i++) {
			r = cpuid(CPUID_LEAF_BRAND0 + i);
			memcpy(brand + 16 * i, &r, 16);
		}
		brand[48] = '\0';
	}

	report(max_basic >= CPUID_LEAF_FEATURES, "basic leaves reach the feature leaf (max 0x%x)",
	       max_basic);
	report(max_ext >= CPUID_LEAF_EXT_FEATURES, "extended leaves reach 0x80000001 (max 0x%x)",
	       max_ext);
	report(cpu_has(X86_FEATURE_LM), "long mode is enumerated");
	report(cpu_has(X86_FEATURE_TSC) && cpu_has(X86_FEATURE_MSR) && cpu_has(X86_FEATURE_APIC),
	       "TSC, MSR and APIC are enumerated");
	report_prefix_push("hypervisor");
	if (has_hv)
		report(max_hv >= CPUID_LEAF_HYPERVISOR, "signature \"%s\", max leaf 0x%x", hv,
		       max_hv);
	else
		report_skip("CPUID.1:ECX[31] clear: no hypervisor (bare metal?)");
	report_prefix_pop();

	report_data_begin(&j, buf, "cpuinfo");
	json_string(&j, "vendor", vendor);
	json_string(&j, "brand", brand);
	json_u64(&j, "family", sig.family);
	json_u64(&j, "model", sig.model);
	json_u64(&j, "stepping", sig.stepping);
	json_hex(&j, "max_leaf", max_basic);
	json_hex(&j, "max_ext_leaf", max_ext);
	json_string(&j, "hypervisor", has_hv ? hv : "none");
	json_hex(&j, "max_hv_leaf", max_hv);
	json_bool(&j, "x2apic", cpu_has(X86_FEATURE_X2APIC));
	json_bool(&j, "invariant_tsc", cpu_has(X86_FEATURE_INVTSC));
	report_data_end(&j);
}
