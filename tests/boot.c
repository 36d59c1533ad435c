// SPDX-License-Identifier: MIT
/*
 * boot: the loader's information arrives intact.
 *
 * Every later figure depends on the kernel having been started the way the
 * user asked: the command line carries the experiment's settings, the
 * memory map bounds where the AP trampoline may go, and the RSDP is the
 * root of every ACPI table the SMP and timer code reads. A pass means the
 * command line parsed, the memory map is well-formed, and an RSDP was
 * found with valid checksums on this boot path (Multiboot 2 tags under
 * GRUB, a BIOS-area scan under QEMU -kernel). The host runner compares the
 * DATA line's command line and RAM size with what it gave QEMU.
 */
#include "boot/boot_info.h"
#include "kernel/kernel.h"
#include "kernel/lib/json.h"
#include "kernel/lib/string.h"
#include "kernel/options.h"
#include "kernel/test/test.h"
#include "kernel/x86/percpu.h"

static void emit_data(const struct boot_info *bi)
{
	char buf[BOOT_CMDLINE_MAX + 512];
	struct json j;

	report_data_begin(&j, buf, "boot");
	json_string(&j, "protocol", bi->protocol);
	json_string(&j, "loader", bi->loader);
	json_string(&j, "cmdline", bi->cmdline);
	json_u64(&j, "mem_regions", bi->mem_count);
	json_u64(&j, "mem_ram_kib", boot_info_ram_kib(bi));
	json_u64(&j, "mem_extent_kib", boot_info_ram_extent_kib(bi));
	json_string(&j, "rsdp_source", acpi.rsdp_source ? acpi.rsdp_source : "none");
	/* A loader's copy has no address of its own. */
	if (acpi.rsdp_address)
		json_hex(&j, "rsdp", acpi.rsdp_address);
	json_u64(&j, "acpi_revision", acpi.rsdp.revision);
	json_string(&j, "root_table", acpi.root_address ? (acpi.xsdt ? "XSDT" : "RSDT") : "none");
	json_hex(&j, "root_table_address", acpi.root_address);
	json_u64(&j, "acpi_tables", acpi.table_count);
	report_data_end(&j);
}

DEFINE_TEST(boot, "the loader's information arrives intact", 0)
{
	const struct boot_info *bi = boot_info;
	char why[64];
	u32 first = 0, second = 0;
	bool disjoint;

	report_info("command line: \"%s\"", bi->cmdline);
	report(!bi->problems[0], "boot information well-formed%s%s", bi->problems[0] ? ": " : "",
	       bi->problems);
	report(bi->loader[0], "loader names itself (\"%s\")", bi->loader);

	for (u32 i = 0; i < bi->mem_count; i++)
		report_info("memory %016llx-%016llx type %u", bi->mem[i].base,
			    (bi->mem[i].base + bi->mem[i].length - 1), bi->mem[i].type);
	report(bi->mem_count > 0, "memory map has %u regions", bi->mem_count);
	/* Order is the loader's own: the map promises none (boot_info.h). */
	if (!boot_info_regions_in_order(bi))
		report_info("the loader's memory map is not in address order");
	disjoint = boot_info_regions_disjoint(bi, &first, &second);
	if (!disjoint)
		report_info("regions %u and %u overlap", first, second);
	report(disjoint, "memory map regions disjoint");
	report(boot_info_ram_kib(bi) >= 1024, "memory map reports %llu KiB of RAM",
	       boot_info_ram_kib(bi));

	report_prefix_push("acpi");
	report(acpi.rsdp_source != NULL, "RSDP found (%s)",
	       acpi.rsdp_source ? acpi.rsdp_source : "none");
	report(acpi_rsdp_valid(&acpi.rsdp,
			       acpi.rsdp.revision >= 2 ? sizeof(acpi.rsdp) : ACPI_RSDP_V1_SIZE, why,
			       sizeof(why)),
	       "RSDP checksum valid (revision %u)", acpi.rsdp.revision);
	report(acpi_ok, "root table %s valid with %u tables%s%s", acpi.xsdt ? "XSDT" : "RSDT",
	       acpi.table_count, acpi.problems[0] ? ": " : "", acpi.problems);
	report(acpi_find(&acpi, "FACP", 0) != NULL, "FADT present and valid");
	report_prefix_pop();

	/* The NMI fault=early_nmi sent before timers and SMP: counted, not fatal. */
	if (kernel_options.fault == FAULT_EARLY_NMI)
		report(this_cpu()->nmi_count >= 1,
		       "an NMI sent during early boot was taken and counted (%llu NMIs)",
		       this_cpu()->nmi_count);

	emit_data(bi);
}
