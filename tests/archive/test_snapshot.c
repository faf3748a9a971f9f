/* test_snapshot.c: whole-world snapshots — restore gives back the hash at capture, across
 * random mutations, groups, new components, out-of-memory, and a running schedule. */
#include "archive_fixture.h"
#include "weft/hierarchy.h"
#include "weft/snapshot.h"
#include "weft/system.h"

TestSuite(snapshot, .timeout = 120);

/* Random structural and value changes (one assertion: every change succeeded). */
static void mutate(fx_world_t *f, uint64_t *s, int steps) {
    fx_fail_t fl = {0};
    weft_result_t rc = WEFT_OK;
#define MUTATE_OK(call, what)                                                                     \
    FX_CHECK(&fl, (rc = (call)) == WEFT_OK, "mutate step %d of %d: %s 0x%llx: %s (%s)", k, steps, \
             what, (unsigned long long)e, weft_result_name(rc), weft_last_error())
    for (int k = 0; k < steps && !fl.failed; ++k) {
        uint64_t r = fx_rand(s);
        weft_world_stats_t st;
        weft_world_stats(f->w, &st);
        weft_entity_t e = weft_entity_from_index(f->w, (uint32_t)(r % (st.entity_slots + 1u)));
        switch (r >> 60) {
        case 0:
        case 1:
            (void)MUTATE_OK(weft_entity_create(f->w, &e), "create");
            break;
        case 2:
            if (e) {
                (void)MUTATE_OK(weft_entity_destroy(f->w, e), "destroy");
            }
            break;
        case 3:
        case 4:
            if (e) {
                pos3_t p = {(float)k, 2.0f, (float)(r & 255)};
                (void)MUTATE_OK(weft_component_set(f->w, e, f->c[FX_POS], &p), "set Position");
            }
            break;
        case 5:
            if (e && weft_component_has(f->w, e, f->c[FX_POS])) {
                (void)MUTATE_OK(weft_component_remove(f->w, e, f->c[FX_POS]), "remove Position");
            }
            break;
        case 6:
            if (e) {
                (void)weft_component_add(f->w, e, f->c[FX_TAG], NULL);
            }
            break;
        default:
            if (e) {
                pos3_t v = {1.0f, (float)k, 3.0f};
                (void)MUTATE_OK(weft_component_set(f->w, e, f->c[FX_VEL], &v), "set Velocity");
            }
            break;
        }
    }
#undef MUTATE_OK
    FX_ASSERT_NO_FAIL(&fl);
}

Test(snapshot, restore_returns_the_hash_at_capture_after_random_changes) {
    uint64_t seed = (uint64_t)time(NULL);
    fprintf(stderr, "snapshot seed %llu\n", (unsigned long long)seed);
    fx_world_t f;
    fx_init(&f);
    weft_group_t g;
    cr_assert_eq(
        weft_group_create(f.w, &(weft_group_desc_t){.components = {f.c[FX_POS], f.c[FX_VEL]}}, &g),
        WEFT_OK);
    fx_populate(&f, seed, 400);
    weft_snapshot_t *snap;
    cr_assert_eq(weft_snapshot_create(f.w, &snap), WEFT_OK);
    uint64_t s = seed | 1u;
    for (int round = 0; round < 20; ++round) {
        uint64_t h = weft_world_hash(f.w);
        uint32_t grouped = weft_group_rows(f.w, g);
        cr_assert_eq(weft_snapshot_capture(f.w, snap), WEFT_OK);
        cr_assert_gt(weft_snapshot_size(snap), 0);
        cr_assert_eq(weft_world_hash(f.w), h, "capture changed the world");
        mutate(&f, &s, 1 + (int)(fx_rand(&s) % 300));
        cr_assert_eq(weft_snapshot_restore(f.w, snap), WEFT_OK, "%s", weft_last_error());
        cr_assert_eq(weft_world_hash(f.w), h, "round %d (seed %llu)", round,
                     (unsigned long long)seed);
        cr_assert_eq(weft_group_rows(f.w, g), grouped);
        /* The world keeps working after a restore, and restoring twice is the same. */
        mutate(&f, &s, 50);
        cr_assert_eq(weft_snapshot_restore(f.w, snap), WEFT_OK);
        cr_assert_eq(weft_world_hash(f.w), h);
        mutate(&f, &s, 100); /* move on from the captured state */
    }
    weft_snapshot_destroy(snap);
    fx_fini(&f);
}

