/* query_view.c: queries naming module-owned components through their row views (design in
 * query_view.h). */
#include "query_view.h"

#include "access.h"
#include "change.h"
#include "world.h"

bool weft__view_of(const weft_world_t *world, const weft__component_t *comp,
                   weft_module_view_t *out) {
    if (comp == NULL || comp->owned.refuse == NULL || comp->owned.view == NULL) {
        return false;
    }
    comp->owned.view(world, comp->owned.user, out);
    return true;
}

/* ---- creation ------------------------------------------------------------------ >>check */

weft_result_t weft__view_check(const weft_world_t *world, const weft_query_desc_t *d,
                               uint32_t nterms, uint32_t nexcl, uint32_t *viewed) {
    const weft_logger_t *log = world->log;
    uint32_t v = 0;
    for (uint32_t x = 0; x < nexcl; x++) {
        const weft__component_t *comp = world->components[d->exclude[x].id];
        if (comp->owned.refuse != NULL) {
            return WEFT__FAIL(log, WEFT_EINVAL,
                              "weft_query_create: exclude[%u] ('%s') is module-owned; a query "
                              "excludes only pool components",
                              x, comp->name);
        }
    }
    for (uint32_t t = 0; t < nterms; t++) {
        const weft_query_term_t *term = &d->terms[t];
        const weft__component_t *comp = world->components[term->component.id];
        if (comp->owned.refuse == NULL) {
            continue;
        }
        if (comp->owned.view == NULL) {
            return WEFT__FAIL(log, WEFT_EINVAL,
                              "weft_query_create: '%s' is module-owned and its module offers no "
                              "rows to iterate; iterate a component its entities carry in a pool "
                              "and read it with weft_component_get",
                              comp->name);
        }
        if (term->access == WEFT_ACCESS_WRITE && comp->owned.get_mut == NULL) {
            return WEFT__FAIL(log, WEFT_EINVAL,
                              "weft_query_create: terms[%u] writes '%s', which its module lets "
                              "no one write; %s",
                              t, comp->name, comp->owned.refuse);
        }
        v |= 1u << t;
    }
    for (uint32_t t = 0; v != 0 && t < nterms; t++) {
        const weft_query_term_t *term = &d->terms[t];
        const weft__component_t *comp = world->components[term->component.id];
        if (term->filter != WEFT_CHANGE_NONE || term->oper != WEFT_TERM_AND ||
            comp->pool.multi != NULL) {
            return WEFT__FAIL(log, WEFT_EINVAL,
                              "weft_query_create: terms[%u] ('%s') has a change filter, is "
                              "OPTIONAL/OR or is multi-instance, which a query naming a "
                              "module-owned component does not take",
                              t, comp->name);
        }
    }
    *viewed = v;
    return WEFT_OK;
}

/* ---- planning ------------------------------------------------------------------ >>plan */

void weft__view_plan(const weft_world_t *world, const weft_query_desc_t *d, uint32_t nterms,
                     weft__query_plan_t *p) {
    weft_module_view_t views[WEFT_QUERY_MAX_TERMS];
    bool is_view[WEFT_QUERY_MAX_TERMS];
    for (uint32_t t = 0; t < nterms; t++) {
        is_view[t] = weft__view_of(world, world->components[d->terms[t].component.id], &views[t]);
    }
    uint64_t best = UINT64_MAX;
    p->group = 0;
    p->drive = NULL;
    for (uint32_t t = 0; t < nterms; t++) {
        if (d->drive != 0 && t != d->drive - 1u) {
            continue;
        }
        uint32_t rows = 0, covered = 1;
        if (is_view[t]) { /* the views of one store share its rows */
            rows = views[t].count;
            for (uint32_t u = 0; u < nterms; u++) {
                covered += u != t && is_view[u] && views[u].entities == views[t].entities;
            }
        } else {
            rows = world->components[d->terms[t].component.id]->pool.count;
        }
        /* The planner's cost (weft/query.h): each term not covered is a probe per row. */
        uint64_t cost = (uint64_t)rows * (1u + 2u * (uint64_t)(nterms - covered));
        if (cost < best) { /* strictly: ties go to the earlier term */
            best = cost;
            p->group = (uint16_t)(is_view[t] ? t + 1u : 0u); /* drive NULL: the view term */
            p->drive = is_view[t] ? NULL : &world->components[d->terms[t].component.id]->pool;
            p->rows = rows;
        }
    }
}

/* ---- iteration ----------------------------------------------------------------- >>iter */

