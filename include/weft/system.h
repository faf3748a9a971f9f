/* weft/system.h: systems and the scheduler — declared access sets become a dependency graph,
 * and weft_world_progress() runs one frame of it on every worker, deterministically.
 *
 * A system declares the components it iterates (terms, each read or write), the components it
 * only looks up (reads/writes), the components whose owners it skips (exclude), a phase and
 * before/after constraints. The declaration is checked once, at registration. The scheduler
 * derives a DAG: for every pair of systems in the same phase whose access conflicts (one
 * writes what the other reads or writes), an edge from the one that runs earlier (registration
 * order, adjusted only by before/after constraints) to the later one; redundant edges are
 * dropped. Systems with no path between them run at the same time. Phases run in ascending
 * order; each ends with the command-buffer apply (see weft/command.h), which is where
 * structural changes made by systems land, in a fixed order. The world after a frame depends
 * only on the world before it and the system list, never on the worker count or timing.
 *
 * A parallel system runs as one job per chunk of `chunk_size` driving rows (see weft/query.h;
 * boundaries depend only on chunk_size and the data). A system with no rows costs one cheap
 * job and its body is not called; a system whose rows fit one chunk runs as a single job; a
 * phase whose measured work would not repay handing it to other workers runs on the calling
 * thread ("Where a phase runs", below), which changes timing, never results. */
#ifndef WEFT_SYSTEM_H
#define WEFT_SYSTEM_H

#include "weft/command.h"
#include "weft/component.h"
#include "weft/query.h"
#include "weft/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A system handle: 1-based registration index; {0} is invalid. */
typedef struct weft_system {
    uint32_t id;
} weft_system_t;

#define WEFT_SYSTEM_MAX_LOOKUPS 8      /* extra read or write components (not iterated) */
#define WEFT_SYSTEM_MAX_ORDER 8        /* before / after names per system */
#define WEFT_SYSTEM_MAX_SETS 4         /* system sets a system belongs to */
#define WEFT_SYSTEM_NAME_MAX 63        /* bytes of a system name (longer: EINVAL) */
#define WEFT_SYSTEM_CHUNK_DEFAULT 4096 /* rows per chunk of a parallel system */

/* ---- views ---------------------------------------------------------------- >>view */

/* The access a piece of code may use: a system's whole declaration, or a narrowed subset of it
 * handed to a helper. Plain data with no pointer into other storage; copy freely. Write
 * implies read. Ids below WEFT_VIEW_BITSET_IDS are bits of `read`/`write` (one bit test, as
 * most worlds have fewer types); higher ids are listed in `wide` (a system accesses at most
 * WEFT_VIEW_MAX_WIDE components, so the list is bounded). Read it through
 * weft_view_can_read / weft_view_can_write, not field by field. */
#define WEFT_VIEW_BITSET_IDS 256u /* ids below this live in the bitsets */
#define WEFT_VIEW_MAX_WIDE (WEFT_QUERY_MAX_TERMS + 2 * WEFT_SYSTEM_MAX_LOOKUPS)
typedef struct weft_view {
    const weft_world_t *world;                 /* the world the access applies to */
    const char *system;                        /* the system's name (for messages) */
    uint64_t read[WEFT_VIEW_BITSET_IDS / 64];  /* bit c: component id c may be read */
    uint64_t write[WEFT_VIEW_BITSET_IDS / 64]; /* bit c: component id c may be written */
    uint32_t nwide;                            /* entries in wide */
    uint32_t wide[WEFT_VIEW_MAX_WIDE];         /* ids >= WEFT_VIEW_BITSET_IDS, ascending, as
                                                  id << 1 | 1 when writable (id << 1: read) */
} weft_view_t;

