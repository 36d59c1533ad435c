// SPDX-License-Identifier: MIT
/*
 * kmain(): bring the boot CPU to a state where tests can run, start the
 * other CPUs, run the tests, and end the run with the result. One init
 * step per line, in dependency order. The one file of kernel/ that may
 * include every folder: it composes them.
 */
#include "apic/apic.h"
#include "apic/options.h"
#include "apic/smp/smp.h"
#include "hv/hv.h"
#include "kernel/acpi/acpi.h"
#include "kernel/acpi/fadt.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/kernel.h"
#include "kernel/lib/printf.h"
#include "kernel/options.h"
#include "kernel/power.h"
#include "kernel/test/options.h"
#include "kernel/test/test.h"
#include "kernel/test/watchdog.h"
#include "kernel/time/clock.h"
#include "kernel/time/delay.h"
#include "kernel/time/options.h"
#include "kernel/x86/alloc.h"
#include "kernel/x86/nmi.h"
#include "kernel/x86/percpu.h"
#include "kernel/x86/phys.h"
#include "kernel/x86/pic.h"
#include "kernel/x86/trap.h"
#include "pmu/pmi.h"
#include "pmu/pmu.h"

const struct boot_info *boot_info;

static struct percpu bsp;

static bool setup(char *why, size_t whylen)
{
	hv_init();					    /* Hyper-V, KVM: what they offer */
	pmu_discover();					    /* the counters CPUID describes */
	pmi_init();					    /* the fixed-vector PMI handler */
	if (!apic_init_bsp(apic_options.mode, why, whylen)) /* xAPIC or x2APIC, tick */
		return false;
	if (kernel_options.fault == FAULT_EARLY_NMI) /* before timers and SMP */
		apic_send_ipi(apic_id(), APIC_ICR_DM_NMI);
	if (!clock_init(time_options.timer, time_options.hz, why, whylen)) /* TSC Hz */
		return false;
	delay_init_bsp();	    /* the BSP's lpj */
	if (!smp_init(why, whylen)) /* CPU list, trampoline */
		return false;
	smp_boot(); /* the APs */
	return true;
}

__noreturn void kmain(const struct boot_info *bi)
{
	char why[KTAP_REASON_MAX * 2], banner[160];

	boot_info = bi;
	cpu_tables_init(&bsp, 0);			    /* GS, GDT, TSS, IDT: faults report */
	nmi_init();					    /* an NMI is counted from here on */
	pic_disable();					    /* 8259s off the exception vectors */
	console_init();					    /* COM1 for KTAP */
	tests_init(console_write_line, power_exit);	    /* KTAP out; how a run ends */
	trap_set_fatal(tests_crashed);			    /* from here a crash ends the plan */
	clock_on_tick(watchdog_tick);			    /* a test that runs too long is ended */
	acpi_ok = acpi_init(&acpi, bi, phys_map);	    /* RSDP, root table */
	fadt_ok = acpi_ok && acpi_fadt_parse(&acpi, &fadt); /* PM1 ports, \\_S5 */
	power_init(EXIT_AUTO, fadt_ok ? &fadt : NULL);	    /* until exit= is known */
	alloc_init(bi);					    /* memory above the kernel */
	options_reset();				    /* every key at its default */

	if (!cmdline_parse(bi->cmdline, why, sizeof(why)) ||
	    !tests_check_selection("test", test_options.test, why, sizeof(why)) ||
	    !tests_check_selection("skip", test_options.skip, why, sizeof(why)))
		power_exit(tests_fail_setup("cmdline", why));
	power_init(kernel_options.exit, fadt_ok ? &fadt : NULL);

	snprintf(banner, sizeof(banner), "hvprobe %s: %s, loader \"%s\"", HVPROBE_VERSION,
		 bi->protocol, bi->loader);
	tests_start(test_options.test, test_options.skip, banner);
	if (!setup(why, sizeof(why)))
		power_exit(tests_abort_setup(why));
	power_exit(tests_run());
}
