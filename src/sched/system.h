/* system.h: the scheduler's private state — registered systems, the built graph and the
 * per-frame job tables (private to the build).
 *
 * DESIGN
 * world->sched (created on first use, freed by a module finaliser) owns an array of system
 * records. Each record is allocated once, cache-line aligned, and never moves: its completion
 * counter, job descs, chunk arguments and command buffers are referenced by jobs while a frame
 * runs. Per-chunk tables grow on the main thread while a phase is prepared and are reused by
 * every later frame, so a steady-state frame allocates nothing. The graph (schedule.h) is
 * rebuilt lazily at the next frame after a registration; from it each record caches the
 * counters of its reduced predecessors (deps) for weft_job_submit_after().
 * Thread model: everything here is main-thread state except, during a frame, each job's own
 * command buffer and trace lane. */
#ifndef WEFT_SRC_SYSTEM_H
#define WEFT_SRC_SYSTEM_H

#include "weft/observer.h"
#include "weft/system.h"
#include "weft/trace.h"

#include "command.h"
#include "names.h"
#include "phase_cost.h"
#include "ready.h"
#include "schedule.h"
#include "src/core/access.h"
#include "src/core/query.h"
#include "trace.h"

struct weft__system;

/* Argument of one chunk job. */
typedef struct weft__chunk_arg {
    struct weft_sched *sched; /* the scheduler */
    struct weft__system *sys; /* the system */
    uint32_t chunk;           /* chunk index */
} weft__chunk_arg_t;

/* The ordering and set names of a system that has any (weft__system_t.names). */
typedef struct weft__system_names {
    char order[2][WEFT_SYSTEM_MAX_ORDER][WEFT_SYSTEM_NAME_MAX + 1]; /* before, after */
    char sets[WEFT_SYSTEM_MAX_SETS][WEFT_SYSTEM_NAME_MAX + 1];      /* sets it is in */
} weft__system_names_t;

/* The fields of a system's registration desc read after registration (the rest is copied
 * into the record's own fields or its query, so the record stays small: a world with
 * thousands of systems first-touches every byte of it). */
typedef struct weft__system_conf {
    uint32_t phase;               /* resolved (desc.phase_name looked up) */
    bool parallel;                /* desc.parallel */
    bool main_thread;             /* desc.main_thread (cleared by weft_system_unregister) */
    weft_system_cond_fn_t run_if; /* desc.run_if */
    void *run_if_user;            /* desc.run_if_user */
} weft__system_conf_t;

