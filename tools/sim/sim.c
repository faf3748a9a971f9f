/* tools/sim/sim.c: the schedule simulator's engine (sim.h says what it models). */
#include "sim.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* One simulated worker. Worker 0 is the thread that called weft_world_progress(). */
typedef struct sim_worker {
    double next;       /* when it next acts: its job ends, or it looks for work (INFINITY: idle) */
    double idle_since; /* when it last found nothing to do */
    uint32_t job;      /* the job it runs (UINT32_MAX: none) */
    uint32_t *dq;      /* its deque of job ids: [head, tail), newest at tail - 1 */
    uint32_t head, tail;
    uint32_t role;           /* ready phases: a sim_role_t */
    uint32_t run_lo, run_hi; /* ready phases: claimed slots not yet started */
    /* ready phases, nested loops (run as events there, see ready_loop_event) */
    uint32_t lp;     /* the worker whose open loop it takes part in (UINT32_MAX: none) */
    uint32_t batch;  /* pieces of that loop it is running (0: arriving, or the caller waits) */
    bool lfirst;     /* its next claim there is a joiner's first (a whole share) */
    bool staged;     /* its unit is a chunk with loops: own part, then each loop in turn */
    uint32_t stage;  /* the unit's loops started so far */
    uint32_t kfirst; /* index, in its system's loops, of the unit's first loop */
    uint32_t kcount; /* the unit's loops */
} sim_worker_t;

/* A loop open in a ready phase, by the worker that runs the chunk that started it. */
typedef struct sim_open_loop {
    const wt_sim_loop_t *loop;
    uint32_t left;    /* pieces not yet claimed (claims take the top of [0, left)) */
    uint32_t running; /* batches claimed and not yet counted off */
} sim_open_loop_t;

/* What a worker does in a ready phase. */
typedef enum sim_role {
    ROLE_IDLE = 0,    /* not taking part (next finite: it was told of a drain job) */
    ROLE_DRAIN = 1,   /* running a drain job: claiming and running units */
    ROLE_WAITING = 2, /* worker 0, waiting for the drain jobs (next finite: it acts then) */
    ROLE_MAIN = 3,    /* worker 0 claiming and running units as the phase's caller */
} sim_role_t;

/* Scratch for one run, sized for the largest phase. */
typedef struct sim_state {
    const wt_sim_frame_t *f;
    uint32_t workers;
    sim_worker_t *w;
    uint32_t *jobs_base;         /* [nsystems + 1] first job id of each system of the phase */
    uint32_t *job_sys;           /* [njobs] system of each job */
    uint32_t *pending;           /* [nsystems] predecessors not yet finished */
    uint32_t *left;              /* [nsystems] jobs not yet finished */
    uint32_t *succ_first, *succ; /* successors, CSR by system */
    double t;                    /* the frame's clock */
    wt_sim_result_t *r;
    /* ready phases */
    uint32_t *slots;       /* [njobs] published units (job ids), claimed from head */
    uint32_t head, tail;   /* claimed up to head, published up to tail */
    uint32_t active;       /* participants: drain jobs queued or running, worker 0 draining */
    uint32_t queued;       /* drain jobs handed out that no worker has taken yet */
    uint32_t outstanding;  /* drain jobs handed out and not yet ended */
    sim_open_loop_t *open; /* [workers] the loop each worker's chunk has open */
} sim_state_t;

static double chunk_dur(const wt_sim_system_t *s, uint32_t chunk) {
    return s->nchunks ? s->chunk_ns[chunk] : 0.0;
}

static uint32_t jobs_of(const wt_sim_system_t *s) { return s->nchunks ? s->nchunks : 1u; }

/* How long idle worker v takes to start on work published at `now`. The calling thread
 * waits in a spinning counter wait, so it only ever needs to notice. */
static double latency(const sim_state_t *st, uint32_t v, double now) {
    const wt_sim_costs_t *c = &st->f->costs;
    if (v == 0 || now - st->w[v].idle_since < c->spin_ns) {
        return c->notice_ns;
    }
    return c->wake_ns;
}

static int check_frame(const wt_sim_frame_t *f) {
    uint32_t at = 0;
    for (uint32_t p = 0; p < f->nphases; p++) {
        const wt_sim_phase_t *ph = &f->phases[p];
        if (ph->first != at || ph->end < ph->first || ph->end > f->nsystems ||
            !(ph->apply_ns >= 0) || ph->mode > WT_SIM_READY) {
            return -1;
        }
        for (uint32_t i = ph->first; i < ph->end; i++) {
            const wt_sim_system_t *s = &f->systems[i];
            if (s->phase != p || (s->nchunks && !s->chunk_ns) || (s->npred && !s->pred)) {
                return -1;
            }
            for (uint32_t c = 0; c < s->nchunks; c++) {
                if (!(s->chunk_ns[c] >= 0)) {
                    return -1;
                }
            }
            for (uint32_t k = 0; k < s->npred; k++) {
                if (s->pred[k] < ph->first || s->pred[k] >= i) {
                    return -1;
                }
            }
            if (s->nloops && !s->loops) {
                return -1;
            }
            for (uint32_t k = 0; k < s->nloops; k++) {
                const wt_sim_loop_t *lp = &s->loops[k];
                if (lp->chunk >= s->nchunks || (k && lp->chunk < s->loops[k - 1].chunk) ||
                    (lp->npieces && !lp->piece_ns) || !(lp->span_ns >= 0)) {
                    return -1;
                }
                for (uint32_t c = 0; c < lp->npieces; c++) {
                    if (!(lp->piece_ns[c] >= 0)) {
                        return -1;
                    }
                }
            }
        }
        if (!(ph->placed_ns >= 0) || !(ph->walk_ns >= 0) || !(ph->replay_ns >= 0) ||
            !(ph->main_lane_ns >= 0) || !(ph->lane_delay_ns >= 0) ||
            (ph->placed_ns > 0 && ph->lanes == 0)) {
            return -1;
        }
        at = ph->end;
    }
    return at == f->nsystems ? 0 : -1;
}

