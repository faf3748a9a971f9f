/* frame.c: weft_world_progress() — runs one frame of the schedule on the job system and
 * applies the command buffers at each phase end.
 *
 * DESIGN
 * Per phase (per step of a fixed-timestep phase, phase.c), on the main thread:
 *  0. decide: which systems run (enabled, run condition true), all before any of them runs;
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
 * because apply order never depends on execution order. With more workers, a phase whose
 * measured work is too small to repay handing it out runs the same way on the calling thread
 * (the rule is in phase_cost.h). There a system with nothing to do costs one plan.
 * On the threaded path it still gets one (empty) job: its completion counter orders its
 * successors after its own predecessors, since redundant edges were removed.
 *
 * A frame that cannot complete for lack of memory after some of its work became visible is
 * suspended (weft/system.h): the next weft_world_progress() resumes it where it stopped
 * instead of starting a new one. */
#include "system.h"

#include <string.h>

#include "jobs/platform/report.h"
#include "src/core/auto_group.h"
#include "src/core/change.h"
#include "src/core/world.h"

/* ---- running one chunk --------------------------------------------------------- >>chunk */

/* Run chunk `chunk` of `sys` on `worker`. The access set is published for the body so the
 * core's debug checks can name this system. A chunk with no rows runs nothing and records
 * nothing (no trace event, no buffer in completion order). */
void weft__sched_run_chunk(struct weft_sched *s, weft__system_t *sys, uint32_t chunk,
                           uint32_t worker) {
    if (sys->skip) {
        return; /* the placeholder job of a skipped system: only its counter matters */
    }
    weft_iter_t it;
#if WEFT_DEBUG >= 1
    const weft__access_set_t *prev = weft__access_enter(&sys->access);
#endif
    /* Writes of the body (get_mut, row_mut) carry the system's tick (src/core/change.h). */
    weft__change_scope_t prev_tick = weft__change_enter(s->world, sys->tick);
    bool work = true;
    if (sys->query) {
        weft__query_iter_planned(sys->query, &sys->plan, sys->chunk_rows, chunk, &it);
        work = it._private.row < it._private.end; /* private to users, not to weft */
    } else {
        memset(&it, 0, sizeof it);
        it._private.world = s->world;
    }
    if (work) {
        weft__trace_t *trace = s->trace;
        bool timed = trace || s->sampling;
        uint64_t begin = timed ? weft__trace_now() : 0;
        weft_system_ctx_t ctx = {
            .world = s->world,
            .cmd = &sys->cmds[chunk],
            .dt = s->run_dt,
            .worker = worker,
            .chunk = chunk,
            .chunk_count = sys->nchunks,
            .system = {sys->id},
            .user = sys->user,
            .view = &sys->access,
        };
        weft__cmd_open(ctx.cmd, weft__thread_token());
        weft__trace_cur_t outer = {0, 0, 0};
        if (trace) { /* parallel-fors it starts are traced as its pieces */
            outer = weft__trace_enter(trace, worker, sys->id, chunk);
        }
        sys->fn(&it, &ctx);
        if (trace) {
            weft__trace_leave(trace, worker, outer);
        }
        weft__cmd_close(ctx.cmd);
        if (ctx.cmd->len != 0) {
            /* relaxed: read on the main thread after the phase's waits */
            weft_atomic_store_relaxed(&s->recorded, 1u);
        }
        if (timed) {
            uint64_t end = weft__trace_now();
            if (s->sampling) {
                weft__cost_add_chunk(&sys->cost, end - begin);
                if (worker != s->caller) {
                    weft__cost_note_join(&s->joined, begin);
                }
            }
            if (trace) {
                weft__trace_record(trace, worker, sys->id, chunk, begin, end);
            }
        }
    }
    weft__change_leave(prev_tick);
#if WEFT_DEBUG >= 1
    weft__access_leave(prev);
#endif /* WEFT_DEBUG */
}

void weft__sched_chunk_job(void *arg, const weft_job_ctx_t *ctx) {
    const weft__chunk_arg_t *a = arg;
    weft__sched_run_chunk(a->sched, a->sys, a->chunk, ctx->worker);
}

/* ---- phases ------------------------------------------------------------------ >>phase */

