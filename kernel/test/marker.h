/* SPDX-License-Identifier: MIT */
/*
 * Marks for a host that watches the guest run. A write to an I/O port
 * leaves the guest (a VM exit to the hypervisor), and KVM's kvm:kvm_pio
 * tracepoint records it, port and value, with the host's time: a host
 * probe counts exactly what happens between two marks
 * (tools/host-cancel-probe, README "Stressing PMI/NMI ordering"). The
 * POST port has no device behind it under QEMU, so the write is only
 * the exit; firmware writes its own codes there during boot, which is
 * why the marks are values firmware does not use. A KTAP diagnostic
 * beside each mark says the same on the serial log.
 */
#ifndef KERNEL_TEST_MARKER_H
#define KERNEL_TEST_MARKER_H

#include "kernel/test/ktap.h"
#include "kernel/x86/x86.h"

#define HOST_MARK_PORT 0x80
#define HOST_MARK_BEGIN 0xb0
#define HOST_MARK_END 0xb1

/* The measured window of what starts (begin) or ends now. */
static inline void host_mark(u8 what, const char *window)
{
	report_info("host mark 0x%x (%s %s)", what, window,
		    what == HOST_MARK_BEGIN ? "begins" : "ends");
	outb(HOST_MARK_PORT, what);
}

#endif
