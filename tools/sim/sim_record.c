/* tools/sim/sim_record.c: building a recorded frame from a weft world and its traces
 * (sim_record.h). */
#include "sim_record.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Everything one record owns, in one block of arrays. */
typedef struct record_store {
    wt_sim_system_t *sys_one, *sys_many;   /* [n] */
    wt_sim_phase_t *ph_one, *ph_many;      /* [nphases] */
    double *dur_one, *dur_many;            /* chunk durations, [nchunks] */
    uint32_t *pred;                        /* [nedges] */
    wt_sim_loop_t *loops_one, *loops_many; /* nested parallel-fors of each trace */
    double *pieces_one, *pieces_many;      /* their pieces' durations */
} record_store_t;

static void store_free(record_store_t *st) {
    if (!st) {
        return;
    }
    free(st->sys_one);
    free(st->sys_many);
    free(st->ph_one);
    free(st->ph_many);
    free(st->dur_one);
    free(st->dur_many);
    free(st->pred);
    free(st->loops_one);
    free(st->loops_many);
    free(st->pieces_one);
    free(st->pieces_many);
    free(st);
}

void wt_sim_record_free(wt_sim_record_t *rec) {
    if (rec) {
        store_free(rec->store);
        memset(rec, 0, sizeof *rec);
    }
}

/* Scratch used while building. */
typedef struct build {
    uint32_t n;            /* systems in the schedule */
    uint32_t max_id;       /* largest system id */
    uint32_t *pos_of;      /* [max_id + 1] run position of a system id, UINT32_MAX: none */
    uint32_t *phase;       /* [n] phase of each run position */
    uint32_t *nchunks;     /* [n] chunks seen in the 1-worker trace */
    uint32_t *chunk_first; /* [n + 1] offsets into the duration arrays */
    bool *on_other;        /* [nphases] the multi-worker trace ran a job of it off worker 0 */
    bool *has_edge;        /* [nphases] an edge joins two of its systems */
    bool *pinned;          /* [nphases] it holds a main_thread system */
    uint32_t nphases;
} build_t;

static void build_free(build_t *b) {
    free(b->pos_of);
    free(b->phase);
    free(b->nchunks);
    free(b->chunk_first);
    free(b->on_other);
    free(b->has_edge);
    free(b->pinned);
}

static int cmp_begin(const void *a, const void *b) {
    const weft_trace_event_t *x = a, *y = b;
    return (x->begin_ns > y->begin_ns) - (x->begin_ns < y->begin_ns);
}

/* Phases and chunk counts from the 1-worker trace: a system's phase is the index carried by
 * the first apply event after it. Systems that ran no chunk take the phase of the system
 * before them in run order (run order is phase-ascending). */
static int read_structure(build_t *b, const wt_sim_trace_t *one) {
    weft_trace_event_t *ev = malloc(((size_t)one->count + 1) * sizeof *ev);
    if (!ev) {
        return -1;
    }
    memcpy(ev, one->events, (size_t)one->count * sizeof *ev);
    qsort(ev, one->count, sizeof *ev, cmp_begin);
    for (uint32_t i = 0; i < b->n; i++) {
        b->phase[i] = UINT32_MAX;
    }
    int rc = 0;
    uint32_t pending_from = 0; /* events [pending_from, i) wait for their apply */
    for (uint32_t i = 0; i < one->count && rc == 0; i++) {
        const weft_trace_event_t *e = &ev[i];
        if (e->kind != WEFT_TRACE_JOB) {
            continue; /* nested work: read_loops and read_durations */
        } else if (e->worker != 0) {
            rc = -1; /* not a 1-worker frame */
        } else if (e->system == 0) {
            for (uint32_t k = pending_from; k < i; k++) {
                uint32_t p = b->pos_of[ev[k].system];
                b->phase[p] = e->chunk;
            }
            pending_from = i + 1;
            b->nphases = e->chunk + 1 > b->nphases ? e->chunk + 1 : b->nphases;
        } else if (e->system > b->max_id || b->pos_of[e->system] == UINT32_MAX) {
            rc = -1;
        } else {
            uint32_t p = b->pos_of[e->system];
            b->nchunks[p] = e->chunk + 1 > b->nchunks[p] ? e->chunk + 1 : b->nchunks[p];
        }
    }
    free(ev);
    uint32_t last = 0;
    for (uint32_t i = 0; i < b->n && rc == 0; i++) {
        if (b->phase[i] == UINT32_MAX) {
            b->phase[i] = last;
        }
        if (b->phase[i] < last) {
            rc = -1; /* run order is phase-ascending: the trace does not match the schedule */
        }
        last = b->phase[i];
    }
    if (b->n && b->nphases <= last) {
        b->nphases = last + 1;
    }
    return rc;
}

