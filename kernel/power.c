// SPDX-License-Identifier: MIT
/*
 * Power-off and exit. isa-debug-exit makes QEMU exit with (value << 1) | 1,
 * so 0 means "passed" (status 1) and 1 "failed" (status 3). ACPI S5 writes
 * SLP_TYP|SLP_EN to PM1a/PM1b control (ACPI 6.5 7.4.2 and 16.1.7), after
 * switching to ACPI mode through SMI_CMD if firmware left it off.
 */
#include "kernel/power.h"
#include "kernel/lib/printf.h"
#include "kernel/options.h"
#include "kernel/x86/x86.h"

#define ACPI_ENABLE_POLLS 100000
#define POWER_OFF_POLLS 10000000

static u32 exit_method = EXIT_AUTO;
static struct fadt_info fadt_copy;
static bool have_fadt;

void power_init(u32 method, const struct fadt_info *fadt)
{
	exit_method = method;
	have_fadt = fadt != NULL;
	if (fadt)
		fadt_copy = *fadt;
}

/* True when fw_cfg answers with QEMU's signature. */
static bool power_under_qemu(void)
{
	static const char sig[4] = { 'Q', 'E', 'M', 'U' };

	outw(FW_CFG_PORT_SEL, FW_CFG_SIGNATURE);
	for (int i = 0; i < 4; i++)
		if (inb(FW_CFG_PORT_DATA) != (u8)sig[i])
			return false;
	return true;
}

static void qemu_exit(enum result r)
{
	outb(QEMU_DEBUG_EXIT_PORT, r == RESULT_PASS || r == RESULT_SKIP ? QEMU_DEBUG_EXIT_PASSED
									: QEMU_DEBUG_EXIT_FAILED);
}

static void acpi_power_off(void)
{
	const struct fadt_info *f = &fadt_copy;

	if (!have_fadt || !f->has_s5 || !f->pm1a_cnt || f->pm1a_cnt > 0xffff) {
		printf("# exit: no ACPI S5 path (FADT %s, \\_S5 %s)\n",
		       have_fadt ? "found" : "missing", f->has_s5 ? "found" : "missing");
		return;
	}
	if (!(inw(f->pm1a_cnt) & ACPI_PM1_CNT_SCI_EN) && f->smi_cmd && f->acpi_enable) {
		outb(f->smi_cmd, f->acpi_enable);
		for (int i = 0; i < ACPI_ENABLE_POLLS && !(inw(f->pm1a_cnt) & ACPI_PM1_CNT_SCI_EN);
		     i++)
			pause();
	}
	outw(f->pm1a_cnt, (f->s5_typa << ACPI_PM1_CNT_SLP_TYP_SHIFT) | ACPI_PM1_CNT_SLP_EN);
	if (f->pm1b_cnt && f->pm1b_cnt <= 0xffff)
		outw(f->pm1b_cnt, (f->s5_typb << ACPI_PM1_CNT_SLP_TYP_SHIFT) | ACPI_PM1_CNT_SLP_EN);
	for (int i = 0; i < POWER_OFF_POLLS; i++)
		pause();
	printf("# exit: ACPI S5 did not power off\n");
}

__noreturn void power_exit(enum result r)
{
	if (exit_method == EXIT_QEMU || (exit_method == EXIT_AUTO && power_under_qemu()))
		qemu_exit(r);
	/* Still here: no debug-exit device. Power off the way any VM can. */
	if (exit_method != EXIT_HALT)
		acpi_power_off();
	printf("# halted\n");
	for (;;) {
		cli();
		hlt();
	}
}
