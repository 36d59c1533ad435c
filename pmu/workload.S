/* SPDX-License-Identifier: MIT */
/*
 * workload_run(stamp, iterations): the stress workload, a loop of exactly
 * WORKLOAD_INSNS_PER_ITERATION instructions (rdtsc, shl, or, mov, 26 nops,
 * dec, jnz) that stamps the TSC into *stamp each time. Its bounds are
 * global so that a PMI handler can tell whether it interrupted the loop.
 */
	.text
	.code64
	.global workload_run, workload_loop, workload_loop_end
workload_run:
	testq %rsi, %rsi
	jz 1f
workload_loop:
	rdtsc
	shlq $32, %rdx
	orq %rdx, %rax
	movq %rax, (%rdi)
	.rept 26
	nop
	.endr
	decq %rsi
	jnz workload_loop
workload_loop_end:
1:	ret
