/* bench/share.c: worker participation from the job system's tallies (see share.h). */
#include "share.h"

#include <string.h>

static uint64_t items_of(const wb_share_t *s, uint32_t w) {
    weft_worker_stats_t st;
    if (weft_jobs_worker_stats(s->jobs, w, &st) != WEFT_OK) {
        return 0;
    }
    return s->ranges_only ? st.ranges : st.jobs + st.ranges + st.items;
}

void wb_share_begin(wb_share_t *s, const weft_jobs_t *jobs) {
    memset(s, 0, sizeof *s);
    s->jobs = jobs;
    if (!jobs) {
        return;
    }
    uint32_t n = weft_jobs_worker_count(jobs);
    s->workers = n < WB_SHARE_MAX_WORKERS ? n : WB_SHARE_MAX_WORKERS;
    for (uint32_t w = 0; w < s->workers; w++) {
        s->base[w] = items_of(s, w);
    }
}

double wb_share_end(const wb_share_t *s, uint64_t *per_worker) {
    uint64_t total = 0, least = UINT64_MAX;
    for (uint32_t w = 0; w < s->workers; w++) {
        uint64_t d = items_of(s, w) - s->base[w];
        if (per_worker) {
            per_worker[w] = d;
        }
        total += d;
        least = d < least ? d : least;
    }
    return total == 0 || s->workers < 2 ? 0.0 : (double)least / (double)total;
}

void wb_share_begin_ranges(wb_share_t *s, const weft_jobs_t *jobs) {
    wb_share_begin(s, jobs);
    s->ranges_only = 1;
    for (uint32_t w = 0; w < s->workers; w++) {
        s->base[w] = items_of(s, w);
    }
}