/* ---- nested parallel-fors ------------------------------------------------------------- */

/* Whether worker v runs nothing in the phase now running (it may be about to look for
 * work: it looks at the loop first, as a runtime worker looks at offers and the board). */
static bool is_idle(const sim_state_t *st, uint32_t v) {
    const sim_worker_t *w = &st->w[v];
    return w->job == UINT32_MAX && w->role == ROLE_IDLE;
}

/* Run loop `lp` from `t0` with worker v as its caller, and, when `join`, every idle worker
 * as a joiner (sim.h); returns when the caller sees it end. Joiners stay busy until their
 * last piece ends. */
static double run_loop(sim_state_t *st, uint32_t v, const wt_sim_loop_t *lp, double t0, bool join) {
    const wt_sim_costs_t *c = &st->f->costs;
    uint32_t n = lp->npieces, P = st->workers;
    if (n == 0) {
        return t0;
    }
    double free_at[WT_SIM_MAX_WORKERS];
    bool first[WT_SIM_MAX_WORKERS], in[WT_SIM_MAX_WORKERS];
    for (uint32_t u = 0; u < P; u++) {
        in[u] = u == v || (join && n > 1 && is_idle(st, u));
        first[u] = u != v;
        free_at[u] = u == v ? t0 : in[u] ? t0 + latency(st, u, t0) : 0;
        if (in[u] && u != v && !isinf(st->w[u].next) && st->w[u].next > free_at[u]) {
            free_at[u] = st->w[u].next; /* it was already on its way to look for work */
        }
        if (in[u] && u != v) {
            st->r->overhead_ns += free_at[u] - t0;
        }
    }
    uint32_t left = n, take0 = n / (2u * P);
    take0 = take0 ? take0 : 1u;
    for (uint32_t k = n - take0; k < n; k++) { /* the caller's first batch: no claim */
        free_at[v] += lp->piece_ns[k];
    }
    left -= take0;
    while (left > 0) {
        uint32_t u = v; /* the earliest participant; ties: the caller, then by index */
        for (uint32_t x = 0; x < P; x++) {
            u = in[x] && free_at[x] < free_at[u] ? x : u;
        }
        uint32_t take = first[u] ? left / P + (left % P != 0) : left / (2u * P);
        take = take ? take : 1u;
        first[u] = false;
        free_at[u] += c->claim_ns;
        st->r->overhead_ns += c->claim_ns;
        for (uint32_t k = left - take; k < left; k++) {
            free_at[u] += lp->piece_ns[k];
        }
        left -= take;
    }
    double end = free_at[v];
    for (uint32_t u = 0; u < P; u++) {
        if (in[u] && u != v) {
            end = free_at[u] + c->notice_ns > end ? free_at[u] + c->notice_ns : end;
            st->w[u].next = free_at[u]; /* it looks for work again once it has left */
            st->w[u].idle_since = free_at[u];
        }
    }
    for (uint32_t k = 0; k < n; k++) {
        st->r->work_ns += lp->piece_ns[k];
    }
    return end;
}

/* Chunk `chunk` of system `sys` on worker v from `start` (sim.h): its measured time, or with
 * nested loops its own part first, then each loop. Adds the chunk's work to the result;
 * returns its duration. */
static double run_chunk(sim_state_t *st, uint32_t v, uint32_t sys, uint32_t chunk, double start,
                        bool join) {
    const wt_sim_system_t *s = &st->f->systems[sys];
    double d = chunk_dur(s, chunk);
    uint32_t k = 0;
    while (k < s->nloops && s->loops[k].chunk < chunk) {
        k++;
    }
    if (k == s->nloops || s->loops[k].chunk != chunk) {
        st->r->work_ns += d;
        return d;
    }
    uint32_t k0 = k;
    for (; k < s->nloops && s->loops[k].chunk == chunk; k++) {
        d -= s->loops[k].span_ns;
    }
    d = d > 0 ? d : 0;
    st->r->work_ns += d;
    double t = start + d;
    for (k = k0; k < s->nloops && s->loops[k].chunk == chunk; k++) {
        t = run_loop(st, v, &s->loops[k], t, join);
    }
    return t - start;
}

