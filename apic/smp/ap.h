/* SPDX-License-Identifier: MIT */
/*
 * The floor every bring-up mode stands on: each AP's record, its
 * INIT-SIPI-SIPI kick (alone or in batches), the BSP's wait and the wake
 * IPI. The modes (serial and linux-6.5 in smp.c, parallel.c) and the
 * TSC-sync check call down into it; it calls none of them. The record,
 * struct smp_cpu (smp.h), is what travels down a bring-up path, not the
 * CPU's index.
 */
#ifndef APIC_SMP_AP_H
#define APIC_SMP_AP_H

#include "apic/smp/smp.h"

/* Tie cpu's bring-up record to it, once its index is set (cpu_add()). */
void smp_cpu_bind(struct percpu *cpu);
/* cpu's bring-up record. */
struct smp_cpu *smp_cpu_of(const struct percpu *cpu);

/*
 * INIT, INIT de-assert, SIPI, SIPI to one AP; false, with the reason kept
 * (smp_kick_failure()), when a send was never delivered or the ESR
 * latched an error.
 */
bool smp_kick(struct smp_cpu *ap);
/* Kick every AP, in batches, first (NULL for none) alone before the rest. */
void smp_kick_all(struct smp_cpu *first);
/* Whether ap is online; stamps, on the BSP, the first time it sees so. */
bool smp_seen_online(struct smp_cpu *ap);

#endif
