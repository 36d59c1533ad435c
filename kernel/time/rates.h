/* SPDX-License-Identifier: MIT */
/*
 * Stated rates: who tells the kernel the TSC's rate, the APIC timer's
 * rate or a loops-per-jiffy preset instead of its measuring them. Each
 * source registers with DEFINE_RATE_SOURCE from the folder that reads it
 * (lpj= and CPUID.15H here, the paravirtual interfaces in hv/), with the
 * word that names it in lpj_source=, tsc_hz_source and the DATA, its rank
 * (lower is asked first, for every rate) and which lpj policies preset
 * from it. The owner fills its offer before clock_init(); kernel/time
 * reads only the table.
 */
#ifndef KERNEL_TIME_RATES_H
#define KERNEL_TIME_RATES_H

#include "kernel/lib/table.h"
#include "kernel/lib/types.h"

/*
 * An interface whose platform code Linux may run: Linux's x86_hyper is
 * the present one whose detect() answers highest, the one whose
 * platform code runs. Filled by its owner.
 */
struct rate_platform {
	const char *name;
	u32 detect; /* what its detect() answers */
	bool present;
	/*
	 * What its platform code does to the TSC before calibrate_delay()
	 * under Linux's policies: a line for the DATA under tsc_key, and
	 * *unstable set when it marks the TSC unstable, *reliable when it
	 * sets X86_FEATURE_TSC_RELIABLE. NULL: nothing.
	 */
	const char *tsc_key;
	const char *(*tsc_init)(bool *unstable, bool *reliable);
	/*
	 * Its platform code calls the lpj thread's hv_preset_lpj(): there
	 * hv-preset presets from x86_platform.calibrate_tsc, its own rate or,
	 * where it set none, the native CPUID.15H.
	 */
	bool runs_hv_preset;
};

/* What one source states here; 0 where it states nothing. */
struct rate_offer {
	u64 tsc_hz;
	u64 apic_hz;
	u64 lpj;	    /* a preset stated as one (lpj=); else the TSC rate's */
	const char *absent; /* why it states nothing, when the default does not say */
};

/* Which lpj policies take a source's preset under lpj_source=auto. */
enum rate_lpj_flags {
	/* hvprobe's: the fastest stated rate. */
	RATE_LPJ_HVPROBE = 1u << 0,
	/*
	 * Linux's (and hv-preset, which adds to them): where the source has
	 * no platform, or its platform is Linux's x86_hyper.
	 */
	RATE_LPJ_LINUX = 1u << 1,
	/*
	 * hv-preset alone: the lpj thread's hv_preset_lpj(), same platform
	 * rule; a source of no platform's only where Linux's platform
	 * runs_hv_preset.
	 */
	RATE_LPJ_HV_PRESET = 1u << 2,
};

struct rate_source {
	const char *name;		/* its word in lpj_source= and the DATA */
	const char *listed_as;		/* in preset_rule, when not name ("lpj=") */
	u32 rank;			/* distinct; lower is asked first */
	u32 lpj_flags;			/* enum rate_lpj_flags */
	const char *absent;		/* why it states nothing, by default */
	struct rate_platform *platform; /* NULL: no paravirtual interface's */
	struct rate_offer *offer;
	/*
	 * Its TSC rate is an x86_platform.calibrate_tsc hook's in Linux: its
	 * platform's where it has one, else native_calibrate_tsc().
	 */
	bool linux_tsc;
};

/*
 * Ranks: lpj= before all, CPUID.15H after all; between them the
 * interfaces in hv/, in the order Linux's x86_platform.calibrate_tsc
 * hooks take a stated TSC rate. A new source picks a free rank.
 */
#define RATE_RANK_CMDLINE 0
#define RATE_RANK_CPUID 1000

/* var is the offer its owner fills; the rest are rate_source fields. */
#define DEFINE_RATE_SOURCE(var, ...)                                                               \
	struct rate_offer var;                                                                     \
	static const struct rate_source TABLE_UNIQUE(rate_source_)                                 \
		TABLE_ENTRY(hvprobe_rate_sources) = { .offer = &(var), __VA_ARGS__ }

/* The sources in rank order: the first for NULL, then the one after prev; NULL past the last. */
const struct rate_source *rate_source_next(const struct rate_source *prev);
#define rate_for_each(s) for ((s) = rate_source_next(NULL); (s); (s) = rate_source_next(s))
/* The i-th source in rank order, from 0, or NULL. */
const struct rate_source *rate_source_at(u32 i);
/* The source named name, or NULL. */
const struct rate_source *rate_source_named(const char *name);
/* Why s states nothing here. */
const char *rate_absent(const struct rate_source *s);
/* Linux's x86_hyper among the sources' platforms, or NULL. */
const struct rate_platform *rate_linux_platform(void);
/*
 * The first stated TSC (or APIC timer) rate in rank order, with *source
 * its name; 0 when none is stated.
 */
u64 rate_tsc_hz(const char **source);
/*
 * The TSC rate Linux's tsc_khz starts from: the first stated, in rank
 * order, of the linux_tsc sources whose platform is Linux's x86_hyper or
 * who have none.
 */
u64 rate_tsc_hz_linux(const char **source);
u64 rate_apic_hz(const char **source);
/* Every offer emptied and every platform absent: the host tests' fresh start. */
void rate_offers_reset(void);

/* kernel/time's own: lpj= and CPUID.15H's TSC rate. */
extern struct rate_offer rate_cmdline, rate_cpuid;

#endif