/* ---- serial and inline ------------------------------------------------------------------ */

/* Worker 0 runs the phase in run order. With one worker a chunk takes its measured time
 * (the loops ran inline in it); with more, its loops are joined by the idle workers. */
static void run_serial(sim_state_t *st, const wt_sim_phase_t *ph) {
    for (uint32_t v = 0; v < st->workers; v++) {
        st->w[v].job = UINT32_MAX;
        st->w[v].role = ROLE_IDLE;
        st->w[v].next = INFINITY;
    }
    for (uint32_t i = ph->first; i < ph->end; i++) {
        const wt_sim_system_t *s = &st->f->systems[i];
        for (uint32_t c = 0; c < s->nchunks; c++) {
            if (st->workers == 1) {
                st->t += s->chunk_ns[c];
                st->r->work_ns += s->chunk_ns[c];
            } else {
                st->t += run_chunk(st, 0, i, c, st->t, true);
                for (uint32_t v = 1; v < st->workers; v++) {
                    st->w[v].next = INFINITY; /* joiners are idle again */
                }
            }
            st->r->jobs++;
        }
    }
}

/* ---- flat: one parallel-for -------------------------------------------------------------- */

static void run_flat(sim_state_t *st, const wt_sim_phase_t *ph) {
    const wt_sim_costs_t *c = &st->f->costs;
    sim_worker_t *w = st->w;
    for (uint32_t v = 0; v < st->workers; v++) {
        w[v].next = v == 0 ? st->t : st->t + latency(st, v, st->t);
        if (v != 0) {
            st->r->overhead_ns += w[v].next - st->t;
        }
    }
    double end = st->t;
    for (uint32_t i = ph->first; i < ph->end; i++) {
        const wt_sim_system_t *s = &st->f->systems[i];
        for (uint32_t k = 0; k < s->nchunks; k++) {
            uint32_t v = 0;
            for (uint32_t u = 1; u < st->workers; u++) {
                v = w[u].next < w[v].next ? u : v;
            }
            w[v].next += c->claim_ns;
            w[v].next += run_chunk(st, v, i, k, w[v].next, false);
            st->r->overhead_ns += c->claim_ns;
            st->r->jobs++;
            end = w[v].next > end ? w[v].next : end;
        }
    }
    for (uint32_t v = 1; v < st->workers; v++) {
        w[v].idle_since = w[v].next; /* back to spinning once the loop has nothing left */
    }
    st->t = end;
}

/* ---- graph: jobs, deques, stealing --------------------------------------------------------- */

static void push_system(sim_state_t *st, uint32_t v, uint32_t sys) {
    sim_worker_t *w = &st->w[v];
    for (uint32_t j = st->jobs_base[sys]; j < st->jobs_base[sys + 1]; j++) {
        w->dq[w->tail++] = j;
    }
}

/* Wake or notify every idle worker but `except` for work published at `now`. */
static void publish(sim_state_t *st, uint32_t except, double now) {
    for (uint32_t v = 0; v < st->workers; v++) {
        if (v != except && st->w[v].job == UINT32_MAX && isinf(st->w[v].next)) {
            st->w[v].next = now + latency(st, v, now);
            st->r->overhead_ns += st->w[v].next - now;
        }
    }
}

/* Worker v at time `now`: take a job (own deque newest first, else steal the oldest of the
 * lowest-indexed non-empty deque) and run it, or go idle. */
static void find_work(sim_state_t *st, uint32_t v, double now) {
    const wt_sim_costs_t *c = &st->f->costs;
    sim_worker_t *w = &st->w[v];
    uint32_t job = UINT32_MAX;
    double cost = c->job_ns;
    if (w->tail > w->head) {
        job = w->dq[--w->tail];
    } else {
        for (uint32_t u = 0; u < st->workers && job == UINT32_MAX; u++) {
            sim_worker_t *o = &st->w[u];
            if (u != v && o->tail > o->head) {
                job = o->dq[o->head++];
                cost += c->steal_ns;
                st->r->steals++;
            }
        }
    }
    if (job == UINT32_MAX) {
        w->job = UINT32_MAX;
        w->next = INFINITY;
        w->idle_since = now;
        return;
    }
    uint32_t sys = st->job_sys[job];
    w->job = job;
    w->next = now + cost; /* set before the loops look for idle workers */
    w->next += run_chunk(st, v, sys, job - st->jobs_base[sys], now + cost, true);
    st->r->overhead_ns += cost;
    st->r->jobs++;
}

/* Number the phase's jobs (one per chunk, one for a system without chunks) and reset each
 * system's counts of predecessors and jobs left; returns the jobs. */
static uint32_t phase_jobs(sim_state_t *st, const wt_sim_phase_t *ph) {
    const wt_sim_frame_t *f = st->f;
    uint32_t njobs = 0;
    for (uint32_t i = ph->first; i < ph->end; i++) {
        st->jobs_base[i] = njobs;
        for (uint32_t k = 0; k < jobs_of(&f->systems[i]); k++) {
            st->job_sys[njobs + k] = i;
        }
        njobs += jobs_of(&f->systems[i]);
        st->pending[i] = f->systems[i].npred;
        st->left[i] = jobs_of(&f->systems[i]);
    }
    st->jobs_base[ph->end] = njobs;
    return njobs;
}

