/* command_place.c: the placed command apply: the phase-end apply split into a serial walk
 * over the commands that settles everything entity-wide, and a parallel replay of the row
 * changes, one pool per range.
 *
 * DESIGN
 * Serially, a phase's commands are replayed as public calls (command.c, weft__cmd_apply).
 * For a component that is plain (weft__cmd_plain: no hook, no observer, no group, one
 * instance, no change tracking), such a call changes two things: the entity table (slot, generation, signature,
 * free list) and that component's pool. A pool's rows after the apply depend only on the
 * operations made on that pool (push, write in place, swap-remove) and their order. So the
 * placed apply walks the commands in apply order on the main thread, doing the entity-table
 * part for real and logging each pool operation (weft__cmd_resolve), then groups the log by
 * component keeping log order, and replays each pool's operations on one worker
 * (weft__cmd_place). Every pool and the entity table end bit-identical to the serial apply
 * at any worker count. Pools are disjoint memory, so the replay needs no synchronisation
 * beyond the parallel-for's own. The stage (command.c) reserved every row, sparse page,
 * slot and free-list entry first, and the log here is allocated before anything changes,
 * so the all-or-nothing out-of-memory rule holds: a failed log allocation only means the
 * serial apply runs. */
#include "command.h"

#include <string.h>

#include "jobs/platform/report.h"
#include "schedule.h"
#include "src/core/entity.h"
#include "src/core/signature.h"
#include "src/core/world.h"

/* One logged pool operation. */
typedef enum place_kind {
    PLACE_PUSH = 1,   /* append a row for idx: payload's bytes, or zeroes when NULL */
    PLACE_WRITE = 2,  /* overwrite idx's row with payload */
    PLACE_REMOVE = 3, /* swap-remove idx's row */
} place_kind_t;

struct weft__cmd_place_op {
    const unsigned char *payload; /* set data inside its command buffer, or NULL */
    uint32_t idx;                 /* entity index */
    uint32_t what;                /* component id << 2 | place_kind_t (16 bytes per op) */
};

_Static_assert(WEFT_MAX_COMPONENTS <= (UINT32_MAX >> 2), "a place op stores id << 2 | kind");

weft_result_t weft__cmd_place_reserve(weft__cmd_stage_t *st, const weft_allocator_t *alloc) {
    if (st->ops <= st->log_cap) {
        return WEFT_OK;
    }
    uint32_t cap = st->log_cap ? st->log_cap : 1024u;
    while (cap < st->ops) {
        cap = cap > UINT32_MAX / 2u ? st->ops : cap * 2u;
    }
    size_t bytes = (size_t)cap * sizeof(struct weft__cmd_place_op);
    struct weft__cmd_place_op *log = weft__sched_alloc(alloc, bytes);
    struct weft__cmd_place_op *sorted = log ? weft__sched_alloc(alloc, bytes) : NULL;
    if (sorted == NULL) {
        weft__sched_free(alloc, log, bytes);
        return WEFT_ENOMEM; /* not a failure of the frame: the serial apply runs instead */
    }
    weft__cmd_place_fini(st, alloc);
    st->log = log;
    st->sorted = sorted;
    st->log_cap = cap;
    return WEFT_OK;
}

void weft__cmd_place_fini(weft__cmd_stage_t *st, const weft_allocator_t *alloc) {
    size_t bytes = (size_t)st->log_cap * sizeof(struct weft__cmd_place_op);
    weft__sched_free(alloc, st->log, bytes);
    weft__sched_free(alloc, st->sorted, bytes);
    st->log = st->sorted = NULL;
    st->log_cap = 0;
}

bool weft__cmd_way_choose(weft__cmd_way_t *way) {
    if (way->split_ns == 0.0f) {
        return true;
    }
    if (way->serial_ns == 0.0f) {
        return false;
    }
    bool split_wins = way->split_ns <= way->serial_ns;
    if (++way->since_probe >= WEFT__CMD_PLACE_PROBE_EVERY) {
        way->since_probe = 0;
        return !split_wins; /* re-measure the slower way */
    }
    return split_wins;
}

void weft__cmd_way_fold(weft__cmd_way_t *way, bool split, uint64_t ns, uint32_t units) {
    float *est = split ? &way->split_ns : &way->serial_ns;
    float sample = (float)((double)ns / (double)(units ? units : 1u));
    if (sample <= 0.0f) {
        sample = 1e-3f; /* a clock too coarse to see the apply: known, and cheap */
    }
    *est = (*est == 0.0f || sample < *est) ? sample : *est + (sample - *est) * 0.25f;
}

