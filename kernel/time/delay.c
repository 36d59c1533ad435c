// SPDX-License-Identifier: MIT
/* Delay loop and lpj calibration; see delay.h. */
#include "kernel/time/delay.h"
#include "kernel/lib/json.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"
#include "kernel/time/clock.h"
#include "kernel/time/lpj.h"
#include "kernel/time/options.h"
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
	/* An AP read a TSC earlier than the BSP's before its SIPI: a warp. */
	bool tsc_unstable;
	/* What Linux's Hyper-V platform code did to the TSC; NULL for nothing. */
	const char *hyperv_tsc;
} delay;

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
	return lpj_from_tsc_hz(clock_measure_tsc_hz(&clock.refs[clock.ref], FAST_WINDOW_US),
			       clock.hz);
}

/*
 * Not in kernel/x86/cpuid.h yet (its descriptors are being reordered):
 * CPUID.(EAX=07H,ECX=0):ECX[5] WAITPKG (SDM Vol 2A Table 3-8), and
 * CPUID.80000001H:ECX[29] MONITORX (AMD APM Vol 3 E.4.2).
 */
#define X86_FEATURE_WAITPKG CPU_FEATURE(0x00000007, 0, CPUID_ECX, 5)
#define X86_FEATURE_MWAITX CPU_FEATURE(CPUID_LEAF_EXT_FEATURES, 0, CPUID_ECX, 29)

/* The method each CPU's own calibration came from, by index. */
static u8 cal_method[MAX_CPUS];

/*
 * Linux's delay_fn on the boot CPU: delay_halt() with TPAUSE where
 * WAITPKG is offered (x86_late_time_init() calls use_tpause_delay()) or
 * with MWAITX on AMD (init_amd() calls use_mwaitx_delay()), else
 * delay_tsc. Only delay_tsc gives read_current_timer(), the direct
 * method's clock.
 */
