/* SPDX-License-Identifier: MIT */
/*
 * One stub per vector: push a zero where the CPU pushes no error code
 * (SDM Vol 3A 6.13 "Error Code"), push the vector, save the general
 * registers as struct trap_frame and call trap_dispatch().
 *
 * The NMI stub reads nothing before the handler's TSC stamp: an RDPMC
 * there exits to KVM on every NMI and would put a VM exit into the
 * delivery gap that the fixed-vector baseline does not have.
 *
 * Exceptions return without IRET (TRAP_EXCEPTION_IRET): the
 * interrupted RIP and RFLAGS go onto the interrupted stack, below its
 * RSP (the kernel has no red zone), and POPF and RET resume there, as
 * IRET would but leaving NMI blocking as it was. The NMI and interrupts
 * return through IRET.
 */
#include "kernel/x86/nmi.h"
#include "kernel/x86/percpu.h"
#include "kernel/x86/trap.h"

/* struct trap_frame past the general registers, from the vector on. */
#define FRAME_VECTOR 0
#define FRAME_RIP 16
#define FRAME_RFLAGS 32
#define FRAME_RSP 40

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
	jmp trap_common
	.set vec, vec + 1
	.endr

trap_common:
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
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
	.if !TRAP_EXCEPTION_IRET
	cmpq $X86_NR_EXCEPTIONS, FRAME_VECTOR(%rsp)
	jae 1f
	cmpq $X86_TRAP_NMI, FRAME_VECTOR(%rsp)
	jne exception_return
1:
	.endif
	addq $16, %rsp
	iretq

/*
 * RSP at the vector, every register restored. Build [RAX, RFLAGS, RIP]
 * below the interrupted RSP, switch to it, and pop them back.
 */
exception_return:
	pushq %rax
	pushq %rbx
	movq 16 + FRAME_RSP(%rsp), %rax
	subq $24, %rax
	movq 16 + FRAME_RIP(%rsp), %rbx
	movq %rbx, 16(%rax)
	movq 16 + FRAME_RFLAGS(%rsp), %rbx
	movq %rbx, 8(%rax)
	movq 8(%rsp), %rbx
	movq %rbx, (%rax)
	popq %rbx
	movq %rax, %rsp
	popq %rax
	popfq
	ret
