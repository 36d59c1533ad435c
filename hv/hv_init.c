// SPDX-License-Identifier: MIT
/*
 * Detection on the running CPU, and the interfaces it finds started
 * through their table (DEFINE_HV_INTERFACE, hv.h).
 */
#include "hv/hv.h"
#include "kernel/lib/json.h"
#include "kernel/x86/cpuid.h"

TABLE_DECLARE(struct hv_interface, hvprobe_hv_interfaces);

/* Kinds whose interface started, by bit. */
static u32 started;
_Static_assert(HV_KIND_COUNT <= 32, "a bit per kind in started");

static struct cpuid_regs leaf(u32 l)
{
	return cpuid(l);
}

void hv_init(void)
{
	const struct hv_interface *i;

	hv_scan(&hv, cpu_has(X86_FEATURE_HYPERVISOR), leaf);
	for (u32 kind = 0; kind < HV_KIND_COUNT; kind++) {
		const struct hv_block *b = hv_find(&hv, kind);

		table_for_each (i, hvprobe_hv_interfaces) {
			if (i->kind != kind || !b || started & BIT(kind))
				continue;
			i->start(b->base);
			started |= BIT(kind);
		}
	}
}

void hv_json(struct json *j)
{
	const struct hv_interface *i;

	json_bool(j, "hypervisor_bit", hv.present);
	json_array_begin(j, "blocks");
	for (u32 n = 0; n < hv.count; n++) {
		json_object_begin(j, NULL);
		json_hex(j, "base", hv.blocks[n].base);
		json_hex(j, "max_leaf", hv.blocks[n].max_leaf);
		json_string(j, "signature", hv.blocks[n].signature);
		json_string(j, "kind", hv_kind_names[hv.blocks[n].kind]);
		json_object_end(j);
	}
	json_array_end(j);
	json_string(j, "linux_platform",
		    hv.linux_platform < HV_KIND_COUNT ? hv_kind_names[hv.linux_platform] : "none");
	if (hv.linux_detect)
		json_hex(j, "linux_detect", hv.linux_detect);
	for (u32 kind = 0; kind < HV_KIND_COUNT; kind++)
		table_for_each (i, hvprobe_hv_interfaces)
			if (i->kind == kind && started & BIT(kind)) {
				json_object_begin(j, hv_kind_names[kind]);
				i->json(j);
				json_object_end(j);
			}
}
