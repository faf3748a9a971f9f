/* test_fault_focus.c: small fault-injection tests, one per problem the fault sweep
 * (test_fault.c) found, so each can be routed to its module and fixed on its own. Each loops
 * the failing allocation over every allocation of one call, so it does not depend on the
 * module's exact allocation order. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "weft/hierarchy.h"
#include "weft_test.h"

TestSuite(reliability_fault_focus, .timeout = 120);

typedef struct rig {
    wt_fault_alloc_t fa;
    wt_log_count_t log;
    weft_world_t *w;
} rig_t;

static void rig_world(rig_t *r) {
    memset(r, 0, sizeof *r);
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE,
                           .worker_count = 1,
                           .allocator = wt_fault_allocator(&r->fa),
                           .logger = wt_log_counter(&r->log)};
    cr_assert(eq(int, weft_world_create(&d, &r->w), WEFT_OK));
}

static void rig_fini(rig_t *r) {
    weft_world_destroy(r->w);
    cr_expect(eq(i64, wt_fault_live_bytes(&r->fa), 0), "leaked %lld bytes",
              (long long)wt_fault_live_bytes(&r->fa));
}

/* src/core/world.c weft_world_create: when weft__sig_init fails after its first allocation, the
 * failure path (fail_entity) does not call weft__sig_fini, so the signature array leaks. */
Test(reliability_fault_focus, world_create_leaks_nothing_when_an_allocation_fails) {
    for (uint64_t k = 1; k <= 16; k++) {
        wt_fault_alloc_t fa;
        wt_fault_init(&fa);
        wt_fault_arm(&fa, k, 1);
        weft_world_t *w = NULL;
        weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE,
                               .allocator = wt_fault_allocator(&fa)};
        weft_result_t r = weft_world_create(&d, &w);
        if (r == WEFT_OK) {
            weft_world_destroy(w);
        } else {
            cr_expect(w == NULL);
        }
        cr_expect(eq(i64, wt_fault_live_bytes(&fa), 0),
                  "allocation %llu failed: weft_world_create returned %s and left %lld bytes",
                  (unsigned long long)k, weft_result_name(r), (long long)wt_fault_live_bytes(&fa));
    }
}

/* src/hier/hierarchy.c weft_hier_components: all or nothing. When any of its allocations fails
 * (the hierarchy state or one of the four registrations), it reports through the world's
 * logger, registers nothing, leaves the world's hash unchanged and leaks nothing; called
 * again without faults, it succeeds. */
Test(reliability_fault_focus, hier_components_registers_nothing_when_it_fails) {
    uint32_t failures = 0;
    for (uint64_t k = 1; k <= 16; k++) {
        rig_t r;
        rig_world(&r);
        uint32_t before = weft_component_type_count(r.w);
        uint64_t hash = weft_world_hash(r.w);
        uint64_t logged = r.log.errors;
        wt_fault_arm(&r.fa, k, 1);
        weft_hier_components_t hc;
        weft_result_t got = weft_hier_components(r.w, &hc);
        wt_fault_arm(&r.fa, 0, 0);
        if (got != WEFT_OK) {
            failures++;
            cr_expect(eq(u32, weft_component_type_count(r.w), before),
                      "allocation %llu failed (%s) but %u components were registered",
                      (unsigned long long)k, weft_last_error(),
                      weft_component_type_count(r.w) - before);
            cr_expect(eq(u64, weft_world_hash(r.w), hash),
                      "allocation %llu failed (%s) and the world's hash changed",
                      (unsigned long long)k, weft_last_error());
            cr_expect(r.log.errors > logged,
                      "allocation %llu failed (%s) but the logger hook was not called",
                      (unsigned long long)k, weft_last_error());
            cr_expect(eq(int, weft_hier_components(r.w, &hc), WEFT_OK),
                      "after allocation %llu failed, a retry without faults failed",
                      (unsigned long long)k);
        }
        rig_fini(&r);
    }
    cr_expect(failures > 0, "no allocation of weft_hier_components could be failed");
}

/* src/hier/hierarchy.c weft_hier_add on a world without hierarchy: its implicit set-up (state and
 * components) is part of the call, so a failure at any of its allocations leaves the world's
 * digest, component count and hash as they were, and leaks nothing. */
