// SPDX-License-Identifier: MIT
/*
 * The command-line parser: every key of its table with a good value, the
 * defaults, number syntax, word splitting, and each way a word can be
 * wrong. The command line is how a user picks the experiment (test=,
 * lpj=, timer=, pmu.*=); a value silently misread or dropped would run a
 * different experiment than the one the results are filed under, so a bad
 * word must stop the run with a message naming the key and what is
 * accepted, and that message must fit whatever buffer the caller has.
 */
#include <stdlib.h>
#include <string.h>

#include "apic/bringup.h"
#include "apic/options.h"
#include "kernel/cmdline.h"
#include "kernel/lib/printf.h"
#include "kernel/options.h"
#include "kernel/test/options.h"
#include "kernel/test/test.h"
#include "kernel/time/options.h"
#include "kernel/time/policy.h"
#include "pmu/options.h"

#define ERR_MAX 512

/* The option with key, from the table itself; NULL for none. */
static const struct option *find_option(const char *key)
{
	for (const struct option *o = options_begin(); o < options_end(); o++)
		if (!strcmp(o->key, key))
			return o;
	return NULL;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * head, then every key of the table, sorted here and not by the parser's
 * own walk: the message an unknown key must give. A key the parser's list
 * leaves out fails every comparison with it; a new key needs no edit here.
 */
static const char *with_keys(const char *head)
{
	static const char *keys[64];
	static char buf[ERR_MAX];
	size_t n = 0;

	for (const struct option *o = options_begin(); o < options_end() && n < ARRAY_SIZE(keys);
	     o++)
		keys[n++] = o->key;
	qsort(keys, n, sizeof(keys[0]), by_key);
	snprintf(buf, sizeof(buf), "%s (accepted: ", head);
	for (size_t i = 0; i < n; i++) {
		strcat(buf, keys[i]);
		strcat(buf, i + 1 < n ? ", " : ")");
	}
	return buf;
}

/* "key: 'word' is not accepted (accepted: ...)" with the enum's own words. */
static const char *enum_refusal(const char *key, const char *word)
{
	const struct option *o = find_option(key);
	static char buf[ERR_MAX];

	snprintf(buf, sizeof(buf), "%s: '%s' is not accepted (accepted: ", key, word);
	for (u64 i = 0; o && option_word(o, i); i++) {
		strcat(buf, option_word(o, i));
		strcat(buf, option_word(o, i + 1) ? ", " : ")");
	}
	return buf;
}

#define CMDLINE_TEST_MAX TEST_SELECTION_MAX

/* Every option's value, one after the other: what a parse may change. */
static size_t snapshot(u8 *buf, size_t size)
{
	size_t n = 0;

	for (const struct option *o = options_begin(); o < options_end(); o++) {
		size_t len = o->kind == OPTION_STRING				   ? o->count
			     : o->kind == OPTION_U64 || o->kind == OPTION_U64_AUTO ? sizeof(u64)
										   : sizeof(u32);

		if (n + len > size)
			break;
		memcpy(buf + n, o->value, len);
		n += len;
	}
	return n;
}

/* line with its tabs, CRs and LFs spelled out, to quote in a KTAP line. */
static const char *visible(const char *line)
{
	static const char blanks[] = "\t\r\n", names[] = "trn";
	static char buf[ERR_MAX];
	size_t n = 0;

	for (; *line && n < sizeof(buf) - 3; line++) {
		const char *blank = strchr(blanks, *line);

		if (blank) {
			buf[n++] = '\\';
			buf[n++] = names[blank - blanks];
		} else {
			buf[n++] = *line;
		}
	}
	buf[n] = '\0';
	return buf;
}

/* Parse line over the defaults; it must be accepted with no message. */
static void parse_ok(const char *line)
{
	char err[ERR_MAX];
	bool ok;

	options_reset();
	ok = cmdline_parse(line, err, sizeof(err));
	if (!ok)
		report_info("\"%s\": %s", visible(line), err);
	report(ok && !err[0], "\"%s\" is accepted", visible(line));
}

/* Parse line over the defaults; it must be refused with exactly msg. */
static void parse_bad(const char *line, const char *msg)
{
	char err[ERR_MAX];
	bool ok;

	options_reset();
	ok = cmdline_parse(line, err, sizeof(err));
	if (ok || strcmp(err, msg))
		report_info("\"%s\": %s, message \"%s\", expected \"%s\"", line,
			    ok ? "accepted" : "refused", err, msg);
	report(!ok && !strcmp(err, msg), "\"%s\" is refused with its message", line);
}

DEFINE_TEST(unit_cmdline_defaults, "defaults, and an empty line keeps them", 0)
{
	static u8 def[4096], now[4096];
	size_t def_len;
	char err[ERR_MAX];

	options_reset();
	def_len = snapshot(def, sizeof(def));
	report_str_eq(test_options.test, "all", "test defaults to all");
	report_str_eq(test_options.skip, "", "skip defaults to none");
	report_eq(time_options.lpj, 0, "lpj defaults to 0 (measure)");
	report_eq(time_options.lpj_source, LPJ_SOURCE_AUTO, "lpj_source defaults to auto");
	report_eq(time_options.calibrate, CALIBRATE_LINUX, "calibrate defaults to linux");
	report_str_eq(bringup_mode_chosen()->name, "serial", "bringup defaults to serial");
	report_eq(apic_options.cpus, CPUS_ALL, "cpus defaults to all");
	report_eq(time_options.timer, TIMER_AUTO, "timer defaults to auto");
	report_eq(pmu_options.period, 10000, "pmu.period defaults to 10000");
	report_eq(pmu_options.seconds, 2, "pmu.seconds defaults to 2");
	report_eq(pmu_options.nmi_ipi, 0, "pmu.nmi_ipi defaults to 0");
	report_eq(pmu_options.lvtpc, PMU_LVTPC_NMI, "pmu.lvtpc defaults to nmi");
	report_eq(test_options.watchdog, 30, "watchdog defaults to 30 s");
	report_eq(kernel_options.fault, FAULT_NONE, "fault defaults to none");
	report_eq(kernel_options.exit, EXIT_AUTO, "exit defaults to auto");
	report_eq(time_options.hz, 250, "hz defaults to 250");
	report_eq(apic_options.mode, APIC_AUTO, "apic defaults to auto");
	report_eq(apic_options.init_udelay, OPTION_AUTO,
		  "init_udelay defaults to auto (Linux's rule by vendor and family)");
	report_eq(apic_options.parallel_calibrate, PARALLEL_CALIBRATE_AUTO,
		  "parallel_calibrate defaults to auto");
	report_str_eq(lpj_policy_chosen()->name, "hvprobe", "lpj_policy defaults to hvprobe");
	report_eq(time_options.lpj_reuse, LPJ_REUSE_NODE, "lpj_reuse defaults to node");

	parse_ok("");
	report(snapshot(now, sizeof(now)) == def_len && !memcmp(now, def, def_len),
	       "an empty line changes nothing");
	parse_ok(" \t\r\n ");
	report(snapshot(now, sizeof(now)) == def_len && !memcmp(now, def, def_len),
	       "a line of blanks changes nothing");

	memset(err, 'x', sizeof(err));
	options_reset();
	report(cmdline_parse("hz=100", err, sizeof(err)) && !err[0],
	       "success leaves an empty message");
}

/* Every key at once, each with a good value, each stored where it belongs. */
static void keys_in_one_line(void)
{
	parse_ok("test=boot,cpuinfo lpj=4000000 lpj_source=kvm calibrate=fast bringup=parallel "
		 "cpus=3 timer=pmtmr pmu.period=100000 pmu.seconds=3600 pmu.nmi_ipi=1000000 "
		 "exit=acpi hz=1000 apic=x2apic init_udelay=0 lpj_reuse=package pmu.lvtpc=fixed "
		 "watchdog=0 fault=ap_silent lpj_policy=linux-6.5 parallel_calibrate=serialize");
	report_str_eq(test_options.test, "boot,cpuinfo", "test=boot,cpuinfo");
	report_eq(time_options.lpj, 4000000, "lpj=4000000");
	report_str_eq(lpj_source_word(time_options.lpj_source), "kvm", "lpj_source=kvm");
	report_eq(time_options.calibrate, CALIBRATE_FAST, "calibrate=fast");
	report_str_eq(bringup_mode_chosen()->name, "parallel", "bringup=parallel");
	report_eq(apic_options.cpus, 3, "cpus=3");
	report_str_eq(timer_word(time_options.timer), "pmtmr", "timer=pmtmr");
	report_eq(pmu_options.period, 100000, "pmu.period=100000");
	report_eq(pmu_options.seconds, 3600, "pmu.seconds=3600");
	report_eq(pmu_options.nmi_ipi, 1000000, "pmu.nmi_ipi=1000000");
	report_eq(kernel_options.exit, EXIT_ACPI, "exit=acpi");
	report_eq(time_options.hz, 1000, "hz=1000");
	report_eq(apic_options.mode, APIC_X2APIC, "apic=x2apic");
	report_eq(apic_options.init_udelay, 0, "init_udelay=0");
	report_eq(time_options.lpj_reuse, LPJ_REUSE_PACKAGE, "lpj_reuse=package");
	report_eq(pmu_options.lvtpc, PMU_LVTPC_FIXED, "pmu.lvtpc=fixed");
	report_eq(test_options.watchdog, 0, "watchdog=0");
	report_eq(kernel_options.fault, FAULT_AP_SILENT, "fault=ap_silent");
	report_str_eq(lpj_policy_chosen()->name, "linux-6.5", "lpj_policy=linux-6.5");
	report_eq(apic_options.parallel_calibrate, PARALLEL_CALIBRATE_SERIALIZE,
		  "parallel_calibrate=serialize");
}

/* init_udelay's other number forms, and skip= alone. */
static void keys_alone(void)
{
	parse_ok("init_udelay=10000 init_udelay=auto");
	report_eq(apic_options.init_udelay, OPTION_AUTO, "init_udelay=auto after a number");
	parse_ok("init_udelay=1000000");
	report_eq(apic_options.init_udelay, 1000000, "init_udelay=1000000, the upper limit");
	parse_ok("init_udelay=0x10");
	report_eq(apic_options.init_udelay, 16, "init_udelay in hex");
	parse_ok("skip=exceptions,hv");
	report_str_eq(test_options.skip, "exceptions,hv", "skip=exceptions,hv");
}

/* Each enum table, every name in it, by its index. */
static void keys_every_enum_word(void)
{
	for (u32 i = 0; lpj_policy_word(i); i++) {
		char line[64];

		snprintf(line, sizeof(line), "lpj_policy=%s", lpj_policy_word(i));
		parse_ok(line);
		report_eq(time_options.lpj_policy, i, lpj_policy_word(i));
	}
	for (u32 i = 0; bringup_mode_word(i); i++) {
		char line[64];

		snprintf(line, sizeof(line), "bringup=%s", bringup_mode_word(i));
		parse_ok(line);
		report_eq(apic_options.bringup, i, bringup_mode_word(i));
	}
	for (u32 i = 0; i < PARALLEL_CALIBRATE_COUNT; i++) {
		char line[64];

		snprintf(line, sizeof(line), "parallel_calibrate=%s", parallel_calibrate_names[i]);
		parse_ok(line);
		report_eq(apic_options.parallel_calibrate, i, parallel_calibrate_names[i]);
	}
	for (u32 i = 0; lpj_source_word(i); i++) {
		char line[64];

		snprintf(line, sizeof(line), "lpj_source=%s", lpj_source_word(i));
		parse_ok(line);
		report_eq(time_options.lpj_source, i, lpj_source_word(i));
	}
	for (u32 i = 0; timer_word(i); i++) {
		char line[64];

		snprintf(line, sizeof(line), "timer=%s", timer_word(i));
		parse_ok(line);
		report_eq(time_options.timer, i, timer_word(i));
	}
	for (u32 i = 0; i < EXIT_COUNT; i++) {
		char line[64];

		snprintf(line, sizeof(line), "exit=%s", exit_names[i]);
		parse_ok(line);
		report_eq(kernel_options.exit, i, exit_names[i]);
	}
	parse_ok("calibrate=linux bringup=serial");
	report(time_options.calibrate == CALIBRATE_LINUX &&
		       !strcmp(bringup_mode_chosen()->name, "serial"),
	       "calibrate=linux and bringup=serial");
}

/* The range limits themselves are accepted. */
static void keys_at_their_limits(void)
{
	parse_ok("hz=10 cpus=0 pmu.period=2000 pmu.seconds=1 pmu.nmi_ipi=0");
	report(time_options.hz == 10 && apic_options.cpus == 0 && pmu_options.period == 2000 &&
		       pmu_options.seconds == 1 && pmu_options.nmi_ipi == 0,
	       "the lower limits");
	parse_ok("hz=10000 cpus=65535 pmu.period=0x7fffffff lpj=10000000000");
	report(time_options.hz == 10000 && apic_options.cpus == 65535 &&
		       pmu_options.period == 0x7fffffff && time_options.lpj == 10000000000ULL,
	       "the upper limits");
}

DEFINE_TEST(unit_cmdline_keys, "every key with a good value", 0)
{
	keys_in_one_line();
	keys_alone();
	keys_every_enum_word();
	keys_at_their_limits();
}

/*
 * Every key of the table, each with the values the table says it accepts:
 * every enum word, a number's limits, "auto", a string. A key the parser
 * does not find, or a value it stores elsewhere, fails here with no list
 * to keep.
 */
DEFINE_TEST(unit_cmdline_table, "every key of the table with each value it states", 0)
{
	for (const struct option *o = options_begin(); o < options_end(); o++) {
		char line[128];
		u64 got;

		switch (o->kind) {
		case OPTION_ENUM:
			for (u64 i = 0; option_word(o, i); i++) {
				snprintf(line, sizeof(line), "%s=%s", o->key, option_word(o, i));
				parse_ok(line);
				report_eq(*(u32 *)o->value, i, line);
			}
			break;
		case OPTION_STRING:
			snprintf(line, sizeof(line), "%s=boot", o->key);
			parse_ok(line);
			report_str_eq((const char *)o->value, "boot", line);
			break;
		case OPTION_U64_AUTO:
			snprintf(line, sizeof(line), "%s=%llu %s=auto", o->key, o->max, o->key);
			parse_ok(line);
			report_eq(*(u64 *)o->value, OPTION_AUTO, line);
			/* fallthrough */
		case OPTION_U32:
		case OPTION_U64:
			for (int hi = 0; hi < 2; hi++) {
				u64 v = hi ? o->max : o->min;

				snprintf(line, sizeof(line), "%s=%llu", o->key, v);
				parse_ok(line);
				got = o->kind == OPTION_U32 ? *(u32 *)o->value : *(u64 *)o->value;
				report_eq(got, v, line);
			}
			break;
		}
	}
}

DEFINE_TEST(unit_cmdline_syntax, "hex, last value wins, blanks between words", 0)
{
	char long_test[CMDLINE_TEST_MAX + 8];

	parse_ok("lpj=0x3d0900");
	report_eq(time_options.lpj, 4000000, "0x-prefixed hex");
	parse_ok("lpj=0X2540bE400");
	report_eq(time_options.lpj, 10000000000ULL, "0X prefix and mixed-case digits");
	parse_ok("lpj=007");
	report_eq(time_options.lpj, 7, "leading zeros are decimal, not octal");

	parse_ok("hz=100 hz=300");
	report_eq(time_options.hz, 300, "the last value wins");
	parse_ok("test=boot test=cpuinfo");
	report_str_eq(test_options.test, "cpuinfo", "the last test= wins");

	parse_ok("   hz=100   cpus=2   ");
	report(time_options.hz == 100 && apic_options.cpus == 2,
	       "leading, trailing and repeated spaces");
	parse_ok("hz=100\tcpus=2\r\n");
	report(time_options.hz == 100 && apic_options.cpus == 2, "tabs, CR and LF separate words");
	parse_ok("test=a=b");
	report_str_eq(test_options.test, "a=b", "a value may hold '='");

	memset(long_test, 'x', CMDLINE_TEST_MAX - 1);
	long_test[CMDLINE_TEST_MAX - 1] = '\0';
	{
		char line[CMDLINE_TEST_MAX + 8] = "test=";

		strcat(line, long_test);
		parse_ok(line);
		report_eq(strlen(test_options.test), CMDLINE_TEST_MAX - 1,
			  "test= of 255 characters fits");
	}
}

DEFINE_TEST(unit_cmdline_errors, "each bad word is refused with its message", 0)
{
	char line[CMDLINE_TEST_MAX + 8] = "test=";
	char err[ERR_MAX];

	parse_bad("foo=1", with_keys("unknown key 'foo'"));
	parse_bad("hz=100 pmu.periods=5", with_keys("unknown key 'pmu.periods'"));
	parse_bad("HZ=100", with_keys("unknown key 'HZ'"));
	parse_bad("=5", with_keys("unknown key ''"));
	parse_bad("quiet", with_keys("'quiet' is not key=value"));
	parse_bad("hz=100 /boot/hvprobe.elf", with_keys("'/boot/hvprobe.elf' is not key=value"));

	parse_bad("hz=", "hz: '' is not accepted (accepted: 10..10000)");
	parse_bad("hz=0", "hz: '0' is not accepted (accepted: 10..10000)");
	parse_bad("hz=10001", "hz: '10001' is not accepted (accepted: 10..10000)");
	parse_bad("hz=1k", "hz: '1k' is not accepted (accepted: 10..10000)");
	parse_bad("lpj=-1", "lpj: '-1' is not accepted (accepted: 0..10000000000)");
	parse_bad("lpj=18446744073709551615",
		  "lpj: '18446744073709551615' is not accepted (accepted: 0..10000000000)");
	parse_bad("lpj=18446744073709551616",
		  "lpj: '18446744073709551616' is not accepted (accepted: 0..10000000000)");
	parse_bad("lpj=0x10000000000000000",
		  "lpj: '0x10000000000000000' is not accepted (accepted: 0..10000000000)");
	parse_bad("lpj=0x", "lpj: '0x' is not accepted (accepted: 0..10000000000)");
	parse_bad("lpj=0xg", "lpj: '0xg' is not accepted (accepted: 0..10000000000)");
	parse_bad("pmu.period=0", "pmu.period: '0' is not accepted (accepted: 2000..2147483647)");
	/* Below the floor a PMI's own handling could outlast the period (pmu/options.c). */
	parse_bad("pmu.period=1", "pmu.period: '1' is not accepted (accepted: 2000..2147483647)");
	parse_bad("pmu.period=1999",
		  "pmu.period: '1999' is not accepted (accepted: 2000..2147483647)");
	parse_bad("pmu.period=0x80000000",
		  "pmu.period: '0x80000000' is not accepted (accepted: 2000..2147483647)");
	parse_bad("pmu.seconds=3601", "pmu.seconds: '3601' is not accepted (accepted: 1..3600)");
	parse_bad("pmu.nmi_ipi=1000001",
		  "pmu.nmi_ipi: '1000001' is not accepted (accepted: 0..1000000)");
	parse_bad("cpus=65536", "cpus: '65536' is not accepted (accepted: 0..65535)");
	/* 2^32 + 1 would be 1 if the range check came after a 32-bit store. */
	parse_bad("cpus=4294967297", "cpus: '4294967297' is not accepted (accepted: 0..65535)");

	/* Enum words are case-sensitive; the message lists the table's own. */
	parse_bad("timer=tsc", enum_refusal("timer", "tsc"));
	parse_bad("timer=", enum_refusal("timer", ""));
	parse_bad("timer=PIT", enum_refusal("timer", "PIT"));
	parse_bad("lpj_source=xen", enum_refusal("lpj_source", "xen"));
	parse_bad("calibrate=slow", enum_refusal("calibrate", "slow"));
	parse_bad("bringup=x", enum_refusal("bringup", "x"));
	parse_bad("init_udelay=1000001",
		  "init_udelay: '1000001' is not accepted (accepted: auto, 0..1000000)");
	parse_bad("init_udelay=AUTO",
		  "init_udelay: 'AUTO' is not accepted (accepted: auto, 0..1000000)");
	parse_bad("init_udelay=autox",
		  "init_udelay: 'autox' is not accepted (accepted: auto, 0..1000000)");
	parse_bad("init_udelay=", "init_udelay: '' is not accepted (accepted: auto, 0..1000000)");
	parse_bad("lpj_policy=linux-6.2", enum_refusal("lpj_policy", "linux-6.2"));
	parse_bad("parallel_calibrate=2", enum_refusal("parallel_calibrate", "2"));
	parse_bad("pmu.lvtpc=smi", enum_refusal("pmu.lvtpc", "smi"));
	parse_bad("watchdog=-1", "watchdog: '-1' is not accepted (accepted: 0..86400)");
	parse_bad("fault=reboot", enum_refusal("fault", "reboot"));
	parse_bad("exit=reboot", enum_refusal("exit", "reboot"));

	parse_bad("test=", "test: value must be 1..255 characters");
	parse_bad("skip=", "skip: value must be 1..255 characters");
	memset(line + 5, 'x', CMDLINE_TEST_MAX);
	line[5 + CMDLINE_TEST_MAX] = '\0';
	parse_bad(line, "test: value must be 1..255 characters");

	/* Parsing stops at the first bad word: later words are not applied. */
	options_reset();
	report(!cmdline_parse("hz=100 bogus cpus=2", err, sizeof(err)),
	       "a line with a bad word in the middle is refused");
	report(time_options.hz == 100 && apic_options.cpus == CPUS_ALL,
	       "words before it applied, words after it not");
	report_str_eq(err, with_keys("'bogus' is not key=value"), "the message names that word");
}

DEFINE_TEST(unit_cmdline_small_buffer, "a message longer than the buffer is cut", 0)
{
	static const size_t sizes[] = { 1, 2, 8, 17, 18, 40 };
	const char *full = with_keys("unknown key 'foo'");

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		/* Exactly sized on the heap: ASan sees any write past it. */
		size_t size = sizes[i];
		char *err = malloc(size);

		memset(err, 'x', size);
		options_reset();
		report(!cmdline_parse("foo=1", err, size), "refused with a %zu-byte buffer", size);
		report(strlen(err) == size - 1 && !strncmp(err, full, size - 1),
		       "the message is cut to %zu characters and terminated", size - 1);
		free(err);
	}

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		char *err = malloc(sizes[i]);

		options_reset();
		cmdline_parse("timer=tsc", err, sizes[i]);
		report(strlen(err) == sizes[i] - 1, "an enum message in %zu bytes is terminated",
		       sizes[i]);
		free(err);
	}

	{
		char guard = 'x';

		options_reset();
		report(!cmdline_parse("foo=1", &guard, 0) && guard == 'x',
		       "a 0-byte buffer is never written");
	}
}
