/* bench/bench_demo.c: suite `demo` — the scaling demo's frame (tools/demo, the same world code
 * weft_demo runs) at every count of wb_worker_counts (1 and 2 on a 2-core machine), and the
 * speedup over 1 worker at each (target >= 1.85x at 2), then the schedule simulator checked
 * against the 1- and 2-worker frames, with its simulated speedup at 4 .. 64 workers
 * (bench/sim_check.h): one frame of each world is traced right after each of its timed
 * blocks (the other worlds run one untimed frame there, so all stay in step).
 *
 * One world is built from the same seed per worker count, and their frames are timed
 * interleaved — a block of frames at 1 worker, then a block at each other count, rep after
 * rep — so a noisy neighbour hurts every side alike. Every world runs the same number of
 * frames, so all must end with the same hash; a mismatch is reported as a failed determinism
 * check. */
#include <stdlib.h>

#include "common.h"
#include "demo_world.h"
#include "share.h"
#include "sim_check.h"

static weft_result_t demo_frame(void *d) { return demo_world_frame(d); }

static double block_ms(demo_world_t *d, int frames, bool *ok) {
    double t0 = wb_now_ns();
    for (int f = 0; f < frames; f++) {
        if (demo_world_frame(d) != WEFT_OK) {
            *ok = false;
        }
    }
    return (wb_now_ns() - t0) / 1e6 / frames;
}

void wb_suite_demo(wb_ctx_t *ctx) {
    const bool quick = wb_quick(ctx);
    uint32_t counts[WB_MAX_COUNTS];
    const uint32_t nc = wb_worker_counts(ctx, counts);
    const int reps = wb_reps(ctx);
    const int frames = quick ? 2 : 5;
    demo_config_t cfg = {.mobiles = quick ? 200000 : 1000000};
    demo_world_t *d[WB_MAX_COUNTS] = {0};
    double *t = malloc((size_t)nc * (size_t)reps * sizeof *t); /* [k * reps + r] */
    wb_share_t *sh = calloc(nc, sizeof *sh);
    wb_sim_samples_t samples = {0};
    bool ok = t != NULL && sh != NULL && wb_sim_samples_init(&samples, (uint32_t)reps);
    /* the simulator's sides: the 1-worker world and the 2-worker one, when both are measured */
    uint32_t two = 0;
    for (uint32_t k = 1; k < nc; k++) {
        two = counts[0] == 1 && counts[k] == 2 ? k : two;
    }
    for (uint32_t k = 0; ok && k < nc; k++) {
        cfg.workers = counts[k];
        if (demo_world_create(&cfg, &d[k]) != WEFT_OK) {
            wb_note(ctx, "demo", "building the %u-worker world failed: %s", counts[k],
                    weft_last_error());
            ok = false;
        }
    }
    if (ok) {
        wb_note(ctx, "demo", "%u mobiles + %u particles + %u hierarchy nodes, %d reps of %d frames",
                demo_world_config(d[0])->mobiles, demo_world_config(d[0])->particles,
                demo_world_config(d[0])->carriers * 5, reps, frames);
    }
    wb_describe(ctx, "demo", "frame", "weft",
                "the scaling demo's frame (tools/demo: movement, steering, particles, hierarchy, "
                "churn through command buffers), mean of a block's frames (5; 2 with --quick)");
    wb_describe(ctx, "demo", "demo_speedup", "ratio",
                "median over reps of the 1-worker block / the N-worker block of the same rep, "
                "worlds built from the same seed");
    for (uint32_t k = 0; ok && k < nc; k++) {
        block_ms(d[k], 2, &ok); /* warmup: first-touch of pools and job tables */
        wb_share_begin(&sh[k], weft_world_jobs(demo_world_weft(d[k])));
    }
    for (int r = 0; r < reps && ok; r++) {
        for (uint32_t k = 0; k < nc; k++) {
            double ms = block_ms(d[k], frames, &ok);
            t[(size_t)k * (size_t)reps + (size_t)r] = ms;
            if (two != 0 && (k == 0 || k == two)) {
                const wb_sim_side_t side = {demo_world_weft(d[k]), demo_frame, d[k]};
                wb_sim_sample(&samples, &side, k == 0 ? 0 : 1, ms, 1);
            } else {
                ok = demo_world_frame(d[k]) == WEFT_OK && ok; /* in step with the traced */
            }
        }
    }
    if (!ok) {
        wb_note(ctx, "demo", "a frame failed: %s", weft_last_error());
    } else {
        /* paired ratios before medians (wb_median sorts in place) */
        double speedup[WB_MAX_COUNTS], share[WB_MAX_COUNTS];
        for (uint32_t k = 0; k < nc; k++) {
            speedup[k] = wb_median_ratio(t, t + (size_t)k * (size_t)reps, reps);
            share[k] = wb_share_end(&sh[k], NULL);
        }
        for (uint32_t k = 0; k < nc; k++) {
            wb_report(ctx, "demo", "frame", "weft", counts[k],
                      wb_median(t + (size_t)k * (size_t)reps, reps), "ms", WB_NO_TARGET, 0);
            if (counts[k] < 2) {
                continue;
            }
            bool at2 = counts[k] == 2;
            wb_report_scaled(ctx, "demo", "demo_speedup", "ratio", counts[k], speedup[k], "x",
                             at2 ? WB_AT_LEAST : WB_NO_TARGET, at2 ? 1.85 : 0, share[k]);
            wb_report_share(ctx, "demo", "frame", counts[k], share[k], WB_NO_TARGET, 0);
            /* every world ran the same frames, so every world must end with the same hash */
            if (demo_world_hash(d[0]) != demo_world_hash(d[k])) {
                wb_note(ctx, "demo",
                        "DETERMINISM FAILURE: the 1- and %u-worker worlds differ after "
                        "the same frames",
                        counts[k]);
            }
        }
    }
    /* the schedule simulator against the 1- and 2-worker frames; the targets for
     * the demo: 12x simulated at 16 workers, 30x at 64 */
    if (ok && two != 0) {
        static const double targets[WB_SIM_POINTS] = {0, 0, 0, 0, 12, 0, 30};
        const wb_sim_side_t sides[2] = {{demo_world_weft(d[0]), demo_frame, d[0]},
                                        {demo_world_weft(d[two]), demo_frame, d[two]}};
        (void)wb_sim_check(ctx, "demo", "demo", sides, &samples, targets);
    }
    wb_sim_samples_free(&samples);
    for (uint32_t k = 0; k < nc; k++) {
        if (d[k]) {
            demo_world_destroy(d[k]);
        }
    }
    free(sh);
    free(t);
}
