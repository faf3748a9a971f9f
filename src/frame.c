/* frame.c: weft_world_progress() — runs one frame of the schedule on the job system and
 * applies the command buffers at each phase end.
 *
 * DESIGN
 * Per phase, on the main thread:
 *  1. prepare: for each system, its driving row count gives its chunk count (parallel systems:
 *     ceil(rows / chunk_size); others and small ones: 1 job), tables grow if needed (the only
 *     allocation, and only until the high-water mark is reached), buffers are reset;
 *  2. submit: the phase's whole graph at once, in run order, each system's jobs with
 *     weft_job_submit_after() on its reduced predecessors' counters — no job ever blocks;
 *  3. wait on the phase's sinks with weft_counter_wait(), so the main thread runs jobs too;
 *  4. apply the buffers in registration order, then chunk order, then write order.
 * Chunking happens after the previous phase's apply, so chunk boundaries see the data the
 * phase will iterate and depend only on it and chunk_size. With one worker (or inline
 * execution) the job system is bypassed: systems run in run order on the main thread, which
 * gives the same world because apply order never depends on execution order; so does a phase
 * made only of tiny systems (TINY_ROWS). */
#include "system.h"

#include <string.h>

#include "report.h"
#include "world.h"

/* A system whose query has at most this many driving rows is tiny. A phase made only of tiny
 * systems runs on the calling thread in run order: handing a few rows to other workers costs
 * more than the rows themselves (the frame_64_systems case). Systems without terms are never
 * tiny, since their work is unknown. The result is the same either way; only timing changes. */
#define TINY_ROWS 16u

/* ---- running one chunk --------------------------------------------------------- >>chunk */

/* Run chunk `chunk` of `sys` on `worker`. The access set is published for the body so the
 * core's debug checks can name this system. */
static void run_chunk(struct weft_sched *s, weft__system_t *sys, uint32_t chunk, uint32_t worker) {
    weft__trace_t *trace = s->trace;
    uint64_t begin = trace ? weft__trace_now() : 0;
#if WEFT_DEBUG >= 1
    const weft__access_set_t *prev = weft__access_enter(&sys->access);
#endif
    weft_iter_t it;
    bool work = true;
    if (sys->query) {
        (void)weft_query_iter(sys->query, sys->chunk_rows, chunk, &it);
        /* An empty driving range means nothing to do: skip the body (the iterator's row
         * fields are private to users, not to the library). */
        work = it.row < it.end;
    } else {
        memset(&it, 0, sizeof it);
        it.world = s->world;
    }
    if (work) {
        weft_system_ctx_t ctx = {
            .world = s->world,
            .cmd = &sys->cmds[chunk],
            .dt = s->dt,
            .worker = worker,
            .chunk = chunk,
            .chunk_count = sys->nchunks,
            .system = {sys->id},
            .user = sys->user,
            .view = &sys->view,
        };
        sys->fn(&it, &ctx);
    }
#if WEFT_DEBUG >= 1
    weft__access_leave(prev);
#endif /* WEFT_DEBUG */
    if (s->apply_order == WEFT_APPLY_COMPLETION) {
        uint32_t slot = weft_atomic_fetch_add_relaxed(&s->finished_count, 1u);
        s->finished[slot] = &sys->cmds[chunk];
    }
    if (trace)
        weft__trace_record(trace, worker, sys->id, chunk, begin, weft__trace_now());
}

void weft__sched_chunk_job(void *arg, const weft_job_ctx_t *ctx) {
    const weft__chunk_arg_t *a = arg;
    run_chunk(a->sched, a->sys, a->chunk, ctx->worker);
}

/* ---- phases ------------------------------------------------------------------ >>phase */