Test(snapshot, value_only_changes_are_rolled_back) {
    fx_world_t f;
    fx_populated(&f, 3, 200);
    weft_snapshot_t *snap = fx_captured(f.w);
    uint64_t h = weft_world_hash(f.w);
    uint32_t n = weft_component_rows(f.w, f.c[FX_POS]);
    for (uint32_t r = 0; r < n; ++r) {
        pos3_t *p = weft_component_row_mut(f.w, f.c[FX_POS], r);
        p->x += 1.0f;
    }
    cr_assert_neq(weft_world_hash(f.w), h);
    cr_assert_eq(weft_snapshot_restore(f.w, snap), WEFT_OK);
    cr_assert_eq(weft_world_hash(f.w), h);
    weft_snapshot_destroy(snap);
    fx_fini(&f);
}

Test(snapshot, restore_before_any_capture_or_after_a_new_group_fails_unchanged) {
    fx_world_t f;
    fx_populated(&f, 4, 100);
    weft_snapshot_t *snap;
    cr_assert_eq(weft_snapshot_create(f.w, &snap), WEFT_OK);
    uint64_t h = weft_world_hash(f.w);
    cr_assert_eq(weft_snapshot_restore(f.w, snap), WEFT_ESTATE);
    cr_assert_eq(weft_snapshot_capture(f.w, snap), WEFT_OK);
    weft_group_t g;
    cr_assert_eq(
        weft_group_create(f.w, &(weft_group_desc_t){.components = {f.c[FX_POS], f.c[FX_REF]}}, &g),
        WEFT_OK);
    uint64_t h2 = weft_world_hash(f.w);
    cr_assert_eq(weft_snapshot_restore(f.w, snap), WEFT_ESTATE);
    cr_assert(strstr(weft_last_error(), "groups") != NULL, "%s", weft_last_error());
    cr_assert_eq(weft_world_hash(f.w), h2);
    (void)h;
    weft_snapshot_destroy(snap);
    fx_fini(&f);
}

Test(snapshot, components_registered_after_capture_are_emptied) {
    fx_world_t f;
    fx_populated(&f, 5, 50);
    weft_snapshot_t *snap = fx_captured(f.w);
    weft_component_t extra;
    cr_assert_eq(
        weft_component_register(f.w, &(weft_component_desc_t){.name = "Extra", .size = 4}, &extra),
        WEFT_OK);
    weft_entity_t e;
    cr_assert_eq(weft_entity_create(f.w, &e), WEFT_OK);
    uint32_t v = 7;
    cr_assert_eq(weft_component_set(f.w, e, extra, &v), WEFT_OK);
    cr_assert_eq(weft_snapshot_restore(f.w, snap), WEFT_OK);
    cr_assert_eq(weft_component_rows(f.w, extra), 0);
    cr_assert(!weft_entity_is_alive(f.w, e));
    weft_snapshot_destroy(snap);
    fx_fini(&f);
}

/* ---- out of memory ------------------------------------------------------------------ */

/* The hierarchy store is not part of weft_world_hash(): fold the node order, parents, local
 * transforms, links and world matrices into one value so a failed restore that touched the
 * store is caught too. */
static uint64_t hier_fingerprint(weft_world_t *w) {
    uint32_t n = weft_hier_count(w);
    weft_entity_t *order = malloc(sizeof *order * (n ? n : 1u));
    cr_assert(order != NULL);
    weft_hier_order(w, order, n);
    uint64_t h = 0xcbf29ce484222325ull ^ n;
#define FOLD(p, size)                                         \
    do {                                                      \
        const unsigned char *b_ = (const unsigned char *)(p); \
        for (size_t i_ = 0; i_ < (size); ++i_)                \
            h = (h ^ b_[i_]) * 0x100000001b3ull;              \
    } while (0)
    for (uint32_t i = 0; i < n; ++i) {
        weft_entity_t p = weft_hier_parent(w, order[i]);
        FOLD(&order[i], sizeof order[i]);
        FOLD(&p, sizeof p);
        FOLD(weft_hier_local_read(w, order[i]), sizeof(weft_transform_t));
        FOLD(&weft_hier_link(w, order[i])->inverse_bind, sizeof(weft_mat4_t));
        FOLD(weft_hier_world(w, order[i]), sizeof(weft_mat4_t));
    }
#undef FOLD
    free(order);
    return h;
}

