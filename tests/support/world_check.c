/* world_check.c: invariant checks and an observable-state digest over the public API (see
 * world_check.h). Slow on purpose (O(rows * components)); meant for small test worlds. */
#include "world_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool fail(char *err, size_t cap, const char *fmt, ...) {
    if (err != NULL && cap > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* ---- pools ------------------------------------------------------------------ >>pools */

static bool check_pools(weft_world_t *w, char *err, size_t cap) {
    uint32_t ncomp = weft_component_type_count(w);
    for (uint32_t id = 1; id <= ncomp; id++) {
        weft_component_t c = {id};
        uint32_t n = weft_component_rows(w, c);
        for (uint32_t row = 0; row < n; row++) {
            weft_entity_t e = weft_component_entity_at(w, c, row);
            if (e == WEFT_ENTITY_NULL && weft_component_row(w, c, row) == NULL) {
                continue; /* a hole of a module's row view (weft/module.h) */
            }
            if (!weft_entity_is_alive(w, e)) {
                return fail(err, cap, "component %u row %u: entity 0x%llx is not alive", id, row,
                            (unsigned long long)e);
            }
            if (!weft_component_has(w, e, c)) {
                return fail(err, cap, "component %u row %u: has() is false for 0x%llx", id, row,
                            (unsigned long long)e);
            }
            const void *a = weft_component_get(w, e, c);
            const void *b = weft_component_row(w, c, row);
            if (a == NULL || b == NULL) {
                return fail(err, cap, "component %u row %u: get/row returned NULL", id, row);
            }
            weft_component_desc_t d;
            if (weft_component_describe(w, c, &d) == WEFT_OK && d.size > 0 && a != b) {
                return fail(err, cap, "component %u row %u: get() and row() disagree", id, row);
            }
        }
        if (weft_component_entity_at(w, c, n) != WEFT_ENTITY_NULL) {
            return fail(err, cap, "component %u: entity_at(count) is not null", id);
        }
    }
    return true;
}

static bool check_entities(weft_world_t *w, char *err, size_t cap) {
    weft_world_stats_t st;
    weft_world_stats(w, &st);
    uint32_t live = 0;
    for (uint32_t i = 0; i < st.entity_slots; i++) {
        weft_entity_t e = weft_entity_from_index(w, i);
        if (e == WEFT_ENTITY_NULL) {
            continue;
        }
        if (i == 0) {
            return fail(err, cap, "slot 0 is alive");
        }
        if (weft_entity_index(e) != i || !weft_entity_is_alive(w, e)) {
            return fail(err, cap, "from_index(%u) = 0x%llx is inconsistent", i,
                        (unsigned long long)e);
        }
        live++;
    }
    if (live != weft_entity_count(w) || live != st.entity_count) {
        return fail(err, cap, "entity count %u, stats %u, but %u live slots", weft_entity_count(w),
                    st.entity_count, live);
    }
    return true;
}

/* ---- groups ----------------------------------------------------------------- >>groups */

static bool has_all(weft_world_t *w, weft_entity_t e, const weft_component_t *m, uint32_t k) {
    for (uint32_t j = 0; j < k; j++) {
        if (!weft_component_has(w, e, m[j])) {
            return false;
        }
    }
    return true;
}

static bool check_groups(weft_world_t *w, char *err, size_t cap) {
    uint32_t ncomp = weft_component_type_count(w);
    weft_world_stats_t st;
    weft_world_stats(w, &st);
    for (uint32_t g = 1; g <= st.group_count; g++) {
        weft_group_t grp = {g};
        weft_component_t members[WEFT_GROUP_MAX_COMPONENTS];
        uint32_t k = 0;
        for (uint32_t id = 1; id <= ncomp && k < WEFT_GROUP_MAX_COMPONENTS; id++) {
            if (weft_group_of(w, (weft_component_t){id}).id == g) {
                members[k++] = (weft_component_t){id};
            }
        }
        if (k < 2) {
            return fail(err, cap, "group %u has %u members", g, k);
        }
        uint32_t n = weft_group_rows(w, grp);
        const uint32_t *ents = weft_group_entities(w, grp);
        if (n > 0 && ents == NULL) {
            return fail(err, cap, "group %u: %u rows but no entity array", g, n);
        }
        for (uint32_t j = 0; j < k; j++) {
            if (weft_component_rows(w, members[j]) < n) {
                return fail(err, cap, "group %u: member %u has fewer rows than n=%u", g,
                            members[j].id, n);
            }
            for (uint32_t row = 0; row < n; row++) {
                weft_entity_t e = weft_component_entity_at(w, members[j], row);
                if (weft_entity_index(e) != ents[row]) {
                    return fail(err, cap, "group %u row %u: member %u holds index %u, group %u", g,
                                row, members[j].id, weft_entity_index(e), ents[row]);
                }
                if (j == 0 && !has_all(w, e, members, k)) {
                    return fail(err, cap, "group %u row %u: entity lacks a member", g, row);
                }
            }
            uint32_t total = weft_component_rows(w, members[j]);
            for (uint32_t row = n; row < total; row++) {
                weft_entity_t e = weft_component_entity_at(w, members[j], row);
                if (has_all(w, e, members, k)) {
                    return fail(err, cap, "group %u: member %u row %u (>= n=%u) has all members", g,
                                members[j].id, row, n);
                }
            }
        }
    }
    return true;
}

/* ---- hierarchy ------------------------------------------------------------ >>hierarchy */

static bool check_hierarchy(weft_world_t *w, char *err, size_t cap) {
    weft_component_t node = weft_component_lookup(w, "weft.hier_node");
    if (node.id == 0) {
        return true;
    }
    uint32_t n = weft_hier_count(w);
    if (weft_component_rows(w, node) != n) {
        return fail(err, cap, "hierarchy: %u nodes but the node tag pool has %u rows", n,
                    weft_component_rows(w, node));
    }
    if (n == 0) {
        return true;
    }
    weft_entity_t *order = malloc(n * sizeof *order);
    if (order == NULL) {
        return fail(err, cap, "hierarchy: test out of memory");
    }
    bool ok = true;
    if (weft_hier_order(w, order, n) != n) {
        ok = fail(err, cap, "hierarchy: order length differs from count");
        goto done;
    }
    for (uint32_t i = 0; i < n && ok; i++) {
        weft_entity_t e = order[i];
        if (!weft_entity_is_alive(w, e) || !weft_hier_has(w, e)) {
            ok = fail(err, cap, "hierarchy: order[%u] = 0x%llx is not a live node", i,
                      (unsigned long long)e);
            break;
        }
        weft_entity_t p = weft_hier_parent(w, e);
        if (p == WEFT_ENTITY_NULL) {
            continue;
        }
        if (!weft_hier_has(w, p)) {
            ok = fail(err, cap, "hierarchy: parent of node %u is not a node", i);
            break;
        }
        bool before = false;
        for (uint32_t j = 0; j < i && !before; j++) {
            before = order[j] == p;
        }
        if (!before) {
            ok = fail(err, cap, "hierarchy: node %u comes before its parent", i);
        }
    }
done:
    free(order);
    return ok;
}

bool wt_world_check(weft_world_t *world, char *err, size_t cap) {
    if (err != NULL && cap > 0) {
        err[0] = '\0';
    }
    return check_entities(world, err, cap) && check_pools(world, err, cap) &&
           check_groups(world, err, cap) && check_hierarchy(world, err, cap);
}

/* ---- digest ------------------------------------------------------------------ >>digest */

static uint64_t mix(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull; /* FNV-1a */
    }
    return h;
}

