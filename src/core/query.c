/* query.c: queries — planning (group or smallest pool), chunking and batch iteration.
 *
 * DESIGN
 * A query is its desc, each term's pool (resolved once: pools never move), its join cache
 * and a link in the world's list. The join cache (join_cache.h) is the only part that
 * iterating writes, through its own lock-free protocol, so any number of jobs can iterate a
 * query at once. Each weft_query_iter() call plans
 * afresh from the data: the largest group whose members are all include terms drives (its
 * aligned prefix [0, n)), else the smallest include pool drives (all of its rows). Planning
 * is O(terms^2), negligible beside a chunk of rows; the scheduler still plans once per
 * system and phase and hands the plan to every chunk (query.h), because for a system of a
 * few rows the plan is most of the cost.
 * Terms covered by the driving range are contiguous columns; every other include and every
 * exclude becomes a membership check on the pool's sparse index. weft_iter_next() finds the
 * next matching row, then tries the cheap case first: if every other include pool's dense
 * array runs in step with the driving rows (the pools were filled in the same order), a
 * sequential compare of the dense arrays proves membership for the whole run and the batch
 * gets contiguous columns for every term (driving rows a packed family of automatic grouping
 * holds in step since its re-pack skip the comparison: auto_group.h). Otherwise the batch is a
 * resolved block
 * (block_batch): a window of up to WEFT__ITER_BLOCK driving rows whose entities are probed
 * in each checked pool in one tight loop per pool, rejected rows squeezed out, each include
 * term's rows kept in an iterator array that weft_iter_get reads (no per-row sparse lookup
 * in the body). A checked pool that shares a group with an earlier checked pool follows it:
 * inside the group's aligned prefix both pools hold an entity at the same row, so only the
 * entities past the prefix are probed (probe_follow); that is what a group covering part of
 * a query buys when a smaller pool drives. The first block batch of a plain query opens its
 * join cache: from then on the chunk is cut in fixed windows of WEFT__ITER_BLOCK driving
 * rows (cached_batch), each resolved once per layout of the join's pools and handed out from
 * the cache; consecutive windows whose rows run in step become one batch of columns.
 * (Prefetching the rows' data before the body was measured slower: 2.3x ->
 * 6.2x the gather floor, weft_bench --suite query; the hardware prefetcher and the body's
 * own out-of-order loads do better.) When a block's rows turn out to step one by one,
 * the next batch tries the dense-array comparison again; otherwise it is skipped (it would
 * only touch those pools' dense arrays in vain). A chunk without checks is one batch of
 * plain arrays. Queries with change filters or OPTIONAL/OR terms keep runs of consecutive
 * rows (next_filtered), reached per row through the sparse index. */
#include <string.h>

#include "query.h"

#include "access.h"
#include "auto_group.h"
#include "change.h"
#include "entity.h"
#include "group.h"
#include "join_cache.h"
#include "merge_join.h"
#include "query_view.h"
#include "world.h"

_Static_assert(WEFT__MAX_GROUPS <= UINT16_MAX, "a plan keeps the group id in 16 bits");

/* The first cache line holds what planning and iterator setup read: the term pools are
 * resolved once (components never move or go away), so a frame does not walk
 * world->components for every system. */
struct weft_query {
    _Alignas(64) weft_world_t *world;               /* the world queried */
    uint32_t term_count;                            /* include terms in desc.terms */
    uint32_t exclude_count;                         /* components in desc.exclude */
    const weft__pool_t *pool[WEFT_QUERY_MAX_TERMS]; /* term t's pool */
    weft_query_desc_t desc;                         /* copy of the creation desc */
    uint32_t since;                                 /* tick of the previous run (change.h) */
    bool seen;                                      /* false: no previous run yet */
    bool filtered;                                  /* some term has a change filter */
    bool plain;                                     /* no filter, no OPTIONAL/OR term */
    uint32_t loose;                                 /* bit t: term t is OPTIONAL or OR */
    uint32_t or_count;                              /* OR groups */
    uint32_t or_groups[WEFT_QUERY_MAX_TERMS / 2];   /* per OR group: its terms' bits */
    uint32_t viewed;                                /* bit t: term t reads a module's row view
                                                       (query_view.h) */
    bool run;                /* a system's query: the run_* window below applies */
    bool run_all;            /* this run has no previous one: filters pass every row */
    uint32_t run_since;      /* this run's window: rows newer than this pass */
    uint32_t run_tick;       /* this run's tick, stamped by write terms */
    weft_atomic_ptr join;    /* the join cache (join_cache.h), NULL until a plain join runs */
    weft_atomic_u64 merge;   /* the planner's merge-join answer (merge_join.h): bit 0, and the
                                layout key it holds for in the other bits; 0: none */
    struct weft_query *prev; /* world list; guarded by the main thread */
    struct weft_query *next; /* world list */
};

/* ---- lifecycle ----------------------------------------------------------------- >>life */

weft_result_t weft__desc_list_len(const weft_world_t *world, const void *list, size_t stride,
                                  uint32_t max, const char *fn, const char *what, uint32_t *n) {
    const unsigned char *at = list;
    uint32_t len = 0;
    while (len < max && ((const weft_component_t *)(at + len * stride))->id != 0) {
        len++;
    }
    for (uint32_t i = len; i < max; i++) {
        if (((const weft_component_t *)(at + i * stride))->id != 0) {
            return WEFT__FAIL(world->log, WEFT_EINVAL,
                              "%s: %s[%u] is set after the list ended at %s[%u]", fn, what, i, what,
                              len);
        }
    }
    *n = len;
    return WEFT_OK;
}

static weft_result_t check_desc(const weft_world_t *world, const weft_query_desc_t *d,
                                uint32_t *nterms, uint32_t *nexcl) {
    const weft_logger_t *log = world->log;
    WEFT__CONTRACT(d != NULL && d->_canary == 0, log, WEFT_EINVAL,
                   "weft_query_create: desc is NULL or its _canary is not 0");
    weft_result_t r = weft__desc_list_len(world, d->terms, sizeof d->terms[0], WEFT_QUERY_MAX_TERMS,
                                          "weft_query_create", "terms", nterms);
    r = r ? r
          : weft__desc_list_len(world, d->exclude, sizeof d->exclude[0], WEFT_QUERY_MAX_EXCLUDES,
                                "weft_query_create", "exclude", nexcl);
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t nt = *nterms, nx = *nexcl;
    if (nt == 0) {
        return WEFT__FAIL(log, WEFT_EINVAL, "weft_query_create: no include terms");
    }
    uint32_t multi = 0; /* multi-instance include terms: at most one, and it drives */
    for (uint32_t i = 0; i < nt + nx; i++) {
        bool term = i < nt;
        uint32_t c = term ? d->terms[i].component.id : d->exclude[i - nt].id;
        if (weft__component(world, c) == NULL) {
            return WEFT__FAIL(log, WEFT_EINVAL,
                              "weft_query_create: id %u is no component (unknown, or a resource)",
                              c);
        }
        for (uint32_t j = 0; j < i; j++) { /* at most 24 ids: pairs are cheap */
            if ((j < nt ? d->terms[j].component.id : d->exclude[j - nt].id) == c) {
                return WEFT__FAIL(log, WEFT_EINVAL, "weft_query_create: component '%s' repeated",
                                  world->components[c]->name);
            }
        }
        if (term && (unsigned)d->terms[i].access >= WEFT_ACCESS_COUNT) {
            return WEFT__FAIL(log, WEFT_EINVAL, "weft_query_create: bad access %d",
                              (int)d->terms[i].access);
        }
        if (term && (unsigned)d->terms[i].filter >= WEFT_CHANGE_COUNT) {
            return WEFT__FAIL(log, WEFT_EINVAL, "weft_query_create: bad change filter %d",
                              (int)d->terms[i].filter);
        }
        if (term && d->terms[i].filter != WEFT_CHANGE_NONE &&
            world->components[c]->pool.multi != NULL) {
            return WEFT__FAIL(
                log, WEFT_EINVAL,
                "weft_query_create: '%s' is multi-instance and takes no change filter",
                world->components[c]->name);
        }
        if (term && (unsigned)d->terms[i].oper >= WEFT_TERM_OPER_COUNT) {
            return WEFT__FAIL(log, WEFT_EINVAL, "weft_query_create: terms[%u] has a bad oper %d", i,
                              (int)d->terms[i].oper);
        }
        if (term && d->terms[i].oper != WEFT_TERM_AND &&
            (d->terms[i].filter != WEFT_CHANGE_NONE || world->components[c]->pool.multi != NULL)) {
            return WEFT__FAIL(log, WEFT_EINVAL,
                              "weft_query_create: terms[%u] ('%s') is OPTIONAL or OR, so it can "
                              "take no change filter and be no multi-instance component",
                              i, world->components[c]->name);
        }
        if (term && world->components[c]->pool.multi != NULL && multi++ > 0) {
            return WEFT__FAIL(log, WEFT_EINVAL,
                              "weft_query_create: more than one multi-instance include term");
        }
    }
    uint32_t and_terms = 0;
    for (uint32_t t = 0; t < nt; t++) {
        and_terms += d->terms[t].oper == WEFT_TERM_AND;
        bool is_or = d->terms[t].oper == WEFT_TERM_OR;
        bool opens = is_or && (t == 0 || d->terms[t - 1].oper != WEFT_TERM_OR);
        bool single = opens && (t + 1 == nt || d->terms[t + 1].oper != WEFT_TERM_OR);
        if (single) {
            return WEFT__FAIL(log, WEFT_EINVAL,
                              "weft_query_create: terms[%u] is an OR group of one term", t);
        }
    }
    if ((uint32_t)d->join >= WEFT_JOIN_COUNT) {
        return WEFT__FAIL(log, WEFT_EINVAL, "weft_query_create: join %u is not a weft_query_join_t",
                          (unsigned)d->join);
    }
    if (d->drive > nt || (d->drive != 0 && d->terms[d->drive - 1u].oper != WEFT_TERM_AND)) {
        return WEFT__FAIL(log, WEFT_EINVAL,
                          "weft_query_create: drive %u names no AND term (%u terms)", d->drive, nt);
    }
    if (d->drive != 0 && multi != 0 &&
        world->components[d->terms[d->drive - 1u].component.id]->pool.multi == NULL) {
        return WEFT__FAIL(log, WEFT_EINVAL,
                          "weft_query_create: drive names terms[%u], but the multi-instance term "
                          "must drive",
                          d->drive - 1u);
    }
    if (and_terms == 0) {
        return WEFT__FAIL(log, WEFT_EINVAL,
                          "weft_query_create: no AND term (one is needed to drive iteration)");
    }
    return WEFT_OK;
}

static weft_result_t query_init(weft_world_t *world, const weft_query_desc_t *desc, uint32_t nterms,
                                uint32_t nexcl, uint32_t viewed, weft_query_t *q);