/* The phase of a placed apply's walk or lane event: that of the apply event whose span holds
 * it (every lane starts and ends inside its apply); UINT32_MAX when none does. */
static uint32_t apply_holding(const wt_sim_trace_t *t, const weft_trace_event_t *e) {
    for (uint32_t i = 0; i < t->count; i++) {
        const weft_trace_event_t *a = &t->events[i];
        if (a->kind == WEFT_TRACE_JOB && a->system == 0 && a->begin_ns <= e->begin_ns &&
            e->end_ns <= a->end_ns) {
            return a->chunk;
        }
    }
    return UINT32_MAX;
}

/* A placed apply's walk or lane event into its phase (sim.h: placed_ns, walk_ns, replay_ns,
 * lanes, main_lane_ns); placed_ns is first set to the span's end, made a length below. */
static void read_placed(const wt_sim_trace_t *t, const weft_trace_event_t *e, wt_sim_phase_t *ph,
                        double *walk_begin, double lane[3]) {
    double b = (double)e->begin_ns, d = (double)(e->end_ns - e->begin_ns);
    if (e->kind == WEFT_TRACE_APPLY_WALK) {
        ph->walk_ns += d;
        *walk_begin = *walk_begin < b ? *walk_begin : b;
    } else {
        ph->replay_ns += (double)e->detail;
        lane[0] += b; /* starts summed, then the main thread's lane (the last) taken out */
        lane[1] += 1;
        lane[2] = e->loop + 1u >= ph->lanes ? b : lane[2];
        if (e->loop + 1u >= ph->lanes) { /* the main thread's lane is the last */
            ph->main_lane_ns = e->loop + 1u > ph->lanes ? (double)e->detail : ph->main_lane_ns;
            ph->lanes = e->loop + 1u;
        }
    }
    double end = (double)e->end_ns;
    ph->placed_ns = ph->placed_ns > end ? ph->placed_ns : end;
    (void)t;
}

/* Chunk durations of one trace into dur[] (indexed through chunk_first); apply durations
 * into the phases; for the multi-worker trace, which phases ran off worker 0. Returns -1
 * when out of memory. */
static int read_durations(build_t *b, const wt_sim_trace_t *t, double *dur, wt_sim_phase_t *ph,
                          bool mark_workers) {
    double *walk_begin = malloc(((size_t)b->nphases + 1) * 4 * sizeof *walk_begin);
    if (!walk_begin) {
        return -1;
    }
    double *lane = walk_begin + b->nphases + 1; /* [3] per phase: see read_placed */
    for (uint32_t p = 0; p < b->nphases; p++) {
        walk_begin[p] = INFINITY;
        lane[3 * p] = lane[3 * p + 1] = lane[3 * p + 2] = 0;
    }
    for (uint32_t i = 0; i < t->count; i++) {
        const weft_trace_event_t *e = &t->events[i];
        double d = (double)(e->end_ns - e->begin_ns);
        if (e->kind == WEFT_TRACE_APPLY_WALK || e->kind == WEFT_TRACE_APPLY_LANE) {
            uint32_t p = apply_holding(t, e);
            if (p < b->nphases) {
                read_placed(t, e, &ph[p], &walk_begin[p], &lane[3 * p]);
            }
            continue;
        }
        if (e->kind != WEFT_TRACE_JOB) {
            continue; /* a nested piece: read_loops */
        }
        if (e->system == 0) {
            if (e->chunk < b->nphases) {
                ph[e->chunk].apply_ns += d;
            }
            continue;
        }
        if (e->system > b->max_id || b->pos_of[e->system] == UINT32_MAX) {
            continue;
        }
        uint32_t p = b->pos_of[e->system];
        if (e->chunk < b->nchunks[p]) {
            dur[b->chunk_first[p] + e->chunk] = d;
        }
        if (mark_workers && e->worker != 0) {
            b->on_other[b->phase[p]] = true;
        }
    }
    for (uint32_t p = 0; p < b->nphases; p++) {
        if (isinf(walk_begin[p])) { /* no walk: not placed (or its events were dropped) */
            ph[p].placed_ns = ph[p].walk_ns = ph[p].replay_ns = ph[p].main_lane_ns = 0;
            ph[p].lanes = 0;
            ph[p].lane_delay_ns = 0;
        } else {
            ph[p].placed_ns = fmin(fmax(ph[p].placed_ns - walk_begin[p], 0), ph[p].apply_ns);
            double jobs = lane[3 * p + 1] - 1; /* the job lanes' mean start after the walk's */
            ph[p].lane_delay_ns =
                jobs > 0 ? fmax((lane[3 * p] - lane[3 * p + 2]) / jobs - walk_begin[p], 0) : 0;
        }
    }
    free(walk_begin);
    return 0;
}

