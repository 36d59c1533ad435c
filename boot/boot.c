// SPDX-License-Identifier: MIT
/*
 * The 64-bit side of the boot stub: turn the loader's information into
 * struct boot_info and hand over to kmain(). Nothing past this file knows
 * which Multiboot version started us.
 */
#include "boot/boot_info.h"
#include "boot/multiboot.h"
#include "kernel/kernel.h"
#include "kernel/x86/phys.h"

static struct boot_info boot_info_storage;

void boot_main(u32 magic, u32 mbi);

void boot_main(u32 magic, u32 mbi)
{
	struct boot_info *bi = &boot_info_storage;

	if (magic == MB2_BOOT_MAGIC)
		boot_info_from_mb2(mbi, phys_map, bi);
	else
		boot_info_from_mb1(mbi, phys_map, bi);
	kmain(bi);
}
