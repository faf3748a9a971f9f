/* bulk.c: bulk structural calls — create N entities with component values, add / set /
 * remove one component on an array of entities, destroy every entity a query matches.
 *
 * DESIGN
 * Each call is "check, reserve, commit" over the whole batch, so an error anywhere leaves the
 * world exactly as it was (apart from spare capacity and interned component sets, which no
 * reader can observe and weft_world_hash leaves out):
 * 1. check: arguments, every handle (alive, has / lacks the component, no repeats) and every
 *    signature transition (weft__sig_step interns and caches them, so the commit's steps are
 *    cache hits that cannot fail);
 * 2. reserve: entity slots (weft__entity_reserve_n), each pool's rows once for the whole
 *    batch (weft__pool_reserve_more), every sparse page the batch will touch, free-list room;
 * 3. commit, which cannot fail: slots, dense indices and sparse entries in one pass per pool,
 *    data as whole runs (one memcpy or memset per pool), group alignment, then the hooks.
 * The result is the world the equivalent single-entity calls make, row for row, so
 * weft_world_hash is identical (tests/ecs/test_bulk.c checks it against a world built with
 * single calls):
 * - create_with = weft_entity_create_n, then per entity in order, per component in the given
 *   order, weft_component_set (weft_component_add where no value is given). A new entity's rows
 *   go to the end of each pool; a group whose members are all among the components takes the
 *   batch into its prefix with the same swaps (row C + i with row n + i) the single calls make,
 *   so the batch's rows are one contiguous run in every pool and values are copied as a run.
 * - add_n / set_n / remove_n = the single call per entity in array order: rows are pushed in
 *   array order, then each entity is aligned in array order; removal runs row by row.
 * - destroy_all = collect the matching entities in iteration order, then weft_entity_destroy_n.
 * Hooks fire after every structural change of the batch is made (a hook therefore sees the
 * whole batch in place); the order is documented in weft/component.h. Repeated handles are
 * found with a bitmap over the entity table (one allocation, before any change), or pairwise
 * for small arrays. */
#include <stdlib.h>
#include <string.h>

#include "change.h"
#include "entity.h"
#include "group.h"
#include "multi.h"
#include "query.h"
#include "signature.h"
#include "world.h"

#define PAIRWISE_MAX 32u /* arrays up to this size are checked for repeats without a bitmap */

/* ---- shared helpers --------------------------------------------------------- >>helpers */

/* Run one hook with hook_depth raised (structural calls from it are caught in debug builds). */
static void fire(weft_world_t *world, const weft__component_t *comp, weft_component_hook_t hook,
                 weft_entity_t e, void *ptr) {
    world->hook_depth++;
    hook(world, e, (weft_component_t){comp->pool.id}, ptr, comp->hook_user);
    world->hook_depth--;
}

/* The component record for `c`, refusing unknown ids and (unless allow_multi) multi-instance
 * components. */
static weft_result_t resolve_component(weft_world_t *world, weft_component_t c, bool allow_multi,
                                       const char *fn, weft__component_t **out) {
    weft__component_t *comp = weft__component(world, c.id);
    if (comp == NULL) {
        return WEFT__FAIL(world->log, WEFT_EINVAL, "%s: unknown component id %u", fn, c.id);
    }
    if (comp->owned.refuse != NULL) {
        return weft__owned_refuse(world, comp, fn);
    }
    if (!allow_multi && comp->pool.multi != NULL) {
        return WEFT__FAIL(world->log, WEFT_EINVAL,
                          "%s: '%s' is multi-instance (use weft_component_add_instance)", fn,
                          comp->name);
    }
    *out = comp;
    return WEFT_OK;
}

/* Refuse a value whose declared entity fields hold a command-buffer placeholder (as
 * weft_component_set does). values: n packed values of comp's size. */
