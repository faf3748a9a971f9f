/* test_module.c: a user module (weft/module.h) has the standing of the built-in hierarchy: a
 * tiny spatial index (entity -> grid cell) round-trips through the world hash, its breakdown,
 * snapshots and archives, is counted in heap_bytes and shut down with the world. */
#include <criterion/criterion.h>
#include <string.h>

#include "archive_fixture.h"
#include "weft/module.h"

/* ---- the test module: a grid index ------------------------------------------------ */

typedef struct cell {
    weft_entity_t e;
    int32_t cx, cy;
} cell_t;

typedef struct grid {
    cell_t *cells; /* sorted by entity, from weft_world_alloc */
    uint32_t n, cap;
    int shutdowns;                    /* shutdown calls seen (the struct outlives the world) */
    weft_entity_t tied_from, tied_to; /* archive_mark: saving `from` saves `to` too */
} grid_t;

static void grid_free(weft_world_t *w, grid_t *g) {
    weft_world_free(w, g->cells, (size_t)g->cap * sizeof(cell_t));
    g->cells = NULL;
    g->n = g->cap = 0;
}

static void grid_shutdown(weft_world_t *w, void *user) {
    grid_t *g = user;
    grid_free(w, g);
    g->shutdowns++;
}

/* Set e's cell (insert sorted). */
static void grid_put(weft_world_t *w, grid_t *g, weft_entity_t e, int32_t cx, int32_t cy) {
    uint32_t i = 0;
    while (i < g->n && g->cells[i].e < e) {
        i++;
    }
    if (i < g->n && g->cells[i].e == e) {
        g->cells[i].cx = cx;
        g->cells[i].cy = cy;
        return;
    }
    if (g->n == g->cap) {
        uint32_t cap = g->cap ? 2 * g->cap : 4;
        cell_t *c = weft_world_alloc(w, cap * sizeof(cell_t), _Alignof(cell_t));
        cr_assert(c != NULL);
        if (g->n) {
            memcpy(c, g->cells, g->n * sizeof(cell_t));
        }
        weft_world_free(w, g->cells, (size_t)g->cap * sizeof(cell_t));
        g->cells = c;
        g->cap = cap;
    }
    memmove(&g->cells[i + 1], &g->cells[i], (g->n - i) * sizeof(cell_t));
    g->cells[i] = (cell_t){e, cx, cy};
    g->n++;
}

static uint64_t grid_hash(const weft_world_t *w, void *user, uint64_t h) {
    (void)w;
    const grid_t *g = user;
    return weft_hash_mix(h, g->cells, g->n * sizeof(cell_t));
}

static size_t grid_snap_size(const weft_world_t *w, void *user) {
    (void)w;
    return ((grid_t *)user)->n * sizeof(cell_t);
}

static void grid_snap_capture(const weft_world_t *w, void *user, void *dst, size_t size) {
    (void)w;
    memcpy(dst, ((grid_t *)user)->cells, size);
}

typedef struct staged {
    cell_t *cells;
    uint32_t n;
} staged_t;

static weft_result_t grid_snap_prepare(weft_world_t *w, void *user, const void *src, size_t size,
                                       void **staged) {
    (void)user;
    staged_t *s = weft_world_alloc(w, sizeof *s, _Alignof(staged_t));
    cell_t *c = weft_world_alloc(w, size + sizeof(cell_t), _Alignof(cell_t));
    if (s == NULL || c == NULL) {
        weft_world_free(w, s, sizeof *s);
        weft_world_free(w, c, size + sizeof(cell_t));
        return WEFT_ENOMEM;
    }
    if (size) {
        memcpy(c, src, size);
    }
    *s = (staged_t){c, (uint32_t)(size / sizeof(cell_t))};
    *staged = s;
    return WEFT_OK;
}

static void adopt(weft_world_t *w, grid_t *g, staged_t *s) {
    grid_free(w, g);
    g->cells = s->cells;
    g->n = s->n;
    g->cap = s->n + 1;
    weft_world_free(w, s, sizeof *s);
}

static void grid_snap_commit(weft_world_t *w, void *user, const void *src, size_t size,
                             void *staged) {
    (void)src;
    (void)size;
    adopt(w, user, staged);
}

static void grid_abort(weft_world_t *w, void *user, void *staged) {
    (void)user;
    staged_t *s = staged;
    if (s) {
        weft_world_free(w, s->cells, (size_t)(s->n + 1) * sizeof(cell_t));
        weft_world_free(w, s, sizeof *s);
    }
}