Test(reliability_fault_focus, first_hier_add_that_fails_leaves_the_world_unchanged) {
    uint32_t failures = 0;
    for (uint64_t k = 1; k <= 24; k++) {
        rig_t r;
        rig_world(&r);
        weft_entity_t e;
        cr_assert(eq(int, weft_entity_create(r.w, &e), WEFT_OK));
        uint64_t before = wt_world_digest(r.w);
        uint64_t hash = weft_world_hash(r.w);
        uint32_t components = weft_component_type_count(r.w);
        uint64_t logged = r.log.errors;
        wt_fault_arm(&r.fa, k, 1);
        weft_result_t got = weft_hier_add(r.w, e, NULL);
        wt_fault_arm(&r.fa, 0, 0);
        if (got != WEFT_OK) {
            failures++;
            cr_expect(eq(u64, wt_world_digest(r.w), before),
                      "allocation %llu failed in weft_hier_add (%s) and the world changed",
                      (unsigned long long)k, weft_last_error());
            cr_expect(eq(u64, weft_world_hash(r.w), hash),
                      "allocation %llu failed in weft_hier_add (%s) and the world's hash changed",
                      (unsigned long long)k, weft_last_error());
            cr_expect(eq(u32, weft_component_type_count(r.w), components),
                      "allocation %llu failed in weft_hier_add (%s) but %u components stayed "
                      "registered",
                      (unsigned long long)k, weft_last_error(),
                      weft_component_type_count(r.w) - components);
            cr_expect(r.log.errors > logged,
                      "allocation %llu failed in weft_hier_add (%s) but the logger hook was not "
                      "called",
                      (unsigned long long)k, weft_last_error());
            cr_expect(eq(int, weft_hier_add(r.w, e, NULL), WEFT_OK),
                      "after allocation %llu failed, a retry without faults failed",
                      (unsigned long long)k);
        }
        rig_fini(&r);
    }
    cr_expect(failures > 0, "no allocation of weft_hier_add could be failed");
}

/* src/io/snapshot.c + src/hier/hierarchy_store.c: a hierarchy restore rebuilds the store aside;
 * when one of its allocations fails, the failure reaches the world's logger (not stderr)
 * and the world is unchanged. 600 nodes make the rebuilt store grow several times. */
Test(reliability_fault_focus, hier_snapshot_restore_failures_reach_the_world_logger) {
    enum { NODES = 600 };
    uint32_t failures = 0;
    for (uint64_t k = 1; k <= 24; k++) {
        rig_t r;
        rig_world(&r);
        weft_entity_t e[NODES];
        cr_assert(eq(int, weft_entity_create_n(r.w, NODES, e), WEFT_OK));
        weft_result_t res = WEFT_OK;
        for (uint32_t i = 0; i < NODES && res == WEFT_OK; i++) {
            res = weft_hier_add(r.w, e[i], NULL);
            if (res == WEFT_OK && i > 0) {
                res = weft_hier_attach(r.w, e[i], e[(i - 1) / 3]);
            }
        }
        cr_assert(eq(int, res, WEFT_OK), "building the hierarchy failed: %s", weft_last_error());
        weft_snapshot_t *snap = NULL;
        cr_assert(eq(int, weft_snapshot_create(r.w, &snap), WEFT_OK));
        cr_assert(eq(int, weft_snapshot_capture(r.w, snap), WEFT_OK));
        cr_assert(eq(int, weft_hier_detach(r.w, e[7]), WEFT_OK));
        cr_assert(eq(int, weft_hier_attach(r.w, e[7], e[NODES - 1]), WEFT_OK));
        uint64_t before = wt_world_digest(r.w);
        uint64_t logged = r.log.errors;
        wt_fault_arm(&r.fa, k, 1);
        weft_result_t got = weft_snapshot_restore(r.w, snap);
        wt_fault_arm(&r.fa, 0, 0);
        if (got != WEFT_OK) {
            failures++;
            cr_expect(r.log.errors > logged,
                      "allocation %llu failed in weft_snapshot_restore (%s: %s) but the logger "
                      "hook was not called",
                      (unsigned long long)k, weft_result_name(got), weft_last_error());
            cr_expect(eq(u64, wt_world_digest(r.w), before),
                      "allocation %llu failed in weft_snapshot_restore and the world changed",
                      (unsigned long long)k);
        }
        weft_snapshot_destroy(snap);
        rig_fini(&r);
    }
    cr_expect(failures > 0, "no allocation of weft_snapshot_restore could be failed");
}

/* base.h promises one logger call per reported failure; the scheduler (src/sched/schedule.c), the
 * hierarchy (src/hier/hierarchy_store.c, hierarchy_update.c) and the archive
 * (src/io/archive_io.c, archive_parse.c, archive_secw.c) report with a NULL logger, so their
 * failures go to stderr instead of the world's hook. */
static void noop(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
    }
}

static weft_result_t do_progress(rig_t *r) { return weft_world_progress(r->w, 0.1f); }
static weft_result_t do_hier_add(rig_t *r) {
    weft_entity_t e;
    weft_result_t got = weft_entity_create(r->w, &e);
    return got != WEFT_OK ? got : weft_hier_add(r->w, e, NULL);
}
static weft_result_t do_save(rig_t *r) {
    weft_membuf_t buf = {.allocator = wt_fault_allocator(&r->fa)};
    weft_writer_t wr = weft_membuf_writer(&buf);
    weft_result_t got = weft_archive_save(r->w, NULL, &wr);
    weft_membuf_free(&buf);
    return got;
}

