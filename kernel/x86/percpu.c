// SPDX-License-Identifier: MIT
/*
 * The table of CPUs: every struct percpu that bring-up created, by index
 * (the BSP is 0). Kept here, not with the bring-up code, so that the
 * ground floor (delay calibration, the watchdog, the NMI entry) can walk
 * the CPUs without reaching up to the code that starts them.
 */
#include "kernel/x86/percpu.h"

static struct percpu *table[MAX_CPUS];
static u32 count;

bool cpu_add(struct percpu *cpu)
{
	if (count == MAX_CPUS)
		return false;
	cpu->index = count;
	table[count++] = cpu;
	return true;
}

u32 cpu_count(void)
{
	return count;
}

struct percpu *cpu_at(u32 index)
{
	return index < count ? table[index] : NULL;
}

u32 cpu_online_count(void)
{
	u32 n = 0;

	for (u32 i = 0; i < count; i++)
		n += table[i]->state == CPU_ONLINE;
	return n;
}
