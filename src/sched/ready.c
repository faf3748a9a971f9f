/* ready.c: the ready-list run of a graph phase (see ready.h). */
#include "system.h"

#include "jobs/platform/report.h"

static uint64_t slot_of(uint32_t pos, uint32_t chunk) { return ((uint64_t)pos + 1u) << 32 | chunk; }

static uint32_t units_of(const weft__system_t *sys) { return sys->nchunks ? sys->nchunks : 1u; }

/* Estimated ns of `n` units of sys this frame (phase_cost.h); unknown counts as large. */
static double work_of(const weft__system_t *sys, uint32_t n) {
    if (!sys->cost.known) {
        return 1e30;
    }
    return (double)sys->cost.rows * sys->cost.ns_per_row * n / units_of(sys);
}

/* Publish units [c0, units) of the system at run position `pos`; returns their estimated
 * work and adds their number to *units. Slots are reserved with one RMW; the total never
 * exceeds the run's units, so the reservation stays within slots. */
static double publish(weft__ready_t *r, uint32_t pos, uint32_t c0, uint32_t *units) {
    weft__system_t *sys = r->s->systems[r->s->graph.order[pos]];
    uint32_t n = units_of(sys) - c0;
    /* before the slots: once published, a deferred system's claimer prepares it (writes its
     * cost rows and chunk count) */
    double work = work_of(sys, n);
    *units += n;
    /* relaxed: a claimer trusts only the slots themselves (acquire, below) */
    uint32_t at = weft_atomic_fetch_add_relaxed(&r->tail, n);
    weft_assert_internal(at + n <= r->cap);
    for (uint32_t k = 0; k < n; k++) {
        /* release: pairs with claim()'s acquire; the unit's inputs (its predecessors' writes,
         * the main thread's prepare) happen before its run */
        weft_atomic_store_release(&r->slots[at + k], slot_of(pos, c0 + k));
    }
    return work;
}

/* Drain jobs handed out per submit call (a stack array; more go in further calls). */
#define RECRUIT_BATCH 32u

/* Hand out drain jobs for `units` units of estimated `work` just published: k of them, the
 * most whose cost that work repays, in one submit. Splitting work W over the P workers
 * saves at most W x (P - 1) / P; each drain job is charged the phase's whole measured
 * dispatch cost D (0 while unknown), so k is the largest with k x D < W x (P - 1) / P,
 * capped by the units (a job more finds nothing to claim) and by the P - active free
 * participant places (the main thread waiting on the drain counter is not active: it runs a
 * job it steals). At 2 workers that is today's one job when W x (P - 1) / P > D. The k
 * places are reserved with one CAS and given back for a submit that fails. */
static void recruit(weft__ready_t *r, double work, uint32_t units) {
    double saved = work * (double)(r->workers - 1u) / (double)r->workers;
    uint32_t want = units < r->workers - 1u ? units : r->workers - 1u;
    if (r->handout_ns > 0) {
        double q = saved / r->handout_ns; /* k x D < saved: k < q */
        if (q <= (double)want) {
            uint32_t f = q > 0 ? (uint32_t)q : 0u;
            want = (double)f < q ? f : (f ? f - 1u : 0u);
        }
    }
    if (want == 0) {
        return;
    }
    uint32_t h = weft_atomic_load_relaxed(&r->active), k;
    do {
        if (h >= r->workers) {
            return;
        }
        k = r->workers - h < want ? r->workers - h : want;
        /* relaxed: a bound on participants, ordering nothing (the counter orders their work) */
    } while (!weft_atomic_cas_weak_relaxed(&r->active, &h, h + k));
    weft_job_desc_t descs[RECRUIT_BATCH];
    for (uint32_t i = 0; i < k && i < RECRUIT_BATCH; i++) {
        descs[i] = r->drain;
    }
    for (uint32_t done = 0; done < k;) {
        uint32_t n = k - done < RECRUIT_BATCH ? k - done : RECRUIT_BATCH;
        if (weft_job_submit(r->jobs, descs, n, &r->drains) != WEFT_OK) {
            /* nothing of this call was submitted: the participants there are do it */
            (void)weft_atomic_fetch_sub_relaxed(&r->active, k - done);
            return;
        }
        done += n;
    }
}

/* Units of the system at run position `pos` (the cap's lookup; weft__ready_take). */
static uint32_t units_at(const void *ctx, uint32_t pos) {
    const struct weft_sched *s = ctx;
    return units_of(s->systems[s->graph.order[pos]]);
}