Test(reliability_fault_focus, every_failure_reaches_the_world_logger) {
    struct {
        const char *name;
        weft_result_t (*fn)(rig_t *r);
    } calls[] = {{"weft_world_progress (schedule build)", do_progress},
                 {"weft_hier_add", do_hier_add},
                 {"weft_archive_save", do_save}};
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        for (uint64_t k = 1; k <= 24; k++) {
            rig_t r;
            rig_world(&r);
            weft_component_t pos;
            cr_assert(eq(int,
                         weft_component_register(
                             r.w, &(weft_component_desc_t){.name = "P", .size = 4}, &pos),
                         WEFT_OK));
            weft_system_t s;
            cr_assert(eq(int,
                         weft_system_register(
                             r.w,
                             &(weft_system_desc_t){
                                 .name = "s",
                                 .fn = noop,
                                 .terms = {{.component = pos, .access = WEFT_ACCESS_WRITE}}},
                             &s),
                         WEFT_OK));
            uint64_t logged = r.log.errors;
            wt_fault_arm(&r.fa, k, 1);
            weft_result_t got = calls[c].fn(&r);
            wt_fault_arm(&r.fa, 0, 0);
            if (got != WEFT_OK) {
                cr_expect(r.log.errors > logged,
                          "%s failed under allocation fault %llu (%s: %s) but the logger hook "
                          "was not called",
                          calls[c].name, (unsigned long long)k, weft_result_name(got),
                          weft_last_error());
            }
            rig_fini(&r);
        }
    }
}

/* src/sched/frame.c apply_phase (and the core calls it makes): when the command apply runs out
 * of memory, the commands applied so far stay applied and the systems' writes stay written, so
 * weft_world_progress returns WEFT_ENOMEM with the world changed (the contract asks for
 * unchanged). */
static void spawner(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const weft_component_t *c = ctx->user;
    (void)it;
    for (uint32_t i = 0; i < 300; i++) {
        weft_entity_t p = weft_cmd_create(ctx->cmd);
        uint32_t v = i;
        if (p != 0) {
            (void)weft_cmd_set(ctx->cmd, p, *c, &v);
        }
    }
}

Test(reliability_fault_focus, a_frame_that_fails_leaves_the_world_unchanged) {
    uint32_t failures = 0;
    for (uint64_t k = 1; k <= 40; k++) {
        rig_t r;
        rig_world(&r);
        weft_component_t v;
        cr_assert(eq(
            int, weft_component_register(r.w, &(weft_component_desc_t){.name = "V", .size = 4}, &v),
            WEFT_OK));
        weft_system_t s;
        cr_assert(
            eq(int,
               weft_system_register(
                   r.w, &(weft_system_desc_t){.name = "spawner", .fn = spawner, .user = &v}, &s),
               WEFT_OK));
        cr_assert(eq(int, weft_world_progress(r.w, 0.1f), WEFT_OK)); /* warm: tables built */
        uint64_t before = wt_world_digest(r.w);
        wt_fault_arm(&r.fa, k, 1);
        weft_result_t got = weft_world_progress(r.w, 0.1f);
        wt_fault_arm(&r.fa, 0, 0);
        if (got != WEFT_OK) {
            failures++;
            cr_expect(eq(u64, wt_world_digest(r.w), before),
                      "allocation %llu failed (%s) and the frame was partly applied: %u "
                      "entities now",
                      (unsigned long long)k, weft_last_error(), weft_entity_count(r.w));
        }
        rig_fini(&r);
    }
    cr_expect(failures > 0, "no allocation of the frame could be failed: the test lost its bite");
}

/* weft/system.h, "Running out of memory": a frame whose phase-end apply cannot get its memory
 * applies none of that phase's commands and is suspended; the next call resumes it (no
 * system runs twice, no command is lost) and ends with the fault-free world. Two phases, so
 * the failure can hit either apply. */
typedef struct two_phase {
    weft_component_t v, tag;
    uint32_t spawns, tags; /* runs of each system */
} two_phase_t;

static void spawn300(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    two_phase_t *tp = ctx->user;
    (void)it;
    tp->spawns++;
    for (uint32_t i = 0; i < 300; i++) {
        weft_entity_t p = weft_cmd_create(ctx->cmd);
        uint32_t v = i;
        if (p != 0) {
            (void)weft_cmd_set(ctx->cmd, p, tp->v, &v);
        }
    }
}

/* Phase 1: bumps every V in place and tags the odd ones through the buffer. */
static void tag_odd(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    two_phase_t *tp = ctx->user;
    tp->tags++;
    while (weft_iter_next(it)) {
        uint32_t *v = it->columns[0];
        for (uint32_t i = 0; i < it->rows; i++) {
            if (v[i] % 2u == 1u) {
                (void)weft_cmd_add(ctx->cmd, weft_iter_entity(it, i), tp->tag);
            }
            v[i] += 1000u;
        }
    }
}

