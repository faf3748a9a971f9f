/* test_command_place.c: the placed (parallel) command apply (src/sched/command_place.c) gives
 * the world the serial apply gives: same world hash after every frame at 2, 3, 4 and 8
 * workers as at 1 worker (where the apply is serial) on a randomised churn of creates,
 * destroys, adds, sets, removes, skipped commands and placeholder entity fields; components
 * with hooks keep firing in command order on the main thread; out of memory leaves the world
 * as it was. The seed is printed; set WEFT_SEED to replay one. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fault_alloc.h"
#include "sched_fixture.h"

TestSuite(placed_apply, .timeout = 600);

#define PA_ENTITIES 4000
#define PA_FRAMES 12

typedef struct link {
    weft_entity_t other; /* an entity field: may hold a placeholder when recorded */
    uint64_t stamp;
    unsigned char pad[32];
} link_t;

typedef struct churn {
    weft_world_t *world;
    weft_component_t a, b, c, d, e, f; /* vec3, u64, tag, int32, link_t, float */
    uint64_t seed;
    uint32_t frame;         /* written by the main thread between frames only */
    _Atomic uint32_t nomem; /* commands refused with WEFT_ENOMEM (fault test) */
} churn_t;

/* A command's result: ENOMEM is counted (the fault test tolerates it), anything else fails. */
static void cmd_ok(churn_t *ch, weft_result_t r) {
    if (r == WEFT_ENOMEM) {
        atomic_fetch_add(&ch->nomem, 1);
        return;
    }
    CHECK(r == WEFT_OK);
}

static uint64_t roll(const churn_t *ch, weft_entity_t e, uint32_t salt) {
    return fixture_mix(ch->seed ^ e ^ ((uint64_t)ch->frame << 40) ^ ((uint64_t)salt << 56));
}

/* Over A: destroy (sometimes twice: the second is a skipped stale command), or create a new
 * entity with A, B and a link to itself through placeholders. */
static void sys_spawn_kill(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    churn_t *ch = ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            weft_entity_t e = weft_iter_entity(it, i);
            uint64_t r = roll(ch, e, 1);
            switch (r % 12) {
            case 0:
                cmd_ok(ch, weft_cmd_destroy(ctx->cmd, e));
                if (r & 0x100) {
                    cmd_ok(ch, weft_cmd_destroy(ctx->cmd, e));
                }
                break;
            case 1: {
                weft_entity_t n = weft_cmd_create(ctx->cmd);
                if (n == WEFT_ENTITY_NULL) {
                    atomic_fetch_add(&ch->nomem, 1);
                    break;
                }
                vec3_t p = {(float)(r % 100), (float)((r >> 8) % 100), 1};
                uint64_t b = r >> 3;
                link_t l = {.other = (r & 0x200) ? n : e, .stamp = r};
                cmd_ok(ch, weft_cmd_set(ctx->cmd, n, ch->a, &p));
                cmd_ok(ch, weft_cmd_set(ctx->cmd, n, ch->b, &b));
                cmd_ok(ch, weft_cmd_set(ctx->cmd, n, ch->e, &l));
                if (r & 0x400) {
                    cmd_ok(ch, weft_cmd_add(ctx->cmd, n, ch->d));
                }
                if ((r & 0x1800) == 0x1800) { /* created and destroyed in one buffer */
                    cmd_ok(ch, weft_cmd_destroy(ctx->cmd, n));
                }
                break;
            }
            default:
                break;
            }
        }
    }
}

/* Over B: toggle the tag C (adds of a present one and removes of an absent one are skipped),
 * set D (an add or a write in place), overwrite A, drop B. */
static void sys_toggle(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    churn_t *ch = ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            weft_entity_t e = weft_iter_entity(it, i);
            uint64_t r = roll(ch, e, 2);
            int32_t d = (int32_t)(r >> 20);
            vec3_t p = {(float)(r & 63), 2, 3};
            switch (r % 10) {
            case 0:
                cmd_ok(ch, weft_cmd_add(ctx->cmd, e, ch->c));
                break;
            case 1:
                cmd_ok(ch, weft_cmd_remove(ctx->cmd, e, ch->c));
                break;
            case 2:
                cmd_ok(ch, weft_cmd_set(ctx->cmd, e, ch->d, &d));
                break;
            case 3:
                cmd_ok(ch, weft_cmd_set(ctx->cmd, e, ch->a, &p));
                break;
            case 4:
                cmd_ok(ch, weft_cmd_remove(ctx->cmd, e, ch->b));
                break;
            default:
                break;
            }
        }
    }
}

/* Over D: destroy (often racing the destroys of sys_spawn_kill: the later one is skipped),
 * set F, drop D, give back B. */