/* A nested piece's place: its parent's run position, chunk, loop and index. */
typedef struct piece_key {
    uint32_t pos, chunk, loop, index;
    uint64_t begin, end;
} piece_key_t;

static int cmp_piece(const void *pa, const void *pb) {
    const piece_key_t *a = pa, *b = pb;
    if (a->pos != b->pos) {
        return a->pos < b->pos ? -1 : 1;
    }
    if (a->chunk != b->chunk) {
        return a->chunk < b->chunk ? -1 : 1;
    }
    if (a->loop != b->loop) {
        return a->loop < b->loop ? -1 : 1;
    }
    return (a->index > b->index) - (a->index < b->index);
}

/* The nested parallel-fors of trace t into sys[] (loops and pieces allocated here, owned by
 * the caller): pieces grouped by parent chunk and loop, in index order; a loop's span is from
 * its first piece's start to its last piece's end. Returns -1 when out of memory. */
static int read_loops(const build_t *b, const wt_sim_trace_t *t, wt_sim_system_t *sys,
                      wt_sim_loop_t **loops_out, double **pieces_out) {
    uint32_t m = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        m += t->events[i].kind == WEFT_TRACE_PIECE;
    }
    piece_key_t *k = malloc(((size_t)m + 1) * sizeof *k);
    wt_sim_loop_t *loops = calloc((size_t)m + 1, sizeof *loops);
    double *pieces = calloc((size_t)m + 1, sizeof *pieces);
    *loops_out = loops;
    *pieces_out = pieces;
    if (!k || !loops || !pieces) {
        free(k);
        return -1;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const weft_trace_event_t *e = &t->events[i];
        if (e->kind != WEFT_TRACE_PIECE || e->system > b->max_id ||
            b->pos_of[e->system] == UINT32_MAX || e->chunk >= b->nchunks[b->pos_of[e->system]]) {
            continue; /* a loop outside the schedule's chunks */
        }
        k[n++] = (piece_key_t){b->pos_of[e->system], e->chunk, e->loop, e->detail,
                               e->begin_ns,          e->end_ns};
    }
    qsort(k, n, sizeof *k, cmp_piece);
    uint32_t nl = 0;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        uint64_t lo = k[i].begin, hi = k[i].end;
        for (; j < n && k[j].pos == k[i].pos && k[j].chunk == k[i].chunk && k[j].loop == k[i].loop;
             j++) {
            pieces[j] = (double)(k[j].end - k[j].begin);
            lo = k[j].begin < lo ? k[j].begin : lo;
            hi = k[j].end > hi ? k[j].end : hi;
        }
        wt_sim_system_t *s = &sys[k[i].pos];
        if (s->nloops == 0) {
            s->loops = &loops[nl];
        }
        s->nloops++;
        loops[nl++] = (wt_sim_loop_t){.chunk = k[i].chunk,
                                      .npieces = j - i,
                                      .piece_ns = &pieces[i],
                                      .span_ns = (double)(hi - lo)};
        i = j;
    }
    free(k);
    return 0;
}

/* Whether edge e joins two systems of the schedule in one phase, `from` earlier in run
 * order; their run positions into *from and *to (*to is always valid to index when true). */
static bool same_phase_edge(const build_t *b, const weft_schedule_edge_t *e, uint32_t *from,
                            uint32_t *to) {
    *to = e->to.id <= b->max_id ? b->pos_of[e->to.id] : UINT32_MAX;
    *from = e->from.id <= b->max_id ? b->pos_of[e->from.id] : UINT32_MAX;
    return *to < b->n && *from < *to && b->phase[*from] == b->phase[*to];
}