typedef struct oom_log {
    int calls;          /* logger calls so far */
    int enomem;         /* of which with WEFT_ENOMEM */
    weft_result_t code; /* code of the last call */
} oom_log_t;

static void count_log(weft_log_level_t level, weft_result_t code, const char *msg, const char *file,
                      int line, void *user) {
    (void)level, (void)msg, (void)file, (void)line;
    oom_log_t *l = user;
    l->calls++;
    l->enomem += code == WEFT_ENOMEM;
    l->code = code;
}

/* What a restore can allocate: pool arrays (weft__pool_reserve) only when a captured pool
 * holds more rows than the pool's capacity, a free list only when the captured one is longer
 * than the current capacity, and a replacement hierarchy store always (it is built aside and
 * swapped in). Capacities never shrink and a snapshot can only be captured from its own
 * world, so the first two cannot happen (entity-table pages are committed with vmem, not the
 * allocator); the hierarchy store is the path that must fail cleanly, so the world has one. */
Test(snapshot, out_of_memory_in_capture_or_restore_changes_nothing) {
    fx_counting_t c = {0};
    oom_log_t log = {0};
    fx_world_t f;
    fx_init_desc(&f, &(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE,
                                          .allocator = fx_counting_allocator(&c),
                                          .logger = {.fn = count_log, .user = &log}});
    cr_assert_eq(weft_hier_components(f.w, NULL), WEFT_OK);
    fx_populate(&f, 6, 100);
    /* A forest of 60 nodes: each node i > 0 hangs under node (i - 1) / 3 unless i % 7 == 0. */
    weft_entity_t nodes[60];
    cr_assert_eq(weft_entity_create_n(f.w, 60, nodes), WEFT_OK);
    fx_fail_t fl = {0};
    for (uint32_t i = 0; i < 60 && !fl.failed; ++i) {
        weft_transform_t t = weft_transform_identity();
        t.position.x = (float)i;
        weft_result_t r = weft_hier_add(f.w, nodes[i], &t);
        if (r == WEFT_OK && i > 0 && i % 7 != 0) {
            r = weft_hier_attach(f.w, nodes[i], nodes[(i - 1u) / 3u]);
        }
        (void)FX_CHECK(&fl, r == WEFT_OK, "node %u: %s (%s)", i, weft_result_name(r),
                       weft_last_error());
    }
    FX_ASSERT_NO_FAIL(&fl);
    cr_assert_eq(weft_hier_update(f.w, WEFT_HIER_PASS_SEQUENTIAL), WEFT_OK);
    weft_snapshot_t *snap;
    cr_assert_eq(weft_snapshot_create(f.w, &snap), WEFT_OK);
    c.count = 0;
    c.fail_at = 1;
    log = (oom_log_t){0};
    cr_assert_eq(weft_snapshot_capture(f.w, snap), WEFT_ENOMEM);
    c.fail_at = 0;
    cr_assert_eq(log.enomem, 1, "capture failure logged %d times", log.enomem);
    cr_assert_eq(weft_snapshot_size(snap), 0);
    cr_assert_eq(weft_snapshot_capture(f.w, snap), WEFT_OK);
    uint64_t h = weft_world_hash(f.w);
    uint64_t hh = hier_fingerprint(f.w);
    /* Replace the world's contents: every entity (and so every node) destroyed, a few new
     * entities and a different little hierarchy. */
    weft_entity_t es[1024];
    uint32_t n = fx_alive(&f, es, 1024);
    cr_assert_eq(weft_entity_destroy_n(f.w, es, n), WEFT_OK);
    fx_populate(&f, 7, 10);
    n = fx_alive(&f, es, 1024);
    cr_assert_geq(n, 2);
    cr_assert_eq(weft_hier_add(f.w, es[0], NULL), WEFT_OK);
    cr_assert_eq(weft_hier_add(f.w, es[1], NULL), WEFT_OK);
    cr_assert_eq(weft_hier_attach(f.w, es[1], es[0]), WEFT_OK);
    long failing = 0, k = 1;
    for (;; ++k) {
        uint64_t before = weft_world_hash(f.w);
        uint64_t hier_before = hier_fingerprint(f.w);
        log = (oom_log_t){0};
        c.count = 0;
        c.fail_at = k;
        weft_result_t r = weft_snapshot_restore(f.w, snap);
        c.fail_at = 0;
        if (r == WEFT_OK) {
            break;
        }
        failing++;
        if (!FX_CHECK(&fl, r == WEFT_ENOMEM, "k=%ld: %s: %s", k, weft_result_name(r),
                      weft_last_error()) ||
            !FX_CHECK(&fl, weft_world_hash(f.w) == before, "k=%ld changed the world hash", k) ||
            !FX_CHECK(&fl, hier_fingerprint(f.w) == hier_before, "k=%ld changed the hierarchy",
                      k) ||
            !FX_CHECK(&fl, log.calls == 1 && log.code == WEFT_ENOMEM,
                      "k=%ld: %d logger calls, last %s", k, log.calls,
                      weft_result_name(log.code)) ||
            !FX_CHECK(&fl, k < 1000, "k=%ld: still failing", k)) {
            break;
        }
    }
    FX_ASSERT_NO_FAIL(&fl);
    cr_assert_gt(failing, 0, "the restore never allocated: no failure was injected");
    fprintf(stderr, "snapshot restore: %ld injected failures before success\n", failing);
    cr_assert_eq(weft_world_hash(f.w), h);
    cr_assert_eq(hier_fingerprint(f.w), hh);
    cr_assert_eq(weft_hier_count(f.w), 60);
    weft_snapshot_destroy(snap);
    fx_fini(&f);
    cr_assert_eq(c.live, 0, "leak: %zu bytes", c.live);
}

