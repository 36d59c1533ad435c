// SPDX-License-Identifier: MIT
/* Delay loop and lpj calibration; see delay.h. */
#include "kernel/time/delay.h"
#include "kernel/lib/json.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/time/clock.h"
#include "kernel/time/linux_tsc_reads.h"
#include "kernel/time/lpj.h"
#include "kernel/time/options.h"
#include "kernel/time/policy.h"
#include "kernel/time/rates.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/x86.h"

/* calibrate=fast: one window against the reference timer. */
#define FAST_WINDOW_US 5000

static struct {
	bool tsc_constant;
	const char *tsc_constant_why;
	/* The preset every CPU takes (0: none), and its lpj_source name. */
	u64 preset_lpj;
	const char *preset_source;
	/* A requested lpj source that could not be honoured, and why. */
	char problem[128];
	/* An AP reported its TSC out of step with the control CPU's: a warp. */
	bool tsc_unstable;
	/* What Linux's platform code did to the TSC, under its DATA key; NULL for nothing. */
	const char *platform_tsc, *platform_tsc_key;
	bool tsc_reliable;
	/*
	 * Under Linux's policies with no stated TSC rate: whether Linux's
	 * own calibration would have got tsc_khz here (linux_tsc.h).
	 */
	bool linux_tsc_judged;
	struct linux_tsc_verdict linux_tsc;
} delay;

static struct delay_cpu delay_cpus[MAX_CPUS];

struct delay_cpu *delay_cpu(u32 index)
{
	return &delay_cpus[index];
}

static bool tsc_unstable(void)
{
	return __atomic_load_n(&delay.tsc_unstable, __ATOMIC_ACQUIRE);
}

const char *const lpj_plan_names[] = {
	[LPJ_PLAN_PRESET] = "preset",
	[LPJ_PLAN_COPY] = "copy",
	[LPJ_PLAN_CALIBRATE] = "calibrate",
};
_Static_assert(ARRAY_SIZE(lpj_plan_names) == LPJ_PLAN_COUNT, "lpj_plan_names");

/*
 * Linux's X86_FEATURE_CONSTANT_TSC: the invariant-TSC bit, or Intel's
 * family/model rule (arch/x86/kernel/cpu/intel.c early_init_intel()).
 * TCG never sets invariant TSC, so an Intel CPU model is how to get reuse.
 */
static bool tsc_is_constant(const char **why)
{
	struct cpu_signature sig = cpu_signature();
	bool intel = cpu_vendor_is("GenuineIntel");

	if (cpu_has(X86_FEATURE_INVTSC)) {
		*why = "invariant TSC (CPUID.80000007H:EDX[8])";
		return true;
	}
	if (intel && ((sig.family == 0x6 && sig.model >= 0x0e) ||
		      (sig.family == 0xf && sig.model >= 0x03))) {
		*why = "Intel family/model with constant TSC";
		return true;
	}
	*why = "TSC not constant: no invariant-TSC bit, not an Intel constant-TSC model";
	return false;
}

/*
 * Spin until jiffies passes `past`, keeping the last TSC reading before
 * the edge in *pre and the reading in *t; count each change of jiffies
 * this CPU saw in *edges. An edge is one step of the method whatever the
 * host did meanwhile: a vCPU descheduled across several ticks sees them
 * as one jump, one edge, where elapsed jiffies would count them all.
 */
static void wait_past(u64 past, u64 *pre, u64 *t, u64 *seen, u32 *edges)
{
	for (;;) {
		u64 now = jiffies;

		if (now != *seen) {
			*seen = now;
			(*edges)++;
		}
		if (now > past)
			return;
		*pre = *t;
		*t = rdtsc();
	}
}

u64 delay_calibrate_linux(u32 *edges)
{
	u32 dct = lpj_direct_dct(clock.hz);
	u64 lower[LPJ_DIRECT_SAMPLES], upper[LPJ_DIRECT_SAMPLES];

	for (u32 i = 0; i < LPJ_DIRECT_SAMPLES; i++) {
		u64 start = jiffies, seen = start, pre_start = 0, post_start, pre_end = 0, post_end,
		    t;
		u64 first_edge;

		/* Bracket the edge after start + 1, then the one DCT ticks later. */
		t = rdtsc();
		wait_past(start + 1, &pre_start, &t, &seen, edges);
		post_start = rdtsc();
		first_edge = jiffies;
		t = post_start;
		wait_past(start + 1 + dct, &pre_end, &t, &seen, edges);
		post_end = rdtsc();
		/*
		 * A late tick makes jiffies jump, so an edge is not one jiffy
		 * from the last: a sample with a jump at either edge is void
		 * (lower > upper fails the verdict), as Linux voids samples
		 * with no pre-edge reading.
		 */
		if (!pre_start || !pre_end || first_edge != start + 2 ||
		    jiffies != start + 2 + dct) {
			lower[i] = 1;
			upper[i] = 0;
			continue;
		}
		lower[i] = pre_end - post_start;
		upper[i] = post_end - pre_start;
	}
	return lpj_direct_combine(lower, upper, LPJ_DIRECT_SAMPLES, dct);
}