void weft__cmd_place_begin(weft__cmd_stage_t *st) {
    st->nlog = 0;
    memset(st->per, 0, (size_t)st->ncomp * sizeof *st->per);
}

/* ---- the serial walk: one function per verb ----------------------------------- >>resolve */

static void log_op(weft__cmd_stage_t *st, place_kind_t kind, uint32_t c, uint32_t idx,
                   const unsigned char *payload) {
    st->log[st->nlog++] = (struct weft__cmd_place_op){
        .payload = payload, .idx = idx, .what = c << 2 | (uint32_t)kind};
    st->per[c]++;
}

/* Move idx's signature one step from sig (interned by the stage's dry run, so this cannot
 * fail); slot is idx's entity-table slot. */
static void step_sig(weft_world_t *world, uint32_t idx, uint32_t slot, uint32_t c, bool remove) {
    uint32_t next = 0;
    weft_result_t r = weft__sig_step(world, weft__slot_sig(slot), c, remove, &next);
    weft_assert_internal(r == WEFT_OK);
    (void)r;
    weft_atomic_store_relaxed(&world->slots[idx], weft__slot_make(weft__slot_gen(slot), next));
}

static void resolve_create(weft_world_t *world, weft_entity_t ph, uint64_t *map) {
    weft_entity_t real = WEFT_ENTITY_NULL;
    weft_result_t r = weft_entity_create(world, &real); /* reserved by the stage */
    weft_assert_internal(r == WEFT_OK);
    (void)r;
    map[weft_entity_generation(ph) - 1] = real;
}

/* Rows go in signature order, as weft__entity_destroy_index removes them. */
static void resolve_destroy(weft__cmd_stage_t *st, weft_world_t *world, uint32_t idx,
                            uint32_t slot) {
    uint32_t n;
    const uint32_t *ids = weft__sig_ids(world, weft__slot_sig(slot), &n);
    for (uint32_t i = 0; i < n; i++) {
        log_op(st, PLACE_REMOVE, ids[i], idx, NULL);
    }
    weft__entity_release_index(world, idx);
}

static void resolve_add(weft__cmd_stage_t *st, weft_world_t *world, weft_entity_t e, uint32_t slot,
                        uint32_t c) {
    uint32_t idx = weft_entity_index(e);
    if (weft__cmd_sig_has(world, weft__slot_sig(slot), c)) {
        (void)WEFT__NOTE(world->log, WEFT_EEXIST,
                         "weft_component_add: entity 0x%llx already has component '%s'",
                         (unsigned long long)e, weft__component(world, c)->name);
        return;
    }
    step_sig(world, idx, slot, c, false);
    log_op(st, PLACE_PUSH, c, idx, NULL);
}

static void resolve_set(weft__cmd_stage_t *st, weft_world_t *world, weft_entity_t e, uint32_t slot,
                        uint32_t c, const unsigned char *payload) {
    uint32_t idx = weft_entity_index(e);
    if (weft__cmd_sig_has(world, weft__slot_sig(slot), c)) {
        log_op(st, PLACE_WRITE, c, idx, payload);
        return;
    }
    step_sig(world, idx, slot, c, false);
    log_op(st, PLACE_PUSH, c, idx, payload);
}

static void resolve_remove(weft__cmd_stage_t *st, weft_world_t *world, weft_entity_t e,
                           uint32_t slot, uint32_t c) {
    uint32_t idx = weft_entity_index(e);
    if (!weft__cmd_sig_has(world, weft__slot_sig(slot), c)) {
        (void)WEFT__NOTE(world->log, WEFT_ENOENT,
                         "weft_component_remove: entity 0x%llx has no "
                         "component '%s'",
                         (unsigned long long)e, weft__component(world, c)->name);
        return;
    }
    step_sig(world, idx, slot, c, true);
    log_op(st, PLACE_REMOVE, c, idx, NULL);
}

