// SPDX-License-Identifier: MIT
/* The per-test watchdog; see watchdog.h. */
#include "kernel/test/watchdog.h"
#include "kernel/lib/printf.h"
#include "kernel/test/options.h"
#include "kernel/test/test.h"
#include "kernel/time/clock.h"
#include "kernel/x86/nmi.h"
#include "kernel/x86/x86.h"

/*
 * Tests that visit every CPU in turn take longer on big machines: under
 * TCG on two host cores, 300 vCPUs are slow to answer one at a time.
 */
#define CPUS_PER_EXTRA_SECOND 10
/* How long the APs get to say where they are. */
#define WHEREABOUTS_TIMEOUT_US 100000

static struct {
	u64 seq;   /* the run's test count when the current test was seen first */
	u64 since; /* jiffies then */
	u64 extra; /* seconds the test added */
	bool firing;
} dog;

static volatile bool asked[MAX_CPUS];
static volatile u64 found_rip[MAX_CPUS];

void watchdog_extend(u64 seconds)
{
	dog.extra += seconds;
}

/* An NMI source: the watchdog's question, answered with where this CPU is. */
static u64 watchdog_nmi(const struct trap_frame *f, u64 entry_tsc)
{
	u32 i = this_cpu()->index;

	(void)entry_tsc;
	if (!asked[i])
		return 0;
	found_rip[i] = f->rip;
	__atomic_store_n(&asked[i], false, __ATOMIC_RELEASE);
	return 1;
}

DEFINE_NMI_SOURCE(watchdog, watchdog_nmi);

static const char *state_name(u32 state)
{
	return state == CPU_ONLINE ? "online" : state == CPU_ALIVE ? "alive" : "offline";
}

static bool all_answered(void)
{
	for (u32 i = 1; i < cpu_count(); i++)
		if (asked[i])
			return false;
	return true;
}

/* Ask every online AP where it is (an NMI reaches one that spins with IF clear). */
static void whereabouts(const struct trap_frame *bsp_frame)
{
	u64 start = rdtsc(), limit = WHEREABOUTS_TIMEOUT_US * (clock.tsc_hz / 1000000);

	for (u32 i = 1; i < cpu_count(); i++) {
		const struct percpu *cpu = cpu_at(i);

		if (cpu->state == CPU_OFFLINE)
			continue;
		asked[i] = true;
		nmi_send(cpu);
	}
	while (!all_answered() && rdtsc() - start < limit)
		pause();

	printf("# WATCHDOG: CPU 0 (APIC ID %u): running the test, RIP %016llx\n",
	       cpu_count() ? cpu_at(0)->apic_id : 0, bsp_frame->rip);
	for (u32 i = 1; i < cpu_count(); i++) {
		const struct percpu *cpu = cpu_at(i);
		void (*work)(void *) = cpu->work;

		if (cpu->state == CPU_OFFLINE) {
			printf("# WATCHDOG: CPU %u (APIC ID %u): offline\n", i, cpu->apic_id);
			continue;
		}
		if (asked[i])
			printf("# WATCHDOG: CPU %u (APIC ID %u): %s, %s, no answer to an NMI\n", i,
			       cpu->apic_id, state_name(cpu->state), work ? "busy" : "idle");
		else if (work)
			printf("# WATCHDOG: CPU %u (APIC ID %u): %s, running work %p, RIP "
			       "%016llx\n",
			       i, cpu->apic_id, state_name(cpu->state), (void *)work, found_rip[i]);
		else
			printf("# WATCHDOG: CPU %u (APIC ID %u): %s, idle, RIP %016llx\n", i,
			       cpu->apic_id, state_name(cpu->state), found_rip[i]);
	}
}

void watchdog_tick(const struct trap_frame *f)
{
	const struct test *t;
	u64 seq, limit;
	char reason[KTAP_REASON_MAX];

	if (!test_options.watchdog || dog.firing)
		return;
	t = tests_current(&seq);
	if (!t || seq != dog.seq) {
		dog.seq = seq;
		dog.since = jiffies;
		dog.extra = 0;
		return;
	}
	limit = (test_options.watchdog + dog.extra + cpu_online_count() / CPUS_PER_EXTRA_SECOND) *
		clock.hz;
	if (jiffies - dog.since < limit)
		return;

	dog.firing = true;
	printf("# WATCHDOG: test '%s' still running after %llu s (watchdog=%llu)\n", t->name,
	       ((jiffies - dog.since) / clock.hz), test_options.watchdog);
	whereabouts(f);
	snprintf(reason, sizeof(reason), "watchdog: still running after %llu s",
		 (limit / clock.hz));
	tests_end_run(RESULT_TIMEOUT, reason);
}