static weft_result_t grid_mark(weft_world_t *w, void *user, weft_module_save_t *ctx) {
    (void)w;
    grid_t *g = user;
    if (g->tied_from && weft_module_save_local(ctx, g->tied_from) != 0) {
        return weft_module_save_include(ctx, g->tied_to);
    }
    return WEFT_OK;
}

/* Saved: per cell of a saved entity {u32 local id, i32 cx, i32 cy}. */
static uint64_t grid_arc_size(weft_world_t *w, void *user, const weft_module_save_t *ctx,
                              uint64_t *items) {
    (void)w;
    const grid_t *g = user;
    uint64_t n = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        n += weft_module_save_local(ctx, g->cells[i].e) != 0;
    }
    *items = n;
    return n * 12u;
}

static weft_result_t grid_arc_save(weft_world_t *w, void *user, weft_module_save_t *ctx) {
    (void)w;
    const grid_t *g = user;
    for (uint32_t i = 0; i < g->n; i++) {
        uint32_t local = weft_module_save_local(ctx, g->cells[i].e);
        if (local != 0) {
            int32_t rec[3] = {(int32_t)(local - 1u), g->cells[i].cx, g->cells[i].cy};
            weft_module_save_put(ctx, rec, sizeof rec);
        }
    }
    return WEFT_OK;
}