uint32_t weft__ready_take(const weft_atomic_u64 *slots, uint32_t h, uint32_t t, uint32_t workers,
                          uint32_t (*units)(const void *ctx, uint32_t pos), const void *ctx) {
    uint32_t want = (t - h) / (2u * workers);
    want = want ? want : 1u;
    uint32_t b = 0, same = 0, cap = 0;
    uint64_t prev = 0;
    while (b < want) {
        /* acquire: pairs with publish()'s release store */
        uint64_t v = weft_atomic_load_acquire(&slots[h + b]);
        if (v == 0) {
            break;
        }
        if (v >> 32 != prev >> 32) { /* another system's unit */
            same = 0;
            cap = 0;
        }
        if (++same > 1) {
            if (cap == 0) { /* looked up only when a second unit of the system follows */
                cap = (units(ctx, (uint32_t)(v >> 32) - 1u) + workers - 1u) / workers;
            }
            if (same > cap) {
                break;
            }
        }
        prev = v;
        b++;
    }
    return b;
}

/* Claim a run of published slots [*lo, *hi) (weft__ready_take: a share of what is reserved,
 * at most ceil(units / P) of one system's units in a row). */
static bool claim(weft__ready_t *r, uint32_t *lo, uint32_t *hi) {
    uint32_t h = weft_atomic_load_relaxed(&r->head);
    for (;;) {
        uint32_t t = weft_atomic_load_relaxed(&r->tail);
        if (h >= t) {
            return false;
        }
        uint32_t b = weft__ready_take(r->slots, h, t, r->workers, units_at, r->s);
        if (b == 0) {
            return false;
        }
        /* relaxed: the slots were read with acquire above and never change in a run */
        if (weft_atomic_cas_weak_relaxed(&r->head, &h, h + b)) {
            *lo = h;
            *hi = h + b;
            return true;
        }
    }
}

/* Run the unit (pos, chunk), then, while finishing a system leaves a successor ready, one of
 * them: a chain runs on this thread. Returns the units run. */
static uint32_t run_from(weft__ready_t *r, uint32_t pos, uint32_t chunk, uint32_t worker,
                         double *work, bool *known) {
    struct weft_sched *s = r->s;
    uint32_t ran = 0;
    for (;;) {
        weft__system_t *sys = s->systems[s->graph.order[pos]];
        if (r->deferred) { /* its one unit: prepared here, its lines stay on this core */
            weft__sched_prepare_deferred(s, sys, r->tick0 + 2u * (pos - r->first), work, known);
        }
        if (sys->nchunks != 0) {
            weft__sched_run_chunk(s, sys, chunk, worker);
        }
        ran++;
        /* acq_rel: the last chunk's finisher sees every other chunk's writes and passes
         * them on to the successors it releases */
        if (sys->nchunks > 1 && weft_atomic_fetch_sub_acq_rel(&sys->left, 1u) != 1u) {
            return ran;
        }
        uint32_t next = UINT32_MAX, units = 0;
        double handed = 0;
        for (uint32_t k = 0; k < sys->nsucc; k++) {
            uint32_t q = sys->succ[k];
            weft__system_t *qs = s->systems[s->graph.order[q]];
            /* acq_rel: as for left; a single predecessor needs no count */
            if (qs->npreds_in > 1) {
                if (weft_atomic_fetch_sub_acq_rel(&qs->pending, 1u) != 1u) {
                    continue;
                }
                /* relaxed: the last to count it down, so the only one touching it until the
                 * next run, which the drain counter's wait orders after this store; a
                 * deferred run writes no counts at its start */
                weft_atomic_store_relaxed(&qs->pending, qs->npreds_in);
            }
            if (next == UINT32_MAX) {
                next = q; /* run here next; its other chunks go out */
                if (units_of(qs) > 1) {
                    handed += publish(r, q, 1, &units);
                }
            } else {
                handed += publish(r, q, 0, &units);
            }
        }
        if (handed > 0) {
            recruit(r, handed, units);
        }
        if (next == UINT32_MAX) {
            return ran;
        }
        pos = next;
        chunk = 0;
    }
}

/* Claim and run until nothing published is left at the head. Before each claim, a loop
 * another unit has open (a weft_parallel_for nested in a system's chunk: the hierarchy's
 * level passes) is helped until it has nothing left to claim: its unit has started and holds
 * back its successors, a published unit has not, and otherwise only workers that find the
 * list empty would join it. */