static int run_graph(sim_state_t *st, const wt_sim_phase_t *ph) {
    const wt_sim_frame_t *f = st->f;
    uint32_t njobs = phase_jobs(st, ph);
    for (uint32_t v = 0; v < st->workers; v++) {
        st->w[v].head = st->w[v].tail = 0;
        st->w[v].job = UINT32_MAX;
        st->w[v].next = INFINITY;
    }
    for (uint32_t i = ph->first; i < ph->end; i++) { /* the roots, submitted by worker 0 */
        if (st->pending[i] == 0) {
            push_system(st, 0, i);
        }
    }
    st->w[0].next = st->t;
    publish(st, 0, st->t);
    uint32_t done = 0, last = 0;
    double finish = st->t;
    while (done < njobs) {
        uint32_t v = 0;
        for (uint32_t u = 1; u < st->workers; u++) {
            v = st->w[u].next < st->w[v].next ? u : v;
        }
        double now = st->w[v].next;
        if (isinf(now)) {
            return -1; /* nothing runs and nothing is left to release: malformed */
        }
        if (st->w[v].job != UINT32_MAX) {
            uint32_t sys = st->job_sys[st->w[v].job];
            done++;
            last = v;
            finish = now;
            if (--st->left[sys] == 0) {
                bool published = false;
                for (uint32_t k = st->succ_first[sys]; k < st->succ_first[sys + 1]; k++) {
                    uint32_t u = st->succ[k];
                    if (--st->pending[u] == 0) {
                        push_system(st, v, u);
                        published = true;
                    }
                }
                if (published) {
                    publish(st, v, now);
                }
            }
        }
        find_work(st, v, now);
    }
    /* The calling thread sees the phase's last counter reach zero. */
    st->t = last == 0 ? finish : finish + f->costs.notice_ns;
    return 0;
}

/* ---- ready: a ready list of units, claimed in runs ------------------------------------- */

static double unit_dur(const sim_state_t *st, uint32_t job) {
    uint32_t sys = st->job_sys[job];
    return chunk_dur(&st->f->systems[sys], job - st->jobs_base[sys]);
}

/* Publish the units of `sys` from its chunk c0 on; returns their work. */
static double ready_publish(sim_state_t *st, uint32_t sys, uint32_t c0) {
    double work = 0;
    for (uint32_t j = st->jobs_base[sys] + c0; j < st->jobs_base[sys + 1]; j++) {
        st->slots[st->tail++] = j;
        work += unit_dur(st, j);
    }
    return work;
}

/* Start job `job` on worker v at `now` (after `cost` of overhead). A chunk with nested loops
 * runs its own part first (its measured time less the loops' spans); its loops then open one
 * after the other as events (ready_stage). */
static void ready_start(sim_state_t *st, uint32_t v, uint32_t job, double now, double cost) {
    uint32_t sys = st->job_sys[job], chunk = job - st->jobs_base[sys];
    const wt_sim_system_t *s = &st->f->systems[sys];
    sim_worker_t *w = &st->w[v];
    uint32_t k = 0;
    while (k < s->nloops && s->loops[k].chunk < chunk) {
        k++;
    }
    double d = chunk_dur(s, chunk);
    w->kfirst = k;
    for (w->kcount = 0; k < s->nloops && s->loops[k].chunk == chunk; k++, w->kcount++) {
        d -= s->loops[k].span_ns;
    }
    d = d > 0 ? d : 0;
    w->staged = w->kcount > 0;
    w->stage = 0;
    w->job = job;
    w->next = now + cost + d;
    st->r->work_ns += d;
    st->r->overhead_ns += cost;
    st->r->jobs++;
}

/* Claim a batch of v's open loop L at `now` (sim.h: the caller's first batch takes the top
 * max(1, n / 2P) without a claim; a joiner's first claim ceil(left / P), later ones
 * max(1, left / 2P), claim_ns each); v runs it until its `next`. */
static void loop_claim(sim_state_t *st, uint32_t v, sim_open_loop_t *L, uint32_t take, double now,
                       double cost) {
    sim_worker_t *w = &st->w[v];
    double d = 0;
    for (uint32_t k = L->left - take; k < L->left; k++) {
        d += L->loop->piece_ns[k];
    }
    L->left -= take;
    L->running++;
    w->batch = take;
    w->next = now + cost + d;
    st->r->work_ns += d;
    st->r->overhead_ns += cost;
}

/* Idle worker u (no unit, in no loop) joins the first open loop with pieces left, arriving
 * at `at` (or when it was already due to look for work, if later); false: none is open. */
static bool loop_join(sim_state_t *st, uint32_t u, double at) {
    for (uint32_t c = 0; c < st->workers; c++) {
        const sim_open_loop_t *L = &st->open[c];
        if (L->loop && L->left > 0) {
            sim_worker_t *w = &st->w[u];
            double arrive = !isinf(w->next) && w->next > at ? w->next : at;
            w->lp = c;
            w->batch = 0;
            w->lfirst = true;
            st->r->overhead_ns += arrive - at;
            w->next = arrive;
            return true;
        }
    }
    return false;
}

