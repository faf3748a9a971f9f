/* tools/demo/demo_model.c: frame structure (see demo_model.h).
 *
 * DESIGN: everything here is measured.
 *   1. The Karp-Flatt serial fraction at the largest measured worker count,
 *      e = (1/S - 1/p) / (1 - 1/p) with S taken from the fastest frames (the least disturbed
 *      by other processes): the serial parts and the synchronisation cost actually observed,
 *      folded into one number.
 *   2. The critical path: no core count can beat the longest chain of dependent jobs. It is
 *      computed from the 1-worker traced frame (uncontended job times): each system weighs one
 *      (median) job (a parallel system's chunks can all run at once; a single job cannot be
 *      split — the hierarchy job counts whole even though it fans out inside), summed along
 *      the schedule's edges per phase, plus the applies and the bookkeeping, and taken as a
 *      fraction c of the traced frame's wall time.
 * Core counts this machine does not have are the schedule simulator's (tools/sim, driven by
 * demo_main.c), not a formula's. */
#include "demo_model.h"

#include <stdlib.h>
#include <string.h>

demo_frame_profile_t demo_profile_frame(const weft_trace_event_t *ev, uint32_t n,
                                        uint32_t workers) {
    demo_frame_profile_t p = {.workers = workers, .events = n};
    if (n == 0) {
        return p;
    }
    uint64_t lo = ev[0].begin_ns;
    uint64_t hi = ev[0].end_ns;
    double busy = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (ev[i].kind != WEFT_TRACE_JOB) {
            continue; /* nested inside a job or an apply: counted there */
        }
        double d = (double)(ev[i].end_ns - ev[i].begin_ns) / 1e6;
        lo = ev[i].begin_ns < lo ? ev[i].begin_ns : lo;
        hi = ev[i].end_ns > hi ? ev[i].end_ns : hi;
        busy += d;
        if (ev[i].system == 0) {
            p.apply_ms += d;
        } else {
            p.job_work_ms += d;
        }
    }
    p.span_ms = (double)(hi - lo) / 1e6;
    p.idle_fraction = p.span_ms > 0 ? 1.0 - busy / ((double)workers * p.span_ms) : 0.0;
    return p;
}

