/* test_overlap.c: on 2 workers, independent systems run at the same time, and from the trace
 * of 1,000 frames, conflicting systems never do, in any frame.
 *
 * Concurrency is shown by a rendezvous, not by hoping two busy systems happen to overlap in
 * a trace: each of two independent systems announces itself and waits (bounded) for the
 * other, so they can only meet if the scheduler runs them at the same time. Whether a
 * particular frame overlaps depends on the machine: under load (ctest runs suites side by
 * side on 2 cores) the other worker may be pre-empted, and the measured-cost rule then
 * rightly keeps a phase of small systems on one thread (weft/system.h). No sleeps: the
 * systems do real arithmetic or spin on a flag. */
#include <stdlib.h>
#include <time.h>

#include "sched_fixture.h"

TestSuite(overlap, .timeout = 300);

#define FRAMES 1000
#define ROWS 2048

/* A few hundred ns of dependent arithmetic per row (~0.1-0.3 ms per system at 2048 rows in a
 * release build): the two independent systems run at the same time on two workers. */
static void churn(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            vec3_t *p = weft_iter_get(it, 0, i);
            for (int k = 0; k < 32; k++) {
                p->x = p->x * 0.999f + p->y * 0.001f + 0.5f;
                p->y = p->y * 0.998f - p->x * 0.0005f;
            }
        }
    }
}

/* ROWS entities with Position and Velocity. */
static void populate(fixture_t *f) {
    for (uint32_t i = 0; i < ROWS; i++) {
        weft_entity_t e;
        cr_assert(eq(int, weft_entity_create(f->world, &e), WEFT_OK));
        vec3_t v = {(float)i, 1, 0};
        weft_component_set(f->world, e, f->pos, &v);
        weft_component_set(f->world, e, f->vel, &v);
    }
}

static bool overlaps(const weft_trace_event_t *a, const weft_trace_event_t *b) {
    return a->begin_ns < b->end_ns && b->begin_ns < a->end_ns;
}

Test(overlap, independent_systems_overlap_and_conflicting_ones_never_do) {
    fixture_t f;
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    populate(&f);
    /* a and b are independent; c conflicts with a (Position), d with b (Velocity) and a
     * parallel e conflicts with both, split in chunks. */
    weft_system_t a = must_register(
        f.world, &(weft_system_desc_t){.name = "a", .fn = churn, .terms = {W(f.pos)}});
    weft_system_t b = must_register(
        f.world, &(weft_system_desc_t){.name = "b", .fn = churn, .terms = {W(f.vel)}});
    weft_system_t c = must_register(
        f.world, &(weft_system_desc_t){.name = "c", .fn = churn, .terms = {W(f.pos)}});
    weft_system_t d = must_register(
        f.world, &(weft_system_desc_t){.name = "d", .fn = churn, .terms = {W(f.vel)}});
    weft_system_t e = must_register(f.world, &(weft_system_desc_t){.name = "e",
                                                                   .fn = churn,
                                                                   .terms = {W(f.pos), R(f.vel)},
                                                                   .parallel = true,
                                                                   .chunk_size = 512});
    cr_assert(eq(int, weft_trace_enable(f.world, &(weft_trace_desc_t){.capacity = 64}), WEFT_OK));
    const weft_system_t conflicting[][2] = {{a, c}, {b, d}, {a, e}, {b, e}, {c, e}, {d, e}};
    uint32_t overlap_frames = 0;
    weft_trace_event_t ev[64];
    for (uint32_t fr = 0; fr < FRAMES; fr++) {
        cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
        uint32_t n = weft_trace_events(f.world, ev, 64);
        cr_assert(eq(u32, n, 1 + 4 + 4), "4 single jobs, 4 chunks of e, 1 apply");
        cr_assert(eq(u64, weft_trace_dropped(f.world), 0));
        bool ab = false;
        for (uint32_t i = 0; i < n; i++) {
            for (uint32_t j = 0; j < n; j++) {
                if (i == j) {
                    continue;
                }
                if (ev[i].system == a.id && ev[j].system == b.id && overlaps(&ev[i], &ev[j])) {
                    ab = true;
                }
                for (size_t k = 0; k < sizeof conflicting / sizeof conflicting[0]; k++) {
                    cr_assert(not(ev[i].system == conflicting[k][0].id &&
                                  ev[j].system == conflicting[k][1].id && overlaps(&ev[i], &ev[j])),
                              "frame %u: conflicting systems %u and %u overlap", fr,
                              conflicting[k][0].id, conflicting[k][1].id);
                }
            }
        }
        overlap_frames += ab;
    }
    /* informational: how often the trace showed a and b overlapping (machine-dependent) */
    cr_log_info("independent systems overlapped in %u of %u frames", overlap_frames, FRAMES);
    fixture_fini(&f);
}

