/* test_resource.c: resources — world-wide values that systems declare like components, that
 * order the systems touching them, and that the hash, snapshots and archives carry. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdatomic.h>
#include <string.h>

#include "ecs_fixture.h"

/* Every world of this suite counts its memory here; each test ends with none live. */
static test_alloc_t counted;

static void expect_no_leak(void) {
    cr_expect(eq(sz, counted.live_bytes, 0), "%zu bytes leaked", counted.live_bytes);
}

TestSuite(resource, .fini = expect_no_leak, .timeout = 60);

static weft_world_t *new_world(void) {
    weft_world_t *w = test_world(&counted);
    cr_assert(w != NULL);
    return w;
}

typedef struct clock_res {
    uint64_t ticks;
    double time;
} clock_res_t;

static weft_component_t clock_of(weft_world_t *w) {
    weft_component_t r;
    clock_res_t init = {.ticks = 7, .time = 0.5};
    weft_resource_desc_t d = {.name = "Clock", .size = sizeof init, .initial = &init};
    cr_assert(eq(int, weft_resource_register(w, &d, &r), WEFT_OK), "%s", weft_last_error());
    return r;
}

Test(resource, a_resource_holds_its_value_and_is_no_component) {
    weft_world_t *w = new_world();
    weft_component_t r = clock_of(w);
    cr_expect(weft_resource_is(w, r));
    const clock_res_t *c = weft_resource_get(w, r);
    cr_assert(c != NULL);
    cr_expect(eq(u64, c->ticks, 7));
    clock_res_t v = {.ticks = 9, .time = 1.0};
    cr_expect(eq(int, weft_resource_set(w, r, &v), WEFT_OK));
    cr_expect(eq(u64, ((const clock_res_t *)weft_resource_get(w, r))->ticks, 9));
    ((clock_res_t *)weft_resource_get_mut(w, r))->ticks = 10;
    cr_expect(eq(u64, ((const clock_res_t *)weft_resource_get(w, r))->ticks, 10));
    /* registering again: same id, value kept; another layout or a component's name: conflict */
    weft_component_t again;
    weft_resource_desc_t d = {.name = "Clock", .size = sizeof(clock_res_t)};
    cr_expect(eq(int, weft_resource_register(w, &d, &again), WEFT_OK));
    cr_expect(eq(u32, again.id, r.id));
    cr_expect(eq(u64, ((const clock_res_t *)weft_resource_get(w, r))->ticks, 10));
    d.size = 8;
    cr_expect(eq(int, weft_resource_register(w, &d, &again), WEFT_ECONFLICT));
    weft_component_t pos = test_register(w, "Position", 12);
    d = (weft_resource_desc_t){.name = "Position", .size = 12};
    cr_expect(eq(int, weft_resource_register(w, &d, &again), WEFT_ECONFLICT));
    d = (weft_resource_desc_t){.name = "Zero", .size = 0};
    cr_expect(eq(int, weft_resource_register(w, &d, &again), WEFT_EINVAL));
    /* per-entity calls treat the id as no component */
    weft_entity_t e = test_entity(w);
    uint64_t h = weft_world_hash(w);
    cr_expect(eq(int, weft_component_add(w, e, r, NULL), WEFT_EINVAL));
    cr_expect(eq(int, weft_component_set(w, e, r, &v), WEFT_EINVAL));
    cr_expect(eq(ptr, (void *)weft_component_get(w, e, r), NULL));
    cr_expect(eq(u32, weft_component_rows(w, r), 0));
    weft_query_t *q = NULL;
    cr_expect(eq(int, weft_query_create(w, &(weft_query_desc_t){.terms = {{.component = r}}}, &q),
                 WEFT_EINVAL));
    cr_expect(eq(u64, weft_world_hash(w), h), "failed calls changed nothing");
    cr_expect(eq(ptr, (void *)weft_resource_get(w, pos), NULL), "a component is no resource");
    cr_expect(eq(int, weft_resource_set(w, pos, &v), WEFT_EINVAL));
    weft_world_destroy(w);
}

Test(resource, the_world_hash_covers_resource_values) {
    weft_world_t *w = new_world();
    weft_component_t r = clock_of(w);
    uint64_t h = weft_world_hash(w);
    ((clock_res_t *)weft_resource_get_mut(w, r))->ticks++;
    cr_expect(ne(u64, weft_world_hash(w), h));
    ((clock_res_t *)weft_resource_get_mut(w, r))->ticks--;
    cr_expect(eq(u64, weft_world_hash(w), h));
    weft_world_destroy(w);
}

