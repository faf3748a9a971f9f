/* command.h: the command-buffer format behind weft/command.h (private to the build).
 *
 * DESIGN
 * A buffer is one growable byte arena owned by one job at a time. Each command is a 24-byte
 * record header followed by its payload (component data for set), padded to 8 bytes, so a
 * buffer is replayed by one forward walk. The arena keeps its capacity across frames: after
 * the first frames a steady-state frame records without allocating.
 * Placeholders: weft_cmd_create() returns a handle whose index is 0 (never a real entity's)
 * and whose generation is the create's ordinal in this buffer + 1. At apply, each create
 * makes a real entity and fills the buffer's placeholder map, which later commands of the
 * same buffer read: as targets, and inside set payloads at the component's declared entity
 * fields, which are rewritten in place before the set (as archive loading remaps them). */
#ifndef WEFT_SRC_COMMAND_H
#define WEFT_SRC_COMMAND_H

#include <string.h>

#include "weft/command.h"
#include "weft/component.h"

#include "weft/jobs.h"

#include "jobs/platform/atomic.h"
#include "src/core/entity.h"
#include "src/core/signature.h"
#include "src/core/world.h"

struct weft_world;
struct weft__component;
struct weft__cmd_place_op;

typedef enum weft__cmd_op {
    WEFT__CMD_CREATE = 1,  /* entity = placeholder */
    WEFT__CMD_DESTROY = 2, /* entity */
    WEFT__CMD_ADD = 3,     /* entity, component: zero-initialised if missing */
    WEFT__CMD_SET = 4,     /* entity, component, size bytes of data follow */
    WEFT__CMD_REMOVE = 5,  /* entity, component */
    WEFT__CMD_EMIT = 6,    /* entity = event target (may be 0), component = event id,
                              payload follows; the apply resolves a placeholder target in
                              place, delivery happens after (weft__cmd_deliver) */
    WEFT__CMD_CALL = 7,    /* payload: the weft_cmd_call_fn, then the call's data */
} weft__cmd_op_t;

typedef struct weft__cmd_rec {
    uint8_t op;         /* weft__cmd_op_t */
    uint8_t pad[3];     /* zero */
    uint32_t component; /* component id (0 for create/destroy) */
    uint64_t entity;    /* real handle or placeholder */
    uint32_t size;      /* payload bytes after the header */
    uint32_t next;      /* bytes from this header to the next one */
} weft__cmd_rec_t;

_Static_assert(sizeof(weft__cmd_rec_t) == 24, "command record header is 24 bytes");

/* One job's buffer. Cache-line aligned so chunk jobs of one system never share a line. */
struct weft_cmd {
    _Alignas(WEFT_CACHE_LINE) unsigned char *data; /* arena, owned; NULL until first use */
    size_t len;                                    /* bytes recorded this frame */
    size_t cap;                                    /* arena capacity in bytes */
    uint32_t created;                              /* placeholders handed out this frame */
    uint32_t system;                               /* owning system id, for messages */
    struct weft_world *world;                      /* for component sizes and the allocator */
    const weft_allocator_t *alloc;                 /* the world's allocator (may hold NULL hooks) */
    const weft_logger_t *log;                      /* the world's logger */
    weft_atomic_u32 open; /* 1 only inside the run call that received the buffer: recording
                               outside it is WEFT_ESTATE (relaxed: in correct use the recording
                               thread set it itself; the atomic keeps misuse from another
                               thread a reported error, not a data race) */
    const void *owner;    /* weft__thread_token() of the thread running that call */
};

/* Open the buffer for the run call about to receive it, on the thread that makes the call;
 * close it when the call returns. */
static inline void weft__cmd_open(weft_cmd_t *cmd, const void *thread) {
    cmd->owner = thread;
    weft_atomic_store_relaxed(&cmd->open, 1u);
}
static inline void weft__cmd_close(weft_cmd_t *cmd) { weft_atomic_store_relaxed(&cmd->open, 0u); }

/* Placeholders: index 0, generation = ordinal + 1. */
static inline bool weft__cmd_is_placeholder(uint64_t e) { return (uint32_t)e == 0 && e != 0; }