static void two_phase_world(rig_t *r, two_phase_t *tp) {
    rig_world(r);
    memset(tp, 0, sizeof *tp);
    cr_assert(
        eq(int,
           weft_component_register(r->w, &(weft_component_desc_t){.name = "V", .size = 4}, &tp->v),
           WEFT_OK));
    cr_assert(eq(
        int,
        weft_component_register(r->w, &(weft_component_desc_t){.name = "T", .size = 0}, &tp->tag),
        WEFT_OK));
    cr_assert(
        eq(int,
           weft_system_register(
               r->w, &(weft_system_desc_t){.name = "spawn", .fn = spawn300, .user = tp}, NULL),
           WEFT_OK));
    cr_assert(
        eq(int,
           weft_system_register(
               r->w,
               &(weft_system_desc_t){.name = "tag",
                                     .fn = tag_odd,
                                     .user = tp,
                                     .phase = 1,
                                     .terms = {{.component = tp->v, .access = WEFT_ACCESS_WRITE}}},
               NULL),
           WEFT_OK));
    cr_assert(eq(int, weft_world_progress(r->w, 0.1f), WEFT_OK)); /* warm: tables built */
}

Test(reliability_fault_focus, a_failed_frame_apply_applies_nothing_and_the_retry_resumes_it) {
    /* The fault-free reference. */
    rig_t ref;
    two_phase_t tref;
    two_phase_world(&ref, &tref);
    cr_assert(eq(int, weft_world_progress(ref.w, 0.1f), WEFT_OK));
    uint64_t want = wt_world_digest(ref.w);
    uint32_t want_entities = weft_entity_count(ref.w);
    rig_fini(&ref);

    uint32_t failures = 0, bad = 0;
    char first[256] = "";
    for (uint64_t k = 1; k <= 60; k++) {
        rig_t r;
        two_phase_t tp;
        two_phase_world(&r, &tp);
        uint32_t e0 = weft_entity_count(r.w);
        uint32_t t0 = weft_component_rows(r.w, tp.tag);
        wt_fault_arm(&r.fa, k, 1);
        weft_result_t got = weft_world_progress(r.w, 0.1f);
        wt_fault_arm(&r.fa, 0, 0);
        if (got == WEFT_OK) {
            rig_fini(&r);
            continue;
        }
        failures++;
        uint32_t e1 = weft_entity_count(r.w), t1 = weft_component_rows(r.w, tp.tag);
        /* Failed at phase 0's apply: nothing spawned; at phase 1's: the spawns are in but no
         * tag is, and phase 1 ran once. */
        bool ok = got == WEFT_ENOMEM && t1 == t0 &&
                  ((e1 == e0 && tp.tags == 1) || (e1 == e0 + 300 && tp.tags == 2));
        weft_result_t again = weft_world_progress(r.w, 0.5f); /* resumes, keeps dt 0.1 */
        ok = ok && again == WEFT_OK && tp.spawns == 2 && tp.tags == 2 &&
             weft_entity_count(r.w) == want_entities && wt_world_digest(r.w) == want;
        if (!ok && bad++ == 0) {
            snprintf(first, sizeof first,
                     "allocation %llu failed (%s: %s): entities %u -> %u, tags %u -> %u, "
                     "runs spawn %u tag %u; retry %s, %u entities (want %u)",
                     (unsigned long long)k, weft_result_name(got), weft_last_error(), e0, e1, t0,
                     t1, tp.spawns, tp.tags, weft_result_name(again), weft_entity_count(r.w),
                     want_entities);
        }
        rig_fini(&r);
    }
    cr_expect(eq(u32, bad, 0), "%u bad cases; first: %s", bad, first);
    cr_expect(failures > 0, "no allocation of the frame could be failed: the test lost its bite");
}

Test(reliability_fault_focus, registering_a_system_discards_a_suspended_frame) {
    uint32_t suspended = 0;
    for (uint64_t k = 1; k <= 60 && suspended == 0; k++) {
        rig_t r;
        two_phase_t tp;
        two_phase_world(&r, &tp);
        uint32_t e0 = weft_entity_count(r.w);
        wt_fault_arm(&r.fa, k, 1);
        weft_result_t got = weft_world_progress(r.w, 0.1f);
        wt_fault_arm(&r.fa, 0, 0);
        if (got != WEFT_OK && weft_entity_count(r.w) == e0) { /* phase 0's apply failed */
            suspended++;
            cr_assert(eq(int,
                         weft_system_register(
                             r.w,
                             &(weft_system_desc_t){
                                 .name = "late",
                                 .fn = noop,
                                 .terms = {{.component = tp.v, .access = WEFT_ACCESS_READ}}},
                             NULL),
                         WEFT_OK));
            cr_expect(eq(int, weft_world_progress(r.w, 0.1f), WEFT_OK));
            cr_expect(eq(u32, tp.spawns, 3), "a new frame ran (the warm one, the failed one, "
                                             "this one)");
            cr_expect(eq(u32, weft_entity_count(r.w), e0 + 300),
                      "the failed frame's spawns were discarded, the new frame's applied");
        }
        rig_fini(&r);
    }
    cr_expect(eq(u32, suspended, 1), "no allocation of phase 0's apply could be failed");
}

