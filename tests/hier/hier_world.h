/* hier_world.h: helpers shared by the hierarchy tests that run on a real world — a silent
 * logger (failures are expected and asserted on) and the documented world formula applied
 * recursively through the public, non-marking readers. */
#ifndef WEFT_TESTS_HIER_WORLD_H
#define WEFT_TESTS_HIER_WORLD_H

#include <criterion/criterion.h>

#include "hier_ref.h"
#include "weft.h"

static inline void hw_quiet_fn(weft_log_level_t level, weft_result_t code, const char *msg,
                               const char *file, int line, void *user) {
    (void)level, (void)code, (void)msg, (void)file, (void)line, (void)user;
}

/* A world with `workers` workers run as `exec`, logging nowhere. */
static inline weft_world_t *hw_new_world(uint32_t workers, weft_execution_t exec) {
    weft_world_t *w = NULL;
    cr_assert(weft_world_create(&(weft_world_desc_t){.worker_count = workers,
                                                     .execution = exec,
                                                     .logger = {.fn = hw_quiet_fn}},
                                &w) == WEFT_OK);
    return w;
}

/* A world with `workers` workers, run inline for one and threaded otherwise. */
static inline weft_world_t *hw_world_of(uint32_t workers) {
    return hw_new_world(workers, workers == 1 ? WEFT_EXECUTION_INLINE : WEFT_EXECUTION_THREADED);
}

/* Register a component `name` of `size` bytes aligned to `align` (0, 0: a tag). */
static inline weft_component_t hw_component(weft_world_t *w, const char *name, uint32_t size,
                                            uint32_t align) {
    weft_component_t c = {0};
    cr_assert(weft_component_register(
                  w, &(weft_component_desc_t){.name = name, .size = size, .align = align}, &c) ==
              WEFT_OK);
    return c;
}

/* Register the system `d` describes (it must succeed). */
static inline void hw_system(weft_world_t *w, const weft_system_desc_t *d) {
    weft_system_t s;
    cr_assert(weft_system_register(w, d, &s) == WEFT_OK, "%s: %s", d->name, weft_last_error());
}

/* World of e by the documented formula, recursively through weft_hier_local_read (which
 * marks nothing, so the reference never hides a missed change). */
static inline weft_mat4_t hw_ref_world(weft_world_t *w, weft_entity_t e) {
    const weft_entity_t p = weft_hier_parent(w, e);
    if (p == 0) {
        return hr_node_world(weft_hier_local_read(w, e), NULL, NULL);
    }
    const weft_mat4_t pw = hw_ref_world(w, p);
    return hr_node_world(weft_hier_local_read(w, e), &weft_hier_link(w, e)->inverse_bind, &pw);
}

#endif /* WEFT_TESTS_HIER_WORLD_H */
