/* SPDX-License-Identifier: MIT */
/*
 * Multiboot 1 and 2 information turned into the neutral struct
 * boot_info, and what its memory map says about RAM.
 */
#ifndef BOOT_BOOT_INFO_H
#define BOOT_BOOT_INFO_H

#include "kernel/x86/boot_info.h"

/*
 * Fill *bi from a Multiboot 1 or 2 information structure at physical
 * address mbi. Returns false only when nothing usable could be read;
 * smaller defects are recorded in bi->problems.
 */
bool boot_info_from_mb1(u64 mbi, phys_reader phys, struct boot_info *bi);
bool boot_info_from_mb2(u64 mbi, phys_reader phys, struct boot_info *bi);

/* RAM the firmware reports: available plus ACPI-reclaimable, in KiB. */
u64 boot_info_ram_kib(const struct boot_info *bi);
/*
 * The guest RAM the map accounts for, in KiB, in the layout PC firmware
 * and QEMU use: [0, end of the highest RAM, ACPI or NVS region below
 * 4 GiB) plus every such region above 4 GiB. Firmware carves reserved
 * pieces out of RAM (UEFI runtime data), so this, not the sum of
 * available regions, is what matches the VM's configured memory.
 */
u64 boot_info_ram_extent_kib(const struct boot_info *bi);
/*
 * Whether no two regions overlap, in whatever order they come: false with
 * the first overlapping pair in *a < *b. ACPI's E820 interface (ACPI 6.4,
 * 15.1) and the Multiboot maps built from it promise no order, and qboot
 * hands its map over unsorted; Linux sorts it before use
 * (e820__update_table()).
 */
bool boot_info_regions_disjoint(const struct boot_info *bi, u32 *a, u32 *b);
/* Whether the loader gave the regions in ascending address order. */
bool boot_info_regions_in_order(const struct boot_info *bi);

#endif