/* Prepare a buffer for a new frame (keeps the arena). */
static inline void weft__cmd_reset(weft_cmd_t *cmd) {
    cmd->len = 0;
    cmd->created = 0;
}

/* Free the arena (the struct itself belongs to the caller). */
void weft__cmd_fini(weft_cmd_t *cmd);

/* ---- staged apply ---- */

/* The measured cost of two ways to do one step of the apply, the serial way and the split way
 * (spread over the workers), which give the same world (weft__cmd_way_choose). */
typedef struct weft__cmd_way {
    float serial_ns;      /* ns per unit of the serial way; 0: not measured yet */
    float split_ns;       /* ns per unit of the split way; 0: not measured yet */
    uint32_t since_probe; /* choices since the slower way last ran */
} weft__cmd_way_t;

/* What applying a phase's buffers will need, found by a dry run (weft__cmd_stage_scan) over
 * the buffers in apply order before any is applied. The dry run follows each entity's
 * component set (signature) through the commands, so it knows which adds really add a row
 * and which signature transitions will be taken; it interns those transitions on the way
 * (the signature tables are a cache: nothing observable changes). Owned by the scheduler and
 * reused, so a steady-state apply allocates nothing here. */
typedef struct weft__cmd_stage {
    uint32_t creates;  /* creates (entity slots to reserve) */
    uint32_t destroys; /* destroys of live entities (free list) */
    /* Per-component tables, indexed by id, sized for the components registered at the last
     * dry run's start (ncomp = component_count + 1) and kept between applies: */
    uint32_t ncomp;       /* entries in use in each table (ids are below this) */
    uint32_t comp_cap;    /* entries allocated in each table */
    uint32_t *rows;       /* upper bound on the rows each pool gains */
    uint8_t *placeholder; /* 1: a created entity gains the component */
    uint32_t *sim;        /* [sim_cap] by entity index: epoch << 16 | sig */
    uint32_t sim_cap;     /* entries in sim */
    uint32_t epoch;       /* current dry run (1 .. 0xFFFF) */
    uint32_t *dead;       /* [dead_cap] entity indices destroyed */
    uint32_t ndead;       /* entries in dead */
    uint32_t dead_cap;    /* capacity of dead */
    /* The placed apply (command_place.c): */
    uint32_t ops;                   /* upper bound on the pool operations to apply */
    bool hooked;                    /* a command reaches a component that is not plain
                                       (weft__cmd_plain): only the serial apply may run */
    struct weft__cmd_place_op *log; /* [log_cap] pool operations in apply order */
    uint32_t log_cap;               /* capacity of log */
    uint32_t nlog;                  /* entries in log */
    uint32_t *per;                  /* [comp_cap] logged operations per component (kept until
                                       the next placed apply: it weighs the lanes) */
    uint32_t *touched;              /* [comp_cap] scratch: components by weight, most first */
    uint8_t *lane;                  /* [comp_cap] the replay lane of each component */
    uint32_t lanes;                 /* replay lanes of the running placed apply */
    uint32_t lanes_started;         /* lanes [0, lanes_started) run as jobs, the rest on the
                                       main thread once the walk is over */
    struct weft_world *place_world; /* the world being applied, for the lane jobs */
    weft_atomic_u32 published;      /* log entries the lanes may replay (release), with
                                       WEFT__CMD_PLACE_FINAL once the walk is over */
    weft_counter_t lanes_done;      /* counts the lane jobs down */
    uint64_t walk_begin;            /* weft__trace_now() when the walk started */
    float lead_ops;                 /* operations a lane replays while the walk runs (measured:
                                       the walk's time over the main thread's replay time per
                                       operation; 0: not yet) */
    /* The split dry run (weft__cmd_stage_scan_split): */
    const weft_cmd_t **bufs;           /* [bufs_cap] the phase's non-empty buffers, in order */
    uint32_t nbufs, bufs_cap;          /* entries in use, allocated */
    struct weft__cmd_scan_task *tasks; /* [tasks_cap] one per buffer */
    uint32_t tasks_cap;                /* capacity of tasks */
    uint32_t *slice;                   /* [slice_cap] 4 entries per record, per buffer */
    uint32_t slice_cap;                /* capacity of slice */
    uint64_t *maps;                    /* [maps_cap] each buffer's placeholder signatures */
    uint32_t maps_cap;                 /* capacity of maps */
    weft_atomic_u32 *owner;            /* [owner_cap] by entity index: epoch << 20 | buffer + 1 */
    uint32_t owner_cap;                /* capacity of owner */
    uint32_t owner_epoch;              /* current split dry run (1 .. 4095) */
    uint32_t deferred;                 /* records the last split dry run left to the main thread */
    /* Measured costs: the placed or serial apply of eligible phases (weft__cmd_way_choose on stage.place)
     * and the split or serial dry run (weft__cmd_stage_scan_split). */
    weft__cmd_way_t place;
    weft__cmd_way_t scan;
} weft__cmd_stage_t;