/* Decide this frame's chunks of `sys`: plan its query once (the plan serves the row count
 * and every chunk's iterator), size its tables, reset its buffers. *rows receives the
 * driving rows (UINT32_MAX for a system without terms). Job descs are filled once when the
 * tables grow (weft__sched_reserve_chunks), not per frame. */
static weft_result_t prepare_ticked(struct weft_sched *s, weft__system_t *sys, const uint32_t *tick,
                                    uint32_t *rows) {
    uint32_t n = 1;
    sys->chunk_rows = 0;
    *rows = UINT32_MAX;
    if (sys->skip) {
        n = 0;
        *rows = 0;
    } else if (sys->query) {
        *rows = weft__query_plan(sys->query, &sys->plan);
        if (*rows == 0) {
            n = 0;
        } else if (*rows > sys->split_above) {
            n = (*rows - 1) / sys->split_above + 1;
            sys->chunk_rows = sys->split_above;
            weft_result_t r = weft__sched_reserve_chunks(s, sys, n);
            if (r != WEFT_OK) {
                return r;
            }
        }
    }
    sys->nchunks = n;
    if (!sys->skip) { /* a run: a fresh change tick, and the query's window moves on */
        sys->tick = tick ? *tick : weft__change_system_tick(s->world);
        if (sys->query) {
            weft__query_begin_run(sys->query, sys->tick);
        }
    }
    weft__cost_begin_system(&sys->cost, *rows);
    for (uint32_t c = 0; c < n; c++) {
        weft_cmd_t *cmd = &sys->cmds[c];
        if (cmd->len != 0 || cmd->created != 0) { /* an empty one stays a clean line */
            weft__cmd_reset(cmd);
        }
    }
    return WEFT_OK;
}

/* Prepare `sys` with a fresh tick from the world's counter (main thread). */
static weft_result_t prepare_system(struct weft_sched *s, weft__system_t *sys, uint32_t *rows) {
    return prepare_ticked(s, sys, NULL, rows);
}

void weft__sched_prepare_deferred(struct weft_sched *s, weft__system_t *sys, uint32_t tick,
                                  double *work, bool *known) {
    uint32_t rows;
    weft_result_t r = prepare_ticked(s, sys, &tick, &rows);
    weft_assert_internal(r == WEFT_OK); /* one chunk (prep_anywhere): no table grows */
    (void)r;
    weft__cost_estimate(&sys->cost, work, known);
}

/* Defer the prepare of graph phase `ph` to the workers that run its systems (ready.h) when
 * it may: a ready phase of prep_anywhere systems, handed out last time with every cost
 * known, and this frame samples nothing, decides nothing (so no system is skipped and each
 * takes the next tick in run order) and traces nothing; and the measured-cost rule, applied
 * to the phase's last W, hands it out again. The ticks are taken here, in run order, as the
 * prepare pass would take them. Returns whether it did; else nothing changed. */
static bool defer_phase(struct weft_sched *s, uint32_t ph, uint32_t first, uint32_t end) {
    weft__phase_cost_t *pc = &s->phase_cost[ph];
    if (!s->phase_deferred[ph] || !pc->threaded_last || !pc->work_known || s->deciding ||
        s->trace != NULL || weft__cost_sample_frame(s->frame_no)) {
        return false;
    }
    bool sample = false;
    if (weft__cost_run_inline(pc, pc->work_last, true, s->workers, false, &sample) || sample) {
        return false; /* the pass decides again from this frame's W (and samples: D untrusted) */
    }
    uint32_t tick0 = s->world->change_tick + 1u; /* weft__change_next_tick's first */
    if (!weft__ready_defer(s, first, end, tick0, pc->work_last)) {
        return false;
    }
    for (uint32_t p = first; p < end; p++) {
        uint32_t t = weft__change_system_tick(s->world);
        weft_assert_internal(t == tick0 + 2u * (p - first)); /* the stride ready.c assumes */
        (void)t;
    }
    s->sampling = false;
    return true;
}

/* Prepare every system of phase `ph` (run positions [first, end)) and decide from their
 * measured costs whether it runs on the calling thread (phase_cost.h); sets s->sampling.
 * When the phase may run from the ready list and its last decision handed it out, the ready
 * list is set up in the same pass (weft__ready_note), while each record is hot. Before
 * anything runs, so a failure changes nothing. */
