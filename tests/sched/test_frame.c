/* test_frame.c: running frames — every row visited once, chunking independent of workers,
 * empty and termless systems, main-thread systems, phases, command buffers and their apply
 * order, structural changes from parallel systems. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_fixture.h"

static fixture_t f;

TestSuite(frame, .fini = NULL, .timeout = 60);

static void spawn(uint32_t n, bool vel, bool hp) {
    for (uint32_t i = 0; i < n; i++) {
        weft_entity_t e;
        cr_assert(eq(int, weft_entity_create(f.world, &e), WEFT_OK));
        vec3_t p = {(float)i, 0, 0}, v = {1, 2, 3};
        cr_assert(eq(int, weft_component_set(f.world, e, f.pos, &p), WEFT_OK));
        if (vel) {
            cr_assert(eq(int, weft_component_set(f.world, e, f.vel, &v), WEFT_OK));
        }
        if (hp) {
            int32_t h = (int32_t)(i % 5);
            cr_assert(eq(int, weft_component_set(f.world, e, f.hp, &h), WEFT_OK));
        }
    }
}

/* ---- visiting rows ------------------------------------------------------------------ */

static void bump_x(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            ((vec3_t *)weft_iter_get(it, 0, i))->y += 1.0f;
        }
    }
}

static void check_every_row_visited_once(uint32_t workers) {
    fixture_init(&f, workers, WEFT_EXECUTION_THREADED);
    spawn(10000, true, false);
    must_register(f.world, &(weft_system_desc_t){.name = "bump",
                                                 .fn = bump_x,
                                                 .terms = {W(f.pos), R(f.vel)},
                                                 .parallel = true,
                                                 .chunk_size = 256});
    for (int frame = 1; frame <= 3; frame++) {
        cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK), "%s", weft_last_error());
        CHECKED();
        for (uint32_t r = 0; r < weft_component_rows(f.world, f.pos); r++) {
            const vec3_t *p = weft_component_row(f.world, f.pos, r);
            cr_assert(eq(flt, p->y, (float)frame), "row %u after frame %d", r, frame);
        }
    }
    fixture_fini(&f);
}

Test(frame, a_parallel_system_visits_every_row_once_on_one_worker) {
    check_every_row_visited_once(1);
}

Test(frame, a_parallel_system_visits_every_row_once_on_four_workers) {
    check_every_row_visited_once(4);
}

static _Atomic uint32_t chunks_seen;
static _Atomic uint32_t chunk_count_seen;

static void count_chunks(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    atomic_fetch_add(&chunks_seen, 1);
    atomic_store(&chunk_count_seen, ctx->chunk_count);
    while (weft_iter_next(it)) {
    }
}

Test(frame, chunk_boundaries_depend_only_on_chunk_size_and_rows) {
    uint32_t counts[3];
    uint32_t workers[3] = {1, 2, 8};
    for (int k = 0; k < 3; k++) {
        fixture_init(&f, workers[k], WEFT_EXECUTION_THREADED);
        spawn(1000, false, false);
        must_register(f.world, &(weft_system_desc_t){.name = "c",
                                                     .fn = count_chunks,
                                                     .terms = {R(f.pos)},
                                                     .parallel = true,
                                                     .chunk_size = 64});
        atomic_store(&chunks_seen, 0);
        cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
        counts[k] = atomic_load(&chunks_seen);
        cr_expect(eq(u32, atomic_load(&chunk_count_seen), counts[k]));
        fixture_fini(&f);
    }
    cr_expect(eq(u32, counts[0], 16), "ceil(1000 / 64)");
    cr_expect(eq(u32, counts[1], 16));
    cr_expect(eq(u32, counts[2], 16));
}

Test(frame, a_small_parallel_system_runs_as_one_job) {
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    spawn(100, false, false);
    must_register(f.world, &(weft_system_desc_t){.name = "c",
                                                 .fn = count_chunks,
                                                 .terms = {R(f.pos)},
                                                 .parallel = true,
                                                 .chunk_size = 4096});
    atomic_store(&chunks_seen, 0);
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    cr_expect(eq(u32, atomic_load(&chunks_seen), 1));
    fixture_fini(&f);
}