/* ---- scheduling ------------------------------------------------------------------- */

static void noop(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
    }
}

Test(resource, systems_that_write_a_resource_are_ordered_like_component_writers) {
    weft_world_t *w = new_world();
    weft_component_t r = clock_of(w);
    weft_system_t sys[4];
    const char *names[4] = {"read1", "read2", "write", "read3"};
    for (int i = 0; i < 4; i++) {
        weft_system_desc_t d = {.name = names[i], .fn = noop};
        if (i == 2) {
            d.writes[0] = r;
        } else {
            d.reads[0] = r;
        }
        cr_assert(eq(int, weft_system_register(w, &d, &sys[i]), WEFT_OK), "%s", weft_last_error());
    }
    weft_schedule_edge_t edges[8];
    uint32_t n = 0;
    cr_assert(eq(int, weft_schedule_edges(w, edges, 8, &n), WEFT_OK));
    /* read1 -> write, read2 -> write, write -> read3; the readers are free of each other */
    cr_expect(eq(u32, n, 3));
    for (uint32_t k = 0; k < n && k < 8; k++) {
        cr_expect(eq(u32, edges[k].component.id, r.id), "every edge is forced by the resource");
        cr_expect(edges[k].from.id == sys[2].id || edges[k].to.id == sys[2].id);
    }
    weft_system_desc_t bad = {.name = "term", .fn = noop, .terms = {{.component = r}}};
    cr_expect(eq(int, weft_system_register(w, &bad, NULL), WEFT_EINVAL), "not a query term");
    cr_expect(strstr(weft_last_error(), "resource") != NULL, "%s", weft_last_error());
    weft_world_destroy(w);
}

/* A frame where a generator resource is advanced by one system and read by others that write
 * components from it: the same world at every worker count. */
typedef struct rng {
    uint64_t state;
} rng_t;

typedef struct sim {
    weft_component_t rng, val;
} sim_t;

static void advance(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    const sim_t *s = ctx->user;
    rng_t *g = weft_resource_get_mut(ctx->world, s->rng);
    g->state = g->state * 6364136223846793005ull + 1442695040888963407ull;
}

static void consume(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const sim_t *s = ctx->user;
    const rng_t *g = weft_resource_get(ctx->world, s->rng);
    while (weft_iter_next(it)) {
        uint64_t *v = it->columns[0];
        for (uint32_t i = 0; i < it->rows; i++) {
            v[i] = v[i] * 31u + (g->state >> 17) + i;
        }
    }
}

static uint64_t run_sim(uint32_t workers) {
    weft_world_desc_t d = {.worker_count = workers};
    if (workers == 0) {
        d = (weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE};
    }
    weft_world_t *w = NULL;
    cr_assert(eq(int, weft_world_create(&d, &w), WEFT_OK));
    static sim_t s;
    rng_t seed = {42};
    weft_resource_desc_t rd = {.name = "Rng", .size = sizeof seed, .initial = &seed};
    cr_assert(eq(int, weft_resource_register(w, &rd, &s.rng), WEFT_OK));
    s.val = test_register(w, "Val", 8);
    for (int i = 0; i < 5000; i++) {
        weft_entity_t e = test_entity(w);
        cr_assert(eq(int, weft_component_add(w, e, s.val, NULL), WEFT_OK));
    }
    /* registration order: consume_a, advance, consume_b: the resource orders all three */
    weft_system_desc_t a = {.name = "consume_a",
                            .fn = consume,
                            .user = &s,
                            .terms = {{.component = s.val, .access = WEFT_ACCESS_WRITE}},
                            .reads = {s.rng},
                            .parallel = true,
                            .chunk_size = 512};
    weft_system_desc_t adv = {.name = "advance", .fn = advance, .user = &s, .writes = {s.rng}};
    weft_system_desc_t b = a;
    b.name = "consume_b";
    cr_assert(eq(int, weft_system_register(w, &a, NULL), WEFT_OK));
    cr_assert(eq(int, weft_system_register(w, &adv, NULL), WEFT_OK));
    cr_assert(eq(int, weft_system_register(w, &b, NULL), WEFT_OK));
    for (int f = 0; f < 30; f++) {
        cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK), "%s", weft_last_error());
    }
    uint64_t h = weft_world_hash(w);
    weft_world_destroy(w);
    return h;
}