/* Start a dry run over the current world. Errors: WEFT_ENOMEM (reported). Thread: main. */
weft_result_t weft__cmd_stage_begin(weft__cmd_stage_t *st, struct weft_world *world,
                                    const weft_allocator_t *alloc);

/* Dry-run `cmd` (the next buffer in apply order). `map` has room for cmd->created entries and
 * is used as scratch. Errors: WEFT_ENOMEM, WEFT_ECAPACITY (reported; nothing observable
 * changed). Thread: main. */
weft_result_t weft__cmd_stage_scan(weft__cmd_stage_t *st, struct weft_world *world,
                                   const weft_allocator_t *alloc, const weft_cmd_t *cmd,
                                   uint64_t *map);

/* The split dry run: the same totals, sparse pages and signature steps as
 * weft__cmd_stage_scan over st->bufs[0 .. nbufs) in order (after weft__cmd_stage_begin),
 * with the buffers spread over the workers of `jobs`: each buffer claims the entities its
 * records reach (one atomic per record); a buffer dry-runs the records on entities it alone
 * reaches and its placeholders' (each entity's records then come from one buffer, in order),
 * and the main thread sums the buffers and dry-runs the records on shared entities after, in
 * apply order. Workers only look things up: when a step is not interned yet or a sparse page
 * is missing, or the split's scratch cannot be allocated, *split is false and nothing but
 * scratch changed: the caller restarts the stage and runs the serial dry run. Errors (with
 * *split true): WEFT_ENOMEM, WEFT_ECAPACITY (reported; nothing observable changed). Thread:
 * main (the caller takes part). */
weft_result_t weft__cmd_stage_scan_split(weft__cmd_stage_t *st, struct weft_world *world,
                                         const weft_allocator_t *alloc, weft_jobs_t *jobs,
                                         bool *split);

/* Append a buffer to st->bufs for weft__cmd_stage_scan_split. False when out of memory (not
 * reported: the serial dry run runs instead). */
bool weft__cmd_stage_add(weft__cmd_stage_t *st, const weft_allocator_t *alloc,
                         const weft_cmd_t *cmd);

/* Reserve what the scanned buffers need: entity slots, free-list room, pool rows and the
 * sparse pages of every index a command can reach, and the instance slot tables of
 * multi-instance components (weft__multi_reserve). After WEFT_OK, applying the scanned
 * buffers in the scanned order cannot fail for lack of memory. Errors: WEFT_ENOMEM,
 * WEFT_ECAPACITY (reported; only spare capacity changed). Thread: main. */
weft_result_t weft__cmd_stage_reserve(weft__cmd_stage_t *st, struct weft_world *world);

/* ---- placed apply (command_place.c) ---- */

/* True when applying commands on `comp` has no effect beyond its own pool and the entity
 * table: no hook or observer (either would see the world mid-apply and must fire in command
 * order on the main thread), no group (rows of several pools move together), one instance per
 * entity. */
static inline bool weft__cmd_plain(const weft__component_t *comp) {
    /* A tracked pool (change filters, src/core/change.h) has its adds and writes marked by
     * the serial apply's calls; the placed replay would skip that. */
    return comp->on_add == NULL && comp->on_remove == NULL && comp->on_set == NULL &&
           comp->pool.group == 0 && comp->pool.multi == NULL && comp->pool.tick_added == NULL;
}

/* Commands on fewer pool operations than this are applied serially: below it the hand-out
 * costs more than placing the rows saves (docs/architecture.md section 2, "Apply"). */
