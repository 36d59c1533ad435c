/* SPDX-License-Identifier: MIT */
/*
 * Exceptions and interrupts: the IDT, handler registration, and recovery
 * from expected faults.
 *
 * Expected faults use a per-CPU recovery point. ASM_TRY(label) arms it;
 * any exception before ASM_TRY_END(label) resumes at label with the
 * vector recorded, which fault_vector() then returns (-1 for none):
 *
 *	asm volatile(ASM_TRY("1f") "ud2\n\t" ASM_TRY_END("1") ::: "memory");
 *	report_eq(fault_vector(), X86_TRAP_UD, "ud2 raises #UD");
 *
 * The asm must have operands or clobbers (the %% escapes need them).
 */
#ifndef KERNEL_X86_TRAP_H
#define KERNEL_X86_TRAP_H

#include "kernel/x86/percpu.h"

/* SDM Vol 3A 6.3.1 Table 6-1 "Protected-Mode Exceptions and Interrupts" */
#define X86_TRAP_DE 0
#define X86_TRAP_DB 1
#define X86_TRAP_NMI 2
#define X86_TRAP_BP 3
#define X86_TRAP_OF 4
#define X86_TRAP_BR 5
#define X86_TRAP_UD 6
#define X86_TRAP_NM 7
#define X86_TRAP_DF 8
#define X86_TRAP_TS 10
#define X86_TRAP_NP 11
#define X86_TRAP_SS 12
#define X86_TRAP_GP 13
#define X86_TRAP_PF 14
#define X86_TRAP_MF 16
#define X86_TRAP_AC 17
#define X86_TRAP_MC 18
#define X86_TRAP_XM 19
#define X86_TRAP_VE 20
#define X86_TRAP_CP 21
#define X86_TRAP_VC 29
#define X86_TRAP_SX 30
#define X86_NR_EXCEPTIONS 32
#define X86_NR_VECTORS 256

/* #PF error code bits (SDM Vol 3A 5.7 "Page-Fault Exceptions") */
#define X86_PF_PRESENT BIT(0)
#define X86_PF_WRITE BIT(1)

#define GDT_KERNEL_CS 0x08
#define GDT_KERNEL_DS 0x10
#define GDT_TSS 0x18

/*
 * Flat descriptors, base 0 and limit 4 GiB, present, DPL 0 (SDM Vol 3A
 * 3.4.5): 64-bit code (L=1), 32-bit code, read/write data. The boot
 * stub, the AP trampoline and every CPU's GDT use these.
 */
#define GDT_DESC_CODE64 0x00af9a000000ffff
#define GDT_DESC_CODE32 0x00cf9a000000ffff
#define GDT_DESC_DATA 0x00cf92000000ffff

#define __STR(x) #x
#define STR(x) __STR(x)

#define ASM_TRY(label)                                                                             \
	"movl $-1, %%gs:" STR(PERCPU_FAULT_VECTOR) "\n\t"                                          \
						   "movq $" label                                  \
						   ", %%gs:" STR(PERCPU_FAULT_RESUME) "\n\t"
#define ASM_TRY_END(label) label ":\n\tmovq $0, %%gs:" STR(PERCPU_FAULT_RESUME) "\n\t"

#ifndef __ASSEMBLER__

struct trap_frame {
	u64 r15, r14, r13, r12, r11, r10, r9, r8;
	u64 rbp, rdi, rsi, rdx, rcx, rbx, rax;
	u64 vector, error_code;
	/* Pushed by the CPU (SDM Vol 3A 6.14.2 "64-Bit Mode Stack Frame") */
	u64 rip, cs, rflags, rsp, ss;
};

typedef void (*trap_handler)(struct trap_frame *f);

/* Load this CPU's GDT, TSS and the shared IDT, and point GS at cpu. */
void cpu_tables_init(struct percpu *cpu, u32 index);
void trap_set_handler(u8 vector, trap_handler h);
/*
 * What ends the run once an unexpected exception's registers are dumped:
 * the test runner's, installed by kmain(), since the x86 core knows
 * nothing of tests. It is called again, and must then only exit, if
 * ending the run faults. Until one is installed a crash halts.
 */
void trap_set_fatal(__noreturn void (*end_run)(const char *reason));

/* Vector of the last fault an ASM_TRY caught on this CPU, or -1. */
static inline int fault_vector(void)
{
	return this_cpu()->fault_vector;
}

static inline u64 fault_error_code(void)
{
	return this_cpu()->fault_error_code;
}

#ifdef HOST_TEST
/* The host model's: a modelled MSR that does not exist faults with #GP. */
int rdmsr_safe(u32 msr, u64 *val);
int wrmsr_safe(u32 msr, u64 val);
#else
static inline int rdmsr_safe(u32 msr, u64 *val)
{
	u32 lo, hi;
	int v;

	asm volatile(ASM_TRY("1f") "rdmsr\n\t" ASM_TRY_END("1")
		     : "=a"(lo), "=d"(hi)
		     : "c"(msr)
		     : "memory");
	v = fault_vector();
	*val = v < 0 ? ((u64)hi << 32) | lo : 0;
	return v < 0 ? 0 : v;
}

static inline int wrmsr_safe(u32 msr, u64 val)
{
	int v;

	asm volatile(ASM_TRY("1f") "wrmsr\n\t" ASM_TRY_END("1")
		     :
		     : "c"(msr), "a"((u32)val), "d"((u32)(val >> 32))
		     : "memory");
	v = fault_vector();
	return v < 0 ? 0 : v;
}
#endif /* HOST_TEST */

#endif /* __ASSEMBLER__ */
#endif