weft_result_t weft_query_create(weft_world_t *world, const weft_query_desc_t *desc,
                                weft_query_t **out) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__CONTRACT(out != NULL, world->log, WEFT_EINVAL, "weft_query_create: out is NULL");
    *out = NULL;
    uint32_t nterms = 0, nexcl = 0, viewed = 0;
    weft_result_t r = check_desc(world, desc, &nterms, &nexcl);
    r = r ? r : weft__view_check(world, desc, nterms, nexcl, &viewed);
    if (r != WEFT_OK) {
        return r;
    }
    weft_query_t *q = weft__alloc(world, sizeof *q, _Alignof(weft_query_t));
    if (q == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_query_create: out of memory");
    }
    r = query_init(world, desc, nterms, nexcl, viewed, q);
    if (r != WEFT_OK) {
        weft__free(world, q, sizeof *q);
        return r;
    }
    *out = q;
    return WEFT_OK;
}

size_t weft__query_bytes(void) { return sizeof(weft_query_t); }

weft_result_t weft__query_create_at(weft_world_t *world, const weft_query_desc_t *desc,
                                    void *storage, weft_query_t **out) {
    *out = NULL;
    uint32_t nterms = 0, nexcl = 0, viewed = 0;
    weft_result_t r = check_desc(world, desc, &nterms, &nexcl);
    r = r ? r : weft__view_check(world, desc, nterms, nexcl, &viewed);
    r = r ? r : query_init(world, desc, nterms, nexcl, viewed, storage);
    *out = r == WEFT_OK ? storage : NULL;
    return r;
}

/* Fill q (storage of weft__query_bytes()) from a checked desc and link it into the world's
 * list; on failure nothing is linked and the storage is the caller's to free. */
static weft_result_t query_init(weft_world_t *world, const weft_query_desc_t *desc, uint32_t nterms,
                                uint32_t nexcl, uint32_t viewed, weft_query_t *q) {
    weft_result_t r = WEFT_OK;
    q->world = world;
    q->desc = *desc;
    q->term_count = nterms;
    q->exclude_count = nexcl;
    q->since = 0;
    q->seen = false;
    q->filtered = false;
    q->loose = 0;
    q->or_count = 0;
    q->viewed = viewed;
    for (uint32_t t = 0; t < nterms; t++) {
        weft_term_oper_t op = desc->terms[t].oper;
        if (op != WEFT_TERM_AND) {
            q->loose |= 1u << t;
        }
        if (op == WEFT_TERM_OR) {
            if (t == 0 || desc->terms[t - 1].oper != WEFT_TERM_OR) {
                q->or_groups[q->or_count++] = 0;
            }
            q->or_groups[q->or_count - 1] |= 1u << t;
        }
    }
    q->run = false;
    q->run_all = false;
    q->run_since = 0;
    q->run_tick = 0;
    for (uint32_t t = 0; t < nterms; t++) {
        q->pool[t] = &world->components[desc->terms[t].component.id]->pool;
        if (desc->terms[t].filter != WEFT_CHANGE_NONE) {
            q->filtered = true;
            /* Tracking stays on if a later step fails: it is invisible apart from memory. */
            r = weft__change_track(world, &world->components[desc->terms[t].component.id]->pool);
            if (r != WEFT_OK) {
                return r;
            }
        }
    }
    q->plain = !q->filtered && q->loose == 0;
    weft_atomic_init(&q->join, NULL);
    weft_atomic_init(&q->merge, (uint64_t)0);
    q->prev = NULL;
    q->next = world->queries;
    if (world->queries != NULL) {
        world->queries->prev = q;
    }
    world->queries = q;
    return WEFT_OK;
}

weft_world_t *weft__query_world(const weft_query_t *q) { return q->world; }

void weft_query_destroy(weft_query_t *q) {
    if (q == NULL) {
        return;
    }
    weft_world_t *world = q->world;
    weft__query_fini(q);
    weft__free(world, q, sizeof *q);
}

void weft__query_fini(weft_query_t *q) {
    weft_world_t *world = q->world;
    if (q->prev != NULL) {
        q->prev->next = q->next;
    } else {
        world->queries = q->next;
    }
    if (q->next != NULL) {
        q->next->prev = q->prev;
    }
    weft__join_cache_free(&world->counted, &q->join);
}

void weft__query_free_all(weft_world_t *world) {
    while (world->queries != NULL) {
        weft_query_destroy(world->queries);
    }
}

const weft_query_desc_t *weft_query_desc(const weft_query_t *q) { return &q->desc; }

void weft_query_mark_seen(weft_query_t *q) {
    if (q == NULL) {
        return;
    }
    /* The world moves past the tick, so writes from now on are newer than it. */
    q->since = q->world->change_tick;
    q->world->change_tick++;
    q->seen = true;
}

void weft__query_clamp_since(weft_world_t *world, uint32_t floor) {
    for (weft_query_t *q = world->queries; q != NULL; q = q->next) {
        if (q->seen && weft__tick_newer(floor, q->since)) {
            q->since = floor;
        }
    }
}

bool weft__query_window_before(weft_world_t *world, const weft__pool_t *pool, uint32_t tick) {
    for (weft_query_t *q = world->queries; q != NULL; q = q->next) {
        if (!q->filtered || !q->seen) {
            continue;
        }
        /* A system's query keeps its last run's window for standalone iteration. */
        uint32_t window = q->run && !q->run_all ? q->run_since : q->since;
        for (uint32_t t = 0; t < q->term_count; t++) {
            if (q->pool[t] == pool && q->desc.terms[t].filter != WEFT_CHANGE_NONE &&
                weft__tick_newer(tick, window)) {
                return true;
            }
        }
    }
    return false;
}

void weft__query_begin_run(weft_query_t *q, uint32_t tick) {
    if (q->plain) {
        return; /* no window to move; write terms stamp the running system's tick */
    }
    q->run = true;
    q->run_since = q->since;
    q->run_all = !q->seen;
    q->run_tick = tick;
    q->since = tick;
    q->seen = true;
}

/* ---- planning ------------------------------------------------------------------ >>plan */

typedef weft__query_plan_t plan_t;

/* Bits of the AND terms of q (only those can drive). */
static uint32_t and_bits(const weft_query_t *q) {
    uint32_t all = q->term_count >= 32u ? UINT32_MAX : (1u << q->term_count) - 1u;
    return all & ~q->loose;
}

/* Bit t set for each AND term whose component is c (0: none). */
static uint32_t term_bit(const weft_query_t *q, uint32_t c) {
    for (uint32_t t = 0; t < q->term_count; t++) {
        if (q->desc.terms[t].component.id == c && !((q->loose >> t) & 1u)) {
            return 1u << t;
        }
    }
    return 0;
}

static uint32_t popcount32(uint32_t x) {
    uint32_t n = 0;
    for (; x != 0; x &= x - 1u) {
        n++;
    }
    return n;
}

/* Cost of driving `rows` rows with `probes` terms left to probe per row (query.h). */
static uint64_t plan_cost(uint32_t rows, uint32_t probes) {
    return (uint64_t)rows * (1u + 2u * (uint64_t)probes);
}

/* Merge-join the includes (merge_join.h) when the query is plain, every include pool keeps
 * entity order, and desc.join asks for it or the merge-join's estimated cost is below
 * `probe`, the probe plan's. */
static uint16_t merge_wins(const weft_query_t *q, const plan_t *p, uint64_t probe) {
    if (q->desc.join == WEFT_JOIN_PROBE || !q->plain || !p->drive->ascending) {
        return 0;
    }
    const weft__pool_t *pools[WEFT_QUERY_MAX_TERMS];
    uint32_t n = 1;
    pools[0] = p->drive;
    for (uint32_t t = 0; t < q->term_count; t++) {
        if (q->pool[t] != p->drive) {
            if (!q->pool[t]->ascending) {
                return 0;
            }
            pools[n++] = q->pool[t];
        }
    }
    if (n < 2 || q->desc.join == WEFT_JOIN_MERGE || probe == 0) {
        return (uint16_t)(n >= 2 && q->desc.join == WEFT_JOIN_MERGE);
    }
    /* One answer per layout of the join's pools; concurrent planners store the same one. */
    weft_atomic_u64 *memo = &((weft_query_t *)q)->merge;
    uint64_t key = (weft__merge_join_key(pools, n) ^ probe) | 2u,
             seen = weft_atomic_load_relaxed(memo);
    if ((seen & ~UINT64_C(1)) == (key & ~UINT64_C(1))) {
        return (uint16_t)(seen & 1u);
    }
    uint64_t wins = weft__merge_join_cost(pools, n) < probe;
    weft_atomic_store_relaxed(memo, (key & ~UINT64_C(1)) | wins);
    return (uint16_t)wins;
}

static void make_plan(const weft_query_t *q, plan_t *p) {
    const weft_world_t *world = q->world;
    p->merge = 0;
    if (q->viewed != 0) {
        weft__view_plan(world, &q->desc, q->term_count, p);
        return;
    }
    p->group = 0;
    for (uint32_t t = 0; t < q->term_count; t++) {
        if (q->pool[t]->multi != NULL) { /* every instance is an entry: it must drive */
            p->drive = q->pool[t];
            p->rows = p->drive->count;
            return;
        }
    }
    if (q->desc.drive != 0) {
        p->drive = q->pool[q->desc.drive - 1u];
        p->rows = p->drive->count;
        p->merge = merge_wins(q, p, 0); /* only when desc.join asks */
        return;
    }
    const uint32_t ands = and_bits(q), nand = popcount32(ands);
    uint64_t best = UINT64_MAX;
    uint32_t best_members = 0;
    /* Groups whose members are all AND terms: cheapest, ties to the larger group. */
    for (uint32_t g = 1; g <= world->group_count; g++) {
        const weft__group_t *grp = &world->groups[g];
        uint32_t covered = 0;
        for (uint32_t m = 0; m < grp->count; m++) {
            uint32_t bit = term_bit(q, grp->members[m]);
            if (bit == 0) {
                covered = 0;
                break;
            }
            covered |= bit;
        }
        if (covered == 0) {
            continue;
        }
        uint64_t cost = plan_cost(grp->n, nand - grp->count);
        if (cost < best || (cost == best && grp->count > best_members)) {
            best = cost;
            best_members = grp->count;
            p->group = (uint16_t)g;
        }
    }
    p->drive = NULL;
    for (uint32_t t = 0; t < q->term_count; t++) {
        if (!((ands >> t) & 1u)) {
            continue;
        }
        uint64_t cost = plan_cost(q->pool[t]->count, nand - 1u);
        if (cost < best) { /* strictly: ties keep the group, then the earlier term */
            best = cost;
            p->group = 0;
            p->drive = q->pool[t];
        }
    }
    if (p->group != 0) {
        p->drive = &world->components[world->groups[p->group].members[0]]->pool;
        p->rows = world->groups[p->group].n;
        return;
    }
    p->rows = p->drive->count;
    p->merge = merge_wins(q, p, best);
}

