/* test_sched_stress.c: ThreadSanitizer stress of the scheduler — 8 workers, 20 systems with
 * random read/write sets (and random phases, chunk sizes, main-thread flags), structural churn
 * through command buffers, 2,000 frames. Run under -DWEFT_SANITIZER=thread: any data race
 * between systems the graph let run together, or inside the scheduler, is a report. The final
 * world must also hash the same as an inline run. The seed is printed (WEFT_SEED replays). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "weft.h"

#define NCOMP 8
#define NSYS 20
#define FRAMES 2000
#define ENTITIES 1500

TestSuite(sched_stress, .timeout = 600);

typedef struct cell {
    uint64_t value; /* written by systems declaring write access */
    uint64_t reads; /* folded in from read components */
} cell_t;

typedef struct stress {
    weft_world_t *world;
    weft_component_t comp[NCOMP];
    uint32_t frame; /* main thread writes between frames only */
} stress_t;

typedef struct sys_info {
    stress_t *st;
    uint32_t seed;                    /* per-system constant */
    uint32_t nterms;                  /* terms in the desc */
    bool write[WEFT_QUERY_MAX_TERMS]; /* per term */
} sys_info_t;

static uint64_t mix(uint64_t x) {
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 32);
}

/* Reads every read term, writes every write term, and now and then destroys the entity,
 * creates a new one, or adds/removes a random component through the command buffer. */
static void stress_body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const sys_info_t *info = ctx->user;
    const stress_t *st = info->st;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            uint64_t acc = info->seed;
            for (uint32_t t = 0; t < info->nterms; t++) {
                acc += ((const cell_t *)weft_iter_get(it, t, i))->value;
            }
            for (uint32_t t = 0; t < info->nterms; t++) {
                if (!info->write[t]) {
                    continue;
                }
                cell_t *c = weft_iter_get(it, t, i);
                c->value = mix(acc + t);
                c->reads += acc & 0xFF;
            }
            weft_entity_t e = weft_iter_entity(it, i);
            uint64_t r = mix(acc ^ ((uint64_t)st->frame << 32) ^ e);
            switch (r % 512) {
            case 0:
                (void)weft_cmd_destroy(ctx->cmd, e);
                break;
            case 1: {
                weft_entity_t n = weft_cmd_create(ctx->cmd);
                cell_t v = {r, 0};
                (void)weft_cmd_set(ctx->cmd, n, st->comp[(r >> 9) % NCOMP], &v);
                (void)weft_cmd_set(ctx->cmd, n, st->comp[(r >> 12) % NCOMP], &v);
                break;
            }
            case 2:
                (void)weft_cmd_add(ctx->cmd, e, st->comp[(r >> 9) % NCOMP]);
                break;
            case 3:
                (void)weft_cmd_remove(ctx->cmd, e, st->comp[(r >> 9) % NCOMP]);
                break;
            default:
                break;
            }
        }
    }
}

static stress_t *stress_create(uint32_t workers, weft_execution_t exec, uint64_t seed,
                               sys_info_t infos[NSYS]) {
    stress_t *st = calloc(1, sizeof *st);
    weft_world_desc_t wd = {.worker_count = workers, .execution = exec};
    cr_assert(eq(int, weft_world_create(&wd, &st->world), WEFT_OK));
    for (uint32_t c = 0; c < NCOMP; c++) {
        char name[8] = {'C', (char)('0' + c), 0};
        cr_assert(eq(int,
                     weft_component_register(
                         st->world, &(weft_component_desc_t){.name = name, .size = sizeof(cell_t)},
                         &st->comp[c]),
                     WEFT_OK));
    }
    for (uint32_t i = 0; i < ENTITIES; i++) {
        weft_entity_t e;
        cr_assert(eq(int, weft_entity_create(st->world, &e), WEFT_OK));
        uint64_t r = mix(seed * 31 + i);
        for (uint32_t c = 0; c < NCOMP; c++) {
            cell_t v = {r + c, 0};
            if ((r >> c) & 1) {
                cr_assert(eq(int, weft_component_set(st->world, e, st->comp[c], &v), WEFT_OK));
            }
        }
    }
    for (uint32_t s = 0; s < NSYS; s++) {
        uint64_t r = mix(seed ^ (0x5151ull * (s + 1)));
        sys_info_t *info = &infos[s];
        *info = (sys_info_t){.st = st, .seed = (uint32_t)r};
        weft_system_desc_t d = {.fn = stress_body, .user = info};
        char name[16];
        snprintf(name, sizeof name, "sys%02u", s);
        d.name = name;
        uint32_t first = (uint32_t)(r % NCOMP);
        info->nterms = 1 + (uint32_t)((r >> 4) % 3);
        for (uint32_t t = 0; t < info->nterms; t++) {
            info->write[t] = (r >> (8 + t)) & 1;
            d.terms[t] = (weft_query_term_t){.component = st->comp[(first + t * 3) % NCOMP],
                                             .access = info->write[t] ? WEFT_ACCESS_WRITE
                                                                      : WEFT_ACCESS_READ};
        }
        if ((r >> 12) % 4 == 0) {
            d.exclude[0] = st->comp[(first + 1) % NCOMP];
        }
        d.phase = (uint32_t)((r >> 16) % 3);
        d.parallel = (r >> 20) & 1;
        d.chunk_size = 32u << ((r >> 21) % 4);
        d.main_thread = (r >> 24) % 8 == 0;
        cr_assert(eq(int, weft_system_register(st->world, &d, NULL), WEFT_OK), "%s",
                  weft_last_error());
    }
    return st;
}

static uint64_t stress_run(uint32_t workers, weft_execution_t exec, uint64_t seed) {
    sys_info_t infos[NSYS];
    stress_t *st = stress_create(workers, exec, seed, infos);
    for (uint32_t fr = 0; fr < FRAMES; fr++) {
        st->frame = fr;
        cr_assert(eq(int, weft_world_progress(st->world, 0.01f), WEFT_OK), "%s", weft_last_error());
    }
    uint64_t h = weft_world_hash(st->world);
    cr_log_info("%u workers: %u entities after %u frames, hash %016llx", workers,
                weft_entity_count(st->world), FRAMES, (unsigned long long)h);
    weft_world_destroy(st->world);
    free(st);
    return h;
}

Test(sched_stress, random_systems_with_churn_on_8_workers_match_an_inline_run) {
    const char *env = getenv("WEFT_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    fprintf(stderr, "sched stress seed: %llu (set WEFT_SEED to replay)\n",
            (unsigned long long)seed);
    uint64_t threaded = stress_run(8, WEFT_EXECUTION_THREADED, seed);
    uint64_t inline_hash = stress_run(1, WEFT_EXECUTION_INLINE, seed);
    cr_expect(eq(u64, threaded, inline_hash), "seed %llu", (unsigned long long)seed);
}