typedef struct weft__system {
    weft_counter_t done; /* counts this frame's jobs of the system (64-aligned) */

    /* ---- hot: read every frame, kept in one cache line, the only one prepare rewrites
     * every frame (up to tick); its other per-frame writes (cost rows, ready counts, command
     * buffers, skip) store only a changed value, so the worker that ran the system last frame
     * keeps its clean copies of those lines instead of missing on each (ready.h) ---- */
    weft_query_t *query;     /* NULL for a system without terms; owned */
    weft_system_fn_t fn;     /* desc.fn */
    void *user;              /* desc.user */
    weft_cmd_t *cmds;        /* [cap] command buffers, one per chunk */
    weft__query_plan_t plan; /* this phase's plan of query (query.h), made by prepare */
    uint32_t nchunks;        /* chunks this frame (0: nothing to do, see frame.c) */
    uint32_t chunk_rows;     /* rows per chunk this frame (0: everything in one) */
    uint32_t split_above;    /* rows per chunk, and more rows than this split the system
                                (UINT32_MAX: never, for a system that is not parallel) */
    uint32_t tick;           /* change tick of this frame's run (src/core/change.h) */
    uint32_t id;             /* 1-based registration index (read-only after registration) */
    bool skip;               /* this frame: disabled, run condition false, or unregistered
                                (decided at the phase start, frame.c) */
    bool enabled;            /* weft_system_enable */
    bool removed;            /* unregistered: an inert node of the graph, never runs */
    bool prep_anywhere;      /* one chunk and no change filter: its phase may leave its
                                prepare to the worker that runs it (ready.h) */

    /* ---- per frame, for the threaded path ---- */
    weft_job_desc_t *jobs;   /* [cap] job descs, one per chunk; the block of all three tables */
    weft__chunk_arg_t *args; /* [cap] their arguments */
    uint32_t cap;            /* capacity of jobs/args/cmds */
    uint32_t ndeps;          /* entries in deps */
    weft_counter_t **deps;   /* [ndeps] predecessors' counters (graph) */
    weft__sys_cost_t cost;   /* measured cost: where its phase runs (phase_cost.h) */

    /* ---- the ready-list run of a graph phase (ready.c) ---- */
    uint32_t *succ;          /* [nsucc] run positions of its reduced successors in its phase */
    uint32_t nsucc;          /* entries in succ */
    uint32_t npreds_in;      /* reduced predecessors in its own phase */
    weft_atomic_u32 pending; /* this run: predecessors in its phase not yet finished */
    weft_atomic_u32 left;    /* this run: its units (chunks, at least 1) not yet finished */

    /* ---- access ---- */
    weft__access_set_t access; /* published while the system runs (debug builds), and
                                  the view its run function gets (the same type) */

    /* ---- cold: registration and graph building ---- */
    uint32_t term_count;                                             /* iterated terms */
    uint32_t nreads;                                                 /* entries in reads */
    uint32_t reads[WEFT_QUERY_MAX_TERMS + WEFT_SYSTEM_MAX_LOOKUPS];  /* sorted ids read only */
    uint32_t writes[WEFT_QUERY_MAX_TERMS + WEFT_SYSTEM_MAX_LOOKUPS]; /* sorted ids written */
    uint32_t nwrites;                                                /* entries in writes */
    uint32_t nafter;                                                 /* entries in after */
    uint32_t *after;      /* resolved: registration indices this system follows */
    uint32_t after_cap;   /* capacity of after */
    uint32_t visit;       /* registration's cycle walk: last walk that met it */
    weft_cmd_t cmd1;      /* the chunk tables while cap is 1 (most systems): */
    weft_job_desc_t job1; /*   no allocation per registration */
    weft__chunk_arg_t arg1;
    weft__system_conf_t desc;            /* what later steps read of the registration desc */
    char name[WEFT_SYSTEM_NAME_MAX + 1]; /* NUL-terminated name */
    /* before ([0]) and after ([1]) names, and the sets it is in: in the record's names block,
     * or in one shared empty block for a system without any (most), so records stay small */
    char (*order_names)[WEFT_SYSTEM_MAX_ORDER][WEFT_SYSTEM_NAME_MAX + 1];
    char (*set_names)[WEFT_SYSTEM_NAME_MAX + 1];
    struct weft__system_names *names; /* that block, NULL when it is the shared empty one */
} weft__system_t;

/* Blocks of system records (struct weft_sched.slabs): block b holds
 * min(WEFT__SYSTEM_SLAB_FIRST << b, WEFT__SYSTEM_SLAB_MAX) records, then as many query slots
 * (weft__query_create_at). A block is allocated from the world's allocator (heap_bytes counts
 * it) when its first record is taken, and its pages are backed in one call then
 * (weft__sched_populate): a world with a handful of systems backs ~30 KiB, one with thousands
 * makes one call per WEFT__SYSTEM_SLAB_MAX systems (~470 KiB) instead of a page fault per
 * ~2 systems. Records and query slots never move. */
#define WEFT__SYSTEM_SLAB_FIRST 16u
#define WEFT__SYSTEM_SLAB_MAX 256u

/* A phase defined with weft_phase_define. */
typedef struct weft__phase_def {
    char name[WEFT_SYSTEM_NAME_MAX + 1]; /* NUL-terminated */
    uint32_t phase;                      /* the phase number */
    float step;                          /* fixed step (0: none) */
    uint32_t max_steps;                  /* most steps per frame */
    double acc;                          /* accumulated time not yet stepped, seconds */
    uint32_t steps;                      /* steps due this frame */
} weft__phase_def_t;

/* A registered observer (observer.c). */
typedef struct weft__observer {
    weft_observer_desc_t desc; /* copy */
    bool removed;              /* unregistered */
} weft__observer_t;

/* A user event type (observer.c). */
typedef struct weft__event_def {
    char name[WEFT_EVENT_NAME_MAX + 1]; /* NUL-terminated */
    uint32_t size;                      /* payload bytes */
} weft__event_def_t;

