// SPDX-License-Identifier: MIT
/* The host model of a KVM guest's PMU, LVTPC and NMIs; see model.h. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apic/apic.h"
#include "apic/smp/smp.h"
#include "kernel/time/clock.h"
#include "kernel/time/delay.h"
#include "kernel/x86/alloc.h"
#include "kernel/x86/cpuid.h"
#include "kernel/x86/nmi.h"
#include "kernel/x86/trap.h"
#include "kernel/x86/x86.h"
#include "pmu/pmi.h"
#include "pmu/workload.h"
#include "tests/unit/model.h"

#define MAX_INJECTIONS 8
#define FIXED_SHIFT 32
#define IDLE_STEP 64 /* model cycles an idle point or a wait step takes */

struct mcpu {
	u32 index;
	struct percpu percpu;
	pthread_t thread;
	bool has_thread;
	void (*fn)(void *arg);
	void *arg;
	bool fn_done;
	/* The APIC and NMI state. */
	u32 lvtpc;
	u32 nmis_pending;  /* KVM's nmi_pending: up to 2 outside an NMI, 1 inside */
	u32 nmi_queued;	   /* KVM's nmi_queued: kvm_inject_nmi() since process_nmi() */
	u32 requests;	   /* KVM_REQ_* pending, by BIT(enum model_req) */
	bool pmu_overflow; /* an emulated overflow kvm_pmu_handle_event() will find */
	bool in_nmi, irq_pending, in_irq, in_workload;
	bool in_exit;
	u32 exit_deliveries; /* PMI deliveries since the last VM exit */
	/* The PMI whose NMI no VM-entry has injected yet: since, and cancels since. */
	bool pmi_waiting;
	u64 pmi_at, pmi_cancels;
	/* model_lose_overflow(): the status bit, and resumes to let by first. */
	s32 lose_bit;
	u32 lose_skip;
	/* The PMU. */
	u64 gp[MODEL_COUNTERS], evtsel[MODEL_COUNTERS], fixed[3];
	u64 fixed_ctrl, global_ctrl, global_status, perf_capabilities;
	struct model_truth truth;
	u64 stall_from, stall_until; /* model time this vCPU is descheduled */
	u64 last_point; /* model time this CPU last came to a point, before any hand-over */
	s64 tsc_adjust; /* IA32_TSC_ADJUST */
};

static struct {
	struct model_config c;
	struct mcpu cpu[MODEL_CPUS];
	trap_handler handlers[X86_NR_VECTORS];
	struct model_injection inject[MAX_INJECTIONS];
	u32 ninject;
	s32 overflow_at_stop; /* the CPU, or -1 */
	u64 now, rng;
	pthread_mutex_t lock;
	pthread_cond_t turn;
	u32 current;
	bool stopping, registered;
	FILE *rec;
	u32 lose_every;
	u64 records, lost;
} m = { .lock = PTHREAD_MUTEX_INITIALIZER, .turn = PTHREAD_COND_INITIALIZER };

static __thread struct mcpu *self;

/*
 * The profiles (docs/pmi.md). exit_cycles: a VM exit's round trip, and
 * REPROGRAM_CYCLES more for each reprogram of the counters; a cancelled
 * entry costs CANCEL_CYCLES (it undoes the injection and loops again).
 * Checked against the sources: 6.1.y took a16eb25b09c0 in the stable
 * review of 2023-10-23 ("[PATCH 6.1 020/196]") and 49ff3b4aec51 in that
 * of 2024-04-23 ("[PATCH 6.1 123/141]"), so LVTPC is masked for every
 * vendor in between; 6.1.141 masks in kvm_apic_local_deliver()
 * (lapic.c:2585-2587), still queues the irq_work in __kvm_perf_overflow()
 * (pmu.c:91-97, 138-141) and has no KVM_REQ_PMI in kvm_vcpu_has_events():
 * no 73554b29bd70. 6.12.19 has KVM_REQ_PMI there (x86.c:11136) and checks
 * KVM_REQ_PMU and KVM_REQ_PMI before KVM_REQ_NMI (x86.c:10784-10792),
 * where 6.1.141 checks KVM_REQ_NMI first (x86.c:10682-10686).
 */
#define REPROGRAM_CYCLES 10
#define CANCEL_CYCLES 15

const struct model_host model_hosts[MODEL_HOSTS] = {
	[MODEL_HOST_6_1_0] = { .name = "6.1.0", .commits = "none", .exit_cycles = 20 },
	[MODEL_HOST_6_1_60] = { .name = "6.1.60",
				.commits = "a16eb25b09c0",
				.mask_intel = true,
				.mask_amd = true,
				.exit_cycles = 20 },
	[MODEL_HOST_6_1_141] = { .name = "6.1.141",
				 .commits = "a16eb25b09c0 49ff3b4aec51",
				 .mask_intel = true,
				 .exit_cycles = 20 },
	[MODEL_HOST_6_6] = { .name = "6.6",
			     .commits = "a16eb25b09c0 73554b29bd70",
			     .mask_intel = true,
			     .mask_amd = true,
			     .one_pmi_per_exit = true,
			     .deferred_reprogram = true,
			     .exit_cycles = 20 },
	[MODEL_HOST_6_6_Y] = { .name = "6.6.y",
			       .commits = "a16eb25b09c0 73554b29bd70 49ff3b4aec51",
			       .mask_intel = true,
			       .one_pmi_per_exit = true,
			       .deferred_reprogram = true,
			       .exit_cycles = 20 },
	[MODEL_HOST_6_7] = { .name = "6.7",
			     .commits = "a16eb25b09c0 73554b29bd70 fad505b2cb83",
			     .mask_intel = true,
			     .mask_amd = true,
			     .one_pmi_per_exit = true,
			     .pmi_before_nmi = true,
			     .deferred_reprogram = true,
			     .exit_cycles = 20 },
	[MODEL_HOST_6_9] = { .name = "6.9",
			     .commits = "a16eb25b09c0 73554b29bd70 fad505b2cb83 49ff3b4aec51",
			     .mask_intel = true,
			     .one_pmi_per_exit = true,
			     .pmi_before_nmi = true,
			     .deferred_reprogram = true,
			     .exit_cycles = 20 },
	[MODEL_HOST_MEDIATED] = { .name = "mediated",
				  .commits = "a16eb25b09c0 73554b29bd70 fad505b2cb83 49ff3b4aec51 "
					     "kvm-x86-pmu-6.20",
				  .mask_intel = true,
				  .one_pmi_per_exit = true,
				  .pmi_before_nmi = true,
				  .deferred_reprogram = true,
				  .mediated = true,
				  .exit_cycles = 20 },
};