static weft_result_t prepare_phase(struct weft_sched *s, uint32_t ph, uint32_t first, uint32_t end,
                                   bool *run_inline, double *estimate) {
    if (defer_phase(s, ph, first, end)) {
        *run_inline = false;
        *estimate = s->phase_cost[ph].work_last;
        return WEFT_OK;
    }
    double work = 0;
    bool all_known = true;
    bool note = weft__ready_begin(
        s, first, end, !s->phase_flat[ph] && s->phase_ready[ph] && s->phase_cost[ph].threaded_last);
    for (uint32_t p = first; p < end; p++) {
        weft__system_t *sys = s->systems[s->graph.order[p]];
        uint32_t rows;
        weft_result_t r = prepare_system(s, sys, &rows);
        if (r != WEFT_OK) {
            return r;
        }
        weft__cost_estimate(&sys->cost, &work, &all_known);
        if (note) {
            weft__ready_note(s, p, sys);
        }
    }
    *run_inline = weft__cost_run_inline(&s->phase_cost[ph], work, all_known, s->workers,
                                        weft__cost_sample_frame(s->frame_no), &s->sampling);
    s->phase_cost[ph].work_last = work;
    s->phase_cost[ph].work_known = all_known;
    *estimate = work;
    return WEFT_OK;
}

/* After a sampled phase that ran on the calling thread, timed as a whole (two clock reads, not
 * two per chunk: phase_cost.h): scale its systems' estimates by measured / estimated work. */
static void scale_phase(struct weft_sched *s, uint32_t first, uint32_t end, double estimate,
                        uint64_t wall_ns) {
    if (estimate <= 0) {
        return;
    }
    double factor = (double)wall_ns / estimate;
    for (uint32_t p = first; p < end; p++) {
        weft__cost_scale_system(&s->systems[s->graph.order[p]]->cost, factor);
    }
}

/* After a sampled phase: fold what its systems measured (and, threaded, its wall time) into
 * the cost estimates. */
static void measure_phase(struct weft_sched *s, uint32_t ph, uint32_t first, uint32_t end,
                          bool threaded, uint64_t t0, uint64_t t1) {
    double work = 0;
    for (uint32_t p = first; p < end; p++) {
        work += weft__cost_fold_system(&s->systems[s->graph.order[p]]->cost);
    }
    if (threaded) {
        /* relaxed: the phase's waits ordered the workers' notes before this read */
        uint64_t joined = weft_atomic_load_relaxed(&s->joined);
        uint64_t join_ns = joined == UINT64_MAX ? UINT64_MAX : joined > t0 ? joined - t0 : 0;
        weft__cost_fold_phase(&s->phase_cost[ph], work, t1 - t0, join_ns, s->workers);
    }
    s->sampling = false;
}

/* Grow the placeholder map to `n` entries. */
static weft_result_t reserve_map(struct weft_sched *s, uint32_t n) {
    void *map = s->map;
    if (!weft__sched_scratch(s->alloc, &map, &s->map_cap, n, sizeof *s->map)) {
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "command apply: out of memory");
    }
    s->map = map;
    return WEFT_OK;
}

/* The phase's buffers in apply order: registration order, then chunk. The dry run and the
 * apply walk the same sequence through this cursor, so they cannot disagree on it. */
typedef struct buffer_cursor {
    uint32_t k; /* position in apply_list */
    uint32_t c; /* chunk of apply_list[k] */
} buffer_cursor_t;

static buffer_cursor_t buffers_of(const struct weft_sched *s, uint32_t ph) {
    return (buffer_cursor_t){s->apply_first[ph], 0};
}

static weft_cmd_t *next_buffer(struct weft_sched *s, uint32_t ph, buffer_cursor_t *it) {
    for (; it->k < s->apply_first[ph + 1]; it->k++, it->c = 0) {
        weft__system_t *sys = s->systems[s->apply_list[it->k]];
        if (it->c < sys->nchunks) {
            return &sys->cmds[it->c++];
        }
    }
    return NULL;
}

/* Dry-run one buffer (see stage_phase); `*begun` starts the stage at the first non-empty one,
 * so a phase without commands costs one length check per buffer. */