uint32_t weft__query_plan(const weft_query_t *q, weft__query_plan_t *plan) {
    make_plan(q, plan);
    return plan->rows;
}

uint32_t weft_query_rows(const weft_query_t *q) {
    plan_t p;
    return weft__query_plan(q, &p);
}

uint32_t weft_query_chunk_count(const weft_query_t *q, uint32_t chunk_rows) {
    uint32_t rows = weft_query_rows(q);
    if (rows == 0) {
        return 0;
    }
    if (chunk_rows == 0) {
        return 1;
    }
    return (uint32_t)(((uint64_t)rows + chunk_rows - 1u) / chunk_rows);
}

/* ---- iteration ----------------------------------------------------------------- >>iter */

static void add_check(weft_iter_t *it, const weft__pool_t *pool, uint32_t term) {
    weft__iter_check_t *c = &it->_private.checks[it->_private.check_count++];
    c->sparse = (const unsigned char *const *)pool->sparse;
    c->sparse_wide = pool->sparse_wide;
    c->dense = pool->dense;
    c->pages = pool->pages;
    c->count = pool->count;
    c->term = term;
    c->follow = 0;
    c->follow_rows = 0;
}

/* The rows both pools hold in the same order: the aligned prefix of the outermost group that
 * has both as members (0: none). A pool's `group` is the outermost group owning it and the
 * inner groups of its chain add members, so the walk starts at a's and goes in. */
static uint32_t shared_rows(const weft_world_t *world, const weft__pool_t *a,
                            const weft__pool_t *b) {
    if (a->group == 0 || b->group == 0) {
        return 0;
    }
    for (uint32_t g = a->group; g != 0; g = world->groups[g].inner) {
        if (weft__group_has(world, g, b)) {
            return world->groups[g].n;
        }
    }
    return 0;
}

/* The include check just added for term t follows the earlier include check whose pool
 * shares the most aligned rows with t's: for an entity in that prefix, one probe gives both
 * rows (block_batch). */
static void find_follow(const weft_query_t *q, weft_iter_t *it, uint32_t t) {
    weft__iter_private_t *pv = &it->_private;
    weft__iter_check_t *c = &pv->checks[pv->check_count - 1u];
    for (uint32_t k = 0; k + 1u < pv->check_count; k++) {
        uint32_t n = shared_rows(q->world, q->pool[pv->checks[k].term], q->pool[t]);
        if (n > c->follow_rows) {
            c->follow = k + 1u;
            c->follow_rows = n;
        }
    }
}

/* Term t of the iterator reads `pool`. */
static inline void copy_term(weft_iter_t *it, const weft__pool_t *pool, uint32_t t) {
    it->_private.terms[t].data = pool->data;
    it->_private.terms[t].sparse = (const unsigned char *const *)pool->sparse;
    it->_private.terms[t].sparse_wide = pool->sparse_wide;
    it->_private.terms[t].size = pool->size;
    it->_private.terms[t].pages = pool->pages;
    it->_private.terms[t].rows = NULL; /* set by a block batch (resolve_block) */
}

/* Term t (an AND term) is a column of the driving range, or else a membership check. */
static inline void place_term(const weft_query_t *q, weft_iter_t *it, const weft__query_plan_t *p,
                              const weft__pool_t *pool, uint32_t t) {
    /* a member of the driving group (the pool's own group may be one further out) */
    bool covered = p->group ? weft__group_has(q->world, p->group, pool) : pool == p->drive;
    if (covered) {
        it->_private.contiguous |= 1u << t;
    } else {
        add_check(it, pool, t);
        if (pool->group != 0 && it->_private.check_count > 1u) {
            find_follow(q, it, t);
        }
    }
}

/* The excludes, as checks after every include check (weft_iter_next relies on that order). */
static inline void add_excludes(const weft_query_t *q, weft_iter_t *it) {
    for (uint32_t x = 0; x < q->exclude_count; x++) {
        add_check(it, &q->world->components[q->desc.exclude[x].id]->pool, UINT32_MAX);
    }
}

/* Use the query's join cache (join_cache.h) for the rest of this iterator's chunk, if it
 * can serve the plan (every checked pool holds one row per entity). Called at the first
 * batch that needs a resolved block, so a join whose pools run in step never allocates one. */
static void open_join_cache(weft_iter_t *it) {
    weft__iter_private_t *pv = &it->_private;
    const weft_query_t *q = pv->query;
    const weft__pool_t *drive = pv->cache_drive;
    pv->cache_drive = NULL; /* opened once per iterator */
    weft__join_key_t key;
    key.drive = drive;
    key.group = pv->cache_group;
    key.includes = 0;
    key.windows = (pv->cache_rows + WEFT__ITER_BLOCK - 1u) / WEFT__ITER_BLOCK;
    key.count = 1u + pv->check_count;
    key.layout[0] = drive->layout;
    uint32_t x = 0;
    for (uint32_t k = 0; k < pv->check_count; k++) {
        uint32_t t = pv->checks[k].term;
        const weft__pool_t *pool =
            t != UINT32_MAX ? q->pool[t] : &q->world->components[q->desc.exclude[x++].id]->pool;
        if (pool->multi != NULL) {
            return;
        }
        key.includes += t != UINT32_MAX;
        key.layout[1u + k] = pool->layout;
    }
    weft__join_cache_t *cache = NULL;
    uint64_t epoch =
        weft__join_cache_open(&q->world->counted, &((weft_query_t *)q)->join, &key, &cache);
    if (epoch != 0) {
        pv->cache = cache;
        pv->cache_epoch = epoch;
    }
}

/* The setup of a plain query (no filter, no OPTIONAL/OR term): what the iterator had before
 * change detection, plus one test per write term for a tracked pool (stamped). Systems of
 * such queries pay nothing else for the feature. */
static void iter_plain(const weft_query_t *q, const weft__query_plan_t *p, weft_iter_t *it) {
    uint32_t stamped = 0;
    for (uint32_t t = 0; t < q->term_count; t++) {
        const weft__pool_t *pool = q->pool[t];
        bool write = q->desc.terms[t].access == WEFT_ACCESS_WRITE;
        WEFT__ACCESS(q->world, pool->id, write ? WEFT__ACCESS_WRITE : WEFT__ACCESS_READ);
        copy_term(it, pool, t);
        stamped |= (uint32_t)(write && pool->tick_added != NULL) << t;
        place_term(q, it, p, pool, t);
    }
    add_excludes(q, it);
    if (q->world->auto_family_count != 0 && p->group == 0 && !p->merge && q->exclude_count == 0 &&
        it->_private.check_count != 0) {
        it->_private.packed = weft__auto_packed(q->world, p->drive, q->pool, q->term_count);
    }
    if (p->merge) {
        weft__merge_join_begin(it); /* no join cache: cursors find the rows */
    } else if (it->_private.check_count != 0) {
        it->_private.cache_drive = p->drive; /* opened by the first block batch */
        it->_private.cache_group = p->group;
        it->_private.cache_rows = p->rows;
    }
    it->_private.filtered = 0;
    it->_private.loose = 0;
    it->_private.or_count = 0;
    it->_private.lead = 0;
    it->_private.stamped = stamped;
    if (stamped != 0) {
        it->_private.tick = q->run ? q->run_tick : weft__change_tick_now(q->world);
    }
}

/* Only the public fields and the private ones weft_iter_next() reads are written: terms[t]
 * for t < term_count and checks[k] for k < check_count. Clearing the whole iterator (~900
 * bytes) was the largest single cost of a frame of small systems. */
void weft__query_iter_planned(const weft_query_t *q, const weft__query_plan_t *p,
                              uint32_t chunk_rows, uint32_t chunk, weft_iter_t *it) {
    it->rows = 0;
    it->entities = NULL;
    for (uint32_t t = 0; t < q->term_count; t++) {
        it->columns[t] = NULL;
    }
    it->_private.world = q->world;
    it->term_count = q->term_count;
    it->_private.check_count = 0;
    it->_private.contiguous = 0;
    it->_private.blocked = 0;
    it->_private.misaligned = 0;
    it->_private.merge = 0;
    it->_private.packed = 0;
    uint64_t begin = chunk_rows ? (uint64_t)chunk * chunk_rows : (chunk ? p->rows : 0u);
    uint64_t end = chunk_rows ? begin + chunk_rows : p->rows;
    it->_private.row = begin < p->rows ? (uint32_t)begin : p->rows;
    it->_private.end = end < p->rows ? (uint32_t)end : p->rows;
    it->_private.query = q;
    it->_private.cache = NULL;
    it->_private.cache_drive = NULL;
    it->present = 0;
    it->_private.view = q->viewed;
    if (q->viewed != 0) {
        weft__view_iter(q->world, &q->desc, q->term_count, q->exclude_count, p,
                        q->run ? q->run_tick : weft__change_tick_now(q->world),
                        q->run ? WEFT__TICK_SLOT_SYSTEM : weft__change_slot_now(q->world), it);
        return;
    }
    it->_private.drive_dense = p->drive->dense;
    if (q->plain) {
        iter_plain(q, p, it);
        return;
    }
    bool all = q->run ? q->run_all : !q->seen;
    it->_private.since = q->run ? q->run_since : q->since;
    it->_private.tick = q->run ? q->run_tick : weft__change_tick_now(q->world);
    it->_private.filtered = 0;
    it->_private.stamped = 0;
    /* Include checks first, then excludes: weft_iter_next relies on that order. */
    for (uint32_t t = 0; t < q->term_count; t++) {
        const weft__pool_t *pool = q->pool[t];
        WEFT__ACCESS(q->world, pool->id,
                     q->desc.terms[t].access == WEFT_ACCESS_WRITE ? WEFT__ACCESS_WRITE
                                                                  : WEFT__ACCESS_READ);
        copy_term(it, pool, t);
        if ((q->loose >> t) & 1u) {
            continue; /* tested for presence only (loose_presence) */
        }
        if (q->desc.terms[t].filter != WEFT_CHANGE_NONE && !all) {
            it->_private.filtered |= 1u << t;
            /* The main thread's logged writes into the dirty bits before they are read. */
            /* A whole-pool iteration the write list may serve (next_listed) needs no summary. */
            weft__change_publish((weft__pool_t *)pool, it->_private.row == 0 &&
                                                           it->_private.end == pool->count &&
                                                           pool->layout == pool->list_layout);
        }
        if (pool->tick_added != NULL && q->desc.terms[t].access == WEFT_ACCESS_WRITE) {
            it->_private.stamped |= 1u << t;
        }
        place_term(q, it, p, pool, t);
    }
    add_excludes(q, it);
    /* One filter on a driving-range term and nothing else to test: the block scan decides
     * alone (next_scanned). */
    it->_private.lead = 0;
    it->_private.loose = q->loose;
    it->_private.or_count = q->or_count;
    memcpy(it->_private.or_groups, q->or_groups, q->or_count * sizeof q->or_groups[0]);
    uint32_t f = it->_private.filtered;
    if (f != 0 && (f & (f - 1u)) == 0 && (f & it->_private.contiguous) == f &&
        it->_private.check_count == 0 && q->loose == 0) {
        uint32_t t = 0;
        while (!((f >> t) & 1u)) {
            t++;
        }
        it->_private.lead = t + 1u;
    }
    it->_private.scan = it->_private.row >> WEFT__TICK_BLOCK_SHIFT;
    it->_private.ring_at = 0;
    it->_private.ring_len = 0;
    it->_private.listed = 0;
}