u64 delay_calibrate_fast(void)
{
	return lpj_from_tsc_hz(clock_measure_tsc_hz(clock_refclock(clock.ref), FAST_WINDOW_US),
			       clock.hz);
}

/* Linux would have no tsc_khz: tsc_init() returned before use_tsc_delay(). */
static bool linux_tsc_failed(void)
{
	return delay.linux_tsc_judged && !delay.linux_tsc.ok;
}

/*
 * Linux's delay_fn on the boot CPU: delay_halt() with TPAUSE where
 * WAITPKG is offered (x86_late_time_init() calls use_tpause_delay()) or
 * with MWAITX on AMD (init_amd() calls use_mwaitx_delay()), else
 * delay_tsc, which tsc_init()'s use_tsc_delay() sets only once tsc_khz
 * is known: without it delay_fn stays delay_loop. Only delay_tsc gives
 * read_current_timer(), the direct method's clock. hvprobe's own
 * __delay() spins on the TSC whatever the name, so lpj stays in TSC
 * cycles for udelay().
 */
static const char *delay_fn(void)
{
	if (cpu_has(X86_FEATURE_WAITPKG))
		return "delay_halt_tpause";
	if (cpu_has(X86_FEATURE_MWAITX) && cpu_vendor_is("AuthenticAMD"))
		return "delay_halt_mwaitx";
	if (linux_tsc_failed())
		return "delay_loop";
	return "delay_tsc";
}

static u64 tb_jiffies(void *ctx)
{
	(void)ctx;
	return jiffies;
}

/* __delay() by the TSC, as delay_tsc() spins. */
static void tb_delay(void *ctx, u64 loops)
{
	u64 start = rdtsc();

	(void)ctx;
	while (rdtsc() - start < loops)
		pause();
}

static u64 tb_cycles(void *ctx)
{
	(void)ctx;
	return rdtsc();
}

static u64 run_method(u32 method, u32 *edges, u64 *stall)
{
	const struct lpj_timebase tb = { .jiffies = tb_jiffies,
					 .delay = tb_delay,
					 .cycles = tb_cycles };

	switch (method) {
	case LPJ_METHOD_DIRECT: return delay_calibrate_linux(edges);
	case LPJ_METHOD_CONVERGE: return lpj_converge(&tb, edges, stall);
	default: return delay_calibrate_fast();
	}
}

/* calibrate_delay()'s own measurement: its methods in turn until one gives a value. */
static void calibrate(struct delay_cpu *cpu)
{
	u64 lpj = 0, tsc = rdtsc(), start = jiffies, stall = 0;
	u32 edges = 0, methods[LPJ_METHODS_MAX], n, method = LPJ_METHOD_FAST;

	n = lpj_calibration_methods(time_options.calibrate, clock_have_ref(),
				    !strcmp(delay_fn(), "delay_tsc"), methods);
	for (u32 i = 0; i < n && !lpj; i++) {
		method = methods[i];
		lpj = run_method(method, &edges, &stall);
	}
	cpu->lpj = lpj;
	cpu->cal_stall = stall;
	cpu->cal_jiffies = jiffies - start;
	/* The fast method waits on no tick: its cost in ticks is the time it took. */
	cpu->cal_edges = method == LPJ_METHOD_FAST ? cpu->cal_jiffies : edges;
	cpu->cal_start = tsc;
	cpu->cal_tsc = rdtsc() - tsc;
	cpu->lpj_source = "calibrate";
	cpu->calibrated = true;
	cpu->cal_method = (u8)method;
}

const char *delay_cal_method(const struct percpu *cpu)
{
	const struct delay_cpu *d = delay_cpu(cpu->index);

	return d->calibrated && d->cal_tsc ? lpj_method_names[d->cal_method] : NULL;
}

/* A preset applies to every CPU; false when there is none to apply. */
static bool preset(struct delay_cpu *cpu)
{
	if (!delay.preset_lpj)
		return false;
	cpu->lpj = delay.preset_lpj;
	cpu->lpj_source = delay.preset_source;
	return true;
}