/* The same promise when a phase cannot get its job tables half-way through (one worker: each
 * system is prepared right before it runs): the systems that ran are not run again, the rest
 * of the phase runs on retry. */
typedef struct grow_rig {
    weft_component_t v;
    uint32_t bumps, chunks;
} grow_rig_t;

static void bump_v(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    grow_rig_t *g = ctx->user;
    g->bumps++;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            ((uint32_t *)it->columns[0])[i] += 1u;
        }
    }
}

static void count_chunk(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    grow_rig_t *g = ctx->user;
    g->chunks++;
    while (weft_iter_next(it)) {
    }
}

static void grow_world(rig_t *r, grow_rig_t *g) {
    rig_world(r);
    memset(g, 0, sizeof *g);
    cr_assert(eq(
        int, weft_component_register(r->w, &(weft_component_desc_t){.name = "V", .size = 4}, &g->v),
        WEFT_OK));
    for (uint32_t i = 0; i < 100; i++) {
        weft_entity_t e;
        cr_assert(eq(int, weft_entity_create(r->w, &e), WEFT_OK));
        cr_assert(eq(int, weft_component_set(r->w, e, g->v, &i), WEFT_OK));
    }
    cr_assert(
        eq(int,
           weft_system_register(
               r->w,
               &(weft_system_desc_t){.name = "bump",
                                     .fn = bump_v,
                                     .user = g,
                                     .terms = {{.component = g->v, .access = WEFT_ACCESS_WRITE}}},
               NULL),
           WEFT_OK));
    cr_assert(
        eq(int,
           weft_system_register(
               r->w,
               &(weft_system_desc_t){.name = "chunks",
                                     .fn = count_chunk,
                                     .user = g,
                                     .parallel = true,
                                     .chunk_size = 8,
                                     .terms = {{.component = g->v, .access = WEFT_ACCESS_READ}}},
               NULL),
           WEFT_OK));
}

Test(reliability_fault_focus, a_frame_stopped_before_a_system_resumes_at_that_system) {
    uint32_t failures = 0, bad = 0, midway = 0;
    char first[256] = "";
    for (uint64_t k = 1; k <= 12; k++) {
        rig_t r;
        grow_rig_t g;
        grow_world(&r, &g); /* no frame yet: "chunks" needs 13 chunk slots (it has 1) */
        wt_fault_arm(&r.fa, k, 1);
        weft_result_t got = weft_world_progress(r.w, 0.1f);
        wt_fault_arm(&r.fa, 0, 0);
        if (got != WEFT_OK) {
            failures++;
            uint32_t bumps = g.bumps, chunks = g.chunks;
            midway += bumps == 1;
            weft_result_t again = weft_world_progress(r.w, 0.1f);
            /* Either nothing ran (the schedule build failed) or "bump" ran and "chunks" did
             * not; after the retry each ran exactly once. */
            bool ok = got == WEFT_ENOMEM && chunks == 0 && bumps <= 1 && again == WEFT_OK &&
                      g.bumps == 1 && g.chunks == 13;
            if (!ok && bad++ == 0) {
                snprintf(first, sizeof first,
                         "allocation %llu failed (%s): bump ran %u, chunks %u; retry %s: bump "
                         "%u, chunks %u",
                         (unsigned long long)k, weft_last_error(), bumps, chunks,
                         weft_result_name(again), g.bumps, g.chunks);
            }
        }
        rig_fini(&r);
    }
    cr_expect(eq(u32, bad, 0), "%u bad cases; first: %s", bad, first);
    cr_expect(midway > 0, "no allocation between the two systems could be failed (%u failures)",
              failures);
}

/* The reservation covers every index a command can reach: created entities land on recycled
 * slots (freed earlier or by this very apply) and on fresh ones across sparse pages, with
 * components whose pools have no pages yet. Each allocation of the frame is failed in turn:
 * the frame must either succeed or apply nothing, and the retry must give the reference. */
typedef struct churn_rig {
    weft_component_t v, w, t;
    weft_entity_t victims[100]; /* destroyed through commands */
} churn_rig_t;

/* Recording retries a command whose buffer could not grow (the fault hits one allocation). */
#define RECORD(expr) \
    do {             \
    } while ((expr) == WEFT_ENOMEM)