/* 0: the view has no access to id c; 1: read; 2: write (and read). */
static inline uint32_t weft_view_access(const weft_view_t *v, uint32_t c) {
    if (c < WEFT_VIEW_BITSET_IDS) {
        return ((v->write[c >> 6] >> (c & 63u)) & 1u)
                   ? 2u
                   : (uint32_t)((v->read[c >> 6] >> (c & 63u)) & 1u);
    }
    for (uint32_t i = 0; i < v->nwide && i < WEFT_VIEW_MAX_WIDE; i++) {
        if ((v->wide[i] >> 1) == c) {
            return 1u + (v->wide[i] & 1u);
        }
    }
    return 0;
}

/* True when the view may read (write) component c. */
static inline bool weft_view_can_read(const weft_view_t *v, weft_component_t c) {
    return weft_view_access(v, c.id) != 0;
}
static inline bool weft_view_can_write(const weft_view_t *v, weft_component_t c) {
    return weft_view_access(v, c.id) == 2u;
}

/* Narrow `from` to reads[0..nreads) and writes[0..nwrites) into *out. Each must be allowed by
 * `from` (a read by read or write, a write by write). Errors: WEFT_EACCESS (asserts in debug
 * builds, naming the system and component), WEFT_EINVAL (NULL arguments). Thread: any. */
WEFT_API weft_result_t weft_view_narrow(const weft_view_t *from, const weft_component_t *reads,
                                        uint32_t nreads, const weft_component_t *writes,
                                        uint32_t nwrites, weft_view_t *out);

/* Run fn(view, arg) with `view` as the calling thread's enforced access: in debug builds every
 * component access inside fn is checked against the view (and the previous access is restored
 * afterwards). Use it to hand a helper only what it needs. Thread: inside a system's run
 * function (or anywhere, to restrict main-thread code). */
WEFT_API void weft_view_run(const weft_view_t *view, void (*fn)(const weft_view_t *view, void *arg),
                            void *arg);

/* ---- registration ---------------------------------------------------------- >>system */

/* What a run function receives besides its iterator. Valid only during the call. */
typedef struct weft_system_ctx {
    weft_world_t *world;     /* the world; read/write data only as declared */
    weft_cmd_t *cmd;         /* this job's command buffer (structural changes go here) */
    float dt;                /* the dt passed to weft_world_progress() */
    uint32_t worker;         /* index of the worker running the job (0: main thread) */
    uint32_t chunk;          /* chunk index (0 for a non-parallel system) */
    uint32_t chunk_count;    /* chunks of this system this frame (1 for a non-parallel one) */
    weft_system_t system;    /* the running system */
    void *user;              /* desc.user */
    const weft_view_t *view; /* the system's declared access, to narrow for helpers */
} weft_system_ctx_t;

/* A run condition: decides, once per frame, whether the system runs (true) or is skipped
 * as if its query matched nothing. Called on the calling thread of weft_world_progress() at
 * the start of the system's phase (after the previous phase's commands are applied, before
 * any system of the phase runs), for the phase's systems in run order, so what it sees never
 * depends on the worker count. `dt` is the dt the phase's systems get. It may read the world
 * (any component; nothing runs beside it) and must not change it; structural calls from it
 * return WEFT_ESTATE in debug builds, as from a component hook. */
typedef bool (*weft_system_cond_fn_t)(weft_world_t *world, float dt, void *user);

/* A system's body. `it` iterates the system's chunk: call weft_iter_next(it) until false;
 * term t of desc.terms is it->columns[t] / weft_iter_get(it, t, i). For a system without
 * terms `it` has no batches and the function runs once per frame. Runs on a worker thread
 * (the main thread for main_thread systems) concurrently with systems it does not conflict
 * with; it must not make structural changes except through ctx->cmd. */
typedef void (*weft_system_fn_t)(weft_iter_t *it, const weft_system_ctx_t *ctx);

