// SPDX-License-Identifier: MIT
/* The smp DATA: the bring-up's settings and totals, and each AP's timeline. */
#include "apic/apic.h"
#include "apic/bringup.h"
#include "apic/options.h"
#include "apic/smp/rules.h"
#include "apic/smp/smp.h"
#include "apic/smp/smp_internal.h"
#include "apic/smp/tsc_sync.h"
#include "kernel/lib/json.h"
#include "kernel/lib/option.h"
#include "kernel/lib/stats.h"
#include "kernel/time/clock.h"
#include "kernel/time/delay.h"
#include "kernel/time/lpj.h"
#include "kernel/time/options.h"
#include "kernel/time/policy.h"

static u64 us_since_start(u64 tsc)
{
	return tsc > smp.tsc_start ? tsc_to_us(tsc - smp.tsc_start) : 0;
}

static u64 wait_us(const struct smp_cpu *s)
{
	return s->tsc_wait_end > s->tsc_wait_start ? tsc_to_us(s->tsc_wait_end - s->tsc_wait_start)
						   : 0;
}

void smp_ap_json(struct json *j, u32 index)
{
	const struct percpu *c = cpu_at(index);
	const struct smp_cpu *s = smp_cpu(index);
	const struct delay_cpu *d = delay_cpu(index);
	bool up = c->state == CPU_ONLINE;

	json_u64(j, "cpu", index);
	json_u64(j, "apic_id", c->apic_id);
	json_u64(j, "node", c->node);
	json_u64(j, "package", c->package);
	json_bool(j, "online", up);
	if (smp_kick_failure(index))
		json_string(j, "kick_failure", smp_kick_failure(index));
	json_u64(j, "init_us", us_since_start(s->tsc_init));
	json_u64(j, "sipi_us", us_since_start(s->tsc_sipi));
	json_u64(j, "alive_us", c->state >= CPU_ALIVE ? us_since_start(s->tsc_alive) : 0);
	json_u64(j, "calibrated_us", up ? us_since_start(s->tsc_calibrated) : 0);
	json_u64(j, "online_us", up ? us_since_start(s->tsc_online) : 0);
	json_u64(j, "lpj", d->lpj);
	json_string(j, "lpj_source", d->lpj_source ? d->lpj_source : "none");
	json_string(j, "lpj_plan", lpj_plan_names[d->lpj_plan]);
	if (d->lpj_from)
		json_u64(j, "lpj_from", d->lpj_from->index);
	/* What it parked for: its source's value, or its turn to calibrate. */
	json_string(j, "waited_for", s->waited_for ? s->waited_for : "none");
	json_u64(j, "wait_us", wait_us(s));
	json_u64(j, "cal_us", d->calibrated ? tsc_to_us(d->cal_tsc) : 0);
	json_u64(j, "cal_ticks", d->calibrated ? d->cal_edges : 0);
	json_u64(j, "cal_jiffies", d->calibrated ? d->cal_jiffies : 0);
	if (delay_cal_method(c))
		json_string(j, "cal_method", delay_cal_method(c));
	if (d->cal_stall)
		json_u64(j, "cal_stall_us", tsc_to_us(d->cal_stall));
	if (smp_in_probe(s))
		json_u64(j, "probe_loops", s->probe_loops);
	/* Linux's TSC-sync check: its timeout (0: none ran) and its cost here. */
	json_u64(j, "tsc_sync_ms", s->tsc_sync_ms);
	json_u64(j, "tsc_sync_us", tsc_to_us(s->tsc_sync_cycles));
	if (s->tsc_warp_cycles)
		json_u64(j, "tsc_warp_cycles", s->tsc_warp_cycles);
	if (s->tsc_sync_runs > 1) {
		json_u64(j, "tsc_sync_runs", s->tsc_sync_runs);
		json_s64(j, "tsc_adjusted", s->tsc_adjusted);
	}
}

static void spread_json(struct json *j, const char *key, u64 *v, u32 n)
{
	sort_u64(v, n);
	json_object_begin(j, key);
	json_u64(j, "n", n);
	json_u64(j, "min", percentile_u64(v, n, 0));
	json_u64(j, "median", percentile_u64(v, n, 50));
	json_u64(j, "max", percentile_u64(v, n, 100));
	json_object_end(j);
}

/* What the smp DATA summarizes over the CPUs: counts, and the values it gives the spread of. */
struct spreads {
	u64 per_ap[MAX_CPUS], waits[MAX_CPUS], cal_us[MAX_CPUS], cal_ticks[MAX_CPUS],
		cal_jiffies[MAX_CPUS];
	u32 n, calibrations, waited, cals, offset_aps;
};