static void sys_decay(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    churn_t *ch = ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            weft_entity_t e = weft_iter_entity(it, i);
            uint64_t r = roll(ch, e, 3);
            float f = (float)(r & 1023) * 0.25f;
            uint64_t b = r;
            switch (r % 9) {
            case 0:
                cmd_ok(ch, weft_cmd_destroy(ctx->cmd, e));
                break;
            case 1:
                cmd_ok(ch, weft_cmd_set(ctx->cmd, e, ch->f, &f));
                break;
            case 2:
                cmd_ok(ch, weft_cmd_remove(ctx->cmd, e, ch->d));
                break;
            case 3:
                cmd_ok(ch, weft_cmd_set(ctx->cmd, e, ch->b, &b));
                break;
            default:
                break;
            }
        }
    }
}

static void reg_comp(churn_t *ch, const weft_component_desc_t *d, weft_component_t *out) {
    cr_assert(eq(int, weft_component_register(ch->world, d, out), WEFT_OK), "%s",
              weft_last_error());
}

/* A churn world. on_add_d: a hook on D (the apply must then stay serial for it). */
static churn_t *churn_make(const weft_world_desc_t *desc, uint64_t seed,
                           weft_component_hook_t on_add_d, void *hook_user) {
    churn_t *ch = calloc(1, sizeof *ch);
    cr_assert(ch != NULL);
    ch->seed = seed;
    cr_assert(eq(int, weft_world_create(desc, &ch->world), WEFT_OK), "%s", weft_last_error());
    reg_comp(ch, &(weft_component_desc_t){.name = "A", .size = sizeof(vec3_t)}, &ch->a);
    reg_comp(ch, &(weft_component_desc_t){.name = "B", .size = sizeof(uint64_t)}, &ch->b);
    reg_comp(ch, &(weft_component_desc_t){.name = "C"}, &ch->c);
    reg_comp(ch,
             &(weft_component_desc_t){
                 .name = "D", .size = sizeof(int32_t), .on_add = on_add_d, .hook_user = hook_user},
             &ch->d);
    reg_comp(ch,
             &(weft_component_desc_t){.name = "E",
                                      .size = sizeof(link_t),
                                      .entity_field_count = 1,
                                      .entity_fields = {offsetof(link_t, other)}},
             &ch->e);
    reg_comp(ch, &(weft_component_desc_t){.name = "F", .size = sizeof(float)}, &ch->f);
    for (uint32_t i = 0; i < PA_ENTITIES; i++) {
        uint64_t r = fixture_mix(seed + i);
        weft_entity_t e;
        cr_assert(eq(int, weft_entity_create(ch->world, &e), WEFT_OK));
        vec3_t p = {(float)i, 0, 0};
        uint64_t b = r;
        int32_t d = (int32_t)r;
        cr_assert(eq(int, weft_component_set(ch->world, e, ch->a, &p), WEFT_OK));
        if (r & 1) {
            cr_assert(eq(int, weft_component_set(ch->world, e, ch->b, &b), WEFT_OK));
        }
        if (r & 2) {
            cr_assert(eq(int, weft_component_set(ch->world, e, ch->d, &d), WEFT_OK));
        }
    }
    /* Three parallel systems over different components, chunked differently. */
    const weft_system_desc_t systems[3] = {
        {.name = "spawn_kill", .fn = sys_spawn_kill, .terms = {R(ch->a)}, .chunk_size = 300},
        {.name = "toggle", .fn = sys_toggle, .terms = {R(ch->b)}, .chunk_size = 211},
        {.name = "decay", .fn = sys_decay, .terms = {R(ch->d)}, .chunk_size = 157},
    };
    for (int k = 0; k < 3; k++) {
        weft_system_desc_t d = systems[k];
        d.user = ch;
        d.parallel = true;
        must_register(ch->world, &d);
    }
    return ch;
}

static void churn_free(churn_t *ch) {
    weft_world_destroy(ch->world);
    free(ch);
}

static weft_result_t churn_frame(churn_t *ch, uint32_t fr) {
    ch->frame = fr;
    return weft_world_progress(ch->world, 0.016f);
}

/* hashes[fr]: the world hash after frame fr at `workers` workers. */
static void churn_run(uint32_t workers, uint64_t seed, uint64_t hashes[PA_FRAMES]) {
    churn_t *ch = churn_make(
        &(weft_world_desc_t){.worker_count = workers, .execution = WEFT_EXECUTION_THREADED}, seed,
        NULL, NULL);
    for (uint32_t fr = 0; fr < PA_FRAMES; fr++) {
        cr_assert(eq(int, churn_frame(ch, fr), WEFT_OK), "%s", weft_last_error());
        CHECKED();
        hashes[fr] = weft_world_hash(ch->world);
    }
    cr_assert(weft_entity_count(ch->world) > PA_ENTITIES / 4, "the churn kept entities");
    cr_assert(eq(u32, atomic_load(&ch->nomem), 0));
    churn_free(ch);
}