#define WEFT__CMD_PLACE_MIN_OPS 512u

/* Whether to take the split way, from measured costs: the split way first, then the serial
 * way, each once, then whichever costs less per unit, the other re-measured every
 * WEFT__CMD_PLACE_PROBE_EVERY-th time so the choice follows the machine. Used for the apply
 * of an eligible phase (more than one worker, no hooked component, at least
 * WEFT__CMD_PLACE_MIN_OPS operations; units: row operations) and for the dry run of a phase
 * with more than one worker and at least WEFT__CMD_PLACE_MIN_OPS records (units: records).
 * Thread: main. */
bool weft__cmd_way_choose(weft__cmd_way_t *way);

/* Fold one run's wall time over `units` into the cost of the way it took. A lower sample
 * replaces the estimate, a higher one is blended in with weight 1/4 after being clipped to
 * WEFT__CMD_WAY_CLIP x the estimate: interference on a shared machine only ever slows a
 * sample down, and one run with a descheduled thread (several times the usual) then raises
 * the estimate by at most 1/4 instead of flipping the choice until the next probe; a lasting
 * slowdown still doubles the estimate in four runs. */
void weft__cmd_way_fold(weft__cmd_way_t *way, bool split, uint64_t ns, uint32_t units);

#define WEFT__CMD_WAY_CLIP 2.0f

#define WEFT__CMD_PLACE_PROBE_EVERY 16u

/* Room for the placed apply's operation log (st->ops entries). Errors: WEFT_ENOMEM (not
 * reported: the caller applies serially instead). Thread: main. */
weft_result_t weft__cmd_place_reserve(weft__cmd_stage_t *st, const weft_allocator_t *alloc);

/* Replay lanes of a placed apply at most (one per worker; lane ids are bytes). */
#define WEFT__CMD_PLACE_LANES_MAX 64u

/* In weft__cmd_stage_t.published: the walk is over, every entry is in the log. */
#define WEFT__CMD_PLACE_FINAL 0x80000000u

/* Start a placed apply of the scanned buffers (after weft__cmd_stage_reserve and
 * weft__cmd_place_reserve succeeded and st->hooked is false): split the touched pools into
 * replay lanes (one per worker up to WEFT__CMD_PLACE_LANES_MAX, weighed by the last placed apply's
 * operations and this one's rows, the main thread's lane lighter by what the others replay
 * while it walks) and start a job per lane but the main thread's on `jobs`, which replays its
 * pools' operations while the walk appends them. A lane whose job could not be submitted is
 * replayed by weft__cmd_place. Thread: main. */
void weft__cmd_place_begin(weft__cmd_stage_t *st, struct weft_world *world, weft_jobs_t *jobs,
                           uint32_t workers);

/* The serial half of the placed apply for `cmd`, the next buffer in apply order: everything
 * weft__cmd_apply does to the entity table (creates, destroys, signatures, placeholder map,
 * set payload and event target remapping, skips), in write order, with each pool change
 * appended to the log instead of made, and published to the lanes every
 * WEFT__CMD_PLACE_PUBLISH_EVERY entries. Touches no pool (the lanes own them until
 * weft__cmd_place returns). Cannot fail (the stage reserved it all). Thread: main. */
void weft__cmd_resolve(weft__cmd_stage_t *st, struct weft_world *world, weft_cmd_t *cmd,
                       uint64_t *map);

#define WEFT__CMD_PLACE_PUBLISH_EVERY 64u

/* End the placed apply after the walk: publish the whole log, replay the main thread's lane
 * and those whose job did not start, and wait for the lane jobs (the caller runs ready jobs meanwhile). Each pool
 * ends exactly as weft__cmd_apply would leave it, since a pool's rows depend only on the
 * operations on that pool and their order, and each pool is replayed by one lane in log
 * order. Thread: main. */
void weft__cmd_place(weft__cmd_stage_t *st, weft_jobs_t *jobs);

/* Note a command skipped because its target is no longer alive (WEFT_LOG_DEBUG). */
void weft__cmd_note_stale(const struct weft_world *world, const weft_cmd_t *cmd, uint8_t op,
                          weft_entity_t e);