weft_result_t weft_query_iter(const weft_query_t *q, uint32_t chunk_rows, uint32_t chunk,
                              weft_iter_t *it) {
    if (q == NULL || it == NULL) {
        return WEFT__FAIL(q ? q->world->log : NULL, WEFT_EINVAL,
                          "weft_query_iter: query or iterator is NULL");
    }
#if WEFT_DEBUG >= 1
    for (uint32_t t = 0; t < q->term_count; t++) {
        weft_result_t r = weft__access_test(
            q->world, q->pool[t]->id,
            q->desc.terms[t].access == WEFT_ACCESS_WRITE ? WEFT__ACCESS_WRITE : WEFT__ACCESS_READ);
        if (r != WEFT_OK) {
            return r;
        }
    }
#endif /* WEFT_DEBUG */
    plan_t p;
    make_plan(q, &p);
    weft__query_iter_planned(q, &p, chunk_rows, chunk, it);
    return WEFT_OK;
}

#if defined(__GNUC__) || defined(__clang__)
#define HOT_INLINE __attribute__((always_inline)) inline
#else
#define HOT_INLINE inline
#endif

/* Row of entity index idx in a checked pool, or WEFT__ROW_NONE. */
static HOT_INLINE uint32_t check_row(const weft__iter_check_t *c, uint32_t idx) {
    uint32_t p = idx >> WEFT__SPARSE_SHIFT;
    if (p >= c->pages || c->sparse[p] == NULL) {
        return WEFT__ROW_NONE;
    }
    return weft__sparse_get(c->sparse[p], idx & WEFT__SPARSE_MASK, c->sparse_wide);
}

/* Bit t set for each OPTIONAL or OR term t that entity index idx has. */
static uint32_t loose_presence(const weft_iter_t *it, uint32_t idx) {
    uint32_t mask = 0;
    uint32_t p = idx >> WEFT__SPARSE_SHIFT;
    for (uint32_t t = 0; t < it->term_count; t++) {
        const weft__iter_term_t *term = &it->_private.terms[t];
        if (((it->_private.loose >> t) & 1u) && p < term->pages && term->sparse[p] != NULL &&
            weft__sparse_get(term->sparse[p], idx & WEFT__SPARSE_MASK, term->sparse_wide) !=
                WEFT__ROW_NONE) {
            mask |= 1u << t;
        }
    }
    return mask;
}

/* Does a row with these OPTIONAL/OR terms present satisfy every OR group? */
static bool or_groups_pass(const weft_iter_t *it, uint32_t present) {
    for (uint32_t g = 0; g < it->_private.or_count; g++) {
        if ((present & it->_private.or_groups[g]) == 0) {
            return false;
        }
    }
    return true;
}

/* True when driving row r passes every check; rows[k] receives include check k's row. */
static bool row_matches(const weft_iter_t *it, uint32_t r, uint32_t *rows) {
    uint32_t idx = it->_private.drive_dense[r];
    for (uint32_t k = 0; k < it->_private.check_count; k++) {
        const weft__iter_check_t *c = &it->_private.checks[k];
        uint32_t row = check_row(c, idx);
        if ((row != WEFT__ROW_NONE) == (c->term == UINT32_MAX)) {
            return false;
        }
        rows[k] = row;
    }
    return it->_private.or_count == 0 || or_groups_pass(it, loose_presence(it, idx));
}

/* How many driving rows from `start` (at most `limit`) have every include pool's rows running
 * on from base[] in step, and pass the excludes. Comparing dense arrays proves membership:
 * dense[base + j] == idx means idx's row in that pool is base + j. */
static uint32_t aligned_run(const weft_iter_t *it, uint32_t start, uint32_t limit,
                            const uint32_t *base) {
    enum { BLOCK = 64 }; /* rows compared per memcmp (the library's vectorised compare) */
    uint32_t len = limit;
    uint32_t k = 0;
    for (; k < it->_private.check_count && it->_private.checks[k].term != UINT32_MAX; k++) {
        const weft__iter_check_t *c = &it->_private.checks[k];
        uint32_t room = c->count - base[k];
        uint32_t n = len < room ? len : room;
        const uint32_t *a = c->dense + base[k];
        const uint32_t *b = it->_private.drive_dense + start;
        uint32_t j = 0;
        while (j + BLOCK <= n && memcmp(a + j, b + j, BLOCK * sizeof(uint32_t)) == 0) {
            j += BLOCK;
        }
        while (j < n && a[j] == b[j]) {
            j++;
        }
        len = j;
    }
    if (k == it->_private.check_count) {
        return len; /* no excludes */
    }
    for (uint32_t j = 0; j < len; j++) {
        uint32_t idx = it->_private.drive_dense[start + j];
        for (uint32_t x = k; x < it->_private.check_count; x++) {
            if (check_row(&it->_private.checks[x], idx) != WEFT__ROW_NONE) {
                return j;
            }
        }
    }
    return len;
}

/* Bits of every term of the iterator. */
static uint32_t all_terms(const weft_iter_t *it) {
    return it->term_count >= 32u ? UINT32_MAX : (1u << it->term_count) - 1u;
}

#define MIN_ALIGNED_RUN 16u /* shorter aligned runs are not worth a batch of their own */

/* Forget the previous batch's resolved rows (weft_iter_get must not see them). */
static void unblock(weft_iter_t *it) {
    if (it->_private.blocked) {
        for (uint32_t t = 0; t < it->term_count; t++) {
            it->_private.terms[t].rows = NULL;
        }
        it->_private.blocked = 0;
    }
}

enum {
    PROBE_ABSENT = 1,  /* some entity lacks the component */
    PROBE_PRESENT = 2, /* some entity has it */
    PROBE_STEPPED = 4, /* the rows do not run on one by one from out[0] */
    PROBE_SAME = 8     /* a following include's rows are its lead's (probe_follow) */
};

/* PROBE_* bits from a window's folds: the largest row (ROW_NONE, the largest value, when
 * some entity is absent), the AND of all rows (ROW_NONE when every one is) and the OR of each
 * row XOR its in-step value (0 when the rows run on one by one). */
static HOT_INLINE uint32_t probe_bits(uint32_t most, uint32_t all, uint32_t step) {
    bool absent = most == WEFT__ROW_NONE;
    return (absent ? PROBE_ABSENT : 0u) | (all != WEFT__ROW_NONE ? PROBE_PRESENT : 0u) |
           (step != 0 || absent ? PROBE_STEPPED : 0u);
}

/* probe() for one entry width (a constant after inlining, so the loop has no width test). */
static HOT_INLINE uint32_t probe_width(const weft__iter_check_t *c, const uint32_t *ents,
                                       uint32_t w, uint32_t *out, uint32_t wide) {
    uint32_t most = 0, all = WEFT__ROW_NONE, step = 0;
    uint32_t page_at = UINT32_MAX;
    const unsigned char *page = NULL;
    const unsigned char *const *dir = c->sparse;
    const uint32_t pages = c->pages;
    uint32_t first = 0;
    for (uint32_t i = 0; i < w; i++) {
        uint32_t idx = ents[i];
        uint32_t p = idx >> WEFT__SPARSE_SHIFT;
        if (p != page_at) {
            page_at = p;
            page = p < pages ? dir[p] : NULL;
            if (i == 0) { /* rows running on from the first give step 0 */
                first =
                    page ? weft__sparse_get(page, idx & WEFT__SPARSE_MASK, wide) : WEFT__ROW_NONE;
            }
        }
        uint32_t row =
            page ? weft__sparse_get(page, idx & WEFT__SPARSE_MASK, wide) : WEFT__ROW_NONE;
        out[i] = row;
        most = row > most ? row : most;
        all &= row;
        step |= row ^ (first + i);
    }
    return probe_bits(most, all, step);
}

/* out[i] = the checked pool's row of entity index ents[i] (WEFT__ROW_NONE: absent), for a
 * window of w >= 1 entities; returns PROBE_* bits. The sparse page is looked up again only
 * when it changes. */
static uint32_t probe(const weft__iter_check_t *c, const uint32_t *ents, uint32_t w,
                      uint32_t *out) {
    return c->sparse_wide ? probe_width(c, ents, w, out, 1u) : probe_width(c, ents, w, out, 0u);
}

/* probe() for an include check that follows an earlier one (find_follow): where the lead's
 * row is inside the shared prefix it is this pool's row too, so only entities past the
 * prefix are probed (an entity the lead lacks is rejected anyway: no probe). */
static uint32_t probe_follow(const weft__iter_check_t *c, const uint32_t *ents, uint32_t w,
                             const uint32_t *lead, uint32_t lead_flags, uint32_t *out) {
    const uint32_t n = c->follow_rows;
    uint32_t far = 0;
    for (uint32_t i = 0; i < w; i++) { /* ROW_NONE + 1 wraps to 0: absent is not far */
        far |= (uint32_t)(lead[i] + 1u > n);
    }
    memcpy(out, lead, (size_t)w * sizeof *out);
    if (!far) {
        return lead_flags | PROBE_SAME; /* the same rows */
    }
    uint32_t most = 0, all = WEFT__ROW_NONE, step = 0;
    for (uint32_t i = 0; i < w; i++) {
        if (out[i] >= n && out[i] != WEFT__ROW_NONE) {
            out[i] = check_row(c, ents[i]);
        }
        most = out[i] > most ? out[i] : most;
        all &= out[i];
        step |= out[i] ^ (out[0] + i);
    }
    return probe_bits(most, all, step);
}

/* Probe every check for the w driving entities `ents` (one pool at a time: no per-row
 * branching over checks): rows[c] receives include c's rows, flags[c] its PROBE_* bits, and
 * bad bit i is set for each rejected entity (bad: WEFT__ITER_BLOCK / 64 words). Exclude rows
 * go to `scratch`. */