static weft_result_t check_fields(weft_world_t *world, const weft__component_t *comp,
                                  const void *values, uint32_t n, const char *fn) {
    const unsigned char *v = values;
    for (uint32_t f = 0; f < comp->entity_field_count; f++) {
        for (uint32_t i = 0; i < n; i++) {
            weft_entity_t field;
            memcpy(&field, v + (size_t)i * comp->pool.size + comp->entity_fields[f], sizeof field);
            if ((uint32_t)field == 0 && field != WEFT_ENTITY_NULL) {
                return WEFT__FAIL(world->log, WEFT_EINVAL,
                                  "%s: value %u of '%s' holds placeholder 0x%llx in its entity "
                                  "field at offset %u; placeholders are resolved only by the "
                                  "command buffer that made them",
                                  fn, i, comp->name, (unsigned long long)field,
                                  comp->entity_fields[f]);
            }
        }
    }
    return WEFT_OK;
}

/* es[0..n) are all alive: refuse a repeated entity. Errors: WEFT_EINVAL, WEFT_ENOMEM (the
 * bitmap); nothing changes either way. */
static weft_result_t check_distinct(weft_world_t *world, const weft_entity_t *es, uint32_t n,
                                    const char *fn) {
    if (n <= PAIRWISE_MAX) {
        for (uint32_t i = 1; i < n; i++) {
            for (uint32_t j = 0; j < i; j++) {
                if (es[i] == es[j]) {
                    return WEFT__FAIL(world->log, WEFT_EINVAL,
                                      "%s: entity 0x%llx appears twice (es[%u] and es[%u])", fn,
                                      (unsigned long long)es[i], j, i);
                }
            }
        }
        return WEFT_OK;
    }
    size_t words = ((size_t)weft_atomic_load_relaxed(&world->slot_count) + 63u) / 64u;
    uint64_t *bits = weft__alloc(world, words * sizeof(uint64_t), _Alignof(uint64_t));
    if (bits == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "%s: out of memory checking %u entities", fn, n);
    }
    memset(bits, 0, words * sizeof(uint64_t));
    weft_result_t r = WEFT_OK;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t idx = weft_entity_index(es[i]);
        uint64_t bit = (uint64_t)1 << (idx & 63u);
        if (bits[idx >> 6] & bit) {
            r = WEFT__FAIL(world->log, WEFT_EINVAL,
                           "%s: entity 0x%llx appears twice (again at es[%u])", fn,
                           (unsigned long long)es[i], i);
            break;
        }
        bits[idx >> 6] |= bit;
    }
    weft__free(world, bits, words * sizeof(uint64_t));
    return r;
}

/* A one-entry cache in front of weft__sig_step: the entities of a batch mostly share a
 * signature. */
typedef struct sig_cache {
    uint32_t from; /* UINT32_MAX: empty */
    uint32_t to;
} sig_cache_t;

static weft_result_t step(weft_world_t *world, sig_cache_t *cache, uint32_t sig, uint32_t c,
                          bool remove, uint32_t *out) {
    if (sig == cache->from) {
        *out = cache->to;
        return WEFT_OK;
    }
    weft_result_t r = weft__sig_step(world, sig, c, remove, out);
    if (r == WEFT_OK) {
        cache->from = sig;
        cache->to = *out;
    }
    return r;
}

/* Check every handle of es[0..n) for an add (want_present false) or a remove (true) of comp,
 * and intern every transition. set_n passes allow_present: present and absent both pass. */
static weft_result_t check_entities(weft_world_t *world, const weft_entity_t *es, uint32_t n,
                                    const weft__component_t *comp, bool want_present,
                                    bool allow_present, const char *fn, uint32_t *absent) {
    sig_cache_t cache = {UINT32_MAX, 0};
    uint32_t missing = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t slot;
        if (!weft__entity_slot(world, es[i], &slot)) {
            return WEFT__FAIL(world->log, WEFT_ESTALE, "%s: es[%u] = 0x%llx is null or stale", fn,
                              i, (unsigned long long)es[i]);
        }
        bool has = weft__pool_row(&comp->pool, weft_entity_index(es[i])) != WEFT__ROW_NONE;
        if (has && !want_present && !allow_present) {
            return WEFT__FAIL(world->log, WEFT_EEXIST, "%s: es[%u] = 0x%llx already has '%s'", fn,
                              i, (unsigned long long)es[i], comp->name);
        }
        if (!has && want_present) {
            return WEFT__FAIL(world->log, WEFT_ENOENT, "%s: es[%u] = 0x%llx has no '%s'", fn, i,
                              (unsigned long long)es[i], comp->name);
        }
        if (has && !want_present) {
            continue; /* set_n overwrites: no transition */
        }
        missing++;
        uint32_t to;
        weft_result_t r =
            step(world, &cache, weft__slot_sig(slot), comp->pool.id, want_present, &to);
        if (r != WEFT_OK) {
            return r;
        }
    }
    if (absent != NULL) {
        *absent = missing;
    }
    return check_distinct(world, es, n, fn);
}