typedef struct weft_system_desc {
    const char *name;                                  /* required, unique; copied */
    weft_system_fn_t fn;                               /* required */
    void *user;                                        /* NULL: none; passed in ctx->user */
    weft_query_term_t terms[WEFT_QUERY_MAX_TERMS];     /* {0}: no iteration (runs once per
                                                          frame); the list ends at the first
                                                          zero component */
    weft_component_t exclude[WEFT_QUERY_MAX_EXCLUDES]; /* {0}: none; owners are skipped */
    weft_component_t reads[WEFT_SYSTEM_MAX_LOOKUPS];   /* {0}: none; looked up read-only
                                                          (weft_component_get) */
    weft_component_t writes[WEFT_SYSTEM_MAX_LOOKUPS];  /* {0}: none; looked up and written
                                                          (weft_component_get_mut) */
    uint32_t phase;                                    /* 0: the first phase; ascending */
    const char *phase_name;                            /* NULL: use phase; else the name of a
                                                          phase given to weft_phase_define
                                                          (phase must then be 0 or match) */
    const char *before[WEFT_SYSTEM_MAX_ORDER];         /* {0}: none; systems (or system sets)
                                                          this one precedes */
    const char *after[WEFT_SYSTEM_MAX_ORDER];          /* {0}: none; systems (or system sets)
                                                          this one follows */
    const char *sets[WEFT_SYSTEM_MAX_SETS];            /* {0}: none; names of the system sets
                                                          it belongs to (see below) */
    bool parallel;                                     /* false: one job per frame */
    uint32_t chunk_size;                               /* 0: WEFT_SYSTEM_CHUNK_DEFAULT rows */
    bool main_thread;                                  /* false: any worker; true: worker 0 */
    bool disabled;                                     /* true: registered disabled (see
                                                          weft_system_enable) */
    weft_system_cond_fn_t run_if;                      /* NULL: runs every frame it is
                                                          enabled; else its run condition */
    void *run_if_user;                                 /* passed to run_if */
    uint32_t _canary;                                  /* must stay 0 */
} weft_system_desc_t;

/* System sets. A set is a name that systems join through desc.sets; naming a set in another
 * system's before/after orders that system against every member, those registered later
 * included (the set needs no declaration). A name is either a system's or a set's: a system
 * named like an existing set, or a set named like an existing system, is WEFT_EEXIST. A
 * member's own before/after naming its set does not order it against itself.
 *
 * Register a system. Checked once, here: unknown components, a component listed twice, a
 * written component that is also excluded (WEFT_ECONFLICT), a duplicate name (WEFT_EEXIST),
 * before/after constraints that form a cycle, directly or through phases (WEFT_ECYCLE, the
 * message names the systems of the cycle). Names in before/after may refer to systems
 * registered later; they apply once that system exists. The schedule is rebuilt at the next
 * frame. Errors also: WEFT_EINVAL (bad desc), WEFT_ECAPACITY, WEFT_ENOMEM; on error nothing
 * is registered and weft_last_error() names the systems and components involved. A
 * successful registration discards the pending commands of a suspended frame (see
 * weft_world_progress). Thread: main, outside weft_world_progress(). */
WEFT_API weft_result_t weft_system_register(weft_world_t *world, const weft_system_desc_t *desc,
                                            weft_system_t *out);

/* The system registered under `name`, or {0}. Thread: main. */
WEFT_API weft_system_t weft_system_lookup(const weft_world_t *world, const char *name);

/* The system's name (world storage), or NULL for an invalid or unregistered handle.
 * Thread: main (or jobs). */
WEFT_API const char *weft_system_name(const weft_world_t *world, weft_system_t sys);

/* Number of system ids handed out so far (registered systems, unregistered ones included);
 * ids are 1 .. this number, and weft_system_name() tells which of them are still registered.
 * Thread: main. */
WEFT_API uint32_t weft_system_count(const weft_world_t *world);

/* ---- system control ------------------------------------------------------- >>control */

/* Enable or disable a system from the next frame on. A disabled system is skipped as if its
 * query matched nothing (its body is not called, it records no commands); it keeps its place
 * in the schedule, so enabling and disabling never rebuild it and never reorder other
 * systems. Errors: WEFT_EINVAL (NULL world), WEFT_ESTALE (null, unknown or unregistered
 * handle), WEFT_ESTATE (inside weft_world_progress). Thread: main. */