static weft_result_t stage_one(struct weft_sched *s, const weft_cmd_t *cmd, bool *begun) {
    if (cmd->len == 0) {
        return WEFT_OK;
    }
    weft_result_t r = WEFT_OK;
    if (!*begun) {
        r = weft__cmd_stage_begin(&s->stage, s->world, s->alloc);
        *begun = r == WEFT_OK;
    }
    if (r == WEFT_OK) {
        r = reserve_map(s, cmd->created);
    }
    if (r == WEFT_OK) {
        r = weft__cmd_stage_scan(&s->stage, s->world, s->alloc, cmd, s->map);
    }
    return r;
}

/* The split dry run of the phase's buffers (weft__cmd_stage_scan_split), when it may be taken
 * (more than one worker, at least WEFT__CMD_PLACE_MIN_OPS records) and the measured choice
 * (weft__cmd_way_choose) takes it. *done false: the serial dry run is still to run (the split
 * was not taken or gave up; the stage is begun afresh). Both give the same stage. */
static weft_result_t stage_split(struct weft_sched *s, uint32_t ph, bool *any, bool *done) {
    weft__cmd_stage_t *st = &s->stage;
    *done = false;
    st->nbufs = 0;
    uint64_t bytes = 0;
    uint32_t created = 0;
    buffer_cursor_t it = buffers_of(s, ph);
    for (weft_cmd_t *cmd; (cmd = next_buffer(s, ph, &it)) != NULL;) {
        if (cmd->len != 0) {
            if (!weft__cmd_stage_add(st, s->alloc, cmd)) {
                return WEFT_OK;
            }
            bytes += cmd->len;
            created = cmd->created > created ? cmd->created : created;
        }
    }
    uint64_t recs = bytes / sizeof(weft__cmd_rec_t);
    if (s->workers < 2 || s->jobs == NULL || recs < WEFT__CMD_PLACE_MIN_OPS) {
        return WEFT_OK;
    }
    uint64_t t0 = weft__trace_now();
    bool split = weft__cmd_way_choose(&st->scan);
    weft_result_t r = weft__cmd_stage_begin(st, s->world, s->alloc);
    if (r == WEFT_OK) {
        r = reserve_map(s, created);
    }
    if (r == WEFT_OK && split) {
        r = weft__cmd_stage_scan_split(st, s->world, s->alloc, s->jobs, done);
        if (r == WEFT_OK && !*done) {
            r = weft__cmd_stage_begin(st, s->world, s->alloc); /* forget the split's part */
        }
    }
    for (uint32_t b = 0; r == WEFT_OK && !*done && b < st->nbufs; b++) {
        r = weft__cmd_stage_scan(st, s->world, s->alloc, st->bufs[b], s->map);
    }
    *done = r == WEFT_OK;
    if (*done) {
        *any = true;
        weft__cmd_way_fold(&st->scan, split, weft__trace_now() - t0, (uint32_t)recs);
    }
    return r;
}

/* Stage the phase's apply: dry-run every buffer in apply order, then reserve what they need.
 * Nothing observable changes, so on failure the buffers can be applied later. */
static weft_result_t stage_phase(struct weft_sched *s, uint32_t ph, bool *any) {
    bool begun = false, done = false;
    weft_result_t r = stage_split(s, ph, &begun, &done);
    buffer_cursor_t it = buffers_of(s, ph);
    for (weft_cmd_t *cmd; r == WEFT_OK && !done && (cmd = next_buffer(s, ph, &it)) != NULL;) {
        r = stage_one(s, cmd, &begun);
    }
    if (r == WEFT_OK && begun) {
        r = weft__cmd_stage_reserve(&s->stage, s->world);
    }
    *any = begun;
    return r;
}

/* Apply one buffer, keeping the first error. The map was grown by stage_phase. The buffer
 * is reset after its events are delivered (deliver_and_reset). */
static weft_result_t apply_one(struct weft_sched *s, weft_cmd_t *cmd, weft_result_t err) {
    if (cmd->len == 0) {
        return err;
    }
    weft_result_t r = weft__cmd_apply(s->world, cmd, s->map);
    return err != WEFT_OK ? err : r;
}

/* After an apply: deliver the buffer's events (if anyone observes events), then reset it, so
 * a resumed frame never applies it again. */
