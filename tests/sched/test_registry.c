/* test_registry.c: many systems registered and unregistered. Records and their queries live
 * in blocks that grow (16, 32, ... 256 records), so thousands of random registrations,
 * unregistrations and re-registrations of freed names must keep every live system's runs,
 * rows, order and names lookups; and a registration whose allocation fails (a new block among
 * them) returns WEFT_ENOMEM with the world unchanged, then succeeds once memory is back.
 * Randomised tests print their seed (WT_SEED replays). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "fault_alloc.h"
#include "weft.h"
#include "weft_test.h"

#define NCOMP 16u               /* marker components */
#define ROWS(c) (1u + (c) % 4u) /* rows of component c: a query on another pool shows */
#define NREG 3000u              /* registrations */
#define NMAX 4096u              /* model slots (registrations and re-registrations) */

typedef struct reg_model {
    char name[NMAX][16];
    weft_system_t id[NMAX];
    uint32_t comp[NMAX]; /* component it writes */
    bool live[NMAX];
    uint32_t runs[NMAX]; /* frames it ran in */
    uint32_t rows[NMAX]; /* rows it saw */
    uint32_t log[NMAX];  /* this frame's run order (model slots) */
    uint32_t nlog;
} reg_model_t;

static reg_model_t model;

typedef struct sys_user {
    uint32_t slot;
} sys_user_t;

static sys_user_t users[NMAX];

static void body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const sys_user_t *u = ctx->user; /* a few rows: one chunk, one call per run */
    model.log[model.nlog++] = u->slot;
    model.runs[u->slot]++;
    while (weft_iter_next(it)) {
        model.rows[u->slot] += it->rows;
    }
}

static void expect_frame(weft_world_t *w, uint32_t nslots, const char *when) {
    uint32_t before[NMAX];
    memcpy(before, model.runs, nslots * sizeof *before);
    model.nlog = 0;
    for (uint32_t i = 0; i < nslots; i++) {
        model.rows[i] = 0;
    }
    cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK), "%s: %s", when, weft_last_error());
    uint32_t last[NCOMP];
    memset(last, 0xff, sizeof last);
    for (uint32_t k = 0; k < model.nlog; k++) { /* writers of one component: registration order */
        uint32_t slot = model.log[k], c = model.comp[slot];
        if (last[c] != UINT32_MAX) {
            cr_assert(gt(u32, model.id[slot].id, model.id[last[c]].id),
                      "%s: %s ran after %s, both writing component %u", when, model.name[slot],
                      model.name[last[c]], c);
        }
        last[c] = slot;
    }
    uint32_t live = 0;
    for (uint32_t i = 0; i < nslots; i++) {
        live += model.live[i];
        cr_assert(eq(u32, model.runs[i] - before[i], model.live[i] ? 1u : 0u),
                  "%s: %s (%s) ran %u times", when, model.name[i],
                  model.live[i] ? "live" : "unregistered", model.runs[i] - before[i]);
        cr_assert(eq(u32, model.rows[i], model.live[i] ? ROWS(model.comp[i]) : 0u),
                  "%s: %s saw %u rows", when, model.name[i], model.rows[i]);
    }
    cr_assert(eq(u32, model.nlog, live), "%s: runs this frame", when);
}

static void expect_names(weft_world_t *w, uint32_t nslots, const char *when) {
    for (uint32_t i = 0; i < nslots; i++) {
        weft_system_t got = weft_system_lookup(w, model.name[i]);
        bool taken = false; /* a later slot re-registered the name */
        for (uint32_t j = i + 1; j < nslots && !taken; j++) {
            taken = model.live[j] && strcmp(model.name[j], model.name[i]) == 0;
        }
        if (model.live[i]) {
            cr_assert(eq(u32, got.id, model.id[i].id), "%s: lookup of %s", when, model.name[i]);
            cr_assert(eq(str, (char *)weft_system_name(w, model.id[i]), model.name[i]), "%s", when);
        } else if (!taken) {
            cr_assert(eq(u32, got.id, 0u), "%s: unregistered %s still found", when, model.name[i]);
            cr_assert(weft_system_name(w, model.id[i]) == NULL, "%s", when);
        }
    }
}