/*
 * vcpu_enter_guest()'s request checks, of the three that matter here:
 * KVM_REQ_NMI (process_nmi()) before KVM_REQ_PMU (kvm_pmu_handle_event())
 * and KVM_REQ_PMI (kvm_pmu_deliver_pmi()) until fad505b2cb83, after them
 * from it; KVM_REQ_EVENT (kvm_check_and_inject_events()) comes after the
 * request block in both.
 */
static const enum model_req nmi_first[] = { MODEL_REQ_NMI, MODEL_REQ_PMU, MODEL_REQ_PMI,
					    MODEL_REQ_EVENT, MODEL_REQS };
static const enum model_req pmi_first[] = { MODEL_REQ_PMU, MODEL_REQ_PMI, MODEL_REQ_NMI,
					    MODEL_REQ_EVENT, MODEL_REQS };

const enum model_req *model_request_order(const struct model_host *h)
{
	return h->pmi_before_nmi ? pmi_first : nmi_first;
}

const char *const model_pmu_names[MODEL_PMUS] = {
	[MODEL_INTEL_V2] = "Intel v2",
	[MODEL_INTEL_V5] = "Intel v5",
	[MODEL_AMD_LEGACY] = "AMD legacy",
	[MODEL_AMD_V2] = "AMD PerfMonV2",
};

/* The symbols the modelled sources need from outside them. */
struct clock_state clock;
/* Where the modelled workload loop "is": its bounds, one object apart. */
#define WORKLOAD_LOOP_SIZE 64
const u8 workload_loop[WORKLOAD_LOOP_SIZE + 1];
asm(".globl workload_loop_end\n.set workload_loop_end, workload_loop + 64");

static __noreturn void model_bug(const char *what, u64 value)
{
	fprintf(stderr, "model: %s (0x%llx) on CPU %u\n", what, value, self ? self->index : 0);
	abort();
}

static u64 rnd(void)
{
	/* xorshift64*: seeded, so a run repeats. */
	m.rng ^= m.rng >> 12;
	m.rng ^= m.rng << 25;
	m.rng ^= m.rng >> 27;
	return m.rng * 0x2545f4914f6cdd1dULL;
}

static struct mcpu *me(void)
{
	if (!self)
		self = &m.cpu[0];
	return self;
}

/* ---- The PMU ---- */

static bool intel(void)
{
	return m.c.vendor == PMU_INTEL;
}

/* Intel architectural v2 on, AMD PerfMonV2: PERF_GLOBAL_CTRL and STATUS. */
static bool has_global(void)
{
	return m.c.version >= 2;
}

static u64 mask(u32 width)
{
	return width >= 64 ? ~0ULL : (1ULL << width) - 1;
}

static bool gp_enabled(const struct mcpu *c, u32 i)
{
	return (c->evtsel[i] & EVTSEL_EN) && (!has_global() || (c->global_ctrl & BIT(i)));
}

static bool fixed_enabled(const struct mcpu *c, u32 i)
{
	return ((c->fixed_ctrl >> (4 * i)) & 3) && (c->global_ctrl & BIT(FIXED_SHIFT + i));
}

static bool any_select_on(const struct mcpu *c)
{
	for (u32 i = 0; i < m.c.gp_counters; i++)
		if (c->evtsel[i] & EVTSEL_EN)
			return true;
	return (c->fixed_ctrl & 0x333) != 0;
}

/* ---- What a host probe records ---- */

#define PROBE_PID 4242
#define PROBE_TID 5000 /* vCPU i's thread is PROBE_TID + i */
/* struct kvm_vcpu *, as a kprobe's vcpu= argument shows it. */
#define VCPU_PTR(c) (0xffff888104a40000ULL + 0x8000ULL * (c)->index)