struct weft_sched {
    weft_world_t *world;            /* owner */
    const weft_allocator_t *alloc;  /* &world->alloc */
    const weft_logger_t *log;       /* world->log */
    weft_jobs_t *jobs;              /* world's job system (NULL until the first frame) */
    uint32_t workers;               /* worker count of jobs (1 before it exists) */
    weft__system_t **systems;       /* [count] by registration index */
    uint32_t count;                 /* registered systems */
    uint32_t systems_cap;           /* capacity of systems */
    bool dirty;                     /* graph must be rebuilt */
    bool running;                   /* inside weft_world_progress */
    weft__graph_t graph;            /* valid when !dirty */
    weft__sched_sys_t *gsys;        /* [count] graph input, valid when !dirty */
    weft_counter_t **dep_store;     /* backing of every system's deps */
    uint32_t *sinks;                /* run positions of each phase's sinks (graph order) */
    uint32_t nsinks;                /* entries in sinks */
    uint32_t *phase_sinks;          /* [nphases + 1] offsets into sinks */
    uint32_t *apply_list;           /* [n] system indices by phase, registration order inside */
    uint32_t *apply_first;          /* [nphases + 1] offsets into apply_list */
    weft__phase_cost_t *phase_cost; /* [nphases] measured dispatch cost (phase_cost.h) */
    uint32_t *flat_first;           /* [n + 1] by run position: first chunk unit of the system
                                       in a flat phase's loop (frame.c), filled per frame */
    bool *phase_flat;               /* [nphases] no edge between two systems of the phase */
    bool *phase_ready;              /* [nphases] a graph phase without main_thread systems:
                                       run through a ready list (ready.c) */
    bool *phase_deferred;           /* [nphases] a ready phase of prep_anywhere systems only */
    uint32_t *succ_store;           /* backing of every system's succ */
    uint32_t *root_store;           /* [n] each phase's systems without a predecessor in it,
                                       by run position */
    uint32_t *phase_roots;          /* [nphases + 1] offsets into root_store */
    weft__ready_t ready;            /* the ready list of the running phase (ready.h) */
    weft_atomic_u32 recorded;       /* a chunk of the running phase (threaded or inline path)
                                       left a command in its buffer (frame.c) */
    size_t derived_bytes;           /* size of the gsys/dep_store/sinks block */
    void *derived;                  /* that block */
    float dt;                       /* this frame's dt */
    float run_dt;                   /* the running phase's dt (fixed step or dt) */
    uint32_t gated;                 /* systems disabled, unregistered or with a run condition:
                                       while 0 no system needs a per-frame decision */
    bool deciding;                  /* this frame decides every system's skip flag (frame.c) */
    bool decided_last;              /* the previous frame did (its flags may be set) */
    bool handed_out;                /* this frame ran a phase on the workers (frame.c wakes
                                       them at the next frame's start) */
    uint32_t *phase_steps;          /* [nphases] runs of each phase this frame */
    float *phase_dt;                /* [nphases] the dt its systems get */
    weft__phase_def_t *defs;        /* [ndefs] defined phases, in definition order */
    uint32_t ndefs;                 /* entries in defs */
    uint32_t defs_cap;              /* capacity of defs */
    uint64_t frame_no;              /* frames started (sampling, phase_cost.h) */
    bool sampling;                  /* this phase's chunks are timed (phase_cost.h) */
    uint32_t caller;                /* worker index of the thread running the frame */
    weft_atomic_u64 joined;         /* sampled phase: earliest start of a chunk another worker
                                       ran (UINT64_MAX: none yet); phase_cost.h */
    weft__trace_t *trace;           /* NULL: tracing off */
    uint64_t *map;                  /* placeholder map scratch for apply */
    uint32_t map_cap;               /* entries in map */
    weft__cmd_stage_t stage;        /* dry run of the phase-end apply (command.h) */
    uint32_t resume_phase;          /* suspended frame: phase to resume at, else UINT32_MAX */
    uint32_t resume_pos;            /* ... its run position (UINT32_MAX: the phase's first) */
    uint32_t resume_step;           /* ... the run of a fixed-step phase it stopped in */
    weft__observer_t *observers;    /* [nobservers] by id - 1 (observer.c) */
    uint32_t nobservers;            /* ids handed out */
    uint32_t observers_cap;         /* capacity of observers */
    uint32_t event_observers;       /* live EVENT observers: delivery walks are needed */
    weft__event_def_t *events;      /* [nevents] by id - 1 */
    uint32_t nevents;               /* event types */
    uint32_t events_cap;            /* capacity of events */
    weft_cmd_t obs_cmd[2];          /* observer buffers: one records while the other applies */
    uint32_t obs_rec;               /* index of the recording one */
    bool resume_apply;              /* ... at its apply (its systems already ran) */
    weft__system_t **slabs;         /* [nslabs] blocks of records and their query slots
                                       (WEFT__SYSTEM_SLAB_FIRST): records never move, and one
                                       allocation serves many systems */
    uint32_t nslabs;                /* blocks allocated */
    uint32_t slabs_cap;             /* capacity of slabs */
    weft__names_t names;            /* which systems each name refers to (names.h) */
    uint32_t *walk;                 /* [walk_cap] registration's cycle walk stack */
    uint32_t walk_cap;              /* capacity of walk */
    uint32_t walk_no;               /* cycle walks made (weft__system_t.visit) */
};