/* Room for `extra` rows and the sparse page of every entity of es[0..n) lacking comp. */
static weft_result_t reserve_rows(weft_world_t *world, weft__component_t *comp,
                                  const weft_entity_t *es, uint32_t n, uint32_t extra) {
    weft_result_t r = weft__pool_reserve_more(world, &comp->pool, extra);
    uint32_t last = UINT32_MAX; /* the page just prepared: arrays are mostly in index order */
    for (uint32_t i = 0; r == WEFT_OK && i < n; i++) {
        uint32_t idx = weft_entity_index(es[i]);
        if (idx >> WEFT__SPARSE_SHIFT != last) {
            r = weft__pool_prepare_page(world, &comp->pool, idx);
            last = idx >> WEFT__SPARSE_SHIFT;
        }
    }
    return r;
}

/* Push a zeroed row for every entity of es[0..n) that lacks comp (all_absent: every one
 * does, checked), in array order, with its new signature; then align the group in the same
 * order. Returns nothing: all reserved. */
static void push_absent(weft_world_t *world, weft__component_t *comp, const weft_entity_t *es,
                        uint32_t n, bool all_absent) {
    weft__pool_t *pool = &comp->pool;
    uint32_t first = pool->count;
    sig_cache_t cache = {UINT32_MAX, 0};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t idx = weft_entity_index(es[i]);
        if (!all_absent && weft__pool_row(pool, idx) != WEFT__ROW_NONE) {
            continue;
        }
        uint32_t row = pool->count++;
        pool->dense[row] = idx;
        weft__pool_sparse_set(pool, idx, row);
        uint32_t sig = 0;
        weft_result_t r = step(world, &cache, weft__slot_sig(weft__entity_slot_raw(world, idx)),
                               pool->id, false, &sig);
        weft_assert_internal(r == WEFT_OK); /* interned and cached by check_entities */
        (void)r;
        weft__entity_set_sig(world, idx, sig);
    }
    weft__pool_check_order(pool, first);
    weft__change_stamp_added(pool, first, pool->count, weft__change_tick_now(world));
    if (pool->size != 0 && pool->count > first) { /* data may still be NULL otherwise */
        memset(weft__pool_at(pool, first), 0, (size_t)(pool->count - first) * pool->size);
    }
    if (pool->group != 0) {
        for (uint32_t r = first; r < pool->count; r++) {
            /* rows >= first are not touched by the alignment of earlier rows (their prefix
             * slot is below them), so dense[r] is still the r-th pushed entity */
            (void)weft__group_on_add(world, pool->group, pool->dense[r]);
        }
    }
}

/* Every group's invariant (expensive: debug level 3 only). */
static void check_groups(const weft_world_t *world) {
    for (uint32_t g = 1; g <= world->group_count; g++) {
        weft_assert_expensive(weft__group_check(world, g));
    }
    (void)world;
}

/* ---- create ----------------------------------------------------------------- >>create */

/* The entity index the k-th entity of the next weft__entity_take will get. */
static uint32_t next_index(const weft_world_t *world, uint32_t k) {
    if (k < world->free_count) {
        return world->free_list[world->free_count - 1u - k];
    }
    return weft_atomic_load_relaxed(&world->slot_count) + (k - world->free_count);
}

/* Scratch of one create_with call, per listed component: on the stack for short lists. */
#define CREATE_WITH_STACK 32u
typedef struct create_scratch {
    weft__component_t **comps; /* [count] records */
    uint32_t *base;            /* [count] row of the batch's first entity */
    uint32_t *sorted;          /* [count] the ids ascending (repeats and group membership) */
} create_scratch_t;

