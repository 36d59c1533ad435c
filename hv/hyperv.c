// SPDX-License-Identifier: MIT
/*
 * Hyper-V as a guest (Hypervisor TLFS): the CPUID leaves ("Feature and
 * Interface Discovery"), the guest OS identity ("Reporting the Guest OS
 * Identity"), the frequency MSRs, the partition reference counter and the
 * reference TSC page ("Timers": "Partition Reference Counter MSR",
 * "Partition Reference TSC Mechanism"). Every MSR is touched only when the
 * privileges in leaf 0x40000003 grant it, and then through the _safe
 * accessors: a host that advertises a privilege it does not honour is
 * recorded in problems, not fatal.
 */
#include "hv/hyperv.h"
#include "hv/hv.h"
#include "kernel/lib/json.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/time/clock.h"
#include "kernel/time/rates.h"
#include "kernel/x86/alloc.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"

#define PAGE_SIZE 4096

/*
 * The hypervisor bumps the sequence each time it rewrites scale and offset
 * (on save/restore and live migration), so two consecutive changes during
 * one read are already unlikely; a sequence that keeps moving means a
 * broken page, and the caller falls back to the MSR.
 */
#define TSC_PAGE_TRIES 100

struct hyperv_state hyperv;

static struct hv_tsc_page *tsc_page;

/*
 * One consistent (scale, offset) pair, and the TSC read between the two
 * sequence reads when tsc is not NULL, in the order of the TLFS's
 * recommended code. False when the page says it is invalid (sequence 0:
 * older TLFS editions wrongly said 0xFFFFFFFF) or never settles.
 */
static bool tsc_page_read(u64 *scale, s64 *offset, u64 *tsc)
{
	for (u32 i = 0; i < TSC_PAGE_TRIES; i++) {
		u32 seq = tsc_page->sequence;

		if (!seq)
			return false;
		barrier();
		if (tsc)
			*tsc = rdtsc();
		*scale = tsc_page->scale;
		*offset = tsc_page->offset;
		barrier();
		if (tsc_page->sequence == seq)
			return true;
	}
	return false;
}

static void read_cpuid(u32 base)
{
	struct cpuid_regs r;

	if (hyperv.max_leaf >= base + HV_CPUID_VERSION) {
		r = cpuid(base + HV_CPUID_VERSION);
		hyperv.build = r.eax;
		hyperv.version = r.ebx;
		hyperv.service_pack = r.ecx;
		hyperv.service_branch = r.edx;
	}
	if (hyperv.max_leaf >= base + HV_CPUID_ENLIGHTENMENT_INFO)
		hyperv.hints = cpuid(base + HV_CPUID_ENLIGHTENMENT_INFO).eax;
	if (hyperv.max_leaf >= base + HV_CPUID_IMPLEMENT_LIMITS) {
		r = cpuid(base + HV_CPUID_IMPLEMENT_LIMITS);
		hyperv.max_vps = r.eax;
		hyperv.max_lps = r.ebx;
	}
	if (hyperv.max_leaf >= base + HV_CPUID_HARDWARE_FEATURES)
		hyperv.hw_features = cpuid(base + HV_CPUID_HARDWARE_FEATURES).eax;
}

/*
 * A nonzero guest OS ID is what enables the hypercall page, and (older
 * TLFS) leaf 0x40000002 reads zero until one is written. The MSR belongs
 * to AccessHypercallMsrs, privilege bit 5.
 */
static void write_guest_os_id(void)
{
	int v;

	if (!(hyperv.privileges_low & HV_MSR_HYPERCALL_AVAILABLE)) {
		note(hyperv.problems, "no AccessHypercallMsrs (EAX[5]): guest OS ID not written");
		return;
	}
	v = wrmsr_safe(HV_X64_MSR_GUEST_OS_ID, hv_guest_os_id());
	if (v)
		note(hyperv.problems, "guest OS ID write: vector %d", v);
	hyperv.guest_os_id_set = !v;
}