Test(registry, thousands_of_random_registrations_and_unregistrations_keep_runs_order_and_names) {
    wt_rng_t rng = {wt_seed("registry")};
    weft_world_t *w = NULL;
    weft_world_desc_t wd = {.worker_count = 1, .execution = WEFT_EXECUTION_INLINE};
    cr_assert(eq(int, weft_world_create(&wd, &w), WEFT_OK));
    weft_component_t comp[NCOMP];
    for (uint32_t c = 0; c < NCOMP; c++) {
        char name[8];
        snprintf(name, sizeof name, "m%u", c);
        cr_assert(eq(
            int,
            weft_component_register(w, &(weft_component_desc_t){.name = name, .size = 4}, &comp[c]),
            WEFT_OK));
        for (uint32_t k = 0; k < ROWS(c); k++) {
            weft_entity_t e;
            uint32_t v = 0;
            cr_assert(eq(int, weft_entity_create(w, &e), WEFT_OK));
            cr_assert(eq(int, weft_component_set(w, e, comp[c], &v), WEFT_OK));
        }
    }
    memset(&model, 0, sizeof model);
    uint32_t nslots = 0, live = 0, fresh = 0;
    for (uint32_t step = 0; step < NREG + NREG / 3; step++) {
        uint32_t pick = wt_rng_below(&rng, nslots ? nslots : 1);
        if (live > 0 && wt_rng_below(&rng, 4) == 0) { /* unregister a live system */
            while (!model.live[pick]) {
                pick = (pick + 1) % nslots;
            }
            cr_assert(eq(int, weft_system_unregister(w, model.id[pick]), WEFT_OK));
            model.live[pick] = false;
            live--;
            continue;
        }
        uint32_t slot = nslots++;
        if (nslots > 1 && !model.live[pick] && wt_rng_below(&rng, 2) == 0) {
            bool taken = false; /* re-register a freed name */
            for (uint32_t j = 0; j < slot && !taken; j++) {
                taken = model.live[j] && strcmp(model.name[j], model.name[pick]) == 0;
            }
            if (taken) {
                snprintf(model.name[slot], sizeof model.name[slot], "s%u", fresh++);
            } else {
                memcpy(model.name[slot], model.name[pick], sizeof model.name[slot]);
            }
        } else {
            snprintf(model.name[slot], sizeof model.name[slot], "s%u", fresh++);
        }
        model.comp[slot] = wt_rng_below(&rng, NCOMP);
        users[slot].slot = slot;
        weft_system_desc_t d = {
            .name = model.name[slot],
            .fn = body,
            .user = &users[slot],
            .terms = {{.component = comp[model.comp[slot]], .access = WEFT_ACCESS_WRITE}}};
        cr_assert(eq(int, weft_system_register(w, &d, &model.id[slot]), WEFT_OK), "%s: %s",
                  model.name[slot], weft_last_error());
        model.live[slot] = true;
        live++;
        if (nslots == 700 || nslots == 2000) { /* frames between block growths */
            expect_frame(w, nslots, "mid-way frame");
        }
        if (nslots == NREG) {
            break;
        }
    }
    cr_assert(eq(u32, weft_system_count(w), nslots), "every registration has an id");
    expect_names(w, nslots, "after registering");
    expect_frame(w, nslots, "first frame");
    expect_frame(w, nslots, "second frame");
    cr_assert(gt(u32, live, 0u));
    weft_world_destroy(w);
}

/* ---- out of memory ---- */

static void quiet(weft_log_level_t level, weft_result_t code, const char *msg, const char *file,
                  int line, void *user) {
    (void)level, (void)code, (void)msg, (void)file, (void)line, (void)user;
}

static void noop(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    (void)ctx;
}

/* Register system number `i` (writing component c[i % 3]) while allocation k, then k + 1, ...
 * fails (every allocation from k on when `after`), until it succeeds. Each failure must be
 * WEFT_ENOMEM with the world unchanged: count, order, the name unknown, heap bytes back. */
