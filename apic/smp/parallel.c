// SPDX-License-Identifier: MIT
/*
 * Parallel bring-up's calibration line: the host-parallelism probe, the
 * APs parked for a source's lpj or their turn to calibrate, and the
 * BSP's kick, grants and wait, on the floor ap.c lays. Each AP's own
 * path hands its record (struct smp_cpu) down. See smp.h.
 */
#include "apic/bringup.h"
#include "apic/options.h"
#include "apic/smp/ap.h"
#include "apic/smp/rules.h"
#include "apic/smp/smp.h"
#include "apic/smp/smp_internal.h"
#include "apic/smp/turns.h"
#include "kernel/lib/json.h"
#include "kernel/lib/printf.h"
#include "kernel/time/clock.h"
#include "kernel/time/delay.h"
#include "kernel/x86/x86.h"

/*
 * Hang bounds, not targets: on a loaded 2-core TCG host 64 APs
 * calibrating at once took over a minute.
 */
#define PARALLEL_TIMEOUT_US (30 * 1000000ULL)
#define PARALLEL_TIMEOUT_PER_AP_US 1000000ULL
/*
 * A parked AP PAUSEs this many times, then HLTs. It has no tick of its
 * own: an APIC timer armed as a backstop on every parked AP doubled each
 * calibration's cost under TCG (16 vCPUs on 4 nodes, a loaded host), so
 * the BSP nudges parked APs instead, once AP_ONLINE_TIMEOUT_US has passed,
 * for them to see their own timeouts.
 */
#define PARK_PAUSES 256
/* The host-parallelism probe: APs in it, their window, and the lead-in. */
#define PROBE_MAX_APS 4
#define PROBE_WINDOW_US 1000
#define PROBE_LEAD_US 200
#define PROBE_ARRIVE_US 5000
#define PROBE_SOLO_TRIES 2
#define PROBE_SOLO_US 500
#define PROBE_ALIVE_TIMEOUT_US (5 * 1000000ULL)

/*
 * Parallel bring-up's line of calibrating APs: rank r may start once its
 * turn comes (turns.h). The BSP grants the first `concurrency` turns;
 * each AP that finishes grants one more and wakes its holder.
 */
static struct calibration_line {
	u32 calibrators;
	struct turns turns; /* who may calibrate now (turns.h) */
	u32 concurrency;
	char why[160];
	u32 parallelism_x100; /* what the probe measured; 0 when none ran */
	u32 probed;
	volatile u32 probe_round, probe_arrived;
	volatile u64 probe_start, probe_end;
	u64 solo_loops, yardstick_us;
	struct smp_cpu *ranked[MAX_CPUS];
	/* APs given up on: never alive within AP_ONLINE_TIMEOUT_US of their kick. */
	u8 given_up[MAX_CPUS];
} cal_line;
_Static_assert(TURNS_MAX >= MAX_CPUS, "a turn for every CPU");

/* A loop the probe counts: as many turns as the host lets it run before end. */
static u64 __attribute__((noinline)) spin_until(u64 end)
{
	u64 n = 0;

	while (rdtsc() < end) {
		n++;
		asm volatile("" ::: "memory");
	}
	return n;
}

/* The probe runs on the calibrating APs after the first, which is calibrating meanwhile. */
bool smp_in_probe(const struct smp_cpu *ap)
{
	return delay_cpu(ap->cpu->index)->lpj_plan == LPJ_PLAN_CALIBRATE && ap->cal_rank >= 1 &&
	       ap->cal_rank <= cal_line.probed;
}

/* On a parked AP: run the probe's window once per round it is asked to. */
static bool probe_wanted(const struct smp_cpu *ap)
{
	return smp_in_probe(ap) && ap->probe_round != cal_line.probe_round;
}

/*
 * The window opens once every AP in the probe is running: the last to
 * arrive sets its start a little ahead, so that a vCPU the host wakes
 * late is not counted as slow, only one that the host cannot run beside
 * the others. An AP that waits PROBE_ARRIVE_US for the rest counts 0.
 */