/* One record: on thread's vCPU thread, as perf script -F pid,tid,time,event,trace prints it. */
static void record(const struct mcpu *thread, const char *event, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void record(const struct mcpu *thread, const char *event, const char *fmt, ...)
{
	va_list ap;

	if (!m.rec)
		return;
	if (m.lose_every && ++m.records % m.lose_every == 0) {
		m.lost++;
		return;
	}
	fprintf(m.rec, "%8u/%-6u %llu.%09llu: %28s: ", PROBE_PID, PROBE_TID + thread->index,
		m.now / m.c.tsc_hz, m.now % m.c.tsc_hz * (1000000000ULL / m.c.tsc_hz), event);
	va_start(ap, fmt);
	vfprintf(m.rec, fmt, ap);
	va_end(ap);
	fputc('\n', m.rec);
}

/* ---- KVM ---- */

/*
 * kvm_inject_nmi(): queued, and KVM_REQ_NMI; on the thread that runs it
 * (a sender's, for an NMI IPI).
 */
static void inject_nmi(struct mcpu *c)
{
	c->nmi_queued++;
	c->requests |= BIT(MODEL_REQ_NMI);
	record(me(), "hvprobe:inject_nmi", "(kvm_inject_nmi+0x0/0x40) vcpu=0x%llx", VCPU_PTR(c));
}

/*
 * KVM's process_nmi(): two NMIs may be pending when the vCPU is not in
 * one (the first is injected at once, the second waits for its IRET),
 * one when it is; the rest merge, as on bare metal (SDM Vol 3A 6.7.1).
 */
static void process_nmi(struct mcpu *c)
{
	u32 limit = c->in_nmi ? 1 : 2;

	for (; c->nmi_queued; c->nmi_queued--)
		if (c->nmis_pending >= limit)
			c->truth.nmis_merged++;
		else
			c->nmis_pending++;
}

static void fire(struct model_injection *i)
{
	struct mcpu *t = &m.cpu[i->target];

	if (i->skip) {
		i->skip--;
		return;
	}
	i->times--;
	if (i->hook)
		i->hook();
	if (i->hook_only)
		return;
	t->truth.injected++;
	if (!i->spurious)
		__atomic_fetch_add(&nmi_cpu(i->target)->mail, 1, __ATOMIC_RELEASE);
	inject_nmi(t);
}

static void injections_after_pmi(struct mcpu *c)
{
	for (u32 k = 0; k < m.ninject; k++)
		if (m.inject[k].times && m.inject[k].on == MODEL_AFTER_PMI &&
		    m.inject[k].cpu == c->index)
			fire(&m.inject[k]);
}

/*
 * kvm_pmu_deliver_pmi(): kvm_apic_local_deliver() of LVTPC, which drops
 * it while LVTPC is masked, masks LVTPC where the host does, and in NMI
 * mode queues an NMI (kvm_inject_nmi()); a fixed vector is accepted into
 * the IRR for KVM_REQ_EVENT.
 */
static void deliver_pmi(struct mcpu *c)
{
	record(c, "hvprobe:pmi", "(kvm_pmu_deliver_pmi+0x0/0x60) vcpu=0x%llx", VCPU_PTR(c));
	c->exit_deliveries++;
	if (c->lvtpc & APIC_LVT_MASKED) {
		c->truth.pmis_dropped++;
		return;
	}
	c->truth.pmis_raised++;
	if ((c->lvtpc & APIC_LVT_DELIVERY_MODE) == APIC_LVT_DM_NMI) {
		inject_nmi(c);
		if (!c->pmi_waiting) {
			c->pmi_waiting = true;
			c->pmi_at = m.now;
			c->pmi_cancels = 0;
		}
	} else {
		record(c, "kvm:kvm_apic_accept_irq", "apicid %x vec %u (Fixed|edge)", c->index,
		       (u32)(c->lvtpc & APIC_ICR_VECTOR_MASK));
		c->irq_pending = true;
		c->requests |= BIT(MODEL_REQ_EVENT);
	}
	if (intel() ? m.c.host->mask_intel : m.c.host->mask_amd)
		c->lvtpc |= APIC_LVT_MASKED;
	if (m.c.doubling) {
		c->truth.doubled++;
		inject_nmi(c);
	}
	injections_after_pmi(c);
}

/* The request checks, in the host's order (model_request_order()). */
static void service_requests(struct mcpu *c)
{
	for (const enum model_req *r = model_request_order(m.c.host); *r != MODEL_REQS; r++) {
		if (!(c->requests & BIT(*r)))
			continue;
		c->requests &= ~BIT(*r);
		switch (*r) {
		case MODEL_REQ_NMI: process_nmi(c); break;
		case MODEL_REQ_PMU:
			/* kvm_pmu_handle_event(): the emulated counts, reprogrammed at entry. */
			c->truth.reprograms_at_entry++;
			m.now += REPROGRAM_CYCLES;
			if (c->pmu_overflow)
				c->requests |= BIT(MODEL_REQ_PMI);
			c->pmu_overflow = false;
			break;
		case MODEL_REQ_PMI: deliver_pmi(c); break;
		default: break; /* KVM_REQ_EVENT: the IRR is the guest's at its next point */
		}
	}
}

/*
 * vcpu_enter_guest(): the requests, the injection, and the last check
 * (kvm_vcpu_exit_request()): a request raised after its check was passed
 * cancels the entry (cancel_injection) and the loop runs again. Then the
 * entry, injecting a pending NMI unless the guest blocks NMIs.
 */
static void vcpu_enter_guest(struct mcpu *c)
{
	bool injects;

	for (;;) {
		service_requests(c);
		if (!c->requests)
			break;
		c->truth.cancels++;
		c->pmi_cancels++;
		m.now += CANCEL_CYCLES;
		record(c, "hvprobe:cancel", "(vmx_cancel_injection+0x0/0x50) vcpu=0x%llx",
		       VCPU_PTR(c));
	}
	if (c->exit_deliveries >= 2)
		c->truth.exits_delivering_twice++;
	c->exit_deliveries = 0;
	injects = c->nmis_pending && !c->in_nmi;
	if (injects && c->pmi_waiting) {
		c->truth.pmi_nmis++;
		c->truth.pmi_to_entry += m.now - c->pmi_at;
		c->truth.pmi_cancels += c->pmi_cancels;
		c->pmi_waiting = false;
	}
	c->truth.entries++;
	record(c, "kvm:kvm_entry", "vcpu %u, rip 0x%x", c->index, injects ? 0x1000 : 0x1004);
}

/* A VM exit for why, other than an emulated instruction's: then the entry. */
static void exit_and_enter(struct mcpu *c, const char *why)
{
	c->truth.exits++;
	m.now += m.c.host->exit_cycles;
	record(c, "kvm:kvm_exit", "reason %s rip 0x1000 info 0 0", why);
	vcpu_enter_guest(c);
}

/*
 * An overflow: its status bit, and with INT a PMI. In the guest, the
 * host's perf event overflows with it and the host's PMI (an NMI, or
 * with the mediated vPMU its own vector) exits the vCPU; KVM raises
 * KVM_REQ_PMI (__kvm_perf_overflow(), kvm_handling_nmi_from_guest()),
 * serviced at the VM-entry that follows. In an exit, on an instruction
 * KVM emulates: KVM_REQ_PMI at once, or from KVM_REQ_PMU where the
 * reprogram is deferred; before 73554b29bd70 the irq_work delivers it
 * in the exit as well.
 */
static void overflow(struct mcpu *c, u32 bit, bool interrupt)
{
	c->truth.overflows[bit]++;
	if (has_global())
		c->global_status |= BIT(bit);
	if (!interrupt)
		return;
	if (!c->in_exit) {
		c->requests |= BIT(MODEL_REQ_PMI);
		exit_and_enter(c, m.c.host->mediated ? "EXTERNAL_INTERRUPT" : "EXCEPTION_NMI");
		return;
	}
	if (!m.c.host->one_pmi_per_exit) {
		c->truth.pmis_twice++;
		deliver_pmi(c);
	}
	if (m.c.host->deferred_reprogram)
		c->pmu_overflow = true;
	else
		c->requests |= BIT(MODEL_REQ_PMI);
}

static void count(struct mcpu *c, u64 *value, u32 width, u64 events, u32 bit, bool interrupt)
{
	u64 room = mask(width) - *value + 1;

	if (events >= room) {
		*value = (events - room) & mask(width);
		overflow(c, bit, interrupt);
	} else {
		*value += events;
	}
}

/* n instructions retire on c: the enabled counters count them. */
static void retire(struct mcpu *c, u64 n)
{
	m.now += n;
	for (u32 i = 0; i < m.c.gp_counters; i++)
		if (gp_enabled(c, i))
			count(c, &c->gp[i], m.c.gp_width, n, i, c->evtsel[i] & EVTSEL_INT);
	for (u32 i = 0; i < m.c.fixed_counters; i++)
		if (fixed_enabled(c, i))
			count(c, &c->fixed[i], m.c.fixed_width, n, FIXED_SHIFT + i,
			      (c->fixed_ctrl >> (4 * i)) & 8);
}

/* ---- Running CPUs one at a time ---- */

static void wait_turn(struct mcpu *c)
{
	while (m.current != c->index && !m.stopping)
		pthread_cond_wait(&m.turn, &m.lock);
}

static bool stalled(const struct mcpu *c)
{
	return m.now >= c->stall_from && m.now < c->stall_until;
}

static bool runnable(u32 i)
{
	return i < m.c.cpus && (i == 0 || m.cpu[i].has_thread) && !stalled(&m.cpu[i]);
}

static void hand_over(struct mcpu *c, u32 next)
{
	m.current = next;
	pthread_cond_broadcast(&m.turn);
	wait_turn(c);
}

/*
 * Now and then the baton passes to another CPU, drawn from the seed; a
 * stalled CPU (a descheduled vCPU) passes it on whenever another can run.
 */
static void maybe_switch(struct mcpu *c)
{
	u32 next;

	if (m.c.cpus < 2)
		return;
	if (stalled(c)) {
		for (u32 k = 1; k < m.c.cpus; k++)
			if (runnable((c->index + k) % m.c.cpus)) {
				hand_over(c, (c->index + k) % m.c.cpus);
				return;
			}
		return;
	}
	if (rnd() % 1000 >= m.c.switch_permille)
		return;
	next = rnd() % m.c.cpus;
	if (next != c->index && runnable(next))
		hand_over(c, next);
}

static void take_interrupts(struct mcpu *c)
{
	struct trap_frame f;

	while ((c->nmis_pending && !c->in_nmi) || (c->irq_pending && !c->in_irq && !c->in_nmi)) {
		memset(&f, 0, sizeof(f));
		f.rip = c->in_workload ? (u64)(uintptr_t)workload_loop + 8 : 0x1000;
		if (c->nmis_pending && !c->in_nmi) {
			c->nmis_pending--;
			c->in_nmi = true;
			c->truth.nmis_taken++;
			retire(c, m.c.entry_events);
			f.vector = X86_TRAP_NMI;
			if (m.handlers[X86_TRAP_NMI])
				m.handlers[X86_TRAP_NMI](&f);
			c->in_nmi = false;
			/* The IRET opens the NMI window KVM asked to exit on. */
			if (c->nmis_pending)
				exit_and_enter(c, "NMI_WINDOW");
		} else {
			c->irq_pending = false;
			c->in_irq = true;
			retire(c, m.c.entry_events);
			f.vector = APIC_VECTOR_PMI;
			if (m.handlers[APIC_VECTOR_PMI])
				m.handlers[APIC_VECTOR_PMI](&f);
			c->in_irq = false;
		}
	}
}

/*
 * A request another CPU (or the model) posted while this vCPU ran:
 * kvm_vcpu_kick()'s IPI exits it, and the entry after services it.
 */
static void kicked(struct mcpu *c)
{
	if (c->requests && !c->in_exit)
		exit_and_enter(c, "EXTERNAL_INTERRUPT");
}

/* Where modelled code touches the machine: interrupts, and maybe another CPU. */
static void point(struct mcpu *c)
{
	c->last_point = m.now;
	kicked(c);
	take_interrupts(c);
	maybe_switch(c);
	kicked(c);
	take_interrupts(c);
}

static struct mcpu *cpu_by_apic_id(u32 id)
{
	for (u32 i = 0; i < m.c.cpus; i++)
		if (m.cpu[i].percpu.apic_id == id)
			return &m.cpu[i];
	return NULL;
}

static void exit_enter(struct mcpu *c, u32 events);
static void exit_leave(struct mcpu *c);

/* An NMI IPI: the sender's ICR write exits, and KVM queues the NMI on the target. */
static void send_nmi(const struct percpu *to)
{
	struct mcpu *t = cpu_by_apic_id(to->apic_id), *c = me();

	exit_enter(c, m.c.apic_events);
	if (t) {
		record(c, "kvm:kvm_apic_ipi", "dst %x vec 0 (NMI|physical|assert|edge|dst)",
		       t->index);
		inject_nmi(t);
	}
	exit_leave(c);
}

static void injections_after(struct mcpu *c, u32 msr, bool read)
{
	enum model_trigger on = read ? MODEL_AFTER_READ : MODEL_AFTER_WRITE;

	for (u32 k = 0; k < m.ninject; k++) {
		struct model_injection *i = &m.inject[k];

		if (i->times && i->on == on && i->cpu == c->index && i->msr == msr &&
		    !(i->counters_off && any_select_on(c)))
			fire(i);
	}
}

/* ---- VM exits ---- */

static bool counting(const struct mcpu *c)
{
	for (u32 i = 0; i < m.c.gp_counters; i++)
		if (gp_enabled(c, i))
			return true;
	for (u32 i = 0; i < m.c.fixed_counters; i++)
		if (fixed_enabled(c, i))
			return true;
	return false;
}

/*
 * The guest instructions up to the exiting one retire in the guest; the
 * exiting one retires in the exit, by KVM's emulation, after the access:
 * its count reprograms the counters there, or at the entry where that
 * is deferred. Then vcpu_enter_guest().
 */
static void exit_enter(struct mcpu *c, u32 events)
{
	retire(c, events - 1);
	c->in_exit = true;
	c->truth.exits++;
	c->truth.handler_exits += c->in_nmi || c->in_irq;
	m.now += m.c.host->exit_cycles;
	record(c, "kvm:kvm_exit", "reason MSR rip 0x1000 info 0 0");
}

static void exit_leave(struct mcpu *c)
{
	bool counted = counting(c);

	retire(c, 1);
	if (counted && m.c.host->deferred_reprogram) {
		c->requests |= BIT(MODEL_REQ_PMU);
	} else if (counted) {
		c->truth.reprograms_in_exit++;
		m.now += REPROGRAM_CYCLES;
	}
	c->in_exit = false;
	vcpu_enter_guest(c);
}

/* ---- MSRs ---- */

static u64 *gp_counter(struct mcpu *c, u32 msr, bool *legacy)
{
	*legacy = false;
	if (intel()) {
		if (msr >= MSR_IA32_PERFCTR0 && msr < MSR_IA32_PERFCTR0 + m.c.gp_counters) {
			*legacy = true;
			return &c->gp[msr - MSR_IA32_PERFCTR0];
		}
		if (m.c.fw_write && msr >= MSR_IA32_PMC0 && msr < MSR_IA32_PMC0 + m.c.gp_counters)
			return &c->gp[msr - MSR_IA32_PMC0];
		if (msr >= MSR_IA32_FIXED_CTR0 && msr < MSR_IA32_FIXED_CTR0 + m.c.fixed_counters)
			return &c->fixed[msr - MSR_IA32_FIXED_CTR0];
		return NULL;
	}
	if (m.c.version >= 1) {
		if (msr >= MSR_F15H_PERF_CTL0 && msr < MSR_F15H_PERF_CTL0 + 2 * m.c.gp_counters &&
		    (msr - MSR_F15H_PERF_CTL0) % 2)
			return &c->gp[(msr - MSR_F15H_PERF_CTL0) / 2];
		return NULL;
	}
	if (msr >= MSR_K7_PERFCTR0 && msr < MSR_K7_PERFCTR0 + m.c.gp_counters)
		return &c->gp[msr - MSR_K7_PERFCTR0];
	return NULL;
}

static u64 *evtsel(struct mcpu *c, u32 msr)
{
	if (intel())
		return msr >= MSR_IA32_PERFEVTSEL0 && msr < MSR_IA32_PERFEVTSEL0 + m.c.gp_counters
			       ? &c->evtsel[msr - MSR_IA32_PERFEVTSEL0]
			       : NULL;
	if (m.c.version >= 1)
		return msr >= MSR_F15H_PERF_CTL0 &&
				       msr < MSR_F15H_PERF_CTL0 + 2 * m.c.gp_counters &&
				       !((msr - MSR_F15H_PERF_CTL0) % 2)
			       ? &c->evtsel[(msr - MSR_F15H_PERF_CTL0) / 2]
			       : NULL;
	return msr >= MSR_K7_EVNTSEL0 && msr < MSR_K7_EVNTSEL0 + m.c.gp_counters
		       ? &c->evtsel[msr - MSR_K7_EVNTSEL0]
		       : NULL;
}

static u32 status_msr(void)
{
	return intel() ? MSR_IA32_PERF_GLOBAL_STATUS : MSR_AMD_PERF_CNTR_GLOBAL_STATUS;
}

static u32 ctrl_msr(void)
{
	return intel() ? MSR_IA32_PERF_GLOBAL_CTRL : MSR_AMD_PERF_CNTR_GLOBAL_CTL;
}

static u32 clear_msr(void)
{
	return intel() ? MSR_IA32_PERF_GLOBAL_OVF_CTRL : MSR_AMD_PERF_CNTR_GLOBAL_STATUS_CLR;
}

/* model_lose_overflow(): the counter wraps, KVM records nothing. */
static void lose_overflow(struct mcpu *c)
{
	u32 bit = (u32)c->lose_bit;

	c->lose_bit = -1;
	c->truth.lost[bit]++;
	if (bit >= FIXED_SHIFT)
		c->fixed[bit - FIXED_SHIFT] = 1;
	else
		c->gp[bit] = 1;
}

/* The MSR's value; false for one this machine does not have (#GP). */
static bool msr_read(struct mcpu *c, u32 msr, u64 *val)
{
	bool legacy;
	u64 *p;

	if (msr == MSR_IA32_TSC_ADJUST) {
		*val = (u64)c->tsc_adjust;
		return true;
	}
	if ((p = gp_counter(c, msr, &legacy)) || (p = evtsel(c, msr))) {
		*val = *p;
		return true;
	}
	if (has_global() && msr == status_msr()) {
		*val = c->global_status;
		return true;
	}
	if (has_global() && msr == ctrl_msr()) {
		*val = c->global_ctrl;
		return true;
	}
	if (intel() && m.c.version >= 2 && msr == MSR_IA32_FIXED_CTR_CTRL) {
		*val = c->fixed_ctrl;
		return true;
	}
	if (intel() && msr == MSR_IA32_PERF_CAPABILITIES) {
		*val = c->perf_capabilities;
		return true;
	}
	return false;
}

static bool msr_write(struct mcpu *c, u32 msr, u64 val)
{
	bool legacy, was_on = any_select_on(c);
	u64 *p;

	if ((p = gp_counter(c, msr, &legacy))) {
		bool fixed = intel() && msr >= MSR_IA32_FIXED_CTR0 && msr < MSR_IA32_FIXED_CTR0 + 3;

		/* A legacy write takes bits 31:0 and sign-extends bit 31 (SDM Vol 3B 21.2.2). */
		*p = (legacy ? (u64)(s64)(s32)val : val) &
		     mask(fixed ? m.c.fixed_width : m.c.gp_width);
	} else if ((p = evtsel(c, msr))) {
		*p = val;
	} else if (has_global() && msr == ctrl_msr()) {
		c->global_ctrl = val;
		if (val && c->lose_bit >= 0 && !c->lose_skip--)
			lose_overflow(c);
	} else if (has_global() && msr == clear_msr()) {
		c->global_status &= ~val;
	} else if (intel() && m.c.version >= 2 && msr == MSR_IA32_FIXED_CTR_CTRL) {
		c->fixed_ctrl = val;
	} else if (msr == MSR_IA32_TSC_ADJUST) {
		/* The TSC moves by what the write adds to TSC_ADJUST. */
		c->tsc_adjust = (s64)val;
	} else {
		return false;
	}
	if (was_on && !any_select_on(c) && m.overflow_at_stop == (s32)c->index) {
		m.overflow_at_stop = -1;
		c->truth.overflows[0]++;
		c->global_status |= BIT(0);
		c->gp[0] = 1; /* wrapped: top bit clear, for PMUs without a status register */
	}
	return true;
}

/*
 * Whether an access to msr exits: with the mediated vPMU the guest owns
 * the counters between entry and exit, and the global MSRs where its PMU
 * has the host's counters (the model's does), but KVM still intercepts
 * the event selects and FIXED_CTR_CTRL to filter events
 * (vmx_recalc_pmu_msr_intercepts(), svm_recalc_pmu_msr_intercepts(),
 * the kvm-x86-pmu-6.20 pull).
 */
static bool msr_exits(struct mcpu *c, u32 msr)
{
	bool legacy;

	if (!m.c.host->mediated)
		return true;
	return !gp_counter(c, msr, &legacy) && msr != status_msr() && msr != ctrl_msr() &&
	       msr != clear_msr();
}

u64 rdmsr(u32 msr)
{
	struct mcpu *c = me();
	bool exits = msr_exits(c, msr);
	u64 val;

	if (exits)
		exit_enter(c, m.c.access_events);
	else
		retire(c, m.c.access_events);
	if (!msr_read(c, msr, &val))
		model_bug("rdmsr of an MSR the model does not have", msr);
	if (exits)
		exit_leave(c);
	injections_after(c, msr, true);
	point(c);
	return val;
}

void wrmsr(u32 msr, u64 val)
{
	struct mcpu *c = me();
	bool exits = msr_exits(c, msr);

	if (exits)
		exit_enter(c, m.c.access_events);
	else
		retire(c, m.c.access_events);
	if (!msr_write(c, msr, val))
		model_bug("wrmsr of an MSR the model does not have", msr);
	if (exits)
		exit_leave(c);
	injections_after(c, msr, false);
	point(c);
}

/*
 * The #GP KVM injects, taken and returned from as entry.S does: where
 * exceptions return through IRET, that IRET ends NMI blocking.
 */
static void fault(struct mcpu *c)
{
	c->percpu.fault_vector = X86_TRAP_GP;
	if (TRAP_EXCEPTION_IRET && c->in_nmi)
		c->in_nmi = false;
}

/* As ASM_TRY does: the recovery point armed around the access, the vector recorded. */
int rdmsr_safe(u32 msr, u64 *val)
{
	struct mcpu *c = me();
	bool ok;

	exit_enter(c, m.c.access_events);
	c->percpu.fault_vector = -1;
	ok = msr_read(c, msr, val);
	if (!ok) {
		*val = 0;
		fault(c);
	}
	exit_leave(c);
	point(c);
	return ok ? 0 : X86_TRAP_GP;
}

int wrmsr_safe(u32 msr, u64 val)
{
	struct mcpu *c = me();
	bool ok;

	exit_enter(c, m.c.access_events);
	c->percpu.fault_vector = -1;
	ok = msr_write(c, msr, val);
	if (!ok)
		fault(c);
	exit_leave(c);
	point(c);
	return ok ? 0 : X86_TRAP_GP;
}

/*
 * On an out-of-order host a plain RDTSC may be read before the loads
 * ahead of it complete (SDM Vol 2B RDTSC): as early as this CPU's last
 * point, before another CPU ran in between.
 */
/* This vCPU's TSC at model time t. */
static u64 tsc_at(const struct mcpu *c, u64 t)
{
	return t + (u64)m.c.tsc_offset[c->index] + (u64)c->tsc_adjust;
}

u64 rdtsc(void)
{
	struct mcpu *c = me();
	u64 early = c->last_point;

	retire(c, 1);
	point(c);
	return tsc_at(c, m.c.tsc_reads_early ? early : m.now);
}

u64 rdtsc_ordered(void)
{
	struct mcpu *c = me();

	retire(c, 1);
	point(c);
	return tsc_at(c, m.now);
}

void pause(void)
{
	struct mcpu *c = me();

	m.now += IDLE_STEP;
	point(c);
}

void cli(void)
{
}

void sti(void)
{
}

void hlt(void)
{
	pause();
}

/* ---- CPUID ---- */

static struct cpuid_regs vendor_leaf(u32 max)
{
	/* The 12 bytes in EBX, EDX, ECX order. */
	const char *v = intel() ? "GenuineIntel" : "AuthenticAMD";
	struct cpuid_regs r = { .eax = max };

	memcpy(&r.ebx, v, 4);
	memcpy(&r.edx, v + 4, 4);
	memcpy(&r.ecx, v + 8, 4);
	return r;
}

struct cpuid_regs cpuid_count(u32 leaf, u32 subleaf)
{
	struct cpuid_regs r = { 0 };

	(void)subleaf;
	switch (leaf) {
	case CPUID_LEAF_VENDOR: return vendor_leaf(CPUID_LEAF_ARCH_PERFMON);
	case CPUID_LEAF_FEATURES:
		r.eax = intel() ? 0x000506e3 : 0x00a00f11; /* Skylake, EPYC */
		r.ecx = intel() ? BIT(15) : 0;		   /* PDCM */
		return r;
	case CPUID_LEAF_ARCH_PERFMON:
		if (!intel())
			return r;
		r.eax = m.c.version | m.c.gp_counters << 8 | m.c.gp_width << 16 | 7u << 24;
		r.edx = m.c.version >= 2 ? (m.c.fixed_counters | m.c.fixed_width << 5) : 0;
		return r;
	case CPUID_LEAF_EXT_MAX: r.eax = CPUID_LEAF_AMD_PERFMON; return r;
	case CPUID_LEAF_EXT_FEATURES: r.ecx = !intel() && m.c.version >= 1 ? BIT(23) : 0; return r;
	case CPUID_LEAF_AMD_PERFMON:
		r.eax = !intel() && m.c.version >= 2;
		r.ebx = !intel() && m.c.version >= 2 ? m.c.gp_counters : 0;
		return r;
	default: return r;
	}
}

/* ---- The APIC, the rest of the kernel ---- */

u32 apic_read(u32 reg)
{
	struct mcpu *c = me();
	u32 val;

	exit_enter(c, m.c.apic_events);
	val = reg == APIC_LVT_PMC ? c->lvtpc : 0;
	exit_leave(c);
	point(c);
	return val;
}

void apic_write(u32 reg, u32 val)
{
	struct mcpu *c = me();

	exit_enter(c, m.c.apic_events);
	if (reg == APIC_LVT_PMC)
		c->lvtpc = val;
	exit_leave(c);
	point(c);
}

void apic_eoi(void)
{
	apic_write(APIC_EOI, 0);
}

void trap_set_handler(u8 vector, trap_handler h)
{
	m.handlers[vector] = h;
}

struct percpu *this_cpu(void)
{
	return &me()->percpu;
}

/* Boot memory is never freed: every block stays reachable, as in the kernel. */
void *boot_alloc(u64 size, u64 align)
{
	static void *blocks[256];
	static u32 nblocks;
	void *b;

	(void)align;
	if (nblocks == ARRAY_SIZE(blocks))
		model_bug("boot_alloc: too many blocks", nblocks);
	b = calloc(1, size);
	blocks[nblocks++] = b;
	return b;
}

void udelay(u64 us)
{
	u64 until = m.now + us * (m.c.tsc_hz / 1000000);

	while (m.now < until)
		pause();
}

bool smp_wait(bool (*done)(void *arg), void *arg, u64 timeout_us)
{
	u64 until = m.now + timeout_us * (m.c.tsc_hz / 1000000);

	while (!done(arg))
		if (m.now > until)
			return false;
		else
			pause();
	return true;
}

void workload_run(volatile u64 *stamp, u64 iterations)
{
	struct mcpu *c = me();

	for (u64 i = 0; i < iterations; i++) {
		c->in_workload = true;
		retire(c, WORKLOAD_INSNS_PER_ITERATION);
		*stamp = m.now;
		point(c);
		c->in_workload = false;
	}
}

void model_run(u64 n)
{
	struct mcpu *c = me();

	retire(c, n);
	point(c);
}

static void *cpu_thread(void *arg)
{
	struct mcpu *c = arg;

	pthread_mutex_lock(&m.lock);
	self = c;
	wait_turn(c);
	if (!m.stopping) {
		c->fn(c->arg);
		c->fn_done = true;
		/* Idle, but an NMI still finds the CPU, until the run ends. */
		while (!m.stopping)
			pause();
	}
	pthread_mutex_unlock(&m.lock);
	return NULL;
}

static bool all_done(void)
{
	for (u32 i = 1; i < m.c.cpus; i++)
		if (!m.cpu[i].fn_done)
			return false;
	return true;
}

bool smp_run_all(void (*fn)(void *arg), void *arg, u64 timeout_us)
{
	(void)timeout_us;
	for (u32 i = 1; i < m.c.cpus; i++) {
		struct mcpu *c = &m.cpu[i];

		c->fn = fn;
		c->arg = arg;
		c->fn_done = false;
		if (pthread_create(&c->thread, NULL, cpu_thread, c))
			model_bug("pthread_create", i);
		c->has_thread = true;
	}
	self = &m.cpu[0];
	fn(arg);
	while (!all_done())
		pause();
	m.stopping = true;
	pthread_cond_broadcast(&m.turn);
	pthread_mutex_unlock(&m.lock);
	for (u32 i = 1; i < m.c.cpus; i++) {
		pthread_join(m.cpu[i].thread, NULL);
		m.cpu[i].has_thread = false;
	}
	pthread_mutex_lock(&m.lock);
	m.stopping = false;
	m.current = 0;
	return true;
}

/* ---- Starting and steering ---- */

struct model_config model_intel_v2(u32 cpus, u64 seed)
{
	return (struct model_config){
		.host = &model_hosts[MODEL_HOST_6_9],
		.vendor = PMU_INTEL,
		.version = 2,
		.gp_counters = 4,
		.gp_width = 48,
		.fixed_counters = 3,
		.fixed_width = 48,
		.fw_write = true,
		.cpus = cpus,
		.tsc_hz = 1000000,
		.access_events = 5,
		.apic_events = 8,
		.entry_events = 40,
		.switch_permille = 50,
		.seed = seed,
	};
}

struct model_config model_pmu(enum model_pmu k, enum model_host_id h, u32 cpus, u64 seed)
{
	struct model_config c = model_intel_v2(cpus, seed);

	c.host = &model_hosts[h];
	switch (k) {
	case MODEL_INTEL_V2: break;
	case MODEL_INTEL_V5:
		c.version = 5;
		c.gp_counters = 8;
		break;
	case MODEL_AMD_LEGACY:
		c.vendor = PMU_AMD;
		c.version = 0;
		c.fixed_counters = 0;
		break;
	case MODEL_AMD_V2:
		c.vendor = PMU_AMD;
		c.version = 2;
		c.gp_counters = 6;
		c.fixed_counters = 0;
		break;
	default: model_bug("no such PMU", k);
	}
	return c;
}

void model_start(const struct model_config *c)
{
	static bool locked;

	if (!locked) {
		/* The unit tests' own thread is CPU 0 and holds the baton from here on. */
		pthread_mutex_lock(&m.lock);
		locked = true;
	}
	m.c = *c;
	if (!m.c.host)
		m.c.host = &model_hosts[MODEL_HOST_6_9];
	m.ninject = 0;
	m.overflow_at_stop = -1;
	m.now = 0;
	m.rng = c->seed * 2 + 1;
	m.current = 0;
	self = &m.cpu[0];
	clock.tsc_hz = c->tsc_hz;
	for (u32 i = 0; i < MODEL_CPUS; i++) {
		struct mcpu *cpu = &m.cpu[i];
		struct percpu saved = cpu->percpu;

		memset(&cpu->truth, 0, sizeof(cpu->truth));
		memset(cpu->gp, 0, sizeof(cpu->gp));
		memset(cpu->evtsel, 0, sizeof(cpu->evtsel));
		memset(cpu->fixed, 0, sizeof(cpu->fixed));
		cpu->fixed_ctrl = cpu->global_ctrl = cpu->global_status = 0;
		cpu->perf_capabilities = c->fw_write ? PERF_CAP_FW_WRITE : 0;
		cpu->lvtpc = APIC_LVT_MASKED;
		cpu->nmis_pending = cpu->nmi_queued = cpu->requests = 0;
		cpu->in_nmi = cpu->irq_pending = cpu->in_irq = cpu->in_exit = false;
		cpu->pmu_overflow = cpu->pmi_waiting = false;
		cpu->exit_deliveries = 0;
		cpu->lose_bit = -1;
		cpu->index = i;
		cpu->stall_from = cpu->stall_until = 0;
		cpu->tsc_adjust = 0;
		cpu->percpu = saved;
		cpu->percpu.fault_vector = -1;
		cpu->percpu.fault_resume = 0;
		cpu->percpu.apic_id = i;
		cpu->percpu.state = i < c->cpus ? CPU_ONLINE : CPU_OFFLINE;
		cpu->percpu.work = NULL;
		if (!m.registered)
			cpu_add(&cpu->percpu);
	}
	m.registered = true;
	nmi_init();
	nmi_set_sender(send_nmi);
	pmi_init();
	pmu_discover();
}

void model_inject(const struct model_injection *i)
{
	if (m.ninject == MAX_INJECTIONS)
		model_bug("too many injections", m.ninject);
	m.inject[m.ninject++] = *i;
}

void model_overflow_at_stop(u32 cpu)
{
	m.overflow_at_stop = (s32)cpu;
}

void model_overflow_now(u32 cpu, u32 bit)
{
	struct mcpu *c = &m.cpu[cpu];

	if (bit >= FIXED_SHIFT)
		c->fixed[bit - FIXED_SHIFT] = 0;
	else
		c->gp[bit] = 0;
	overflow(c, bit, true);
}

void model_lose_overflow(u32 cpu, u32 bit, u32 skip)
{
	m.cpu[cpu].lose_bit = (s32)bit;
	m.cpu[cpu].lose_skip = skip;
}

void model_spurious_nmi(u32 cpu)
{
	inject_nmi(&m.cpu[cpu]);
}

u64 model_record(void *out, u32 lose_every)
{
	u64 lost = m.lost;

	m.rec = out;
	m.lose_every = lose_every;
	m.records = m.lost = 0;
	return lost;
}

void *model_record_file(const char *name)
{
	const char *dir = getenv("HVPROBE_MODEL_PROBE");
	char path[512];

	if (!dir || !*dir)
		return tmpfile();
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return NULL;
	return fopen(path, "w");
}

void model_record_note(void *out, const char *fmt, ...)
{
	va_list ap;

	fputs("# ", out);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
}

u64 model_record_close(void *out)
{
	long size;

	fflush(out);
	size = ftell(out);
	fclose(out);
	return size > 0 ? (u64)size : 0;
}

void model_mark(u8 what)
{
	record(&m.cpu[0], "kvm:kvm_pio", "pio_write at 0x80 size 1 count 1 val 0x%x ", what);
}

bool model_msr_exits(u32 cpu, u32 msr)
{
	return msr_exits(&m.cpu[cpu], msr);
}

const struct model_truth *model_truth(u32 cpu)
{
	return &m.cpu[cpu].truth;
}

void model_stall(u32 cpu, u64 from, u64 cycles)
{
	m.cpu[cpu].stall_from = from;
	m.cpu[cpu].stall_until = from + cycles;
}

u64 model_now(void)
{
	return m.now;
}
