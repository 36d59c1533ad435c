// SPDX-License-Identifier: MIT
/*
 * exceptions: faults are caught with the right vector and error code, and
 * execution goes on.
 *
 * Every other test leans on this: rdmsr_safe() probes hypervisor MSRs that
 * may #GP, and a crash must become a KTAP report rather than a triple
 * fault. Each case raises one exception through ASM_TRY and checks what
 * the handler recorded against the SDM (Vol 3A 6.15 "Exception and
 * Interrupt Reference"): #DE, #UD and #BP push no error code, #GP from a
 * non-canonical address pushes 0 (not a selector), and #PF reports the
 * access type and CR2.
 */
#include "apic/apic.h"
#include "kernel/test/test.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/msr.h"
#include "kernel/x86/phys.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"

/* Above the 4 GiB identity map: no page table entry covers it. */
#define UNMAPPED_ADDRESS (IDENTITY_MAP_END + 0x1234)
#define NON_CANONICAL_ADDRESS 0x8000000000000000ULL
#define KERNEL_GS_BASE_PATTERN 0x00007fffdeadb000ULL

static void check(const char *what, int expected_vector, u64 expected_error)
{
	int v = fault_vector();

	report_eq(v, expected_vector, what);
	report_eq(fault_error_code(), expected_error, "error code");
}

/*
 * rdmsr_safe()/wrmsr_safe() on both paths. The faulting accesses are ones
 * the SDM (Vol 3A 11.12.1) defines to #GP: any x2APIC register while the
 * APIC is in xAPIC mode; in x2APIC mode, reading a reserved one or writing
 * the read-only ID. An unimplemented MSR would not do, as TCG
 * reads those as 0. QEMU before 8.0 emulates no x2APIC under TCG and does
 * not fault either: that is a SKIP, not a pass.
 */
static void msr_checks(void)
{
	u64 val, saved;
	int v;

	report_eq(rdmsr_safe(MSR_IA32_EFER, &val), 0, "rdmsr_safe of EFER succeeds");
	report(val & MSR_IA32_EFER_LME, "EFER read through rdmsr_safe has LME set");

	saved = rdmsr(MSR_IA32_KERNEL_GS_BASE);
	report_eq(wrmsr_safe(MSR_IA32_KERNEL_GS_BASE, KERNEL_GS_BASE_PATTERN), 0,
		  "wrmsr_safe of KERNEL_GS_BASE succeeds");
	report_eq(rdmsr(MSR_IA32_KERNEL_GS_BASE), KERNEL_GS_BASE_PATTERN,
		  "KERNEL_GS_BASE reads back what wrmsr_safe wrote");
	wrmsr(MSR_IA32_KERNEL_GS_BASE, saved);

	if (rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_EXTD) {
		/* x2APIC mode: 0x801 is reserved, the APIC ID read-only (SDM 11.12.1.2). */
		report_eq(rdmsr_safe(MSR_X2APIC_RESERVED_801, &val), X86_TRAP_GP,
			  "rdmsr_safe of a reserved x2APIC MSR returns #GP");
		report_eq(val, 0, "rdmsr_safe leaves 0 in the value after a fault");
		report_eq(wrmsr_safe(MSR_IA32_X2APIC_APICID, 0), X86_TRAP_GP,
			  "wrmsr_safe of the read-only x2APIC ID returns #GP");
		return;
	}
	v = rdmsr_safe(MSR_IA32_X2APIC_APICID, &val);
	if (!v && !cpu_has(X86_FEATURE_X2APIC)) {
		report_skip("x2APIC MSR read in xAPIC mode did not #GP on a CPU without "
			    "x2APIC (QEMU < 8 TCG)");
		return;
	}
	report_eq(v, X86_TRAP_GP, "rdmsr_safe of an x2APIC MSR in xAPIC mode returns #GP");
	report_eq(val, 0, "rdmsr_safe leaves 0 in the value after a fault");
	report_eq(wrmsr_safe(MSR_IA32_X2APIC_APICID, 0), X86_TRAP_GP,
		  "wrmsr_safe of an x2APIC MSR in xAPIC mode returns #GP");
}

DEFINE_TEST(exceptions, "faults are caught with the right vector and error code", 0)
{
	volatile u32 zero = 0;
	u32 eax = 1, edx = 0;
	u64 val, flag = 0;

	asm volatile(ASM_TRY("1f") "divl %[d]\n\t" ASM_TRY_END("1")
		     : "+a"(eax), "+d"(edx)
		     : [d] "r"(zero));
	report_prefix_push("DE");
	check("divide by zero faults", X86_TRAP_DE, 0);
	report_prefix_pop();

	asm volatile(ASM_TRY("1f") "ud2\n\t" ASM_TRY_END("1")::: "memory");
	report_prefix_push("UD");
	check("ud2 faults", X86_TRAP_UD, 0);
	report_prefix_pop();

	asm volatile(ASM_TRY("1f") "int3\n\t" ASM_TRY_END("1")::: "memory");
	report_prefix_push("BP");
	check("int3 traps", X86_TRAP_BP, 0);
	report_prefix_pop();

	asm volatile(ASM_TRY("1f") "movq (%[p]), %[v]\n\t" ASM_TRY_END("1")
		     : [v] "=r"(val)
		     : [p] "r"(NON_CANONICAL_ADDRESS)
		     : "memory");
	report_prefix_push("GP");
	check("non-canonical load faults", X86_TRAP_GP, 0);
	msr_checks();
	report_prefix_pop();

	asm volatile(ASM_TRY("1f") "movq $1, (%[p])\n\t" ASM_TRY_END("1")
		     :
		     : [p] "r"(UNMAPPED_ADDRESS)
		     : "memory");
	report_prefix_push("PF");
	check("write to an unmapped page faults", X86_TRAP_PF, X86_PF_WRITE);
	report_eq(this_cpu()->fault_cr2, UNMAPPED_ADDRESS, "CR2 holds the faulting address");
	report_prefix_pop();

	/* Recovery must leave the CPU able to run ordinary code. */
	asm volatile(ASM_TRY("1f") "movq $1, %[f]\n\t" ASM_TRY_END("1") : [f] "+r"(flag));
	report(flag == 1 && fault_vector() == -1, "code after recovery runs without a fault");
}
