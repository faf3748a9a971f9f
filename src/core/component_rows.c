/* component_rows.c: row-level pool access — count, row readers, move, sort, reserve.
 *
 * DESIGN
 * These are the "linear component manager" operations (a pool seen as arrays) that work on rows
 * rather than entities: index access, entity-at-index, move-item and sort. Moves and sorts
 * rewrite the sparse entries of every row they touch. Sort is a stable merge sort over a row
 * permutation, applied into freshly allocated arrays that replace the old ones, so an
 * allocation failure leaves the pool untouched. Members of a group refuse moves and sorts
 * (their prefix order is the group's). */
#include <string.h>

#include "access.h"
#include "change.h"
#include "entity.h"
#include "group.h"
#include "query_view.h"
#include "world.h"

/* ---- readers ------------------------------------------------------------------ >>read */

/* A module-owned component's rows are its module's row view (weft/module.h): holes read as
 * the null entity and NULL data; writes go where get_mut's go, marked the same way. */

uint32_t weft_component_rows(const weft_world_t *world, weft_component_t c) {
    WEFT__NONNULL(world, 0);
    const weft__component_t *comp = weft__component(world, c.id);
    weft_module_view_t v;
    if (weft__view_of(world, comp, &v)) {
        return v.count;
    }
    return comp ? comp->pool.count : 0;
}

weft_entity_t weft_component_entity_at(const weft_world_t *world, weft_component_t c,
                                       uint32_t row) {
    WEFT__NONNULL(world, WEFT_ENTITY_NULL);
    const weft__component_t *comp = weft__component(world, c.id);
    weft_module_view_t v;
    if (weft__view_of(world, comp, &v)) {
        return row < v.count ? v.entities[row] : WEFT_ENTITY_NULL;
    }
    if (comp == NULL || row >= comp->pool.count) {
        return WEFT_ENTITY_NULL;
    }
    return weft_entity_from_index(world, comp->pool.dense[row]);
}

/* Row `row` of c's view (NULL: out of range or a hole), or `pool` when c has no view. */
static unsigned char *view_row(const weft_world_t *world, const weft__component_t *comp,
                               uint32_t row, weft_module_view_t *v, bool *viewed) {
    *viewed = weft__view_of(world, comp, v);
    if (!*viewed || row >= v->count || v->entities[row] == 0) {
        return NULL;
    }
    return (unsigned char *)v->data + (size_t)row * comp->pool.size;
}

const void *weft_component_row(const weft_world_t *world, weft_component_t c, uint32_t row) {
    WEFT__NONNULL(world, NULL);
    WEFT__ACCESS(world, c.id, WEFT__ACCESS_READ);
    const weft__component_t *comp = weft__component(world, c.id);
    weft_module_view_t v;
    bool viewed;
    const void *data = view_row(world, comp, row, &v, &viewed);
    if (viewed) {
        return data;
    }
    if (comp == NULL || row >= comp->pool.count) {
        return NULL;
    }
    return weft__pool_at(&comp->pool, row);
}

void *weft_component_row_mut(weft_world_t *world, weft_component_t c, uint32_t row) {
    WEFT__NONNULL(world, NULL);
    WEFT__ACCESS(world, c.id, WEFT__ACCESS_WRITE);
    weft__component_t *comp = weft__component(world, c.id);
    weft_module_view_t v;
    bool viewed;
    unsigned char *data = view_row(world, comp, row, &v, &viewed);
    if (viewed && comp->owned.get_mut == NULL) {
        (void)weft__owned_refuse(world, comp, "weft_component_row_mut");
        return NULL;
    }
    if (viewed) {
        if (data != NULL && v.marks != NULL) {
            v.marks[row] |= v.mark_bits;
        }
        return data;
    }
    if (comp == NULL || row >= comp->pool.count) {
        return NULL;
    }
    if (comp->pool.tick_added != NULL) { /* tracked: the pointer counts as a write */
        weft__change_write_now(world, &comp->pool, row, comp->pool.dense[row], false);
    }
    return weft__pool_at(&comp->pool, row);
}

/* ---- ordered operations -------------------------------------------------------- >>order */

/* The component of an ordered operation, or an error (unknown id, member of a user group; the
 * caller yields an automatic group's pool with weft__group_yield_pool once nothing can fail). */
static weft_result_t ordered_pool(weft_world_t *world, weft_component_t c, const char *fn,
                                  weft__pool_t **pool) {
    weft__component_t *comp = weft__component(world, c.id);
    if (comp == NULL) {
        return WEFT__FAIL(world->log, WEFT_EINVAL, "%s: unknown component id %u", fn, c.id);
    }
    if (comp->pool.multi != NULL || weft__group_user_owned(world, &comp->pool)) {
        return WEFT__FAIL(world->log, WEFT_ESTATE, "%s: '%s' is grouped or multi-instance", fn,
                          comp->name);
    }
    *pool = &comp->pool;
    return WEFT_OK;
}

weft_result_t weft_component_move_row(weft_world_t *world, weft_component_t c, uint32_t from,
                                      uint32_t to) {
    WEFT__MAIN_CALL(world);
    weft__pool_t *pool = NULL;
    weft_result_t r = ordered_pool(world, c, "weft_component_move_row", &pool);
    if (r != WEFT_OK) {
        return r;
    }
    if (from >= pool->count || to >= pool->count) {
        return WEFT__FAIL(world->log, WEFT_EINVAL,
                          "weft_component_move_row: rows %u -> %u out of range (%u rows)", from, to,
                          pool->count);
    }
    weft__group_yield_pool(world, weft__component(world, c.id));
    weft__pool_move_row(pool, from, to);
    return WEFT_OK;
}

