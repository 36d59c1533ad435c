// SPDX-License-Identifier: MIT
/* Command-line parser; see cmdline.h. */
#include "kernel/cmdline.h"
#include "kernel/lib/printf.h"
#include "kernel/lib/string.h"

const char *const lpj_source_names[] = {
	[LPJ_SOURCE_AUTO] = "auto",	      [LPJ_SOURCE_HYPERV] = "hyperv",
	[LPJ_SOURCE_KVM] = "kvm",	      [LPJ_SOURCE_KVMCLOCK] = "kvmclock",
	[LPJ_SOURCE_CPUID] = "cpuid",	      [LPJ_SOURCE_CMDLINE] = "cmdline",
	[LPJ_SOURCE_CALIBRATE] = "calibrate",
};
_Static_assert(ARRAY_SIZE(lpj_source_names) == LPJ_SOURCE_COUNT, "lpj_source_names");

const char *const calibrate_names[] = {
	[CALIBRATE_LINUX] = "linux",
	[CALIBRATE_FAST] = "fast",
};
_Static_assert(ARRAY_SIZE(calibrate_names) == CALIBRATE_COUNT, "calibrate_names");

const char *const bringup_names[] = {
	[BRINGUP_SERIAL] = "serial",
	[BRINGUP_PARALLEL] = "parallel",
};
_Static_assert(ARRAY_SIZE(bringup_names) == BRINGUP_COUNT, "bringup_names");

const char *const timer_names[] = {
	[TIMER_AUTO] = "auto", [TIMER_PIT] = "pit",   [TIMER_HPET] = "hpet",
	[TIMER_PMTMR] = "pmtmr", [TIMER_APIC] = "apic", [TIMER_HV] = "hv",
};
_Static_assert(ARRAY_SIZE(timer_names) == TIMER_COUNT, "timer_names");

const char *const exit_names[] = {
	[EXIT_AUTO] = "auto",
	[EXIT_QEMU] = "qemu",
	[EXIT_ACPI] = "acpi",
	[EXIT_HALT] = "halt",
};
_Static_assert(ARRAY_SIZE(exit_names) == EXIT_COUNT, "exit_names");

const char *const apic_choice_names[] = {
	[APIC_AUTO] = "auto",
	[APIC_XAPIC] = "xapic",
	[APIC_X2APIC] = "x2apic",
};
_Static_assert(ARRAY_SIZE(apic_choice_names) == APIC_CHOICE_COUNT, "apic_choice_names");

const char *const lpj_reuse_names[] = {
	[LPJ_REUSE_NODE] = "node",
	[LPJ_REUSE_PACKAGE] = "package",
	[LPJ_REUSE_NONE] = "none",
};
_Static_assert(ARRAY_SIZE(lpj_reuse_names) == LPJ_REUSE_COUNT, "lpj_reuse_names");

const char *const pmu_lvtpc_names[] = {
	[PMU_LVTPC_NMI] = "nmi",
	[PMU_LVTPC_FIXED] = "fixed",
};
_Static_assert(ARRAY_SIZE(pmu_lvtpc_names) == PMU_LVTPC_COUNT, "pmu_lvtpc_names");

const char *const fault_names[] = {
	[FAULT_NONE] = "none",
	[FAULT_AP_SILENT] = "ap_silent",
	[FAULT_EARLY_NMI] = "early_nmi",
};
_Static_assert(ARRAY_SIZE(fault_names) == FAULT_COUNT, "fault_names");

enum opt_kind { OPT_U32, OPT_U64, OPT_ENUM, OPT_STRING };

struct opt_desc {
	const char *key;
	enum opt_kind kind;
	size_t offset;
	u64 min, max;
	const char *const *names;
	u32 name_count;
};

#define U64_OPT(k, field, lo, hi) \
	{ k, OPT_U64, offsetof(struct options, field), lo, hi, NULL, 0 }
#define U32_OPT(k, field, lo, hi) \
	{ k, OPT_U32, offsetof(struct options, field), lo, hi, NULL, 0 }
#define ENUM_OPT(k, field, table) \
	{ k, OPT_ENUM, offsetof(struct options, field), 0, 0, table, ARRAY_SIZE(table) }