static int cmp_id(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* weft_entity_create_with after the entry checks; writes out[] only once it cannot fail. */
static weft_result_t create_with_in(weft_world_t *world, uint32_t n,
                                    const weft_component_t *components, uint32_t count,
                                    const void *const *values, weft_entity_t *out, const char *fn,
                                    const create_scratch_t *sc) {
    weft__component_t **comps = sc->comps;
    uint32_t *sorted = sc->sorted;
    for (uint32_t j = 0; j < count; j++) {
        weft_result_t r = resolve_component(world, components[j], false, fn, &comps[j]);
        if (r != WEFT_OK) {
            return r;
        }
        sorted[j] = components[j].id;
    }
    if (count <= CREATE_WITH_STACK) { /* insertion sort: short lists are the common case */
        for (uint32_t j = 1; j < count; j++) {
            uint32_t v = sorted[j], k = j;
            for (; k > 0 && sorted[k - 1] > v; k--) {
                sorted[k] = sorted[k - 1];
            }
            sorted[k] = v;
        }
    } else {
        qsort(sorted, count, sizeof *sorted, cmp_id);
    }
    for (uint32_t k = 1; k < count; k++) {
        if (sorted[k] == sorted[k - 1]) {
            uint32_t j = 0; /* name the second listing, as a scan in order would */
            bool once = false;
            for (; j < count; j++) {
                if (components[j].id == sorted[k]) {
                    if (once) {
                        break;
                    }
                    once = true;
                }
            }
            return WEFT__FAIL(world->log, WEFT_EINVAL, "%s: components[%u] repeats '%s'", fn, j,
                              comps[j]->name);
        }
    }
    for (uint32_t j = 0; j < count; j++) {
        const void *v = values != NULL ? values[j] : NULL;
        if (v != NULL && n != 0 && comps[j]->pool.size != 0) {
            weft_result_t r = check_fields(world, comps[j], v, n, fn);
            if (r != WEFT_OK) {
                return r;
            }
        }
    }
    if (n == 0) {
        return WEFT_OK;
    }
    /* Reserve: the signature (the same steps the single calls take), slots, rows, pages. */
    uint32_t sig = 0;
    for (uint32_t j = 0; j < count; j++) {
        weft_result_t r = weft__sig_step(world, sig, components[j].id, false, &sig);
        if (r != WEFT_OK) {
            return r;
        }
    }
    weft_result_t r = weft__entity_reserve_n(world, n, fn);
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t from_free = n < world->free_count ? n : world->free_count;
    uint32_t fresh_first = weft_atomic_load_relaxed(&world->slot_count);
    for (uint32_t j = 0; j < count; j++) {
        weft__pool_t *pool = &comps[j]->pool;
        r = weft__pool_reserve_more(world, pool, n);
        for (uint32_t k = 0; r == WEFT_OK && k < from_free; k++) {
            r = weft__pool_prepare_page(world, pool, next_index(world, k));
        }
        if (r == WEFT_OK && from_free < n) { /* fresh slots: one call per page */
            uint32_t last = fresh_first + (n - from_free) - 1u;
            for (uint32_t p = fresh_first >> WEFT__SPARSE_SHIFT;
                 r == WEFT_OK && p <= last >> WEFT__SPARSE_SHIFT; p++) {
                uint32_t idx = p << WEFT__SPARSE_SHIFT;
                r = weft__pool_prepare_page(world, pool, idx > fresh_first ? idx : fresh_first);
            }
        }
        if (r != WEFT_OK) {
            return r;
        }
    }

    /* Commit: nothing below can fail. */
    weft__entity_take(world, n, sig, out);
    uint32_t *base = sc->base; /* row of the batch's first entity, per component */
    for (uint32_t j = 0; j < count; j++) {
        weft__pool_t *pool = &comps[j]->pool;
        uint32_t first = pool->count;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t idx = weft_entity_index(out[i]);
            pool->dense[first + i] = idx;
            weft__pool_sparse_set(pool, idx, first + i);
        }
        pool->count = first + n;
        weft__pool_check_order(pool, first);
        base[j] = first;
        weft__change_stamp_added(pool, first, first + n, weft__change_tick_now(world));
        if (pool->size != 0) {
            const void *v = values != NULL ? values[j] : NULL;
            if (v != NULL && comps[j]->on_add == NULL) { /* else on_add sees zeroes first */
                memcpy(weft__pool_at(pool, first), v, (size_t)n * pool->size);
            } else {
                memset(weft__pool_at(pool, first), 0, (size_t)n * pool->size);
            }
        }
    }
    /* Groups whose members are all among the components take the batch into their prefix,
     * chain by chain from the outermost group in (group.c): the swaps of n single calls. In
     * each member pool the batch sits at base[j] (the pool's end, or the prefix end of the
     * group it entered last) and moves to rows [grp->n, grp->n + n). As grp->n <= base[j],
     * swapping in ascending order moves it intact even where the two ranges overlap. */
    uint64_t done = 0; /* chains aligned, by root (ids < WEFT__MAX_GROUPS = 64) */
    for (uint32_t j = 0; j < count; j++) {
        uint32_t g = comps[j]->pool.group;
        while (g != 0 && world->groups[g].outer != 0) {
            g = world->groups[g].outer;
        }
        if (g == 0 || ((done >> g) & 1u)) {
            continue;
        }
        done |= (uint64_t)1 << g;
        for (; g != 0; g = world->groups[g].inner) {
            weft__group_t *grp = &world->groups[g];
            bool all = true;
            for (uint32_t m = 0; m < grp->count && all; m++) {
                all = weft__ids_have(sorted, count, grp->members[m]);
            }
            if (!all) {
                break; /* the groups further in have more members */
            }
            for (uint32_t k = 0; k < count; k++) {
                if (!weft__group_has(world, g, &comps[k]->pool)) {
                    continue;
                }
                weft__pool_t *pool = &comps[k]->pool;
                if (base[k] != grp->n) {
                    for (uint32_t i = 0; i < n; i++) {
                        weft__pool_swap_rows(pool, base[k] + i, grp->n + i);
                    }
                }
                base[k] = grp->n;
            }
            grp->n += n;
        }
    }
    /* Hooks, per component in the given order: on_add for every entity (zeroed row), the
     * values (for components with on_add), on_set for every entity. */
    for (uint32_t j = 0; j < count; j++) {
        const weft__component_t *comp = comps[j];
        const weft__pool_t *pool = &comp->pool;
        const void *v = values != NULL ? values[j] : NULL;
        if (comp->on_add != NULL) {
            for (uint32_t i = 0; i < n; i++) {
                fire(world, comp, comp->on_add, out[i], weft__pool_at(pool, base[j] + i));
            }
            if (v != NULL && pool->size != 0) {
                memcpy(weft__pool_at(pool, base[j]), v, (size_t)n * pool->size);
            }
        }
        if (v != NULL && comp->on_set != NULL) {
            for (uint32_t i = 0; i < n; i++) {
                fire(world, comp, comp->on_set, out[i], weft__pool_at(pool, base[j] + i));
            }
        }
    }
    check_groups(world);
    return WEFT_OK;
}