typedef struct sort_ctx {
    const weft_world_t *world;
    const weft__pool_t *pool;
    weft_component_cmp_t cmp;
    void *user;
} sort_ctx_t;

static int compare_rows(const sort_ctx_t *s, uint32_t a, uint32_t b) {
    return s->cmp(weft_entity_from_index(s->world, s->pool->dense[a]), weft__pool_at(s->pool, a),
                  weft_entity_from_index(s->world, s->pool->dense[b]), weft__pool_at(s->pool, b),
                  s->user);
}

/* Bottom-up stable merge sort of perm[0..n) using tmp[0..n). Returns the sorted buffer. */
static uint32_t *merge_sort(const sort_ctx_t *s, uint32_t *perm, uint32_t *tmp, uint32_t n) {
    for (uint32_t width = 1; width < n; width *= 2u) {
        for (uint32_t lo = 0; lo < n; lo += 2u * width) {
            uint32_t mid = lo + width < n ? lo + width : n;
            uint32_t hi = lo + 2u * width < n ? lo + 2u * width : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                tmp[k++] = compare_rows(s, perm[j], perm[i]) < 0 ? perm[j++] : perm[i++];
            }
            while (i < mid) {
                tmp[k++] = perm[i++];
            }
            while (j < hi) {
                tmp[k++] = perm[j++];
            }
        }
        uint32_t *t = perm;
        perm = tmp;
        tmp = t;
        if (width > n / 2u) {
            break; /* done; also keeps width * 2 from wrapping for huge n */
        }
    }
    return perm;
}

weft_result_t weft_component_sort(weft_world_t *world, weft_component_t c, weft_component_cmp_t cmp,
                                  void *user) {
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(cmp != NULL, world->log, WEFT_EINVAL, "weft_component_sort: cmp is NULL");
    weft__pool_t *pool = NULL;
    weft_result_t r = ordered_pool(world, c, "weft_component_sort", &pool);
    if (r != WEFT_OK || pool->count < 2) {
        return r;
    }
    uint32_t n = pool->count;
    size_t perm_bytes = (size_t)n * sizeof(uint32_t) * 2u;
    size_t dense_bytes = (size_t)pool->cap * sizeof(uint32_t);
    size_t data_bytes = (size_t)pool->cap * pool->size;
    uint32_t *perm = weft__alloc(world, perm_bytes, _Alignof(uint32_t));
    uint32_t *dense = weft__alloc(world, dense_bytes, _Alignof(uint32_t));
    unsigned char *data = pool->size ? weft__alloc(world, data_bytes, pool->align) : pool->data;
    if (perm == NULL || dense == NULL || data == NULL) {
        weft__free(world, perm, perm_bytes);
        weft__free(world, dense, dense_bytes);
        if (pool->size) {
            weft__free(world, data, data_bytes);
        }
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_component_sort: out of memory");
    }
    weft__group_yield_pool(world, weft__component(world, c.id));
    for (uint32_t i = 0; i < n; i++) {
        perm[i] = i;
    }
    sort_ctx_t s = {.world = world, .pool = pool, .cmp = cmp, .user = user};
    uint32_t *order = merge_sort(&s, perm, perm + n, n);
    for (uint32_t i = 0; i < n; i++) {
        dense[i] = pool->dense[order[i]];
        if (pool->size) {
            memcpy(data + (size_t)i * pool->size, weft__pool_at(pool, order[i]), pool->size);
        }
    }
    if (pool->tick_added != NULL) {      /* permute the ticks through the other half of perm */
        weft__change_settle(NULL, pool); /* dirty bits into the ticks before they move */
        uint32_t *tmp = order == perm ? perm + n : perm;
        for (uint32_t i = 0; i < n; i++) {
            tmp[i] = pool->tick_added[order[i]];
        }
        memcpy(pool->tick_added, tmp, (size_t)n * sizeof *tmp);
        for (uint32_t i = 0; i < n; i++) {
            tmp[i] = weft_atomic_load_relaxed(&pool->tick_changed[order[i]]);
        }
        for (uint32_t i = 0; i < n; i++) {
            weft_atomic_store_relaxed(&pool->tick_changed[i], tmp[i]);
        }
        weft__change_fix_blocks(pool, 0, n);
    }
    weft__free(world, perm, perm_bytes);
    weft__free(world, pool->dense, dense_bytes);
    if (pool->size) {
        weft__free(world, pool->data, data_bytes);
    }
    pool->dense = dense;
    pool->data = data;
    for (uint32_t i = 0; i < n; i++) {
        weft__pool_sparse_set(pool, dense[i], i);
    }
    weft__pool_check_order(pool, 0); /* a sort by entity makes the pool merge-joinable */
    return WEFT_OK;
}

weft_result_t weft_component_reserve(weft_world_t *world, weft_component_t c, uint32_t n) {
    WEFT__MAIN_CALL(world);
    weft__component_t *comp = weft__component(world, c.id);
    if (comp == NULL) {
        return WEFT__FAIL(world->log, WEFT_EINVAL, "weft_component_reserve: unknown component %u",
                          c.id);
    }
    return weft__pool_reserve(world, &comp->pool, n);
}
