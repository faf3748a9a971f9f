/* command_place.c: the placed command apply: the phase-end apply split into a serial walk
 * over the commands that settles everything entity-wide, and a replay of the row changes in
 * lanes of pools that follow the walk on the other workers.
 *
 * DESIGN
 * Serially, a phase's commands are replayed as public calls (command.c, weft__cmd_apply).
 * For a component that is plain (weft__cmd_plain: no hook, no observer, no group, one
 * instance, no change tracking), such a call changes two things: the entity table (slot, generation, signature,
 * free list) and that component's pool. A pool's rows after the apply depend only on the
 * operations made on that pool (push, write in place, swap-remove) and their order. So the
 * placed apply walks the commands in apply order on the main thread, doing the entity-table
 * part for real and logging each pool operation (weft__cmd_resolve), while replay lanes on
 * the other workers follow the log as it grows, each replaying the operations of its own
 * pools in log order (weft__cmd_place_begin / weft__cmd_place): the walk and the replay
 * overlap. Every pool and the entity table end bit-identical to the serial apply at any
 * worker count and any lane split. Pools are disjoint memory and the walk touches none, so
 * the lanes need no lock: the walk publishes the log's length with a release store every
 * WEFT__CMD_PLACE_PUBLISH_EVERY entries, which orders the entries (and the set payloads the
 * walk remapped before logging them) before a lane's acquire load. The stage (command.c)
 * reserved every row, sparse page, slot and free-list entry first, and the log here is
 * allocated before anything changes, so the all-or-nothing out-of-memory rule holds: a
 * failed log allocation only means the serial apply runs, a lane job that could not be
 * submitted is replayed on the main thread after the walk. */
#include "command.h"

#include <sched.h>
#include <string.h>

#include "jobs/platform/report.h"
#include "schedule.h"
#include "src/core/entity.h"
#include "src/core/signature.h"
#include "src/core/world.h"
#include "system.h"
#include "trace.h"

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
    if (st->ops >= WEFT__CMD_PLACE_FINAL) {
        return WEFT_ENOMEM; /* the published length keeps its top bit: apply serially */
    }
    if (st->ops <= st->log_cap) {
        return WEFT_OK;
    }
    uint32_t cap = st->log_cap ? st->log_cap : 1024u;
    while (cap < st->ops) {
        cap = cap > UINT32_MAX / 2u ? st->ops : cap * 2u;
    }
    size_t bytes = (size_t)cap * sizeof(struct weft__cmd_place_op);
    struct weft__cmd_place_op *log = weft__sched_alloc(alloc, bytes);
    if (log == NULL) {
        return WEFT_ENOMEM; /* not a failure of the frame: the serial apply runs instead */
    }
    weft__cmd_place_fini(st, alloc);
    st->log = log;
    st->log_cap = cap;
    return WEFT_OK;
}

void weft__cmd_place_fini(weft__cmd_stage_t *st, const weft_allocator_t *alloc) {
    weft__sched_free(alloc, st->log, (size_t)st->log_cap * sizeof(struct weft__cmd_place_op));
    st->log = NULL;
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
    if (*est != 0.0f && sample > WEFT__CMD_WAY_CLIP * *est) {
        /* one run slowed by a thread descheduled mid-apply (a lane's worker preempted for a
         * time slice: 3-4x the usual apply, measured) must not switch the choice for
         * PROBE_EVERY frames: a sample counts as at most CLIP x the estimate, so one moves
         * it up by at most a quarter and a lasting change still wins in a few runs */
        sample = WEFT__CMD_WAY_CLIP * *est;
    }
    *est = (*est == 0.0f || sample < *est) ? sample : *est + (sample - *est) * 0.25f;
}

/* ---- the serial walk: one function per verb ----------------------------------- >>resolve */

