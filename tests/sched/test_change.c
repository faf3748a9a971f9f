/* test_change.c: change filters of systems (weft_query_term_t.filter) against a model, at
 * 1, 2, 3, 4 and 8 workers and inline.
 *
 * Per frame: "poke" writes Position of a frame-dependent 2% of the entities through
 * weft_component_get_mut and records, for another 2%, a command that removes Health where
 * present and sets it where absent; "watch_pos" (Position CHANGED, parallel, small chunks) and
 * "watch_hp" (Health ADDED, parallel) record what they match; "move" (Position written as a
 * term, Health read) runs every third frame, so every row it iterates counts as written.
 * Between frames the main thread sets Position on a few entities and adds Health to a few.
 * The model predicts each frame's matches from the schedule's order (poke -> watch_pos ->
 * move by conflict edges); a mismatch names the frame, the worker count and the entity. The
 * seed is printed; WEFT_SEED=<n> replays one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched_fixture.h"

TestSuite(change, .timeout = 240);

enum { N = 3000, FRAMES = 40, CHUNK = 128, MAX_CHUNKS = N / CHUNK + 2 };

typedef struct sim {
    fixture_t f;
    weft_entity_t handles[N];
    uint32_t frame;                 /* written by the main thread between frames only */
    uint64_t seed;                  /* mixes the subsets */
    uint32_t *seen_pos[MAX_CHUNKS]; /* per chunk: entity indices matched by watch_pos */
    uint32_t n_pos[MAX_CHUNKS];
    uint32_t *seen_hp[MAX_CHUNKS]; /* per chunk: by watch_hp */
    uint32_t n_hp[MAX_CHUNKS];
} sim_t;

/* Is entity i in subset `which` of frame f? (about 2%) */
static bool picked(const sim_t *s, uint32_t i, uint32_t f, uint32_t which) {
    return fixture_mix(s->seed ^ ((uint64_t)i << 20) ^ ((uint64_t)f << 44) ^ which) % 50u == 0;
}

static void poke(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    const sim_t *s = ctx->user;
    for (uint32_t i = 0; i < N; i++) {
        if (picked(s, i, s->frame, 1)) {
            vec3_t *p = weft_component_get_mut(ctx->world, s->handles[i], s->f.pos);
            CHECK(p != NULL);
            p->x += 1.0f;
        }
        if (picked(s, i, s->frame, 2)) {
            if (weft_component_has(ctx->world, s->handles[i], s->f.hp)) {
                CHECK(weft_cmd_remove(ctx->cmd, s->handles[i], s->f.hp) == WEFT_OK);
            } else {
                int32_t v = (int32_t)i;
                CHECK(weft_cmd_set(ctx->cmd, s->handles[i], s->f.hp, &v) == WEFT_OK);
            }
        }
    }
}

static void watch(weft_iter_t *it, const weft_system_ctx_t *ctx, uint32_t **lists, uint32_t *ns) {
    CHECK(ctx->chunk < MAX_CHUNKS);
    uint32_t n = 0;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            lists[ctx->chunk][n++] = it->entities[i];
        }
    }
    ns[ctx->chunk] = n;
}

static void watch_pos(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    sim_t *s = ctx->user;
    watch(it, ctx, s->seen_pos, s->n_pos);
}

static void watch_hp(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    sim_t *s = ctx->user;
    watch(it, ctx, s->seen_hp, s->n_hp);
}

static void move(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            vec3_t *p = weft_iter_get(it, 0, i);
            p->y += 1.0f;
        }
    }
}

static bool every_third(weft_world_t *world, float dt, void *user) {
    (void)world, (void)dt;
    return ((const sim_t *)user)->frame % 3u == 0;
}

/* Collect a watcher's per-chunk lists into a membership array by entity index. */
static void gather(uint32_t *const *lists, const uint32_t *ns, bool *out, size_t slots) {
    memset(out, 0, slots);
    for (uint32_t c = 0; c < MAX_CHUNKS; c++) {
        for (uint32_t k = 0; k < ns[c]; k++) {
            cr_assert(lists[c][k] < slots);
            cr_assert(not(out[lists[c][k]]), "entity index %u matched twice", lists[c][k]);
            out[lists[c][k]] = true;
        }
    }
}

