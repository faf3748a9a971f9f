/* frame.c: weft_world_progress() — runs one frame of the schedule on the job system and
 * applies the command buffers at each phase end.
 *
 * DESIGN
 * Per phase, on the main thread:
 *  1. prepare: each system's query is planned once (query.h) and the plan reused by every
 *     chunk; its driving row count gives its chunk count (0 when it has nothing to do;
 *     parallel systems: ceil(rows / chunk_size); others and small ones: 1 job), tables grow
 *     if needed (the only allocation, and only until the high-water mark is reached),
 *     buffers are reset;
 *  2. submit: the phase's whole graph at once, in run order, each system's jobs with
 *     weft_job_submit_after() on its reduced predecessors' counters — no job ever blocks;
 *  3. wait on the phase's sinks with weft_counter_wait(), so the main thread runs jobs too;
 *  4. apply the buffers in registration order, then chunk order, then write order, staged:
 *     a dry run over every buffer first reserves all the memory the apply needs
 *     (command.h), so the apply proper cannot run out of memory half-way.
 * Chunking happens after the previous phase's apply, so chunk boundaries see the data the
 * phase will iterate and depend only on it and chunk_size. With one worker (or inline
 * execution) the job system is bypassed: systems run in run order on the main thread, each
 * prepared right before it runs (one pass while its data is hot), which gives the same world
 * because apply order never depends on execution order; so does a phase made only of tiny
 * systems (TINY_ROWS). There a system with nothing to do costs one plan.
 * On the threaded path it still gets one (empty) job: its completion counter orders its
 * successors after its own predecessors, since redundant edges were removed.
 *
 * A frame that cannot complete for lack of memory after some of its work became visible is
 * suspended (weft/system.h): the next weft_world_progress() resumes it where it stopped
 * instead of starting a new one. */
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
 * core's debug checks can name this system. A chunk with no rows runs nothing and records
 * nothing (no trace event, no buffer in completion order). */
