/* SPDX-License-Identifier: MIT */
/*
 * One stub per vector: push a zero where the CPU pushes no error code
 * (SDM Vol 3A 6.13 "Error Code"), push the vector, save the general
 * registers as struct trap_frame and call trap_dispatch().
 *
 * The NMI's reads a performance counter before anything else, when the
 * CPU asks for one (percpu nmi_pmc): a PMI's skid is then measured before
 * the handler's own instructions count. NMI_PMC_STUB_INSNS (trap.h)
 * counts what the stub retires before its RDPMC.
 */
#include "kernel/x86/percpu.h"
#include "kernel/x86/trap.h"

	.text
	.code64

	.balign 16
	.global trap_stubs
trap_stubs:
	.set vec, 0
	.rept X86_NR_VECTORS
	.balign 16
	.if !(vec == X86_TRAP_DF || (vec >= X86_TRAP_TS && vec <= X86_TRAP_PF) || \
	      vec == X86_TRAP_AC || vec == X86_TRAP_CP || vec == X86_TRAP_VC || vec == X86_TRAP_SX)
	pushq $0
	.endif
	pushq $vec
	.if vec == X86_TRAP_NMI
	jmp nmi_common
	.else
	jmp trap_common
	.endif
	.set vec, vec + 1
	.endr

nmi_common:
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	movl %gs:PERCPU_NMI_PMC, %ecx
	testl %ecx, %ecx
	jz trap_saved4
	decl %ecx
	rdpmc
	movl %eax, %gs:PERCPU_NMI_PMC_VALUE
	movl %edx, %gs:PERCPU_NMI_PMC_VALUE + 4
	jmp trap_saved4

trap_common:
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
trap_saved4:
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	/* 22 quadwords pushed on a 16-byte aligned frame: still aligned. */
	movq %rsp, %rdi
	cld
	call trap_dispatch
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	addq $16, %rsp
	iretq