/* ---- empty, termless and main-thread systems --------------------------------------- */

static _Atomic uint32_t calls;
static float last_dt;
static uint32_t last_worker = 99;

static void record_call(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    atomic_fetch_add(&calls, 1);
    last_dt = ctx->dt;
    last_worker = ctx->worker;
    CHECK(!(weft_iter_next(it)));
}

Test(frame, a_system_without_terms_runs_once_per_frame_with_dt) {
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    must_register(f.world,
                  &(weft_system_desc_t){.name = "tick", .fn = record_call, .main_thread = true});
    atomic_store(&calls, 0);
    for (int i = 0; i < 5; i++) {
        cr_assert(eq(int, weft_world_progress(f.world, 0.25f), WEFT_OK));
    }
    cr_expect(eq(u32, atomic_load(&calls), 5));
    cr_expect(eq(flt, last_dt, 0.25f));
    cr_expect(eq(u32, last_worker, 0), "main_thread systems run on worker 0");
    fixture_fini(&f);
}

/* A main_thread system beside an independent one (a flat phase, which the scheduler may hand
 * out as one parallel loop) still runs on worker 0, in every frame. */
static _Atomic uint32_t off_main;

static void main_only(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    if (ctx->worker != 0) {
        atomic_fetch_add(&off_main, 1);
    }
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            vec3_t *p = weft_iter_get(it, 0, i);
            p->x += 1.0f;
        }
    }
}

static void busy_other(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            vec3_t *v = weft_iter_get(it, 0, i);
            for (int k = 0; k < 16; k++) {
                v->y = v->y * 0.99f + 0.5f;
            }
        }
    }
}

Test(frame, a_main_thread_system_in_a_phase_of_independent_systems_runs_on_worker_0) {
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    spawn(4096, true, true);
    must_register(f.world, &(weft_system_desc_t){.name = "other",
                                                 .fn = busy_other,
                                                 .terms = {W(f.vel)},
                                                 .parallel = true,
                                                 .chunk_size = 256});
    must_register(f.world,
                  &(weft_system_desc_t){
                      .name = "main", .fn = main_only, .terms = {W(f.pos)}, .main_thread = true});
    atomic_store(&off_main, 0);
    for (int i = 0; i < 200; i++) {
        cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    }
    cr_expect(eq(u32, atomic_load(&off_main), 0),
              "the main_thread system ran off worker 0 in %u "
              "of 200 frames",
              atomic_load(&off_main));
    fixture_fini(&f);
}

Test(frame, a_system_matching_nothing_is_not_called) {
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    spawn(10, false, false);
    must_register(f.world,
                  &(weft_system_desc_t){.name = "none", .fn = record_call, .terms = {R(f.hp)}});
    atomic_store(&calls, 0);
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    cr_expect(eq(u32, atomic_load(&calls), 0));
    fixture_fini(&f);
}

/* ---- command buffers ------------------------------------------------------------- */

typedef struct origin {
    uint32_t system;
    uint32_t chunk;
    uint32_t seq;
} origin_t;

static weft_component_t origin_c;

/* Each chunk creates two entities through placeholders and tags them with where they came
 * from; the placeholder is used by later commands of the same buffer. */
static void make_two(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
    }
    for (uint32_t k = 0; k < 2; k++) {
        weft_entity_t e = weft_cmd_create(ctx->cmd);
        CHECK(weft_cmd_is_placeholder(e));
        CHECK(!(weft_entity_is_alive(ctx->world, e)));
        origin_t o = {ctx->system.id, ctx->chunk, k};
        CHECK(weft_cmd_set(ctx->cmd, e, origin_c, &o) == WEFT_OK);
    }
}