/* Measuring mode: room to log every job of the phase in completion order. */
static weft_result_t reserve_finished(struct weft_sched *s, uint32_t first, uint32_t end) {
    uint32_t total = 0;
    for (uint32_t p = first; p < end; p++)
        total += s->systems[s->graph.order[p]]->nchunks;
    weft_atomic_store_relaxed(&s->finished_count, 0u);
    if (total <= s->finished_cap)
        return WEFT_OK;
    weft_cmd_t **a = weft__sched_alloc(s->alloc, total * sizeof *a);
    if (!a)
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "command apply: out of memory");
    weft__sched_free(s->alloc, s->finished, s->finished_cap * sizeof *s->finished);
    s->finished = a;
    s->finished_cap = total;
    return WEFT_OK;
}

/* Decide this frame's chunks of every system in run positions [first, end). Parallel
 * systems ask for their row count (chunking); with several workers every system does, to
 * find out whether the whole phase is tiny (see TINY_ROWS). Job descs are filled once when
 * the tables grow (weft__sched_reserve_chunks), not per frame. */
static weft_result_t prepare_phase(struct weft_sched *s, uint32_t first, uint32_t end, bool *tiny) {
    bool all_tiny = true;
    for (uint32_t p = first; p < end; p++) {
        weft__system_t *sys = s->systems[s->graph.order[p]];
        uint32_t n = 1;
        sys->chunk_rows = 0;
        if (sys->query && (sys->parallel || (s->workers > 1 && all_tiny))) {
            uint32_t rows = weft_query_rows(sys->query);
            all_tiny = all_tiny && rows <= TINY_ROWS;
            if (sys->parallel && rows > sys->chunk_size) {
                n = (rows + sys->chunk_size - 1) / sys->chunk_size;
                sys->chunk_rows = sys->chunk_size;
                weft_result_t r = weft__sched_reserve_chunks(s, sys, n);
                if (r != WEFT_OK)
                    return r;
            }
        } else {
            all_tiny = all_tiny && sys->query != NULL;
        }
        sys->nchunks = n;
        for (uint32_t c = 0; c < n; c++)
            weft__cmd_reset(&sys->cmds[c]);
    }
    *tiny = all_tiny;
    return s->apply_order == WEFT_APPLY_COMPLETION ? reserve_finished(s, first, end) : WEFT_OK;
}

/* Grow the placeholder map to `n` entries. */
static weft_result_t reserve_map(struct weft_sched *s, uint32_t n) {
    if (n <= s->map_cap)
        return WEFT_OK;
    uint32_t cap = s->map_cap ? s->map_cap : 64;
    while (cap < n)
        cap *= 2;
    uint64_t *map = weft__sched_alloc(s->alloc, cap * sizeof *map);
    if (!map)
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "command apply: out of memory");
    weft__sched_free(s->alloc, s->map, s->map_cap * sizeof *s->map);
    s->map = map;
    s->map_cap = cap;
    return WEFT_OK;
}

/* Apply one buffer, keeping the first error. */
static weft_result_t apply_one(struct weft_sched *s, const weft_cmd_t *cmd, weft_result_t err) {
    if (cmd->len == 0)
        return err;
    weft_result_t r = reserve_map(s, cmd->created);
    if (r == WEFT_OK)
        r = weft__cmd_apply(s->world, cmd, s->map);
    return err != WEFT_OK ? err : r;
}

/* Apply the phase's buffers: registration order, then chunk, then write order. */
static weft_result_t apply_phase(struct weft_sched *s, uint32_t ph) {
    uint64_t begin = s->trace ? weft__trace_now() : 0;
    weft_result_t first_err = WEFT_OK;
    if (s->apply_order == WEFT_APPLY_COMPLETION) {
        uint32_t n = weft_atomic_load_relaxed(&s->finished_count);
        for (uint32_t k = 0; k < n; k++)
            first_err = apply_one(s, s->finished[k], first_err);
    } else {
        for (uint32_t k = s->apply_first[ph]; k < s->apply_first[ph + 1]; k++) {
            const weft__system_t *sys = s->systems[s->apply_list[k]];
            for (uint32_t c = 0; c < sys->nchunks; c++)
                first_err = apply_one(s, &sys->cmds[c], first_err);
        }
    }
    if (s->trace)
        weft__trace_record(s->trace, 0, 0, ph, begin, weft__trace_now());
    return first_err;
}