static uint32_t drain(weft__ready_t *r, uint32_t worker, double *work, bool *known) {
    uint32_t lo, hi, ran = 0;
    for (;;) {
        while (weft_jobs_help_loop(r->jobs, worker)) {
        }
        if (!claim(r, &lo, &hi)) {
            break;
        }
        for (uint32_t i = lo; i < hi; i++) {
            uint64_t v = weft_atomic_load_relaxed(&r->slots[i]); /* acquired by claim() */
            ran += run_from(r, (uint32_t)(v >> 32) - 1u, (uint32_t)v, worker, work, known);
        }
    }
    return ran;
}

static void drain_job(void *arg, const weft_job_ctx_t *ctx) {
    weft__ready_t *r = arg;
    double work = 0;
    bool known = true;
    uint32_t ran = drain(r, ctx->worker, &work, &known);
    if (r->deferred) {
        /* relaxed: read by the main thread after the drain counter's wait (acquire) */
        (void)weft_atomic_fetch_add_relaxed(&r->work_ns, (uint64_t)(work + 0.5));
        if (!known) {
            weft_atomic_store_relaxed(&r->unknown, 1u);
        }
    }
    weft_jobs_count_items(r->jobs, ctx->worker, ran);
    /* relaxed: read by the main thread after the drain counter's wait (acquire) */
    (void)weft_atomic_fetch_add_relaxed(&r->ran, ran);
    (void)weft_atomic_fetch_sub_relaxed(&r->active, 1u);
}

bool weft__ready_begin(struct weft_sched *s, uint32_t first, uint32_t end, bool want) {
    weft__ready_t *r = &s->ready;
    r->noted_first = UINT32_MAX;
    r->deferred = false;
    if (!want) {
        return false;
    }
    if (end - first > r->roots_cap) {
        void *roots = r->roots;
        if (!weft__sched_scratch(s->alloc, &roots, &r->roots_cap, end - first, sizeof *r->roots)) {
            return false;
        }
        r->roots = roots;
    }
    r->noted_first = first;
    r->nroots = 0;
    r->units = 0;
    r->root_work = 0;
    return true;
}

void weft__ready_note(struct weft_sched *s, uint32_t pos, weft__system_t *sys) {
    weft__ready_t *r = &s->ready;
    uint32_t n = units_of(sys);
    r->units += n;
    /* relaxed: published to the participants by the drain jobs' submission and the slots'
     * release stores. Only a changed count is stored (a one-chunk system with one
     * predecessor never counts down): the line stays clean for the worker (system.h). */
    if (weft_atomic_load_relaxed(&sys->left) != n) {
        weft_atomic_store_relaxed(&sys->left, n);
    }
    if (weft_atomic_load_relaxed(&sys->pending) != sys->npreds_in) {
        weft_atomic_store_relaxed(&sys->pending, sys->npreds_in);
    }
    if (sys->npreds_in == 0) {
        weft_assert_internal(r->nroots < r->roots_cap);
        r->roots[r->nroots++] = (uint64_t)pos << 32 | n;
        r->root_work += work_of(sys, n);
    }
}

bool weft__ready_defer(struct weft_sched *s, uint32_t first, uint32_t end, uint32_t tick0,
                       double work) {
    if (!weft__ready_begin(s, first, end, true)) {
        return false;
    }
    weft__ready_t *r = &s->ready;
    const weft__graph_t *g = &s->graph;
    uint32_t ph = 0;
    while (g->phase_first[ph + 1] <= first) {
        ph++;
    }
    weft_assert_internal(g->phase_first[ph] == first && g->phase_first[ph + 1] == end);
    for (uint32_t k = s->phase_roots[ph]; k < s->phase_roots[ph + 1]; k++) {
        r->roots[r->nroots++] = (uint64_t)s->root_store[k] << 32 | 1u; /* one unit each */
    }
    r->units = end - first;
    r->root_work = work * r->nroots / (double)r->units;
    r->deferred = true;
    r->first = first;
    r->tick0 = tick0;
    if (!weft__ready_reserve(s, first, end)) { /* room now: unprepared, it must run here */
        r->noted_first = UINT32_MAX;
        r->deferred = false;
        return false;
    }
    return true;
}