Test(frame, placeholders_get_ids_in_system_then_chunk_then_write_order) {
    fixture_init(&f, 4, WEFT_EXECUTION_THREADED);
    cr_assert(eq(int,
                 weft_component_register(
                     f.world, &(weft_component_desc_t){.name = "Origin", .size = sizeof(origin_t)},
                     &origin_c),
                 WEFT_OK));
    spawn(1000, false, false);
    for (int s = 0; s < 3; s++) {
        char name[8] = {'m', (char)('a' + s), 0};
        must_register(f.world, &(weft_system_desc_t){.name = name,
                                                     .fn = make_two,
                                                     .terms = {R(f.pos)},
                                                     .parallel = true,
                                                     .chunk_size = 100});
    }
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK), "%s", weft_last_error());
    CHECKED();
    cr_assert(eq(u32, weft_component_rows(f.world, origin_c), 3 * 10 * 2));
    /* Fresh slots are handed out in ascending index order, so index order is apply order. */
    origin_t prev = {0, 0, 0};
    uint32_t seen = 0;
    for (uint32_t idx = 1; seen < 60; idx++) {
        weft_entity_t e = weft_entity_from_index(f.world, idx);
        const origin_t *o = e ? weft_component_get(f.world, e, origin_c) : NULL;
        if (!o) {
            continue;
        }
        if (seen > 0) {
            bool later = o->system > prev.system ||
                         (o->system == prev.system &&
                          (o->chunk > prev.chunk || (o->chunk == prev.chunk && o->seq > prev.seq)));
            cr_assert(later, "entity %u: (%u,%u,%u) after (%u,%u,%u)", idx, o->system, o->chunk,
                      o->seq, prev.system, prev.chunk, prev.seq);
        }
        prev = *o;
        seen++;
    }
    fixture_fini(&f);
}

/* Damage every entity; destroy those at zero and spawn a replacement from the same chunk. */
static void damage(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            int32_t *h = weft_iter_get(it, 0, i);
            if (--*h > 0) {
                continue;
            }
            weft_entity_t e = weft_iter_entity(it, i);
            CHECK(weft_cmd_destroy(ctx->cmd, e) == WEFT_OK);
            weft_entity_t n = weft_cmd_create(ctx->cmd);
            int32_t fresh = 100;
            CHECK(weft_cmd_set(ctx->cmd, n, f.hp, &fresh) == WEFT_OK);
        }
    }
}

Test(frame, parallel_systems_make_structural_changes_through_their_buffers) {
    fixture_init(&f, 3, WEFT_EXECUTION_THREADED);
    spawn(5000, false, true); /* hp = i % 5: 1000 entities at each of 0..4 */
    must_register(f.world, &(weft_system_desc_t){.name = "damage",
                                                 .fn = damage,
                                                 .terms = {W(f.hp)},
                                                 .parallel = true,
                                                 .chunk_size = 128});
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK), "%s", weft_last_error());
    CHECKED();
    /* hp 0 and 1 hit zero: 2000 destroyed, 2000 created with hp 100. */
    cr_expect(eq(u32, weft_entity_count(f.world), 5000));
    cr_expect(eq(u32, weft_component_rows(f.world, f.pos), 3000));
    uint32_t fresh = 0;
    for (uint32_t r = 0; r < weft_component_rows(f.world, f.hp); r++) {
        fresh += *(const int32_t *)weft_component_row(f.world, f.hp, r) == 100;
    }
    cr_expect(eq(u32, fresh, 2000));
    fixture_fini(&f);
}

/* Phase 0 adds Tag to every positioned entity; phase 1 counts tagged entities. */
static void tag_all(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            CHECK(weft_cmd_add(ctx->cmd, weft_iter_entity(it, i), f.tag) == WEFT_OK);
        }
    }
}

static _Atomic uint32_t tagged;

static void count_tagged(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        atomic_fetch_add(&tagged, it->rows);
    }
}

Test(frame, a_later_phase_sees_the_commands_of_an_earlier_one) {
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    spawn(300, false, false);
    must_register(f.world,
                  &(weft_system_desc_t){
                      .name = "count", .fn = count_tagged, .terms = {R(f.tag)}, .phase = 1});
    must_register(f.world, &(weft_system_desc_t){.name = "tag",
                                                 .fn = tag_all,
                                                 .terms = {R(f.pos)},
                                                 .exclude = {f.tag},
                                                 .parallel = true,
                                                 .chunk_size = 32});
    atomic_store(&tagged, 0);
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK), "%s", weft_last_error());
    CHECKED();
    cr_expect(eq(u32, atomic_load(&tagged), 300));
    cr_expect(eq(u32, weft_component_rows(f.world, f.tag), 300));
    fixture_fini(&f);
}

