/* tools/demo/demo_model.h: what the demo measures about one frame's structure (work, serial
 * parts, critical path, synchronisation losses) and what the schedule simulator (tools/sim)
 * says of core counts this machine does not have. A simulated figure is never a measurement:
 * every output that carries one says so. */
#ifndef WEFT_DEMO_MODEL_H
#define WEFT_DEMO_MODEL_H

#include <stdint.h>

#include "demo_world.h"
#include "sim/sim.h"
#include "weft/trace.h"

#define DEMO_MODEL_MAX_PATH 32
#define DEMO_SIM_POINTS 7      /* 1, 2, 4, 8, 16, 32, 64 workers */
#define DEMO_SIM_MAX_PAIRS 15u /* traced frames per worker count, at most */

/* Per-system figures of one traced frame. */
typedef struct demo_system_cost {
    const char *name;     /* system name */
    uint32_t phase;       /* phase */
    bool parallel;        /* chunked */
    uint32_t jobs;        /* jobs (chunks) that ran */
    double work_ms;       /* sum of job durations */
    double max_job_ms;    /* the longest job */
    double median_job_ms; /* the median job: a parallel system's weight on the critical path */
} demo_system_cost_t;

/* Figures from one traced frame at one worker count. */
typedef struct demo_frame_profile {
    uint32_t workers;     /* worker count of the traced frame */
    double span_ms;       /* first job begin to last job end */
    double job_work_ms;   /* sum of system job durations */
    double apply_ms;      /* sum of command-buffer apply durations (serial, main thread) */
    double idle_fraction; /* 1 - busy / (workers * span): synchronisation + imbalance loss */
    uint32_t events;      /* events in the frame */
} demo_frame_profile_t;

/* Everything the report states about structure and scaling. */
typedef struct demo_model {
    demo_frame_profile_t one;  /* traced frame at 1 worker */
    demo_frame_profile_t many; /* traced frame at the largest worker count */
    double t1_ms;              /* measured median frame time at 1 worker */
    double traced_ms;          /* wall time of the traced frame at 1 worker */
    double overhead_ms;        /* traced - job work - apply: frame bookkeeping */
    double serial_fraction;    /* (apply + overhead) / traced: what no core count shortens */
    double critical_path_ms;   /* longest dependency chain of jobs (+ applies, overhead),
                                       in traced-frame time: the frame with unlimited cores */
    double critical_fraction;  /* critical_path_ms / traced_ms */
    const char *path[DEMO_MODEL_MAX_PATH]; /* the systems on that chain, in run order */
    uint32_t path_len;                     /* entries in path */
    double karp_flatt;           /* experimentally determined serial fraction at the largest
                                       measured worker count (< 0 when not measurable) */
    uint32_t karp_flatt_workers; /* the worker count it was measured at */
    bool have_sim;               /* the simulation below ran */
    wt_sim_costs_t sim_costs;    /* the machine costs it used (tools/sim/sim_record.h): per-cost
                                 medians of a few calibrations, frame_ns the pairs' median */
    double sim_workers[DEMO_SIM_POINTS];  /* simulated worker counts */
    double sim_frame_ms[DEMO_SIM_POINTS]; /* simulated frame times */
    double sim_speedup[DEMO_SIM_POINTS];  /* simulated frame at 1 / at P */
    double sim_error_p1;                  /* simulated / measured median frame at 1 worker - 1 */
    double sim_error_p2; /* the same at 2 workers (NAN when 2 workers were not measured) */
    uint32_t sim_pairs;  /* traced pairs simulated; the figures above are medians over them */
    double sim_pair_ms[DEMO_SIM_MAX_PAIRS][DEMO_SIM_POINTS]; /* each pair's simulated frames */
    double sim_pair_traced_ms[DEMO_SIM_MAX_PAIRS][2];        /* each pair's traced wall times */
    demo_system_cost_t systems[32]; /* per-system cost at 1 worker, registration order */
    uint32_t system_count;          /* entries in systems */
} demo_model_t;

/* Summarise a traced frame's events. */
demo_frame_profile_t demo_profile_frame(const weft_trace_event_t *ev, uint32_t n, uint32_t workers);

/* Per-system costs and the critical path from the 1-worker traced frame (events, its wall time
 * traced_ms, the world's schedule edges) and the measured median frame time t1_ms at 1 worker.
 * Structure comes from the traced frame and is applied as fractions to t1_ms, so one noisy
 * median does not distort the fractions. Returns 0, -1 on OOM. */
int demo_model_build(demo_model_t *m, weft_world_t *world, const demo_system_info_t *systems,
                     uint32_t system_count, const weft_trace_event_t *ev, uint32_t n, double t1_ms,
                     double traced_ms);

/* Once every worker count ran: the Karp-Flatt serial fraction from `speedup_at_max`, the
 * measured speedup at `max_workers` (ignored when max_workers < 2). */
void demo_model_karp_flatt(demo_model_t *m, uint32_t max_workers, double speedup_at_max);

#endif /* WEFT_DEMO_MODEL_H */
