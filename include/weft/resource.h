/* weft/resource.h: resources — world-wide singletons (a clock, the input state, a random
 * generator, settings) that systems declare like components, so the scheduler orders the
 * systems that touch them.
 *
 * A resource is registered by name in the components' namespace and identified by a
 * weft_component_t. A system names it in weft_system_desc_t.reads or .writes (not in terms:
 * no entity carries it), and two systems where one writes a resource the other reads or
 * writes are ordered exactly as for a component. weft_world_hash(), snapshots and whole-world
 * archives include every resource's value; an archive load overwrites the value of a resource
 * the archive holds (matched by name, size and alignment like a component).
 *
 * Per-entity calls (add, set, get, has, remove, queries, groups, commands) treat a resource id
 * as no component: they fail with the errors they document for an unknown component. */
#ifndef WEFT_RESOURCE_H
#define WEFT_RESOURCE_H

#include "weft/base.h"
#include "weft/component.h"
#include "weft/world.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_resource_desc {
    const char *name;    /* required, 1..WEFT_COMPONENT_NAME_MAX bytes; shares the namespace
                            of components; copied */
    size_t size;         /* bytes of the value, > 0 */
    size_t align;        /* 0: natural alignment of size (up to 16); else a power of two */
    const void *initial; /* NULL: zero-initialised; else `size` bytes copied in */
    uint32_t _canary;    /* must stay 0 */
} weft_resource_desc_t;

/* Register a resource and write its id to *out. Registering the same name again with the
 * same size and alignment returns the existing id and leaves its value alone. Errors:
 * WEFT_EINVAL (NULL world/desc/out, bad name, size 0, bad align), WEFT_ECONFLICT (the name is
 * a component, or a resource with another layout), WEFT_ECAPACITY (component ids exhausted),
 * WEFT_ENOMEM; on error nothing is registered. Thread: main, outside frames. */
WEFT_API weft_result_t weft_resource_register(weft_world_t *world, const weft_resource_desc_t *desc,
                                              weft_component_t *out);

/* The value of resource `r` (read-only), or NULL when r is not a resource. Inside a system
 * the system must declare r in reads or writes (checked in debug builds, as for components).
 * Valid until the world is destroyed; the value never moves. Thread: main, or a system that
 * declares it. */
WEFT_API const void *weft_resource_get(const weft_world_t *world, weft_component_t r);

/* As weft_resource_get, writable: a system must declare r in writes. */
WEFT_API void *weft_resource_get_mut(weft_world_t *world, weft_component_t r);

/* Copy `value` (the resource's size in bytes) into resource r. Errors: WEFT_EINVAL (NULL
 * world or value, r not a resource). Thread: main outside frames, or a system that declares r
 * in writes. */
WEFT_API weft_result_t weft_resource_set(weft_world_t *world, weft_component_t r,
                                         const void *value);

/* True when id r names a resource of `world`. Thread: any. */
WEFT_API bool weft_resource_is(const weft_world_t *world, weft_component_t r);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_RESOURCE_H */