static void bad_placeholder(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    weft_entity_t foreign = weft_entity_make(0, 5); /* never created by this buffer */
    (void)weft_cmd_destroy(ctx->cmd, foreign);
}

Test(frame, a_placeholder_from_another_buffer_is_rejected) {
    fixture_init(&f, 1, WEFT_EXECUTION_INLINE);
    must_register(f.world, &(weft_system_desc_t){.name = "bad", .fn = bad_placeholder});
    cr_expect(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    cr_expect(strstr(weft_last_error(), "placeholder") != NULL);
    fixture_fini(&f);
}

/* ---- steady state ------------------------------------------------------------------- */

static _Atomic uint64_t alloc_calls;

static void *counting_alloc(size_t size, size_t align, void *user) {
    (void)user;
    atomic_fetch_add(&alloc_calls, 1);
    size_t rounded = (size + align - 1) / align * align;
    return aligned_alloc(align, rounded ? rounded : align);
}

static void counting_free(void *p, size_t size, void *user) {
    (void)size;
    (void)user;
    free(p);
}

/* Sets Health on every entity through the buffer: commands, but no structural change. */
static void heal(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            int32_t h = 9;
            CHECK(weft_cmd_set(ctx->cmd, weft_iter_entity(it, i), f.hp, &h) == WEFT_OK);
        }
    }
}

Test(frame, steady_state_frames_do_not_allocate) {
    weft_world_desc_t d = {.worker_count = 2,
                           .allocator = {.alloc = counting_alloc, .free = counting_free}};
    cr_assert(eq(int, weft_world_create(&d, &f.world), WEFT_OK));
    const char *names[] = {"Position", "Velocity", "Health"};
    weft_component_t *ids[] = {&f.pos, &f.vel, &f.hp};
    size_t sizes[] = {sizeof(vec3_t), sizeof(vec3_t), sizeof(int32_t)};
    for (int i = 0; i < 3; i++) {
        cr_assert(
            eq(int,
               weft_component_register(
                   f.world, &(weft_component_desc_t){.name = names[i], .size = sizes[i]}, ids[i]),
               WEFT_OK));
    }
    spawn(5000, true, true);
    must_register(f.world, &(weft_system_desc_t){.name = "bump",
                                                 .fn = bump_x,
                                                 .terms = {W(f.pos), R(f.vel)},
                                                 .parallel = true,
                                                 .chunk_size = 512});
    must_register(
        f.world,
        &(weft_system_desc_t){
            .name = "heal", .fn = heal, .terms = {R(f.hp)}, .parallel = true, .chunk_size = 700});
    must_register(f.world, &(weft_system_desc_t){.name = "tick", .fn = record_call, .phase = 1});
    for (int i = 0; i < 5; i++) {
        cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    }
    uint64_t before = atomic_load(&alloc_calls);
    for (int i = 0; i < 50; i++) {
        cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    }
    CHECKED();
    cr_expect(eq(u64, atomic_load(&alloc_calls) - before, 0), "frames allocated");
    fixture_fini(&f);
}

/* ---- hooks and schedule changes ------------------------------------------------------ */

static uint32_t hook_calls;
static bool hook_saw_alive;

static void on_add_tag(weft_world_t *world, weft_entity_t e, weft_component_t c, void *ptr,
                       void *user) {
    (void)c;
    (void)ptr;
    (void)user;
    hook_calls++; /* hooks run on the applying (main) thread */
    hook_saw_alive = weft_entity_is_alive(world, e);
}

