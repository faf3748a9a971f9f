/* internal_ready_active.c: the ready list's participant count (src/sched/ready.c, recruit) stays
 * exact when released sets are wide enough to hand out many drain jobs at once: at 8
 * workers, a root of 16 chunks releases 6 systems of 16 chunks (96 units in one set), whose
 * last finisher releases a sink of 16; every unit runs once per frame, and after a frame
 * that ran the ready list only the main thread's own count is left in `active` (every
 * reservation of k places was matched by k drain jobs leaving, or given back). */
#include "sched_fixture.h"

#include "src/core/world.h"
#include "src/sched/system.h"

#define FANS 6
#define ROWS 64

static _Atomic uint32_t chunks_of[FANS + 2];

static float busy(float v) {
    for (int k = 0; k < 500; k++) {
        v = v * 0.999f + 0.25f;
    }
    return v;
}

static void body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            float *x = weft_iter_get(it, 0, i);
            *x = busy(*x);
        }
    }
    atomic_fetch_add(&chunks_of[(uintptr_t)ctx->user], 1);
}

Test(ready_active, wide_released_sets_leave_the_participant_count_exact_at_8_workers) {
    weft_world_t *w = NULL;
    cr_assert(eq(int, weft_world_create(&(weft_world_desc_t){.worker_count = 8}, &w), WEFT_OK));
    weft_component_t x = float_component(w, "X"), y[FANS];
    char name[16];
    for (int k = 0; k < FANS; k++) {
        snprintf(name, sizeof name, "Y%d", k);
        y[k] = float_component(w, name);
    }
    for (uint32_t i = 0; i < ROWS; i++) {
        weft_entity_t e;
        float v = (float)i;
        cr_assert(eq(int, weft_entity_create(w, &e), WEFT_OK));
        cr_assert(eq(int, weft_component_set(w, e, x, &v), WEFT_OK));
        for (int k = 0; k < FANS; k++) {
            cr_assert(eq(int, weft_component_set(w, e, y[k], &v), WEFT_OK));
        }
    }
    /* src writes X; fan k reads X and writes Y k; sink writes X: src -> fans -> sink */
    must_register(w, &(weft_system_desc_t){.name = "src",
                                           .fn = body,
                                           .user = (void *)(uintptr_t)0,
                                           .terms = {W(x)},
                                           .parallel = true,
                                           .chunk_size = 4});
    for (int k = 0; k < FANS; k++) {
        snprintf(name, sizeof name, "fan%d", k);
        must_register(w, &(weft_system_desc_t){.name = name,
                                               .fn = body,
                                               .user = (void *)(uintptr_t)(k + 1),
                                               .terms = {W(y[k]), R(x)},
                                               .parallel = true,
                                               .chunk_size = 4});
    }
    must_register(w, &(weft_system_desc_t){.name = "sink",
                                           .fn = body,
                                           .user = (void *)(uintptr_t)(FANS + 1),
                                           .terms = {W(x)},
                                           .parallel = true,
                                           .chunk_size = 4});
    int ready_frames = 0;
    for (int fr = 0; fr < 16; fr++) {
        for (int k = 0; k < FANS + 2; k++) {
            atomic_store(&chunks_of[k], 0);
        }
        if (w->sched) {
            /* 0 stays 0 unless the frame runs the ready list, which ends it at 1 */
            weft_atomic_store_relaxed(&w->sched->ready.active, 0u);
        }
        cr_assert(eq(int, weft_world_progress(w, 0.0f), WEFT_OK), "%s", weft_last_error());
        for (int k = 0; k < FANS + 2; k++) {
            cr_assert(eq(u32, atomic_load(&chunks_of[k]), ROWS / 4), "system %d, frame %d", k, fr);
        }
        uint32_t active = weft_atomic_load_relaxed(&w->sched->ready.active);
        cr_assert(le(u32, active, 1u), "frame %d", fr);
        ready_frames += (int)active;
    }
    cr_expect(gt(int, ready_frames, 0)); /* the ready list ran (not every phase went inline) */
    weft_world_destroy(w);
}