/* The definition of phase number `phase`, or NULL. */
weft__phase_def_t *weft__sched_phase_def(const struct weft_sched *s, uint32_t phase);

/* Start of a new frame: how many times each phase runs and with which dt (phase.c).
 * Thread: main, after weft__sched_build. */
void weft__sched_plan_steps(struct weft_sched *s, float dt);

/* Stage, apply, deliver the events of and reset one buffer outside the phase machinery (the
 * observer buffers). On failure nothing of it is applied and it is kept. Errors:
 * WEFT_ENOMEM, WEFT_ECAPACITY (staging), or the first error the apply reported (then it was
 * applied). Thread: main (frame.c). */
weft_result_t weft__sched_apply_buffer(struct weft_sched *s, weft_cmd_t *cmd, bool *applied);

/* Deliver one recorded event to its observers (observer.c; the callback shape of
 * weft__cmd_deliver, ctx = the scheduler). */
void weft__sched_deliver(void *ctx, uint32_t event, weft_entity_t target, const void *payload,
                         uint32_t size);

/* Apply the observer buffers until none has commands (at most WEFT_OBSERVER_ROUNDS rounds).
 * Errors as weft_world_flush. Thread: main, outside running systems. */
weft_result_t weft__sched_flush_observers(struct weft_sched *s);

/* Free the observer module's tables and buffers (sched_fini). */
void weft__sched_observers_fini(struct weft_sched *s);

/* Forget a suspended frame (its pending commands are discarded). Thread: main. */
void weft__sched_drop_suspended(struct weft_sched *s);

/* The world's scheduler, created on first use (registers the module finaliser).
 * NULL on failure (reported). Thread: main. */
struct weft_sched *weft__sched_get(weft_world_t *world);

/* The scheduler if it exists, else NULL. Never allocates. */
struct weft_sched *weft__sched_peek(const weft_world_t *world);

/* Make sure the world's job system exists and s->workers is known. Errors: WEFT_ENOMEM,
 * WEFT_ETHREAD (as reported by the world). Thread: main. */
weft_result_t weft__sched_jobs(struct weft_sched *s);

/* Name of system id (1-based), or "?" for an invalid id. */
const char *weft__sched_system_name(const struct weft_sched *s, uint32_t id);

/* Rebuild the graph and the derived tables if systems changed. Errors: WEFT_ENOMEM,
 * WEFT_ECYCLE. Thread: main. */
weft_result_t weft__sched_build(struct weft_sched *s);

/* Run chunk `chunk` of `sys` on `worker` (frame.c): the body with its iterator, buffer and
 * change tick; times it on sampled frames and records it when tracing. Thread: any worker,
 * while its phase runs. */
void weft__sched_run_chunk(struct weft_sched *s, weft__system_t *sys, uint32_t chunk,
                           uint32_t worker);

/* Prepare the prep_anywhere system `sys` of a deferred ready run with change tick `tick`
 * (frame.c, ready.h): plan, chunk count, buffers, as the main thread's prepare pass would;
 * adds its estimated work to *work and clears *known when its cost is unknown. Cannot fail.
 * Thread: the worker about to run it, while its phase runs. */
void weft__sched_prepare_deferred(struct weft_sched *s, weft__system_t *sys, uint32_t tick,
                                  double *work, bool *known);

/* The job function of every chunk job (arg: a weft__chunk_arg_t). Thread: any worker. */
void weft__sched_chunk_job(void *arg, const weft_job_ctx_t *ctx);

/* Make room for `n` chunk jobs and command buffers in `sys`. Thread: main. */
weft_result_t weft__sched_reserve_chunks(struct weft_sched *s, weft__system_t *sys, uint32_t n);

/* Re-plan the automatic groups from the registered systems' AND terms (auto_plan.c; with the
 * setting off it only drops them). Called when a system registers or unregisters, when the
 * setting is turned on, and before a frame when they were dropped. Cannot fail.
 * Thread: main, no frame running. */
void weft__sched_auto_replan(weft_world_t *world);

#endif /* WEFT_SRC_SYSTEM_H */