static void probe_run(struct smp_cpu *ap)
{
	u32 round = cal_line.probe_round;
	u64 per_us = clock.tsc_hz / 1000000, t0 = rdtsc();

	ap->probe_loops = 0;
	if (__atomic_add_fetch(&cal_line.probe_arrived, 1, __ATOMIC_ACQ_REL) == cal_line.probed) {
		u64 start = rdtsc() + PROBE_LEAD_US * per_us;

		__atomic_store_n(&cal_line.probe_end, start + PROBE_WINDOW_US * per_us,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&cal_line.probe_start, start, __ATOMIC_RELEASE);
	}
	while (!__atomic_load_n(&cal_line.probe_start, __ATOMIC_ACQUIRE) &&
	       rdtsc() - t0 < PROBE_ARRIVE_US * per_us)
		pause();
	if (cal_line.probe_start) {
		while (rdtsc() < cal_line.probe_start)
			pause();
		ap->probe_loops = spin_until(cal_line.probe_end);
	}
	__atomic_store_n(&ap->probe_round, round, __ATOMIC_RELEASE);
	/* The BSP waits for the answers in HLT: without a wake, until its next tick. */
	smp_wake(cpu_at(0));
}

/*
 * Park the calling AP until ready(ap) or timeout_us: PAUSE a little, then
 * HLT, woken by whoever makes it ready (a fixed IPI), or by the BSP's
 * nudges once a wait runs long (wait_parallel()). A spinning vCPU takes
 * host time its siblings need; a halted one gives it back. False on
 * timeout.
 */
static bool ap_park(struct smp_cpu *ap, bool (*ready)(const struct smp_cpu *), const char *what,
		    u64 timeout_us)
{
	u64 start = rdtsc(), limit = timeout_us * (clock.tsc_hz / 1000000);
	bool ok = true;

	ap->waited_for = what;
	ap->tsc_wait_start = start;
	for (u32 spins = 0; !ready(ap); spins++) {
		if (probe_wanted(ap)) {
			probe_run(ap);
			continue;
		}
		if (rdtsc() - start > limit) {
			ok = false;
			break;
		}
		if (spins < PARK_PAUSES) {
			pause();
			continue;
		}
		cli();
		if (ready(ap) || probe_wanted(ap)) {
			sti();
			continue;
		}
		/* STI's shadow covers HLT: a wake-up between check and HLT ends it. */
		asm volatile("sti; hlt" ::: "memory");
	}
	ap->tsc_wait_end = rdtsc();
	return ok;
}

static bool source_ready(const struct smp_cpu *ap)
{
	const struct percpu *from = delay_cpu(ap->cpu->index)->lpj_from;

	return __atomic_load_n(&delay_cpu(from->index)->lpj_ready, __ATOMIC_ACQUIRE);
}

static bool my_turn(const struct smp_cpu *ap)
{
	return turns_mine(&cal_line.turns, ap->cal_rank);
}

static void wake_rank(void *ctx, u32 rank)
{
	(void)ctx;
	smp_wake(cal_line.ranked[rank]->cpu);
}

static u64 parallel_timeout_us(void)
{
	return PARALLEL_TIMEOUT_US + (cpu_count() - 1) * PARALLEL_TIMEOUT_PER_AP_US;
}

/*
 * An AP's lpj in parallel bring-up: a copier waits (parked) for its
 * source, a calibrating AP for its turn; then the plan runs, the next
 * turn is granted and the CPUs waiting on this one are woken. Serially
 * every source is online before its copiers start, and nobody waits.
 */
void smp_ap_lpj(struct smp_cpu *ap)
{
	bool parallel = bringup_mode_chosen()->calibration_line;
	u32 plan = delay_cpu(ap->cpu->index)->lpj_plan;
	bool turn = parallel && plan == LPJ_PLAN_CALIBRATE;

	if (parallel && plan == LPJ_PLAN_COPY && !source_ready(ap))
		ap_park(ap, source_ready, "source", parallel_timeout_us());
	/*
	 * A copier that must calibrate after all (its source is out of
	 * reach after a TSC warp) takes a turn at the end of the line
	 * rather than calibrate beside the others.
	 */
	if (parallel && plan == LPJ_PLAN_COPY && delay_ap_must_calibrate()) {
		u32 rank = turns_join(&cal_line.turns);

		if (rank < TURNS_MAX) {
			ap->cal_rank = rank;
			cal_line.ranked[rank] = ap;
			turn = true;
		}
	}
	if (turn && !my_turn(ap))
		ap_park(ap, my_turn, "turn", parallel_timeout_us());
	delay_calibrate_ap();
	if (!parallel)
		return;
	if (turn)
		turns_grant(&cal_line.turns, wake_rank, NULL);
	for (u32 i = ap->cpu->index + 1; i < cpu_count(); i++) {
		const struct delay_cpu *other = delay_cpu(i);

		if (other->lpj_from == ap->cpu && other->lpj_plan == LPJ_PLAN_COPY)
			smp_wake(cpu_at(i));
	}
}

