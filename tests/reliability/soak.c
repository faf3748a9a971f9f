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
 * window of the same length, max(RSS in L) <= max(RSS in W) * 1.05 and
 * max(heap in L) <= max(heap in W) * 1.05. Exit status 0 when both hold, 1 otherwise.
 *
 * Usage: weft_rel_soak [--seconds N] [--workers W] [--entities E] */
#define _GNU_SOURCE /* clock_gettime, sysconf */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
        if (fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

static void sys_move(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it))
        for (uint32_t i = 0; i < it->count; i++) {
            vec3_t *p = weft_iter_get(it, 0, i);
            const vec3_t *v = weft_iter_get(it, 1, i);
            p->x += v->x * ctx->dt;
            p->y += v->y * ctx->dt;
            p->z += v->z * ctx->dt;
        }
}

static void sys_age(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const soak_t *s = ctx->user;
    while (weft_iter_next(it))
        for (uint32_t i = 0; i < it->count; i++) {
            uint32_t *life = weft_iter_get(it, 0, i);
            if (--*life > 0)
                continue;
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

#define CHECK(call)                                                                            \
    do {                                                                                       \
        weft_result_t r_ = (call);                                                             \
        if (r_ != WEFT_OK) {                                                                   \
            fprintf(stderr, "soak: %s: %s (%s)\n", #call, weft_result_name(r_), weft_last_error()); \
            exit(2);                                                                           \
        }                                                                                      \
    } while (0)

static wt_log_count_t quiet_log; /* ECYCLE from random re-parenting is expected: stay quiet */

static void setup(soak_t *s, uint32_t workers, uint32_t entities) {
    CHECK(weft_world_create(&(weft_world_desc_t){.worker_count = workers,
                                                 .logger = wt_log_counter(&quiet_log)},
                            &s->w));
    CHECK(weft_component_register(s->w, &(weft_component_desc_t){.name = "Position",
                                                                  .size = sizeof(vec3_t)}, &s->pos));
    CHECK(weft_component_register(s->w, &(weft_component_desc_t){.name = "Velocity",
                                                                  .size = sizeof(vec3_t)}, &s->vel));
    CHECK(weft_component_register(s->w, &(weft_component_desc_t){.name = "Life", .size = 4},
                                  &s->life));
    CHECK(weft_component_register(s->w, &(weft_component_desc_t){.name = "Tag"}, &s->tag));
    weft_group_t g;
    CHECK(weft_group_create(s->w, &(weft_group_desc_t){.components = {s->pos, s->vel}, .count = 2},
                            &g));
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
    CHECK(weft_system_register(s->w, &(weft_system_desc_t){.name = "move", .fn = sys_move,
        .parallel = true, .chunk_size = 1024,
        .terms = {{s->pos, WEFT_ACCESS_WRITE}, {s->vel, WEFT_ACCESS_READ}}}, &sys));
    CHECK(weft_system_register(s->w, &(weft_system_desc_t){.name = "age", .fn = sys_age,
        .user = s, .parallel = true, .chunk_size = 1024, .terms = {{s->life, WEFT_ACCESS_WRITE}}},
        &sys));
    CHECK(weft_hier_register_system(s->w, NULL, &sys));
    CHECK(weft_snapshot_create(s->w, &s->snap));
}

/* Main-thread churn between frames. */
static void churn(soak_t *s, wt_rng_t *rng, uint64_t frame) {
    uint32_t n = weft_component_count(s->w, s->life);
    for (int k = 0; k < 64 && n > 0; k++) {
        weft_entity_t e = weft_component_entity_at(s->w, s->life, wt_rng_below(rng, n));
        if (weft_component_has(s->w, e, s->tag))
            CHECK(weft_component_remove(s->w, e, s->tag));
        else
            CHECK(weft_component_add(s->w, e, s->tag, NULL));
    }
    for (int k = 0; k < 16; k++) {
        weft_entity_t c = s->nodes[wt_rng_below(rng, 256)], p = s->nodes[wt_rng_below(rng, 256)];
        weft_result_t r = weft_hier_attach(s->w, c, p);
        if (r != WEFT_OK && r != WEFT_ECYCLE)
            CHECK(r);
        if (wt_rng_below(rng, 4) == 0)
            CHECK(weft_hier_detach(s->w, c));
    }
    if (frame % 100 == 0)
        CHECK(weft_snapshot_capture(s->w, s->snap));
    if (frame % 500 == 0)
        CHECK(weft_snapshot_restore(s->w, s->snap));
    if (frame % 200 == 0) {
        weft_membuf_t buf = {0};
        weft_writer_t wr = weft_membuf_writer(&buf);
        weft_archive_save_desc_t d = {.entities = s->nodes, .entity_count = 16,
                                      .with_descendants = true};
        CHECK(weft_archive_save(s->w, &d, &wr));
        weft_world_t *scratch = NULL;
        CHECK(weft_world_create(&(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE}, &scratch));
        CHECK(weft_archive_load_memory(scratch, buf.data, buf.size,
                                       &(weft_archive_load_desc_t){.skip_unknown = true}, NULL));
        weft_world_destroy(scratch);
        weft_membuf_free(&buf);
    }
}

#define MAX_SAMPLES 100000

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
    uint32_t workers = 4, entities = 20000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seconds") == 0)
            seconds = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--workers") == 0)
            workers = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--entities") == 0)
            entities = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [--seconds N] [--workers W] [--entities E]\n", argv[0]);
            return 2;
        }
    }
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
    /* AddressSanitizer keeps freed blocks in a quarantine (256 MiB by default), so RSS only
     * means something without it: under ASan the rule applies to the heap figure alone. */
    bool rss_ok = WT_ASAN || (double)lr <= (double)wr * 1.05;
    bool ok = nsamples >= 2 && rss_ok && (double)lh <= (double)wh * 1.05;
    printf("soak: %llu frames in %.0f s; %u entities alive; RSS start %.1f MiB, end %.1f MiB; "
           "warm-up window %.0f s: max RSS %.1f MiB, max heap %.2f MiB; last window: max RSS "
           "%.1f MiB, max heap %.2f MiB; rule last <= warm-up * 1.05: %s\n",
           (unsigned long long)frames, now_s() - t0, st.entity_count,
           (double)rss_start / 1048576.0, (double)rss_end / 1048576.0, warm,
           (double)wr / 1048576.0, (double)wh / 1048576.0, (double)lr / 1048576.0,
           (double)lh / 1048576.0, ok ? "holds" : "BROKEN");
    if (WT_ASAN)
        printf("soak: AddressSanitizer build: the RSS half of the rule is not applied "
               "(quarantine); use the ThreadSanitizer or a plain build for RSS\n");
    weft_snapshot_destroy(s.snap);
    weft_world_destroy(s.w);
    wt_watchdog_disarm();
    return ok ? 0 : 1;
}
