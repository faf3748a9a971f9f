/* weft/world.h: the world — the container of entities, component pools, groups and queries,
 * and the owner of the job system that runs its frames.
 *
 * Thread model (docs/architecture.md): the world belongs to the thread that created it (the
 * "main thread"); only the calls marked "Thread: any" may be made from other threads, and the
 * read calls marked "jobs" may be made from jobs while a frame runs. A main-thread-only call
 * that changes or walks the world's structure (create, destroy, add, set, remove, register,
 * hierarchy edits, archives, snapshots) returns WEFT_ESTATE in debug builds when it comes from
 * another thread, from inside a system (systems record commands, weft/command.h) or from
 * inside a component hook, with a message naming the function and the thread. */
#ifndef WEFT_WORLD_H
#define WEFT_WORLD_H

#include "weft/base.h"
#include "weft/jobs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_world weft_world_t; /* opaque; completed in src/core/world.h */

/* ---- creation ---------------------------------------------------------- >>world_desc */

typedef struct weft_world_desc {
    uint32_t worker_count;      /* 0: hardware threads (counts the main thread) */
    weft_execution_t execution; /* 0: threaded; WEFT_EXECUTION_INLINE: no threads at all */
    uint32_t entity_capacity;   /* 0: 4096 slots committed up front; grows on demand */
    uint32_t entity_limit;      /* 0: 2^28 entity slots of address space reserved up front
                                   (4 bytes each, committed only as used); max 2^31 */
    weft_allocator_t allocator; /* 0: malloc/free; every heap byte the world uses goes here */
    weft_logger_t logger;       /* 0: errors to stderr in debug builds; .level: verbosity */
    weft_jobs_t *jobs;          /* NULL: the world creates (on first use) and owns a job system from
                          worker_count and execution. Otherwise the world runs its frames on
                          this one, which it never destroys: worker_count must then be 0 or
                          the job system's count, execution must be 0, the world must be
                          created on the job system's creating thread (its worker 0), and the
                          job system must outlive every world using it. Several worlds may
                          share one job system; they progress one at a time, from that thread,
                          and a system must not progress another world. */
    uint32_t _canary;           /* must stay 0 */
} weft_world_desc_t;

/* The desc with defaults filled in (worker_count resolved to a number, etc.). */
WEFT_API weft_world_desc_t weft_world_desc_resolved(const weft_world_desc_t *desc);

/* Create a world; `desc` may be NULL for all defaults. Without desc.jobs the job system is
 * created on first use (weft_world_jobs), from desc.worker_count/execution/allocator/logger;
 * with it, the world uses that one (see desc.jobs for the rules, each WEFT_EINVAL).
 * Errors: WEFT_EINVAL (bad desc), WEFT_ENOMEM (nothing is left behind).
 * Thread: any; the calling thread becomes the world's main thread. The caller owns *out. */
WEFT_API weft_result_t weft_world_create(const weft_world_desc_t *desc, weft_world_t **out);

/* Destroy the world: module finalisers run (reverse registration order), then every pool,
 * group, query and the job system the world created are freed (a desc.jobs one is not). Remove hooks do NOT fire. Queries created from
 * the world must not be used afterwards (they are freed here if still alive). NULL is
 * ignored. Thread: main. */
WEFT_API void weft_world_destroy(weft_world_t *world);

/* The world's job system: desc.jobs, or the one created on the first call (main thread) from
 * the world desc, owned by the world. NULL when creation failed (see weft_last_error()).
 * Thread: main for the first call; any afterwards. */
WEFT_API weft_jobs_t *weft_world_jobs(weft_world_t *world);

/* ---- inspection -------------------------------------------------------- >>world_stats */

/* A stable 64-bit hash of the world's observable data: the entity table (slot count,
 * generations of every slot, the free-list order), every pool's rows in row order (entity
 * indices and data bytes), pools in component-id order, and the data modules keep outside
 * the pools (the hierarchy: every node's local transform, parent link and world matrix, in
 * entity order). Two worlds built by the same calls
 * hash equal; the hash does not depend on addresses, capacities, worker counts or timing.
 * Thread: main, or any thread while no structural change runs. */
