/* bench/share.h: worker participation — did every worker of a multi-worker figure take part?
 *
 * A figure measured "at N workers" means nothing if the work all ran on one thread. Each case
 * that claims N >= 2 workers takes a snapshot of the job system's per-worker tallies
 * (weft_jobs_worker_stats: jobs run, parallel-for ranges run and ready-list items run) before
 * its timed loops and reads the share after them:
 *
 *     share = (items run by the least busy worker) / (items run by all workers)
 *
 * 1/N when the work was spread evenly, 0 when some worker ran nothing (an idle worker, or
 * the phase ran on the calling thread without the job system: then no worker ran an item and
 * the share is 0 too). The harness reports it as `<case>_share`, unit "share".
 *
 * Thread: the thread that owns the job system, outside the measured work. */
#ifndef WEFT_BENCH_SHARE_H
#define WEFT_BENCH_SHARE_H

#include <stdint.h>

#include "weft/jobs.h"

#define WB_SHARE_MAX_WORKERS 64u

typedef struct wb_share {
    const weft_jobs_t *jobs;
    uint32_t workers; /* min(worker count, WB_SHARE_MAX_WORKERS) */
    int ranges_only;  /* count parallel-for ranges only (wb_share_begin_ranges) */
    uint64_t base[WB_SHARE_MAX_WORKERS]; /* items per worker at wb_share_begin */
} wb_share_t;

/* Snapshot every worker's tallies. jobs NULL gives a share of 0. */
void wb_share_begin(wb_share_t *s, const weft_jobs_t *jobs);

/* The same over parallel-for ranges only, for a figure whose other work runs as jobs or
 * work-list items (the scheduler's graph phases): the share of that figure's parallel-for
 * work alone. */
void wb_share_begin_ranges(wb_share_t *s, const weft_jobs_t *jobs);

/* Items each worker ran since wb_share_begin, into per_worker[0 .. s->workers) when not
 * NULL; returns the share defined above (0 when nothing ran). */
double wb_share_end(const wb_share_t *s, uint64_t *per_worker);

#endif /* WEFT_BENCH_SHARE_H */