static void deliver_and_reset(struct weft_sched *s, weft_cmd_t *cmd) {
    if (s->event_observers != 0 && cmd->len != 0) {
        weft__cmd_deliver(cmd, weft__sched_deliver, s);
    }
    weft__cmd_reset(cmd);
}

weft_result_t weft__sched_apply_buffer(struct weft_sched *s, weft_cmd_t *cmd, bool *applied) {
    bool begun = false;
    *applied = false;
    weft_result_t r = stage_one(s, cmd, &begun);
    if (r == WEFT_OK && begun) {
        r = weft__cmd_stage_reserve(&s->stage, s->world);
    }
    if (r != WEFT_OK) {
        return r;
    }
    *applied = true;
    r = apply_one(s, cmd, WEFT_OK);
    deliver_and_reset(s, cmd);
    return r;
}

/* The observer buffers at an apply point inside a frame: a failure leaves their commands
 * pending for the next apply point and does not stop the frame (weft/observer.h). */
static void flush_observers_in_frame(struct weft_sched *s) {
    if (s->obs_cmd[s->obs_rec].len != 0) {
        (void)weft__sched_flush_observers(s); /* reported */
    }
}

/* Whether the staged phase may be applied placed (command_place.c): with more than one
 * worker, when every command reaches only plain components (no hook, observer, group or
 * instances, which must see the apply in command order on this thread) and when there is
 * enough to place (WEFT__CMD_PLACE_MIN_OPS). Whether it is then is measured
 * (weft__cmd_way_choose on stage.place), and needs its log (else the serial apply runs). Both give the
 * same world; only the time differs. */
static bool placed_eligible(const struct weft_sched *s) {
    return s->workers > 1 && s->jobs != NULL && !s->stage.hooked &&
           s->stage.ops >= WEFT__CMD_PLACE_MIN_OPS;
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
    if (!*staged) {
        return first_err;
    }
    if (any) { /* else nothing was recorded: no buffer to walk again */
        buffer_cursor_t it = buffers_of(s, ph);
        bool eligible = placed_eligible(s);
        bool placed = eligible && weft__cmd_way_choose(&s->stage.place) &&
                      weft__cmd_place_reserve(&s->stage, s->alloc) == WEFT_OK;
        uint64_t t0 = eligible ? weft__trace_now() : 0;
        if (placed) { /* the walk here, the pools' replay on the lanes at the same time */
            weft__cmd_place_begin(&s->stage, s->world, s->jobs, s->workers);
            for (weft_cmd_t *cmd; (cmd = next_buffer(s, ph, &it)) != NULL;) {
                if (cmd->len != 0) {
                    weft__cmd_resolve(&s->stage, s->world, cmd, s->map);
                }
            }
            weft__cmd_place(&s->stage, s->jobs);
        } else {
            for (weft_cmd_t *cmd; (cmd = next_buffer(s, ph, &it)) != NULL;) {
                first_err = apply_one(s, cmd, first_err);
            }
        }
        if (eligible) {
            weft__cmd_way_fold(&s->stage.place, placed, weft__trace_now() - t0, s->stage.ops);
        }
        /* events after the whole phase is applied, in the same order */
        it = buffers_of(s, ph);
        for (weft_cmd_t *cmd; (cmd = next_buffer(s, ph, &it)) != NULL;) {
            deliver_and_reset(s, cmd);
        }
    }
    flush_observers_in_frame(s);
    if (s->trace) {
        weft__trace_record(s->trace, 0, 0, ph, begin, weft__trace_now());
    }
    return first_err;
}

static void run_system_inline(struct weft_sched *s, weft__system_t *sys) {
    for (uint32_t c = 0; c < sys->nchunks; c++) {
        weft__sched_run_chunk(s, sys, c, 0);
    }
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
        if (sys->ndeps == 0) {
            r = weft_job_submit(s->jobs, sys->jobs, n, &sys->done);
        } else {
            r = weft_job_submit_after(s->jobs, sys->jobs, n, (weft_counter_t *const *)sys->deps,
                                      sys->ndeps, &sys->done);
        }
        if (r != WEFT_OK) {
            break;
        }
    }
    if (p < end) {
        for (uint32_t q = first; q < p; q++) {
            (void)weft_counter_wait(s->jobs, &s->systems[s->graph.order[q]]->done);
        }
        for (; p < end; p++) {
            run_system_inline(s, s->systems[s->graph.order[p]]);
        }
        return WEFT_OK;
    }
    for (uint32_t k = s->phase_sinks[ph]; k < s->phase_sinks[ph + 1]; k++) {
        weft_result_t w =
            weft_counter_wait(s->jobs, &s->systems[s->graph.order[s->sinks[k]]]->done);
        if (w != WEFT_OK && r == WEFT_OK) {
            r = w;
        }
    }
    return r;
}

