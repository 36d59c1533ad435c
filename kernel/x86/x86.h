/* SPDX-License-Identifier: MIT */
/*
 * One static inline per instruction, named after its mnemonic, plus the
 * control-register and EFLAGS bits the boot path and fault handlers need
 * (SDM Vol 3A 2.5 "Control Registers", Vol 1 3.4.3 "EFLAGS").
 */
#ifndef KERNEL_X86_X86_H
#define KERNEL_X86_X86_H

#include "kernel/lib/types.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/msr.h"

#define X86_CR0_PE BIT(0)
#define X86_CR0_WP BIT(16)
#define X86_CR0_PG BIT(31)

#define X86_CR4_PAE BIT(5)

#define X86_EFLAGS_IF BIT(9)

#ifdef __ASSEMBLER__
/*
 * From 32-bit protected mode into IA-32e mode (SDM Vol 3A 10.8.5): PAE,
 * CR3 = the given 4-level tables (below 4 GiB), EFER.LME, then paging; the
 * caller's far jump to a 64-bit code segment completes the switch.
 * Clobbers EAX, ECX and EDX.
 */
/* clang-format off */
.macro enable_long_mode cr3
	movl %cr4, %eax
	orl $X86_CR4_PAE, %eax
	movl %eax, %cr4
	movl \cr3, %eax
	movl %eax, %cr3
	movl $MSR_IA32_EFER, %ecx
	rdmsr
	orl $MSR_IA32_EFER_LME, %eax
	wrmsr
	movl %cr0, %eax
	orl $(X86_CR0_PG | X86_CR0_PE), %eax
	movl %eax, %cr0
.endm
/* clang-format on */
#else

static inline void outb(u16 port, u8 val)
{
	asm volatile("outb %0, %1" : : "a"(val), "Nd"(port));
}

static inline void outw(u16 port, u16 val)
{
	asm volatile("outw %0, %1" : : "a"(val), "Nd"(port));
}

static inline u8 inb(u16 port)
{
	u8 val;

	asm volatile("inb %1, %0" : "=a"(val) : "Nd"(port));
	return val;
}

static inline u16 inw(u16 port)
{
	u16 val;

	asm volatile("inw %1, %0" : "=a"(val) : "Nd"(port));
	return val;
}

static inline u32 inl(u16 port)
{
	u32 val;

	asm volatile("inl %1, %0" : "=a"(val) : "Nd"(port));
	return val;
}

#ifdef HOST_TEST
/*
 * Built for the host, what touches the machine is the host model's
 * (tests/unit/model.c): the MSRs, the TSC and CPUID of modelled CPUs, and
 * the points at which they take an NMI.
 */
u64 rdmsr(u32 msr);
void wrmsr(u32 msr, u64 val);
u64 rdtsc(void);
u64 rdtsc_ordered(void);
struct cpuid_regs cpuid_count(u32 leaf, u32 subleaf);
void cli(void);
void sti(void);
void hlt(void);
void pause(void);
#else
static inline u64 rdmsr(u32 msr)
{
	u32 lo, hi;

	asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((u64)hi << 32) | lo;
}

static inline void wrmsr(u32 msr, u64 val)
{
	asm volatile("wrmsr" : : "c"(msr), "a"((u32)val), "d"((u32)(val >> 32)) : "memory");
}

static inline u64 rdtsc(void)
{
	u32 lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((u64)hi << 32) | lo;
}

/*
 * RDTSC is not serializing: it may read the counter before earlier loads
 * complete (SDM Vol 2B RDTSC, APM Vol 3 RDTSC), so a read meant to come
 * after a lock's acquire can see a time from before it. LFENCE orders it
 * on Intel, MFENCE on AMD where LFENCE is not dispatch-serializing; both
 * serve every vendor without asking which, as Linux's rdtsc_ordered()
 * (v6.12, arch/x86/include/asm/msr.h) picks one of them or RDTSCP.
 */
static inline u64 rdtsc_ordered(void)
{
	u32 lo, hi;

	asm volatile("mfence; lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((u64)hi << 32) | lo;
}

static inline struct cpuid_regs cpuid_count(u32 leaf, u32 subleaf)
{
	struct cpuid_regs r;

	asm volatile("cpuid"
		     : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
		     : "a"(leaf), "c"(subleaf));
	return r;
}

static inline void cli(void)
{
	asm volatile("cli" ::: "memory");
}

static inline void sti(void)
{
	asm volatile("sti" ::: "memory");
}

static inline void hlt(void)
{
	asm volatile("hlt" ::: "memory");
}

static inline void pause(void)
{
	asm volatile("pause" ::: "memory");
}
#endif /* HOST_TEST */

static inline struct cpuid_regs cpuid(u32 leaf)
{
	return cpuid_count(leaf, 0);
}

#define DEFINE_READ_CR(n)                                                                          \
	static inline u64 read_cr##n(void)                                                         \
	{                                                                                          \
		u64 val;                                                                           \
		asm volatile("mov %%cr" #n ", %0" : "=r"(val));                                    \
		return val;                                                                        \
	}
DEFINE_READ_CR(0)
DEFINE_READ_CR(2)
DEFINE_READ_CR(3)
DEFINE_READ_CR(4)
#undef DEFINE_READ_CR

static inline u64 read_rflags(void)
{
	u64 val;

	asm volatile("pushfq; popq %0" : "=r"(val));
	return val;
}

/* Keeps the compiler from moving memory accesses across it (not the CPU). */
static inline void barrier(void)
{
	asm volatile("" ::: "memory");
}

struct __attribute__((packed)) desc_ptr {
	u16 limit;
	u64 base;
};

static inline void lgdt(const struct desc_ptr *p)
{
	asm volatile("lgdt %0" : : "m"(*p));
}

static inline void lidt(const struct desc_ptr *p)
{
	asm volatile("lidt %0" : : "m"(*p));
}

static inline void ltr(u16 selector)
{
	asm volatile("ltr %0" : : "rm"(selector));
}

#endif /* __ASSEMBLER__ */
#endif
