/* bench/sim_check.h: the schedule simulator (tools/sim) checked against a case's measured
 * frames. A case that times the same world at 1 and at 2 workers in alternating blocks traces
 * a few frames of a side right after each of that side's timed blocks (wb_sim_sample), so the
 * traced frames see the same machine, load and warmth as the frames they are compared with.
 * Each rep's traced pairs are replayed on 1, 2, 4, ..., 64 simulated workers; the rep's mean
 * simulated frame at 1 and 2 workers is compared with the same rep's measured block, paired:
 * `<name>_sim_error_p1` and `<name>_sim_error_p2` are |median over reps of simulated /
 * measured - 1| (target <= 0.07), then `<name>_sim_speedup` (median simulated frame at 1 over
 * the median at P) at 4 .. 64 workers, marked simulated. The machine costs the simulator
 * needs are measured once per process (wt_sim_calibrate). */
#ifndef WB_SIM_CHECK_H
#define WB_SIM_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "weft.h"

/* Runs one frame of a case's world (weft_world_progress, or the case's own frame call). */
typedef weft_result_t (*wb_frame_fn)(void *arg);

/* A wb_frame_fn for a case whose frame is weft_world_progress(world, 0.016f). */
weft_result_t wb_sim_progress(void *world);

/* One side of the check: the world at 1 (side 0) or at 2 workers (side 1) and how to run
 * its frame. */
typedef struct wb_sim_side {
    weft_world_t *world;
    wb_frame_fn frame;
    void *arg;
} wb_sim_side_t;

/* The traced frames of a case's run, one per side per rep, each with the block it follows. */
typedef struct wb_sim_samples {
    struct wb_sim_sample_one *s[2]; /* [cap] per side, malloc'd */
    uint32_t n[2], cap;
    bool failed; /* a trace failed; the check then reports nothing */
} wb_sim_samples_t;

#define WB_SIM_POINTS 7 /* 1, 2, 4, ..., 64 simulated workers */

/* Room for `reps` samples per side. Returns false when memory runs out. */
bool wb_sim_samples_init(wb_sim_samples_t *s, uint32_t reps);

#define WB_SIM_MAX_TRACED 8 /* traced frames per sample */

/* Right after a timed block of side `k` (0 or 1) whose mean frame took `block_ms`: run
 * `frames` (1..WB_SIM_MAX_TRACED) traced frames of it and keep them with block_ms; the
 * sample's simulated frame is the mean of theirs, so a short frame's noise averages out as
 * the block's does. The world runs `frames` more frames (both sides must be sampled alike for
 * their states to stay equal). A failure is remembered. */
void wb_sim_sample(wb_sim_samples_t *s, const wb_sim_side_t *side, int k, double block_ms,
                   uint32_t frames);

void wb_sim_samples_free(wb_sim_samples_t *s);

/* Simulate the samples' pairs and report as above. `speedup_target`: NULL, or per point
 * (index k is 2^k workers; 0: no target) the least simulated speedup the case asks for.
 * Returns false, with a note, when tracing, recording or simulating failed. Thread: main. */
bool wb_sim_check(wb_ctx_t *ctx, const char *suite, const char *name, const wb_sim_side_t side[2],
                  const wb_sim_samples_t *samples, const double *speedup_target);

#endif /* WB_SIM_CHECK_H */