WEFT_API weft_result_t weft_system_enable(weft_world_t *world, weft_system_t sys, bool enabled);

/* True when `sys` is registered and enabled. Thread: main. */
WEFT_API bool weft_system_is_enabled(const weft_world_t *world, weft_system_t sys);

/* True when `sys` is registered with main_thread set (it runs on worker 0 only, and its phase
 * runs as a job graph). For tools that model the schedule (tools/sim). Thread: main. */
WEFT_API bool weft_system_is_main_thread(const weft_world_t *world, weft_system_t sys);

/* Unregister a system: it never runs again, its handle becomes invalid for good (ids are not
 * reused, so a kept handle cannot name a later system), its name is free for a new
 * registration, and the constraints other systems named it in are dropped (they apply again
 * to a later system of that name). Its buffered commands of a suspended frame are discarded
 * with the rest of that frame's (see weft_world_progress). The schedule is rebuilt at the
 * next frame. Errors: WEFT_EINVAL (NULL world), WEFT_ESTALE (null, unknown or already
 * unregistered handle), WEFT_ESTATE (inside weft_world_progress). Thread: main. */
WEFT_API weft_result_t weft_system_unregister(weft_world_t *world, weft_system_t sys);

/* ---- phases ----------------------------------------------------------------- >>phases */

/* A name for a phase number, and optionally a fixed timestep. A fixed-timestep phase runs
 * as many whole steps per frame as the time accumulated from each frame's dt allows: each new
 * frame adds its dt (a negative or non-finite dt adds nothing) and the phase runs
 * floor(accumulated / fixed_step) times, at most max_steps; the whole steps beyond that are
 * dropped (so a long stall cannot snowball) and the fraction is carried to the next frame
 * (weft_phase_alpha). Each run is a complete phase — run conditions, systems with ctx->dt =
 * fixed_step, command apply — before the next run starts; with no step due the phase is
 * skipped. Steps depend only on the dt sequence, never on timing or the worker count. */
typedef struct weft_phase_desc {
    const char *name;   /* required, 1..WEFT_SYSTEM_NAME_MAX bytes, unique among phases */
    uint32_t phase;     /* the phase number it names (systems' desc.phase) */
    float fixed_step;   /* 0: once a frame with the frame's dt; > 0: fixed step, seconds */
    uint32_t max_steps; /* fixed step: most runs in one frame (0: 8) */
    uint32_t _canary;   /* must stay 0 */
} weft_phase_desc_t;

/* Define phase `desc->phase` (systems may be registered in it before or after). Errors:
 * WEFT_EINVAL (NULL world or desc, bad name, a negative or non-finite fixed_step, canary),
 * WEFT_EEXIST (the phase or the name is already defined), WEFT_ESTATE (inside
 * weft_world_progress), WEFT_ENOMEM. Thread: main. */
WEFT_API weft_result_t weft_phase_define(weft_world_t *world, const weft_phase_desc_t *desc);

/* The phase number named `name` into *phase. Errors: WEFT_EINVAL (NULL argument), WEFT_ENOENT
 * (no such phase). Thread: main. */
WEFT_API weft_result_t weft_phase_lookup(const weft_world_t *world, const char *name,
                                         uint32_t *phase);

/* The name of phase number `phase`, or NULL when it has none. Thread: main. */
WEFT_API const char *weft_phase_name(const weft_world_t *world, uint32_t phase);

/* For a fixed-timestep phase, the time carried to the next frame as a fraction of a step
 * ([0, 1): what a renderer interpolates by); 0 for any other phase. Thread: main. */
WEFT_API float weft_phase_alpha(const weft_world_t *world, uint32_t phase);

/* ---- running a frame -------------------------------------------------------- >>progress */