/* A flat phase (no edge between its systems) on the threaded path: one weft_parallel_for over
 * all its chunks, numbered system by system in run order (s->flat_first). Participants claim
 * batches of chunks with one atomic each (parallel_for.c), where a job per chunk would cost
 * every thief a steal, with its cache-line transfers, per chunk; no counters are needed, as
 * the loop returns when every chunk has run. */
typedef struct flat_phase {
    struct weft_sched *s;
    uint32_t first, end; /* run positions */
} flat_phase_t;

static void run_flat_units(void *arg, uint64_t begin, uint64_t end, uint32_t worker) {
    const flat_phase_t *f = arg;
    struct weft_sched *s = f->s;
    const uint32_t *at = s->flat_first;
    uint32_t lo = f->first, hi = f->end; /* the last p with at[p] <= begin */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (at[mid] <= begin) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    for (uint64_t u = begin; u < end; u++) {
        while (u >= at[lo + 1]) {
            lo++;
        }
        weft__sched_run_chunk(s, s->systems[s->graph.order[lo]], (uint32_t)(u - at[lo]), worker);
    }
}

static weft_result_t run_phase_flat(struct weft_sched *s, uint32_t first, uint32_t end) {
    uint32_t units = 0;
    for (uint32_t p = first; p < end; p++) {
        s->flat_first[p] = units;
        units += s->systems[s->graph.order[p]]->nchunks;
    }
    s->flat_first[end] = units;
    flat_phase_t f = {s, first, end};
    return weft_parallel_for(s->jobs, units, 1, run_flat_units, &f);
}

static void run_phase_inline(struct weft_sched *s, uint32_t first, uint32_t end) {
    for (uint32_t p = first; p < end; p++) {
        run_system_inline(s, s->systems[s->graph.order[p]]);
    }
}

/* Decide which systems of the phase at run positions [first, end) run this frame: enabled,
 * registered, and their run condition true. Every condition is evaluated here, before any
 * system of the phase runs, in run order, so what a condition sees is the same whichever
 * path (fused, inline, threaded) the phase then takes. Conditions run under the hook rule
 * (no structural change). */
static void decide_phase(struct weft_sched *s, uint32_t first, uint32_t end) {
    if (!s->deciding) {
        return; /* every system enabled, none with a run condition, no flag left set */
    }
    for (uint32_t p = first; p < end; p++) {
        weft__system_t *sys = s->systems[s->graph.order[p]];
        bool run = sys->enabled;
        if (run && sys->desc.run_if) {
            s->world->hook_depth++;
            run = sys->desc.run_if(s->world, s->run_dt, sys->desc.run_if_user);
            s->world->hook_depth--;
        }
        if (sys->skip != !run) { /* unchanged: the line stays clean (system.h) */
            sys->skip = !run;
        }
    }
}

/* ---- the frame --------------------------------------------------------------- >>frame */

void weft__sched_drop_suspended(struct weft_sched *s) {
    s->resume_phase = UINT32_MAX;
    s->resume_step = 0;
    s->resume_apply = false;
}

/* Sequential path with one worker: prepare and run each system in one pass from run
 * position `from` (its data is hot; systems before it cannot change what it will see, since
 * structural changes wait for the apply). *recorded tells whether any of them wrote a
 * command. On a failure *fresh tells whether anything ran; *at receives the position to
 * resume at. */
static weft_result_t run_phase_fused(struct weft_sched *s, uint32_t from, uint32_t end, bool *fresh,
                                     uint32_t *at, bool *recorded, double *work, bool *known) {
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
        weft__cost_estimate(&sys->cost, work, known);
        run_system_inline(s, sys);
        for (uint32_t c = 0; c < sys->nchunks; c++) {
            any = any || sys->cmds[c].len != 0;
        }
    }
    *recorded = any;
    return WEFT_OK;
}