/*
 * Linux reads these only with both AccessFrequencyRegs (privilege 11) and
 * the "timer frequencies available" feature (EDX[8]); KVM's emulation
 * refuses the reads without the privilege, so hvprobe asks for both too.
 */
static void read_frequencies(void)
{
	u64 val;
	int v;

	if (!(hyperv.privileges_low & HV_ACCESS_FREQUENCY_MSRS) ||
	    !(hyperv.features & HV_FEATURE_FREQUENCY_MSRS_AVAILABLE))
		return;
	v = rdmsr_safe(HV_X64_MSR_TSC_FREQUENCY, &val);
	if (v)
		note(hyperv.problems, "TSC frequency MSR: vector %d", v);
	else
		hyperv.tsc_hz = val;
	v = rdmsr_safe(HV_X64_MSR_APIC_FREQUENCY, &val);
	if (v)
		note(hyperv.problems, "APIC frequency MSR: vector %d", v);
	else
		hyperv.apic_hz = val;
}

static void probe_ref_counter(void)
{
	u64 val;
	int v;

	if (!(hyperv.privileges_low & HV_MSR_TIME_REF_COUNT_AVAILABLE))
		return;
	v = rdmsr_safe(HV_X64_MSR_TIME_REF_COUNT, &val);
	if (v)
		note(hyperv.problems, "reference counter MSR: vector %d", v);
	hyperv.ref_counter = !v;
}

/*
 * The page is an overlay: the hypervisor maps its own page over the GPA
 * the MSR names (bits 63:12) once bit 0 is set; bits 11:1 are RsvdP, kept
 * as read. Memory from boot_alloc is identity-mapped, so its address is
 * its GPA.
 */
static void enable_tsc_page(void)
{
	u64 msr, want, phys, scale;
	s64 offset;
	int v;

	if (!(hyperv.privileges_low & HV_MSR_REFERENCE_TSC_AVAILABLE))
		return;
	v = rdmsr_safe(HV_X64_MSR_REFERENCE_TSC, &msr);
	if (v) {
		note(hyperv.problems, "reference TSC MSR read: vector %d", v);
		return;
	}
	tsc_page = boot_alloc(PAGE_SIZE, PAGE_SIZE);
	if (!tsc_page) {
		note(hyperv.problems, "no memory for the reference TSC page");
		return;
	}
	phys = (u64)(uintptr_t)tsc_page;
	want = (phys & HV_REFERENCE_TSC_GPA) | (msr & HV_REFERENCE_TSC_RSVDP) |
	       HV_REFERENCE_TSC_ENABLE;
	v = wrmsr_safe(HV_X64_MSR_REFERENCE_TSC, want);
	if (v) {
		note(hyperv.problems, "reference TSC MSR write: vector %d", v);
		tsc_page = NULL;
		return;
	}
	hyperv.tsc_page_phys = phys;
	/* A host that ignores the write would leave us reading zeroed RAM. */
	if (rdmsr_safe(HV_X64_MSR_REFERENCE_TSC, &msr) || msr != want)
		note(hyperv.problems, "reference TSC MSR reads 0x%llx after writing 0x%llx", msr,
		     want);
	if (!tsc_page_read(&scale, &offset, NULL)) {
		note(hyperv.problems, "reference TSC page invalid (sequence %u)",
		     tsc_page->sequence);
		return;
	}
	hyperv.tsc_page_scale = scale;
	hyperv.tsc_page_offset = offset;
	hyperv.tsc_hz_from_page = hv_tsc_hz_from_scale(scale);
	hyperv.tsc_page = true;
}

static struct cpuid_regs leaf(u32 l)
{
	return cpuid(l);
}

/*
 * Read the Hyper-V block at base, write hvprobe's guest OS identity, read
 * what the privileges allow, map the reference TSC page. On the BSP, once.
 */