static void gather(struct spreads *sp)
{
	for (u32 i = 0; i < cpu_count(); i++) {
		const struct percpu *c = cpu_at(i);
		const struct smp_cpu *s = smp_cpu(i);
		const struct delay_cpu *d = delay_cpu(i);

		sp->calibrations += d->calibrated;
		if (d->cal_tsc) {
			sp->cal_us[sp->cals] = tsc_to_us(d->cal_tsc);
			sp->cal_jiffies[sp->cals] = d->cal_jiffies;
			sp->cal_ticks[sp->cals++] = d->cal_edges;
		}
		if (i && s->waited_for)
			sp->waits[sp->waited++] = wait_us(s);
		if (i && c->state == CPU_ONLINE) {
			bool offset;

			sp->per_ap[sp->n++] = tsc_to_us(
				smp_ap_bringup_cycles(s->tsc_init, s->tsc_sipi, s->tsc_alive,
						      s->tsc_online, smp.tsc_seen[i], &offset));
			sp->offset_aps += offset;
		}
	}
	sort_u64(sp->per_ap, sp->n);
}

/* The bring-up's settings: the mode, the INIT wait, where lpj comes from. */
static void settings_json(struct json *j, const struct bringup_mode *mode)
{
	json_u64(j, "cpus", cpu_online_count());
	json_u64(j, "nodes", smp.nodes);
	json_string(j, "apic", apic_mode_name());
	json_string(j, "bringup", mode->name);
	json_u64(j, "init_udelay_us", smp.init_udelay);
	json_string(j, "init_udelay", apic_options.init_udelay == OPTION_AUTO ? "auto" : "given");
	json_string(j, "init_udelay_why", smp.init_udelay_why ? smp.init_udelay_why : "");
	if (mode->calibration_line)
		json_u64(j, "kick_batch", KICK_BATCH);
	json_string(j, "lpj_source", delay_cpu(0)->lpj_source);
	json_string(j, "lpj_reuse", lpj_reuse_names[time_options.lpj_reuse]);
	json_string(j, "lpj_policy", lpj_policy_chosen()->name);
}

/*
 * The TSC-sync check: which, how many ran, how many saw a warp, and the
 * control CPU's time in them, all inside total_us as in Linux.
 */
static void tsc_sync_json(struct json *j, const struct bringup_mode *mode)
{
	json_string(j, "tsc_sync",
		    smp_tsc_sync_mode_names[smp_tsc_sync_mode(mode, lpj_policy_chosen())]);
	json_u64(j, "tsc_sync_checks", smp_tsc_sync_checks());
	json_u64(j, "tsc_warps", smp_tsc_sync_warps());
	json_u64(j, "tsc_sync_us", tsc_to_us(smp_tsc_sync_source_cycles()));
}

void smp_json(struct json *j)
{
	const struct bringup_mode *mode = bringup_mode_chosen();
	static struct spreads sp;

	sp = (struct spreads){ 0 };
	gather(&sp);
	settings_json(j, mode);
	json_u64(j, "calibrations", sp.calibrations);
	json_u64(j, "total_us",
		 smp.tsc_end > smp.tsc_start ? tsc_to_us(smp.tsc_end - smp.tsc_start) : 0);
	json_object_begin(j, "per_ap_us");
	json_u64(j, "min", percentile_u64(sp.per_ap, sp.n, 0));
	json_u64(j, "median", percentile_u64(sp.per_ap, sp.n, 50));
	json_u64(j, "max", percentile_u64(sp.per_ap, sp.n, 100));
	json_object_end(j);
	/* APs whose TSC stamps were out of step with the BSP's: timed by the BSP alone. */
	json_u64(j, "per_ap_tsc_offset", sp.offset_aps);
	tsc_sync_json(j, mode);
	/*
	 * Each calibration's cost in µs, in jiffies elapsed, and in ticks:
	 * the edges it waited through, which is what Linux's count for the
	 * method counts (linux_direct_ticks).
	 */
	spread_json(j, "cal_us", sp.cal_us, sp.cals);
	spread_json(j, "cal_jiffies", sp.cal_jiffies, sp.cals);
	spread_json(j, "cal_ticks", sp.cal_ticks, sp.cals);
	json_u64(j, "hz", clock.hz);
	json_u64(j, "linux_direct_ticks", lpj_direct_ticks(clock.hz));
	if (mode->calibration_line) {
		smp_parallel_json(j);
		/* n: the APs that parked for a source's value or their turn. */
		spread_json(j, "wait_us", sp.waits, sp.waited);
	}
}
