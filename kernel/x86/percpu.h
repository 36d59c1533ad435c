/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU data, reached through the GS base: %gs:0 holds a pointer to the
 * CPU's own struct percpu. Each CPU sets its GS base before anything else
 * runs on it, so this_cpu() works in every handler, NMI included.
 */
#ifndef KERNEL_X86_PERCPU_H
#define KERNEL_X86_PERCPU_H

#include "kernel/lib/types.h"

/* Offsets assembly uses (ASM_TRY, the AP entry, the NMI entry); checked against the struct. */
#define PERCPU_FAULT_RESUME 16
#define PERCPU_FAULT_VECTOR 24
#define PERCPU_STACK_TOP 32

#ifndef __ASSEMBLER__

/* Task-state segment, 64-bit form (SDM Vol 3A 8.7 "Task Management in 64-bit Mode"). */
struct tss64 {
	u32 reserved0;
	u64 rsp[3];
	u64 reserved1;
	u64 ist[7];
	u64 reserved2;
	u16 reserved3;
	u16 iomap_base;
} __packed;

enum ist_slot { IST_DOUBLE_FAULT = 1, IST_NMI, IST_MACHINE_CHECK, IST_COUNT };

#define GDT_ENTRIES 5 /* null, code, data, TSS (two slots) */
#define IST_STACK_SIZE 4096

enum cpu_state { CPU_OFFLINE, CPU_ALIVE, CPU_ONLINE };

struct percpu {
	struct percpu *self;
	u32 index;
	u32 apic_id;
	/* An armed recovery point for expected exceptions (ASM_TRY). */
	u64 fault_resume;
	s32 fault_vector;
	u32 reserved;
	u64 stack_top;
	u64 fault_error_code;
	u64 fault_cr2;
	volatile u64 nmi_count;
	u32 trap_depth;

	/* Topology, from the SRAT and CPUID; hw_apic_id as the CPU reads it. */
	u32 node;
	u32 package;
	u32 hw_apic_id;

	/*
	 * Where the CPU is in its life, which the watchdog and
	 * cpu_online_count() read; bring-up (apic/smp/) keeps its own
	 * record of how it got there, and kernel/time the CPU's delay loop.
	 */
	volatile u32 state;

	/*
	 * Work the BSP hands an idle AP (smp_run_on()); here, not with
	 * bring-up, since the watchdog names the work a stuck CPU runs.
	 */
	void (*volatile work)(void *arg);
	void *work_arg;

	u64 gdt[GDT_ENTRIES] __attribute__((aligned(16)));
	struct tss64 tss __attribute__((aligned(16)));
	u8 ist_stack[IST_COUNT - 1][IST_STACK_SIZE] __attribute__((aligned(16)));
};

_Static_assert(__builtin_offsetof(struct percpu, fault_resume) == PERCPU_FAULT_RESUME,
	       "PERCPU_FAULT_RESUME");
_Static_assert(__builtin_offsetof(struct percpu, fault_vector) == PERCPU_FAULT_VECTOR,
	       "PERCPU_FAULT_VECTOR");
_Static_assert(__builtin_offsetof(struct percpu, stack_top) == PERCPU_STACK_TOP,
	       "PERCPU_STACK_TOP");

/* The most CPUs hvprobe brings up; the MADT may list more. */
#define MAX_CPUS 1024

/* Append cpu to the table, setting its index; false when it is full. */
bool cpu_add(struct percpu *cpu);
u32 cpu_count(void);
/* The CPU at index, or NULL past the end. */
struct percpu *cpu_at(u32 index);
u32 cpu_online_count(void);

#ifdef HOST_TEST
/* The host model's CPU that runs the calling thread. */
struct percpu *this_cpu(void);
#else
static inline struct percpu *this_cpu(void)
{
	struct percpu *p;

	asm volatile("movq %%gs:0, %0" : "=r"(p));
	return p;
}
#endif

#endif /* __ASSEMBLER__ */
#endif
