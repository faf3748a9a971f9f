/* bench/sim_check.h: the schedule simulator (tools/sim) checked against a case's measured
 * frames. A case that times the same world at 1 and at 2 workers hands both here: a few
 * frames of each are traced, each traced pair is replayed on 1, 2, 4, ..., 64 simulated
 * workers, and the median simulated frame at 1 and 2 workers is compared with the case's
 * measured medians: `<name>_sim_error_p1` and `<name>_sim_error_p2` (|simulated / measured - 1|,
 * target <= 0.07), then `<name>_sim_speedup` at 4 .. 64 workers, marked simulated. The
 * machine costs the simulator needs are measured once per process (wt_sim_calibrate). */
#ifndef WB_SIM_CHECK_H
#define WB_SIM_CHECK_H

#include <stdbool.h>

#include "common.h"
#include "weft.h"

/* Runs one frame of a case's world (weft_world_progress, or the case's own frame call). */
typedef weft_result_t (*wb_frame_fn)(void *arg);

/* A wb_frame_fn for a case whose frame is weft_world_progress(world, 0.016f). */
weft_result_t wb_sim_progress(void *world);

/* One side of the check: the world at 1 or at 2 workers, how to run its frame, and the
 * case's measured median frame time (ms) for it. */
typedef struct wb_sim_side {
    weft_world_t *world;
    wb_frame_fn frame;
    void *arg;
    double median_ms;
} wb_sim_side_t;

#define WB_SIM_POINTS 7 /* 1, 2, 4, ..., 64 simulated workers */

/* Trace, simulate and report as above. `speedup_target`: NULL, or per point (index k is
 * 2^k workers; 0: no target) the least simulated speedup the case asks for. The worlds run
 * a few more frames (their state moves on). Returns false, with a note, when tracing,
 * recording or simulating fails. Thread: main. */
bool wb_sim_check(wb_ctx_t *ctx, const char *suite, const char *name, const wb_sim_side_t side[2],
                  const double *speedup_target);

#endif /* WB_SIM_CHECK_H */