/* create_with_in with its scratch: on the stack for up to CREATE_WITH_STACK components, else
 * one allocation (WEFT_ENOMEM before any change). */
static weft_result_t create_with(weft_world_t *world, uint32_t n,
                                 const weft_component_t *components, uint32_t count,
                                 const void *const *values, weft_entity_t *out, const char *fn) {
    WEFT__CONTRACT(components != NULL || count == 0, world->log, WEFT_EINVAL,
                   "%s: components is NULL", fn);
    WEFT__CONTRACT(count < WEFT_MAX_COMPONENTS, world->log, WEFT_EINVAL,
                   "%s: %u components (at most %u distinct ids exist)", fn, count,
                   WEFT_MAX_COMPONENTS - 1u);
    if (count <= CREATE_WITH_STACK) {
        weft__component_t *comps[CREATE_WITH_STACK];
        uint32_t base[CREATE_WITH_STACK], sorted[CREATE_WITH_STACK];
        const create_scratch_t sc = {comps, base, sorted};
        return create_with_in(world, n, components, count, values, out, fn, &sc);
    }
    size_t bytes = (size_t)count * (sizeof(weft__component_t *) + 2u * sizeof(uint32_t));
    unsigned char *block = weft__alloc(world, bytes, _Alignof(weft__component_t *));
    if (block == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "%s: out of memory", fn);
    }
    const create_scratch_t sc = {
        (weft__component_t **)(void *)block,
        (uint32_t *)(void *)(block + (size_t)count * sizeof(weft__component_t *)),
        (uint32_t *)(void *)(block + (size_t)count * (sizeof(weft__component_t *) + 4u))};
    weft_result_t r = create_with_in(world, n, components, count, values, out, fn, &sc);
    weft__free(world, block, bytes);
    return r;
}