/* Submit the phase's graph and wait for its sinks (threaded path). */
static weft_result_t run_phase_jobs(struct weft_sched *s, uint32_t ph, uint32_t first,
                                    uint32_t end) {
    weft_result_t r = WEFT_OK;
    uint32_t submitted = first;
    for (; submitted < end && r == WEFT_OK; submitted++) {
        weft__system_t *sys = s->systems[s->graph.order[submitted]];
        if (sys->ndeps == 0)
            r = weft_job_submit(s->jobs, sys->jobs, sys->nchunks, &sys->done);
        else
            r = weft_job_submit_after(s->jobs, sys->jobs, sys->nchunks,
                                      (weft_counter_t *const *)sys->deps, sys->ndeps, &sys->done);
    }
    /* Wait for everything that was submitted, even after a failure, so no job outlives the
     * frame. Waiting on every submitted system is only needed on that rare path. */
    if (r != WEFT_OK) {
        for (uint32_t p = first; p + 1 < submitted; p++)
            (void)weft_counter_wait(s->jobs, &s->systems[s->graph.order[p]]->done);
        return r;
    }
    for (uint32_t k = s->phase_sinks[ph]; k < s->phase_sinks[ph + 1]; k++) {
        weft_result_t w =
            weft_counter_wait(s->jobs, &s->systems[s->graph.order[s->sinks[k]]]->done);
        if (w != WEFT_OK && r == WEFT_OK)
            r = w;
    }
    return r;
}

static void run_phase_inline(struct weft_sched *s, uint32_t first, uint32_t end) {
    for (uint32_t p = first; p < end; p++) {
        weft__system_t *sys = s->systems[s->graph.order[p]];
        for (uint32_t c = 0; c < sys->nchunks; c++)
            run_chunk(s, sys, c, 0);
    }
}

/* ---- the frame --------------------------------------------------------------- >>frame */

weft_result_t weft_schedule_set_apply_order(weft_world_t *world, weft_apply_order_t order) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_schedule_set_apply_order: NULL world");
    struct weft_sched *s = weft__sched_get(world);
    if (!s)
        return WEFT_ENOMEM;
    WEFT__CONTRACT(order == WEFT_APPLY_ORDERED || order == WEFT_APPLY_COMPLETION, s->log,
                   WEFT_EINVAL, "weft_schedule_set_apply_order: unknown order %d", (int)order);
    WEFT__CONTRACT(!s->running, s->log, WEFT_ESTATE,
                   "weft_schedule_set_apply_order: called inside a frame");
    s->apply_order = order;
    return WEFT_OK;
}

weft_result_t weft_world_progress(weft_world_t *world, float dt) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_world_progress: world is NULL");
    struct weft_sched *s = weft__sched_get(world);
    if (!s)
        return WEFT_ENOMEM;
    WEFT__CONTRACT(!s->running, s->log, WEFT_ESTATE,
                   "weft_world_progress: called from inside a frame");
    weft_result_t r = weft__sched_jobs(s);
    if (r == WEFT_OK)
        r = weft__sched_build(s);
    if (r != WEFT_OK)
        return r;
    s->dt = dt;
    s->running = true;
    if (s->trace)
        weft__trace_frame_begin(s->trace);
    const weft__graph_t *g = &s->graph;
    for (uint32_t ph = 0; ph < g->nphases && r == WEFT_OK; ph++) {
        uint32_t first = g->phase_first[ph], end = g->phase_first[ph + 1];
        bool tiny = false;
        r = prepare_phase(s, first, end, &tiny);
        if (r != WEFT_OK)
            break;
        if (s->workers <= 1 || tiny)
            run_phase_inline(s, first, end);
        else
            r = run_phase_jobs(s, ph, first, end);
        if (r == WEFT_OK)
            r = apply_phase(s, ph);
    }
    s->running = false;
    return r;
}