int wt_sim_record_build(wt_sim_record_t *rec, weft_world_t *world, const wt_sim_trace_t *one,
                        const wt_sim_trace_t *many, const wt_sim_costs_t *costs) {
    memset(rec, 0, sizeof *rec);
    build_t b = {0};
    record_store_t *st = calloc(1, sizeof *st);
    weft_system_t *order = NULL;
    weft_schedule_edge_t *edges = NULL;
    uint32_t nedges = 0;
    int rc = st ? 0 : -1;
    if (rc == 0 && weft_schedule_order(world, NULL, 0, &b.n) != WEFT_OK) {
        rc = -1;
    }
    if (rc == 0) {
        order = malloc(((size_t)b.n + 1) * sizeof *order);
        rc = order && weft_schedule_order(world, order, b.n, &b.n) == WEFT_OK ? 0 : -1;
    }
    if (rc == 0 && weft_schedule_edges(world, NULL, 0, &nedges) != WEFT_OK) {
        rc = -1;
    }
    if (rc == 0) {
        edges = malloc(((size_t)nedges + 1) * sizeof *edges);
        rc = edges && weft_schedule_edges(world, edges, nedges, &nedges) == WEFT_OK ? 0 : -1;
    }
    for (uint32_t i = 0; rc == 0 && i < b.n; i++) {
        b.max_id = order[i].id > b.max_id ? order[i].id : b.max_id;
    }
    if (rc == 0) {
        b.pos_of = malloc(((size_t)b.max_id + 1) * sizeof *b.pos_of);
        b.phase = calloc((size_t)b.n + 1, sizeof *b.phase);
        b.nchunks = calloc((size_t)b.n + 1, sizeof *b.nchunks);
        b.chunk_first = calloc((size_t)b.n + 1, sizeof *b.chunk_first);
        rc = b.pos_of && b.phase && b.nchunks && b.chunk_first ? 0 : -1;
    }
    if (rc == 0) {
        for (uint32_t i = 0; i <= b.max_id; i++) {
            b.pos_of[i] = UINT32_MAX;
        }
        for (uint32_t i = 0; i < b.n; i++) {
            b.pos_of[order[i].id] = i;
        }
        rc = read_structure(&b, one);
    }
    uint32_t nchunks = 0;
    for (uint32_t i = 0; rc == 0 && i < b.n; i++) {
        b.chunk_first[i] = nchunks;
        nchunks += b.nchunks[i];
    }
    if (rc == 0) {
        b.chunk_first[b.n] = nchunks;
        b.on_other = calloc((size_t)b.nphases + 1, sizeof *b.on_other);
        b.has_edge = calloc((size_t)b.nphases + 1, sizeof *b.has_edge);
        b.pinned = calloc((size_t)b.nphases + 1, sizeof *b.pinned);
        st->sys_one = calloc((size_t)b.n + 1, sizeof *st->sys_one);
        st->sys_many = calloc((size_t)b.n + 1, sizeof *st->sys_many);
        st->ph_one = calloc((size_t)b.nphases + 1, sizeof *st->ph_one);
        st->ph_many = calloc((size_t)b.nphases + 1, sizeof *st->ph_many);
        st->dur_one = calloc((size_t)nchunks + 1, sizeof *st->dur_one);
        st->dur_many = calloc((size_t)nchunks + 1, sizeof *st->dur_many);
        st->pred = calloc((size_t)nedges + 1, sizeof *st->pred);
        rc = b.on_other && b.has_edge && b.pinned && st->sys_one && st->sys_many && st->ph_one &&
                     st->ph_many && st->dur_one && st->dur_many && st->pred
                 ? 0
                 : -1;
    }
    if (rc == 0) {
        /* predecessors inside the phase (edges across phases are implied by the phase
         * order): counted per system, then placed in edge order, one pass each */
        for (uint32_t i = 0; i < b.n; i++) {
            st->sys_one[i] = (wt_sim_system_t){.phase = b.phase[i],
                                               .nchunks = b.nchunks[i],
                                               .chunk_ns = st->dur_one + b.chunk_first[i]};
        }
        uint32_t from, to, np = 0;
        for (uint32_t k = 0; k < nedges; k++) {
            if (same_phase_edge(&b, &edges[k], &from, &to)) {
                st->sys_one[to].npred++;
            }
        }
        for (uint32_t i = 0; i < b.n; i++) {
            st->sys_one[i].pred = st->pred + np;
            np += st->sys_one[i].npred;
            st->sys_one[i].npred = 0;
        }
        for (uint32_t k = 0; k < nedges; k++) {
            if (same_phase_edge(&b, &edges[k], &from, &to)) {
                wt_sim_system_t *sys = &st->sys_one[to];
                st->pred[(size_t)(sys->pred - st->pred) + sys->npred++] = from;
                b.has_edge[b.phase[to]] = true;
            }
        }
        for (uint32_t i = 0; i < b.n; i++) {
            st->sys_many[i] = st->sys_one[i];
            st->sys_many[i].chunk_ns = st->dur_many + b.chunk_first[i];
        }
        for (uint32_t p = 0; p < b.nphases; p++) {
            st->ph_one[p] = (wt_sim_phase_t){.first = b.n, .end = b.n};
        }
        for (uint32_t i = b.n; i-- > 0;) {
            st->ph_one[b.phase[i]].first = i;
        }
        for (uint32_t p = b.nphases; p-- > 0;) { /* empty phases sit where the next starts */
            uint32_t next = p + 1 < b.nphases ? st->ph_one[p + 1].first : b.n;
            st->ph_one[p].first = st->ph_one[p].first > next ? next : st->ph_one[p].first;
            st->ph_one[p].end = next;
        }
        rc = read_durations(&b, one, st->dur_one, st->ph_one, false);
        memcpy(st->ph_many, st->ph_one, (size_t)b.nphases * sizeof *st->ph_many);
        for (uint32_t p = 0; p < b.nphases; p++) {
            st->ph_many[p].apply_ns = 0;
        }
        rc = rc == 0 ? read_durations(&b, many, st->dur_many, st->ph_many, true) : rc;
        /* A placed apply happens at 2 or more workers only: the 1-worker frame takes the
         * multi-worker one's shape, scaled to its own apply (used by wt_sim_bound; a
         * 1-worker simulation applies serially) */
        for (uint32_t p = 0; rc == 0 && p < b.nphases; p++) {
            const wt_sim_phase_t *m = &st->ph_many[p];
            wt_sim_phase_t *o = &st->ph_one[p];
            if (m->placed_ns > 0 && m->apply_ns > 0) {
                double f = o->apply_ns / m->apply_ns;
                o->placed_ns = fmin(m->placed_ns * f, o->apply_ns);
                o->walk_ns = m->walk_ns * f;
                o->replay_ns = m->replay_ns * f;
                o->main_lane_ns = m->main_lane_ns * f;
                o->lanes = m->lanes;
                o->lane_delay_ns = m->lane_delay_ns;
            }
        }
        rc = rc == 0 ? read_loops(&b, one, st->sys_one, &st->loops_one, &st->pieces_one) : rc;
        rc = rc == 0 ? read_loops(&b, many, st->sys_many, &st->loops_many, &st->pieces_many) : rc;
    }
    if (rc == 0) {
        for (uint32_t i = 0; i < b.n; i++) {
            b.pinned[b.phase[i]] |= weft_system_is_main_thread(world, order[i]);
        }
        /* the runtime's forms (weft/system.h): a main_thread system makes a job graph; else
         * edges inside the phase make a ready list, and none a flat loop */
        for (uint32_t p = 0; p < b.nphases; p++) {
            wt_sim_mode_t mode = b.pinned[p]     ? WT_SIM_GRAPH
                                 : b.has_edge[p] ? WT_SIM_READY
                                                 : WT_SIM_FLAT;
            st->ph_one[p].mode = mode;
            st->ph_many[p].mode = b.on_other[p] ? mode : WT_SIM_INLINE;
        }
        double busy = 0;
        for (uint32_t c = 0; c < nchunks; c++) {
            busy += st->dur_one[c];
        }
        for (uint32_t p = 0; p < b.nphases; p++) {
            busy += st->ph_one[p].apply_ns;
        }
        wt_sim_costs_t k = *costs;
        k.frame_ns = one->frame_ns > busy ? one->frame_ns - busy : 0;
        /* The lanes are recorded but not replayed by default: with the placed model on,
         * sched/churn's simulated 2-worker frame came out 15-24% below the measured one
         * under load (against 1-4% with the apply replayed as recorded); until a quiet run
         * validates it, each apply replays as its measured event (clear apply_measured to
         * replay the lanes: bench/sim_check.c reports both) */
        rec->one = (wt_sim_frame_t){st->sys_one, b.n, st->ph_one, b.nphases, k, true};
        rec->many = (wt_sim_frame_t){st->sys_many, b.n, st->ph_many, b.nphases, k, true};
        rec->store = st;
    }
    free(order);
    free(edges);
    build_free(&b);
    if (rc != 0) {
        store_free(st);
        memset(rec, 0, sizeof *rec);
    }
    return rc;
}