bool weft__ready_reserve(struct weft_sched *s, uint32_t first, uint32_t end) {
    weft__ready_t *r = &s->ready;
    if (r->noted_first != first) {
        if (!weft__ready_begin(s, first, end, true)) {
            return false;
        }
        for (uint32_t p = first; p < end; p++) {
            weft__ready_note(s, p, s->systems[s->graph.order[p]]);
        }
    }
    uint32_t units = r->units;
    if (units <= r->cap) {
        return true;
    }
    void *slots = r->slots;
    uint32_t cap = r->cap;
    if (!weft__sched_scratch(s->alloc, &slots, &cap, units, sizeof *r->slots)) {
        return false;
    }
    if (!r->slots) {
        weft_counter_init(&r->drains);
    }
    r->slots = slots;
    r->cap = cap;
    return true;
}

void weft__ready_fini(struct weft_sched *s) {
    weft__ready_t *r = &s->ready;
    if (r->slots) {
        weft__sched_free(s->alloc, r->slots, (size_t)r->cap * sizeof *r->slots);
    }
    if (r->roots) {
        weft__sched_free(s->alloc, r->roots, (size_t)r->roots_cap * sizeof *r->roots);
    }
    r->slots = NULL;
    r->cap = 0;
    r->roots = NULL;
    r->roots_cap = 0;
}

weft_result_t weft__ready_run(struct weft_sched *s, uint32_t first, uint32_t end,
                              struct weft__phase_cost *pc) {
    weft__ready_t *r = &s->ready;
    r->s = s;
    r->jobs = s->jobs;
    r->workers = s->workers;
    r->handout_ns = weft__cost_dispatch(pc);
    r->drain = (weft_job_desc_t){.fn = drain_job, .arg = r, .name = "weft ready list"};
    uint32_t total = r->units;
    weft_assert_internal(total <= r->cap);
    weft_assert_internal(r->noted_first == first);
    r->noted_first = UINT32_MAX; /* this run uses the notes up */
    (void)first;                 /* the noted phase's, checked below */
    (void)end;
    /* the roots' slots first, then the rest unpublished: no drain job runs yet, so its
     * submission publishes these plain stores */
    uint32_t at = 0;
    for (uint32_t k = 0; k < r->nroots; k++) {
        uint32_t pos = (uint32_t)(r->roots[k] >> 32), n = (uint32_t)r->roots[k];
        weft_assert_internal(pos >= first && pos < end);
        for (uint32_t c = 0; c < n; c++) {
            weft_atomic_store_relaxed(&r->slots[at++], slot_of(pos, c));
        }
    }
    for (uint32_t i = at; i < total; i++) {
        weft_atomic_store_relaxed(&r->slots[i], 0u);
    }
    weft_atomic_store_relaxed(&r->head, 0u);
    weft_atomic_store_relaxed(&r->tail, at);
    weft_atomic_store_relaxed(&r->active, 1u); /* the main thread */
    weft_atomic_store_relaxed(&r->ran, 0u);
    weft_atomic_store_relaxed(&r->work_ns, 0u);
    weft_atomic_store_relaxed(&r->unknown, 0u);
    double work = 0;
    bool known = true;
    /* the roots: as many drain jobs as their work repays, in one submit */
    recruit(r, r->root_work, at);
    uint32_t worker = weft_jobs_worker_index(s->jobs);
    uint32_t ran = drain(r, worker, &work, &known);
    weft_result_t res = WEFT_OK;
    for (;;) {
        /* waiting, this thread is not a participant: a publisher may call it back in with a
         * drain job, which the wait runs */
        (void)weft_atomic_fetch_sub_relaxed(&r->active, 1u);
        weft_result_t w = weft_counter_wait(s->jobs, &r->drains);
        if (w != WEFT_OK) {
            res = w;
            break;
        }
        (void)weft_atomic_fetch_add_relaxed(&r->active, 1u);
        /* every participant left; a unit published after the last one looked is claimed
         * by its publisher, so this finds nothing unless a drain job could not run */
        uint32_t more = drain(r, worker, &work, &known);
        if (more == 0) {
            break;
        }
        ran += more;
    }
    if (r->deferred) { /* the next frame decides from the W this run met */
        pc->work_last = work + (double)weft_atomic_load_relaxed(&r->work_ns);
        pc->work_known = res == WEFT_OK && known && weft_atomic_load_relaxed(&r->unknown) == 0u;
    }
    weft_jobs_count_items(s->jobs, worker, ran);
    ran += weft_atomic_load_relaxed(&r->ran);
    weft_assert_internal(res != WEFT_OK || ran == total);
    (void)ran;
    return res;
}
