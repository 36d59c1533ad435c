/* SPDX-License-Identifier: MIT */
/*
 * Multiboot 1 and 2 headers and the one 32-bit entry both protocols reach.
 *
 * Both loaders enter in 32-bit protected mode with paging off, EAX holding
 * the protocol's magic and EBX the physical address of its information
 * structure (Multiboot 0.6.96 3.2; Multiboot2 3.3; GRUB leaves UEFI boot
 * services before jumping). We check the magic and long-mode support,
 * identity-map the low 4 GiB with 2 MiB pages, enable PAE, EFER.LME and
 * paging (SDM Vol 3A 10.8.5 "Initializing IA-32e Mode"), and call
 * boot_main(magic, info) in 64-bit C.
 */
#include "boot/multiboot.h"
#include "kernel/power.h"
#include "kernel/uart.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/msr.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"

#define PTE_PRESENT 0x1
#define PTE_WRITE 0x2
#define PTE_LARGE 0x80
#define PAGE_2M 0x200000
#define IDENTITY_GIB 4
#define BOOT_STACK_SIZE 16384

	.section .multiboot, "a"
	/* Multiboot 1: within the first 8 KiB, 4-byte aligned (spec 3.1.1). */
	.balign 4
mb1_header:
	.long MB1_HEADER_MAGIC
	.long MB1_HEADER_MEMINFO
	.long -(MB1_HEADER_MAGIC + MB1_HEADER_MEMINFO)

	/* Multiboot 2: within the first 32 KiB, 8-byte aligned (spec 3.1.1). */
	.balign 8
mb2_header:
	.long MB2_HEADER_MAGIC
	.long MB2_ARCH_I386
	.long mb2_header_end - mb2_header
	.long -(MB2_HEADER_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
	/* End tag: type 0, flags 0, size 8. */
	.short 0, 0
	.long 8
mb2_header_end:

	.section .text.boot, "ax"
	.code32
	.global _start
_start:
	cli
	cld
	movl $boot_stack_top, %esp
	movl %eax, boot_magic
	movl %ebx, boot_mbi

	cmpl $MB1_BOOT_MAGIC, %eax
	je 1f
	cmpl $MB2_BOOT_MAGIC, %eax
	je 1f
	movl $msg_bad_magic, %esi
	jmp die
1:
	movl $CPUID_LEAF_EXT_MAX, %eax
	cpuid
	cmpl $CPUID_LEAF_EXT_FEATURES, %eax
	jb no_long_mode
	movl $CPUID_LEAF_EXT_FEATURES, %eax
	cpuid
	btl $CPUID_EXT_FEATURES_EDX_LM, %edx
	jnc no_long_mode

	/* Page directories: 4 x 512 entries of 2 MiB, physical = virtual. */
	movl $boot_pd, %edi
	movl $(PTE_PRESENT | PTE_WRITE | PTE_LARGE), %eax
	movl $(IDENTITY_GIB * 512), %ecx
2:	movl %eax, (%edi)
	movl $0, 4(%edi)
	addl $PAGE_2M, %eax
	addl $8, %edi
	loop 2b

	movl $boot_pdpt, %edi
	movl $(boot_pd + PTE_PRESENT + PTE_WRITE), %eax
	movl $IDENTITY_GIB, %ecx
3:	movl %eax, (%edi)
	movl $0, 4(%edi)
	addl $4096, %eax
	addl $8, %edi
	loop 3b

	movl $(boot_pdpt + PTE_PRESENT + PTE_WRITE), boot_pml4
	movl $0, boot_pml4 + 4

	enable_long_mode $boot_pml4

	lgdt boot_gdt_ptr
	ljmp $GDT_KERNEL_CS, $long_mode

no_long_mode:
	movl $msg_no_long_mode, %esi

	/*
	 * Say why, in KTAP so that a runner reads a verdict (one boot test,
	 * an error) rather than a crash, with EAX in hex in a diagnostic;
	 * then end the VM: QEMU's debug-exit device if fw_cfg says QEMU,
	 * else halt with interrupts off (no ACPI this early).
	 */
die:
	movl %eax, %ebx
	movl %esi, %edi
	movl $msg_ktap_head, %esi
	call puts32
	movl %edi, %esi
	call puts32
	movl $msg_eax, %esi
	call puts32
	movl $8, %ecx
4:	roll $4, %ebx
	movl %ebx, %eax
	andl $0xf, %eax
	movb hex_digits(%eax), %al
	call putc32
	loop 4b
	movl $msg_not_ok, %esi
	call puts32
	movl %edi, %esi
	call puts32
	movl $msg_ktap_tail, %esi
	call puts32

	movw $FW_CFG_PORT_SEL, %dx
	movw $FW_CFG_SIGNATURE, %ax
	outw %ax, %dx
	movw $FW_CFG_PORT_DATA, %dx
	movl $msg_qemu, %esi
	movl $4, %ecx
5:	inb %dx, %al
	cmpb (%esi), %al
	jne 6f
	incl %esi
	loop 5b
	movw $QEMU_DEBUG_EXIT_PORT, %dx
	movb $QEMU_DEBUG_EXIT_FAILED, %al
	outb %al, %dx
6:	cli
	hlt
	jmp 6b

puts32:
	lodsb
	testb %al, %al
	jz 9f
	call putc32
	jmp puts32
9:	ret

putc32:
	movw $(UART_COM1 + UART_LSR), %dx
	movb %al, %ah
7:	inb %dx, %al
	testb $UART_LSR_THRE, %al
	jz 7b
	movb %ah, %al
	movw $(UART_COM1 + UART_THR), %dx
	outb %al, %dx
	ret

	.code64
long_mode:
	movl $GDT_KERNEL_DS, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	xorl %eax, %eax
	movl %eax, %fs
	movl %eax, %gs
	movq $boot_stack_top, %rsp
	movl boot_magic, %edi
	movl boot_mbi, %esi
	call boot_main
8:	cli
	hlt
	jmp 8b

	.section .rodata
msg_bad_magic:
	.asciz "not started by a Multiboot loader"
msg_no_long_mode:
	.asciz "this CPU has no long mode"
msg_ktap_head:
	.asciz "KTAP version 1\r\n1..1\r\n# hvprobe: "
msg_eax:
	.asciz "; EAX=0x"
msg_not_ok:
	.asciz "\r\nnot ok 1 boot # ERROR "
msg_ktap_tail:
	.asciz "\r\n# Totals: pass:0 fail:0 skip:0 error:1\r\n"
msg_qemu:
	.ascii "QEMU"
hex_digits:
	.ascii "0123456789abcdef"

	/*
	 * Flat 64-bit code and data at GDT_KERNEL_CS and GDT_KERNEL_DS (SDM
	 * Vol 3A 3.4.5); the kernel loads its per-CPU GDT right after.
	 */
	.balign 8
boot_gdt:
	.quad 0
	.quad GDT_DESC_CODE64
	.quad GDT_DESC_DATA
boot_gdt_end:
boot_gdt_ptr:
	.short boot_gdt_end - boot_gdt - 1
	.long boot_gdt

	.data
boot_magic:
	.long 0
boot_mbi:
	.long 0

	.bss
	.balign 4096
boot_pml4:
	.skip 4096
boot_pdpt:
	.skip 4096
boot_pd:
	.skip 4096 * IDENTITY_GIB
	.balign 16
	.global boot_stack_top
boot_stack:
	.skip BOOT_STACK_SIZE
boot_stack_top:
