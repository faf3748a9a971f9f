/* soak.c: frames with structural churn for a long time (default 10 minutes), sampling resident
 * memory, to show that weft neither leaks nor grows in a steady state. Run by tools/soak.sh
 * under ThreadSanitizer; not part of ctest's default run.
 *
 * DESIGN
 * The population is constant by construction: every entity carries Life; the parallel "age"
 * system decrements it and, at zero, records through its command buffer the entity's destroy
 * and the creation of a successor (with Position, Velocity, Life and sometimes a Tag). A
 * parallel "move" system integrates positions (a group aligns Position and Velocity). The main
 * thread adds and removes tags between frames, re-parents hierarchy nodes, captures a snapshot
 * every 100 frames and restores it every 500 (the population stays constant either way), and
 * every 200 frames saves an archive of some nodes that it loads into a scratch world.
 * So after warm-up nothing should grow. Every second it samples the resident set
 * (/proc/self/statm) and the world's heap bytes (weft_world_stats).
 *
 * Rule: with W = the warm-up window (the first 20% of the run, at most 60 s) and L = the last
 * window of the same length:
 * - heap, the bytes live through the world's allocator hook (exact, no page rounding):
 *   max(heap in L) <= max(heap in W) * 1.05, no absolute slack;
 * - RSS: max(RSS in L) <= max(RSS in W) * 1.05 + slack, slack = RSS_SLACK_PER_THREAD for each
 *   thread of the job system (the main thread counts as worker 0). RSS counts resident pages,
 *   not live bytes, and moves in steps that say nothing about a leak: glibc gives each thread
 *   that allocates an arena, which grows its top by the request plus M_TOP_PAD (128 KiB) when
 *   no free chunk fits (fragmentation can make that happen late: the 20 s smoke saw one
 *   228 KiB step of the main arena at 5 s, its warm-up window ending at 4 s, with the heap
 *   figure unchanged) and keeps up to M_TRIM_THRESHOLD (128 KiB) of free top instead of
 *   returning it; a thread's stack keeps the pages its deepest call so far touched. glibc
 *   raises the trim and mmap thresholds dynamically (up to 64 and 32 MiB) after freeing a
 *   large mapped block, so main() pins them and the top pad at 128 KiB (blocks from 128 KiB up
 *   are then mapped and unmapped exactly). Hence per thread 128 KiB (one top step's pad) +
 *   128 KiB (the request that extended the top, below the mmap threshold) + 64 KiB of stack.
 *   The 5% absorbs the allocator's own bookkeeping, which grows with the
 *   footprint (and, under ThreadSanitizer, the shadow of each of those pages).
 * A leak outside the hook (say 64 bytes a frame) outgrows the slack within seconds; one
 * through the hook fails the heap rule. --plant-leak B / --plant-entity-leak N show it.
 * Exit status 0 when both hold, 1 otherwise.
 *
 * Usage: weft_rel_soak [--seconds N] [--workers W] [--entities E]
 *                      [--plant-leak BYTES] [--plant-entity-leak N]
 *   --plant-leak BYTES       self-test of the rule: each frame mallocs and touches BYTES that
 *                            are never freed (outside the hook: only RSS can see it)
 *   --plant-entity-leak N    self-test: each frame creates N entities with a Position that
 *                            are never destroyed (through the hook: the heap rule sees it) */
#define _GNU_SOURCE /* clock_gettime, sysconf */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h> /* mallopt */
#endif

#include "weft.h"
#include "weft/hierarchy.h"
#include "weft_test.h"

typedef struct vec3 {
    float x, y, z;
} vec3_t;

typedef struct soak {
    weft_world_t *w;
    weft_component_t pos, vel, life, tag;
    weft_entity_t nodes[256];
    weft_snapshot_t *snap;
} soak_t;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static size_t rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (f != NULL) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2) {
            resident = 0;
        }
        fclose(f);
    }
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

static void sys_move(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            vec3_t *p = weft_iter_get(it, 0, i);
            const vec3_t *v = weft_iter_get(it, 1, i);
            p->x += v->x * ctx->dt;
            p->y += v->y * ctx->dt;
            p->z += v->z * ctx->dt;
        }
    }
}