static weft_result_t grid_arc_prepare(weft_world_t *w, void *user, const weft_module_load_t *ctx,
                                      const void *src, size_t size, uint32_t version,
                                      void **staged) {
    grid_t *g = user;
    *staged = NULL;
    if (src == NULL) {
        return WEFT_OK;
    }
    if (version != 1 || size % 12u != 0) {
        return WEFT_ECORRUPT;
    }
    const uint32_t add = (uint32_t)(size / 12u);
    staged_t *s = weft_world_alloc(w, sizeof *s, _Alignof(staged_t));
    cell_t *c = weft_world_alloc(w, (size_t)(g->n + add + 1) * sizeof(cell_t), _Alignof(cell_t));
    if (s == NULL || c == NULL) {
        weft_world_free(w, s, sizeof *s);
        weft_world_free(w, c, (size_t)(g->n + add + 1) * sizeof(cell_t));
        return WEFT_ENOMEM;
    }
    /* Loaded entities are new (or kept ids that were free): append, then sort by entity. */
    if (g->n) {
        memcpy(c, g->cells, g->n * sizeof(cell_t));
    }
    const unsigned char *p = src;
    for (uint32_t k = 0; k < add; k++) {
        int32_t rec[3];
        memcpy(rec, p + 12u * k, sizeof rec);
        c[g->n + k] = (cell_t){weft_module_load_entity(ctx, (uint32_t)rec[0]), rec[1], rec[2]};
        if (c[g->n + k].e == 0) {
            weft_world_free(w, s, sizeof *s);
            weft_world_free(w, c, (size_t)(g->n + add + 1) * sizeof(cell_t));
            return WEFT_ECORRUPT;
        }
    }
    for (uint32_t i = 1; i < g->n + add; i++) { /* insertion sort: small */
        for (uint32_t j = i; j > 0 && c[j - 1].e > c[j].e; j--) {
            cell_t t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
    }
    *s = (staged_t){c, g->n + add};
    *staged = s;
    return WEFT_OK;
}

static void grid_arc_commit(weft_world_t *w, void *user, const weft_module_load_t *ctx,
                            void *staged) {
    (void)ctx;
    if (staged) {
        adopt(w, user, staged);
    }
}

static weft_module_desc_t grid_desc(grid_t *g) {
    return (weft_module_desc_t){.name = "test.grid",
                                .user = g,
                                .shutdown = grid_shutdown,
                                .hash = grid_hash,
                                .snap_size = grid_snap_size,
                                .snap_capture = grid_snap_capture,
                                .snap_prepare = grid_snap_prepare,
                                .snap_commit = grid_snap_commit,
                                .snap_abort = grid_abort,
                                .archive_mark = grid_mark,
                                .archive_size = grid_arc_size,
                                .archive_save = grid_arc_save,
                                .archive_prepare = grid_arc_prepare,
                                .archive_commit = grid_arc_commit,
                                .archive_abort = grid_abort};
}

/* A world with the fixture components, three entities and the grid registered. */
typedef struct gworld {
    fx_world_t f;
    grid_t g;
    weft_entity_t e[3];
} gworld_t;

static void gworld_init(gworld_t *gw) {
    memset(gw, 0, sizeof *gw);
    fx_init(&gw->f);
    weft_module_desc_t d = grid_desc(&gw->g);
    cr_assert_eq(weft_module_register(gw->f.w, &d), WEFT_OK, "%s", weft_last_error());
    cr_assert_eq(weft_entity_create_n(gw->f.w, 3, gw->e), WEFT_OK);
    for (int i = 0; i < 3; i++) {
        pos3_t p = {(float)i, 0, 0};
        cr_assert_eq(weft_component_set(gw->f.w, gw->e[i], gw->f.c[FX_POS], &p), WEFT_OK);
        grid_put(gw->f.w, &gw->g, gw->e[i], i, -i);
    }
}

static weft_membuf_t save_mem(weft_world_t *w, const weft_archive_save_desc_t *d) {
    weft_membuf_t buf = {0};
    weft_writer_t wr = weft_membuf_writer(&buf);
    cr_assert_eq(weft_archive_save(w, d, &wr), WEFT_OK, "%s", weft_last_error());
    return buf;
}

/* ---- tests ------------------------------------------------------------------------- */

Test(module, a_user_module_is_in_the_world_hash_and_its_breakdown) {
    gworld_t gw;
    gworld_init(&gw);
    const uint64_t h0 = weft_world_hash(gw.f.w);
    grid_put(gw.f.w, &gw.g, gw.e[1], 7, 7);
    cr_assert_neq(weft_world_hash(gw.f.w), h0, "a changed cell changes the world hash");
    grid_put(gw.f.w, &gw.g, gw.e[1], 1, -1);
    cr_assert_eq(weft_world_hash(gw.f.w), h0, "undone, the hash returns");
    weft_hash_part_t parts[16];
    uint32_t n = 0;
    cr_assert_eq(weft_world_hash_parts(gw.f.w, parts, 16, &n), WEFT_OK);
    cr_assert_leq(n, 16u);
    bool found = false;
    for (uint32_t i = 0; i < n; i++) {
        found |= parts[i].kind == WEFT_HASH_PART_MODULE && strcmp(parts[i].name, "test.grid") == 0;
    }
    cr_assert(found, "the module has a part of its own");
    fx_fini(&gw.f);
    cr_assert_eq(gw.g.shutdowns, 1, "destroy shuts the module down");
    cr_assert_null(gw.g.cells);
}

Test(module, snapshot_restore_brings_a_user_module_back) {
    gworld_t gw;
    gworld_init(&gw);
    weft_snapshot_t *snap;
    cr_assert_eq(weft_snapshot_create(gw.f.w, &snap), WEFT_OK);
    cr_assert_eq(weft_snapshot_capture(gw.f.w, snap), WEFT_OK);
    const uint64_t h0 = weft_world_hash(gw.f.w);
    grid_put(gw.f.w, &gw.g, gw.e[2], 40, 41);
    weft_entity_t extra;
    cr_assert_eq(weft_entity_create(gw.f.w, &extra), WEFT_OK);
    grid_put(gw.f.w, &gw.g, extra, 5, 5);
    cr_assert_eq(gw.g.n, 4u);
    cr_assert_eq(weft_snapshot_restore(gw.f.w, snap), WEFT_OK, "%s", weft_last_error());
    cr_assert_eq(weft_world_hash(gw.f.w), h0);
    cr_assert_eq(gw.g.n, 3u);
    cr_assert_eq(gw.g.cells[2].cx, 2);
    weft_snapshot_destroy(snap);
    fx_fini(&gw.f);
}

Test(module, an_archive_carries_a_user_module_to_another_world) {
    gworld_t a, b;
    gworld_init(&a);
    weft_membuf_t buf = save_mem(a.f.w, NULL);
    weft_archive_info_t info;
    cr_assert_eq(weft_archive_inspect(buf.data, buf.size, &info), WEFT_OK);
    cr_assert_eq(info.format_version, 3u);

    /* A fresh world with the same registrations, kept ids: the same world, hash included. */
    memset(&b, 0, sizeof b);
    fx_init(&b.f);
    weft_module_desc_t d = grid_desc(&b.g);
    cr_assert_eq(weft_module_register(b.f.w, &d), WEFT_OK);
    cr_assert_eq(weft_archive_load_memory(b.f.w, buf.data, buf.size,
                                          &(weft_archive_load_desc_t){.keep_ids = true}, NULL),
                 WEFT_OK, "%s", weft_last_error());
    cr_assert_eq(b.g.n, 3u);
    cr_assert_eq(weft_world_hash(b.f.w), weft_world_hash(a.f.w));

    /* Loading again (fresh ids) appends three cells for three new entities. */
    weft_entity_t out[3];
    cr_assert_eq(weft_archive_load_memory(
                     b.f.w, buf.data, buf.size,
                     &(weft_archive_load_desc_t){.out_entities = out, .out_capacity = 3}, NULL),
                 WEFT_OK, "%s", weft_last_error());
    cr_assert_eq(b.g.n, 6u);
    for (uint32_t i = 0; i < 3; i++) {
        cr_assert_eq(b.g.cells[3 + i].e, out[i], "cell %u maps to the new entity", i);
        cr_assert_eq(b.g.cells[3 + i].cx, (int32_t)i);
    }
    weft_membuf_free(&buf);
    fx_fini(&b.f);
    fx_fini(&a.f);
}

Test(module, an_archive_of_a_module_the_world_lacks_is_refused_or_skipped) {
    gworld_t a;
    gworld_init(&a);
    weft_membuf_t buf = save_mem(a.f.w, NULL);
    fx_world_t b;
    fx_init(&b);
    const uint64_t h = weft_world_hash(b.w);
    cr_assert_eq(weft_archive_load_memory(b.w, buf.data, buf.size, NULL, NULL), WEFT_EMISMATCH);
    cr_assert(strstr(weft_last_error(), "test.grid") != NULL, "%s", weft_last_error());
    cr_assert_eq(weft_world_hash(b.w), h, "a refused load changes nothing");
    cr_assert_eq(weft_archive_load_memory(b.w, buf.data, buf.size,
                                          &(weft_archive_load_desc_t){.skip_unknown = true}, NULL),
                 WEFT_OK);
    cr_assert_eq(weft_entity_count(b.w), 3u);
    weft_membuf_free(&buf);
    fx_fini(&b);
    fx_fini(&a.f);
}

Test(module, a_partial_save_takes_what_the_module_ties_to_it) {
    gworld_t a;
    gworld_init(&a);
    a.g.tied_from = a.e[0];
    a.g.tied_to = a.e[2];
    weft_membuf_t buf =
        save_mem(a.f.w, &(weft_archive_save_desc_t){
                            .entities = &a.e[0], .entity_count = 1, .with_descendants = true});
    weft_archive_info_t info;
    cr_assert_eq(weft_archive_inspect(buf.data, buf.size, &info), WEFT_OK);
    cr_assert_eq(info.entity_count, 2u, "the tied entity is saved too");
    weft_membuf_free(&buf);
    fx_fini(&a.f);
}

/* A module whose archive_size lies makes the save fail, not the file lie. */
static uint64_t lying_size(weft_world_t *w, void *user, const weft_module_save_t *ctx,
                           uint64_t *items) {
    return grid_arc_size(w, user, ctx, items) + 4u;
}

Test(module, a_module_writing_other_than_it_declared_fails_the_save) {
    gworld_t a;
    gworld_init(&a);
    fx_world_t b;
    fx_init(&b);
    grid_t g2 = {0};
    weft_module_desc_t d = grid_desc(&g2);
    d.name = "test.liar";
    d.archive_size = lying_size;
    cr_assert_eq(weft_module_register(a.f.w, &d), WEFT_OK);
    grid_put(a.f.w, &g2, a.e[0], 1, 1);
    weft_membuf_t buf = {0};
    weft_writer_t wr = weft_membuf_writer(&buf);
    cr_assert_eq(weft_archive_save(a.f.w, NULL, &wr), WEFT_EINVAL);
    cr_assert(strstr(weft_last_error(), "test.liar") != NULL, "%s", weft_last_error());
    weft_membuf_free(&buf);
    fx_fini(&b);
    fx_fini(&a.f);
}

Test(module, registration_refuses_bad_names_twins_and_too_many) {
    fx_world_t f;
    fx_init(&f);
    grid_t g = {0};
    weft_module_desc_t d = grid_desc(&g);
    d.shutdown = NULL;
    d.name = "";
    cr_assert_eq(weft_module_register(f.w, &d), WEFT_EINVAL);
    d.name = "m0";
    cr_assert_eq(weft_module_register(f.w, &d), WEFT_OK);
    cr_assert_eq(weft_module_register(f.w, &d), WEFT_EEXIST);
    cr_assert_eq(weft_module_find(f.w, "m0"), &g);
    cr_assert_null(weft_module_find(f.w, "nope"));
    char names[WEFT_MODULE_MAX][8];
    weft_result_t r = WEFT_OK;
    for (uint32_t i = 1; i <= WEFT_MODULE_MAX && r == WEFT_OK; i++) {
        snprintf(names[i - 1], sizeof names[0], "m%u", i);
        d.name = names[i - 1];
        r = weft_module_register(f.w, &d);
    }
    cr_assert_eq(r, WEFT_ECAPACITY);
    fx_fini(&f);
}

Test(module, heap_bytes_counts_what_a_module_allocates) {
    gworld_t gw;
    gworld_init(&gw);
    weft_world_stats_t s0, s1;
    weft_world_stats(gw.f.w, &s0);
    for (int i = 0; i < 100; i++) { /* grows the cell array through weft_world_alloc */
        weft_entity_t e;
        cr_assert_eq(weft_entity_create(gw.f.w, &e), WEFT_OK);
        grid_put(gw.f.w, &gw.g, e, i, i);
    }
    weft_world_stats(gw.f.w, &s1);
    cr_assert_geq(s1.heap_bytes - s0.heap_bytes, (size_t)(gw.g.cap - 4) * sizeof(cell_t));
    fx_fini(&gw.f);
}

/* ---- heap_bytes covers every allocation through the hook ---------------------------- */

#include <stdatomic.h>
#include <stdlib.h>

#include "weft/command.h"
#include "weft/hierarchy.h"
#include "weft/system.h"
#include "weft/trace.h"

typedef struct tracker {
    atomic_size_t live; /* bytes the hook holds now (workers allocate too) */
} tracker_t;

static void *tracked_alloc(size_t size, size_t align, void *user) {
    void *p = aligned_alloc(align < sizeof(void *) ? sizeof(void *) : align,
                            (size + align - 1) / align * align);
    if (p) {
        atomic_fetch_add(&((tracker_t *)user)->live, size);
    }
    return p;
}

static void tracked_free(void *p, size_t size, void *user) {
    atomic_fetch_sub(&((tracker_t *)user)->live, size);
    free(p);
}

/* Creates an entity with a position and destroys an older one each run, through commands. */
static void churn(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    weft_component_t pos = *(const weft_component_t *)ctx->user;
    for (int i = 0; i < 64; i++) {
        weft_entity_t e = weft_cmd_create(ctx->cmd);
        pos3_t p = {(float)i, 1, 2};
        (void)weft_cmd_set(ctx->cmd, e, pos, &p);
    }
}

static void expect_heap_is_the_hook(weft_world_t *w, tracker_t *t, const char *when) {
    weft_world_stats_t s;
    weft_world_stats(w, &s);
    cr_assert_eq(s.heap_bytes, atomic_load(&t->live), "%s: heap_bytes %zu, the hook holds %zu",
                 when, s.heap_bytes, atomic_load(&t->live));
}

Test(module, heap_bytes_is_every_byte_the_world_holds_through_its_hook) {
    tracker_t t = {0};
    fx_world_t f;
    fx_init_desc(&f, &(weft_world_desc_t){.worker_count = 2,
                                          .allocator = {tracked_alloc, tracked_free, &t}});
    expect_heap_is_the_hook(f.w, &t, "created");
    grid_t g = {0};
    weft_module_desc_t d = grid_desc(&g);
    cr_assert_eq(weft_module_register(f.w, &d), WEFT_OK);
    cr_assert_eq(weft_hier_components(f.w, NULL), WEFT_OK);
    weft_entity_t e[16];
    cr_assert_eq(weft_entity_create_n(f.w, 16, e), WEFT_OK);
    for (int i = 0; i < 16; i++) {
        cr_assert_eq(weft_hier_add(f.w, e[i], NULL), WEFT_OK);
        grid_put(f.w, &g, e[i], i, i);
        if (i > 0) {
            cr_assert_eq(weft_hier_attach(f.w, e[i], e[i / 2]), WEFT_OK);
        }
    }
    expect_heap_is_the_hook(f.w, &t, "hierarchy and module");
    weft_system_t sys;
    cr_assert_eq(
        weft_system_register(
            f.w, &(weft_system_desc_t){.name = "churn", .fn = churn, .user = &f.c[FX_POS]}, &sys),
        WEFT_OK, "%s", weft_last_error());
    cr_assert_eq(weft_trace_enable(f.w, NULL), WEFT_OK);
    for (int frame = 0; frame < 20; frame++) {
        cr_assert_eq(weft_world_progress(f.w, 0.016f), WEFT_OK, "%s", weft_last_error());
    }
    expect_heap_is_the_hook(f.w, &t, "after frames (scheduler, commands, trace, jobs)");
    fx_fini(&f);
    cr_assert_eq(atomic_load(&t.live), 0u, "destroy frees everything");
}

/* ---- the hash breakdown recorded per frame ----------------------------------------- */

Test(module, a_hash_log_names_the_first_frame_and_part_where_two_runs_differ) {
    gworld_t a, b;
    gworld_init(&a);
    gworld_init(&b);
    enum { FRAMES = 4, PARTS = 16 };
    weft_hash_part_t pa[FRAMES * PARTS], pb[FRAMES * PARTS];
    uint32_t ca[FRAMES], cb[FRAMES];
    weft_hash_log_t la = {pa, ca, PARTS, FRAMES, 0}, lb = {pb, cb, PARTS, FRAMES, 0};
    for (int f = 0; f < 10; f++) { /* the ring keeps frames 6..9 */
        for (int k = 0; k < 3; k++) {
            grid_put(a.f.w, &a.g, a.e[k], f + k, 0);
            grid_put(b.f.w, &b.g, b.e[k], f + k, f == 8 && k == 1 ? 99 : 0);
        }
        cr_assert_eq(weft_hash_log_record(a.f.w, &la), WEFT_OK);
        cr_assert_eq(weft_hash_log_record(b.f.w, &lb), WEFT_OK);
    }
    uint64_t frame = 0;
    uint32_t part = 0;
    cr_assert(weft_hash_log_diverged(&la, &lb, &frame, &part));
    cr_assert_eq(frame, 8u);
    cr_assert_eq(pb[(8 % FRAMES) * PARTS + part].kind, WEFT_HASH_PART_MODULE);
    cr_assert_str_eq(pb[(8 % FRAMES) * PARTS + part].name, "test.grid");
    cr_assert_not(weft_hash_log_diverged(&la, &la, NULL, NULL));
    fx_fini(&b.f);
    fx_fini(&a.f);
}

/* ---- hostile module sections --------------------------------------------------------- */

/* Offset of the payload of the last section (the module's MODL section here). */
static size_t last_payload(const weft_membuf_t *buf) {
    uint32_t sections;
    memcpy(&sections, buf->data + 16, 4);
    size_t at = 32, payload = 0;
    for (uint32_t i = 0; i < sections; i++) {
        uint64_t size;
        memcpy(&size, buf->data + at + 8, 8);
        payload = at + 32;
        at = payload + size + 8;
    }
    cr_assert_eq(at, buf->size);
    return payload;
}

Test(module, a_damaged_module_section_is_corrupt_and_changes_nothing) {
    gworld_t a, b;
    gworld_init(&a);
    weft_membuf_t buf = save_mem(a.f.w, NULL);
    const size_t p = last_payload(&buf);
    cr_assert_eq(memcmp(buf.data + p - 32, "MODL", 4), 0);
    gworld_init(&b);
    const uint64_t h = weft_world_hash(b.f.w);
    /* name length 0, past the section, byte count past the section, a duplicate section's
     * name (renamed to an unknown module: a mismatch) */
    const struct {
        size_t at;
        uint32_t value;
        weft_result_t want;
    } cases[] = {{p, 0, WEFT_ECORRUPT},
                 {p, 1000, WEFT_ECORRUPT},
                 {p + 8, 100000, WEFT_ECORRUPT},
                 {p + 16, 'x', WEFT_EMISMATCH}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        unsigned char *m = malloc(buf.size);
        cr_assert(m != NULL);
        memcpy(m, buf.data, buf.size);
        if (cases[k].at == p + 16) {
            m[p + 16] = (unsigned char)cases[k].value; /* first byte of the name */
        } else {
            memcpy(m + cases[k].at, &cases[k].value, 4);
        }
        weft_result_t r = weft_archive_load_memory(
            b.f.w, m, buf.size, &(weft_archive_load_desc_t){.skip_checksums = true}, NULL);
        cr_assert_eq(r, cases[k].want, "case %zu: %s", k, weft_last_error());
        cr_assert_eq(weft_world_hash(b.f.w), h, "case %zu changed the world", k);
        free(m);
    }
    weft_membuf_free(&buf);
    fx_fini(&b.f);
    fx_fini(&a.f);
}