Test(resource, a_frame_using_a_resource_gives_the_same_world_at_every_worker_count) {
    uint64_t ref = run_sim(0);
    static const uint32_t workers[] = {1, 2, 3, 4, 8};
    for (size_t i = 0; i < sizeof workers / sizeof workers[0]; i++) {
        cr_expect(eq(u64, run_sim(workers[i]), ref), "%u workers", workers[i]);
    }
}

/* ---- snapshots and archives ---------------------------------------------------------- */

Test(resource, a_snapshot_restores_a_resource_value) {
    weft_world_t *w = new_world();
    weft_component_t r = clock_of(w);
    weft_snapshot_t *snap = NULL;
    cr_assert(eq(int, weft_snapshot_create(w, &snap), WEFT_OK));
    cr_assert(eq(int, weft_snapshot_capture(w, snap), WEFT_OK));
    uint64_t h = weft_world_hash(w);
    ((clock_res_t *)weft_resource_get_mut(w, r))->ticks = 1234;
    cr_assert(eq(int, weft_snapshot_restore(w, snap), WEFT_OK), "%s", weft_last_error());
    cr_expect(eq(u64, ((const clock_res_t *)weft_resource_get(w, r))->ticks, 7));
    cr_expect(eq(u64, weft_world_hash(w), h));
    weft_snapshot_destroy(snap);
    weft_world_destroy(w);
}

Test(resource, a_whole_world_archive_carries_resource_values_and_checks_their_layout) {
    weft_world_t *w = new_world();
    weft_component_t r = clock_of(w);
    ((clock_res_t *)weft_resource_get_mut(w, r))->ticks = 99;
    weft_entity_t e = test_entity(w);
    weft_membuf_t whole = {0}, part = {0};
    weft_writer_t ww = weft_membuf_writer(&whole), pw = weft_membuf_writer(&part);
    cr_assert(eq(int, weft_archive_save(w, NULL, &ww), WEFT_OK), "%s", weft_last_error());
    weft_archive_save_desc_t sd = {.entities = &e, .entity_count = 1};
    cr_assert(eq(int, weft_archive_save(w, &sd, &pw), WEFT_OK), "%s", weft_last_error());
    /* into a world with the resource: the value comes along; the hash matches */
    weft_world_t *b = new_world();
    weft_component_t rb = clock_of(b);
    cr_assert(eq(int, weft_archive_load_memory(b, whole.data, whole.size, NULL, NULL), WEFT_OK),
              "%s", weft_last_error());
    cr_expect(eq(u64, ((const clock_res_t *)weft_resource_get(b, rb))->ticks, 99));
    cr_expect(eq(u64, weft_world_hash(b), weft_world_hash(w)));
    weft_world_destroy(b);
    /* a partial archive carries no resources */
    b = new_world();
    rb = clock_of(b);
    cr_assert(eq(int, weft_archive_load_memory(b, part.data, part.size, NULL, NULL), WEFT_OK));
    cr_expect(eq(u64, ((const clock_res_t *)weft_resource_get(b, rb))->ticks, 7));
    weft_world_destroy(b);
    /* unknown resource: a mismatch, or skipped on request; another layout: a mismatch */
    b = new_world();
    uint64_t h = weft_world_hash(b);
    cr_expect(
        eq(int, weft_archive_load_memory(b, whole.data, whole.size, NULL, NULL), WEFT_EMISMATCH));
    cr_expect(eq(u64, weft_world_hash(b), h));
    weft_archive_load_desc_t skip = {.skip_unknown = true};
    cr_expect(eq(int, weft_archive_load_memory(b, whole.data, whole.size, &skip, NULL), WEFT_OK));
    weft_world_destroy(b);
    b = new_world();
    weft_component_t small;
    weft_resource_desc_t d = {.name = "Clock", .size = 8};
    cr_assert(eq(int, weft_resource_register(b, &d, &small), WEFT_OK));
    h = weft_world_hash(b);
    cr_expect(
        eq(int, weft_archive_load_memory(b, whole.data, whole.size, NULL, NULL), WEFT_EMISMATCH));
    cr_expect(eq(u64, weft_world_hash(b), h), "a failed load changes nothing");
    weft_world_destroy(b);
    weft_membuf_free(&whole);
    weft_membuf_free(&part);
    weft_world_destroy(w);
}