/* Run one frame: every phase's systems on the world's job system in dependency order (the
 * calling thread works too), then each phase's command buffers applied in order. A fixed-timestep
 * phase (weft_phase_define) runs its due steps in place of one run, each step with its own
 * apply; disabled systems and those whose run condition says no are skipped. Rebuilds the schedule
 * first if systems were registered since the last frame. Allocates nothing in a steady state
 * (buffers and job tables are reused across frames). A system whose query matches nothing
 * this frame is not called.
 *
 * Where a phase runs. With more than one worker, a phase is handed to the job system only
 * when that is measured to pay. weft times each system's chunks on sampled frames (one in
 * 16, and whenever something is not yet measured) to learn its cost per row (a lower sample
 * is taken at once, a higher one blended in; a phase that runs on the calling thread is timed
 * as a whole on those frames and its systems' costs scaled to match), and times threaded
 * phases to learn what
 * handing the phase out costs beyond its work split over the workers: D, the least of the
 * phase's last 4 samples (interference only ever inflates a sample). The time until the first
 * other worker started a chunk of the phase is left out of a sample (weighted
 * (workers - 1) / workers, what it added to the wall time while the calling thread worked on):
 * that is the other workers' wake-up latency after an idle gap, which the start-of-frame wake
 * below hides, not a cost of handing the phase out; a sample in which no other worker ran a
 * chunk keeps its full cost. A phase whose estimated
 * work W (its systems' rows this frame x their cost per row) satisfies
 * W x (workers - 1) / workers <= D runs on the calling thread, systems in run order;
 * otherwise on the job system. A phase runs threaded until it is measured (its first
 * threaded run, cold, does not count; two samples are needed), and one kept on the calling
 * thread runs threaded again to re-measure D every ceil(D / (W x (workers - 1) / workers))-th
 * sampled frame, at most every 8th (so a phase of real work kept on one thread while the
 * other cores were busy gets back to them within a few sampled frames), but never so often
 * that what the re-runs waste (D - W x (workers - 1) / workers each) exceeds 1/64 of the
 * phase's work on the calling thread between them, and at least every 64th. Between sampled
 * frames, a phase kept on the calling thread is decided from its last run's W (its rows then):
 * when that still says the calling thread, each system is prepared and run in one pass, as
 * with one worker, so a phase whose rows grow is handed out one frame later. No row count or
 * system count is built in. A phase without dependencies between its systems runs as one parallel
 * loop over all its chunks; others from a ready list: workers claim ready chunks in runs,
 * a worker that finishes a system runs one of the successors it made ready itself, and more
 * workers are called in (one job each) only for a ready set whose estimated work would
 * repay D; a phase holding a main_thread system runs as a job graph. Where a phase runs
 * never changes the
 * world after the frame (the apply order is fixed); it changes only timing, and which worker
 * a body sees in weft_system_ctx_t.worker. Every frame starts with
 * weft_jobs_frame_begin(jobs, handed_out): when the previous frame handed a phase out, it wakes
 * the workers that fell asleep in between, and the workers learn the frame rate to wake on
 * their own just before the next frame, so an engine that runs frames at a steady rate with
 * other work between them does not wait for its workers' wake-up (see weft/jobs.h).
 *
 * Running out of memory. A frame's memory needs are met in steps that change nothing the
 * world shows until they succeed: the schedule rebuild and each phase's job tables before
 * the phase's systems run, and each phase's command apply, which is staged: every buffered
 * command of the phase is dry-run first and all it needs is reserved (entity slots, pool
 * rows, sparse pages, multi-instance slot tables, component-set transitions), then the
 * commands are applied, which can no longer fail for lack of memory. When a step fails (WEFT_ENOMEM, or WEFT_ECAPACITY when
 * the commands would exceed entity_limit or the component-set limit) it returns that error
 * with nothing of the step applied, and:
 * - if no system of the frame has run yet, the world is unchanged and nothing is pending;
 * - otherwise the frame is suspended at that step: what already ran stays done (systems'
 *   in-place writes, earlier phases' applied commands) and the failed phase's buffered
 *   commands are kept, none applied. The next weft_world_progress() call resumes the
 *   suspended frame at the failed step — with the frame's original dt; its own dt is
 *   ignored — instead of starting a new frame (at the same step of a fixed-timestep phase),
 *   so a retry after freeing memory loses no command and runs no system twice. Registering a system while a frame is suspended
 *   discards its pending commands (they belong to the old schedule). Other calls made in
 *   between (direct changes, a snapshot restore) act before the pending commands, which
 *   then apply under the usual rules (stale targets skipped).
 * A failing job submit (threaded worlds) does not fail the frame: the rest of the phase runs
 * on the calling thread in run order.
 * Errors: WEFT_ENOMEM, WEFT_ECAPACITY (as above), WEFT_ESTATE (called from inside a frame),
 * WEFT_ESHUTDOWN, and errors reported by the command apply. Thread: main. */