static void resolve_window(const weft__iter_private_t *pv, const uint32_t *ents, uint32_t w,
                           uint32_t *const *rows, uint32_t *flags, uint64_t *bad,
                           uint32_t *scratch) {
    memset(bad, 0, WEFT__ITER_BLOCK / 64 * sizeof *bad);
    uint32_t includes = 0;
    for (uint32_t k = 0; k < pv->check_count; k++) {
        const weft__iter_check_t *c = &pv->checks[k];
        bool include = c->term != UINT32_MAX;
        uint32_t *out = include ? rows[includes] : scratch;
        uint32_t got =
            c->follow ? probe_follow(c, ents, w, rows[c->follow - 1u], flags[c->follow - 1u], out)
                      : probe(c, ents, w, out);
        if (include) {
            flags[includes++] = got;
        }
        if (include ? (got & PROBE_ABSENT) != 0 : (got & PROBE_PRESENT) != 0) {
            for (uint32_t i = 0; i < w; i++) {
                bad[i >> 6] |= (uint64_t)((out[i] == WEFT__ROW_NONE) == include) << (i & 63u);
            }
        }
    }
}

/* A batch's presence bits and its driving-range terms, from driving row `start`: columns
 * when the batch is gapless, else the driving rows kept in block_drive; every other term's
 * column and base are cleared for the caller to set. */
void weft__query_drive_terms(weft_iter_t *it, uint32_t start, bool gapless, uint32_t *base) {
    weft__iter_private_t *pv = &it->_private;
    it->present = all_terms(it);
    for (uint32_t t = 0; t < it->term_count; t++) {
        it->columns[t] = NULL;
        if (base != NULL) {
            base[t] = WEFT__ROW_NONE;
        }
        if ((pv->contiguous >> t) & 1u) {
            if (gapless) {
                it->columns[t] = pv->terms[t].data + (size_t)start * pv->terms[t].size;
                if (base != NULL) {
                    base[t] = start;
                }
            } else {
                pv->terms[t].rows = pv->block_drive;
            }
        }
    }
}

/* Hand out driving rows [start, start + w) as a batch from resolved rows (src[c]: include
 * c's rows, entry 0 for `start`; bad bit i: entry i rejected, none past w; stepped bit c:
 * include c's rows may not run on one by one; row `start` matches). The driving-range terms
 * are columns when no entry was rejected, else they get the driving rows; an include whose
 * rows run on is a column too. Rejected entries are squeezed out into the iterator's arrays
 * (src may be those arrays: m <= i, in place); otherwise the batch reads src itself. Same
 * base contract as next_batch. */
static bool emit_block(weft_iter_t *it, uint32_t start, uint32_t w, const uint32_t *const *in,
                       const uint64_t *bad, uint32_t stepped, uint32_t same, uint32_t *base) {
    weft__iter_private_t *pv = &it->_private;
    const uint32_t *ents = pv->drive_dense + start;
    uint32_t includes = 0;
    for (uint32_t k = 0; k < pv->check_count && pv->checks[k].term != UINT32_MAX; k++) {
        includes++;
    }
    /* An include whose rows are its lead's (same bit) reads the lead's array: the batch and
     * the body touch one array for both terms. from[c]: the include whose array c reads,
     * through a chain of leads (C0 follows C1, which follows C2: both read C2's). */
    const uint32_t *src[WEFT_QUERY_MAX_TERMS];
    uint32_t from[WEFT_QUERY_MAX_TERMS];
    for (uint32_t c = 0; c < includes; c++) {
        from[c] = (same >> c) & 1u ? from[pv->checks[c].follow - 1u] : c;
        src[c] = in[from[c]];
    }
    bool inline_rows = stepped == 0; /* every include's rows run on in step with the window */
    bool gapless = true;
    for (uint32_t b = 0; b < WEFT__ITER_BLOCK / 64; b++) {
        gapless = gapless && bad[b] == 0;
    }
    /* Predict the next window from this one's last two rows: when every include's rows step
     * by one there, the next batch tries the dense-array comparison again. */
    bool tail = w >= 2 && !((bad[(w - 1u) >> 6] >> ((w - 1u) & 63u)) & 1u) &&
                !((bad[(w - 2u) >> 6] >> ((w - 2u) & 63u)) & 1u);
    for (uint32_t c = 0; c < includes && tail; c++) {
        tail = src[c][w - 1u] == src[c][w - 2u] + 1u;
    }
    if (!(gapless && inline_rows)) {
        /* An in-step stretch at the window's start (rows matching and every include's rows
         * running on one by one) long enough for a batch of its own becomes one, with
         * columns for every term. */
        uint32_t run = 1;
        bool on = true;
        while (on && run < w) {
            on = !((bad[run >> 6] >> (run & 63u)) & 1u);
            for (uint32_t c = 0; c < includes && on; c++) {
                on = src[c][run] == src[c][0] + run;
            }
            run += on;
        }
        if (run >= MIN_ALIGNED_RUN) {
            w = run;
            gapless = true;
            inline_rows = true;
            stepped = 0;
        }
    }
    uint32_t m = w;
    if (!gapless) { /* squeeze the rejected rows out, in order */
        m = 0;
        for (uint32_t i = 0; i < w; i++) {
            if ((bad[i >> 6] >> (i & 63u)) & 1u) {
                continue;
            }
            pv->block_ents[m] = ents[i];
            pv->block_drive[m] = start + i;
            for (uint32_t k = 0; k < includes; k++) {
                if (!((same >> k) & 1u)) {
                    pv->block_rows[k][m] = src[k][i];
                }
            }
            m++;
        }
    }
    /* The pools' rows ran in step: try the cheap dense-array comparison (aligned_run) at
     * the next batch again; else skip it, it would only touch their dense arrays in vain. */
    pv->misaligned = !(gapless && inline_rows) && !tail;
    pv->row = start + w;
    pv->blocked = 1;
    it->rows = m;
    it->entities = gapless ? ents : pv->block_ents;
    weft__query_drive_terms(it, start, gapless, base);
    uint32_t k = 0;
    for (uint32_t c = 0; c < includes; c++) {
        while (pv->checks[k].term == UINT32_MAX) {
            k++;
        }
        uint32_t t = pv->checks[k++].term;
        weft__iter_term_t *term = &pv->terms[t];
        if (gapless && !((stepped >> c) & 1u)) { /* its rows run in step: a column */
            it->columns[t] = term->data + (size_t)src[c][0] * term->size;
            if (base != NULL) {
                base[t] = src[c][0];
            }
            continue;
        }
        term->rows = gapless ? src[c] : pv->block_rows[from[c]];
    }
    return true;
}

/* Bit c set for each include whose PROBE_* bits say its rows may not run on one by one. */
static uint32_t stepped_bits(const uint32_t *flags, uint32_t includes) {
    uint32_t stepped = 0;
    for (uint32_t c = 0; c < includes; c++) {
        stepped |= (uint32_t)((flags[c] & PROBE_STEPPED) != 0) << c;
    }
    return stepped;
}

/* Bit c set for each include whose PROBE_* bits say its rows are its lead's. */
static uint32_t same_bits(const uint32_t *flags, uint32_t includes) {
    uint32_t same = 0;
    for (uint32_t c = 0; c < includes; c++) {
        same |= (uint32_t)((flags[c] & PROBE_SAME) != 0) << c;
    }
    return same;
}

/* Include checks of the iterator (they come first among the checks). */
static uint32_t include_count(const weft__iter_private_t *pv) {
    uint32_t n = 0;
    while (n < pv->check_count && pv->checks[n].term != UINT32_MAX) {
        n++;
    }
    return n;
}

/* A resolved block: the window of driving rows [start, start + WEFT__ITER_BLOCK) (shorter at
 * the chunk's end; row `start` matches), probed into the iterator's arrays. */
static bool block_batch(weft_iter_t *it, uint32_t start, uint32_t *base) {
    weft__iter_private_t *pv = &it->_private;
    uint32_t w = pv->end - start < WEFT__ITER_BLOCK ? pv->end - start : WEFT__ITER_BLOCK;
    uint64_t bad[WEFT__ITER_BLOCK / 64];
    uint32_t flags[WEFT_QUERY_MAX_TERMS];
    uint32_t *rows[WEFT_QUERY_MAX_TERMS];
    uint32_t includes = include_count(pv);
    for (uint32_t c = 0; c < WEFT_QUERY_MAX_TERMS; c++) {
        rows[c] = pv->block_rows[c];
    }
    resolve_window(pv, pv->drive_dense + start, w, rows, flags, bad, pv->block_drive);
    return emit_block(it, start, w, (const uint32_t *const *)rows, bad,
                      stepped_bits(flags, includes), same_bits(flags, includes), base);
}

/* Bits [off, off + w) of a window's rejected-entry words, moved down to bit 0 (none past w). */
static void window_bits(const uint64_t *in, uint32_t off, uint32_t w, uint64_t *out) {
    enum { WORDS = WEFT__ITER_BLOCK / 64 };
    for (uint32_t b = 0; b < WORDS; b++) {
        uint32_t at = off + 64u * b, word = at >> 6, sh = at & 63u;
        uint64_t v = word < WORDS ? in[word] >> sh : 0;
        if (sh != 0 && word + 1u < WORDS) {
            v |= in[word + 1u] << (64u - sh);
        }
        uint32_t keep = w > 64u * b ? w - 64u * b : 0;
        out[b] = keep >= 64u ? v : v & ((UINT64_C(1) << keep) - 1u);
    }
}

/* Window `win`'s resolved rows (rows[c] for each include), rejected-entry bits and include
 * PROBE_* bits: from the join cache when ready, else probed (into the cache when this
 * iterator claims the window, else into its own arrays, *own set). */
static void window_data(weft__iter_private_t *pv, uint32_t win, uint32_t includes, uint32_t **rows,
                        const uint64_t **bad, const uint32_t **flags, uint64_t *own_bad,
                        uint32_t *own_flags, bool *own) {
    weft__join_cache_t *cache = pv->cache;
    uint32_t ws = win * WEFT__ITER_BLOCK;
    uint32_t wn = pv->cache_rows - ws < WEFT__ITER_BLOCK ? pv->cache_rows - ws : WEFT__ITER_BLOCK;
    *own = false;
    if (weft__join_window_ready(cache, win, pv->cache_epoch)) {
        for (uint32_t c = 0; c < includes; c++) {
            rows[c] = weft__join_window_rows(cache, win, c);
        }
        *bad = weft__join_window_bad(cache, win);
        *flags = weft__join_window_flags(cache, win);
        return;
    }
    bool claimed = weft__join_window_claim(cache, win, pv->cache_epoch);
    for (uint32_t c = 0; c < includes; c++) {
        rows[c] = claimed ? weft__join_window_rows(cache, win, c) : pv->block_rows[c];
    }
    uint64_t *b = claimed ? weft__join_window_bad(cache, win) : own_bad;
    uint32_t *f = claimed ? weft__join_window_flags(cache, win) : own_flags;
    resolve_window(pv, pv->drive_dense + ws, wn, rows, f, b, pv->block_drive);
    if (claimed) {
        weft__join_window_publish(cache, win, pv->cache_epoch);
    }
    *own = !claimed;
    *bad = b;
    *flags = f;
}