weft_result_t weft_entity_create_with(weft_world_t *world, uint32_t n,
                                      const weft_component_t *components, uint32_t count,
                                      const void *const *values, weft_entity_t *out) {
    static const char fn[] = "weft_entity_create_with";
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(out != NULL || n == 0, world->log, WEFT_EINVAL, "%s: out is NULL", fn);
    weft_result_t r = create_with(world, n, components, count, values, out, fn);
    if (r != WEFT_OK && n != 0) {
        memset(out, 0, (size_t)n * sizeof *out); /* the neutral value on failure */
    }
    return r;
}

/* ---- add / set / remove on an array ------------------------------------------- >>array */

weft_result_t weft_component_add_n(weft_world_t *world, const weft_entity_t *es, uint32_t n,
                                   weft_component_t c) {
    static const char fn[] = "weft_component_add_n";
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(es != NULL || n == 0, world->log, WEFT_EINVAL, "%s: es is NULL", fn);
    weft__component_t *comp = NULL;
    weft_result_t r = resolve_component(world, c, false, fn, &comp);
    r = r ? r : check_entities(world, es, n, comp, false, false, fn, NULL);
    r = r ? r : reserve_rows(world, comp, es, n, n);
    if (r != WEFT_OK) {
        return r;
    }
    push_absent(world, comp, es, n, true);
    if (comp->on_add != NULL) {
        for (uint32_t i = 0; i < n; i++) {
            fire(world, comp, comp->on_add, es[i],
                 weft__pool_entity_data(&comp->pool, weft_entity_index(es[i])));
        }
    }
    return WEFT_OK;
}

weft_result_t weft_component_set_n(weft_world_t *world, const weft_entity_t *es, uint32_t n,
                                   weft_component_t c, const void *values) {
    static const char fn[] = "weft_component_set_n";
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(es != NULL || n == 0, world->log, WEFT_EINVAL, "%s: es is NULL", fn);
    weft__component_t *comp = NULL;
    weft_result_t r = resolve_component(world, c, false, fn, &comp);
    if (r != WEFT_OK) {
        return r;
    }
    const size_t size = comp->pool.size;
    WEFT__CONTRACT(values != NULL || size == 0 || n == 0, world->log, WEFT_EINVAL,
                   "%s: values is NULL for '%s'", fn, comp->name);
    r = size != 0 && n != 0 ? check_fields(world, comp, values, n, fn) : WEFT_OK;
    uint32_t absent = 0;
    r = r ? r : check_entities(world, es, n, comp, false, true, fn, &absent);
    r = r ? r : reserve_rows(world, comp, es, n, absent);
    if (r != WEFT_OK) {
        return r;
    }
    /* on_add fires for the entities that get a new row, in array order; push_absent and the
     * group alignment move rows, so remember them first (one byte per entity, allocated
     * before any change). */
    unsigned char *added = NULL;
    if (comp->on_add != NULL && absent != 0) {
        added = weft__alloc(world, n, 1);
        if (added == NULL) {
            return WEFT__FAIL(world->log, WEFT_ENOMEM, "%s: out of memory", fn);
        }
        for (uint32_t i = 0; i < n; i++) {
            added[i] = weft__pool_row(&comp->pool, weft_entity_index(es[i])) == WEFT__ROW_NONE;
        }
    }
    push_absent(world, comp, es, n, absent == n);
    if (added != NULL) {
        for (uint32_t i = 0; i < n; i++) {
            if (added[i]) {
                fire(world, comp, comp->on_add, es[i],
                     weft__pool_entity_data(&comp->pool, weft_entity_index(es[i])));
            }
        }
        weft__free(world, added, n);
    }
    const unsigned char *v = values;
    for (uint32_t i = 0; i < n && size != 0; i++) {
        memcpy(weft__pool_entity_data(&comp->pool, weft_entity_index(es[i])), v + i * size, size);
    }
    if (comp->pool.tick_added != NULL) {
        for (uint32_t i = 0; i < n; i++) {
            uint32_t idx = weft_entity_index(es[i]);
            weft__change_write_now(world, &comp->pool, weft__pool_row(&comp->pool, idx), idx, true);
        }
    }
    if (comp->on_set != NULL) {
        for (uint32_t i = 0; i < n; i++) {
            fire(world, comp, comp->on_set, es[i],
                 weft__pool_entity_data(&comp->pool, weft_entity_index(es[i])));
        }
    }
    return WEFT_OK;
}