static void sys_age(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const soak_t *s = ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            uint32_t *life = weft_iter_get(it, 0, i);
            if (--*life > 0) {
                continue;
            }
            weft_entity_t e = weft_iter_entity(it, i);
            uint32_t seed = (uint32_t)e * 2654435761u;
            weft_entity_t n = weft_cmd_create(ctx->cmd);
            vec3_t v = {(float)(seed % 7), 1.0f, -1.0f};
            uint32_t l = 1 + seed % 97;
            if (weft_cmd_destroy(ctx->cmd, e) != WEFT_OK || n == 0 ||
                weft_cmd_set(ctx->cmd, n, s->pos, &(vec3_t){0}) != WEFT_OK ||
                weft_cmd_set(ctx->cmd, n, s->vel, &v) != WEFT_OK ||
                weft_cmd_set(ctx->cmd, n, s->life, &l) != WEFT_OK ||
                (seed % 3 == 0 && weft_cmd_add(ctx->cmd, n, s->tag) != WEFT_OK)) {
                fprintf(stderr, "soak: command buffer failure: %s\n", weft_last_error());
                abort();
            }
        }
    }
}

#define CHECK(call)                                                             \
    do {                                                                        \
        weft_result_t r_ = (call);                                              \
        if (r_ != WEFT_OK) {                                                    \
            fprintf(stderr, "soak: %s: %s (%s)\n", #call, weft_result_name(r_), \
                    weft_last_error());                                         \
            exit(2);                                                            \
        }                                                                       \
    } while (0)

static wt_log_count_t quiet_log; /* ECYCLE from random re-parenting is expected: stay quiet */

static void setup(soak_t *s, uint32_t workers, uint32_t entities) {
    CHECK(weft_world_create(
        &(weft_world_desc_t){.worker_count = workers, .logger = wt_log_counter(&quiet_log)},
        &s->w));
    CHECK(weft_component_register(
        s->w, &(weft_component_desc_t){.name = "Position", .size = sizeof(vec3_t)}, &s->pos));
    CHECK(weft_component_register(
        s->w, &(weft_component_desc_t){.name = "Velocity", .size = sizeof(vec3_t)}, &s->vel));
    CHECK(weft_component_register(s->w, &(weft_component_desc_t){.name = "Life", .size = 4},
                                  &s->life));
    CHECK(weft_component_register(s->w, &(weft_component_desc_t){.name = "Tag"}, &s->tag));
    weft_group_t g;
    CHECK(weft_group_create(s->w, &(weft_group_desc_t){.components = {s->pos, s->vel}}, &g));
    for (uint32_t i = 0; i < entities; i++) {
        weft_entity_t e;
        uint32_t l = 1 + i % 97;
        CHECK(weft_entity_create(s->w, &e));
        CHECK(weft_component_set(s->w, e, s->pos, &(vec3_t){(float)i, 0, 0}));
        CHECK(weft_component_set(s->w, e, s->vel, &(vec3_t){1, 0, 0}));
        CHECK(weft_component_set(s->w, e, s->life, &l));
    }
    /* Hierarchy nodes live outside the churn (no Life), so the snapshot path stays usable. */
    for (uint32_t i = 0; i < 256; i++) {
        CHECK(weft_entity_create(s->w, &s->nodes[i]));
        CHECK(weft_hier_add(s->w, s->nodes[i], NULL));
    }
    weft_system_t sys;
    CHECK(weft_system_register(
        s->w,
        &(weft_system_desc_t){.name = "move",
                              .fn = sys_move,
                              .parallel = true,
                              .chunk_size = 1024,
                              .terms = {{.component = s->pos, .access = WEFT_ACCESS_WRITE},
                                        {.component = s->vel, .access = WEFT_ACCESS_READ}}},
        &sys));
    CHECK(weft_system_register(
        s->w,
        &(weft_system_desc_t){.name = "age",
                              .fn = sys_age,
                              .user = s,
                              .parallel = true,
                              .chunk_size = 1024,
                              .terms = {{.component = s->life, .access = WEFT_ACCESS_WRITE}}},
        &sys));
    CHECK(weft_hier_register_system(s->w, NULL, &sys));
    CHECK(weft_snapshot_create(s->w, &s->snap));
}

