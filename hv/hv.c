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

/* A block's kind from its signature registers (EBX, ECX, EDX order). */
static enum hv_kind hv_kind_of(u32 ebx, u32 ecx, u32 edx)
{
	char sig[12];

	memcpy(sig, &ebx, 4);
	memcpy(sig + 4, &ecx, 4);
	memcpy(sig + 8, &edx, 4);
	for (u32 i = 0; i < ARRAY_SIZE(signatures); i++)
		if (!memcmp(sig, signatures[i].signature, 12))
			return signatures[i].kind;
	return HV_KIND_UNKNOWN;
}

void hv_scan(struct hv_info *info, bool present, struct cpuid_regs (*leaf)(u32 leaf))
{
	memset(info, 0, sizeof(*info));
	info->present = present;
	if (!present)
		return;
	for (u32 base = HV_LEAF_FIRST; base <= HV_LEAF_LAST && info->count < HV_MAX_BLOCKS;
	     base += HV_LEAF_STEP) {
		struct cpuid_regs r = leaf(base);
		struct hv_block *b = &info->blocks[info->count];
		enum hv_kind kind = hv_kind_of(r.ebx, r.ecx, r.edx);

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
}

const struct hv_block *hv_find(const struct hv_info *info, enum hv_kind kind)
{
	for (u32 i = 0; i < info->count; i++)
		if (info->blocks[i].kind == kind)
			return &info->blocks[i];
	return NULL;
}