weft_result_t weft_component_remove_n(weft_world_t *world, const weft_entity_t *es, uint32_t n,
                                      weft_component_t c) {
    static const char fn[] = "weft_component_remove_n";
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(es != NULL || n == 0, world->log, WEFT_EINVAL, "%s: es is NULL", fn);
    weft__component_t *comp = NULL;
    weft_result_t r = resolve_component(world, c, true, fn, &comp);
    r = r ? r : check_entities(world, es, n, comp, true, false, fn, NULL);
    if (r != WEFT_OK) {
        return r;
    }
    for (uint32_t i = 0; i < n; i++) {
        weft__component_fire_remove(world, comp, weft_entity_index(es[i]), es[i]);
    }
    sig_cache_t cache = {UINT32_MAX, 0};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t idx = weft_entity_index(es[i]), sig = 0;
        r = step(world, &cache, weft__slot_sig(weft__entity_slot_raw(world, idx)), c.id, true,
                 &sig);
        weft_assert_internal(r == WEFT_OK); /* interned and cached by check_entities */
        weft__component_remove_index(world, comp, idx, false);
        weft__entity_set_sig(world, idx, sig);
    }
    return WEFT_OK;
}

/* ---- destroy by query --------------------------------------------------------- >>destroy */

weft_result_t weft_query_destroy_all(weft_query_t *query, uint32_t *destroyed) {
    static const char fn[] = "weft_query_destroy_all";
    if (destroyed != NULL) {
        *destroyed = 0;
    }
    WEFT__NONNULL(query, WEFT_EINVAL);
    weft_world_t *world = weft__query_world(query);
    WEFT__MAIN_CALL_AS(world, fn);
    weft__query_plan_t plan;
    uint32_t rows = weft__query_plan(query, &plan);
    if (rows == 0) {
        return WEFT_OK;
    }
    /* Collect first: destroying moves rows under the iterator. rows bounds the matches. */
    uint32_t *idx = weft__alloc(world, (size_t)rows * sizeof *idx, _Alignof(uint32_t));
    if (idx == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "%s: out of memory collecting %u rows", fn,
                          rows);
    }
    uint32_t found = 0;
    weft_iter_t it;
    weft__query_iter_planned(query, &plan, 0, 0, &it);
    it._private.stamped = 0; /* collecting writes nothing */
    while (weft_iter_next(&it)) {
        memcpy(idx + found, it.entities, (size_t)it.rows * sizeof *idx);
        found += it.rows;
    }
    weft_result_t r = weft__entity_reserve_free(world, found);
    if (r != WEFT_OK) { /* reported under weft_entity_destroy's name: say who asked */
        r = WEFT__FAIL(world->log, r, "%s: out of memory growing the free list by %u entries", fn,
                       found);
    } else {
        uint32_t count = 0;
        for (uint32_t i = 0; i < found; i++) {
            /* a multi-instance driving term repeats its owner: destroy it once */
            if (weft__slot_sig(weft__entity_slot_raw(world, idx[i])) != WEFT__SIG_DEAD) {
                weft__entity_destroy_index(world, idx[i]);
                count++;
            }
        }
        if (destroyed != NULL) {
            *destroyed = count;
        }
    }
    weft__free(world, idx, (size_t)rows * sizeof *idx);
    return r;
}