/* ---- with a running schedule ----------------------------------------------------------- */

static void integrate(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; ++i) {
            pos3_t *p = weft_iter_get(it, 0, i);
            const pos3_t *v = weft_iter_get(it, 1, i);
            p->x += v->x * ctx->dt;
            p->y += v->y * ctx->dt;
            p->z += v->z * ctx->dt;
        }
    }
}

static void spawner(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    weft_entity_t e = weft_cmd_create(ctx->cmd);
    weft_cmd_add(ctx->cmd, e, *(const weft_component_t *)ctx->user);
}

Test(snapshot, rollback_between_frames_of_a_running_schedule_is_exact) {
    fx_world_t f;
    fx_init_desc(&f, &(weft_world_desc_t){.worker_count = 4});
    fx_populate(&f, 8, 3000);
    cr_assert_eq(
        weft_system_register(
            f.w,
            &(weft_system_desc_t){.name = "integrate",
                                  .fn = integrate,
                                  .terms = {{.component = f.c[FX_POS], .access = WEFT_ACCESS_WRITE},
                                            {.component = f.c[FX_VEL], .access = WEFT_ACCESS_READ}},
                                  .parallel = true,
                                  .chunk_size = 256},
            NULL),
        WEFT_OK);
    cr_assert_eq(weft_system_register(
                     f.w,
                     &(weft_system_desc_t){.name = "spawner", .fn = spawner, .user = &f.c[FX_TAG]},
                     NULL),
                 WEFT_OK);
    for (int i = 0; i < 3; ++i) {
        cr_assert_eq(weft_world_progress(f.w, 0.5f), WEFT_OK);
    }
    weft_snapshot_t *snap = fx_captured(f.w);
    uint64_t at_capture = weft_world_hash(f.w);
    for (int i = 0; i < 5; ++i) {
        cr_assert_eq(weft_world_progress(f.w, 0.5f), WEFT_OK);
    }
    uint64_t after_five = weft_world_hash(f.w);
    cr_assert_neq(after_five, at_capture);
    cr_assert_eq(weft_snapshot_restore(f.w, snap), WEFT_OK);
    cr_assert_eq(weft_world_hash(f.w), at_capture);
    /* Replaying the same frames from the restored state gives the same world. */
    for (int i = 0; i < 5; ++i) {
        cr_assert_eq(weft_world_progress(f.w, 0.5f), WEFT_OK);
    }
    cr_assert_eq(weft_world_hash(f.w), after_five);
    weft_snapshot_destroy(snap);
    fx_fini(&f);
}