/* Whether phase `ph` (run positions [first, end)) of a multi-worker world runs on the fused
 * path, prepared and run system by system in one pass as with one worker, instead of a
 * prepare pass over all its systems and then a run pass: when it is sure to run on this thread
 * anyway. Two passes over a phase of hundreds of systems read every record twice, and the
 * records outgrow L1/L2 (750 systems of no work: +57% L1 read misses on the calling thread,
 * a frame ~10% slower than the same phase at one worker). Sure means: its last run was decided
 * inline (phase_cost.h) and the rule, applied to that run's W (one frame behind, as a
 * deferred prepare decides), decides inline again; and this frame samples nothing (a sampled
 * frame times the phase, and may probe it on the threads) and traces nothing. A phase resumed at `pos` after a failure of the fused path goes on
 * fused. Either way the world after the frame is the same; only where and when it is prepared
 * differs. */
static bool fuse_phase(struct weft_sched *s, uint32_t ph, uint32_t first, uint32_t end,
                       uint32_t pos) {
    weft__phase_cost_t *pc = &s->phase_cost[ph];
    if (pos != UINT32_MAX) {
        return pc->fused_last;
    }
    bool sample = false;
    pc->fused_last = !pc->threaded_last && pc->work_known && s->trace == NULL &&
                     !weft__cost_sample_frame(s->frame_no) &&
                     weft__cost_run_inline(pc, pc->work_last, true, s->workers, false, &sample) &&
                     !sample;
    if (pc->fused_last) {
        s->sampling = false;
        (void)weft__ready_begin(s, first, end, false); /* forget any noted phase */
    }
    return pc->fused_last;
}

/* One run of phase `ph` (see run_phases for pos, at_apply and fresh). On a failure that
 * leaves work to resume, s->resume_phase is ph. */
