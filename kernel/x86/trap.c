// SPDX-License-Identifier: MIT
/*
 * Descriptor tables and trap dispatch. Every CPU gets its own GDT and TSS
 * (the TSS descriptor's busy bit is per CPU) and shares one IDT. NMI, #DF
 * and #MC run on IST stacks so that a broken stack still yields a report
 * instead of a triple fault (SDM Vol 3A 6.14.5 "Interrupt Stack Table").
 */
#include "kernel/x86/trap.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/x86/msr.h"
#include "kernel/x86/x86.h"

/* SDM Vol 3A 3.4.5 segment descriptors, as 64-bit values */
#define GDT_TSS_AVAILABLE 0x89ULL /* P, type 9: 64-bit TSS (available) */
/* SDM Vol 3A 6.14.1 "64-Bit Mode IDT": P, DPL0, type 0xE interrupt gate */
#define IDT_INTERRUPT_GATE 0x8e

struct idt_gate {
	u16 offset_low;
	u16 selector;
	u8 ist;
	u8 type_attr;
	u16 offset_mid;
	u32 offset_high;
	u32 reserved;
} __packed;

/* Each stub is 16-byte aligned: see entry.S. */
#define TRAP_STUB_SIZE 16

extern const u8 trap_stubs[];

static struct idt_gate idt[X86_NR_VECTORS] __attribute__((aligned(16)));
static trap_handler handlers[X86_NR_VECTORS];

static const char *const exception_names[X86_NR_EXCEPTIONS] = {
	"#DE",	     "#DB",	  "NMI",       "#BP",	    "#OF", "#BR", "#UD",       "#NM",
	"#DF",	     "vector 9",  "#TS",       "#NP",	    "#SS", "#GP", "#PF",       "vector 15",
	"#MF",	     "#AC",	  "#MC",       "#XM",	    "#VE", "#CP", "vector 22", "vector 23",
	"vector 24", "vector 25", "vector 26", "vector 27", "#HV", "#VC", "#SX",       "vector 31",
};
_Static_assert(ARRAY_SIZE(exception_names) == X86_NR_EXCEPTIONS, "exception_names");

static const char *trap_name(u64 vector)
{
	return vector < X86_NR_EXCEPTIONS ? exception_names[vector] : "interrupt";
}

static u8 ist_for(u32 vector)
{
	switch (vector) {
	case X86_TRAP_DF: return IST_DOUBLE_FAULT;
	case X86_TRAP_NMI: return IST_NMI;
	case X86_TRAP_MC: return IST_MACHINE_CHECK;
	default: return 0;
	}
}

static void idt_build(void)
{
	for (u32 v = 0; v < X86_NR_VECTORS; v++) {
		u64 addr = (u64)(uintptr_t)(trap_stubs + v * TRAP_STUB_SIZE);

		idt[v] = (struct idt_gate){
			.offset_low = (u16)addr,
			.selector = GDT_KERNEL_CS,
			.ist = ist_for(v),
			.type_attr = IDT_INTERRUPT_GATE,
			.offset_mid = (u16)(addr >> 16),
			.offset_high = (u32)(addr >> 32),
		};
	}
}

static void gdt_build(struct percpu *cpu)
{
	u64 base = (u64)(uintptr_t)&cpu->tss;
	u64 limit = sizeof(cpu->tss) - 1;

	cpu->gdt[0] = 0;
	cpu->gdt[GDT_KERNEL_CS / 8] = GDT_DESC_CODE64;
	cpu->gdt[GDT_KERNEL_DS / 8] = GDT_DESC_DATA;
	/* SDM Vol 3A 8.2.3: a 16-byte TSS descriptor in 64-bit mode */
	cpu->gdt[GDT_TSS / 8] = (limit & 0xffff) | ((base & 0xffffff) << 16) |
				(GDT_TSS_AVAILABLE << 40) | (((limit >> 16) & 0xf) << 48) |
				(((base >> 24) & 0xff) << 56);
	cpu->gdt[GDT_TSS / 8 + 1] = base >> 32;
}

