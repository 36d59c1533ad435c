// SPDX-License-Identifier: MIT
/*
 * The tables the time keys read, as the build registers them: the stated
 * rates (kernel/time/rates.h), whose rank order decides whose TSC and APIC
 * rates win and the order each lpj policy takes presets in, the words
 * lpj_source= accepts, which the DATA and the tools spell, and each
 * policy's preset_rule line; and the reference timers' names
 * (DEFINE_REFCLOCK_NAME), timer='s words and auto's order.
 */
#include "hv/hyperv.h"
#include "hv/kvm.h"
#include "kernel/lib/string.h"
#include "kernel/test/test.h"
#include "kernel/time/lpj.h"
#include "kernel/time/options.h"
#include "kernel/time/rates.h"

#define LIST_MAX 256

/* The sources' names in rank order, comma-separated. */
static const char *rank_order(void)
{
	static char buf[LIST_MAX];
	const struct rate_source *s;

	buf[0] = '\0';
	rate_for_each(s)
	{
		if (buf[0])
			str_append(buf, ",", sizeof(buf));
		str_append(buf, s->name, sizeof(buf));
	}
	return buf;
}

/* lpj_source='s words, comma-separated. */
static const char *lpj_source_words(void)
{
	static char buf[LIST_MAX];

	buf[0] = '\0';
	for (u32 i = 0; lpj_source_word(i); i++) {
		if (i)
			str_append(buf, ",", sizeof(buf));
		str_append(buf, lpj_source_word(i), sizeof(buf));
	}
	return buf;
}

DEFINE_TEST(unit_rates_table, "stated rates: the registered sources in rank order", 0)
{
	const struct rate_source *s, *prev = NULL;
	bool distinct = true, named = true;
	u32 n = 0;

	report_str_eq(rank_order(), "cmdline,hyperv,kvmclock,kvm,cpuid",
		      "lpj=, Hyper-V's MSR, kvmclock, KVM's timing leaf, CPUID.15H");
	rate_for_each(s)
	{
		distinct &= !prev || prev->rank < s->rank;
		named &= s->name && s->name[0] && rate_source_named(s->name) == s &&
			 strcmp(s->name, "auto") && strcmp(s->name, "calibrate");
		prev = s;
		n++;
	}
	report(distinct, "every rank distinct, so the order is the ranks' alone");
	report(named, "every name its own, and neither auto nor calibrate");
	report(rate_source_at(n - 1) == prev && !rate_source_at(n),
	       "rate_source_at() walks the same order");
	report_str_eq(lpj_source_words(), "auto,calibrate,cmdline,hyperv,kvmclock,kvm,cpuid",
		      "lpj_source= takes auto, calibrate and every source's name");
}

DEFINE_TEST(unit_rates_stated, "the first stated TSC and APIC rates in rank order", 0)
{
	const char *source = "unset";

	rate_offers_reset();
	report_eq(rate_tsc_hz(&source), 0, "nothing stated: no TSC rate");
	report_str_eq(source, "unset", "and no source named");
	rate_cpuid.tsc_hz = 2700000000ULL;
	kvm_timing_rate = (struct rate_offer){ .tsc_hz = 2600000000ULL, .apic_hz = 1000000000ULL };
	report_eq(rate_tsc_hz(&source), 2600000000ULL, "KVM's timing leaf before CPUID.15H");
	report_str_eq(source, "kvm", "named kvm");
	kvmclock_rate.tsc_hz = 2500000000ULL;
	report_eq(rate_tsc_hz(&source), 2500000000ULL, "kvmclock before the timing leaf");
	report_str_eq(source, "kvmclock", "named kvmclock");
	hyperv_rate = (struct rate_offer){ .tsc_hz = 2400000000ULL, .apic_hz = 200000000ULL };
	report_eq(rate_tsc_hz(&source), 2400000000ULL, "Hyper-V's MSR before kvmclock");
	report_str_eq(source, "hyperv", "named hyperv");
	report_eq(rate_apic_hz(&source), 200000000ULL, "Hyper-V's APIC rate before KVM's");
	report_str_eq(source, "hyperv", "named hyperv");
	hyperv_rate.apic_hz = 0;
	report_eq(rate_apic_hz(&source), 1000000000ULL, "then KVM's timing leaf");
	report_str_eq(source, "kvm", "named kvm");
	rate_offers_reset();
}

