/* SPDX-License-Identifier: MIT */
/*
 * Which hypervisor, and what it offers. CPUID.1:ECX[31] says one is
 * present; its leaf blocks sit at 0x40000000..0x4000FF00 in steps of 0x100
 * (Linux scans them so), each opening with a max leaf and a 12-byte
 * signature. QEMU with Hyper-V enlightenments puts Hyper-V at 0x40000000
 * and KVM at 0x40000100: every recognised block is reported.
 */
#ifndef HV_HV_H
#define HV_HV_H

#include "kernel/lib/table.h"
#include "kernel/x86/x86.h"

#define HV_LEAF_FIRST 0x40000000
#define HV_LEAF_LAST 0x4000ff00
#define HV_LEAF_STEP 0x100
#define HV_MAX_BLOCKS 8

enum hv_kind {
	HV_KIND_HYPERV,
	HV_KIND_KVM,
	HV_KIND_TCG,
	HV_KIND_VMWARE,
	HV_KIND_XEN,
	HV_KIND_UNKNOWN,
	HV_KIND_COUNT,
};

extern const char *const hv_kind_names[HV_KIND_COUNT];

struct hv_block {
	u32 base;
	u32 max_leaf;
	char signature[13];
	enum hv_kind kind;
};

struct hv_info {
	bool present; /* CPUID.1:ECX[31] */
	struct hv_block blocks[HV_MAX_BLOCKS];
	u32 count;
	/* The platform Linux picks (HV_KIND_COUNT: none), and its detect() answer. */
	enum hv_kind linux_platform;
	u32 linux_detect;
};

extern struct hv_info hv;

/*
 * Scan the hypervisor leaves with leaf() (cpuid in the kernel, a table in
 * the host tests). Microsoft Hv counts as Hyper-V only with interface
 * "Hv#1" at base+1, as the TLFS and Linux require. Pure.
 */
void hv_scan(struct hv_info *info, bool present, struct cpuid_regs (*leaf)(u32 leaf));
/*
 * What Linux's detect() of kind's platform answers from these leaves, 0
 * where it finds none; Hyper-V and KVM only, the platforms hvprobe
 * drives. Pure.
 */
u32 hv_linux_detect(enum hv_kind kind, bool present, struct cpuid_regs (*leaf)(u32 leaf));
/*
 * Linux's x86_hyper: detect_hypervisor_vendor() keeps the platform whose
 * detect() answers highest; HV_KIND_COUNT for none, *detect its answer.
 */
enum hv_kind hv_linux_platform(bool present, struct cpuid_regs (*leaf)(u32 leaf), u32 *detect);
/* The first block of a kind, or NULL. */
const struct hv_block *hv_find(const struct hv_info *info, enum hv_kind kind);

struct json;

/*
 * An interface hvprobe drives, on the first block of its kind: one line
 * in the file that drives it,
 *
 *	DEFINE_HV_INTERFACE(HV_KIND_KVM, kvm_start, kvm_json);
 *
 * start(base) reads the block at base and fills what the interface
 * states in the table of stated rates (kernel/time/rates.h); json(j)
 * writes the interface's object into the hv DATA. The signature that
 * makes a block of a kind stays in hv_scan()'s table, its one home. One
 * interface per kind; they start, and appear in the DATA, in the
 * order of enum hv_kind.
 */
struct hv_interface {
	enum hv_kind kind;
	void (*start)(u32 base);
	void (*json)(struct json *j);
};

#define DEFINE_HV_INTERFACE(ikind, istart, ijson)                                                  \
	static const struct hv_interface TABLE_UNIQUE(hv_interface_)                               \
		TABLE_ENTRY(hvprobe_hv_interfaces) = {                                             \
			.kind = (ikind),                                                           \
			.start = (istart),                                                         \
			.json = (ijson),                                                           \
		}

/*
 * Detect on this CPU and start every interface whose block is found;
 * what they state about clocks goes to the table of stated rates.
 */
void hv_init(void);
/* The hv DATA: every leaf block, and the object of each interface started. */
void hv_json(struct json *j);

#endif