/* The live entity a record at offset `at` of `cmd` acts on (its placeholder read from `map`),
 * and its entity-table slot in *slot, for the apply walks; not for creates. WEFT_ENTITY_NULL
 * when the record has nothing more to do: an event (its placeholder target is rewritten in
 * place for delivery), a target whose create failed, or a stale one (noted at WEFT_LOG_DEBUG
 * as a documented skip). Inline: the placed walk calls it for every record. */
static inline weft_entity_t weft__cmd_target_slot(struct weft_world *world, weft_cmd_t *cmd,
                                                  size_t at, weft__cmd_rec_t *rec,
                                                  const uint64_t *map, uint32_t *slot) {
    weft_entity_t e = rec->entity;
    if (weft__cmd_is_placeholder(e)) {
        e = map[weft_entity_generation(e) - 1]; /* 0 when its create failed */
    }
    if (rec->op == WEFT__CMD_EMIT) { /* delivered after the apply: resolve its target */
        if (e != rec->entity) {
            rec->entity = e;
            memcpy(cmd->data + at, rec, sizeof *rec);
        }
        return WEFT_ENTITY_NULL;
    }
    if (e == WEFT_ENTITY_NULL) {
        return e; /* its create failed, which was reported */
    }
    if (!weft__entity_slot(world, e, slot)) {
        weft__cmd_note_stale(world, cmd, rec->op, e);
        return WEFT_ENTITY_NULL;
    }
    return e;
}

/* Whether signature sig holds component c (ids ascending; a signature has few). */
static inline bool weft__cmd_sig_has(const struct weft_world *world, uint32_t sig, uint32_t c) {
    uint32_t n;
    const uint32_t *ids = weft__sig_ids(world, sig, &n);
    for (uint32_t i = 0; i < n && ids[i] <= c; i++) {
        if (ids[i] == c) {
            return true;
        }
    }
    return false;
}

/* weft__cmd_target_slot without the slot. */
weft_entity_t weft__cmd_target(struct weft_world *world, weft_cmd_t *cmd, size_t at,
                               weft__cmd_rec_t *rec, const uint64_t *map);

/* The verb of a record, for messages ("create", "set", ...). */
const char *weft__cmd_op_name(uint8_t op);

/* Rewrite the placeholders in c's declared entity fields of a set payload (in its buffer) to
 * the entities their creates made (`map`, WEFT_ENTITY_NULL when a create failed). */
void weft__cmd_remap_fields(const struct weft_world *world, weft_component_t c,
                            unsigned char *payload, const uint64_t *map);

/* Free the placed apply's log (part of weft__cmd_stage_fini). */
void weft__cmd_place_fini(weft__cmd_stage_t *st, const weft_allocator_t *alloc);

/* Free the stage's scratch arrays. */
void weft__cmd_stage_fini(weft__cmd_stage_t *st, const weft_allocator_t *alloc);

/* Replay `cmd` onto the world in write order (patching set payloads' placeholders in place). `map` has room for cmd->created entities and
 * receives the real entity of each placeholder. Stale targets are skipped (two systems may
 * destroy the same entity in one frame); hooks fire as the world applies each change.
 * Returns the first error the world reported (the rest of the buffer is still applied), e.g.
 * WEFT_ENOMEM. Thread: main. */
weft_result_t weft__cmd_apply(struct weft_world *world, weft_cmd_t *cmd, uint64_t *map);

/* Record an event (weft_cmd_emit after its event checks): `target` 0, real, or a placeholder
 * of this buffer. Errors: WEFT_ESTATE (outside the run call), WEFT_EINVAL (foreign
 * placeholder), WEFT_ENOMEM. */
weft_result_t weft__cmd_push_emit(weft_cmd_t *cmd, uint32_t event, weft_entity_t target,
                                  const void *payload, uint32_t size);

/* Call fn for every event recorded in `cmd`, in write order (after weft__cmd_apply resolved
 * their targets). Thread: main. */
void weft__cmd_deliver(const weft_cmd_t *cmd,
                       void (*fn)(void *ctx, uint32_t event, weft_entity_t target,
                                  const void *payload, uint32_t size),
                       void *ctx);

#endif /* WEFT_SRC_COMMAND_H */