static void churn_sys(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const churn_rig_t *c = ctx->user;
    (void)it;
    for (uint32_t i = 0; i < 100; i++) {
        RECORD(weft_cmd_destroy(ctx->cmd, c->victims[i]));
    }
    for (uint32_t i = 0; i < 1500; i++) {
        weft_entity_t p;
        while ((p = weft_cmd_create(ctx->cmd)) == 0) {
        }
        uint32_t v = i;
        RECORD(weft_cmd_set(ctx->cmd, p, c->w, &v));
        if (i % 3 == 0) {
            RECORD(weft_cmd_add(ctx->cmd, p, c->t));
        }
        if (i % 7 == 0) {
            RECORD(weft_cmd_remove(ctx->cmd, p, c->w));
        }
    }
    for (uint32_t i = 0; i < 100; i++) { /* stale by now: skipped */
        RECORD(weft_cmd_add(ctx->cmd, c->victims[i], c->t));
    }
}

static void churn_world(rig_t *r, churn_rig_t *c) {
    rig_world(r);
    cr_assert(eq(
        int, weft_component_register(r->w, &(weft_component_desc_t){.name = "V", .size = 4}, &c->v),
        WEFT_OK));
    cr_assert(eq(
        int, weft_component_register(r->w, &(weft_component_desc_t){.name = "W", .size = 4}, &c->w),
        WEFT_OK));
    cr_assert(eq(int, weft_component_register(r->w, &(weft_component_desc_t){.name = "T"}, &c->t),
                 WEFT_OK));
    weft_entity_t e[2100];
    cr_assert(eq(int, weft_entity_create_n(r->w, 2100, e), WEFT_OK));
    for (uint32_t i = 0; i < 2100; i++) {
        cr_assert(eq(int, weft_component_set(r->w, e[i], c->v, &i), WEFT_OK));
    }
    cr_assert(eq(int, weft_entity_destroy_n(r->w, e + 500, 300), WEFT_OK)); /* free slots */
    for (uint32_t i = 0; i < 100; i++) {
        c->victims[i] = e[1200 + 7 * i];
    }
    cr_assert(
        eq(int,
           weft_system_register(
               r->w, &(weft_system_desc_t){.name = "churn", .fn = churn_sys, .user = c}, NULL),
           WEFT_OK));
    /* Build the schedule and the tables before the fault is armed. */
    {
        uint32_t n = 0;
        cr_assert(eq(int, weft_schedule_order(r->w, NULL, 0, &n), WEFT_OK));
        cr_assert(eq(u32, n, 1));
    }
}

Test(reliability_fault_focus, a_failed_apply_with_recycled_and_fresh_slots_applies_nothing) {
    rig_t ref;
    churn_rig_t cref;
    churn_world(&ref, &cref);
    cr_assert(eq(int, weft_world_progress(ref.w, 0.1f), WEFT_OK), "%s", weft_last_error());
    uint64_t want = wt_world_digest(ref.w);
    cr_assert(eq(u32, weft_entity_count(ref.w), 2100 - 300 - 100 + 1500));
    rig_fini(&ref);

    uint32_t failures = 0, bad = 0;
    char first[256] = "";
    for (uint64_t k = 1; k <= 80; k++) {
        rig_t r;
        churn_rig_t c;
        churn_world(&r, &c);
        uint64_t before = wt_world_digest(r.w);
        wt_fault_arm(&r.fa, k, 1);
        weft_result_t got = weft_world_progress(r.w, 0.1f);
        wt_fault_arm(&r.fa, 0, 0);
        bool ok = true;
        uint64_t mid = wt_world_digest(r.w);
        weft_result_t again = WEFT_OK;
        if (got != WEFT_OK) {
            failures++;
            ok = got == WEFT_ENOMEM && mid == before;
            again = weft_world_progress(r.w, 0.1f);
        }
        ok = ok && again == WEFT_OK && wt_world_digest(r.w) == want;
        if (!ok && bad++ == 0) {
            snprintf(first, sizeof first,
                     "allocation %llu: frame %s (%s), world %s; retry %s, end state %s",
                     (unsigned long long)k, weft_result_name(got), weft_last_error(),
                     mid == before ? "unchanged" : "CHANGED", weft_result_name(again),
                     wt_world_digest(r.w) == want ? "as the reference" : "DIFFERENT");
        }
        rig_fini(&r);
    }
    cr_expect(eq(u32, bad, 0), "%u bad cases; first: %s", bad, first);
    cr_expect(failures > 3, "too few allocations of the frame could be failed (%u)", failures);
}