static const struct opt_desc opts[] = {
	{ "test", OPT_STRING, offsetof(struct options, test), 0, 0, NULL, 0 },
	U64_OPT("lpj", lpj, 0, UINT64_MAX),
	ENUM_OPT("lpj_source", lpj_source, lpj_source_names),
	ENUM_OPT("calibrate", calibrate, calibrate_names),
	ENUM_OPT("bringup", bringup, bringup_names),
	U32_OPT("cpus", cpus, 0, 65535),
	ENUM_OPT("timer", timer, timer_names),
	/* Legacy counter writes sign-extend bit 31 (SDM Vol 3B 21.2.2). */
	U64_OPT("pmu.period", pmu_period, 1, 0x7fffffff),
	U64_OPT("pmu.seconds", pmu_seconds, 1, 3600),
	U64_OPT("pmu.nmi_ipi", pmu_nmi_ipi, 0, 1000000),
	ENUM_OPT("pmu.lvtpc", pmu_lvtpc, pmu_lvtpc_names),
	ENUM_OPT("exit", exit, exit_names),
	U64_OPT("hz", hz, 10, 10000),
	ENUM_OPT("apic", apic, apic_choice_names),
	/* SDM Vol 3A 9.4.4.1 waits 10 ms after INIT; Linux uses 0 on modern CPUs. */
	U64_OPT("init_udelay", init_udelay, 0, 1000000),
	ENUM_OPT("lpj_reuse", lpj_reuse, lpj_reuse_names),
	U64_OPT("watchdog", watchdog, 0, 86400),
	ENUM_OPT("fault", fault, fault_names),
};

void options_default(struct options *o)
{
	*o = (struct options){
		.lpj_source = LPJ_SOURCE_AUTO,
		.calibrate = CALIBRATE_LINUX,
		.bringup = BRINGUP_SERIAL,
		.cpus = CPUS_ALL,
		.timer = TIMER_AUTO,
		.pmu_period = 10000,
		.pmu_seconds = 2,
		.exit = EXIT_AUTO,
		/* Debian's CONFIG_HZ. */
		.hz = 250,
		.apic = APIC_AUTO,
		.init_udelay = 10000,
		.lpj_reuse = LPJ_REUSE_NODE,
		/* Well past any test under TCG, well inside tools/run's timeout. */
		.watchdog = 30,
	};
	str_copy(o->test, "all", sizeof(o->test));
}

/* Decimal or 0x-prefixed hex, the whole of [s, s+len), without overflow. */
static bool parse_u64(const char *s, size_t len, u64 *out)
{
	u64 base = 10, v = 0;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return false;
	for (; i < len; i++) {
		char c = s[i];
		u64 d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

static void list_keys(char *err, size_t errlen)
{
	str_append(err, " (accepted: ", errlen);
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
		if (i)
			str_append(err, ", ", errlen);
		str_append(err, opts[i].key, errlen);
	}
	str_append(err, ")", errlen);
}

static bool set_value(const struct opt_desc *d, const char *val, size_t len,
		      struct options *o, char *err, size_t errlen)
{
	void *field = (char *)o + d->offset;
	u64 v;

	switch (d->kind) {
	case OPT_STRING:
		if (!len || len >= CMDLINE_TEST_MAX) {
			snprintf(err, errlen, "%s: value must be 1..%d characters", d->key,
				 CMDLINE_TEST_MAX - 1);
			return false;
		}
		memcpy(field, val, len);
		((char *)field)[len] = '\0';
		return true;
	case OPT_ENUM:
		for (u32 i = 0; i < d->name_count; i++) {
			if (strlen(d->names[i]) == len && !strncmp(d->names[i], val, len)) {
				*(u32 *)field = i;
				return true;
			}
		}
		snprintf(err, errlen, "%s: '%.*s' is not accepted (accepted: ", d->key, (int)len,
			 val);
		for (u32 i = 0; i < d->name_count; i++) {
			if (i)
				str_append(err, ", ", errlen);
			str_append(err, d->names[i], errlen);
		}
		str_append(err, ")", errlen);
		return false;
	case OPT_U32:
	case OPT_U64:
		if (!parse_u64(val, len, &v) || v < d->min || v > d->max) {
			snprintf(err, errlen, "%s: '%.*s' is not accepted (accepted: %llu..%llu)",
				 d->key, (int)len, val, (unsigned long long)d->min,
				 (unsigned long long)d->max);
			return false;
		}
		if (d->kind == OPT_U32)
			*(u32 *)field = (u32)v;
		else
			*(u64 *)field = v;
		return true;
	}
	return false;
}

bool cmdline_parse(const char *line, struct options *o, char *err, size_t errlen)
{
	const char *p = line;

	if (errlen)
		err[0] = '\0';
	for (;;) {
		const char *word, *eq = NULL;
		size_t len, key_len;
		const struct opt_desc *d = NULL;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p)
			return true;
		word = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
		len = p - word;
		for (size_t i = 0; i < len && !eq; i++)
			if (word[i] == '=')
				eq = word + i;
		if (!eq) {
			snprintf(err, errlen, "'%.*s' is not key=value", (int)len, word);
			list_keys(err, errlen);
			return false;
		}
		key_len = eq - word;
		for (size_t i = 0; i < ARRAY_SIZE(opts) && !d; i++)
			if (strlen(opts[i].key) == key_len && !strncmp(opts[i].key, word, key_len))
				d = &opts[i];
		if (!d) {
			snprintf(err, errlen, "unknown key '%.*s'", (int)key_len, word);
			list_keys(err, errlen);
			return false;
		}
		if (!set_value(d, eq + 1, len - key_len - 1, o, err, errlen))
			return false;
	}
}
