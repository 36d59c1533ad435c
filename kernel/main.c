// SPDX-License-Identifier: MIT
/*
 * kmain(): bring the boot CPU to a state where tests can run, run them,
 * and end the run with the result. One init step per line, in dependency
 * order.
 */
#include "kernel/console.h"
#include "kernel/kernel.h"
#include "kernel/percpu.h"
#include "kernel/phys.h"
#include "kernel/power.h"
#include "kernel/printf.h"
#include "kernel/test.h"
#include "kernel/trap.h"

const struct boot_info *boot_info;
struct options options;
struct acpi acpi;
bool acpi_ok;

static struct percpu bsp;
static struct fadt_info fadt;

__noreturn void kmain(const struct boot_info *bi)
{
	char err[KTAP_REASON_MAX * 2], banner[160];
	bool fadt_ok;
	enum result r;

	boot_info = bi;
	cpu_tables_init(&bsp, 0);		/* GS, GDT, TSS, IDT: faults report */
	console_init();				/* COM1 for KTAP */
	tests_init(console_write_line);		/* from here a crash ends the plan */
	acpi_ok = acpi_init(&acpi, bi, phys_map); /* RSDP, root table */
	fadt_ok = acpi_ok && acpi_fadt_parse(&acpi, &fadt); /* PM1 ports, \_S5 */
	power_init(EXIT_AUTO, fadt_ok ? &fadt : NULL); /* until exit= is known */
	options_default(&options);

	if (!cmdline_parse(bi->cmdline, &options, err, sizeof(err)) ||
	    !tests_check_selection(options.test, err, sizeof(err)))
		power_exit(tests_fail_setup("cmdline", err));
	power_init(options.exit, fadt_ok ? &fadt : NULL);

	snprintf(banner, sizeof(banner), "hvprobe %s: %s, loader \"%s\"", HVPROBE_VERSION,
		 bi->protocol, bi->loader);
	r = tests_run(options.test, banner);
	power_exit(r);
}