static void run_chunk(struct weft_sched *s, weft__system_t *sys, uint32_t chunk, uint32_t worker) {
    weft_iter_t it;
#if WEFT_DEBUG >= 1
    const weft__access_set_t *prev = weft__access_enter(&sys->access);
#endif
    bool work = true;
    if (sys->query) {
        weft__query_iter_planned(sys->query, &sys->plan, sys->chunk_rows, chunk, &it);
        work = it.row < it.end; /* the iterator's row fields are private to users only */
    } else {
        memset(&it, 0, sizeof it);
        it.world = s->world;
    }
    if (work) {
        weft__trace_t *trace = s->trace;
        uint64_t begin = trace ? weft__trace_now() : 0;
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
        if (s->apply_order == WEFT_APPLY_COMPLETION) {
            uint32_t slot = weft_atomic_fetch_add_relaxed(&s->finished_count, 1u);
            s->finished[slot] = &sys->cmds[chunk];
        }
        if (trace)
            weft__trace_record(trace, worker, sys->id, chunk, begin, weft__trace_now());
    }
#if WEFT_DEBUG >= 1
    weft__access_leave(prev);
#endif /* WEFT_DEBUG */
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

/* Decide this frame's chunks of `sys`: plan its query once (the plan serves the row count
 * and every chunk's iterator), size its tables, reset its buffers. *rows receives the
 * driving rows (UINT32_MAX for a system without terms). Job descs are filled once when the
 * tables grow (weft__sched_reserve_chunks), not per frame. */
static weft_result_t prepare_system(struct weft_sched *s, weft__system_t *sys, uint32_t *rows) {
    uint32_t n = 1;
    sys->chunk_rows = 0;
    *rows = UINT32_MAX;
    if (sys->query) {
        *rows = weft__query_plan(sys->query, &sys->plan);
        if (*rows == 0) {
            n = 0;
        } else if (*rows > sys->split_above) {
            n = (*rows - 1) / sys->split_above + 1;
            sys->chunk_rows = sys->split_above;
            weft_result_t r = weft__sched_reserve_chunks(s, sys, n);
            if (r != WEFT_OK)
                return r;
        }
    }
    sys->nchunks = n;
    for (uint32_t c = 0; c < n; c++)
        weft__cmd_reset(&sys->cmds[c]);
    return WEFT_OK;
}

/* Prepare every system in run positions [first, end) and find out whether the whole phase
 * is tiny (see TINY_ROWS). Before anything runs, so a failure changes nothing. */
static weft_result_t prepare_phase(struct weft_sched *s, uint32_t first, uint32_t end, bool *tiny) {
    bool all_tiny = true;
    for (uint32_t p = first; p < end; p++) {
        uint32_t rows;
        weft_result_t r = prepare_system(s, s->systems[s->graph.order[p]], &rows);
        if (r != WEFT_OK)
            return r;
        all_tiny = all_tiny && rows <= TINY_ROWS;
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

/* The phase's buffers in apply order: registration order, then chunk (or, with
 * WEFT_APPLY_COMPLETION, the order their jobs finished). The dry run and the apply walk the
 * same sequence through this cursor, so they cannot disagree on it. */
typedef struct buffer_cursor {
    uint32_t k; /* position in apply_list (or finished) */
    uint32_t c; /* chunk of apply_list[k] */
} buffer_cursor_t;

static buffer_cursor_t buffers_of(const struct weft_sched *s, uint32_t ph) {
    return (buffer_cursor_t){s->apply_order == WEFT_APPLY_COMPLETION ? 0 : s->apply_first[ph], 0};
}

static weft_cmd_t *next_buffer(struct weft_sched *s, uint32_t ph, buffer_cursor_t *it) {
    if (s->apply_order == WEFT_APPLY_COMPLETION)
        return it->k < weft_atomic_load_relaxed(&s->finished_count) ? s->finished[it->k++] : NULL;
    for (; it->k < s->apply_first[ph + 1]; it->k++, it->c = 0) {
        weft__system_t *sys = s->systems[s->apply_list[it->k]];
        if (it->c < sys->nchunks)
            return &sys->cmds[it->c++];
    }
    return NULL;
}

/* Dry-run one buffer (see stage_phase); `*begun` starts the stage at the first non-empty one,
 * so a phase without commands costs one length check per buffer. */
static weft_result_t stage_one(struct weft_sched *s, const weft_cmd_t *cmd, bool *begun) {
    if (cmd->len == 0)
        return WEFT_OK;
    weft_result_t r = WEFT_OK;
    if (!*begun) {
        r = weft__cmd_stage_begin(&s->stage, s->world, s->alloc);
        *begun = r == WEFT_OK;
    }
    if (r == WEFT_OK)
        r = reserve_map(s, cmd->created);
    if (r == WEFT_OK)
        r = weft__cmd_stage_scan(&s->stage, s->world, s->alloc, cmd, s->map);
    return r;
}

/* Stage the phase's apply: dry-run every buffer in apply order, then reserve what they need.
 * Nothing observable changes, so on failure the buffers can be applied later. */
static weft_result_t stage_phase(struct weft_sched *s, uint32_t ph, bool *any) {
    bool begun = false;
    weft_result_t r = WEFT_OK;
    buffer_cursor_t it = buffers_of(s, ph);
    for (weft_cmd_t *cmd; r == WEFT_OK && (cmd = next_buffer(s, ph, &it)) != NULL;)
        r = stage_one(s, cmd, &begun);
    if (r == WEFT_OK && begun)
        r = weft__cmd_stage_reserve(&s->stage, s->world);
    *any = begun;
    return r;
}

/* Apply one buffer, keeping the first error. The map was grown by stage_phase. */
static weft_result_t apply_one(struct weft_sched *s, weft_cmd_t *cmd, weft_result_t err) {
    if (cmd->len == 0)
        return err;
    weft_result_t r = weft__cmd_apply(s->world, cmd, s->map);
    weft__cmd_reset(cmd); /* applied: a resumed frame must not apply it again */
    return err != WEFT_OK ? err : r;
}

/* Apply the phase's buffers: registration order, then chunk, then write order. On
 * *staged == false the stage failed and nothing was applied. known_empty: the caller saw
 * every buffer of the phase empty, so there is nothing to walk. */
static weft_result_t apply_phase(struct weft_sched *s, uint32_t ph, bool known_empty,
                                 bool *staged) {
    uint64_t begin = s->trace ? weft__trace_now() : 0;
    bool any = false;
    weft_result_t first_err = known_empty ? WEFT_OK : stage_phase(s, ph, &any);
    *staged = first_err == WEFT_OK;
    if (!*staged)
        return first_err;
    if (any) { /* else nothing was recorded: no buffer to walk again */
        buffer_cursor_t it = buffers_of(s, ph);
        for (weft_cmd_t *cmd; (cmd = next_buffer(s, ph, &it)) != NULL;)
            first_err = apply_one(s, cmd, first_err);
    }
    if (s->trace)
        weft__trace_record(s->trace, 0, 0, ph, begin, weft__trace_now());
    return first_err;
}

static void run_system_inline(struct weft_sched *s, weft__system_t *sys) {
    for (uint32_t c = 0; c < sys->nchunks; c++)
        run_chunk(s, sys, c, 0);
}

/* Submit the phase's graph and wait for its sinks (threaded path). A system with nothing to
 * do still gets one job (run_chunk returns at once), so its counter keeps ordering its
 * successors after its predecessors. If a submit fails (the job system is out of memory),
 * everything submitted is waited for and the rest of the phase runs here in run order, which
 * respects every edge: the phase still completes. */
static weft_result_t run_phase_jobs(struct weft_sched *s, uint32_t ph, uint32_t first,
                                    uint32_t end) {
    weft_result_t r = WEFT_OK;
    uint32_t p = first;
    for (; p < end; p++) {
        weft__system_t *sys = s->systems[s->graph.order[p]];
        uint32_t n = sys->nchunks ? sys->nchunks : 1;
        if (sys->ndeps == 0)
            r = weft_job_submit(s->jobs, sys->jobs, n, &sys->done);
        else
            r = weft_job_submit_after(s->jobs, sys->jobs, n, (weft_counter_t *const *)sys->deps,
                                      sys->ndeps, &sys->done);
        if (r != WEFT_OK)
            break;
    }
    if (p < end) {
        for (uint32_t q = first; q < p; q++)
            (void)weft_counter_wait(s->jobs, &s->systems[s->graph.order[q]]->done);
        for (; p < end; p++)
            run_system_inline(s, s->systems[s->graph.order[p]]);
        return WEFT_OK;
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
    for (uint32_t p = first; p < end; p++)
        run_system_inline(s, s->systems[s->graph.order[p]]);
}

/* ---- the frame --------------------------------------------------------------- >>frame */

void weft__sched_drop_suspended(struct weft_sched *s) {
    s->resume_phase = UINT32_MAX;
    s->resume_apply = false;
}

weft_result_t weft_schedule_set_apply_order(weft_world_t *world, weft_apply_order_t order) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_schedule_set_apply_order: NULL world");
    struct weft_sched *s = weft__sched_get(world);
    if (!s)
        return WEFT_ENOMEM;
    WEFT__CONTRACT(order == WEFT_APPLY_ORDERED || order == WEFT_APPLY_COMPLETION, s->log,
                   WEFT_EINVAL, "weft_schedule_set_apply_order: unknown order %d", (int)order);
    WEFT__CONTRACT(!s->running, s->log, WEFT_ESTATE,
                   "weft_schedule_set_apply_order: called inside a frame");
    if (order != s->apply_order)
        weft__sched_drop_suspended(s); /* the completion log would not match the new order */
    s->apply_order = order;
    return WEFT_OK;
}

/* Sequential path with one worker: prepare and run each system in one pass from run
 * position `from` (its data is hot; systems before it cannot change what it will see, since
 * structural changes wait for the apply). *recorded tells whether any of them wrote a
 * command. On a failure *fresh tells whether anything ran; *at receives the position to
 * resume at. */
static weft_result_t run_phase_fused(struct weft_sched *s, uint32_t from, uint32_t end, bool *fresh,
                                     uint32_t *at, bool *recorded) {
    bool any = false;
    for (uint32_t p = from; p < end; p++) {
        weft__system_t *sys = s->systems[s->graph.order[p]];
        uint32_t rows;
        weft_result_t r = prepare_system(s, sys, &rows);
        if (r != WEFT_OK) {
            *at = p;
            return r;
        }
        *fresh = false;
        run_system_inline(s, sys);
        for (uint32_t c = 0; c < sys->nchunks; c++)
            any = any || sys->cmds[c].len != 0;
    }
    *recorded = any;
    return WEFT_OK;
}

/* Run phases from `ph`, run position `pos` (the phase's first position unless a fused phase
 * was suspended half-way); `at_apply`: phase ph's systems already ran, only its apply is
 * left. On a failure after the frame's work started to show (a phase applied, or systems of
 * this phase ran), the frame is suspended at the failing step; `fresh` tells whether
 * anything showed yet. */
static weft_result_t run_phases(struct weft_sched *s, uint32_t ph, uint32_t pos, bool at_apply,
                                bool fresh) {
    const weft__graph_t *g = &s->graph;
    for (; ph < g->nphases; ph++, at_apply = false, pos = UINT32_MAX) {
        uint32_t first = g->phase_first[ph], end = g->phase_first[ph + 1];
        weft_result_t r = WEFT_OK;
        bool known_empty = false;
        if (!at_apply) {
            uint32_t at = first;
            if (s->workers <= 1 && s->apply_order == WEFT_APPLY_ORDERED) {
                bool recorded = true;
                r = run_phase_fused(s, pos == UINT32_MAX ? first : pos, end, &fresh, &at,
                                    &recorded);
                /* a resumed pass did not see the buffers of the systems before `pos` */
                known_empty = pos == UINT32_MAX && !recorded;
            } else {
                bool tiny = false;
                r = prepare_phase(s, first, end, &tiny);
                if (r == WEFT_OK) {
                    if (s->workers <= 1 || tiny)
                        run_phase_inline(s, first, end);
                    else
                        r = run_phase_jobs(s, ph, first, end);
                    fresh = false;
                    if (r != WEFT_OK)
                        return r; /* a wait failed: the job system is unusable (reported) */
                }
            }
            if (r != WEFT_OK) {
                if (!fresh) {
                    s->resume_phase = ph;
                    s->resume_pos = at;
                    s->resume_apply = false;
                }
                return r;
            }
        }
        bool staged = false;
        r = apply_phase(s, ph, known_empty, &staged);
        if (!staged) {
            s->resume_phase = ph;
            s->resume_pos = UINT32_MAX;
            s->resume_apply = true;
            return r;
        }
        if (r != WEFT_OK)
            return r; /* a non-memory error after staging (e.g. a hook's): the frame ends here */
    }
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
    uint32_t ph = 0, pos = UINT32_MAX;
    bool at_apply = false, fresh = true;
    if (s->resume_phase != UINT32_MAX) {
        ph = s->resume_phase; /* the suspended frame goes on with its own dt */
        pos = s->resume_pos;
        at_apply = s->resume_apply;
        fresh = false;
        weft__sched_drop_suspended(s);
    } else {
        s->dt = dt;
        if (s->trace)
            weft__trace_frame_begin(s->trace);
    }
    s->running = true;
    r = run_phases(s, ph, pos, at_apply, fresh);
    s->running = false;
    return r;
}
