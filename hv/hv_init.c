// SPDX-License-Identifier: MIT
/* Detection on the running CPU, the interfaces it finds, and what they offer. */
#include "hv/hv.h"
#include "hv/hyperv.h"
#include "hv/kvm.h"
#include "kernel/lib/json.h"
#include "kernel/time/rates.h"
#include "kernel/x86/cpuid.h"

static struct cpuid_regs leaf(u32 l)
{
	return cpuid(l);
}

/* What the clocks may take as stated instead of measuring (kernel/time/rates.h). */
static void offer_rates(void)
{
	if (hyperv.present) {
		hyperv_platform.present = true;
		hyperv_rate = (struct rate_offer){
			.tsc_hz = hyperv.tsc_hz,
			.apic_hz = hyperv.apic_hz,
			.absent = "Hyper-V grants no frequency MSRs (CPUID 0x40000003 EAX[11] and "
				  "EDX[8])",
		};
		hyperv_tsc_control = (struct hyperv_tsc_control){
			.access = hyperv.privileges_low & HV_ACCESS_TSC_INVARIANT,
			.expose = hyperv_expose_invariant_tsc,
		};
	}
	if (kvm.present) {
		kvm_platform.present = true;
		kvm_platform.detect = kvm.base;
		kvmclock_rate = (struct rate_offer){
			.tsc_hz = kvm.kvmclock ? kvm.kvmclock_tsc_khz * 1000 : 0,
			.absent =
				"kvmclock not available (KVM_FEATURE_CLOCKSOURCE2 and CLOCKSOURCE "
				"clear)",
		};
		kvm_timing_rate = (struct rate_offer){
			.tsc_hz = kvm.timing_leaf ? (u64)kvm.timing_tsc_khz * 1000 : 0,
			.apic_hz = kvm.timing_leaf ? (u64)kvm.timing_apic_khz * 1000 : 0,
			.absent = "no KVM timing leaf (base + 0x10)",
		};
	}
}

void hv_init(void)
{
	const struct hv_block *b;

	hv_scan(&hv, cpu_has(X86_FEATURE_HYPERVISOR), leaf);
	b = hv_find(&hv, HV_KIND_HYPERV);
	if (b)
		hyperv_init(b->base);
	b = hv_find(&hv, HV_KIND_KVM);
	if (b)
		kvm_init(b->base);
	offer_rates();
}

void hv_json(struct json *j)
{
	json_bool(j, "hypervisor_bit", hv.present);
	json_array_begin(j, "blocks");
	for (u32 i = 0; i < hv.count; i++) {
		json_object_begin(j, NULL);
		json_hex(j, "base", hv.blocks[i].base);
		json_hex(j, "max_leaf", hv.blocks[i].max_leaf);
		json_string(j, "signature", hv.blocks[i].signature);
		json_string(j, "kind", hv_kind_names[hv.blocks[i].kind]);
		json_object_end(j);
	}
	json_array_end(j);
	if (hyperv.present) {
		json_object_begin(j, "hyperv");
		json_hex(j, "privileges_low", hyperv.privileges_low);
		json_hex(j, "privileges_high", hyperv.privileges_high);
		json_hex(j, "features", hyperv.features);
		json_hex(j, "hints", hyperv.hints);
		json_bool(j, "guest_os_id_set", hyperv.guest_os_id_set);
		json_u64(j, "tsc_hz", hyperv.tsc_hz);
		json_u64(j, "apic_hz", hyperv.apic_hz);
		json_bool(j, "ref_counter", hyperv.ref_counter);
		json_bool(j, "tsc_page", hyperv.tsc_page);
		json_u64(j, "tsc_hz_from_page", hyperv.tsc_hz_from_page);
		json_object_end(j);
	}
	if (kvm.present) {
		json_object_begin(j, "kvm");
		json_hex(j, "base", kvm.base);
		json_hex(j, "features", kvm.features);
		json_bool(j, "kvmclock", kvm.kvmclock);
		json_u64(j, "kvmclock_tsc_khz", kvm.kvmclock_tsc_khz);
		json_bool(j, "timing_leaf", kvm.timing_leaf);
		json_u64(j, "timing_tsc_khz", kvm.timing_tsc_khz);
		json_u64(j, "timing_apic_khz", kvm.timing_apic_khz);
		json_object_end(j);
	}
}