/* True when a window's entries all match and every include's rows run on one by one. */
static bool window_in_step(const uint64_t *bad, const uint32_t *flags, uint32_t includes) {
    for (uint32_t b = 0; b < WEFT__ITER_BLOCK / 64; b++) {
        if (bad[b] != 0) {
            return false;
        }
    }
    return stepped_bits(flags, includes) == 0;
}

/* Driving rows [start, start + n) as one batch of columns: the include pools' rows run on
 * from first[c] through it. */
static bool columns_batch(weft_iter_t *it, uint32_t start, uint32_t n, const uint32_t *first,
                          uint32_t *base) {
    weft__iter_private_t *pv = &it->_private;
    pv->row = start + n;
    it->rows = n;
    it->entities = pv->drive_dense + start;
    weft__query_drive_terms(it, start, true, base);
    for (uint32_t c = 0; c < pv->check_count && pv->checks[c].term != UINT32_MAX; c++) {
        uint32_t t = pv->checks[c].term;
        it->columns[t] = pv->terms[t].data + (size_t)first[c] * pv->terms[t].size;
        if (base != NULL) {
            base[t] = first[c];
        }
    }
    return true;
}

/* The batch logic with a join cache (join_cache.h): the driving range is cut in fixed windows
 * of WEFT__ITER_BLOCK rows, each resolved once per layout of the join's pools. Windows whose
 * pools run in step, one after the other, make one batch of columns (what the dense-array
 * comparison gives without the cache); any other window is handed out like a block batch. */
static bool cached_batch(weft_iter_t *it, uint32_t *base) {
    weft__iter_private_t *pv = &it->_private;
    const uint32_t includes = include_count(pv);
    while (pv->row < pv->end) {
        uint32_t win = pv->row / WEFT__ITER_BLOCK, ws = win * WEFT__ITER_BLOCK;
        uint32_t wn =
            pv->cache_rows - ws < WEFT__ITER_BLOCK ? pv->cache_rows - ws : WEFT__ITER_BLOCK;
        uint32_t *rows[WEFT_QUERY_MAX_TERMS];
        uint32_t own_flags[WEFT_QUERY_MAX_TERMS];
        uint64_t own_bad[WEFT__ITER_BLOCK / 64];
        const uint64_t *bad;
        const uint32_t *flags;
        bool own;
        window_data(pv, win, includes, rows, &bad, &flags, own_bad, own_flags, &own);
        uint32_t off = pv->row - ws;
        uint32_t stop = pv->end < ws + wn ? pv->end - ws : wn;
        if (!own && window_in_step(bad, flags, includes)) {
            /* Extend over the following windows while they run on in step. */
            uint32_t first[WEFT_QUERY_MAX_TERMS];
            for (uint32_t c = 0; c < includes; c++) {
                first[c] = rows[c][off];
            }
            uint32_t start = ws + off, next = ws + stop;
            while (next < pv->end && next == ws + wn) {
                win++;
                ws = next;
                wn =
                    pv->cache_rows - ws < WEFT__ITER_BLOCK ? pv->cache_rows - ws : WEFT__ITER_BLOCK;
                window_data(pv, win, includes, rows, &bad, &flags, own_bad, own_flags, &own);
                bool on = !own && window_in_step(bad, flags, includes);
                for (uint32_t c = 0; c < includes && on; c++) {
                    on = rows[c][0] == first[c] + (ws - start);
                }
                if (!on) {
                    break;
                }
                next = pv->end < ws + wn ? pv->end : ws + wn;
            }
            return columns_batch(it, start, next - start, first, base);
        }
        uint64_t part[WEFT__ITER_BLOCK / 64];
        window_bits(bad, off, stop - off, part);
        uint32_t skip = 0; /* rejected entries before the first match */
        while (skip < stop - off && ((part[skip >> 6] >> (skip & 63u)) & 1u)) {
            skip++;
        }
        if (skip == stop - off) {
            pv->row = ws + stop;
            continue;
        }
        if (skip != 0) {
            off += skip;
            window_bits(bad, off, stop - off, part);
        }
        const uint32_t *src[WEFT_QUERY_MAX_TERMS];
        for (uint32_t c = 0; c < includes; c++) {
            src[c] = rows[c] + off;
        }
        return emit_block(it, ws + off, stop - off, src, part, stepped_bits(flags, includes),
                          same_bits(flags, includes), base);
    }
    it->rows = 0;
    return false;
}

/* The batch logic of weft_iter_next without change filters. base (may be NULL) receives, per
 * term, the pool row of the batch's first entry when the term's rows run contiguously
 * through the batch, else WEFT__ROW_NONE. */
/* Every term is a column of the driving range: the rest of the chunk is one batch (the
 * common case, and all of a small system's iteration). Inline, so that weft_iter_next's
 * plain path (base NULL) costs what it did before change filters. */
static inline bool whole_chunk(weft_iter_t *it, uint32_t *base) {
    uint32_t start = it->_private.row;
    it->rows = it->_private.end - start;
    it->_private.row = it->_private.end;
    if (it->rows == 0) {
        return false;
    }
    it->entities = it->_private.drive_dense + start;
    it->present = all_terms(it);
    for (uint32_t t = 0; t < it->term_count; t++) {
        it->columns[t] = it->_private.terms[t].data + (size_t)start * it->_private.terms[t].size;
        if (base != NULL) {
            base[t] = start;
        }
    }
    return true;
}

static bool next_batch(weft_iter_t *it, uint32_t *base) {
    unblock(it);
    if (it->_private.check_count == 0) {
        return whole_chunk(it, base);
    }
    if (it->_private.merge) {
        return weft__merge_join_next(it, base);
    }
    if (it->_private.cache != NULL) {
        return cached_batch(it, base);
    }
    uint32_t rows[WEFT_QUERY_MAX_TERMS + WEFT_QUERY_MAX_EXCLUDES];
    uint32_t r = it->_private.row;
    while (r < it->_private.end && !row_matches(it, r, rows)) {
        r++;
    }
    it->rows = 0;
    if (r >= it->_private.end) {
        it->_private.row = it->_private.end;
        return false;
    }
    uint32_t start = r;
    uint32_t aligned = 0;
    if (start < it->_private.packed) { /* in step by construction: no comparison */
        aligned =
            (it->_private.end < it->_private.packed ? it->_private.end : it->_private.packed) -
            start;
    } else if (it->_private.check_count != 0 && !it->_private.misaligned) {
        aligned = aligned_run(it, start, it->_private.end - start, rows);
    }
    uint32_t together = it->_private.contiguous;
    if (it->_private.check_count == 0) {
        r = it->_private.end; /* nothing to check: the whole chunk */
    } else if (aligned >= MIN_ALIGNED_RUN || aligned == it->_private.end - start) {
        r = start + aligned; /* every include lines up: all columns are contiguous */
        for (uint32_t k = 0;
             k < it->_private.check_count && it->_private.checks[k].term != UINT32_MAX; k++) {
            together |= 1u << it->_private.checks[k].term;
        }
    } else {
        if (it->_private.cache_drive != NULL) {
            open_join_cache(it);
            if (it->_private.cache != NULL) {
                return cached_batch(it, base);
            }
        }
        return block_batch(it, start, base);
    }
    it->_private.row = r;
    it->rows = r - start;
    it->entities = it->_private.drive_dense + start;
    it->present = all_terms(it);
    for (uint32_t t = 0; t < it->term_count; t++) {
        it->columns[t] = NULL;
    }
    for (uint32_t t = 0; t < it->term_count; t++) {
        if ((it->_private.contiguous >> t) & 1u) {
            it->columns[t] =
                it->_private.terms[t].data + (size_t)start * it->_private.terms[t].size;
        }
        if (base != NULL) {
            base[t] = ((it->_private.contiguous >> t) & 1u) ? start : WEFT__ROW_NONE;
        }
    }
    for (uint32_t k = 0; k < it->_private.check_count && it->_private.checks[k].term != UINT32_MAX;
         k++) {
        uint32_t t = it->_private.checks[k].term;
        if ((together >> t) & 1u) {
            it->columns[t] =
                it->_private.terms[t].data + (size_t)rows[k] * it->_private.terms[t].size;
            if (base != NULL) {
                base[t] = rows[k];
            }
        }
    }
    return true;
}

/* ---- change filters and stamps ---------------------------------------------- >>change */

/* Start loading the line at p (a hint; no effect on results). An asm statement on x86: gcc
 * 12 drops a __builtin_prefetch inside a loop it finds otherwise empty (the term loop of
 * prefetch_row vanished from the binary). */