static void hyperv_init(u32 base)
{
	struct cpuid_regs r;

	hyperv.present = true;
	hyperv.base = base;
	hyperv.max_leaf = cpuid(base + HV_CPUID_VENDOR_AND_MAX).eax;
	hyperv.interface = cpuid(base + HV_CPUID_INTERFACE).eax;
	/* The interface signature, not the vendor, defines leaves 2 and up. */
	if (hyperv.interface != HV_INTERFACE_HV1) {
		note(hyperv.problems, "interface 0x%x is not Hv#1", hyperv.interface);
		return;
	}
	if (hyperv.max_leaf >= base + HV_CPUID_FEATURES) {
		r = cpuid(base + HV_CPUID_FEATURES);
		hyperv.privileges_low = r.eax;
		hyperv.privileges_high = r.ebx;
		hyperv.misc = r.ecx;
		hyperv.features = r.edx;
	}
	write_guest_os_id(); /* first: the version leaf may need it */
	read_cpuid(base);
	read_frequencies();
	probe_ref_counter();
	enable_tsc_page();
}

/* What the clocks may take as stated instead of measuring (kernel/time/rates.h). */
static void hyperv_offer(void)
{
	/* Linux's platform code runs only where ms_hyperv_platform() takes it. */
	hyperv_platform.present = hv_linux_detect(HV_KIND_HYPERV, hv.present, leaf) != 0;
	hyperv_rate = (struct rate_offer){
		.tsc_hz = hyperv.tsc_hz,
		.apic_hz = hyperv.apic_hz,
		.absent = "Hyper-V grants no frequency MSRs (CPUID 0x40000003 EAX[11] and EDX[8])",
	};
	hyperv_tsc_control = (struct hyperv_tsc_control){
		.access = hyperv.privileges_low & HV_ACCESS_TSC_INVARIANT,
		.expose = hyperv_expose_invariant_tsc,
	};
}

static void hyperv_start(u32 base)
{
	hyperv_init(base);
	hyperv_offer();
}

static void hyperv_json(struct json *j)
{
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
}

DEFINE_HV_INTERFACE(HV_KIND_HYPERV, hyperv_start, hyperv_json);

bool hyperv_expose_invariant_tsc(void)
{
	int v;

	if (!(hyperv.privileges_low & HV_ACCESS_TSC_INVARIANT))
		return false;
	v = wrmsr_safe(HV_X64_MSR_TSC_INVARIANT_CONTROL, HV_EXPOSE_INVARIANT_TSC);
	if (v)
		note(hyperv.problems, "TSC invariant control write: vector %d", v);
	return !v;
}

u64 hyperv_ref_time(void)
{
	u64 scale, tsc, val;
	s64 offset;

	/* The TLFS's fallback: an invalid page means the counter MSR. */
	if (hyperv.tsc_page && tsc_page_read(&scale, &offset, &tsc))
		return hv_tsc_page_time(tsc, scale, offset);
	if (hyperv.ref_counter && !rdmsr_safe(HV_X64_MSR_TIME_REF_COUNT, &val))
		return val;
	return 0;
}

/* TLFS "Partition Reference Counter": 100 ns units, through the TSC page or MSR. */
static bool hv_ref_probe(struct refclock *r)
{
	*r = (struct refclock){
		.name = "hv", .hz = HV_REF_COUNT_HZ, .bits = 64, .read = hyperv_ref_time
	};
	if (!hyperv.present) {
		str_copy(r->absent, "no Hyper-V reference counter: no Hyper-V leaves",
			 sizeof(r->absent));
		return false;
	}
	if (!hyperv.ref_counter && !hyperv.tsc_page) {
		str_copy(r->absent, "Hyper-V grants no reference counter (CPUID 0x40000003 EAX[1])",
			 sizeof(r->absent));
		return false;
	}
	r->present = true;
	return true;
}

DEFINE_REFCLOCK("hv", hv_ref_probe);