static bool answered(const struct smp_cpu *ap)
{
	return __atomic_load_n(&ap->probe_round, __ATOMIC_ACQUIRE) == cal_line.probe_round;
}

/* Each AP in the probe answered, or has left its park to calibrate and never will. */
static bool probe_done(void *arg)
{
	(void)arg;
	for (u32 r = 1; r <= cal_line.probed; r++) {
		const struct smp_cpu *ap = cal_line.ranked[r];

		if (!answered(ap) && !ap->tsc_wait_end && ap->cpu->state != CPU_ONLINE)
			return false;
	}
	return true;
}

static bool probed_alive(void *arg)
{
	(void)arg;
	for (u32 r = 1; r <= cal_line.probed; r++)
		if (cal_line.ranked[r]->cpu->state < CPU_ALIVE)
			return false;
	return true;
}

/* The calibrating APs the probe runs on: up to PROBE_MAX_APS after the first. */
static u32 probe_aps(void)
{
	return cal_line.calibrators ? MIN(cal_line.calibrators - 1, (u32)PROBE_MAX_APS) : 0;
}

/*
 * How many APs may calibrate at once. Each one that calibrates against
 * the tick needs the host to run it whenever a tick lands; where the host
 * has fewer CPUs than there are calibrating APs, concurrent calibrations
 * only stretch each other (the seed: 16 APs calibrating at once on 2 host
 * cores took 5.5 s, one at a time 1.2 s). So measure: before any AP runs
 * the BSP runs a loop alone (the best of a few short windows); then,
 * while the first calibrating AP is already at work (so that serialized
 * is never slower than serial), up to PROBE_MAX_APS of the other
 * calibrating APs run it together for PROBE_WINDOW_US;
 * their combined count over the BSP's is the parallelism the host has
 * beside the first (smp_concurrency_rule()).
 */
static void choose_concurrency(void)
{
	u64 together[PROBE_MAX_APS];
	u32 n = probe_aps();

	if (cal_line.calibrators <= 1) {
		cal_line.concurrency = 1;
		snprintf(cal_line.why, sizeof(cal_line.why), "%u AP calibrates",
			 cal_line.calibrators);
		return;
	}
	if (apic_options.parallel_calibrate == PARALLEL_CALIBRATE_SERIALIZE) {
		cal_line.concurrency = 1;
		snprintf(cal_line.why, sizeof(cal_line.why),
			 "parallel_calibrate=serialize: one at a time");
		return;
	}
	if (apic_options.parallel_calibrate == PARALLEL_CALIBRATE_CONCURRENT) {
		cal_line.concurrency = cal_line.calibrators;
		snprintf(cal_line.why, sizeof(cal_line.why),
			 "parallel_calibrate=concurrent: all at once");
		return;
	}
	cal_line.concurrency = 1;
	cal_line.probed = n;
	if (!smp_wait(probed_alive, NULL, PROBE_ALIVE_TIMEOUT_US)) {
		snprintf(cal_line.why, sizeof(cal_line.why),
			 "auto: the probe's APs did not start in time: one at a time");
		return;
	}
	cal_line.probe_start = cal_line.probe_end = 0;
	cal_line.probe_arrived = 0;
	__atomic_store_n(&cal_line.probe_round, 1, __ATOMIC_RELEASE);
	for (u32 r = 1; r <= n; r++)
		smp_wake(cal_line.ranked[r]->cpu);
	if (!smp_wait(probe_done, NULL, PROBE_ALIVE_TIMEOUT_US)) {
		snprintf(cal_line.why, sizeof(cal_line.why),
			 "auto: the probe's APs did not answer: one at a time");
		return;
	}
	/* An AP whose turn came before the probe reached it ran nothing: 0. */
	for (u32 r = 1; r <= n; r++) {
		const struct smp_cpu *ap = cal_line.ranked[r];

		together[r - 1] = answered(ap) ? ap->probe_loops : 0;
	}
	cal_line.concurrency =
		smp_concurrency_rule(cal_line.solo_loops, together, n, &cal_line.parallelism_x100);
	snprintf(cal_line.why, sizeof(cal_line.why),
		 "probe: %u APs beside the first ran at %u.%02u CPUs: %s", n,
		 cal_line.parallelism_x100 / 100, cal_line.parallelism_x100 % 100,
		 cal_line.concurrency == 1 ? "serialized, the host has no CPU to spare"
					   : "concurrent");
}