/* Worker v (running a staged chunk) at `now`: open the chunk's next loop, with every idle
 * worker joining after its latency; returns false when the chunk has no loop left (its unit
 * is done). */
static bool ready_stage(sim_state_t *st, uint32_t v, double now) {
    sim_worker_t *w = &st->w[v];
    if (w->stage == w->kcount) {
        w->staged = false;
        return false;
    }
    const wt_sim_system_t *s = &st->f->systems[st->job_sys[w->job]];
    const wt_sim_loop_t *lp = &s->loops[w->kfirst + w->stage++];
    sim_open_loop_t *L = &st->open[v];
    *L = (sim_open_loop_t){lp, lp->npieces, 0};
    w->lp = v;
    if (lp->npieces == 0) {
        w->batch = 0;
        w->next = now;
        return true;
    }
    uint32_t take0 = lp->npieces / (2u * st->workers);
    loop_claim(st, v, L, take0 ? take0 : 1u, now, 0);
    for (uint32_t u = 0; u < st->workers && L->left > 0; u++) {
        sim_worker_t *x = &st->w[u];
        if (u != v && x->job == UINT32_MAX && x->role == ROLE_IDLE && x->lp == UINT32_MAX) {
            (void)loop_join(st, u, now + latency(st, u, now));
        }
    }
    return true;
}

/* Drain jobs for `units` units of `work` just published, as the runtime's recruit
 * (src/sched/ready.c): k, the largest with k x handout_ns < work x (P - 1) / P, at most
 * `units` and P - active, handed out at once. Each is told to the lowest-latency idle worker
 * not yet told of one (ties: lowest index), if any; one no worker is told of is run by a
 * waiting worker 0. */
static void ready_recruit(sim_state_t *st, double work, uint32_t units, double now) {
    const wt_sim_costs_t *c = &st->f->costs;
    double saved = work * (double)(st->workers - 1u) / (double)st->workers;
    uint32_t k = units < st->workers - 1u ? units : st->workers - 1u;
    if (c->handout_ns > 0) {
        double q = saved / c->handout_ns; /* k x D < saved: k < q */
        if (q <= (double)k) {
            uint32_t f = q > 0 ? (uint32_t)q : 0u;
            k = (double)f < q ? f : (f ? f - 1u : 0u);
        }
    }
    if (st->active >= st->workers) {
        return;
    }
    k = st->workers - st->active < k ? st->workers - st->active : k;
    st->active += k;
    st->queued += k;
    st->outstanding += k;
    for (uint32_t i = 0; i < k; i++) {
        /* a spinning worker notices first; a sleeping one only if none spins (the runtime's
         * submit wakes a sleeper only when no spinning worker took the job) */
        uint32_t pick = UINT32_MAX;
        for (uint32_t v = 1; v < st->workers; v++) {
            sim_worker_t *w = &st->w[v];
            if (w->role == ROLE_IDLE && isinf(w->next) &&
                (pick == UINT32_MAX || latency(st, v, now) < latency(st, pick, now))) {
                pick = v;
            }
        }
        if (pick != UINT32_MAX) {
            st->w[pick].next = now + latency(st, pick, now);
            st->r->overhead_ns += st->w[pick].next - now;
            continue;
        }
        sim_worker_t *w0 = &st->w[0];
        if (w0->role == ROLE_WAITING && isinf(w0->next)) { /* its wait runs the job */
            w0->next = now + c->notice_ns + c->job_ns + c->steal_ns;
            st->r->overhead_ns += w0->next - now;
        }
    }
}

/* Worker v has nothing running at `now`: claim a run of published units and start the first,
 * or leave (a drain job ends; worker 0 starts waiting). */
static void ready_claim(sim_state_t *st, uint32_t v, double now) {
    const wt_sim_costs_t *c = &st->f->costs;
    sim_worker_t *w = &st->w[v];
    w->job = UINT32_MAX;
    if (w->run_lo < w->run_hi) {
        ready_start(st, v, st->slots[w->run_lo++], now, 0);
        return;
    }
    /* before each claim a participant helps a loop another worker's unit has open, as the
     * runtime's drain does (src/sched/ready.c: weft_jobs_help_loop); it comes back here when
     * the loop has nothing left to claim */
    if (loop_join(st, v, now + c->notice_ns)) {
        return;
    }
    if (st->head < st->tail) {
        uint32_t want = (st->tail - st->head) / (2u * st->workers), b = 0, same = 0;
        want = want ? want : 1u;
        for (uint32_t prev = UINT32_MAX; b < want; b++) { /* the runtime's weft__ready_take */
            uint32_t sys = st->job_sys[st->slots[st->head + b]];
            same = sys == prev ? same + 1u : 1u;
            uint32_t n = jobs_of(&st->f->systems[sys]);
            if (same > (n + st->workers - 1u) / st->workers) {
                break; /* at most ceil(n / P) of one system's units in a row */
            }
            prev = sys;
        }
        want = b;
        w->run_lo = st->head;
        w->run_hi = st->head + want;
        st->head += want;
        ready_start(st, v, st->slots[w->run_lo++], now, c->claim_ns);
        return;
    }
    st->active--;
    if (w->role == ROLE_DRAIN) {
        st->outstanding--;
    }
    if (v != 0) {
        w->role = ROLE_IDLE;
        w->idle_since = now;
        w->next = st->queued ? now : INFINITY; /* a drain job no one has taken yet */
        if (st->outstanding == 0 && st->w[0].role == ROLE_WAITING) {
            st->w[0].next = now + c->notice_ns; /* worker 0 sees the last drain end */
        }
        /* an idle worker looks at the loops others run before the deques (the runtime's
         * offers and board): it joins one, still spinning */
        (void)loop_join(st, v, now + c->notice_ns);
        return;
    }
    w->role = ROLE_WAITING; /* worker 0: as the caller, or after a drain job run in its wait */
    w->next = st->outstanding == 0 ? now : st->queued ? now + c->job_ns : INFINITY;
}

