/* tools/sim/sim_record.h: a recorded frame for the schedule simulator (sim.h), built from a
 * weft world through its public introspection — the run order and reduced graph
 * (weft_schedule_order, weft_schedule_edges) and traced frames (weft_trace_events) — and the
 * machine costs the simulator needs, measured with weft's own job system.
 *
 * Two traced frames go in: one at 1 worker, which gives the structure (on the 1-worker path
 * every phase's systems run before its apply event, so each system's phase is read off the
 * trace) and the durations a 1-worker simulation replays, and one at 2 or more workers, whose
 * durations the simulations at 2 or more workers replay (they carry that run's sharing of
 * caches and memory bandwidth) and which tells which phases the measured-cost rule ran inline
 * (every job on worker 0). As in the runtime, a phase holding a main_thread system is a job
 * graph, one with edges between its systems a ready list, and one with neither flat.
 * Nested work comes from the trace's other event kinds (weft/trace.h): the pieces of each
 * parallel-for a chunk started become that chunk's loops (wt_sim_loop_t; each trace its own
 * durations), and a placed apply's walk and lanes (found in the apply event whose span holds
 * them) its phase's placed fields. Only a multi-worker frame places its applies; the
 * 1-worker frame takes that shape scaled to its own apply time, which only the bound uses.
 * Both frames come with apply_measured set (sim.h: each apply replays as measured) until the
 * lane model is validated on quiet runs. Chunking does not depend on the worker count, so a chunk of one frame is the same
 * chunk in the other.
 *
 * Thread: main (the world's introspection calls are main-thread only). */
#ifndef WEFT_TOOLS_SIM_RECORD_H
#define WEFT_TOOLS_SIM_RECORD_H

#include <stdint.h>

#include "sim.h"
#include "weft/jobs.h"
#include "weft/system.h"
#include "weft/trace.h"

/* One traced frame: its events (weft_trace_events, one frame) and its measured wall time. */
typedef struct wt_sim_trace {
    const weft_trace_event_t *events;
    uint32_t count;
    uint32_t workers; /* the worker count it ran at */
    double frame_ns;  /* wall time of weft_world_progress() for that frame */
} wt_sim_trace_t;

/* The frame in both forms; owns every array the two wt_sim_frame_t point into. */
typedef struct wt_sim_record {
    wt_sim_frame_t one;  /* durations of the 1-worker trace */
    wt_sim_frame_t many; /* durations of the multi-worker trace, its inline decisions */
    void *store;         /* owned allocations */
} wt_sim_record_t;

/* Build the record from `world` (whose schedule the traces ran) and the two traces; `costs`
 * is copied into both frames, with frame_ns set from the 1-worker trace (its wall time less
 * its jobs and applies). Returns 0, or -1 when a weft call fails, the traces do not match the
 * schedule (an event of an unknown system, a 1-worker trace from more than one worker), or
 * memory runs out; *rec is then empty. Free with wt_sim_record_free. */
int wt_sim_record_build(wt_sim_record_t *rec, weft_world_t *world, const wt_sim_trace_t *one,
                        const wt_sim_trace_t *many, const wt_sim_costs_t *costs);

void wt_sim_record_free(wt_sim_record_t *rec);

/* Measure the machine costs (all but frame_ns) with a 2-worker weft job system of its own:
 * job_ns from empty jobs run by one thread, notice_ns and wake_ns as the time from a submit
 * until the other worker starts the job (spinning: resubmitted at once; asleep: after idling
 * twice the spin window), steal_ns from the difference between a stolen and an own empty job,
 * claim_ns from an empty 2-worker parallel-for of grain 1 (wall time x 2 per range: contended claims, as in a flat phase), spin_ns from the job system's defaults.
 * Medians of `reps` samples each (0: 201). Takes about reps x 2 spin windows. Returns 0, or
 * -1 when the job system cannot be created. Thread: any thread that is not a weft worker. */
int wt_sim_calibrate(wt_sim_costs_t *out, uint32_t reps);

/* Most calibrations wt_sim_calibrate_runs takes. */
#define WT_SIM_CALIBRATE_MAX_RUNS 15u

/* wt_sim_calibrate `runs` times (1..WT_SIM_CALIBRATE_MAX_RUNS) and keep each cost's median
 * over the runs (handout_ns derived from them as wt_sim_calibrate does): one calibration's
 * wake or notice samples can all fall in a busy spell of the machine. Returns 0, or -1 for a
 * bad `runs` or a failed calibration. Thread: as wt_sim_calibrate. */
int wt_sim_calibrate_runs(wt_sim_costs_t *out, uint32_t reps, uint32_t runs);

#endif /* WEFT_TOOLS_SIM_RECORD_H */