void weft__view_iter(const weft_world_t *world, const weft_query_desc_t *d, uint32_t nterms,
                     uint32_t nexcl, const weft__query_plan_t *p, uint32_t tick, uint32_t slot,
                     weft_iter_t *it) {
    weft__iter_private_t *pv = &it->_private;
    weft__iter_view_t *vw = &pv->views;
    weft_module_view_t drive = {0};
    const uint32_t view = p->drive == NULL ? p->group : 0u; /* 1 + the driving view term */
    if (view != 0) {
        (void)weft__view_of(world, world->components[d->terms[view - 1u].component.id], &drive);
    }
    vw->ents = view != 0 ? drive.entities : NULL;
    vw->holes = drive.holes;
    vw->slot = slot;
    vw->covered = 0;
    pv->drive_dense = p->drive != NULL ? p->drive->dense : NULL;
    pv->tick = tick;
    pv->stamped = 0;
    pv->filtered = 0;
    pv->loose = 0;
    pv->or_count = 0;
    pv->lead = 0;
    for (uint32_t t = 0; t < nterms + nexcl; t++) {
        const bool term = t < nterms;
        const weft__component_t *comp =
            world->components[term ? d->terms[t].component.id : d->exclude[t - nterms].id];
        const weft__pool_t *pool = &comp->pool;
        const bool write = term && d->terms[t].access == WEFT_ACCESS_WRITE;
        if (term) {
            WEFT__ACCESS(world, pool->id, write ? WEFT__ACCESS_WRITE : WEFT__ACCESS_READ);
        }
        weft_module_view_t v;
        bool covered;
        const weft__pool_t *lookup = NULL; /* a check's pool; NULL: the view's table */
        if (term && weft__view_of(world, comp, &v)) {
            pv->terms[t] = (weft__iter_term_t){.data = v.data, .size = pool->size};
            vw->pools[t] = NULL;
            vw->map[t] = v.map;
            vw->map_pages[t] = v.map_pages;
            vw->map_shift[t] = v.map_shift;
            vw->marks[t] = v.marks;
            vw->mark_bits[t] = v.mark_bits;
            pv->stamped |= (uint32_t)(write && v.marks != NULL) << t;
            covered = view != 0 && v.entities == drive.entities;
        } else {
            if (term) {
                pv->terms[t] = (weft__iter_term_t){.data = pool->data, .size = pool->size};
                vw->pools[t] = pool;
                pv->stamped |= (uint32_t)(write && pool->tick_added != NULL) << t;
            }
            covered = term && pool == p->drive;
            lookup = pool;
        }
        if (covered) {
            vw->covered |= 1u << t;
            continue;
        }
        uint32_t k = pv->check_count++;
        pv->checks[k].term = term ? t : UINT32_MAX;
        vw->check_pool[k] = lookup;
    }
}

/* Row of entity index idx in check k (a pool's sparse index or a view's table). */
static inline uint32_t check_lookup(const weft__iter_private_t *pv, uint32_t k, uint32_t idx) {
    const weft__pool_t *pool = pv->views.check_pool[k];
    if (pool != NULL) {
        return weft__pool_row(pool, idx);
    }
    const uint32_t t = pv->checks[k].term, shift = pv->views.map_shift[t];
    const uint32_t page = idx >> shift;
    if (page >= pv->views.map_pages[t] || pv->views.map[t][page] == NULL) {
        return WEFT__ROW_NONE;
    }
    return pv->views.map[t][page][idx & ((1u << shift) - 1u)];
}

/* True when rows[0..n) are consecutive (n > 0). */
static bool in_step(const uint32_t *rows, uint32_t n) {
    for (uint32_t i = 1; i < n; i++) {
        if (rows[i] != rows[0] + i) {
            return false;
        }
    }
    return true;
}

/* Mark (a view term) or stamp (a tracked pool term) every row of the batch of write term t. */
static void mark_rows(weft_iter_t *it, uint32_t t, const uint32_t *rows) {
    weft__iter_private_t *pv = &it->_private;
    if (pv->views.pools[t] == NULL) {
        unsigned char *marks = pv->views.marks[t], bits = pv->views.mark_bits[t];
        for (uint32_t i = 0; i < it->rows; i++) {
            marks[rows[i]] |= bits; /* one byte per row: chunks never share one */
        }
        return;
    }
    weft__pool_t *pool = (weft__pool_t *)pv->views.pools[t];
    for (uint32_t i = 0; i < it->rows; i++) {
        weft__change_stamp(pool, rows[i], pv->tick, pv->views.slot);
    }
}

bool weft__view_next(weft_iter_t *it) {
    weft__iter_private_t *pv = &it->_private;
    const uint64_t *ents = pv->views.ents;
    const bool holes = pv->views.holes != 0;
    const uint32_t end = pv->end, checks = pv->check_count;
    uint32_t r = pv->row, m = 0;
    while (r < end && m < WEFT__ITER_BLOCK) {
        uint32_t idx;
        if (ents != NULL) {
            if (holes && ents[r] == 0) { /* a hole: only views that may have them test */
                r++;
                continue;
            }
            idx = (uint32_t)ents[r];
        } else {
            idx = pv->drive_dense[r];
        }
        uint32_t k = 0;
        for (; k < checks; k++) {
            const uint32_t row = check_lookup(pv, k, idx);
            if ((row == WEFT__ROW_NONE) != (pv->checks[k].term == UINT32_MAX)) {
                break; /* an include missing, or an exclude present */
            }
            pv->block_rows[k][m] = row;
        }
        if (k == checks) {
            pv->block_drive[m] = r;
            pv->block_ents[m++] = idx;
        }
        r++;
    }
    pv->row = r;
    it->rows = m;
    if (m == 0) {
        return false;
    }
    it->entities = pv->block_ents;
    it->present = it->term_count >= 32u ? UINT32_MAX : (1u << it->term_count) - 1u;
    for (uint32_t t = 0; t < it->term_count; t++) {
        if ((pv->views.covered >> t) & 1u) {
            pv->terms[t].rows = pv->block_drive;
        }
    }
    for (uint32_t k = 0; k < checks && pv->checks[k].term != UINT32_MAX; k++) {
        pv->terms[pv->checks[k].term].rows = pv->block_rows[k];
    }
    for (uint32_t t = 0; t < it->term_count; t++) {
        const uint32_t *rows = pv->terms[t].rows;
        it->columns[t] =
            in_step(rows, m) ? pv->terms[t].data + (size_t)rows[0] * pv->terms[t].size : NULL;
        if ((pv->stamped >> t) & 1u) {
            mark_rows(it, t, rows);
        }
    }
    return true;
}
