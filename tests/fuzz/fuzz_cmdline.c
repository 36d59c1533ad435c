// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the kernel command line. Whoever starts the VM types it
 * and the loader passes it on unchanged, so it can be anything. Beyond
 * not crashing: a line that is accepted leaves every option inside the
 * range its key documents (an enum inside its name table, a number inside
 * its min..max), so no later code indexes a table with a bad value; a
 * line that is refused always gets a terminated, non-empty message, since
 * that message is all the user sees. The message buffer's size comes from
 * the input too, so truncation at every length is exercised.
 */
#include <stdlib.h>

#include "kernel/cmdline.h"
#include "tests/fuzz/fuzz.h"

/* The kernel's message buffer is this size (KTAP_REASON_MAX * 2). */
#define ERR_MAX 320

static void check_accepted(const struct options *o)
{
	fuzz_assert_terminated(o->test);
	fuzz_assert(o->test[0], "test= accepted as empty");
	fuzz_assert(o->lpj_source < LPJ_SOURCE_COUNT, "lpj_source %u", o->lpj_source);
	fuzz_assert(o->calibrate < CALIBRATE_COUNT, "calibrate %u", o->calibrate);
	fuzz_assert(o->bringup < BRINGUP_COUNT, "bringup %u", o->bringup);
	fuzz_assert(o->timer < TIMER_COUNT, "timer %u", o->timer);
	fuzz_assert(o->exit < EXIT_COUNT, "exit %u", o->exit);
	fuzz_assert(o->apic < APIC_CHOICE_COUNT, "apic %u", o->apic);
	fuzz_assert(o->lpj_reuse < LPJ_REUSE_COUNT, "lpj_reuse %u", o->lpj_reuse);
	fuzz_assert(o->cpus == CPUS_ALL || o->cpus <= 65535, "cpus %u", o->cpus);
	fuzz_assert(o->pmu_period >= 1 && o->pmu_period <= 0x7fffffff, "pmu.period %llu",
		    (unsigned long long)o->pmu_period);
	fuzz_assert(o->pmu_seconds >= 1 && o->pmu_seconds <= 3600, "pmu.seconds %llu",
		    (unsigned long long)o->pmu_seconds);
	fuzz_assert(o->pmu_nmi_ipi <= 1000000, "pmu.nmi_ipi %llu",
		    (unsigned long long)o->pmu_nmi_ipi);
	fuzz_assert(o->hz >= 10 && o->hz <= 10000, "hz %llu", (unsigned long long)o->hz);
	fuzz_assert(o->init_udelay <= 1000000, "init_udelay %llu",
		    (unsigned long long)o->init_udelay);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct options o;
	size_t errlen;
	char *line, *err;
	bool ok;

	if (!size)
		return 0;
	/* First byte: the message buffer's size, the kernel's one half the time. */
	errlen = data[0] & 0x80 ? ERR_MAX : 1 + (data[0] & 0x7f);
	line = malloc(size);
	memcpy(line, data + 1, size - 1);
	line[size - 1] = '\0';
	/* Exactly errlen bytes: ASan sees a message written past its end. */
	err = malloc(errlen);

	options_default(&o);
	ok = cmdline_parse(line, &o, err, errlen);
	fuzz_assert(memchr(err, 0, errlen), "message not terminated");
	if (ok) {
		fuzz_assert(!err[0], "line accepted with a message: %s", err);
		check_accepted(&o);
	} else {
		fuzz_assert(errlen == 1 || err[0], "line refused without a message");
	}
	free(err);
	free(line);
	return 0;
}