/* A parallel system reading `c` with change filter `filter`, `chunk` rows per chunk. */
static void register_watcher(weft_world_t *w, const char *name, weft_system_fn_t fn, void *user,
                             weft_component_t c, weft_change_filter_t filter, uint32_t chunk) {
    must_register(w, &(weft_system_desc_t){
                         .name = name,
                         .fn = fn,
                         .user = user,
                         .terms = {{.component = c, .access = WEFT_ACCESS_READ, .filter = filter}},
                         .parallel = true,
                         .chunk_size = chunk});
}

static void run_model(uint32_t workers, weft_execution_t exec, uint64_t seed) {
    sim_t *s = calloc(1, sizeof *s);
    cr_assert(s != NULL);
    s->seed = seed;
    fixture_init(&s->f, workers, exec);
    weft_world_t *w = s->f.world;
    for (uint32_t c = 0; c < MAX_CHUNKS; c++) {
        s->seen_pos[c] = calloc(N, sizeof(uint32_t));
        s->seen_hp[c] = calloc(N, sizeof(uint32_t));
    }
    for (uint32_t i = 0; i < N; i++) {
        cr_assert(eq(int, weft_entity_create(w, &s->handles[i]), WEFT_OK));
        cr_assert(eq(int, weft_component_add(w, s->handles[i], s->f.pos, NULL), WEFT_OK));
        if (i % 2 == 0) {
            cr_assert(eq(int, weft_component_add(w, s->handles[i], s->f.hp, NULL), WEFT_OK));
        }
    }
    must_register(
        w, &(weft_system_desc_t){
               .name = "poke", .fn = poke, .user = s, .writes = {s->f.pos}, .reads = {s->f.hp}});
    register_watcher(w, "watch_pos", watch_pos, s, s->f.pos, WEFT_CHANGE_CHANGED, CHUNK);
    register_watcher(w, "watch_hp", watch_hp, s, s->f.hp, WEFT_CHANGE_ADDED, CHUNK);
    must_register(w, &(weft_system_desc_t){.name = "move",
                                           .fn = move,
                                           .user = s,
                                           .terms = {W(s->f.pos), R(s->f.hp)},
                                           .parallel = true,
                                           .chunk_size = CHUNK,
                                           .run_if = every_third,
                                           .run_if_user = s});
    size_t slots = 4 * N;
    bool *moved = calloc(slots, 1), *direct_pos = calloc(slots, 1), *hp_added = calloc(slots, 1);
    bool *got = calloc(slots, 1);
    bool first = true;
    for (uint32_t f = 0; f < FRAMES; f++) {
        s->frame = f;
        /* main-thread writes between frames */
        memset(direct_pos, 0, slots);
        for (uint32_t k = 0; k < 3; k++) {
            uint32_t i = (uint32_t)(fixture_mix(seed + f * 7u + k) % N);
            vec3_t v = {1, 2, 3};
            cr_assert(eq(int, weft_component_set(w, s->handles[i], s->f.pos, &v), WEFT_OK));
            direct_pos[weft_entity_index(s->handles[i])] = true;
        }
        for (uint32_t k = 0; k < 2; k++) {
            uint32_t i = (uint32_t)(fixture_mix(seed * 3u + f * 11u + k) % N);
            if (!weft_component_has(w, s->handles[i], s->f.hp)) {
                cr_assert(eq(int, weft_component_add(w, s->handles[i], s->f.hp, NULL), WEFT_OK));
                hp_added[weft_entity_index(s->handles[i])] = true;
            }
        }
        bool has_hp[N];
        for (uint32_t i = 0; i < N; i++) {
            has_hp[i] = weft_component_has(w, s->handles[i], s->f.hp);
        }
        memset(s->n_pos, 0, sizeof s->n_pos);
        memset(s->n_hp, 0, sizeof s->n_hp);
        cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK), "%s", weft_last_error());
        CHECKED();
        /* watch_pos: this frame's pokes, the last frame's move, the direct sets */
        gather(s->seen_pos, s->n_pos, got, slots);
        for (uint32_t i = 0; i < N; i++) {
            uint32_t idx = weft_entity_index(s->handles[i]);
            bool want = first || picked(s, i, f, 1) || moved[idx] || direct_pos[idx];
            cr_assert(eq(int, got[idx], want),
                      "seed %llu workers %u frame %u: watch_pos on entity %u: %d, model %d",
                      (unsigned long long)seed, workers, f, i, got[idx], want);
        }
        /* watch_hp: Health added by the last apply or directly, and still there */
        gather(s->seen_hp, s->n_hp, got, slots);
        for (uint32_t i = 0; i < N; i++) {
            uint32_t idx = weft_entity_index(s->handles[i]);
            bool want = has_hp[i] && (first || hp_added[idx]);
            cr_assert(eq(int, got[idx], want),
                      "seed %llu workers %u frame %u: watch_hp on entity %u: %d, model %d",
                      (unsigned long long)seed, workers, f, i, got[idx], want);
        }
        /* what this frame leaves for the next: move's rows, the apply's Health changes */
        memset(moved, 0, slots);
        memset(hp_added, 0, slots);
        for (uint32_t i = 0; i < N; i++) {
            uint32_t idx = weft_entity_index(s->handles[i]);
            moved[idx] = f % 3u == 0 && has_hp[i];
            if (picked(s, i, f, 2) && !has_hp[i]) {
                hp_added[idx] = true;
            }
            cr_assert(eq(int, weft_component_has(w, s->handles[i], s->f.hp),
                         picked(s, i, f, 2) ? !has_hp[i] : has_hp[i]));
        }
        first = false;
    }
    free(moved), free(direct_pos), free(hp_added), free(got);
    for (uint32_t c = 0; c < MAX_CHUNKS; c++) {
        free(s->seen_pos[c]);
        free(s->seen_hp[c]);
    }
    fixture_fini(&s->f);
    free(s);
}