/* Main-thread churn between frames. */
static void churn(soak_t *s, wt_rng_t *rng, uint64_t frame) {
    uint32_t n = weft_component_rows(s->w, s->life);
    for (int k = 0; k < 64 && n > 0; k++) {
        weft_entity_t e = weft_component_entity_at(s->w, s->life, wt_rng_below(rng, n));
        if (weft_component_has(s->w, e, s->tag)) {
            CHECK(weft_component_remove(s->w, e, s->tag));
        } else {
            CHECK(weft_component_add(s->w, e, s->tag, NULL));
        }
    }
    for (int k = 0; k < 16; k++) {
        weft_entity_t c = s->nodes[wt_rng_below(rng, 256)], p = s->nodes[wt_rng_below(rng, 256)];
        weft_result_t r = weft_hier_attach(s->w, c, p);
        if (r != WEFT_OK && r != WEFT_ECYCLE) {
            CHECK(r);
        }
        if (wt_rng_below(rng, 4) == 0) {
            CHECK(weft_hier_detach(s->w, c));
        }
    }
    if (frame % 100 == 0) {
        CHECK(weft_snapshot_capture(s->w, s->snap));
    }
    if (frame % 500 == 0) {
        CHECK(weft_snapshot_restore(s->w, s->snap));
    }
    if (frame % 200 == 0) {
        weft_membuf_t buf = {0};
        weft_writer_t wr = weft_membuf_writer(&buf);
        weft_archive_save_desc_t d = {
            .entities = s->nodes, .entity_count = 16, .with_descendants = true};
        CHECK(weft_archive_save(s->w, &d, &wr));
        weft_world_t *scratch = NULL;
        CHECK(
            weft_world_create(&(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE}, &scratch));
        CHECK(weft_archive_load_memory(scratch, buf.data, buf.size,
                                       &(weft_archive_load_desc_t){.skip_unknown = true}, NULL));
        weft_world_destroy(scratch);
        weft_membuf_free(&buf);
    }
}

#define MAX_SAMPLES 100000
#define KIB ((size_t)1024)
#define RSS_SLACK_PER_THREAD (128 * KIB + 128 * KIB + 64 * KIB)

/* Leaks planted by --plant-leak / --plant-entity-leak (self-tests of the rule). */
static void *volatile plant_sink; /* keeps the compiler from eliding the leaked malloc */

static void plant_leaks(soak_t *s, size_t bytes, uint32_t entities) {
    if (bytes > 0) {
        unsigned char *p = malloc(bytes);
        if (p != NULL) {
            memset(p, 0xa5, bytes); /* touch it: RSS counts only touched pages */
        }
        plant_sink = p;
    }
    for (uint32_t i = 0; i < entities; i++) {
        weft_entity_t e;
        CHECK(weft_entity_create(s->w, &e));
        CHECK(weft_component_set(s->w, e, s->pos, &(vec3_t){0}));
    }
}

#if defined(__SANITIZE_ADDRESS__)
#define WT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WT_ASAN 1
#endif
#endif
#ifndef WT_ASAN
#define WT_ASAN 0
#endif

int main(int argc, char **argv) {
    double seconds = 600;
    uint32_t workers = 4, entities = 20000, leak_entities = 0;
    size_t leak_bytes = 0;
    int a = 1;
    for (; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--seconds") == 0) {
            seconds = strtod(argv[a + 1], NULL);
        } else if (strcmp(argv[a], "--plant-leak") == 0) {
            leak_bytes = (size_t)strtoull(argv[a + 1], NULL, 10);
        } else if (strcmp(argv[a], "--plant-entity-leak") == 0) {
            leak_entities = (uint32_t)strtoul(argv[a + 1], NULL, 10);
        } else if (strcmp(argv[a], "--workers") == 0) {
            workers = (uint32_t)strtoul(argv[a + 1], NULL, 10);
        } else if (strcmp(argv[a], "--entities") == 0) {
            entities = (uint32_t)strtoul(argv[a + 1], NULL, 10);
        } else {
            break;
        }
    }
    if (a < argc) {
        fprintf(stderr,
                "usage: %s [--seconds N] [--workers W] [--entities E] "
                "[--plant-leak BYTES] [--plant-entity-leak N]\n",
                argv[0]);
        return 2;
    }
#ifdef __GLIBC__
    /* Fixed limits (setting them turns off glibc's dynamic raising): RSS_SLACK_PER_THREAD.
     * No-ops under the sanitizers, whose allocators replace malloc. */
    (void)mallopt(M_MMAP_THRESHOLD, (int)(128 * KIB));
    (void)mallopt(M_TRIM_THRESHOLD, (int)(128 * KIB));
    (void)mallopt(M_TOP_PAD, (int)(128 * KIB));