static uint32_t register_under_failure(weft_world_t *w, wt_fault_alloc_t *fa,
                                       const weft_component_t *c, uint32_t i, bool after) {
    char name[16];
    snprintf(name, sizeof name, "o%u", i);
    weft_system_desc_t d = {
        .name = name, .fn = noop, .terms = {{.component = c[i % 3], .access = WEFT_ACCESS_WRITE}}};
    uint32_t failures = 0;
    for (uint64_t k = 1;; k++) {
        cr_assert(lt(u64, k, 1000u), "system %u: no success after 1,000 failed allocations", i);
        uint32_t n0 = weft_system_count(w);
        uint64_t h0 = weft_world_hash(w);
        wt_fault_arm(fa, k, after ? UINT64_MAX : 1);
        weft_result_t r = weft_system_register(w, &d, NULL);
        bool failed = wt_fault_failures(fa) > 0;
        wt_fault_arm(fa, 0, 0);
        if (r == WEFT_OK) { /* fewer than k allocations: nothing failed */
            cr_assert(not(failed), "system %u: allocation %llu failed, registration returned OK", i,
                      (unsigned long long)k);
            return failures;
        }
        cr_assert(eq(int, r, WEFT_ENOMEM), "system %u, k %llu: %s", i, (unsigned long long)k,
                  weft_result_name(r));
        failures++;
        cr_assert(eq(u32, weft_system_count(w), n0),
                  "system %u, k %llu: the failed registration counts", i, (unsigned long long)k);
        cr_assert(eq(u32, weft_system_lookup(w, name).id, 0u), "system %u is known", i);
        cr_assert(eq(u64, weft_world_hash(w), h0));
    }
}

Test(registry, a_registration_that_runs_out_of_memory_at_any_allocation_changes_nothing) {
    wt_fault_alloc_t fa;
    wt_fault_init(&fa);
    weft_world_t *w = NULL;
    weft_world_desc_t wd = {.worker_count = 1,
                            .execution = WEFT_EXECUTION_INLINE,
                            .allocator = wt_fault_allocator(&fa),
                            .logger = {.fn = quiet}};
    cr_assert(eq(int, weft_world_create(&wd, &w), WEFT_OK));
    weft_component_t c[3];
    for (uint32_t k = 0; k < 3; k++) {
        char name[8];
        snprintf(name, sizeof name, "c%u", k);
        cr_assert(
            eq(int,
               weft_component_register(w, &(weft_component_desc_t){.name = name, .size = 4}, &c[k]),
               WEFT_OK));
    }
    /* Systems 0, 16, 48, 112, 240 and 496 take a new block; the others fill one. Every
     * registration is swept up to 520 (past the last doubling block), alternating the two
     * failure modes. */
    for (uint32_t i = 0; i < 520; i++) {
        bool opens = i == 0 || i == 16 || i == 48 || i == 112 || i == 240 || i == 496;
        weft_world_stats_t st0, st1;
        weft_world_stats(w, &st0);
        uint32_t failures = register_under_failure(w, &fa, c, i, i % 2 == 1);
        weft_world_stats(w, &st1);
        if (opens) { /* its block is allocated, can fail, and heap_bytes counts it */
            cr_assert(gt(u32, failures, 0u), "system %u took a block without allocating", i);
            cr_assert(ge(sz, st1.heap_bytes - st0.heap_bytes, (size_t)16 * 1024),
                      "system %u: heap_bytes grew by %zu", i, st1.heap_bytes - st0.heap_bytes);
        }
    }
    uint32_t n = 0;
    cr_assert(eq(int, weft_schedule_order(w, NULL, 0, &n), WEFT_OK));
    cr_assert(eq(u32, n, 520u));
    cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK), "%s", weft_last_error());
    weft_world_destroy(w);
    cr_assert(eq(i64, wt_fault_live_bytes(&fa), 0), "leaked");
    cr_assert(eq(u64, wt_fault_bad_frees(&fa), 0u));
}