Test(change, systems_match_model_inline) {
    run_model(1, WEFT_EXECUTION_INLINE, fixture_seed("change filters"));
}

Test(change, systems_match_model_at_1_to_8_workers) {
    uint64_t seed = fixture_seed("change filters");
    const uint32_t workers[] = {1, 2, 3, 4, 8};
    for (size_t k = 0; k < sizeof workers / sizeof workers[0]; k++) {
        run_model(workers[k], WEFT_EXECUTION_THREADED, seed);
    }
}

/* ---- concurrent writers of one block ------------------------------------------------------
 * "scatter" (parallel, 16-row chunks over Velocity) writes Position through get_mut: chunk c
 * writes the picked entities i with i % chunks == c, so every 16-row tick block gets rows
 * from several chunks at once; chunk 0 also starts a weft_parallel_for whose ranges write a
 * second pick (nested jobs: the world's tick, the other block slot). "seen" (Position
 * CHANGED, after it by the conflict edge) must see every row of the frame's two picks, and
 * nothing else but the last frame's nested picks (seen again when both systems share a
 * phase, see the check). */
enum { CN = 4096, CFRAMES = 12, CCHUNK = 16, CMAX_CHUNKS = CN / 128 + 2 };

typedef struct conc {
    fixture_t f;
    weft_entity_t handles[CN];
    uint32_t frame; /* written by the main thread between frames only */
    uint64_t seed;
    uint32_t *seen[CMAX_CHUNKS];
    uint32_t n_seen[CMAX_CHUNKS];
} conc_t;

static bool conc_picked(const conc_t *s, uint32_t i, uint32_t which) {
    return fixture_mix(s->seed ^ ((uint64_t)i << 20) ^ ((uint64_t)s->frame << 44) ^ which) % 16u ==
           0;
}

typedef struct nested {
    const conc_t *s;
    weft_world_t *world;
} nested_t;

static void nested_writes(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    const nested_t *n = ctx;
    for (uint64_t i = begin; i < end; i++) {
        if (conc_picked(n->s, (uint32_t)i, 2)) {
            vec3_t *p = weft_component_get_mut(n->world, n->s->handles[i], n->s->f.pos);
            CHECK(p != NULL);
            p->z += 1.0f;
        }
    }
}

static void scatter(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const conc_t *s = ctx->user;
    while (weft_iter_next(it)) {
    }
    for (uint32_t i = ctx->chunk; i < CN; i += ctx->chunk_count) {
        if (conc_picked(s, i, 1)) {
            vec3_t *p = weft_component_get_mut(ctx->world, s->handles[i], s->f.pos);
            CHECK(p != NULL);
            p->x += 1.0f;
        }
    }
    if (ctx->chunk == 0) {
        nested_t n = {s, ctx->world};
        CHECK(weft_parallel_for(weft_world_jobs(ctx->world), CN, 64, nested_writes, &n) == WEFT_OK);
    }
}