static weft_result_t run_phase_once(struct weft_sched *s, uint32_t ph, uint32_t pos, bool at_apply,
                                    bool *fresh) {
    const weft__graph_t *g = &s->graph;
    uint32_t first = g->phase_first[ph], end = g->phase_first[ph + 1];
    weft_result_t r = WEFT_OK;
    bool known_empty = false;
    if (!at_apply) {
        uint32_t at = first;
        if (pos == UINT32_MAX) { /* a resumed phase keeps the decisions it started with */
            decide_phase(s, first, end);
        }
        s->world->in_systems = true; /* until every system of the phase returned */
        if (s->workers <= 1 || fuse_phase(s, ph, first, end, pos)) {
            bool recorded = true, known = true;
            double work = 0;
            r = run_phase_fused(s, pos == UINT32_MAX ? first : pos, end, fresh, &at, &recorded,
                                &work, &known);
            /* a resumed pass did not see the buffers of the systems before `pos` */
            known_empty = pos == UINT32_MAX && !recorded;
            if (s->workers > 1 && pos == UINT32_MAX) { /* the next frame decides from it */
                s->phase_cost[ph].work_last = work;
                s->phase_cost[ph].work_known = known && r == WEFT_OK;
            }
        } else {
            bool run_inline = false;
            double estimate = 0;
            weft_atomic_store_relaxed(&s->recorded, 0u);
            r = prepare_phase(s, ph, first, end, &run_inline, &estimate);
            if (r == WEFT_OK) {
                /* a sampled inline phase is timed as a whole, its chunks are not */
                bool whole = run_inline && s->sampling && s->trace == NULL;
                s->sampling = s->sampling && !whole;
                if (s->sampling) {
                    s->caller = weft_jobs_worker_index(s->jobs);
                    weft_atomic_store_relaxed(&s->joined, UINT64_MAX);
                }
                uint64_t t0 = s->sampling || whole ? weft__trace_now() : 0;
                s->handed_out |= !run_inline;
                if (run_inline) {
                    run_phase_inline(s, first, end);
                } else if (s->phase_flat[ph]) {
                    r = run_phase_flat(s, first, end);
                } else if (s->phase_ready[ph] && weft__ready_reserve(s, first, end)) {
                    r = weft__ready_run(s, first, end, &s->phase_cost[ph]);
                } else {
                    r = run_phase_jobs(s, ph, first, end);
                }
                *fresh = false;
                if (s->sampling) {
                    measure_phase(s, ph, first, end, !run_inline, t0, weft__trace_now());
                } else if (whole) {
                    scale_phase(s, first, end, estimate, weft__trace_now() - t0);
                }
                if (r != WEFT_OK) {
                    s->world->in_systems = false;
                    return r; /* a wait failed: the job system is unusable (reported) */
                }
                /* no buffer of the phase got a command: nothing to walk at the apply */
                known_empty = weft_atomic_load_relaxed(&s->recorded) == 0u;
            }
        }
        s->world->in_systems = false;
        if (r != WEFT_OK) {
            if (!*fresh) {
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
    return r; /* WEFT_OK, or a non-memory error after staging (e.g. a hook's): the frame ends */
}

/* Run phases from `ph`, its run `step` (a fixed-timestep phase runs several times a frame),
 * run position `pos` (the phase's first position unless a fused phase was suspended
 * half-way); `at_apply`: that run's systems already ran, only its apply is left. On a failure
 * after the frame's work started to show (a phase applied, or systems of this phase ran), the
 * frame is suspended at the failing step; `fresh` tells whether anything showed yet. */
static weft_result_t run_phases(struct weft_sched *s, uint32_t ph, uint32_t step, uint32_t pos,
                                bool at_apply, bool fresh) {
    const weft__graph_t *g = &s->graph;
    for (; ph < g->nphases; ph++, step = 0) {
        s->run_dt = s->phase_dt[ph];
        for (; step < s->phase_steps[ph]; step++, at_apply = false, pos = UINT32_MAX) {
            weft_result_t r = run_phase_once(s, ph, pos, at_apply, &fresh);
            if (r != WEFT_OK) {
                if (s->resume_phase == ph) {
                    s->resume_step = step;
                }
                return r;
            }
        }
    }
    return WEFT_OK;
}

weft_result_t weft_world_progress(weft_world_t *world, float dt) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_world_progress: world is NULL");
    struct weft_sched *s = weft__sched_get(world);
    if (!s) {
        return WEFT_ENOMEM;
    }
    WEFT__CONTRACT(!s->running, s->log, WEFT_ESTATE,
                   "weft_world_progress: called from inside a frame");
    weft_result_t r = weft__sched_jobs(s);
    if (r == WEFT_OK) {
        r = weft__sched_build(s);
    }
    if (r != WEFT_OK) {
        return r;
    }
    /* Workers that fell asleep since the last frame wake while this thread plans, instead of
     * after the first phase is published, and learn the frame rate to wake on their own
     * before the next frame (weft_jobs_frame_begin); only when the last frame handed work
     * out, so frames that run on the calling thread burn no worker's spin window. */
    weft_jobs_frame_begin(s->jobs, s->handed_out);
    s->handed_out = false;
    uint32_t ph = 0, step = 0, pos = UINT32_MAX;
    bool at_apply = false, fresh = true;
    if (s->resume_phase != UINT32_MAX) {
        ph = s->resume_phase; /* the suspended frame goes on with its own dt and steps */
        step = s->resume_step;
        pos = s->resume_pos;
        at_apply = s->resume_apply;
        fresh = false;
        s->deciding |= s->gated != 0; /* a system gated while suspended */
        s->decided_last |= s->gated != 0;
        weft__sched_drop_suspended(s);
    } else {
        r = weft__sched_flush_observers(s); /* changes made between frames come first */
        if (r != WEFT_OK) {
            return r;
        }
        if (world->auto_stale) { /* dropped since (weft/group.h): plan them again */
            weft__sched_auto_replan(world);
        }
        if (world->auto_family_count != 0) { /* re-packs, between frames (auto_group.h) */
            weft__auto_frame(world);
        }
        s->dt = dt;
        /* One more deciding frame after the last gated system is gone clears its flag. */
        s->deciding = s->gated != 0 || s->decided_last;
        s->decided_last = s->gated != 0;
        weft__sched_plan_steps(s, dt);
        s->frame_no++;
        if (s->trace) {
            weft__trace_frame_begin(s->trace);
        }
    }
    weft__change_clamp(world); /* keeps change ticks within reach of the counter */
    s->running = true;
    r = run_phases(s, ph, step, pos, at_apply, fresh);
    s->running = false;
    return r;
}
