/* test_phase_cost.c: where a phase runs is decided from measured costs (weft/system.h,
 * "Where a phase runs"): phases far too cheap to hand out settle on the calling thread, phases
 * with real work use every worker, and the choice never changes the world. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include <stdio.h>
#include <time.h>

#include "sched_fixture.h"

TestSuite(phase_cost, .timeout = 120);

/* Per-body log of the worker that ran it, frame by frame. */
static _Atomic uint32_t on_worker[2];

static void note_worker(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    atomic_fetch_add(&on_worker[ctx->worker < 2 ? ctx->worker : 1], 1u);
    while (weft_iter_next(it)) {
        vec3_t *p = it->columns[0];
        for (uint32_t i = 0; i < it->rows; i++) {
            p[i].x += 1.0f;
        }
    }
}

/* ~spin_us of dependent arithmetic per call (the machine's clock decides, not a count). */
static void busy(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    atomic_fetch_add(&on_worker[ctx->worker < 2 ? ctx->worker : 1], 1u);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    float acc = 0;
    do {
        for (int k = 0; k < 1000; k++) {
            acc = acc * 0.999f + 1.0f;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 200000L);
    while (weft_iter_next(it)) {
        vec3_t *p = it->columns[0];
        for (uint32_t i = 0; i < it->rows; i++) {
            p[i].y += acc > 0 ? 1.0f : 0.0f;
        }
    }
}

/* n independent systems on components of their own, each matching one entity. */
static void make_independent(fixture_t *f, uint32_t n, weft_system_fn_t fn) {
    for (uint32_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "C%u", i);
        weft_component_t c;
        cr_assert(
            eq(int,
               weft_component_register(
                   f->world, &(weft_component_desc_t){.name = name, .size = sizeof(vec3_t)}, &c),
               WEFT_OK));
        weft_entity_t e;
        vec3_t v = {0, 0, 0};
        cr_assert(eq(int, weft_entity_create(f->world, &e), WEFT_OK));
        cr_assert(eq(int, weft_component_set(f->world, e, c, &v), WEFT_OK));
        snprintf(name, sizeof name, "s%u", i);
        weft_system_desc_t d = {
            .name = name, .fn = fn, .terms = {{.component = c, .access = WEFT_ACCESS_WRITE}}};
        cr_assert(eq(int, weft_system_register(f->world, &d, NULL), WEFT_OK));
    }
}

static void reset_log(void) {
    atomic_store(&on_worker[0], 0u);
    atomic_store(&on_worker[1], 0u);
}

Test(phase_cost, a_phase_far_too_cheap_to_hand_out_settles_on_the_calling_thread) {
    fixture_t f;
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    make_independent(&f, 8, note_worker);
    for (int i = 0; i < 64; i++) { /* the costs get measured */
        cr_assert(eq(int, weft_world_progress(f.world, 0.016f), WEFT_OK));
    }
    /* 8 one-row bodies cost well under a µs; handing them out costs µs. Frames between
     * probes (one sampled frame in 8 re-measures the dispatch cost, one frame in 128) run
     * every body on worker 0. */
    uint32_t inline_frames = 0;
    for (int i = 0; i < 64; i++) {
        reset_log();
        cr_assert(eq(int, weft_world_progress(f.world, 0.016f), WEFT_OK));
        uint32_t first = atomic_load(&on_worker[0]), second = atomic_load(&on_worker[1]);
        inline_frames += second == 0 && first == 8;
    }
    cr_expect(inline_frames >= 60, "only %u of 64 frames ran on the calling thread", inline_frames);
    fixture_fini(&f);
}

Test(phase_cost, a_phase_with_real_work_uses_every_worker) {
    fixture_t f;
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    make_independent(&f, 4, busy); /* 4 x 200 µs a frame */
    for (int i = 0; i < 8; i++) {
        cr_assert(eq(int, weft_world_progress(f.world, 0.016f), WEFT_OK));
    }
    reset_log();
    for (int i = 0; i < 300; i++) {
        cr_assert(eq(int, weft_world_progress(f.world, 0.016f), WEFT_OK));
    }
    /* Statistical: while another process holds the second core, a sampled frame measures
     * that threads cannot help and the phase may run on the calling thread until the next
     * re-probe (one frame in 128). Over 300 frames of 800 µs of work each the second worker
     * takes part unless the rule pins a phase with real work to one thread for good. */
    uint32_t second = atomic_load(&on_worker[1]);
    cr_expect(second > 0, "worker 1 ran none of 1200 bodies");
    fixture_fini(&f);
}
