// SPDX-License-Identifier: MIT
/*
 * nmi_storm: every CPU sends NMI IPIs to every other at a high rate, and
 * every NMI is accounted for.
 *
 * The half of experiment 2 that needs no PMU, so it runs for real under
 * TCG. Each CPU posts mail to a target's mailbox and sends it an NMI,
 * round-robin over the others starting with its neighbour, for a fixed
 * time; the one NMI handler consumes the mail on every NMI. A pass means
 * every CPU sent and received, no CPU received more NMIs than were sent
 * to all (SDM Vol 3A 6.7.1: NMIs merge, they never multiply), every
 * posted IPI was seen by a handler that ran after it was posted, every
 * NMI that found nothing is explained by an earlier one that found
 * several IPIs (each raised an NMI of its own, which may have been left
 * pending), and the handler never nested.
 */
#include "apic/smp/smp.h"
#include "kernel/kernel.h"
#include "kernel/lib/json.h"
#include "kernel/test/marker.h"
#include "kernel/test/test.h"
#include "kernel/test/watchdog.h"
#include "kernel/time/clock.h"
#include "kernel/x86/nmi.h"
#include "kernel/x86/x86.h"
#include "pmu/options.h"

#define STORM_SECONDS 1
/* Per CPU, unless pmu.nmi_ipi= sets another. */
#define STORM_DEFAULT_RATE 20000
#define STORM_SLACK_US 10000000
/* Mail is seen by the NMI that follows it; on a loaded host that takes a while. */
#define DRAIN_TIMEOUT_US 2000000

struct storm {
	u64 end_tsc;
	u64 interval;
};

static struct nmi_counts before[MAX_CPUS];
static u64 sent_before[MAX_CPUS];

/* The online CPU after `after` (by index, wrapping), skipping self. */
static const struct percpu *next_target(u32 self, u32 after)
{
	u32 count = cpu_count();

	for (u32 step = 1; step <= count; step++) {
		u32 i = (after + step) % count;

		if (i != self && cpu_at(i)->state == CPU_ONLINE)
			return cpu_at(i);
	}
	return NULL;
}

/* At least one NMI each, the first to the neighbour: every CPU receives one. */
static void storm_cpu(void *arg)
{
	const struct storm *s = arg;
	u32 self = this_cpu()->index;
	struct nmi_cpu *n = nmi_cpu(self);
	const struct percpu *to = next_target(self, self);
	u64 next = rdtsc();

	if (!to)
		return;
	do {
		while (rdtsc() < next)
			pause();
		nmi_ipi_send(to);
		n->ipis_sent++;
		to = next_target(self, to->index);
		next += s->interval;
	} while (rdtsc() < s->end_tsc);
}

static bool mail_drained(void *arg)
{
	(void)arg;
	for (u32 i = 0; i < cpu_count(); i++)
		if (cpu_at(i)->state == CPU_ONLINE && nmi_cpu(i)->mail)
			return false;
	return true;
}

/* What one storm did, summed over the online CPUs. */
struct storm_tally {
	u64 rate;
	u32 cpus, senders, receivers, over;
	u64 sent, min_received, undrained;
	struct nmi_counts total;
	bool finished, drained;
};

/* Each online CPU's counts before the storm; returns how many are online. */
static u32 storm_snapshot(void)
{
	u32 cpus = 0;

	for (u32 i = 0; i < cpu_count(); i++) {
		if (cpu_at(i)->state != CPU_ONLINE)
			continue;
		cpus++;
		before[i] = nmi_cpu(i)->counts;
		sent_before[i] = nmi_cpu(i)->ipis_sent;
	}
	return cpus;
}

/* The storm itself, between the host's marks, then the wait for its last mail. */
static void storm_measure(struct storm_tally *t)
{
	struct storm s = { .interval = clock.tsc_hz / t->rate };

	watchdog_extend(STORM_SECONDS);
	host_mark(HOST_MARK_BEGIN, "nmi_storm");
	s.end_tsc = rdtsc() + STORM_SECONDS * clock.tsc_hz;
	t->finished = smp_run_all(storm_cpu, &s, STORM_SECONDS * 1000000 + STORM_SLACK_US);
	host_mark(HOST_MARK_END, "nmi_storm");
	t->drained = smp_wait(mail_drained, NULL, DRAIN_TIMEOUT_US);
}

/* Each online CPU's counts since storm_snapshot(), added into t. */
static void storm_sum(struct storm_tally *t)
{
	t->min_received = ~0ULL;
	for (u32 i = 0; i < cpu_count(); i++) {
		struct nmi_cpu *n = nmi_cpu(i);
		struct nmi_counts d;
		u64 cpu_sent;

		if (cpu_at(i)->state != CPU_ONLINE)
			continue;
		nmi_counts_sub(&d, &n->counts, &before[i]);
		cpu_sent = n->ipis_sent - sent_before[i];
		nmi_counts_add(&t->total, &d);
		t->sent += cpu_sent;
		t->senders += cpu_sent > 0;
		t->receivers += d.nmis > 0;
		t->min_received = MIN(t->min_received, d.nmis);
		t->undrained += n->mail;
		if (!nmi_counts_explained(&d))
			t->over++;
	}
}

static void storm_report(const struct storm_tally *t)
{
	report(t->finished, "every CPU finished its storm within %u s", STORM_SECONDS + 10);
	report_eq(t->senders, t->cpus, "CPUs that sent NMIs");
	report_eq(t->receivers, t->cpus, "CPUs that received NMIs");
	report(t->total.nmis <= t->sent, "NMIs received (%llu) do not exceed NMIs sent (%llu)",
	       t->total.nmis, t->sent);
	report(t->drained && t->total.ipis == t->sent,
	       "every NMI IPI was seen by a handler (%llu of %llu, %llu still posted)",
	       t->total.ipis, t->sent, t->undrained);
	report(!t->over,
	       "NMIs with no source (%llu) are explained by merged IPIs (credit %llu) on every CPU",
	       t->total.unknown, t->total.credit);
	report_eq(t->total.nested, 0, "nested NMI handler entries");
}

static void storm_data(const struct storm_tally *t)
{
	char buf[512];
	struct json j;

	report_data_begin(&j, buf, "nmi_storm");
	json_u64(&j, "cpus", t->cpus);
	json_u64(&j, "seconds", STORM_SECONDS);
	json_u64(&j, "rate_per_cpu", t->rate);
	json_u64(&j, "sent", t->sent);
	json_u64(&j, "sent_per_s_per_cpu", t->sent / STORM_SECONDS / t->cpus);
	json_u64(&j, "received", t->total.nmis);
	json_u64(&j, "min_received_per_cpu", t->min_received);
	json_u64(&j, "ipis_seen", t->total.ipis);
	json_u64(&j, "multi", t->total.multi);
	json_u64(&j, "merged", t->total.merged);
	json_u64(&j, "unknown_nmis", t->total.unknown);
	json_u64(&j, "nested", t->total.nested);
	report_data_end(&j);
}

DEFINE_TEST(nmi_storm, "NMI IPIs between all CPUs are all accounted for", 0)
{
	struct storm_tally t = {
		.rate = pmu_options.nmi_ipi ? pmu_options.nmi_ipi : STORM_DEFAULT_RATE,
	};

	t.cpus = storm_snapshot();
	if (t.cpus < 2) {
		report_skip("needs two online CPUs, %u online", t.cpus);
		return;
	}
	storm_measure(&t);
	storm_sum(&t);
	storm_report(&t);
	storm_data(&t);
}