static void conc_seen(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    conc_t *s = ctx->user;
    CHECK(ctx->chunk < CMAX_CHUNKS);
    uint32_t n = 0;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            s->seen[ctx->chunk][n++] = it->entities[i];
        }
    }
    s->n_seen[ctx->chunk] = n;
}

static void run_concurrent(uint32_t workers, weft_execution_t exec, uint64_t seed) {
    conc_t *s = calloc(1, sizeof *s);
    cr_assert(s != NULL);
    s->seed = seed;
    fixture_init(&s->f, workers, exec);
    weft_world_t *w = s->f.world;
    for (uint32_t c = 0; c < CMAX_CHUNKS; c++) {
        s->seen[c] = calloc(CN, sizeof(uint32_t));
    }
    for (uint32_t i = 0; i < CN; i++) {
        cr_assert(eq(int, weft_entity_create(w, &s->handles[i]), WEFT_OK));
        cr_assert(eq(int, weft_component_add(w, s->handles[i], s->f.pos, NULL), WEFT_OK));
        cr_assert(eq(int, weft_component_add(w, s->handles[i], s->f.vel, NULL), WEFT_OK));
    }
    must_register(w, &(weft_system_desc_t){.name = "scatter",
                                           .fn = scatter,
                                           .user = s,
                                           .terms = {R(s->f.vel)},
                                           .writes = {s->f.pos},
                                           .parallel = true,
                                           .chunk_size = CCHUNK});
    register_watcher(w, "seen", conc_seen, s, s->f.pos, WEFT_CHANGE_CHANGED, 128);
    size_t slots = 2 * CN;
    bool *got = calloc(slots, 1);
    for (uint32_t f = 0; f < CFRAMES; f++) {
        s->frame = f;
        memset(s->n_seen, 0, sizeof s->n_seen);
        cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK), "%s", weft_last_error());
        CHECKED();
        memset(got, 0, slots);
        for (uint32_t c = 0; c < CMAX_CHUNKS; c++) {
            for (uint32_t k = 0; k < s->n_seen[c]; k++) {
                cr_assert(s->seen[c][k] < slots);
                got[s->seen[c][k]] = true;
            }
        }
        for (uint32_t i = 0; i < CN; i++) {
            bool want = f == 0 || conc_picked(s, i, 1) || conc_picked(s, i, 2);
            /* The nested writes carry the phase's world tick: when "seen" runs in the same
             * phase as "scatter" (after it), it sees last frame's again (weft/query.h). */
            s->frame = f - 1u;
            bool may = f > 0 && conc_picked(s, i, 2);
            s->frame = f;
            bool saw = got[weft_entity_index(s->handles[i])];
            cr_assert(saw == want || (saw && may),
                      "seed %llu workers %u frame %u: entity %u seen %d, model %d",
                      (unsigned long long)seed, workers, f, i, saw, want);
        }
    }
    free(got);
    for (uint32_t c = 0; c < CMAX_CHUNKS; c++) {
        free(s->seen[c]);
    }
    fixture_fini(&s->f);
    free(s);
}

Test(change, concurrent_writers_of_one_block_are_all_seen_at_1_to_8_workers) {
    uint64_t seed = fixture_seed("concurrent change writers");
    const uint32_t workers[] = {1, 2, 4, 8};
    for (size_t k = 0; k < sizeof workers / sizeof workers[0]; k++) {
        run_concurrent(workers[k], WEFT_EXECUTION_THREADED, seed);
    }
}

/* ---- the order a changed system sees (weft/query.h, weft_change_filter_t) ---------------
 *
 * One system (one chunk) with a CHANGED filter on Position records the entities it is handed,
 * in order. Between frames the main thread sets or get_muts Position of seed-drawn entities,
 * often the same ones again; every fourth frame it also removes and re-adds one entity (rows
 * move: row order). The frames' sequences must be the same inline and at 1, 2, 4 and 8
 * workers, and equal to the writes' first-write order where no row moved. */

enum { ON = 2000, OFRAMES = 12, OWRITES = 60 };

typedef struct order_sim {
    uint32_t seen[ON];
    uint32_t n;
} order_sim_t;