void cpu_tables_init(struct percpu *cpu, u32 index)
{
	struct desc_ptr gdtr = { sizeof(cpu->gdt) - 1, (u64)(uintptr_t)cpu->gdt };
	struct desc_ptr idtr = { sizeof(idt) - 1, (u64)(uintptr_t)idt };

	cpu->self = cpu;
	cpu->index = index;
	cpu->fault_vector = -1;
	wrmsr(MSR_IA32_GS_BASE, (u64)(uintptr_t)cpu);

	for (u32 i = 1; i < IST_COUNT; i++)
		cpu->tss.ist[i - 1] = (u64)(uintptr_t)(cpu->ist_stack[i - 1] + IST_STACK_SIZE);
	cpu->tss.iomap_base = sizeof(cpu->tss);
	gdt_build(cpu);
	if (index == 0)
		idt_build();

	lgdt(&gdtr);
	/* Reload CS with a far return, the data segments directly. */
	asm volatile("pushq %[cs]\n\t"
		     "leaq 1f(%%rip), %%rax\n\t"
		     "pushq %%rax\n\t"
		     "lretq\n"
		     "1:\n\t"
		     "movl %[ds], %%eax\n\t"
		     "movl %%eax, %%ds\n\t"
		     "movl %%eax, %%es\n\t"
		     "movl %%eax, %%ss\n\t"
		     :
		     : [cs] "i"(GDT_KERNEL_CS), [ds] "i"(GDT_KERNEL_DS)
		     : "rax", "memory");
	ltr(GDT_TSS);
	lidt(&idtr);
}

void trap_set_handler(u8 vector, trap_handler h)
{
	handlers[vector] = h;
}

static void dump(const struct trap_frame *f, const struct percpu *cpu)
{
	printf("# CRASH: unexpected %s (vector %llu) on CPU %u (APIC ID %u), error code 0x%llx\n",
	       trap_name(f->vector), f->vector, cpu->index, cpu->apic_id, f->error_code);
	printf("# CRASH: RIP %016llx RSP %016llx RFLAGS %08llx CS %04llx SS %04llx\n", f->rip,
	       f->rsp, f->rflags, f->cs, f->ss);
	printf("# CRASH: CR0 %016llx CR2 %016llx CR3 %016llx CR4 %016llx\n", read_cr0(), read_cr2(),
	       read_cr3(), read_cr4());
	printf("# CRASH: RAX %016llx RBX %016llx RCX %016llx RDX %016llx\n", f->rax, f->rbx, f->rcx,
	       f->rdx);
	printf("# CRASH: RSI %016llx RDI %016llx RBP %016llx R8  %016llx\n", f->rsi, f->rdi, f->rbp,
	       f->r8);
	printf("# CRASH: R9  %016llx R10 %016llx R11 %016llx R12 %016llx\n", f->r9, f->r10, f->r11,
	       f->r12);
	printf("# CRASH: R13 %016llx R14 %016llx R15 %016llx\n", f->r13, f->r14, f->r15);
}

#define NO_CRASH 0xffffffffu
#define CRASH_REASON_MAX 160

/* The CPU that reports a crash; any other that crashes meanwhile stops. */
static u32 crash_owner = NO_CRASH;
static __noreturn void (*fatal)(const char *reason);

void trap_set_fatal(__noreturn void (*end_run)(const char *reason))
{
	fatal = end_run;
}

static __noreturn void end_run(const char *reason)
{
	if (fatal)
		fatal(reason);
	for (;;)
		asm volatile("cli; hlt");
}

static __noreturn void crash(const struct trap_frame *f)
{
	struct percpu *cpu = this_cpu();
	char reason[CRASH_REASON_MAX];
	u32 owner = NO_CRASH;

	if (!__atomic_compare_exchange_n(&crash_owner, &owner, cpu->index, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE) &&
	    owner != cpu->index)
		for (;;)
			asm volatile("cli; hlt");
	/* A fault while reporting a fault: say so, and stop. */
	if (cpu->trap_depth++) {
		printf("# CRASH: %s while handling a crash; stopping\n", trap_name(f->vector));
		end_run("crashed while handling a crash");
	}
	dump(f, cpu);
	snprintf(reason, sizeof(reason),
		 "crashed: unexpected %s at RIP 0x%llx on CPU %u (APIC ID %u)",
		 trap_name(f->vector), f->rip, cpu->index, cpu->apic_id);
	end_run(reason);
}

void trap_dispatch(struct trap_frame *f)
{
	struct percpu *cpu = this_cpu();

	if (f->vector < X86_NR_EXCEPTIONS && f->vector != X86_TRAP_NMI && cpu->fault_resume) {
		cpu->fault_vector = (s32)f->vector;
		cpu->fault_error_code = f->error_code;
		cpu->fault_cr2 = f->vector == X86_TRAP_PF ? read_cr2() : 0;
		f->rip = cpu->fault_resume;
		cpu->fault_resume = 0;
		return;
	}
	if (handlers[f->vector]) {
		handlers[f->vector](f);
		return;
	}
	if (f->vector == X86_TRAP_NMI) {
		cpu->nmi_count++;
		return;
	}
	crash(f);
}