/* The reservation covers multi-instance components too (src/core/multi.c weft__multi_reserve):
 * commands that add instances — to live entities, to created ones, after removes that free
 * instance slots — grow the instance slot tables in the dry run, never in the apply. Phase 0
 * and phase 1 both add instances through their buffers; each allocation of the frame is
 * failed in turn. A failing frame returns WEFT_ENOMEM through the world's logger with
 * nothing of the failed phase applied (the world as before the frame, or as after phase 0's
 * apply); the retry resumes it and ends with the fault-free world: same hash and digest, and
 * the same instance handles (the reservation changes capacity only, never slot reuse). */
typedef struct inst {
    uint32_t owner, seq;
} inst_t;

typedef struct multi_rig {
    weft_component_t v, e; /* V: ordinary (uint32_t); E: multi-instance (inst_t) */
    weft_entity_t live[200];
    uint32_t emits, grows; /* runs of each system */
    bool quiet;            /* "grow" records nothing: the reference for phase 0 alone */
} multi_rig_t;

static void add_inst(weft_cmd_t *cmd, weft_entity_t e, weft_component_t c, uint32_t owner,
                     uint32_t seq) {
    RECORD(weft_cmd_add(cmd, e, c));                        /* one more instance ... */
    RECORD(weft_cmd_set(cmd, e, c, &(inst_t){owner, seq})); /* ... the most recent is set */
}

/* Phase 0: instances for live entities (some after removing all of theirs, some destroyed
 * after gaining them) and two each for 150 created entities. */
static void emit_instances(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    multi_rig_t *m = ctx->user;
    (void)it;
    m->emits++;
    for (uint32_t i = 0; i < 200; i++) {
        if (i % 5 == 0) {
            RECORD(weft_cmd_remove(ctx->cmd, m->live[i], m->e)); /* frees their slots */
        }
        for (uint32_t j = 0; j < 1 + i % 3; j++) {
            add_inst(ctx->cmd, m->live[i], m->e, i, j);
        }
        if (i % 11 == 0) {
            RECORD(weft_cmd_destroy(ctx->cmd, m->live[i]));
        }
    }
    for (uint32_t n = 0; n < 150; n++) {
        weft_entity_t p;
        while ((p = weft_cmd_create(ctx->cmd)) == 0) {
        }
        uint32_t v = 1000u + n;
        RECORD(weft_cmd_set(ctx->cmd, p, m->v, &v));
        add_inst(ctx->cmd, p, m->e, v, 0);
        RECORD(weft_cmd_add(ctx->cmd, p, m->e)); /* a second, zeroed instance */
    }
}

/* Phase 1: four more instances on every entity whose V is odd (reads only, no in-place
 * writes, so after a failed phase-1 apply the world is exactly "phase 0 applied"). */
static void grow_instances(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    multi_rig_t *m = ctx->user;
    m->grows++;
    while (weft_iter_next(it)) {
        const uint32_t *v = it->columns[0];
        for (uint32_t i = 0; i < it->rows && !m->quiet; i++) {
            for (uint32_t j = 0; v[i] % 2u == 1u && j < 4; j++) {
                add_inst(ctx->cmd, weft_iter_entity(it, i), m->e, v[i], 10u + j);
            }
        }
    }
}

static void multi_world(rig_t *r, multi_rig_t *m, bool quiet) {
    rig_world(r);
    memset(m, 0, sizeof *m);
    m->quiet = quiet;
    cr_assert(eq(
        int, weft_component_register(r->w, &(weft_component_desc_t){.name = "V", .size = 4}, &m->v),
        WEFT_OK));
    cr_assert(eq(int,
                 weft_component_register(r->w,
                                         &(weft_component_desc_t){.name = "E",
                                                                  .size = sizeof(inst_t),
                                                                  .align = _Alignof(inst_t),
                                                                  .flags = WEFT_COMPONENT_MULTI},
                                         &m->e),
                 WEFT_OK));
    cr_assert(eq(int, weft_entity_create_n(r->w, 200, m->live), WEFT_OK));
    for (uint32_t i = 0; i < 200; i++) {
        cr_assert(eq(int, weft_component_set(r->w, m->live[i], m->v, &i), WEFT_OK));
        weft_instance_t first = {0};
        for (uint32_t j = 0; j < i % 4; j++) {
            void *p = NULL;
            cr_assert(
                eq(int,
                   weft_component_add_instance(r->w, m->live[i], m->e, j == 0 ? &first : NULL, &p),
                   WEFT_OK));
            *(inst_t *)p = (inst_t){i, 100u + j};
        }
        if (i % 3 == 0 && first.id != 0) { /* free slots for the apply to reuse */
            cr_assert(eq(int, weft_instance_remove(r->w, first), WEFT_OK));
        }
    }
    cr_assert(
        eq(int,
           weft_system_register(
               r->w, &(weft_system_desc_t){.name = "emit", .fn = emit_instances, .user = m}, NULL),
           WEFT_OK));
    cr_assert(
        eq(int,
           weft_system_register(
               r->w,
               &(weft_system_desc_t){.name = "grow",
                                     .fn = grow_instances,
                                     .user = m,
                                     .phase = 1,
                                     .terms = {{.component = m->v, .access = WEFT_ACCESS_READ}}},
               NULL),
           WEFT_OK));
    {
        uint32_t n = 0; /* schedule built, unfaulted */
        cr_assert(eq(int, weft_schedule_order(r->w, NULL, 0, &n), WEFT_OK));
        cr_assert(eq(u32, n, 2));
    }
}

