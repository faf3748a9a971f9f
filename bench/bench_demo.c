/* bench/bench_demo.c: suite `demo` — the scaling demo's frame (tools/demo, the same world code
 * weft_demo runs) at 1 and 2 workers, and the speedup between them (target >= 1.8x).
 *
 * Two worlds are built from the same seed, one per worker count, and their frames are timed
 * interleaved — a block of frames at 1 worker, then a block at 2, rep after rep — so a noisy
 * neighbour hurts both sides alike. Both worlds run the same number of frames, so they must end
 * with the same hash; a mismatch is reported as a failed determinism check. */
#include <stdlib.h>

#include "common.h"
#include "demo_world.h"
#include "share.h"

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
    const uint32_t two = wb_max_workers(ctx) >= 2 ? 2 : 1;
    const int reps = wb_reps(ctx);
    const int frames = quick ? 2 : 5;
    demo_config_t cfg = {.mobiles = quick ? 200000 : 1000000, .workers = 1};
    demo_world_t *d1 = NULL;
    demo_world_t *d2 = NULL;
    if (demo_world_create(&cfg, &d1) != WEFT_OK) {
        wb_note(ctx, "demo", "building the 1-worker world failed: %s", weft_last_error());
        return;
    }
    cfg.workers = two;
    if (demo_world_create(&cfg, &d2) != WEFT_OK) {
        wb_note(ctx, "demo", "building the %u-worker world failed: %s", two, weft_last_error());
        demo_world_destroy(d1);
        return;
    }
    wb_note(ctx, "demo", "%u mobiles + %u particles + %u hierarchy nodes, %d reps of %d frames",
            demo_world_config(d1)->mobiles, demo_world_config(d1)->particles,
            demo_world_config(d1)->carriers * 5, reps, frames);
    double *t1 = malloc((size_t)reps * sizeof *t1);
    double *t2 = malloc((size_t)reps * sizeof *t2);
    bool ok = t1 != NULL && t2 != NULL;
    wb_describe(ctx, "demo", "frame", "weft",
                "the scaling demo's frame (tools/demo: movement, steering, particles, hierarchy, "
                "churn through command buffers), mean of 5 frames per block");
    wb_describe(ctx, "demo", "demo_speedup", "ratio",
                "median over reps of the 1-worker block / the 2-worker block right after it, "
                "two worlds built from the same seed");
    wb_share_t sh;
    double share = 0;
    if (ok) {
        block_ms(d1, 2, &ok); /* warmup: first-touch of pools and job tables */
        block_ms(d2, 2, &ok);
        wb_share_begin(&sh, weft_world_jobs(demo_world_weft(d2)));
        for (int r = 0; r < reps && ok; r++) {
            t1[r] = block_ms(d1, frames, &ok);
            t2[r] = block_ms(d2, frames, &ok);
        }
        share = wb_share_end(&sh, NULL);
    }
    if (!ok) {
        wb_note(ctx, "demo", "a frame failed: %s", weft_last_error());
    } else {
        /* paired: each rep's 1-worker block against the 2-worker block right after it */
        double speedup = wb_median_ratio(t1, t2, reps);
        wb_report(ctx, "demo", "frame", "weft", 1, wb_median(t1, reps), "ms", WB_NO_TARGET, 0);
        wb_report(ctx, "demo", "frame", "weft", two, wb_median(t2, reps), "ms", WB_NO_TARGET, 0);
        wb_report_scaled(ctx, "demo", "demo_speedup", "ratio", two, speedup, "x", WB_AT_LEAST, 1.8,
                         share);
        wb_report_share(ctx, "demo", "frame", two, share, WB_NO_TARGET, 0);
        if (demo_world_hash(d1) != demo_world_hash(d2)) {
            wb_note(ctx, "demo",
                    "DETERMINISM FAILURE: the 1- and %u-worker worlds differ after "
                    "the same frames",
                    two);
        }
    }
    free(t1);
    free(t2);
    demo_world_destroy(d1);
    demo_world_destroy(d2);
}