/* Worker v's unit ended at `now`: count it, release successors, go on. */
static void ready_finish(sim_state_t *st, uint32_t v, double now) {
    uint32_t sys = st->job_sys[st->w[v].job];
    uint32_t chain = UINT32_MAX;
    if (--st->left[sys] == 0) {
        double handed = 0;
        uint32_t tail0 = st->tail;
        for (uint32_t k = st->succ_first[sys]; k < st->succ_first[sys + 1]; k++) {
            uint32_t u = st->succ[k];
            if (--st->pending[u] != 0) {
                continue;
            }
            if (chain == UINT32_MAX) {
                chain = st->jobs_base[u];
                handed += ready_publish(st, u, 1);
            } else {
                handed += ready_publish(st, u, 0);
            }
        }
        if (handed > 0) {
            ready_recruit(st, handed, st->tail - tail0, now);
        }
    }
    if (chain != UINT32_MAX) {
        ready_start(st, v, chain, now, 0);
    } else {
        ready_claim(st, v, now);
    }
}

/* Worker v, in open loop w->lp, at `now`: its batch ended (or it arrives): count it off,
 * claim the next or leave. The caller leaves only when every batch was counted off (it
 * notices another participant's last one notice_ns late); a joiner that leaves goes idle
 * (and may join another open loop). Returns true when v's staged unit is done. */
static bool ready_loop_event(sim_state_t *st, uint32_t v, double now) {
    const wt_sim_costs_t *c = &st->f->costs;
    sim_worker_t *w = &st->w[v];
    const uint32_t caller = w->lp;
    sim_open_loop_t *L = &st->open[caller];
    if (w->batch > 0) {
        L->running--;
        w->batch = 0;
    }
    if (L->left > 0) {
        uint32_t P = st->workers;
        uint32_t take = w->lfirst ? L->left / P + (L->left % P != 0) : L->left / (2u * P);
        w->lfirst = false;
        loop_claim(st, v, L, take ? take : 1u, now, c->claim_ns);
        return false;
    }
    sim_worker_t *cw = &st->w[caller];
    if (v == caller) {
        if (L->running > 0) {
            w->next = INFINITY; /* waits for the joiners' last batches */
            return false;
        }
        L->loop = NULL;
        w->lp = UINT32_MAX;
        return !ready_stage(st, v, now);
    }
    w->lp = UINT32_MAX;
    if (L->running == 0 && cw->lp == caller && cw->batch == 0 && isinf(cw->next)) {
        cw->next = now + c->notice_ns; /* the caller sees the last batch end */
    }
    if (w->role == ROLE_DRAIN || w->role == ROLE_MAIN) {
        ready_claim(st, v, now); /* a participant that helped between claims claims again */
        return false;
    }
    w->idle_since = now;
    w->next = st->queued ? now : INFINITY;
    if (!st->queued) {
        (void)loop_join(st, v, now + c->notice_ns);
    }
    return false;
}

