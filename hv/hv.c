// SPDX-License-Identifier: MIT
/* Hypervisor detection; see hv.h. */
#include "hv/hv.h"
#include "hv/hyperv.h"
#include "kernel/lib/string.h"

const char *const hv_kind_names[] = {
	[HV_KIND_HYPERV] = "hyperv", [HV_KIND_KVM] = "kvm", [HV_KIND_TCG] = "tcg",
	[HV_KIND_VMWARE] = "vmware", [HV_KIND_XEN] = "xen", [HV_KIND_UNKNOWN] = "unknown",
};
_Static_assert(ARRAY_SIZE(hv_kind_names) == HV_KIND_COUNT, "hv_kind_names");

struct hv_info hv;

static const struct {
	char signature[13];
	enum hv_kind kind;
} signatures[] = {
	{ "Microsoft Hv", HV_KIND_HYPERV },
	/* KVM pads its "KVMKVMKVM" with NULs to 12 bytes. */
	{ "KVMKVMKVM\0\0\0", HV_KIND_KVM },
	{ "TCGTCGTCGTCG", HV_KIND_TCG },
	{ "VMwareVMware", HV_KIND_VMWARE },
	{ "XenVMMXenVMM", HV_KIND_XEN },
};

/* Whether a leaf's EBX, ECX, EDX spell the 12-byte signature. */
static bool signed_as(struct cpuid_regs r, const char *signature)
{
	char sig[12];

	memcpy(sig, &r.ebx, 4);
	memcpy(sig + 4, &r.ecx, 4);
	memcpy(sig + 8, &r.edx, 4);
	return !memcmp(sig, signature, 12);
}

/* A block's kind from its signature registers. */
static enum hv_kind hv_kind_of(struct cpuid_regs r)
{
	for (u32 i = 0; i < ARRAY_SIZE(signatures); i++)
		if (signed_as(r, signatures[i].signature))
			return signatures[i].kind;
	return HV_KIND_UNKNOWN;
}

/* The signature table's entry for kind. */
static const char *signature_of(enum hv_kind kind)
{
	for (u32 i = 0; i < ARRAY_SIZE(signatures); i++)
		if (signatures[i].kind == kind)
			return signatures[i].signature;
	return NULL;
}

/*
 * ms_hyperv_platform() (mshyperv.c v6.1 to v6.12): "Microsoft Hv" at
 * 0x40000000 with a max leaf from HYPERV_CPUID_MIN (0x40000005) to
 * HYPERV_CPUID_MAX (0x4000ffff), and the hypercall and VP index MSRs,
 * "mandatory for all features"; any other vendor there (KVM's own
 * "Linux KVM Hv" under hv-passthrough) is passed over, not an error.
 */
static u32 hyperv_detect(struct cpuid_regs (*leaf)(u32 leaf))
{
	const u32 needed = HV_MSR_HYPERCALL_AVAILABLE | HV_MSR_VP_INDEX_AVAILABLE;
	struct cpuid_regs r = leaf(HV_LEAF_FIRST);

	if (!signed_as(r, signature_of(HV_KIND_HYPERV)) ||
	    r.eax < HV_LEAF_FIRST + HV_CPUID_IMPLEMENT_LIMITS || r.eax > HV_LEAF_LAST + 0xff)
		return 0;
	if ((leaf(HV_LEAF_FIRST + HV_CPUID_FEATURES).eax & needed) != needed)
		return 0;
	return HV_LEAF_FIRST;
}

/*
 * kvm_detect() answers kvm_cpuid_base() (kvm_para.h v6.1 to v6.12):
 * hypervisor_cpuid_base("KVMKVMKVM\0\0\0", 0), the first block of the
 * 0x100 steps that carries KVM's signature, whatever its max leaf says.
 */
static u32 kvm_detect(struct cpuid_regs (*leaf)(u32 leaf))
{
	for (u32 base = HV_LEAF_FIRST; base <= HV_LEAF_LAST; base += HV_LEAF_STEP)
		if (signed_as(leaf(base), signature_of(HV_KIND_KVM)))
			return base;
	return 0;
}

u32 hv_linux_detect(enum hv_kind kind, bool present, struct cpuid_regs (*leaf)(u32 leaf))
{
	if (!present)
		return 0;
	switch (kind) {
	case HV_KIND_HYPERV: return hyperv_detect(leaf);
	case HV_KIND_KVM: return kvm_detect(leaf);
	default: return 0;
	}
}

/* detect_hypervisor_vendor(), hypervisor.c v6.1 to v6.12: pri > max_pri keeps the highest. */
enum hv_kind hv_linux_platform(bool present, struct cpuid_regs (*leaf)(u32 leaf), u32 *detect)
{
	const enum hv_kind kinds[] = { HV_KIND_HYPERV, HV_KIND_KVM };
	enum hv_kind best = HV_KIND_COUNT;

	*detect = 0;
	for (u32 i = 0; i < ARRAY_SIZE(kinds); i++) {
		u32 d = hv_linux_detect(kinds[i], present, leaf);

		if (d > *detect) {
			*detect = d;
			best = kinds[i];
		}
	}
	return best;
}

void hv_scan(struct hv_info *info, bool present, struct cpuid_regs (*leaf)(u32 leaf))
{
	memset(info, 0, sizeof(*info));
	info->present = present;
	info->linux_platform = HV_KIND_COUNT;
	if (!present)
		return;
	for (u32 base = HV_LEAF_FIRST; base <= HV_LEAF_LAST && info->count < HV_MAX_BLOCKS;
	     base += HV_LEAF_STEP) {
		struct cpuid_regs r = leaf(base);
		struct hv_block *b = &info->blocks[info->count];
		enum hv_kind kind = hv_kind_of(r);

		/* A block's max leaf lies within the block: else nothing is here. */
		if (r.eax < base || r.eax >= base + HV_LEAF_STEP)
			continue;
		if (kind == HV_KIND_UNKNOWN && !r.ebx && !r.ecx && !r.edx)
			continue;
		if (kind == HV_KIND_HYPERV &&
		    leaf(base + HV_CPUID_INTERFACE).eax != HV_INTERFACE_HV1)
			kind = HV_KIND_UNKNOWN;
		*b = (struct hv_block){ .base = base, .max_leaf = r.eax, .kind = kind };
		memcpy(b->signature, &r.ebx, 4);
		memcpy(b->signature + 4, &r.ecx, 4);
		memcpy(b->signature + 8, &r.edx, 4);
		for (u32 i = 0; i < 12; i++)
			if ((u8)b->signature[i] < 0x20 || (u8)b->signature[i] > 0x7e)
				b->signature[i] = '\0';
		info->count++;
	}
	info->linux_platform = hv_linux_platform(present, leaf, &info->linux_detect);
}

const struct hv_block *hv_find(const struct hv_info *info, enum hv_kind kind)
{
	for (u32 i = 0; i < info->count; i++)
		if (info->blocks[i].kind == kind)
			return &info->blocks[i];
	return NULL;
}