static void choose_preset(void)
{
	const struct rate_source *req = lpj_source_rate(), *got;

	if (time_options.lpj_source == LPJ_SOURCE_CALIBRATE)
		return;
	rate_cmdline.lpj = time_options.lpj;
	got = lpj_preset(lpj_policy_chosen(), req, clock.hz, &delay.preset_lpj);
	if (got)
		delay.preset_source = got->name;
	else if (req)
		snprintf(delay.problem, sizeof(delay.problem), "lpj_source=%s: %s", req->name,
			 rate_absent(req));
}

bool delay_same_domain(const struct percpu *a, const struct percpu *b)
{
	return lpj_same_domain(lpj_policy_chosen(), time_options.lpj_reuse, tsc_unstable(),
			       a->package, a->node, b->package, b->node);
}

bool delay_tsc_synchronized(void)
{
	return !tsc_unstable();
}

bool delay_tsc_reliable(void)
{
	return delay.tsc_reliable;
}

const char *delay_policy_rule(void)
{
	return lpj_copy_rule_words(lpj_policy_chosen(), time_options.lpj_reuse, tsc_unstable());
}

/* The BSP's plan: every CPU before cpu in bring-up order will have its value. */
static void planned_sibling(void *ctx, u32 i, struct lpj_sibling *out)
{
	const struct percpu *self = ctx, *c = cpu_at(i);

	*out = (struct lpj_sibling){ .package = c->package,
				     .node = c->node,
				     .has_lpj = i < self->index };
}

/* On the AP: the CPUs whose value is there to copy now. */
static void online_sibling(void *ctx, u32 i, struct lpj_sibling *out)
{
	const struct percpu *c = cpu_at(i);

	(void)ctx;
	*out = (struct lpj_sibling){
		.package = c->package,
		.node = c->node,
		.has_lpj = __atomic_load_n(&delay_cpus[i].lpj_ready, __ATOMIC_ACQUIRE) &&
			   delay_cpus[i].lpj,
	};
}

/*
 * The CPU cpu may copy from under the policy (lpj_copy_source()), or
 * NULL when it must calibrate.
 */
static struct percpu *copy_source(struct percpu *cpu, bool constant_tsc, lpj_sibling_fn sibling)
{
	u32 from;

	if (time_options.lpj_source == LPJ_SOURCE_CALIBRATE)
		return NULL;
	from = lpj_copy_source(lpj_policy_chosen(), time_options.lpj_reuse, constant_tsc,
			       tsc_unstable(), sibling, cpu, cpu_count(), cpu->index);
	return from == LPJ_NO_SOURCE ? NULL : cpu_at(from);
}

void delay_plan_ap(struct percpu *cpu)
{
	struct delay_cpu *d = delay_cpu(cpu->index);

	d->lpj_from = NULL;
	if (delay.preset_lpj) {
		d->lpj_plan = LPJ_PLAN_PRESET;
		return;
	}
	d->lpj_from = copy_source(cpu, delay.tsc_constant, planned_sibling);
	d->lpj_plan = d->lpj_from ? LPJ_PLAN_COPY : LPJ_PLAN_CALIBRATE;
}

/*
 * Under Linux's policies, what the platform's code does to the TSC before
 * any calibration (its tsc_init, in hv/, names the Linux function): only
 * Linux's x86_hyper's code runs.
 */
static void platform_tsc(void)
{
	const struct rate_platform *p = lpj_platform_tsc(lpj_policy_chosen());
	bool unstable = false;

	if (!p)
		return;
	delay.platform_tsc = p->tsc_init(&unstable, &delay.tsc_reliable);
	delay.platform_tsc_key = p->tsc_key;
	if (unstable)
		__atomic_store_n(&delay.tsc_unstable, true, __ATOMIC_RELEASE);
}

/*
 * Under Linux's policies, where hvprobe had to measure the TSC's rate
 * (nothing stated it), whether Linux's tsc_init() would have measured it
 * too; where not, it calls mark_tsc_unstable("could not calculate TSC
 * khz") and the boot CPU has no lpj_fine. hvprobe keeps its own
 * measurement for its timers and udelay().
 */
static void linux_tsc_khz(void)
{
	if (!lpj_policy_chosen()->tsc_khz_refusal || !clock.tsc_hz_measured)
		return;
	linux_tsc_measure(&delay.linux_tsc);
	delay.linux_tsc_judged = true;
	if (!delay.linux_tsc.ok)
		__atomic_store_n(&delay.tsc_unstable, true, __ATOMIC_RELEASE);
}