/*
 * An AP that never came alive holds no turn and offers no value: its turn
 * goes to the next in line and its copiers are woken to calibrate.
 */
static void give_up_on(struct smp_cpu *dead)
{
	u32 index = dead->cpu->index;

	cal_line.given_up[index] = 1;
	if (delay_cpu(index)->lpj_plan == LPJ_PLAN_CALIBRATE)
		turns_give_up(&cal_line.turns, dead->cal_rank, wake_rank, NULL);
	__atomic_store_n(&delay_cpu(index)->lpj_ready, 1, __ATOMIC_RELEASE);
	for (u32 i = index + 1; i < cpu_count(); i++)
		if (delay_cpu(i)->lpj_from == dead->cpu)
			smp_wake(cpu_at(i));
}

#define PARALLEL_POLL_US 100000

/* Every AP online, or given up. */
static bool all_online(void *arg)
{
	bool all = true;

	(void)arg;
	for (u32 i = 1; i < cpu_count(); i++)
		all &= smp_seen_online(smp_cpu(i)) || cal_line.given_up[i];
	return all;
}

/* Not alive AP_ONLINE_TIMEOUT_US after its own kick, or its kick failed. */
static bool silent(const struct smp_cpu *ap, u64 per_us)
{
	return ap->cpu->state == CPU_OFFLINE &&
	       (smp_kick_failure(ap->cpu->index) ||
		(rdtsc() - ap->tsc_init) / per_us >= AP_ONLINE_TIMEOUT_US);
}

/*
 * Every AP online or given up, or the bound. An AP is given up once
 * AP_ONLINE_TIMEOUT_US has passed since its own kick, which kick_all()
 * has mostly waited out already: a silent AP costs that timeout once,
 * not once there and again here.
 */
static void wait_parallel(void)
{
	u64 start = rdtsc(), per_us = clock.tsc_hz / 1000000;

	while (!smp_wait(all_online, NULL, PARALLEL_POLL_US)) {
		bool gave_up = false;

		if ((rdtsc() - start) / per_us > parallel_timeout_us())
			return;
		for (u32 i = 1; i < cpu_count(); i++) {
			if (!cal_line.given_up[i] && silent(smp_cpu(i), per_us)) {
				give_up_on(smp_cpu(i));
				gave_up = true;
			}
		}
		if (!gave_up && (rdtsc() - start) / per_us < AP_ONLINE_TIMEOUT_US)
			continue;
		/* Parked APs have no tick: a nudge lets each see its own timeout. */
		for (u32 i = 1; i < cpu_count(); i++)
			if (cpu_at(i)->state == CPU_ALIVE)
				smp_wake(cpu_at(i));
	}
}

/* The calibrating APs in line, and the probe's yardstick (see choose_concurrency()). */
void smp_parallel_prepare(void)
{
	u64 t0 = rdtsc();

	cal_line.calibrators = 0;
	for (u32 i = 1; i < cpu_count(); i++) {
		struct smp_cpu *ap = smp_cpu(i);

		if (delay_cpu(i)->lpj_plan == LPJ_PLAN_CALIBRATE) {
			ap->cal_rank = cal_line.calibrators;
			cal_line.ranked[cal_line.calibrators++] = ap;
		}
	}
	/*
	 * Before any AP runs: the best of a few short windows, since a host
	 * that takes the BSP away for part of one would make every AP look
	 * faster than one CPU. It is set-up, like the CPU list, and left out
	 * of the bring-up time (its cost is yardstick_us in the DATA): inside
	 * it would move the first calibration a tick later one time in four.
	 */
	if (cal_line.calibrators > 1 &&
	    apic_options.parallel_calibrate == PARALLEL_CALIBRATE_AUTO) {
		for (int i = 0; i < PROBE_SOLO_TRIES; i++)
			cal_line.solo_loops =
				MAX(cal_line.solo_loops,
				    spin_until(rdtsc() + PROBE_SOLO_US * (clock.tsc_hz / 1000000)));
		cal_line.solo_loops = cal_line.solo_loops * PROBE_WINDOW_US / PROBE_SOLO_US;
	}
	cal_line.yardstick_us = tsc_to_us(rdtsc() - t0);
}