static inline void weft__prefetch(const void *p) {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    __asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#elif defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

/* Index of the lowest set bit of x != 0 (a de Bruijn multiply: no branch per bit). */
static uint32_t lowest_bit(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_ctz(x);
#else
    static const uint8_t pos[32] = {0,  1,  28, 2,  29, 14, 24, 3, 30, 22, 20, 15, 25, 17, 4,  8,
                                    31, 27, 13, 23, 21, 19, 16, 7, 26, 12, 18, 6,  11, 5,  10, 9};
    return pos[((x & (0u - x)) * 0x077CB531u) >> 27];
#endif
}

/* Start loading row `row` of every column of the iterator (a hint; no effect on results). */
static void prefetch_row(const weft_iter_t *it, uint32_t row) {
    for (uint32_t t = 0; t < it->term_count; t++) {
        weft__prefetch(it->_private.terms[t].data + (size_t)row * it->_private.terms[t].size);
    }
    weft__prefetch(it->_private.drive_dense + row);
}

/* Do driving row r's change filters pass? rows[] are its include checks' rows (row_matches). */
static bool filters_pass(const weft_iter_t *it, uint32_t r, const uint32_t *rows) {
    const weft_query_t *q = it->_private.query;
    for (uint32_t t = 0; t < it->term_count; t++) {
        if (!((it->_private.filtered >> t) & 1u)) {
            continue;
        }
        uint32_t row = r;
        if (!((it->_private.contiguous >> t) & 1u)) {
            uint32_t k = 0;
            while (it->_private.checks[k].term != t) {
                k++;
            }
            row = rows[k];
        }
        const weft__pool_t *pool = q->pool[t];
        bool pass = q->desc.terms[t].filter == WEFT_CHANGE_ADDED
                        ? weft__tick_newer(pool->tick_added[row], it->_private.since)
                        : weft__change_row_changed(pool, row, it->_private.since);
        if (!pass) {
            return false;
        }
    }
    return true;
}

/* weft_iter_next with change filters: batches are runs of consecutive driving rows passing
 * the checks and the filters. A filter on a driving-range term skips 16-row blocks whose
 * newest tick is not newer than the window (change.h), so the cost follows changed rows. */
static bool next_filtered(weft_iter_t *it, uint32_t *base) {
    const weft_query_t *q = it->_private.query;
    /* The lead: a filtered term of the driving range, whose ticks are read by driving row in
     * a tight loop and whose block summaries skip unchanged blocks; rows it passes get the
     * full test. Without one (filters only on checked terms) every row gets the full test. */
    const weft__pool_t *lead = NULL;
    bool lead_added = false;
    for (uint32_t t = 0; t < it->term_count && lead == NULL; t++) {
        if ((it->_private.filtered & it->_private.contiguous) >> t & 1u) {
            lead = q->pool[t];
            lead_added = q->desc.terms[t].filter == WEFT_CHANGE_ADDED;
        }
    }
    const uint32_t since = it->_private.since;
    const uint32_t block = 1u << WEFT__TICK_BLOCK_SHIFT;
    uint32_t rows[WEFT_QUERY_MAX_TERMS + WEFT_QUERY_MAX_EXCLUDES];
    uint32_t r = it->_private.row, end = it->_private.end;
    bool found = false;
    while (r < end && !found) {
        if (lead != NULL) {
            uint32_t b = r >> WEFT__TICK_BLOCK_SHIFT, first = b * block;
            uint32_t span = end - first < block ? end - first : block;
            uint32_t m = lead_added ? weft__change_block_added(lead, b, since, span)
                                    : weft__change_block_changed(lead, b, since, span);
            m &= ~((1u << (r - first)) - 1u); /* rows before r are done */
            if (m == 0) {
                r = first + block;
                continue;
            }
            r = first + lowest_bit(m);
        }
        found = row_matches(it, r, rows) && filters_pass(it, r, rows);
        r += found ? 0u : 1u;
    }
    it->rows = 0;
    if (!found) {
        it->_private.row = end;
        return false;
    }
    /* A batch's rows agree on which OPTIONAL/OR terms they have. */
    const uint32_t *dense = it->_private.drive_dense;
    uint32_t loose = it->_private.loose ? loose_presence(it, dense[r]) : 0u;
    uint32_t start = r++;
    while (r < end && row_matches(it, r, rows) && filters_pass(it, r, rows) &&
           (it->_private.loose == 0 || loose_presence(it, dense[r]) == loose)) {
        r++;
    }
    it->_private.row = r;
    it->rows = r - start;
    it->entities = it->_private.drive_dense + start;
    it->present = (all_terms(it) & ~it->_private.loose) | loose;
    for (uint32_t t = 0; t < it->term_count; t++) {
        bool covered = (it->_private.contiguous >> t) & 1u;
        it->columns[t] =
            covered ? it->_private.terms[t].data + (size_t)start * it->_private.terms[t].size
                    : NULL;
        base[t] = covered ? start : WEFT__ROW_NONE;
    }
    return true;
}

/* Refill the ring with the next blocks holding changed rows of the lead term, and their
 * masks. Two passes so the memory accesses overlap: the block summaries are read in order,
 * then the dirty blocks' ticks, each block with a fixed-count loop (no data-dependent
 * branch), so the loads of successive blocks are independent. */
static void scan_blocks(weft_iter_t *it) {
    const weft_query_t *q = it->_private.query;
    uint32_t t = it->_private.lead - 1u;
    const weft__pool_t *pool = q->pool[t];
    const uint32_t since = it->_private.since, end = it->_private.end;
    const uint32_t last = (end + (1u << WEFT__TICK_BLOCK_SHIFT) - 1u) >> WEFT__TICK_BLOCK_SHIFT;
    bool added = q->desc.terms[t].filter == WEFT_CHANGE_ADDED;
    /* Two sources (change.h): row ticks, read only when some tick is newer than the window,
     * and the dirty bits of the main thread's open epoch (changed filters only). */
    bool ticks = weft__change_ticks_live(pool, since);
    bool dirty = !added && weft__change_dirty_live(pool, since);
    uint32_t n = 0, b = it->_private.scan;
    if (!ticks && !dirty) {
        b = last;
    }
    /* Aligned groups of 8 blocks inside the range are read at once (change.h). */
    while (b < last && n + 8u <= WEFT__ITER_RING) {
        bool group = (b & 7u) == 0 && last - b >= 8u;
        uint32_t m = 0;
        if (ticks) {
            m = group ? weft__change_dirty8(pool, b, since)
                      : (uint32_t)weft__change_slots_dirty(pool, b, since);
        }
        if (dirty) {
            m |= group ? weft__change_dirty_blocks8(pool, b)
                       : (uint32_t)(weft__change_dirty16(pool, b) != 0);
        }
        for (; m != 0; m &= m - 1u) {
            it->_private.ring_block[n++] = b + lowest_bit(m);
        }
        b += group ? 8u : 1u;
    }
    it->_private.scan = b;
    /* Start loading every dirty block's row ticks (a line each) before reading any. */
    const void *rowticks =
        added ? (const void *)pool->tick_added : (const void *)pool->tick_changed;
    for (uint32_t k = 0; ticks && k < n; k++) {
        weft__prefetch((const uint32_t *)rowticks +
                       ((size_t)it->_private.ring_block[k] << WEFT__TICK_BLOCK_SHIFT));
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t blk = it->_private.ring_block[k], first = blk << WEFT__TICK_BLOCK_SHIFT;
        uint32_t m = dirty ? weft__change_dirty16(pool, blk) : 0u;
        if (ticks && end - first >= 16u) { /* the slots said dirty: read the 16 ticks */
            m |= weft__change_slots_dirty(pool, blk, since)
                     ? weft__change_rows16(pool, blk, since, added)
                     : 0u;
        } else if (ticks) {
            m |= added ? weft__change_block_added(pool, blk, since, end - first)
                       : weft__change_block_changed(pool, blk, since, end - first);
        }
        if (end - first < 16u) { /* bits past the range: rows of another chunk, or gone */
            m &= (1u << (end - first)) - 1u;
        }
        if (first < it->_private.row) { /* the chunk starts inside this block */
            m &= ~((1u << (it->_private.row - first)) - 1u);
        }
        it->_private.ring_mask[k] = (uint16_t)m;
        /* The rows are scattered: start loading each block's first changed row of every
         * column now, so that the loads overlap instead of waiting one by one in the body. */
        if (m != 0) {
            prefetch_row(it, first + lowest_bit(m));
        }
    }
    it->_private.ring_at = 0;
    it->_private.ring_len = n;
}

/* Hand out rows [start, end) of the driving range as a run (every term a column). */
static bool emit_run(weft_iter_t *it, uint32_t start, uint32_t end, uint32_t *base) {
    weft__iter_private_t *pv = &it->_private;
    it->rows = end - start;
    it->entities = pv->drive_dense + start;
    it->present = all_terms(it);
    for (uint32_t t = 0; t < it->term_count; t++) {
        it->columns[t] = pv->terms[t].data + (size_t)start * pv->terms[t].size;
        base[t] = start;
    }
    return true;
}

/* Hand out m rows (driving rows `rows`, entities `ents`) as a resolved block. */
static bool emit_rows(weft_iter_t *it, uint32_t m, const uint32_t *rows, const uint32_t *ents,
                      uint32_t *base) {
    weft__iter_private_t *pv = &it->_private;
    it->rows = m;
    if (m == 0) {
        return false;
    }
    pv->blocked = 1;
    it->entities = ents;
    it->present = all_terms(it);
    for (uint32_t t = 0; t < it->term_count; t++) {
        it->columns[t] = NULL;
        pv->terms[t].rows = rows;
        base[t] = WEFT__ROW_NONE;
    }
    return true;
}

/* Hand out the m gathered rows (block_drive, block_ents) as a resolved block. */
static bool emit_gathered(weft_iter_t *it, uint32_t m, uint32_t *base) {
    return emit_rows(it, m, it->_private.block_drive, it->_private.block_ents, base);
}

/* Rows a gather prefetches ahead of the row it reads: about the misses one core keeps in
 * flight (two lines a row: its data and its entity). Prefetching the whole batch at once
 * asked for more lines than can be outstanding, and the rest waited in the load queue. */
#define WEFT__GATHER_AHEAD 16u

/* Load the entities of the m gathered rows (block_drive) into block_ents, each row's data and
 * entity line prefetched WEFT__GATHER_AHEAD rows ahead, so the rows' misses overlap (and the
 * body finds the data loaded). */
static void gather_entities(weft__iter_private_t *pv, const unsigned char *data, size_t size,
                            uint32_t m) {
    const uint32_t *dense = pv->drive_dense, *rows = pv->block_drive;
    for (uint32_t i = 0; i < m && i < WEFT__GATHER_AHEAD; i++) {
        weft__prefetch(data + (size_t)rows[i] * size);
        weft__prefetch(dense + rows[i]);
    }
    for (uint32_t i = 0; i < m; i++) {
        if (i + WEFT__GATHER_AHEAD < m) {
            uint32_t ahead = rows[i + WEFT__GATHER_AHEAD];
            weft__prefetch(data + (size_t)ahead * size);
            weft__prefetch(dense + ahead);
        }
        pv->block_ents[i] = dense[rows[i]];
    }
}

/* next_scanned when the dirty bits alone hold the window's changes (no row tick of the lead
 * pool is newer than the window, change.h): the summary names the words that hold bits,
 * which are read a word (32 rows) at a time and the rows gathered in ascending order into the
 * batch, then their entities loaded with their data prefetched (gather_entities), so the cost
 * follows the changed rows plus one load per 1,024 rows (no slot, no row tick, no ring, no
 * branch per empty word) and the rows' misses overlap. The batches have next_scanned's
 * shapes: resolved blocks of up to WEFT__ITER_BLOCK rows, a 16-row block that does not fit
 * going whole to the next one, and a run for aligned 16-row blocks that changed whole. Called
 * with the ring empty; pv->scan follows pv->row, so the two paths may take turns. */
static bool next_dirty(weft_iter_t *it, const weft__pool_t *pool, uint32_t *base) {
    weft__iter_private_t *pv = &it->_private;
    const weft_atomic_u32 *dirty = pool->tick_dirty, *sum = pool->dirty_sum;
    const uint32_t end = pv->end, from = pv->scan << WEFT__TICK_BLOCK_SHIFT;
    const uint32_t lead = pv->lead - 1u;
    const unsigned char *data = pv->terms[lead].data;
    const size_t size = pv->terms[lead].size;
    uint32_t r = pv->row > from ? pv->row : from, m = 0;
    unblock(it);
    if (r >= end) {
        return false;
    }
    const uint32_t wlast = (end - 1u) >> 5u; /* the last word inside the range */
    const uint32_t lastmask = (end & 31u) ? (1u << (end & 31u)) - 1u : ~0u;
    uint32_t w = r >> 5u, sw = w >> 5u;
    uint32_t bits = weft_atomic_load_relaxed(&dirty[w]) & (~0u << (r & 31u));
    /* The summary's bits of the words after w (change.h), a summary word at a time. */
    uint32_t named = weft_atomic_load_relaxed(&sum[sw]) & (~1u << (w & 31u));
    for (;;) {
        uint32_t first = w << 5u;
        bits &= w == wlast ? lastmask : ~0u;
        if ((bits & (bits - 1u)) != 0 && /* two rows or more: maybe a whole 16-row block */
            ((bits & 0xFFFFu) == 0xFFFFu || (bits >> 16u) == 0xFFFFu)) {
            /* A 16-row block changed whole: a run of it and the whole blocks after it, once
             * the rows before it are handed out. */
            uint32_t hb = (bits & 0xFFFFu) == 0xFFFFu ? first : first + 16u;
            uint32_t below = hb == first ? 0u : bits & 0xFFFFu;
            if (m != 0 || below != 0) {
                for (; below != 0; below &= below - 1u) {
                    pv->block_drive[m++] = first + lowest_bit(below);
                }
                gather_entities(pv, data, size, m);
                pv->row = hb;
                pv->scan = hb >> WEFT__TICK_BLOCK_SHIFT;
                return emit_gathered(it, m, base);
            }
            uint32_t stop = hb + 16u;
            while (end - stop >= 16u && stop < end &&
                   weft__change_dirty16(pool, stop >> WEFT__TICK_BLOCK_SHIFT) == 0xFFFFu) {
                stop += 16u;
            }
            pv->row = stop;
            pv->scan = stop >> WEFT__TICK_BLOCK_SHIFT;
            return emit_run(it, hb, stop, base);
        }
        for (; bits != 0; bits &= bits - 1u) {
            pv->block_drive[m++] = first + lowest_bit(bits);
        }
        /* A word is taken whole, so a batch stops while 32 more rows fit (no block is split). */
        if (m > WEFT__ITER_BLOCK - 32u) {
            w++;
            break;
        }
        while (named == 0 && sw < wlast >> 5u) {
            named = weft_atomic_load_relaxed(&sum[++sw]);
        }
        w = named == 0 ? wlast + 1u : (sw << 5u) + lowest_bit(named);
        if (w > wlast) { /* the range is done */
            break;
        }
        named &= named - 1u;
        bits = weft_atomic_load_relaxed(&dirty[w]);
    }
    gather_entities(pv, data, size, m);
    uint32_t next = w << 5u;
    pv->row = next < end ? next : end;
    pv->scan = pv->row >> WEFT__TICK_BLOCK_SHIFT;
    return emit_gathered(it, m, base);
}

/* Rows of a batch served from the write list: the body reads them while the next batch's data
 * lines, fetched when this batch was handed out, arrive (16 is about the misses one core keeps
 * in flight, WEFT__GATHER_AHEAD). */
#define WEFT__LIST_BATCH 32u

/* next_scanned when the lead pool's write list serves (change.h, THE WRITE LIST; the
 * iteration covers the whole pool): its rows in first-write order, a batch of
 * WEFT__LIST_BATCH at a time, each batch's rows and entities pointing into the list (nothing
 * copied, no bit and no entity line read), the next batch's data lines fetched ahead. */
static bool next_listed(weft_iter_t *it, uint32_t *base) {
    weft__iter_private_t *pv = &it->_private;
    const weft__pool_t *pool = ((const weft_query_t *)pv->query)->pool[pv->lead - 1u];
    const unsigned char *data = pv->terms[pv->lead - 1u].data;
    const size_t size = pv->terms[pv->lead - 1u].size;
    uint32_t at = pv->listed - 1u, end = pv->list_end;
    uint32_t m = end - at < WEFT__LIST_BATCH ? end - at : WEFT__LIST_BATCH;
    const uint32_t *rows = pool->list_rows + at;
    uint32_t ahead = end - at - m < WEFT__LIST_BATCH ? end - at - m : WEFT__LIST_BATCH;
    for (uint32_t i = 0; i < ahead; i++) {
        weft__prefetch(data + (size_t)rows[m + i] * size);
    }
    pv->listed = at + m + 1u;
    if (m == 0) {
        pv->row = pv->end;
        pv->scan = (pv->end + 15u) >> WEFT__TICK_BLOCK_SHIFT;
    }
    return emit_rows(it, m, rows, pool->list_ents + at, base);
}

/* next_filtered when the lead term alone decides (every term is a driving-range column).
 * Scattered changed rows are gathered into resolved-block batches of up to
 * WEFT__ITER_BLOCK rows (each term's rows[] are the driving rows), so the cost per batch is
 * shared by many rows; a block whose 16 rows all changed starts a contiguous run instead
 * (consecutive such blocks join it), which keeps its columns for dense changes. */
static bool next_scanned(weft_iter_t *it, uint32_t *base) {
    weft__iter_private_t *pv = &it->_private;
    const uint32_t last = (pv->end + 15u) >> WEFT__TICK_BLOCK_SHIFT;
    const uint32_t *dense = pv->drive_dense;
    uint32_t m = 0;
    if (pv->listed != 0) {
        return next_listed(it, base);
    }
    if (pv->ring_at == pv->ring_len) {
        const weft_query_t *q = pv->query;
        const weft__pool_t *lead = q->pool[pv->lead - 1u];
        if (q->desc.terms[pv->lead - 1u].filter == WEFT_CHANGE_CHANGED &&
            weft__change_dirty_live(lead, pv->since) && !weft__change_ticks_live(lead, pv->since)) {
            /* The whole pool, not begun: the write list serves when it names the rows. */
            uint32_t listed = pv->row == 0 && pv->scan == 0 && pv->end == lead->count
                                  ? weft__change_list_usable(lead)
                                  : 0u;
            if (listed != 0) {
                pv->listed = 1u;
                pv->list_end = listed;
                unblock(it);
                /* The first batch's data lines; each batch fetches the next one's. */
                const unsigned char *data = pv->terms[pv->lead - 1u].data;
                const size_t size = pv->terms[pv->lead - 1u].size;
                for (uint32_t i = 0; i < listed && i < WEFT__LIST_BATCH; i++) {
                    weft__prefetch(data + (size_t)lead->list_rows[i] * size);
                }
                return next_listed(it, base);
            }
            return next_dirty(it, lead, base);
        }
    }
    unblock(it);
    for (;;) {
        while (pv->ring_at < pv->ring_len && pv->ring_mask[pv->ring_at] == 0) {
            pv->ring_at++;
        }
        if (pv->ring_at == pv->ring_len) {
            if (pv->scan >= last) {
                break;
            }
            scan_blocks(it);
            continue;
        }
        uint32_t k = pv->ring_at, bits = pv->ring_mask[k];
        uint32_t first = pv->ring_block[k] << WEFT__TICK_BLOCK_SHIFT;
        if (bits == 0xFFFFu) { /* a whole block: a run, unless rows are already gathered */
            if (m != 0) {
                break;
            }
            uint32_t start = first, end = first + 16u;
            pv->ring_mask[k] = 0;
            pv->ring_at++;
            while (pv->ring_at < pv->ring_len && pv->ring_mask[pv->ring_at] == 0xFFFFu &&
                   pv->ring_block[pv->ring_at] << WEFT__TICK_BLOCK_SHIFT == end) {
                pv->ring_mask[pv->ring_at++] = 0;
                end += 16u;
            }
            return emit_run(it, start, end, base);
        }
        if (m + popcount32(bits) > WEFT__ITER_BLOCK) {
            break; /* the block goes to the next batch whole */
        }
        for (; bits != 0; bits &= bits - 1u) {
            uint32_t r = first + lowest_bit(bits);
            pv->block_drive[m] = r;
            pv->block_ents[m++] = dense[r];
        }
        pv->ring_mask[k] = 0;
        pv->ring_at++;
    }
    return emit_gathered(it, m, base);
}

/* Record the batch's rows of every stamped term (a write term of a tracked pool) as written
 * at the iterator's tick. */
static void stamp_batch(const weft_iter_t *it, const uint32_t *base) {
    const weft_query_t *q = it->_private.query;
    uint32_t tick = it->_private.tick;
    /* A system's query stamps its run tick, which goes to the system slot; other queries
     * stamp the iterating thread's tick, in its slot (change.h). Stamps raise the slots
     * (load and compare: a system's query iterated after its run stamps an older tick). */
    uint32_t slot = q->run ? WEFT__TICK_SLOT_SYSTEM : weft__change_slot_now(q->world);
    for (uint32_t t = 0; t < it->term_count; t++) {
        if (!((it->_private.stamped & it->present) >> t & 1u)) {
            continue; /* not a tracked write term, or absent from the batch */
        }
        weft__pool_t *pool = (weft__pool_t *)q->pool[t];
        if (base[t] != WEFT__ROW_NONE) { /* a run of rows: one slot raise per block */
            weft__change_mark_run(pool, base[t], base[t] + it->rows, tick, slot);
        } else if (it->_private.terms[t].rows != NULL) { /* a resolved block */
            for (uint32_t i = 0; i < it->rows; i++) {
                weft__change_stamp(pool, it->_private.terms[t].rows[i], tick, slot);
            }
        } else {
            for (uint32_t i = 0; i < it->rows; i++) {
                weft__change_stamp(pool, weft__pool_row(pool, it->entities[i]), tick, slot);
            }
        }
    }
}

bool weft_iter_next(weft_iter_t *it) {
    if ((it->_private.filtered | it->_private.stamped | it->_private.loose | it->_private.view) ==
        0) {
        return it->_private.check_count == 0 ? whole_chunk(it, NULL) : next_batch(it, NULL);
    }
    if (it->_private.view != 0) {
        return weft__view_next(it);
    }
    uint32_t base[WEFT_QUERY_MAX_TERMS];
    bool more = it->_private.lead                              ? next_scanned(it, base)
                : (it->_private.filtered | it->_private.loose) ? next_filtered(it, base)
                                                               : next_batch(it, base);
    if (more && it->_private.stamped) {
        stamp_batch(it, base);
    }
    return more;
}

weft_entity_t weft_iter_entity(const weft_iter_t *it, uint32_t i) {
    return weft_entity_from_index(it->_private.world, it->entities[i]);
}

uint32_t weft_query_entity_count(const weft_query_t *q) {
    weft_iter_t it;
    uint32_t n = 0;
    if (weft_query_iter(q, 0, 0, &it) != WEFT_OK) {
        return 0;
    }
    it._private.stamped = 0; /* counting writes nothing */
    while (weft_iter_next(&it)) {
        n += it.rows;
    }
    return n;
}