static int index_of(const demo_system_info_t *systems, uint32_t count, uint32_t id) {
    for (uint32_t i = 0; i < count; i++) {
        if (systems[i].id.id == id) {
            return (int)i;
        }
    }
    return -1;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Per-system work, job count, longest job and median job. The median, not the longest, weighs
 * a parallel system on the critical path: chunks cover equal row ranges, so on a quiet machine
 * they take about the same time, while the longest one mostly measures who got preempted. */
static int system_costs(demo_model_t *m, const demo_system_info_t *systems, uint32_t count,
                        const weft_trace_event_t *ev, uint32_t n) {
    double *d = malloc(((size_t)n + 1) * sizeof *d);
    if (d == NULL) {
        return -1;
    }
    m->system_count = count < 32 ? count : 32;
    for (uint32_t s = 0; s < m->system_count; s++) {
        demo_system_cost_t *c = &m->systems[s];
        *c = (demo_system_cost_t){
            systems[s].name, systems[s].phase, systems[s].parallel, 0, 0, 0, 0};
        for (uint32_t i = 0; i < n; i++) {
            if (ev[i].system == systems[s].id.id) {
                d[c->jobs] = (double)(ev[i].end_ns - ev[i].begin_ns) / 1e6;
                c->work_ms += d[c->jobs];
                c->max_job_ms = d[c->jobs] > c->max_job_ms ? d[c->jobs] : c->max_job_ms;
                c->jobs++;
            }
        }
        if (c->jobs > 0) {
            qsort(d, c->jobs, sizeof *d, cmp_double);
            c->median_job_ms = d[c->jobs / 2];
        }
    }
    free(d);
    return 0;
}

/* Longest weighted chain through the schedule, phase by phase. */
static int critical_path(demo_model_t *m, weft_world_t *world, const demo_system_info_t *systems) {
    uint32_t count = m->system_count;
    uint32_t ne = 0, no = 0;
    if (weft_schedule_edges(world, NULL, 0, &ne) != WEFT_OK) {
        return -1;
    }
    weft_schedule_edge_t *edges = malloc(((size_t)ne + 1) * sizeof *edges);
    weft_system_t *order = malloc(((size_t)count + 1) * sizeof *order);
    double *dist = calloc((size_t)count + 1, sizeof *dist);
    int *pred = malloc(((size_t)count + 1) * sizeof *pred);
    if (edges == NULL || order == NULL || dist == NULL || pred == NULL) {
        free(edges);
        free(order);
        free(dist);
        free(pred);
        return -1;
    }
    if (weft_schedule_edges(world, edges, ne, &ne) != WEFT_OK ||
        weft_schedule_order(world, order, count, &no) != WEFT_OK) {
        free(edges);
        free(order);
        free(dist);
        free(pred);
        return -1;
    }
    no = no < count ? no : count;
    for (uint32_t k = 0; k < no; k++) { /* run order is a topological order of the edges */
        int s = index_of(systems, count, order[k].id);
        if (s < 0) {
            continue;
        }
        const demo_system_cost_t *c = &m->systems[s];
        double best = 0;
        pred[s] = -1;
        for (uint32_t e = 0; e < ne; e++) {
            int from = index_of(systems, count, edges[e].from.id);
            if (edges[e].to.id == order[k].id && from >= 0 && dist[from] > best) {
                best = dist[from];
                pred[s] = from;
            }
        }
        dist[s] = best + (c->parallel ? c->median_job_ms : c->work_ms);
    }
    /* Phases run one after another: the frame's chain is the sum of each phase's longest. */
    m->critical_path_ms = m->one.apply_ms + m->overhead_ms;
    m->path_len = 0;
    for (uint32_t phase = 0; phase < 8; phase++) {
        int end = -1;
        for (uint32_t s = 0; s < count; s++) {
            if (m->systems[s].phase == phase && (end < 0 || dist[s] > dist[end])) {
                end = (int)s;
            }
        }
        if (end < 0) {
            continue;
        }
        m->critical_path_ms += dist[end];
        const char *rev[DEMO_MODEL_MAX_PATH];
        uint32_t nr = 0;
        for (int s = end; s >= 0 && nr < DEMO_MODEL_MAX_PATH; s = pred[s]) {
            rev[nr++] = m->systems[s].name;
        }
        while (nr > 0 && m->path_len < DEMO_MODEL_MAX_PATH) {
            m->path[m->path_len++] = rev[--nr];
        }
    }
    free(edges);
    free(order);
    free(dist);
    free(pred);
    return 0;
}

int demo_model_build(demo_model_t *m, weft_world_t *world, const demo_system_info_t *systems,
                     uint32_t system_count, const weft_trace_event_t *ev, uint32_t n, double t1_ms,
                     double traced_ms) {
    m->t1_ms = t1_ms;
    m->one = demo_profile_frame(ev, n, 1);
    m->traced_ms = traced_ms > m->one.span_ms ? traced_ms : m->one.span_ms;
    double bookkeeping = m->traced_ms - m->one.job_work_ms - m->one.apply_ms;
    m->overhead_ms = bookkeeping > 0 ? bookkeeping : 0;
    m->serial_fraction = m->traced_ms > 0 ? (m->one.apply_ms + m->overhead_ms) / m->traced_ms : 0;
    if (system_costs(m, systems, system_count, ev, n) != 0 ||
        critical_path(m, world, systems) != 0) {
        return -1;
    }
    m->critical_fraction = m->traced_ms > 0 ? m->critical_path_ms / m->traced_ms : 1.0;
    demo_model_karp_flatt(m, 1, 1.0);
    return 0;
}

void demo_model_karp_flatt(demo_model_t *m, uint32_t max_workers, double speedup_at_max) {
    m->karp_flatt = -1;
    m->karp_flatt_workers = 0;
    if (max_workers >= 2 && speedup_at_max > 0) {
        double p = (double)max_workers;
        m->karp_flatt = (1.0 / speedup_at_max - 1.0 / p) / (1.0 - 1.0 / p);
        m->karp_flatt_workers = max_workers;
    }
}