Test(frame, hooks_fire_during_the_phase_end_apply) {
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    weft_component_t hooked;
    cr_assert(
        eq(int,
           weft_component_register(
               f.world, &(weft_component_desc_t){.name = "Hooked", .on_add = on_add_tag}, &hooked),
           WEFT_OK));
    spawn(200, false, false);
    f.tag = hooked; /* tag_all() adds f.tag */
    must_register(
        f.world,
        &(weft_system_desc_t){
            .name = "tag", .fn = tag_all, .terms = {R(f.pos)}, .parallel = true, .chunk_size = 64});
    hook_calls = 0;
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK), "%s", weft_last_error());
    CHECKED();
    cr_expect(eq(u32, hook_calls, 200));
    cr_expect(hook_saw_alive);
    fixture_fini(&f);
}

Test(frame, systems_registered_between_frames_join_the_schedule) {
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    spawn(1000, true, false);
    must_register(f.world, &(weft_system_desc_t){.name = "bump",
                                                 .fn = bump_x,
                                                 .terms = {W(f.pos), R(f.vel)},
                                                 .parallel = true,
                                                 .chunk_size = 128});
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    cr_expect(eq(u32, edge_count(f.world), 0));
    must_register(f.world, &(weft_system_desc_t){.name = "bump2",
                                                 .fn = bump_x,
                                                 .terms = {W(f.pos)},
                                                 .parallel = true,
                                                 .chunk_size = 300});
    cr_expect(eq(u32, edge_count(f.world), 1));
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    for (uint32_t r = 0; r < weft_component_rows(f.world, f.pos); r++) {
        cr_assert(eq(flt, ((const vec3_t *)weft_component_row(f.world, f.pos, r))->y, 3.0f));
    }
    fixture_fini(&f);
}

static _Atomic uint32_t readers_done;

static void reader(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    float sum = 0;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            sum += ((const vec3_t *)weft_iter_get(it, 0, i))->x;
        }
    }
    CHECK(sum >= 0);
    atomic_fetch_add(&readers_done, 1);
}

static void writer(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    CHECK(atomic_load(&readers_done) == 40); /* every reader finished before */
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            ((vec3_t *)weft_iter_get(it, 0, i))->x += 1.0f;
        }
    }
}

Test(frame, a_writer_waits_for_every_reader_of_a_wide_fan_in) {
    fixture_init(&f, 3, WEFT_EXECUTION_THREADED);
    spawn(500, false, false);
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "reader%02d", i);
        must_register(f.world,
                      &(weft_system_desc_t){.name = name, .fn = reader, .terms = {R(f.pos)}});
    }
    must_register(f.world, &(weft_system_desc_t){.name = "writer",
                                                 .fn = writer,
                                                 .terms = {W(f.pos)},
                                                 .parallel = true,
                                                 .chunk_size = 100});
    cr_expect(eq(u32, edge_count(f.world), 40));
    for (int fr = 0; fr < 200; fr++) {
        atomic_store(&readers_done, 0);
        cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
        CHECKED();
    }
    fixture_fini(&f);
}

/* "Systems with nothing to do cost next to nothing": their body is not even called,
 * on the sequential path and on the threaded one, parallel or not. */
Test(frame, a_system_that_matches_nothing_is_not_called) {
    const uint32_t workers[3] = {1, 2, 4};
    for (int k = 0; k < 3; k++) {
        fixture_init(&f, workers[k], WEFT_EXECUTION_THREADED);
        spawn(100, false, false);
        must_register(
            f.world, &(weft_system_desc_t){.name = "busy", .fn = noop_system, .terms = {W(f.pos)}});
        must_register(f.world, &(weft_system_desc_t){
                                   .name = "idle", .fn = counting_system, .terms = {W(f.mass)}});
        must_register(f.world, &(weft_system_desc_t){.name = "idle_par",
                                                     .fn = counting_system,
                                                     .terms = {R(f.hp)},
                                                     .parallel = true,
                                                     .chunk_size = 8});
        atomic_store(&fx_body_calls, 0);
        for (int fr = 0; fr < 3; fr++) {
            cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
        }
        cr_expect(eq(u32, atomic_load(&fx_body_calls), 0), "%u workers", workers[k]);
        fixture_fini(&f);
    }
}
