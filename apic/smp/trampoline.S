/* SPDX-License-Identifier: MIT */
/*
 * The AP trampoline and the APs' 64-bit entry.
 *
 * Contract. smp.c copies [smp_trampoline_start, smp_trampoline_end) to a free
 * 4 KiB page P below 1 MiB and patches, at their offsets from
 * smp_trampoline_start:
 *	smp_tr_gdt_ptr + 2	u32	P + (smp_tr_gdt - smp_trampoline_start)
 *	smp_tr_far32	u32	P + (smp_tr_protected - smp_trampoline_start)
 *	smp_tr_cr3	u32	the BSP's CR3 (the 1:1 map, below 4 GiB)
 * then sends STARTUP with vector P >> 12. Each AP starts in real mode at
 * CS:IP = (P >> 4):0 (SDM Vol 3A 9.4.4 "MP Initialization Example"), loads
 * the trampoline's GDT, enters protected mode, enables PAE, EFER.LME and
 * paging (SDM Vol 3A 10.8.5) and far-jumps to ap_entry64 in the kernel.
 * There it finds its struct percpu in smp_ap_table by its own APIC ID, so
 * any number of APs may run the trampoline at once (parallel bring-up),
 * switches to the stack at percpu->stack_top and calls smp_ap_main(percpu).
 */
#include "kernel/x86/cpuid.h"
#include "kernel/x86/msr.h"
#include "kernel/x86/percpu.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"

#define TR_CS32 0x08
#define TR_DS 0x10
#define TR_CS64 0x18
#define SMP_AP_ENTRY_SIZE 16

	.section .rodata, "a"
	.code16
	.balign 16
	.global smp_trampoline_start, smp_trampoline_end
	.global smp_tr_gdt, smp_tr_gdt_ptr, smp_tr_far32, smp_tr_cr3, smp_tr_protected
smp_trampoline_start:
	cli
	cld
	movw %cs, %ax
	movw %ax, %ds
	/* ESI = P, kept across the switch: there is no stack to find it with. */
	movzwl %ax, %esi
	shll $4, %esi
	lgdtl smp_tr_gdt_ptr - smp_trampoline_start
	movl %cr0, %eax
	orl $X86_CR0_PE, %eax
	movl %eax, %cr0
	ljmpl *(smp_tr_far32 - smp_trampoline_start)

	.code32
smp_tr_protected:
	movl $TR_DS, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	enable_long_mode (smp_tr_cr3 - smp_trampoline_start)(%esi)
	ljmpl $TR_CS64, $ap_entry64

	/* 32-bit code, flat data, 64-bit code (SDM Vol 3A 3.4.5). */
	.balign 8
smp_tr_gdt:
	.quad 0
	.quad GDT_DESC_CODE32
	.quad GDT_DESC_DATA
	.quad GDT_DESC_CODE64
tr_gdt_end:
smp_tr_gdt_ptr:
	.word tr_gdt_end - smp_tr_gdt - 1
	.long 0
smp_tr_far32:
	.long 0
	.word TR_CS32
smp_tr_cr3:
	.long 0
smp_trampoline_end:

	.text
	.code64
ap_entry64:
	movl $TR_DS, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss

	/* Our APIC ID: CPUID.0BH:EDX where the leaf exists, else CPUID.1:EBX[31:24]. */
	xorl %eax, %eax
	cpuid
	cmpl $CPUID_LEAF_TOPOLOGY, %eax
	jb 2f
	movl $CPUID_LEAF_TOPOLOGY, %eax
	xorl %ecx, %ecx
	cpuid
	testl $CPUID_TOPOLOGY_ECX_TYPE, %ecx
	jz 2f
	movl %edx, %ebx
	jmp 3f
2:	movl $CPUID_LEAF_FEATURES, %eax
	cpuid
	shrl $CPUID_FEATURES_EBX_APIC_ID_SHIFT, %ebx

	/* smp_ap_table: u64 count, then { u32 apic_id, u32 pad, u64 percpu }. */
3:	leaq smp_ap_table(%rip), %rsi
	movq (%rsi), %rcx
	addq $8, %rsi
4:	testq %rcx, %rcx
	jz 5f
	cmpl (%rsi), %ebx
	je 6f
	addq $SMP_AP_ENTRY_SIZE, %rsi
	decq %rcx
	jmp 4b
6:	movq 8(%rsi), %rdi
	movq PERCPU_STACK_TOP(%rdi), %rsp
	call smp_ap_main
	/* Not listed, or smp_ap_main returned: stop here for good. */
5:	cli
	hlt
	jmp 5b