void delay_init_bsp(void)
{
	struct delay_cpu *cpu = delay_cpu(this_cpu()->index);

	platform_tsc();
	linux_tsc_khz();
	delay.tsc_constant = tsc_is_constant(&delay.tsc_constant_why);
	choose_preset();
	cpu->lpj_ready = 1;
	if (preset(cpu))
		return;
	/* No tsc_khz, no lpj_fine: calibrate_delay() measures on the boot CPU too. */
	if (time_options.lpj_source == LPJ_SOURCE_CALIBRATE || linux_tsc_failed()) {
		calibrate(cpu);
		return;
	}
	/* lpj_fine: the boot CPU trusts the TSC frequency it knows. */
	cpu->lpj = lpj_from_tsc_hz(clock.tsc_hz, clock.hz);
	cpu->lpj_source = "lpj_fine";
	cpu->calibrated = clock.tsc_hz_measured;
	cpu->lpj_ready = 1;
}

void delay_tsc_sync(bool in_step)
{
	if (!in_step)
		__atomic_store_n(&delay.tsc_unstable, true, __ATOMIC_RELEASE);
}

bool delay_ap_must_calibrate(void)
{
	struct percpu *cpu = this_cpu();
	const char *why;

	if (delay_cpu(cpu->index)->lpj_plan == LPJ_PLAN_PRESET && delay.preset_lpj)
		return false;
	return !copy_source(cpu, tsc_is_constant(&why), online_sibling);
}

void delay_calibrate_ap(void)
{
	struct percpu *self = this_cpu(), *from;
	struct delay_cpu *cpu = delay_cpu(self->index);
	const char *why;

	if (cpu->lpj_plan == LPJ_PLAN_PRESET && preset(cpu))
		goto done;
	/*
	 * Decided again on the AP, as Linux's calibrate_delay_is_known() does,
	 * with what is known now: the siblings online with a value, the
	 * warp, and this CPU's own constant-TSC bit (cpu_has(&cpu_data(cpu),
	 * X86_FEATURE_CONSTANT_TSC)), not the BSP's.
	 */
	from = copy_source(self, tsc_is_constant(&why), online_sibling);
	if (cpu->lpj_plan == LPJ_PLAN_COPY && from) {
		cpu->lpj_from = from;
		cpu->lpj = delay_cpu(from->index)->lpj;
		cpu->lpj_source = "reuse";
	} else {
		calibrate(cpu);
	}
done:
	__atomic_store_n(&cpu->lpj_ready, 1, __ATOMIC_RELEASE);
}

/*
 * By this CPU's lpj, as Linux's udelay(); but where Linux's policies
 * calibrate only because Linux would have no tsc_khz, hvprobe's own
 * delays keep the TSC rate it measured: the calibrated values are the
 * model's record, and nested under TCG converge's are off by a fifth.
 */
void udelay(u64 us)
{
	u64 own = linux_tsc_failed() ? 0 : delay_cpus[this_cpu()->index].lpj;
	u64 lpj = own ? own : lpj_from_tsc_hz(clock.tsc_hz, clock.hz);
	u64 cycles = lpj_delay_cycles(lpj, clock.hz, us), start = rdtsc();

	while (rdtsc() - start < cycles)
		pause();
}

u64 delay_preset_lpj(void)
{
	return delay.preset_lpj;
}

bool delay_tsc_constant(const char **why)
{
	*why = delay.tsc_constant_why;
	return delay.tsc_constant;
}

const char *delay_problem(void)
{
	return delay.problem;
}

void delay_json(struct json *j)
{
	const struct delay_cpu *bsp = delay_cpu(0);
	char rule[192];

	json_u64(j, "lpj", bsp->lpj);
	json_string(j, "lpj_source", bsp->lpj_source);
	json_string(j, "lpj_source_requested", lpj_source_word(time_options.lpj_source));
	json_string(j, "calibrate", calibrate_names[time_options.calibrate]);
	json_string(j, "lpj_reuse", lpj_reuse_names[time_options.lpj_reuse]);
	json_string(j, "lpj_policy", lpj_policy_chosen()->name);
	json_string(j, "lpj_policy_rule", delay_policy_rule());
	json_bool(j, "tsc_synchronized", !tsc_unstable());
	json_bool(j, "tsc_constant", delay.tsc_constant);
	json_string(j, "tsc_constant_why", delay.tsc_constant_why);
	json_string(j, "delay_fn", delay_fn());
	lpj_preset_rule(lpj_policy_chosen(), rule, sizeof(rule));
	json_string(j, "preset_rule", rule);
	if (delay.platform_tsc)
		json_string(j, delay.platform_tsc_key, delay.platform_tsc);
	if (delay.linux_tsc_judged) {
		char verdict[sizeof(delay.linux_tsc.why) + 32];

		snprintf(verdict, sizeof(verdict), "%s%s",
			 delay.linux_tsc.ok ? "" : "could not calculate TSC khz: ",
			 delay.linux_tsc.why);
		json_string(j, "linux_tsc_khz", verdict);
	}
}