static bool kicked(const struct smp_cpu *ap)
{
	return ap->tsc_init != 0;
}

static bool alive(void *arg)
{
	const struct smp_cpu *ap = arg;

	return __atomic_load_n(&ap->cpu->state, __ATOMIC_ACQUIRE) >= CPU_ALIVE;
}

static bool seen_online(void *arg)
{
	return smp_seen_online(arg);
}

/*
 * An AP kicked ahead of the ones before it are online, once the one
 * kicked before it is alive: its start-up overlaps the others' work, and
 * no crowd of vCPUs starts at once (KICK_BATCH's measurements).
 */
static void kick_ahead(struct smp_cpu *ap)
{
	if (smp_kick(ap))
		smp_wait(alive, ap, AP_ONLINE_TIMEOUT_US);
}

/*
 * The APs not kicked yet, each once the one before is online: serial's
 * order and cost, for a line where nothing calibrates beside anything.
 * An AP that never came alive is given up at once, so that the APs in
 * line behind it or copying from it are not held by it.
 */
static void kick_one_by_one(void)
{
	for (u32 i = 1; i < cpu_count(); i++) {
		struct smp_cpu *ap = smp_cpu(i);

		if (kicked(ap))
			continue;
		if (smp_kick(ap) && smp_wait(seen_online, ap, AP_ONLINE_TIMEOUT_US))
			continue;
		if (ap->cpu->state == CPU_OFFLINE)
			give_up_on(ap);
	}
}

static void kick_rest_ahead(void)
{
	for (u32 i = 1; i < cpu_count(); i++)
		if (!kicked(smp_cpu(i)))
			kick_ahead(smp_cpu(i));
}

/*
 * hvprobe's own concurrent mode, in no Linux (Linux 6.5's shape is
 * bringup=linux-6.5): let the APs' start-up (trampoline, long mode,
 * tables, APIC) run concurrently, and order only what needs it: lpj (see
 * smp_ap_lpj()). An AP kicked ahead takes host time from the one that
 * calibrates, which only pays where calibrations may overlap
 * (smp_line_start_rule()): elsewhere every AP is kicked once the one
 * before is online, as serially. Under auto the first calibrating AP is
 * kicked first and calibrates at once, as serially; then the probe's
 * APs, whose probe runs beside it; then the rest, ahead if the host has
 * CPUs to spare and one by one if not.
 */
void smp_parallel_boot(void)
{
	u32 start = smp_line_start_rule(cal_line.calibrators, apic_options.parallel_calibrate);

	turns_init(&cal_line.turns, cal_line.calibrators, 1);
	if (start == SMP_LINE_AHEAD)
		smp_kick_all(cal_line.ranked[0]);
	else if (start == SMP_LINE_PROBE)
		for (u32 r = 0; r <= probe_aps(); r++)
			kick_ahead(cal_line.ranked[r]);
	choose_concurrency();
	for (u32 k = 1; k < cal_line.concurrency; k++)
		turns_grant(&cal_line.turns, wake_rank, NULL);
	if (smp_line_rest_rule(cal_line.concurrency) == SMP_LINE_AHEAD)
		kick_rest_ahead();
	else
		kick_one_by_one();
	wait_parallel();
}

void smp_parallel_json(struct json *j)
{
	json_string(j, "parallel_calibrate",
		    parallel_calibrate_names[apic_options.parallel_calibrate]);
	json_u64(j, "calibrating_aps", cal_line.calibrators);
	json_u64(j, "calibrate_concurrency", cal_line.concurrency);
	json_bool(j, "calibrations_serialized",
		  cal_line.calibrators > 1 && cal_line.concurrency == 1);
	json_string(j, "calibrate_concurrency_why", cal_line.why);
	json_u64(j, "host_parallelism_x100", cal_line.parallelism_x100);
	json_u64(j, "yardstick_us", cal_line.yardstick_us);
}

u32 smp_calibrating_aps(void)
{
	return cal_line.calibrators;
}

u32 smp_calibrate_concurrency(void)
{
	return cal_line.concurrency;
}