WEFT_API uint64_t weft_world_hash(const weft_world_t *world);

/* ---- hash breakdown ---------------------------------------------------- >>world_hash_parts */

typedef enum weft_hash_part_kind {
    WEFT_HASH_PART_ENTITIES = 1,  /* the entity table: slots, generations, free list */
    WEFT_HASH_PART_COMPONENT = 2, /* one component's pool (or resource value); id = its id */
    WEFT_HASH_PART_MODULE = 3,    /* one module's data outside the pools (weft/module.h: the
                                     hierarchy, a user's); id = its registration index */
} weft_hash_part_kind_t;

/* One part of the world's observable data and its own digest. */
typedef struct weft_hash_part {
    weft_hash_part_kind_t kind;
    uint32_t id;      /* component id or module index (0 for the entity table) */
    const char *name; /* "entities", the component's or the module's name; valid while the
                         world lives */
    uint64_t hash;    /* digest of this part alone, by weft_world_hash's mixing */
} weft_hash_part_t;

/* The world hash broken down: the entity table, then every component in id order, then
 * every module, each with its own digest, so two runs that diverge can be told where they
 * first differ (compare the parts in order). Record it per frame by calling it after each
 * weft_world_progress (O(world data), like weft_world_hash; no allocation) into arrays of
 * your own. Writes min(cap, total) parts to out (out may be NULL when cap is 0) and the
 * total into *count. Errors: WEFT_EINVAL (NULL world or count, NULL out with cap > 0).
 * Thread: as weft_world_hash. */
WEFT_API weft_result_t weft_world_hash_parts(const weft_world_t *world, weft_hash_part_t *out,
                                             uint32_t cap, uint32_t *count);

/* A record of the hash breakdown frame by frame, in arrays of the caller's (nothing is
 * allocated): frame f's parts are parts[(f % frames) * parts_per_frame ...], counts[f % frames]
 * of them; the newest `frames` frames are kept (a ring). Zero `recorded` to start. */
typedef struct weft_hash_log {
    weft_hash_part_t *parts;  /* [frames * parts_per_frame] */
    uint32_t *counts;         /* [frames]: parts of each kept frame (the total, even when more
                                 than parts_per_frame: those past it are not kept) */
    uint32_t parts_per_frame; /* room per frame */
    uint32_t frames;          /* frames kept, >= 1 */
    uint64_t recorded;        /* frames recorded so far */
} weft_hash_log_t;

/* Record the world's breakdown (weft_world_hash_parts) as frame log->recorded, then count it.
 * Call it after each weft_world_progress. Errors: WEFT_EINVAL (NULL or empty arrays).
 * Thread: as weft_world_hash. */
WEFT_API weft_result_t weft_hash_log_record(const weft_world_t *world, weft_hash_log_t *log);

/* Compare two runs' logs: true when, over the frames both still hold, some frame differs
 * (part count or a kept part's kind, id or digest); *frame and *part (may be NULL) then name
 * the first such frame and the first differing part in it. False when they agree. */
WEFT_API bool weft_hash_log_diverged(const weft_hash_log_t *a, const weft_hash_log_t *b,
                                     uint64_t *frame, uint32_t *part);

typedef struct weft_world_stats {
    size_t heap_bytes;        /* bytes the world holds through its allocator hook: entities,
                                 pools, groups, queries, modules (the hierarchy included),
                                 the scheduler, command arenas, trace and the job system it
                                 created (a borrowed desc.jobs is not the world's) */
    size_t vmem_bytes;        /* bytes of committed address space (the generation table) */
    uint32_t entity_count;    /* live entities */
    uint32_t entity_slots;    /* slots ever handed out (live + free), the table high-water */
    uint32_t component_count; /* registered components */
    uint32_t group_count;     /* groups alive: the user's and the automatic ones */
    uint32_t signature_count; /* distinct component sets interned so far */
} weft_world_stats_t;

/* Fill *out with current figures. Thread: main. */
WEFT_API void weft_world_stats(const weft_world_t *world, weft_world_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_WORLD_H */