static const char *delay_fn(void)
{
	if (cpu_has(X86_FEATURE_WAITPKG))
		return "delay_halt_tpause";
	if (cpu_has(X86_FEATURE_MWAITX) && cpu_vendor_is("AuthenticAMD"))
		return "delay_halt_mwaitx";
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

static u64 run_method(u32 method, u32 *edges)
{
	const struct lpj_timebase tb = { .jiffies = tb_jiffies, .delay = tb_delay };

	switch (method) {
	case LPJ_METHOD_DIRECT: return delay_calibrate_linux(edges);
	case LPJ_METHOD_CONVERGE: return lpj_converge(&tb, edges);
	default: return delay_calibrate_fast();
	}
}

/* calibrate_delay()'s own measurement: its methods in turn until one gives a value. */
static void calibrate(struct percpu *cpu)
{
	u64 lpj = 0, tsc = rdtsc(), start = jiffies;
	u32 edges = 0, methods[LPJ_METHODS_MAX], n, method = LPJ_METHOD_FAST;

	n = lpj_calibration_methods(time_options.calibrate, clock_have_ref(),
				    !strcmp(delay_fn(), "delay_tsc"), methods);
	for (u32 i = 0; i < n && !lpj; i++) {
		method = methods[i];
		lpj = run_method(method, &edges);
	}
	cpu->lpj = lpj;
	cpu->cal_jiffies = jiffies - start;
	/* The fast method waits on no tick: its cost in ticks is the time it took. */
	cpu->cal_edges = method == LPJ_METHOD_FAST ? cpu->cal_jiffies : edges;
	cpu->cal_start = tsc;
	cpu->cal_tsc = rdtsc() - tsc;
	cpu->lpj_source = "calibrate";
	cpu->calibrated = true;
	if (cpu->index < MAX_CPUS)
		cal_method[cpu->index] = (u8)method;
}

const char *delay_cal_method(const struct percpu *cpu)
{
	return cpu->calibrated && cpu->cal_tsc ? lpj_method_names[cal_method[cpu->index]] : NULL;
}

/* A preset applies to every CPU; false when there is none to apply. */
static bool preset(struct percpu *cpu)
{
	if (!delay.preset_lpj)
		return false;
	cpu->lpj = delay.preset_lpj;
	cpu->lpj_source = delay.preset_source;
	return true;
}

/* Why a source asked for by name has nothing to offer here. */
static const char *unavailable(u32 source)
{
	switch (source) {
	case LPJ_SOURCE_CMDLINE: return "no lpj= given";
	case LPJ_SOURCE_HYPERV:
		return clock_offers.hyperv ? "Hyper-V grants no frequency MSRs (CPUID 0x40000003 "
					     "EAX[11] and EDX[8])"
					   : "no Hyper-V leaves";
	case LPJ_SOURCE_KVMCLOCK:
		return clock_offers.kvm ? "kvmclock not available (KVM_FEATURE_CLOCKSOURCE2 and "
					  "CLOCKSOURCE clear)"
					: "no KVM leaves";
	case LPJ_SOURCE_KVM:
		return clock_offers.kvm ? "no KVM timing leaf (base + 0x10)" : "no KVM leaves";
	case LPJ_SOURCE_CPUID: return "CPUID.15H states no TSC frequency";
	default: return "nothing to offer";
	}
}

/* Whose preset rule lpj_source=auto follows, for the DATA (see lpj_preset()). */
static const char *preset_rule(void)
{
	switch (time_options.lpj_policy) {
	case LPJ_POLICY_HVPROBE:
		return "hvprobe's: fastest stated rate (lpj=, hyperv, kvmclock, kvm)";
	case LPJ_POLICY_HV_PRESET: return "thread's hv_preset_lpj(): lpj=, hyperv, kvmclock";
	default: return "Linux's: lpj=, kvmclock";
	}
}

static void choose_preset(void)
{
	struct lpj_offers o = {
		.hyperv = clock_offers.hyperv,
		.kvm = clock_offers.kvm,
		.cmdline_lpj = time_options.lpj,
		.hyperv_tsc_hz = clock_offers.hyperv_tsc_hz,
		.kvmclock_tsc_khz = clock_offers.kvmclock_tsc_khz,
		.kvm_timing_tsc_khz = clock_offers.kvm_timing_tsc_khz,
		.cpuid_tsc_hz = clock_tsc_hz_cpuid(),
	};
	u32 req = time_options.lpj_source;
	u32 got;

	if (req == LPJ_SOURCE_CALIBRATE)
		return;
	got = lpj_preset(time_options.lpj_policy, req, &o, clock.hz, &delay.preset_lpj);
	if (got != LPJ_SOURCE_AUTO)
		delay.preset_source = lpj_source_names[got];
	else if (req != LPJ_SOURCE_AUTO)
		snprintf(delay.problem, sizeof(delay.problem), "lpj_source=%s: %s",
			 lpj_source_names[req], unavailable(req));
}

bool delay_same_domain(const struct percpu *a, const struct percpu *b)
{
	switch (time_options.lpj_policy) {
	case LPJ_POLICY_LINUX_6_5:
	case LPJ_POLICY_HV_PRESET:
		/* Linux 6.5+'s calibrate_delay_is_known(): CPU0's value while the TSC is stable. */
		if (!tsc_unstable())
			return true;
		return a->package == b->package;
	case LPJ_POLICY_LINUX_6_1:
		/* Linux 6.1's calibrate_delay_is_known(): a sibling in topology_core_cpumask(). */
		return a->package == b->package;
	default: break;
	}
	switch (time_options.lpj_reuse) {
	case LPJ_REUSE_NODE: return a->node == b->node;
	case LPJ_REUSE_PACKAGE: return a->package == b->package;
	default: return false;
	}
}

bool delay_tsc_synchronized(void)
{
	return !tsc_unstable();
}

const char *delay_policy_rule(void)
{
	switch (time_options.lpj_policy) {
	case LPJ_POLICY_LINUX_6_1: return "constant TSC: copy from a CPU of the same package";
	case LPJ_POLICY_LINUX_6_5:
	case LPJ_POLICY_HV_PRESET:
		return tsc_unstable() ? "constant TSC, not synchronized: copy within the package"
				      : "constant, synchronized TSC: copy the boot CPU's";
	default: break;
	}
	switch (time_options.lpj_reuse) {
	case LPJ_REUSE_NODE: return "constant TSC: copy from a CPU of the same node";
	case LPJ_REUSE_PACKAGE: return "constant TSC: copy from a CPU of the same package";
	default: return "every AP calibrates";
	}
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
		.has_lpj = __atomic_load_n(&c->lpj_ready, __ATOMIC_ACQUIRE) && c->lpj,
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
	from = lpj_copy_source(time_options.lpj_policy, time_options.lpj_reuse, constant_tsc,
			       tsc_unstable(), sibling, cpu, cpu_count(), cpu->index);
	return from == LPJ_NO_SOURCE ? NULL : cpu_at(from);
}

void delay_plan_ap(struct percpu *cpu)
{
	cpu->lpj_from = NULL;
	if (delay.preset_lpj) {
		cpu->lpj_plan = LPJ_PLAN_PRESET;
		return;
	}
	cpu->lpj_from = copy_source(cpu, delay.tsc_constant, planned_sibling);
	cpu->lpj_plan = cpu->lpj_from ? LPJ_PLAN_COPY : LPJ_PLAN_CALIBRATE;
}

/*
 * Under Linux's policies on Hyper-V, what ms_hyperv_init_platform() does
 * before any calibration: expose the invariant TSC, or mark the TSC
 * unstable (lpj_hyperv_tsc()). A failed write is the second.
 */
static void hyperv_tsc(void)
{
	u32 action = lpj_hyperv_tsc(time_options.lpj_policy, clock_offers.hyperv, clock_offers.kvm,
				    clock_offers.hyperv_tsc_invariant_access);

	if (action == LPJ_HV_TSC_NONE)
		return;
	if (action == LPJ_HV_TSC_EXPOSE_INVARIANT && clock_offers.hyperv_expose_invariant_tsc &&
	    clock_offers.hyperv_expose_invariant_tsc()) {
		delay.hyperv_tsc = "HV_X64_MSR_TSC_INVARIANT_CONTROL: invariant TSC exposed";
		return;
	}
	delay.hyperv_tsc = "running on Hyper-V: TSC marked unstable";
	__atomic_store_n(&delay.tsc_unstable, true, __ATOMIC_RELEASE);
}

void delay_init_bsp(void)
{
	struct percpu *cpu = this_cpu();

	hyperv_tsc();
	delay.tsc_constant = tsc_is_constant(&delay.tsc_constant_why);
	choose_preset();
	cpu->lpj_ready = 1;
	if (preset(cpu))
		return;
	if (time_options.lpj_source == LPJ_SOURCE_CALIBRATE) {
		calibrate(cpu);
		return;
	}
	/* lpj_fine: the boot CPU trusts the TSC frequency it knows. */
	cpu->lpj = lpj_from_tsc_hz(clock.tsc_hz, clock.hz);
	cpu->lpj_source = "lpj_fine";
	cpu->calibrated = clock.tsc_hz_measured;
	cpu->lpj_ready = 1;
}

/*
 * check_tsc_warp()'s question: an AP whose TSC reads earlier than the
 * BSP's stamp before its SIPI is not in step with it (Linux's
 * mark_tsc_unstable(), which every CPU reads afterwards).
 */
static void note_warp(const struct percpu *cpu)
{
	if (cpu->tsc_alive < cpu->tsc_sipi)
		__atomic_store_n(&delay.tsc_unstable, true, __ATOMIC_RELEASE);
}

bool delay_ap_must_calibrate(void)
{
	struct percpu *cpu = this_cpu();
	const char *why;

	note_warp(cpu);
	if (cpu->lpj_plan == LPJ_PLAN_PRESET && delay.preset_lpj)
		return false;
	return !copy_source(cpu, tsc_is_constant(&why), online_sibling);
}

void delay_calibrate_ap(void)
{
	struct percpu *cpu = this_cpu(), *from;
	const char *why;

	note_warp(cpu);
	if (cpu->lpj_plan == LPJ_PLAN_PRESET && preset(cpu))
		goto done;
	/*
	 * Decided again on the AP, as Linux's calibrate_delay_is_known() does,
	 * with what is known now: the siblings online with a value, the
	 * warp, and this CPU's own constant-TSC bit (cpu_has(&cpu_data(cpu),
	 * X86_FEATURE_CONSTANT_TSC)), not the BSP's.
	 */
	from = copy_source(cpu, tsc_is_constant(&why), online_sibling);
	if (cpu->lpj_plan == LPJ_PLAN_COPY && from) {
		cpu->lpj_from = from;
		cpu->lpj = from->lpj;
		cpu->lpj_source = "reuse";
	} else {
		calibrate(cpu);
	}
done:
	__atomic_store_n(&cpu->lpj_ready, 1, __ATOMIC_RELEASE);
}

void udelay(u64 us)
{
	u64 lpj = this_cpu()->lpj ? this_cpu()->lpj : lpj_from_tsc_hz(clock.tsc_hz, clock.hz);
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
	const struct percpu *bsp = cpu_at(0);

	json_u64(j, "lpj", bsp->lpj);
	json_string(j, "lpj_source", bsp->lpj_source);
	json_string(j, "lpj_source_requested", lpj_source_names[time_options.lpj_source]);
	json_string(j, "calibrate", calibrate_names[time_options.calibrate]);
	json_string(j, "lpj_reuse", lpj_reuse_names[time_options.lpj_reuse]);
	json_string(j, "lpj_policy", lpj_policy_names[time_options.lpj_policy]);
	json_string(j, "lpj_policy_rule", delay_policy_rule());
	json_bool(j, "tsc_synchronized", !tsc_unstable());
	json_bool(j, "tsc_constant", delay.tsc_constant);
	json_string(j, "tsc_constant_why", delay.tsc_constant_why);
	json_string(j, "delay_fn", delay_fn());
	json_string(j, "preset_rule", preset_rule());
	if (delay.hyperv_tsc)
		json_string(j, "hyperv_tsc", delay.hyperv_tsc);
}