/*
 * Linux's tsc_khz comes from x86_platform.calibrate_tsc: the hook Linux's
 * x86_hyper installed (Hyper-V's hv_get_tsc_khz() from its frequency
 * MSRs, KVM's kvm_get_tsc_khz() from kvmclock), else
 * native_calibrate_tsc(), CPUID.15H/16H. Another interface's rate, or
 * KVM's timing leaf, which no Linux hook reads, is none of Linux's.
 */
DEFINE_TEST(unit_rates_stated_linux, "Linux's stated TSC rate: its platform's hook, else CPUID", 0)
{
	const char *source = "unset";

	rate_offers_reset();
	report_eq(rate_tsc_hz_linux(&source), 0, "nothing stated: none");
	/* -cpu host,-kvmclock,hv-frequencies under KVM: KVM is x86_hyper. */
	hyperv_platform.present = kvm_platform.present = true;
	kvm_platform.detect = 0x40000100;
	hyperv_rate.tsc_hz = 2400000000ULL;
	kvm_timing_rate.tsc_hz = 2400000000ULL;
	report_eq(
		rate_tsc_hz_linux(&source), 0,
		"KVM the platform without kvmclock: Hyper-V's MSR and the timing leaf are not its");
	report_eq(rate_tsc_hz(&source), 2400000000ULL, "where hvprobe's own rule takes the MSR");
	rate_cpuid.tsc_hz = 2300000000ULL;
	report_eq(rate_tsc_hz_linux(&source), 2300000000ULL, "then native_calibrate_tsc()");
	report_str_eq(source, "cpuid", "named cpuid");
	kvmclock_rate.tsc_hz = 2500000000ULL;
	report_eq(rate_tsc_hz_linux(&source), 2500000000ULL, "kvmclock, KVM's own hook");
	report_str_eq(source, "kvmclock", "named kvmclock");
	kvm_platform.present = false;
	report_eq(rate_tsc_hz_linux(&source), 2400000000ULL, "Hyper-V alone: hv_get_tsc_khz()");
	report_str_eq(source, "hyperv", "named hyperv");
	rate_offers_reset();
}

DEFINE_TEST(unit_rates_preset_rule, "each lpj policy's preset_rule, from the table", 0)
{
	char rule[128];

	lpj_preset_rule(lpj_policy_named("hvprobe"), rule, sizeof(rule));
	report_str_eq(rule, "hvprobe's: fastest stated rate (lpj=, hyperv, kvmclock, kvm)",
		      "hvprobe");
	lpj_preset_rule(lpj_policy_named("hv-preset"), rule, sizeof(rule));
	report_str_eq(rule, "thread's hv_preset_lpj(): lpj=, hyperv, kvmclock, cpuid", "hv-preset");
	lpj_preset_rule(lpj_policy_named("linux-6.1"), rule, sizeof(rule));
	report_str_eq(rule, "Linux's: lpj=, kvmclock", "linux-6.1");
	lpj_preset_rule(lpj_policy_named("linux-6.5"), rule, sizeof(rule));
	report_str_eq(rule, "Linux's: lpj=, kvmclock", "linux-6.5");
	lpj_preset_rule(lpj_policy_named("linux-6.12"), rule, sizeof(rule));
	report_str_eq(rule, "Linux's: lpj=, kvmclock", "linux-6.12");
}

/* timer='s words, or auto's order (choices by name), comma-separated. */
static const char *timer_list(bool by_auto)
{
	static char buf[LIST_MAX];
	u32 c;

	buf[0] = '\0';
	for (u32 i = 0; by_auto ? (c = timer_auto_choice(i)) != TIMER_AUTO : !!timer_word(i); i++) {
		if (i)
			str_append(buf, ",", sizeof(buf));
		str_append(buf, timer_word(by_auto ? c : i), sizeof(buf));
	}
	return buf;
}

DEFINE_TEST(unit_timer_names, "reference timers: timer='s words and auto's order", 0)
{
	report_str_eq(timer_list(false), "auto,pit,hpet,pmtmr,apic,hv",
		      "timer= takes auto and every registered reference, in rank order");
	report_str_eq(
		timer_list(true), "hpet,pmtmr,pit,hv,apic",
		"auto tries the HPET, the PM timer, the PIT, Hyper-V's counter, the APIC timer");
	report_eq(timer_choice("pmtmr"), 3, "a choice is its word's place");
	report_eq(timer_choice("tsc"), TIMER_AUTO, "an unregistered name is no choice");
	report(timer_word(5) && !timer_word(6), "as many choices as the table has words");
}