void weft__cmd_resolve(weft__cmd_stage_t *st, weft_world_t *world, weft_cmd_t *cmd, uint64_t *map) {
    for (size_t at = 0; at < cmd->len;) {
        weft__cmd_rec_t rec;
        memcpy(&rec, cmd->data + at, sizeof rec);
        unsigned char *payload = cmd->data + at + sizeof rec;
        at += rec.next;
        if (rec.op == WEFT__CMD_CREATE) {
            resolve_create(world, rec.entity, map);
            continue;
        }
        uint32_t slot = 0;
        weft_entity_t e = weft__cmd_target_slot(world, cmd, at - rec.next, &rec, map, &slot);
        if (e == WEFT_ENTITY_NULL) {
            continue;
        }
        switch ((weft__cmd_op_t)rec.op) {
        case WEFT__CMD_DESTROY:
            resolve_destroy(st, world, weft_entity_index(e), slot);
            break;
        case WEFT__CMD_ADD:
            resolve_add(st, world, e, slot, rec.component);
            break;
        case WEFT__CMD_SET:
            if (cmd->created != 0 && world->components[rec.component]->entity_field_count != 0) {
                weft__cmd_remap_fields(world, (weft_component_t){rec.component}, payload, map);
            }
            resolve_set(st, world, e, slot, rec.component, payload);
            break;
        case WEFT__CMD_REMOVE:
            resolve_remove(st, world, e, slot, rec.component);
            break;
        case WEFT__CMD_CREATE:
        case WEFT__CMD_EMIT:
        case WEFT__CMD_CALL: /* never here: a phase with a call is applied serially */
            break;
        }
    }
}

/* ---- the parallel replay --------------------------------------------------------- >>place */

/* Group the log by component (a stable counting sort: each pool keeps log order) and list
 * the components with most operations first, so the longest pools start first. */
static void group_log(weft__cmd_stage_t *st) {
    st->ntouched = 0;
    st->first[0] = 0; /* id 0 is no component: never logged */
    uint32_t off = 0;
    for (uint32_t c = 1; c < st->ncomp; c++) {
        uint32_t n = st->per[c];
        st->first[c] = off;
        off += n;
        if (n == 0) {
            continue;
        }
        uint32_t k = st->ntouched++;
        for (; k > 0 && st->per[st->touched[k - 1]] < n; k--) {
            st->touched[k] = st->touched[k - 1];
        }
        st->touched[k] = c;
    }
    for (uint32_t i = 0; i < st->nlog; i++) { /* first[c] as the cursor, then back */
        st->sorted[st->first[st->log[i].what >> 2]++] = st->log[i];
    }
    for (uint32_t c = 1; c < st->ncomp; c++) {
        st->first[c] -= st->per[c];
    }
}

/* Replay one pool's operations: what add_index / weft_component_set / remove_common /
 * weft__entity_destroy_index do to a plain pool, in the same order. */
static void place_pool(weft_world_t *world, uint32_t c, const struct weft__cmd_place_op *op,
                       const struct weft__cmd_place_op *end) {
    weft__pool_t *pool = &world->components[c]->pool;
    for (; op < end; op++) {
        switch ((place_kind_t)(op->what & 3u)) {
        case PLACE_PUSH: {
            uint32_t row = weft__pool_push(pool, op->idx);
            if (op->payload != NULL && pool->size) {
                memcpy(weft__pool_at(pool, row), op->payload, pool->size);
            }
            break;
        }
        case PLACE_WRITE:
            if (pool->size) {
                memcpy(weft__pool_at(pool, weft__pool_row(pool, op->idx)), op->payload, pool->size);
            }
            break;
        case PLACE_REMOVE:
            weft__pool_remove_swap(pool, weft__pool_row(pool, op->idx));
            break;
        }
    }
}

typedef struct place_ctx {
    weft__cmd_stage_t *st;
    weft_world_t *world;
} place_ctx_t;

static void place_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    place_ctx_t *p = ctx;
    const weft__cmd_stage_t *st = p->st;
    for (uint64_t k = begin; k < end; k++) {
        uint32_t c = st->touched[k];
        const struct weft__cmd_place_op *first = st->sorted + st->first[c];
        place_pool(p->world, c, first, first + st->per[c]);
    }
}

void weft__cmd_place(weft__cmd_stage_t *st, weft_world_t *world, weft_jobs_t *jobs) {
    group_log(st);
    place_ctx_t ctx = {st, world};
    if (st->ntouched <= 1 || jobs == NULL) {
        place_range(&ctx, 0, st->ntouched, 0);
        return;
    }
    /* Called from the frame on the main thread (worker 0) of a live job system: none of
     * its errors (EINVAL, ESHUTDOWN) can occur, and it never fails for lack of memory. */
    weft_result_t r = weft_parallel_for(jobs, st->ntouched, 1, place_range, &ctx);
    weft_assert_internal(r == WEFT_OK);
    (void)r;
}
