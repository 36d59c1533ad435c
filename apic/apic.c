// SPDX-License-Identifier: MIT
/*
 * Local APIC access. The mode is chosen once on the BSP; every CPU then
 * switches its own APIC to it (SDM Vol 3A 11.12.1: x2APIC is entered by
 * setting EXTD with EN already set). The enable bit in IA32_APIC_BASE is
 * never cleared: QEMU 7.2's TCG cannot set it again.
 */
#include "apic/apic.h"
#include "apic/icr.h"
#include "apic/options.h"
#include "kernel/lib/printf.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/nmi.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"

#define XAPIC_MAX_ID 0xfe /* 0xff is the broadcast destination */

static enum apic_mode mode;
static volatile u32 *xapic;

const char *apic_mode_name(void)
{
	return mode == APIC_MODE_X2APIC ? "x2apic" : "xapic";
}

u32 apic_read(u32 reg)
{
	if (mode == APIC_MODE_X2APIC)
		return (u32)rdmsr(MSR_IA32_X2APIC_BASE + reg / 16);
	return xapic[reg / 4];
}

void apic_write(u32 reg, u32 val)
{
	if (mode == APIC_MODE_X2APIC)
		wrmsr(MSR_IA32_X2APIC_BASE + reg / 16, val);
	else
		xapic[reg / 4] = val;
}

u32 apic_id(void)
{
	u32 id = apic_read(APIC_ID);

	return mode == APIC_MODE_X2APIC ? id : (u32)FIELD_GET(APIC_ID_XAPIC, id);
}

u32 apic_max_id(void)
{
	return mode == APIC_MODE_X2APIC ? 0xfffffffe : XAPIC_MAX_ID;
}

void apic_eoi(void)
{
	apic_write(APIC_EOI, 0);
}

u32 apic_esr(void)
{
	apic_write(APIC_ESR, 0);
	return apic_read(APIC_ESR);
}

/*
 * Linux weak_wrmsr_fence(): MFENCE orders earlier stores before the
 * x2APIC WRMSR, which is not serializing (SDM Vol 3A 11.12.3); LFENCE
 * keeps the WRMSR from starting before the MFENCE completes.
 */
static void weak_wrmsr_fence(void)
{
	asm volatile("mfence; lfence" ::: "memory");
}

static bool irq_save(void)
{
	bool on = read_rflags() & X86_EFLAGS_IF;

	cli();
	return on;
}

static void irq_restore(bool was_on)
{
	if (was_on)
		sti();
}

static const struct icr_ops icr_ops = {
	.irq_save = irq_save,
	.irq_restore = irq_restore,
	.fence = weak_wrmsr_fence,
	.wrmsr = wrmsr,
	.read = apic_read,
	.write = apic_write,
	.pause = pause,
};

bool apic_send_ipi(u32 dest_apic_id, u32 icr_low)
{
	return icr_send(&icr_ops, mode == APIC_MODE_X2APIC, dest_apic_id, icr_low);
}

/* Software-enable with a spurious vector, mask every LVT entry we own. */
static void apic_setup_this_cpu(void)
{
	u64 base = rdmsr(MSR_IA32_APIC_BASE);

	if (mode == APIC_MODE_X2APIC && !(base & APIC_BASE_EXTD))
		wrmsr(MSR_IA32_APIC_BASE, base | APIC_BASE_EN | APIC_BASE_EXTD);
	apic_write(APIC_SVR, APIC_SVR_ENABLE | APIC_VECTOR_SPURIOUS);
	apic_write(APIC_TPR, 0);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_LVT_PMC, APIC_LVT_MASKED);
	apic_write(APIC_LVT_LINT0, APIC_LVT_MASKED);
	/* LINT1 carries the platform's NMI on PCs (MADT type 4). */
	apic_write(APIC_LVT_LINT1, APIC_LVT_DM_NMI);
	apic_write(APIC_LVT_ERROR, APIC_LVT_MASKED);
	apic_esr();
}

static void eoi_only(struct trap_frame *f)
{
	(void)f;
	apic_eoi();
}

/* Spurious interrupts get no EOI (SDM Vol 3A 11.9). */
static void spurious(struct trap_frame *f)
{
	(void)f;
}

static void send_nmi(const struct percpu *to)
{
	apic_send_ipi(to->apic_id, APIC_ICR_DM_NMI);
}

bool apic_init_bsp(u32 choice, char *why, size_t whylen)
{
	u64 base = rdmsr(MSR_IA32_APIC_BASE);
	bool have_x2apic = cpu_has(X86_FEATURE_X2APIC);

	if (choice == APIC_X2APIC && !have_x2apic) {
		snprintf(why, whylen, "apic=x2apic, but CPUID.1:ECX[21] (x2APIC) is clear");
		return false;
	}
	/* Firmware that left x2APIC on cannot be undone without a reset. */
	if (choice == APIC_XAPIC && (base & APIC_BASE_EXTD)) {
		snprintf(why, whylen, "apic=xapic, but firmware left the APIC in x2APIC mode");
		return false;
	}
	mode = (choice == APIC_X2APIC || (choice == APIC_AUTO && have_x2apic) ||
		(base & APIC_BASE_EXTD))
		       ? APIC_MODE_X2APIC
		       : APIC_MODE_XAPIC;
	xapic = (volatile u32 *)(uintptr_t)(base & APIC_BASE_ADDR_MASK);
	apic_setup_this_cpu();
	trap_set_handler(APIC_VECTOR_WAKE, eoi_only);
	trap_set_handler(APIC_VECTOR_SPURIOUS, spurious);
	nmi_set_sender(send_nmi);
	apic_timer_init();
	return true;
}

void apic_init_ap(void)
{
	apic_setup_this_cpu();
}