Test(placed_apply, world_hash_equals_the_serial_apply_at_every_worker_count) {
    uint64_t seed = fixture_seed("placed_apply");
    uint64_t want[PA_FRAMES], got[PA_FRAMES];
    churn_run(1, seed, want); /* one worker: the serial apply */
    uint32_t counts[] = {2, 3, 4, 8};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        churn_run(counts[k], seed, got);
        for (uint32_t fr = 0; fr < PA_FRAMES; fr++) {
            cr_assert(eq(u64, got[fr], want[fr]), "seed %llu: %u workers differ after frame %u",
                      (unsigned long long)seed, counts[k], fr);
        }
    }
}

/* Digest of the entities a query yields, in order, then mark it seen. */
static uint64_t changed_digest(weft_query_t *q) {
    uint64_t h = 0;
    weft_iter_t it;
    cr_assert(eq(int, weft_query_iter(q, 0, 0, &it), WEFT_OK));
    while (weft_iter_next(&it)) {
        for (uint32_t i = 0; i < it.rows; i++) {
            h = fixture_mix(h ^ weft_iter_entity(&it, i));
        }
    }
    weft_query_mark_seen(q);
    return h;
}

/* got[fr]: after frame fr, the rows of A changed and of B added during the frame. */
static void churn_run_changes(uint32_t workers, uint64_t seed, uint64_t got[PA_FRAMES]) {
    churn_t *ch = churn_make(
        &(weft_world_desc_t){.worker_count = workers, .execution = WEFT_EXECUTION_THREADED}, seed,
        NULL, NULL);
    weft_query_t *qa = NULL, *qb = NULL;
    weft_query_desc_t da = {
        .terms = {{.component = ch->a, .access = WEFT_ACCESS_READ, .filter = WEFT_CHANGE_CHANGED}}};
    weft_query_desc_t db = {
        .terms = {{.component = ch->b, .access = WEFT_ACCESS_READ, .filter = WEFT_CHANGE_ADDED}}};
    cr_assert(eq(int, weft_query_create(ch->world, &da, &qa), WEFT_OK), "%s", weft_last_error());
    cr_assert(eq(int, weft_query_create(ch->world, &db, &qb), WEFT_OK), "%s", weft_last_error());
    weft_query_mark_seen(qa);
    weft_query_mark_seen(qb);
    for (uint32_t fr = 0; fr < PA_FRAMES; fr++) {
        cr_assert(eq(int, churn_frame(ch, fr), WEFT_OK), "%s", weft_last_error());
        CHECKED();
        uint64_t a = changed_digest(qa);
        got[fr] = fixture_mix(a ^ changed_digest(qb) ^ weft_world_hash(ch->world));
    }
    churn_free(ch);
}

/* Command applies mark what they add and write (weft/query.h): the placed apply too. */
Test(placed_apply, change_filters_see_the_applied_rows_at_every_worker_count) {
    uint64_t seed = fixture_seed("placed_apply");
    uint64_t want[PA_FRAMES], got[PA_FRAMES];
    churn_run_changes(1, seed, want);
    uint32_t counts[] = {2, 4, 8};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        churn_run_changes(counts[k], seed, got);
        for (uint32_t fr = 0; fr < PA_FRAMES; fr++) {
            cr_assert(eq(u64, got[fr], want[fr]),
                      "seed %llu: %u workers: changed rows differ after frame %u",
                      (unsigned long long)seed, counts[k], fr);
        }
    }
}

/* ---- hooks: serial, in command order, on the main thread ---- */

#define HOOK_LOG_MAX 65536

typedef struct hook_log {
    pthread_t main;
    uint32_t n;
    uint32_t off_main;
    uint64_t order; /* a digest of the entities in firing order */
} hook_log_t;

static void log_on_add(weft_world_t *w, weft_entity_t e, weft_component_t c, void *data,
                       void *user) {
    (void)w;
    (void)c;
    (void)data;
    hook_log_t *log = user;
    if (!pthread_equal(pthread_self(), log->main)) {
        log->off_main++;
    }
    log->n++;
    log->order = fixture_mix(log->order ^ e);
}