#endif
    /* A hang is a failure too: the watchdog prints every stack and aborts. */
    wt_watchdog_arm((unsigned)seconds + 120, "soak");
    static size_t rss[MAX_SAMPLES], heap[MAX_SAMPLES];
    static double at[MAX_SAMPLES];
    size_t nsamples = 0, rss_start = rss_bytes();
    soak_t s;
    memset(&s, 0, sizeof s);
    setup(&s, workers, entities);
    wt_rng_t rng = {0x50a4};
    printf("soak: %.0f s, %u workers, %u entities; RSS at start %.1f MiB\n", seconds, workers,
           entities, (double)rss_start / 1048576.0);
    fflush(stdout);
    double t0 = now_s(), next = t0;
    uint64_t frames = 0;
    for (double t = t0; t - t0 < seconds; t = now_s()) {
        CHECK(weft_world_progress(s.w, 0.016f));
        frames++;
        churn(&s, &rng, frames);
        if (leak_bytes > 0 || leak_entities > 0) {
            plant_leaks(&s, leak_bytes, leak_entities);
        }
        if (t >= next && nsamples < MAX_SAMPLES) {
            weft_world_stats_t st;
            weft_world_stats(s.w, &st);
            at[nsamples] = t - t0;
            rss[nsamples] = rss_bytes();
            heap[nsamples] = st.heap_bytes;
            nsamples++;
            next += 1.0;
        }
    }
    double warm = seconds * 0.2 < 60 ? seconds * 0.2 : 60;
    size_t wr = 0, wh = 0, lr = 0, lh = 0;
    for (size_t i = 0; i < nsamples; i++) {
        if (at[i] <= warm) {
            wr = rss[i] > wr ? rss[i] : wr;
            wh = heap[i] > wh ? heap[i] : wh;
        }
        if (at[i] >= seconds - warm) {
            lr = rss[i] > lr ? rss[i] : lr;
            lh = heap[i] > lh ? heap[i] : lh;
        }
    }
    weft_world_stats_t st;
    weft_world_stats(s.w, &st);
    size_t rss_end = rss_bytes();
    /* RSS in steps of pages and arena pads; the heap figure exact (see the rule at the top). */
    uint32_t threads = weft_jobs_worker_count(weft_world_jobs(s.w));
    double rss_limit = (double)wr * 1.05 + (double)(RSS_SLACK_PER_THREAD * threads);
    double heap_limit = (double)wh * 1.05;
    /* AddressSanitizer keeps freed blocks in a quarantine (256 MiB by default), so RSS only
     * means something without it: under ASan the rule applies to the heap figure alone. */
    bool rss_within = (double)lr <= rss_limit;
    bool rss_ok = WT_ASAN || rss_within;
    bool heap_ok = (double)lh <= heap_limit;
    bool ok = nsamples >= 2 && rss_ok && heap_ok;
    const double mib = 1048576.0;
    printf("soak: %llu frames in %.0f s; %u entities alive; RSS start %.1f MiB, end %.1f MiB\n",
           (unsigned long long)frames, now_s() - t0, st.entity_count, (double)rss_start / mib,
           (double)rss_end / mib);
    printf("soak: RSS by time:");
    size_t step = nsamples / 20 + 1;
    for (size_t k = 0; k < nsamples; k += step) {
        printf(" %.0fs=%.2f", at[k], (double)rss[k] / mib);
    }
    printf(" (MiB)\n");
    printf("soak: warm-up window %.0f s: max RSS %.2f MiB, max heap %.3f MiB; last window: max "
           "RSS %.2f MiB, max heap %.3f MiB\n",
           warm, (double)wr / mib, (double)wh / mib, (double)lr / mib, (double)lh / mib);
    printf("soak: rule heap last <= warm-up * 1.05 (%.3f MiB): %s; RSS last <= warm-up * 1.05 "
           "+ %u threads * %zu KiB (%.2f MiB): %s\n",
           heap_limit / mib, heap_ok ? "holds" : "BROKEN", threads, RSS_SLACK_PER_THREAD / KIB,
           rss_limit / mib,
           WT_ASAN      ? "not applied under AddressSanitizer (its quarantine keeps freed blocks)"
           : rss_within ? "holds"
                        : "BROKEN");
    printf("soak: %s\n", ok             ? "flat after warm-up"
                         : nsamples < 2 ? "FAILED: too few samples"
                                        : "FAILED: memory grew");
    weft_snapshot_destroy(s.snap);
    weft_world_destroy(s.w);
    wt_watchdog_disarm();
    return ok ? 0 : 1;
}