static int run_ready(sim_state_t *st, const wt_sim_phase_t *ph) {
    const wt_sim_frame_t *f = st->f;
    const wt_sim_costs_t *c = &f->costs;
    uint32_t njobs = phase_jobs(st, ph);
    st->head = st->tail = 0;
    st->queued = st->outstanding = 0;
    st->active = 1; /* worker 0 */
    for (uint32_t v = 0; v < st->workers; v++) {
        st->w[v].job = UINT32_MAX;
        st->w[v].next = INFINITY;
        st->w[v].role = ROLE_IDLE;
        st->w[v].run_lo = st->w[v].run_hi = 0;
        st->w[v].lp = UINT32_MAX;
        st->w[v].batch = 0;
        st->w[v].staged = false;
        st->open[v].loop = NULL;
    }
    double work = 0;
    for (uint32_t i = ph->first; i < ph->end; i++) {
        if (st->pending[i] == 0) {
            work += ready_publish(st, i, 0);
        }
    }
    ready_recruit(st, work, st->tail, st->t);
    st->w[0].role = ROLE_MAIN;
    st->w[0].next = st->t;
    uint32_t done = 0;
    for (;;) {
        uint32_t v = 0;
        for (uint32_t u = 1; u < st->workers; u++) {
            v = st->w[u].next < st->w[v].next ? u : v;
        }
        double now = st->w[v].next;
        sim_worker_t *w = &st->w[v];
        if (isinf(now)) {
            return -1; /* nothing runs and nothing is left to release: malformed */
        }
        if (w->lp != UINT32_MAX) { /* a loop's batch ended, or a joiner arrives */
            if (ready_loop_event(st, v, now)) {
                done++;
                ready_finish(st, v, now);
            }
        } else if (w->job != UINT32_MAX && w->staged && ready_stage(st, v, now)) {
            continue; /* its own part ended: its next loop opened */
        } else if (w->job != UINT32_MAX) {
            done++;
            ready_finish(st, v, now);
        } else if (w->role == ROLE_DRAIN || w->role == ROLE_MAIN) {
            ready_claim(st, v, now); /* worker 0 at the start, or a drain job just taken */
        } else if (w->role == ROLE_WAITING) {
            if (st->outstanding == 0) {
                if (st->head == st->tail) {
                    if (done != njobs) {
                        return -1;
                    }
                    st->t = now;
                    break;
                }
                w->role = ROLE_MAIN;
                st->active++;
                ready_claim(st, v, now);
            } else if (st->queued) { /* it runs a drain job no worker has taken */
                st->queued--;
                w->role = ROLE_DRAIN; /* counted in active when it was handed out */
                ready_claim(st, v, now);
            } else {
                w->next = INFINITY;
            }
        } else if (st->queued) { /* an idle worker takes a drain job from another deque */
            st->queued--;
            w->role = ROLE_DRAIN;
            double cost = c->job_ns + c->steal_ns;
            st->r->overhead_ns += cost;
            st->r->steals++;
            w->next = now + cost;
            w->job = UINT32_MAX;
            /* it claims at next: handled as a draining worker with nothing running */
        } else {
            w->next = INFINITY; /* told of a drain job someone else took */
            w->idle_since = now;
            (void)loop_join(st, v, now + c->notice_ns);
        }
    }
    for (uint32_t v = 1; v < st->workers; v++) {
        st->w[v].next = INFINITY; /* a joiner still on its way to a closed loop stops */
        st->w[v].role = ROLE_IDLE;
        st->w[v].lp = UINT32_MAX;
    }
    return 0;
}

/* ---- the apply -------------------------------------------------------------------------- */

/* The phase's apply from st->t (sim.h): serial, or its placed part as lanes. */
static void run_apply(sim_state_t *st, const wt_sim_phase_t *ph) {
    const wt_sim_costs_t *c = &st->f->costs;
    st->r->apply_ns += ph->apply_ns;
    if (st->workers == 1 || ph->placed_ns <= 0 || st->f->apply_measured) {
        st->t += ph->apply_ns;
        return;
    }
    double rest = ph->apply_ns - ph->placed_ns;
    st->t += rest > 0 ? rest : 0;
    uint32_t L = st->workers < 64u ? st->workers : 64u;
    double R = ph->replay_ns, W = ph->walk_ns;
    /* lead, solved from the recorded split: main = (R - (lanes - 1) lead) / lanes */
    double lead =
        ph->lanes > 1 ? (R - (double)ph->lanes * ph->main_lane_ns) / (ph->lanes - 1.0) : W;
    lead = lead > 0 ? lead : 0;
    double mine = (R - (double)(L - 1u) * lead) / (double)L;
    mine = mine > 0 ? mine : 0;
    mine = L == 1 ? R : mine;
    double share = L > 1 ? (R - mine) / (double)(L - 1u) : 0;
    double t0 = st->t, walk_end = t0 + W, end = walk_end + mine;
    for (uint32_t l = 0; l + 1u < L; l++) {
        uint32_t v = l + 1u;
        double start = t0 + fmax(latency(st, v, t0) + c->job_ns + c->steal_ns, ph->lane_delay_ns);
        double lane_end = start + share > walk_end ? start + share : walk_end;
        st->r->overhead_ns += start - t0;
        st->r->jobs++;
        st->w[v].idle_since = lane_end;
        end = lane_end + c->notice_ns > end ? lane_end + c->notice_ns : end;
    }
    st->t = end;
}

/* ---- the frame ------------------------------------------------------------------------- */