/* The rendezvous: the frame number both systems of the current frame announce. */
static atomic_uint meet_arrived[2];
static atomic_uint meet_frame;
static atomic_uint meet_met;

static double mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Announce ourselves, wait up to 20 ms for the other system of the same frame, and withdraw
 * the announcement before returning: only a system that is still running can be met. */
static void meet(uint32_t me) {
    unsigned fr = atomic_load(&meet_frame);
    atomic_store(&meet_arrived[me], fr);
    double t0 = mono_ms();
    while (mono_ms() - t0 < 20.0) {
        if (atomic_load(&meet_arrived[1 - me]) == fr) {
            atomic_fetch_add(&meet_met, 1);
            break;
        }
    }
    atomic_store(&meet_arrived[me], 0);
}

static void meet_a(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    (void)ctx;
    meet(0);
}

static void meet_b(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    (void)ctx;
    meet(1);
}

/* Two systems with disjoint writes are in one phase; the scheduler must be able to run them
 * at the same time. Frames run until they meet once (or 60 s pass): a scheduler that ran them
 * one after the other would never let them meet. */
Test(overlap, independent_systems_can_meet_while_both_run) {
    fixture_t f;
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    must_register(f.world, &(weft_system_desc_t){.name = "a", .fn = meet_a, .writes = {f.pos}});
    must_register(f.world, &(weft_system_desc_t){.name = "b", .fn = meet_b, .writes = {f.vel}});
    atomic_store(&meet_met, 0);
    atomic_store(&meet_arrived[0], 0);
    atomic_store(&meet_arrived[1], 0);
    double t0 = mono_ms();
    unsigned fr = 0;
    while (atomic_load(&meet_met) == 0 && mono_ms() - t0 < 60000.0) {
        atomic_store(&meet_frame, ++fr);
        cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK), "%s", weft_last_error());
    }
    cr_log_info("the systems met after %u frames", fr);
    cr_expect(atomic_load(&meet_met) > 0,
              "independent systems never ran at the same time (%u frames)", fr);
    fixture_fini(&f);
}

/* A system that matches nothing runs no body, but it still stands between its neighbours:
 * a -> b -> c with a -> c removed as redundant, b empty. c must never start before a ends. */
Test(overlap, a_system_with_nothing_to_do_still_orders_its_neighbours) {
    fixture_t f;
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    populate(&f);
    /* Nobody has Health: b matches nothing. */
    weft_system_t a = must_register(
        f.world, &(weft_system_desc_t){.name = "a", .fn = churn, .terms = {W(f.pos)}});
    weft_system_t b = must_register(f.world, &(weft_system_desc_t){.name = "b",
                                                                   .fn = counting_system,
                                                                   .terms = {R(f.hp), R(f.pos)},
                                                                   .writes = {f.vel}});
    weft_system_t c = must_register(
        f.world, &(weft_system_desc_t){.name = "c", .fn = churn, .terms = {W(f.pos), R(f.vel)}});
    weft_schedule_edge_t edges[8];
    uint32_t nedges = 0;
    cr_assert(eq(int, weft_schedule_edges(f.world, edges, 8, &nedges), WEFT_OK));
    cr_assert(eq(u32, nedges, 2), "a -> b -> c, a -> c reduced");
    cr_assert(eq(int, weft_trace_enable(f.world, &(weft_trace_desc_t){.capacity = 16}), WEFT_OK));
    atomic_store(&fx_body_calls, 0);
    uint32_t bad_frame = UINT32_MAX, b_events = 0;
    weft_trace_event_t ev[16];
    for (uint32_t fr = 0; fr < 2000 && bad_frame == UINT32_MAX; fr++) {
        if (weft_world_progress(f.world, 0.0f) != WEFT_OK) {
            bad_frame = fr;
            break;
        }
        uint32_t n = weft_trace_events(f.world, ev, 16);
        for (uint32_t i = 0; i < n && i < 16; i++) {
            b_events += ev[i].system == b.id;
            for (uint32_t j = 0; j < n && j < 16; j++) {
                if (ev[i].system == a.id && ev[j].system == c.id && overlaps(&ev[i], &ev[j])) {
                    bad_frame = fr;
                }
            }
        }
    }
    cr_expect(eq(u32, bad_frame, UINT32_MAX), "frame %u: a and c overlapped (or failed: %s)",
              bad_frame, weft_last_error());
    cr_expect(eq(u32, atomic_load(&fx_body_calls), 0), "the empty system's body was called");
    cr_expect(eq(u32, b_events, 0), "the empty system recorded trace events");
    fixture_fini(&f);
}