static void hook_run(uint32_t workers, uint64_t seed, hook_log_t *log, uint64_t *hash) {
    log->main = pthread_self();
    churn_t *ch = churn_make(
        &(weft_world_desc_t){.worker_count = workers, .execution = WEFT_EXECUTION_THREADED}, seed,
        log_on_add, log);
    log->n = 0;
    log->off_main = 0;
    log->order = 0;
    for (uint32_t fr = 0; fr < PA_FRAMES; fr++) {
        cr_assert(eq(int, churn_frame(ch, fr), WEFT_OK), "%s", weft_last_error());
        CHECKED();
    }
    *hash = weft_world_hash(ch->world);
    churn_free(ch);
}

Test(placed_apply, hooks_fire_in_command_order_on_the_main_thread_at_every_worker_count) {
    uint64_t seed = fixture_seed("placed_apply");
    hook_log_t want, got;
    uint64_t want_hash, got_hash;
    hook_run(1, seed, &want, &want_hash);
    cr_assert(want.n > 100, "the churn adds D often (%u hook calls)", want.n);
    uint32_t counts[] = {2, 4};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        hook_run(counts[k], seed, &got, &got_hash);
        cr_assert(eq(u32, got.off_main, 0), "seed %llu: on_add ran off the main thread",
                  (unsigned long long)seed);
        cr_assert(eq(u32, got.n, want.n), "seed %llu: %u workers: on_add calls",
                  (unsigned long long)seed, counts[k]);
        cr_assert(eq(u64, got.order, want.order), "seed %llu: %u workers: on_add order differs",
                  (unsigned long long)seed, counts[k]);
        cr_assert(eq(u64, got_hash, want_hash), "seed %llu: %u workers: world differs",
                  (unsigned long long)seed, counts[k]);
    }
}

/* ---- out of memory: all or nothing ---- */

/* For each k, fail the k-th allocation of the first churn frame at 2 workers (the job system,
 * the schedule, the placed apply's stage, its log, rows, sparse pages, free list; command
 * buffers growing on workers). The
 * frame either succeeds with the reference world, or fails with WEFT_ENOMEM leaving the
 * world exactly as before the frame, and the retry then gives the reference world. A frame
 * where a system's command was refused (documented: the command is lost) is only checked to
 * finish. */
Test(placed_apply, out_of_memory_applies_all_or_nothing) {
    uint64_t seed = fixture_seed("placed_apply");
    weft_world_desc_t plain = {.worker_count = 2, .execution = WEFT_EXECUTION_THREADED};
    churn_t *ref = churn_make(&plain, seed, NULL, NULL);
    uint64_t before = weft_world_hash(ref->world);
    cr_assert(eq(int, churn_frame(ref, 0), WEFT_OK));
    uint64_t want = weft_world_hash(ref->world);
    churn_free(ref);

    wt_fault_alloc_t fa;
    uint32_t failed_frames = 0, checked = 0;
    for (uint64_t k = 1; k < 4000; k++) {
        wt_fault_init(&fa);
        fa.quiet = true;
        weft_world_desc_t d = plain;
        d.allocator = wt_fault_allocator(&fa);
        churn_t *ch = churn_make(&d, seed, NULL, NULL);
        cr_assert(eq(u64, weft_world_hash(ch->world), before));
        wt_fault_arm(&fa, k, 1);
        weft_result_t r = churn_frame(ch, 0); /* the first frame allocates everything */
        uint64_t calls = atomic_load(&fa.calls);
        wt_fault_arm(&fa, 0, 0);
        CHECKED();
        bool lost = atomic_load(&ch->nomem) != 0;
        if (r == WEFT_ENOMEM) {
            failed_frames++;
            if (!lost) {
                cr_assert(eq(u64, weft_world_hash(ch->world), before),
                          "seed %llu, k %llu: a failed apply changed the world",
                          (unsigned long long)seed, (unsigned long long)k);
            }
            ch->frame = 0;
            r = weft_world_progress(ch->world, 0.016f); /* resumes the suspended frame */
        }
        cr_assert(eq(int, r, WEFT_OK), "seed %llu, k %llu: %s", (unsigned long long)seed,
                  (unsigned long long)k, weft_last_error());
        if (!lost) {
            checked++;
            cr_assert(eq(u64, weft_world_hash(ch->world), want),
                      "seed %llu, k %llu: the world differs from the reference",
                      (unsigned long long)seed, (unsigned long long)k);
        }
        churn_free(ch);
        cr_assert(eq(u64, atomic_load(&fa.bad_frees), 0));
        cr_assert(eq(i64, atomic_load(&fa.live_blocks), 0), "k %llu: leak", (unsigned long long)k);
        if (k > calls) {
            break; /* the frame made fewer than k allocations: every one was failed once */
        }
    }
    cr_assert(failed_frames > 0, "some injected failure reached the apply");
    cr_assert(checked > 0);
}