static int setup(sim_state_t *st, const wt_sim_frame_t *f, uint32_t workers) {
    uint32_t n = f->nsystems, njobs = 0, nsucc = 0;
    for (uint32_t i = 0; i < n; i++) {
        njobs += jobs_of(&f->systems[i]);
        nsucc += f->systems[i].npred;
    }
    st->w = calloc(workers, sizeof *st->w);
    st->jobs_base = calloc((size_t)n + 1, sizeof *st->jobs_base);
    st->job_sys = calloc((size_t)njobs + 1, sizeof *st->job_sys);
    st->pending = calloc((size_t)n + 1, sizeof *st->pending);
    st->left = calloc((size_t)n + 1, sizeof *st->left);
    st->succ_first = calloc((size_t)n + 1, sizeof *st->succ_first);
    st->succ = calloc((size_t)nsucc + 1, sizeof *st->succ);
    st->slots = calloc((size_t)njobs + 1, sizeof *st->slots);
    st->open = calloc(workers, sizeof *st->open);
    if (!st->w || !st->open || !st->jobs_base || !st->job_sys || !st->pending || !st->left ||
        !st->succ_first || !st->succ || !st->slots) {
        return -1;
    }
    for (uint32_t v = 0; v < workers; v++) {
        st->w[v].dq = calloc((size_t)njobs + 1, sizeof *st->w[v].dq);
        if (!st->w[v].dq) {
            return -1;
        }
        st->w[v].idle_since = -INFINITY; /* asleep before the frame: woken by its first work */
    }
    /* successors as CSR, in run order (the order the runtime's counters release them) */
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < f->systems[i].npred; k++) {
            st->succ_first[f->systems[i].pred[k] + 1]++;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        st->succ_first[i + 1] += st->succ_first[i];
    }
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < f->systems[i].npred; k++) {
            uint32_t p = f->systems[i].pred[k];
            st->succ[st->succ_first[p] + st->pending[p]++] = i;
        }
    }
    return 0;
}

static void teardown(sim_state_t *st) {
    if (st->w) {
        for (uint32_t v = 0; v < st->workers; v++) {
            free(st->w[v].dq);
        }
    }
    free(st->w);
    free(st->jobs_base);
    free(st->job_sys);
    free(st->pending);
    free(st->left);
    free(st->succ_first);
    free(st->succ);
    free(st->slots);
    free(st->open);
}

int wt_sim_run(const wt_sim_frame_t *frame, uint32_t workers, wt_sim_result_t *out) {
    if (!frame || !out || workers == 0 || workers > WT_SIM_MAX_WORKERS ||
        (frame->nsystems && !frame->systems) || (frame->nphases && !frame->phases) ||
        check_frame(frame) != 0) {
        return -1;
    }
    memset(out, 0, sizeof *out);
    sim_state_t st = {.f = frame, .workers = workers, .r = out};
    int rc = setup(&st, frame, workers);
    st.t = frame->costs.frame_ns;
    for (uint32_t p = 0; rc == 0 && p < frame->nphases; p++) {
        const wt_sim_phase_t *ph = &frame->phases[p];
        if (workers == 1 || ph->mode == WT_SIM_INLINE) {
            run_serial(&st, ph);
        } else if (ph->mode == WT_SIM_FLAT) {
            run_flat(&st, ph);
        } else if (ph->mode == WT_SIM_READY) {
            rc = run_ready(&st, ph);
        } else {
            rc = run_graph(&st, ph);
        }
        run_apply(&st, ph);
    }
    out->frame_ns = st.t;
    teardown(&st);
    return rc;
}

int wt_sim_bound(const wt_sim_frame_t *frame, wt_sim_bound_t *out) {
    if (!frame || !out || (frame->nsystems && !frame->systems) ||
        (frame->nphases && !frame->phases) || check_frame(frame) != 0) {
        return -1;
    }
    double *finish = calloc((size_t)frame->nsystems + 1, sizeof *finish);
    if (!finish) {
        return -1;
    }
    *out = (wt_sim_bound_t){.serial_ns = frame->costs.frame_ns};
    for (uint32_t p = 0; p < frame->nphases; p++) {
        const wt_sim_phase_t *ph = &frame->phases[p];
        double longest = 0;
        for (uint32_t i = ph->first; i < ph->end; i++) {
            const wt_sim_system_t *s = &frame->systems[i];
            double d = 0, start = 0;
            for (uint32_t c = 0; c < s->nchunks; c++) {
                double cd = s->chunk_ns[c]; /* its loops' pieces all at once */
                for (uint32_t k = 0; k < s->nloops; k++) {
                    const wt_sim_loop_t *lp = &s->loops[k];
                    double longest_piece = 0;
                    for (uint32_t q = 0; lp->chunk == c && q < lp->npieces; q++) {
                        longest_piece = fmax(longest_piece, lp->piece_ns[q]);
                    }
                    cd -= lp->chunk == c ? lp->span_ns - longest_piece : 0;
                }
                cd = fmax(cd, 0);
                d = ph->mode == WT_SIM_INLINE ? d + cd : fmax(d, cd);
            }
            for (uint32_t k = 0; k < s->npred; k++) {
                start = fmax(start, finish[s->pred[k]]);
            }
            /* an inline phase runs its systems one after the other */
            finish[i] = (ph->mode == WT_SIM_INLINE ? longest : start) + d;
            longest = fmax(longest, finish[i]);
        }
        out->path_ns += longest;
        /* a placed apply's lanes all at once: its walk stays */
        out->serial_ns += ph->placed_ns > 0 && !frame->apply_measured
                              ? fmax(ph->apply_ns - ph->placed_ns, 0) + ph->walk_ns
                              : ph->apply_ns;
    }
    free(finish);
    return 0;
}