/* Every live entity's instance handles (most recent first), folded in entity-index order. */
static uint64_t handles_digest(weft_world_t *w, weft_component_t c) {
    weft_world_stats_t st;
    weft_world_stats(w, &st);
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < st.entity_slots; i++) {
        weft_entity_t e = weft_entity_from_index(w, i);
        if (e == WEFT_ENTITY_NULL) {
            continue;
        }
        weft_instance_t ids[16];
        uint32_t n = weft_component_instances(w, e, c, ids, 16);
        for (uint32_t k = 0; k < n && k < 16; k++) {
            h = (h ^ ids[k].id) * 0x100000001b3ull;
        }
        h = (h ^ n) * 0x100000001b3ull;
    }
    return h;
}

Test(reliability_fault_focus, a_failed_apply_of_multi_instance_adds_applies_nothing) {
    rig_t ref;
    multi_rig_t mref;
    multi_world(&ref, &mref, true);
    cr_assert(eq(int, weft_world_progress(ref.w, 0.1f), WEFT_OK), "%s", weft_last_error());
    uint64_t mid = wt_world_digest(ref.w); /* phase 0 applied, phase 1 recorded nothing */
    rig_fini(&ref);
    multi_world(&ref, &mref, false);
    cr_assert(eq(int, weft_world_progress(ref.w, 0.1f), WEFT_OK), "%s", weft_last_error());
    uint64_t want = wt_world_digest(ref.w), want_hash = weft_world_hash(ref.w);
    uint64_t want_handles = handles_digest(ref.w, mref.e);
    cr_assert(weft_component_rows(ref.w, mref.e) > 1024, "too few instances to grow");
    rig_fini(&ref);

    uint32_t failures = 0, bad = 0, at0 = 0, at1 = 0;
    bool covered = false; /* some k past the frame's last allocation was reached */
    char first[320] = "";
    for (uint64_t k = 1; k <= 400 && !covered; k++) {
        rig_t r;
        multi_rig_t m;
        multi_world(&r, &m, false);
        uint64_t before = wt_world_digest(r.w);
        uint64_t logged = r.log.errors;
        wt_fault_arm(&r.fa, k, 1);
        weft_result_t got = weft_world_progress(r.w, 0.1f);
        covered = got == WEFT_OK && wt_fault_failures(&r.fa) == 0;
        wt_fault_arm(&r.fa, 0, 0);
        uint64_t after = wt_world_digest(r.w);
        uint32_t emits = m.emits, grows = m.grows;
        bool ok = true;
        weft_result_t again = WEFT_OK;
        if (got != WEFT_OK) {
            failures++;
            at0 += emits == 1 && after == before; /* phase 0's apply */
            at1 += grows == 1;                    /* phase 1's apply */
            ok = got == WEFT_ENOMEM && r.log.errors > logged && emits <= 1 &&
                 (after == before ? grows == 0 : after == mid && emits == 1);
            again = weft_world_progress(r.w, 0.5f); /* resumes the suspended frame */
        }
        ok = ok && again == WEFT_OK && m.emits == 1 && m.grows == 1 &&
             wt_world_digest(r.w) == want && weft_world_hash(r.w) == want_hash &&
             handles_digest(r.w, m.e) == want_handles;
        if (!ok && bad++ == 0) {
            snprintf(first, sizeof first,
                     "allocation %llu: frame %s (%s), world %s, runs emit %u grow %u; retry %s, "
                     "runs emit %u grow %u, end state %s, handles %s",
                     (unsigned long long)k, weft_result_name(got), weft_last_error(),
                     after == before ? "unchanged"
                     : after == mid  ? "phase 0 applied"
                                     : "PARTLY APPLIED",
                     emits, grows, weft_result_name(again), m.emits, m.grows,
                     wt_world_digest(r.w) == want ? "as the reference" : "DIFFERENT",
                     handles_digest(r.w, m.e) == want_handles ? "as the reference" : "DIFFERENT");
        }
        rig_fini(&r);
    }
    cr_expect(eq(u32, bad, 0), "%u bad cases; first: %s", bad, first);
    cr_expect(covered, "the frame makes more than 400 allocations: raise the bound");
    cr_expect(at0 > 0 && at1 > 0,
              "the test lost its bite: %u failures, %u stopped phase 0's apply, %u phase 1's",
              failures, at0, at1);
}