static void watch_order(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    order_sim_t *o = ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            CHECK(o->n < ON);
            o->seen[o->n++] = it->entities[i];
        }
    }
}

/* Every frame's sequence after the first (which sees every row) into out, each preceded by its
 * length; returns the words written. */
static uint32_t run_order(uint32_t workers, weft_execution_t exec, uint64_t seed, uint32_t *out) {
    fixture_t f;
    fixture_init(&f, workers, exec);
    weft_world_t *w = f.world;
    weft_entity_t *h = calloc(ON, sizeof *h);
    order_sim_t *o = calloc(1, sizeof *o);
    uint32_t *first = calloc(ON, sizeof *first), *expect = calloc(ON, sizeof *expect);
    cr_assert(h && o && first && expect);
    for (uint32_t i = 0; i < ON; i++) {
        cr_assert(eq(int, weft_entity_create(w, &h[i]), WEFT_OK));
        cr_assert(eq(int, weft_component_add(w, h[i], f.pos, NULL), WEFT_OK));
    }
    must_register(
        w, &(weft_system_desc_t){.name = "watch_order",
                                 .fn = watch_order,
                                 .user = o,
                                 .terms = {{.component = f.pos, .filter = WEFT_CHANGE_CHANGED}}});
    uint32_t words = 0;
    for (uint32_t fr = 0; fr < OFRAMES; fr++) {
        uint32_t ne = 0;
        for (uint32_t k = 0; fr != 0 && k < OWRITES; k++) {
            uint64_t r = fixture_mix(seed + fr * 131u + k);
            uint32_t i = (uint32_t)(r % (k % 3u == 0 ? 50u : ON));
            if (k % 2u == 0) {
                vec3_t v = {1, 2, 3};
                cr_assert(eq(int, weft_component_set(w, h[i], f.pos, &v), WEFT_OK));
            } else {
                cr_assert(weft_component_get_mut(w, h[i], f.pos) != NULL);
            }
            if (first[i] != fr) {
                first[i] = fr;
                expect[ne++] = weft_entity_index(h[i]);
            }
        }
        bool moved = fr % 4u == 3u;
        if (moved) {
            uint32_t i = (uint32_t)(fixture_mix(seed ^ fr) % ON);
            cr_assert(eq(int, weft_component_remove(w, h[i], f.pos), WEFT_OK));
            cr_assert(eq(int, weft_component_add(w, h[i], f.pos, NULL), WEFT_OK));
        }
        o->n = 0;
        cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK), "%s", weft_last_error());
        if (fr == 0) {
            continue; /* the first run: every row */
        }
        if (!moved) {
            cr_assert(eq(u32, o->n, ne), "seed %llu workers %u frame %u", (unsigned long long)seed,
                      workers, fr);
            for (uint32_t j = 0; j < ne; j++) {
                cr_assert(eq(u32, o->seen[j], expect[j]),
                          "seed %llu workers %u frame %u: entry %u not in first-write order",
                          (unsigned long long)seed, workers, fr, j);
            }
        }
        out[words++] = o->n;
        memcpy(out + words, o->seen, o->n * sizeof *out);
        words += o->n;
    }
    fixture_fini(&f);
    free(h), free(o), free(first), free(expect);
    return words;
}

Test(change, a_changed_system_sees_the_same_order_inline_and_at_1_to_8_workers) {
    uint64_t seed = fixture_seed("change order");
    size_t cap = (size_t)OFRAMES * (ON + 1);
    uint32_t *ref = calloc(cap, sizeof *ref), *got = calloc(cap, sizeof *got);
    cr_assert(ref && got);
    uint32_t n = run_order(1, WEFT_EXECUTION_INLINE, seed, ref);
    const uint32_t workers[] = {1, 2, 4, 8};
    for (size_t k = 0; k < sizeof workers / sizeof workers[0]; k++) {
        uint32_t m = run_order(workers[k], WEFT_EXECUTION_THREADED, seed, got);
        cr_assert(eq(u32, m, n), "seed %llu workers %u", (unsigned long long)seed, workers[k]);
        cr_assert(memcmp(ref, got, n * sizeof *ref) == 0,
                  "seed %llu workers %u: another order than inline", (unsigned long long)seed,
                  workers[k]);
    }
    free(ref), free(got);
}