static void log_op(weft__cmd_stage_t *st, place_kind_t kind, uint32_t c, uint32_t idx,
                   const unsigned char *payload) {
    st->log[st->nlog++] = (struct weft__cmd_place_op){
        .payload = payload, .idx = idx, .what = c << 2 | (uint32_t)kind};
    st->per[c]++;
    if (st->nlog % WEFT__CMD_PLACE_PUBLISH_EVERY == 0u) {
        weft_atomic_store_release(&st->published, st->nlog); /* the lanes may replay them */
    }
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

/* ---- the replay lanes ------------------------------------------------------------ >>place */

/* Replay one operation on its (plain) pool: what add_index / weft_component_set /
 * remove_common / weft__entity_destroy_index do to such a pool. */
static void place_op(weft_world_t *world, const struct weft__cmd_place_op *op) {
    weft__pool_t *pool = &world->components[op->what >> 2]->pool;
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

/* A prefetch the compiler keeps (gcc 12 drops a __builtin_prefetch in a loop it otherwise
 * finds empty, as src/core/query.c notes). */
static inline void place_prefetch(const void *p) {
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p);
#endif
}

#define PLACE_AHEAD 8u /* operations between a prefetch stage and the next */

/* The lines a later operation of this lane will miss on, in two stages (a replay is bound by
 * misses: about one random line per operation, and a remove's row is found through its
 * sparse entry): PLACE_AHEAD * 2 operations ahead its sparse entry, PLACE_AHEAD ahead the
 * row that entry names (a row that moves meanwhile only wastes the prefetch). */
static void place_ahead(weft_world_t *world, const struct weft__cmd_place_op *op, bool row) {
    const weft__pool_t *pool = &world->components[op->what >> 2]->pool;
    uint32_t p = op->idx >> WEFT__SPARSE_SHIFT;
    if (p >= pool->pages || pool->sparse[p] == NULL) {
        return;
    }
    if (!row) {
        uint32_t i = op->idx & WEFT__SPARSE_MASK;
        place_prefetch(pool->sparse[p] + (size_t)i * (pool->sparse_wide ? 4u : 3u));
        return;
    }
    if ((op->what & 3u) == PLACE_PUSH) {
        return; /* it lands at the end, which the previous pushes keep in cache */
    }
    uint32_t r = weft__pool_row(pool, op->idx);
    if (r < pool->count) {
        place_prefetch(pool->dense + r);
        if (pool->size) {
            place_prefetch(weft__pool_at(pool, r));
        }
    }
}

/* Follow the log until the walk is over, replaying the operations of lane `lane`'s pools in
 * log order; returns how many it replayed. Empty-handed, it spins, then yields: the walk
 * publishes every few hundred nanoseconds unless its thread was descheduled. `busy` (NULL
 * unless traced) receives the time spent replaying, without the waits for the walk. */
static uint32_t replay_lane(weft__cmd_stage_t *st, uint32_t lane, uint64_t *busy) {
    weft_world_t *world = st->place_world;
    const struct weft__cmd_place_op *log = st->log;
    const uint8_t *lane_of = st->lane;
    uint32_t done = 0, idle = 0, mine = 0;
    for (;;) {
        uint32_t pub = weft_atomic_load_acquire(&st->published);
        uint32_t n = pub & ~WEFT__CMD_PLACE_FINAL;
        if (n == done && (pub & WEFT__CMD_PLACE_FINAL) == 0u) {
            if (++idle % 1024u == 0u) {
                (void)sched_yield(); /* not weft__thread_yield: jobs/ keeps it private */
            } else {
                weft_cpu_relax();
            }
            continue;
        }
        uint64_t t0 = busy ? weft__trace_now() : 0;
        for (; done < n; done++) {
            uint32_t a = done + PLACE_AHEAD;
            if (a + PLACE_AHEAD < n && lane_of[log[a + PLACE_AHEAD].what >> 2] == lane) {
                place_ahead(world, &log[a + PLACE_AHEAD], false);
            }
            if (a < n && lane_of[log[a].what >> 2] == lane) {
                place_ahead(world, &log[a], true);
            }
            if (lane_of[log[done].what >> 2] == lane) {
                place_op(world, &log[done]);
                mine++;
            }
        }
        if (busy) {
            *busy += weft__trace_now() - t0;
        }
        if (pub & WEFT__CMD_PLACE_FINAL) {
            return mine;
        }
    }
}

/* The trace of the world being applied, or NULL; set only between frames, so a lane job may
 * read it. */
static weft__trace_t *place_trace(const weft__cmd_stage_t *st) {
    const struct weft_sched *s = weft__sched_peek(st->place_world);
    return s ? s->trace : NULL;
}

static void lane_job(void *arg, const weft_job_ctx_t *ctx) {
    weft__cmd_stage_t *st = arg;
    weft__trace_t *trace = place_trace(st);
    if (!trace) {
        (void)replay_lane(st, ctx->tag, NULL);
        return;
    }
    uint64_t busy = 0, begin = weft__trace_now();
    (void)replay_lane(st, ctx->tag, &busy);
    /* chunk 0: the phase is that of the apply event whose span holds this one */
    weft__trace_record_kind(trace, ctx->worker, 0, 0, begin, weft__trace_now(),
                            WEFT_TRACE_APPLY_LANE, ctx->tag,
                            busy < UINT32_MAX ? (uint32_t)busy : UINT32_MAX);
}

/* A component's weight in the lane split: its operations in the last placed apply, or its
 * rows in this one when it had none. */
static uint32_t lane_weight(const weft__cmd_stage_t *st, uint32_t c) {
    return st->per[c] ? st->per[c] : st->rows[c];
}

/* Split the components into `lanes` lanes: lanes [0, lanes - 1) for the jobs, which replay
 * while the walk runs, and the last for the main thread, which replays its lane after the
 * walk and so gets less: about (total - (lanes - 1) * st->lead_ops) / lanes operations, where
 * lead_ops is what a job lane replays while the walk runs (measured in weft__cmd_place). The
 * heaviest components go first, each onto the lane furthest below its share. Only the
 * balance depends on this, never the result. Returns the lanes in use, the main thread's
 * last. */
static uint32_t split_lanes(weft__cmd_stage_t *st, uint32_t lanes) {
    uint32_t n = 0;
    double total = 0;
    for (uint32_t c = 1; c < st->ncomp; c++) {
        uint32_t w = lane_weight(st, c);
        st->lane[c] = (uint8_t)(lanes - 1u); /* weightless: the main thread's */
        if (w == 0) {
            continue;
        }
        total += w;
        uint32_t k = n++;
        for (; k > 0 && lane_weight(st, st->touched[k - 1]) < w; k--) {
            st->touched[k] = st->touched[k - 1];
        }
        st->touched[k] = c;
    }
    double share[WEFT__CMD_PLACE_LANES_MAX], load[WEFT__CMD_PLACE_LANES_MAX];
    double mine = (total - (double)(lanes - 1u) * (double)st->lead_ops) / (double)lanes;
    mine = mine < 0 ? 0 : mine;
    for (uint32_t l = 0; l < lanes; l++) {
        share[l] = l + 1u < lanes ? (total - mine) / (double)(lanes - 1u) : mine;
        load[l] = 0;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t c = st->touched[k], best = 0;
        for (uint32_t l = 1; l < lanes; l++) {
            best = share[l] - load[l] > share[best] - load[best] ? l : best;
        }
        load[best] += lane_weight(st, c);
        st->lane[c] = (uint8_t)best;
    }
    /* Number the job lanes that received components first, the main thread's last: a job
     * with nothing to replay would only spin until the walk ends. */
    uint8_t id[WEFT__CMD_PLACE_LANES_MAX];
    uint32_t used = 0;
    for (uint32_t l = 0; l + 1u < lanes; l++) {
        id[l] = (uint8_t)(load[l] > 0 ? used++ : 0u);
    }
    id[lanes - 1u] = (uint8_t)used;
    for (uint32_t l = 0; l + 1u < lanes; l++) {
        id[l] = load[l] > 0 ? id[l] : (uint8_t)used; /* (none of its components exist) */
    }
    for (uint32_t c = 1; c < st->ncomp; c++) {
        st->lane[c] = id[st->lane[c]];
    }
    return used + 1u;
}

void weft__cmd_place_begin(weft__cmd_stage_t *st, weft_world_t *world, weft_jobs_t *jobs,
                           uint32_t workers) {
    uint32_t lanes = workers < WEFT__CMD_PLACE_LANES_MAX ? workers : WEFT__CMD_PLACE_LANES_MAX;
    lanes = split_lanes(st, lanes ? lanes : 1u);
    memset(st->per, 0, (size_t)st->ncomp * sizeof *st->per);
    st->nlog = 0;
    st->place_world = world;
    st->lanes = lanes;
    st->lanes_started = 0;
    weft_atomic_store_relaxed(&st->published, 0u);
    weft_counter_init(&st->lanes_done);
    for (uint32_t l = 0; jobs != NULL && l + 1u < lanes; l++) {
        const weft_job_desc_t d = {.fn = lane_job, .arg = st, .name = "weft_apply_lane", .tag = l};
        if (weft_job_submit(jobs, &d, 1, &st->lanes_done) != WEFT_OK) {
            break; /* the main thread replays the rest after the walk */
        }
        st->lanes_started++;
    }
    st->walk_begin = weft__trace_now();
}

void weft__cmd_place(weft__cmd_stage_t *st, weft_jobs_t *jobs) {
    weft_atomic_store_release(&st->published, st->nlog | WEFT__CMD_PLACE_FINAL);
    uint64_t t0 = weft__trace_now();
    weft__trace_t *trace = place_trace(st);
    if (trace) {
        weft__trace_record_kind(trace, 0, 0, 0, st->walk_begin, t0, WEFT_TRACE_APPLY_WALK, 0, 0);
    }
    uint32_t mine = 0;
    for (uint32_t l = st->lanes_started; l < st->lanes; l++) {
        uint64_t lb = trace ? weft__trace_now() : 0;
        mine += replay_lane(st, l, NULL);
        if (trace) { /* the walk is over: all of it is replay */
            uint64_t le = weft__trace_now();
            weft__trace_record_kind(trace, 0, 0, 0, lb, le, WEFT_TRACE_APPLY_LANE, l,
                                    le - lb < UINT32_MAX ? (uint32_t)(le - lb) : UINT32_MAX);
        }
    }
    uint64_t t1 = weft__trace_now();
    if (st->lanes_started != 0) {
        /* On the main thread (worker 0) of a live job system, waiting on jobs it submitted:
         * none of its errors can occur. */
        weft_result_t r = weft_counter_wait(jobs, &st->lanes_done);
        weft_assert_internal(r == WEFT_OK);
        (void)r;
    }
    if (mine != 0 && t1 > t0) { /* what a lane replays while the walk runs, in operations */
        float lead = (float)((double)(t0 - st->walk_begin) * (double)mine / (double)(t1 - t0));
        st->lead_ops = st->lead_ops == 0.0f ? lead : st->lead_ops + (lead - st->lead_ops) * 0.25f;
    } else {
        st->lead_ops *= 0.75f; /* nothing to measure it by: give the main thread work again */
    }
}