WEFT_API weft_result_t weft_world_progress(weft_world_t *world, float dt);

/* ---- introspection ---------------------------------------------------------- >>introspect */

/* One edge of the reduced schedule: `to` waits for `from`. */
typedef struct weft_schedule_edge {
    weft_system_t from;         /* runs first */
    weft_system_t to;           /* runs after `from` */
    weft_component_t component; /* a component that forced the edge; {0}: before/after */
} weft_schedule_edge_t;

/* A pair of systems whose access conflicts (same phase or not). */
typedef struct weft_system_conflict {
    weft_system_t first;        /* registered earlier */
    weft_system_t second;       /* registered later */
    weft_component_t component; /* the smallest conflicting component id */
} weft_system_conflict_t;

/* Schedule introspection. Each call builds the schedule if a system was registered since the
 * last build, which can fail: they return a result code and write their count (which may
 * exceed cap) to *count. Errors: WEFT_EINVAL (NULL world or count), the build's errors
 * (WEFT_ECYCLE, WEFT_ENOMEM, ...). Thread: main. */

/* Copy up to `cap` edges of the reduced schedule into out (NULL when cap is 0), ordered by
 * `to`'s run position, then `from`'s; *count receives the number of edges. */
WEFT_API weft_result_t weft_schedule_edges(weft_world_t *world, weft_schedule_edge_t *out,
                                           uint32_t cap, uint32_t *count);

/* The run order: copy up to `cap` system handles in the order the schedule ranks them
 * (phases ascending, registration order adjusted by before/after); *count receives the
 * number of systems. */
WEFT_API weft_result_t weft_schedule_order(weft_world_t *world, weft_system_t *out, uint32_t cap,
                                           uint32_t *count);

/* Every conflicting pair, ordered by (first, second) registration order only; *count
 * receives the number of pairs. */
WEFT_API weft_result_t weft_schedule_conflicts(weft_world_t *world, weft_system_conflict_t *out,
                                               uint32_t cap, uint32_t *count);

/* Write the schedule as Graphviz DOT into buf (snprintf rules: at most cap bytes including the
 * terminator; buf may be NULL when cap is 0). Nodes are systems labelled with their access
 * ("R Position", "W Velocity", ...), clustered by phase; edges are labelled with the component
 * that forced them. *len receives the full length (excluding the terminator). */
WEFT_API weft_result_t weft_schedule_dot(weft_world_t *world, char *buf, size_t cap, size_t *len);

/* The critical path of the last traced frame: the chain of dependent systems (through the
 * graph and across phases) with the largest sum of measured wall spans (first chunk begin to
 * last chunk end). Copies up to `cap` systems into out in run order; *count receives the path
 * length and *total_ns (may be NULL) the summed span. Errors also: WEFT_ESTATE when no frame
 * was traced (weft_trace_enable() before the frame), WEFT_ENOMEM. */
WEFT_API weft_result_t weft_schedule_critical_path(weft_world_t *world, weft_system_t *out,
                                                   uint32_t cap, uint32_t *count,
                                                   uint64_t *total_ns);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_SYSTEM_H */