uint64_t wt_world_digest(weft_world_t *world) {
    uint64_t h = weft_world_hash(world);
    weft_world_stats_t st;
    weft_world_stats(world, &st);
    h = mix(h, &st.entity_count, sizeof st.entity_count);
    h = mix(h, &st.component_count, sizeof st.component_count);
    h = mix(h, &st.group_count, sizeof st.group_count);
    for (uint32_t g = 1; g <= st.group_count; g++) {
        uint32_t n = weft_group_rows(world, (weft_group_t){g});
        h = mix(h, &n, sizeof n);
    }
    uint32_t systems = weft_system_count(world);
    h = mix(h, &systems, sizeof systems);
    if (weft_component_lookup(world, "weft.hier_node").id == 0) {
        return h;
    }
    uint32_t n = weft_hier_count(world);
    h = mix(h, &n, sizeof n);
    weft_entity_t *order = n ? malloc(n * sizeof *order) : NULL;
    if (order == NULL) {
        return h;
    }
    weft_hier_order(world, order, n);
    for (uint32_t i = 0; i < n; i++) {
        h = mix(h, &order[i], sizeof order[i]);
        const weft_transform_t *local = weft_hier_local_read(world, order[i]);
        const weft_mat4_t *wm = weft_hier_world(world, order[i]);
        const weft_parent_link_t *link = weft_hier_link(world, order[i]);
        if (local) {
            h = mix(h, local, sizeof *local);
        }
        if (wm) {
            h = mix(h, wm, sizeof *wm);
        }
        if (link) {
            h = mix(h, link, sizeof *link);
        }
    }
    free(order);
    return h;
}
