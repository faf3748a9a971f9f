/* group.c: groups — member pools whose row prefixes are kept aligned (see weft/group.h).
 *
 * DESIGN
 * A group is a fixed record in the world (members, n); it owns no memory, so creating one
 * cannot fail for lack of memory. Invariant, for every member pool P and row r < n:
 * P.dense[r] is the same entity index in every member, and an entity has every member exactly
 * when its rows are < n. Entering the group swaps the entity's row with row n in each member
 * and grows n; leaving swaps it with row n - 1 and shrinks n; both are O(members). Rows >= n
 * are unordered as in any pool. Ordered pool operations (remove_ordered, move_row, sort) are
 * refused on members because they would break the alignment. */
#include "group.h"

#include "access.h"
#include "entity.h"

/* ---- alignment -------------------------------------------------------------- >>align */

static weft__pool_t *member_pool(const weft_world_t *world, const weft__group_t *grp, uint32_t m) {
    return &world->components[grp->members[m]]->pool;
}

uint32_t weft__group_on_add(weft_world_t *world, uint32_t g, uint32_t idx) {
    weft__group_t *grp = &world->groups[g];
    uint32_t rows[WEFT_GROUP_MAX_COMPONENTS];
    for (uint32_t m = 0; m < grp->count; m++) {
        rows[m] = weft__pool_row(member_pool(world, grp, m), idx);
        if (rows[m] == WEFT__ROW_NONE) {
            return WEFT__ROW_NONE; /* not every member yet */
        }
    }
    for (uint32_t m = 0; m < grp->count; m++) {
        weft__pool_swap_rows(member_pool(world, grp, m), rows[m], grp->n);
    }
    return grp->n++;
}

uint32_t weft__group_on_remove(weft_world_t *world, uint32_t g, uint32_t idx) {
    weft__group_t *grp = &world->groups[g];
    uint32_t row = weft__pool_row(member_pool(world, grp, 0), idx);
    if (row == WEFT__ROW_NONE || row >= grp->n) {
        return WEFT__ROW_NONE; /* not in the prefix */
    }
    uint32_t last = grp->n - 1u;
    /* prefix rows agree across members, so member 0's row is every member's */
    for (uint32_t m = 0; m < grp->count; m++) {
        weft__pool_swap_rows(member_pool(world, grp, m), row, last);
    }
    grp->n = last;
    return last;
}

bool weft__group_check(const weft_world_t *world, uint32_t g) {
    const weft__group_t *grp = &world->groups[g];
    const weft__pool_t *lead = member_pool(world, grp, 0);
    for (uint32_t m = 0; m < grp->count; m++) {
        const weft__pool_t *pool = member_pool(world, grp, m);
        if (pool->count < grp->n || pool->group != g) {
            return false;
        }
        for (uint32_t r = 0; r < grp->n; r++) {
            if (pool->dense[r] != lead->dense[r]) {
                return false;
            }
        }
        /* rows past the prefix must lack some member */
        for (uint32_t r = grp->n; r < pool->count; r++) {
            bool all = true;
            for (uint32_t k = 0; k < grp->count && all; k++) {
                all = weft__pool_row(member_pool(world, grp, k), pool->dense[r]) != WEFT__ROW_NONE;
            }
            if (all) {
                return false;
            }
        }
    }
    return true;
}

/* ---- creation ---------------------------------------------------------------- >>create */

/* Validate the desc and sort its members into ids[]. */
static weft_result_t check_desc(const weft_world_t *world, const weft_group_desc_t *d,
                                uint32_t *ids, uint32_t *count) {
    const weft_logger_t *log = world->log;
    WEFT__CONTRACT(d != NULL && d->_canary == 0, log, WEFT_EINVAL,
                   "weft_group_create: desc is NULL or its _canary is not 0");
    uint32_t n = 0;
    weft_result_t r =
        weft__desc_list_len(world, d->components, sizeof d->components[0],
                            WEFT_GROUP_MAX_COMPONENTS, "weft_group_create", "components", &n);
    if (r != WEFT_OK) {
        return r;
    }
    if (n < 2) {
        return WEFT__FAIL(log, WEFT_EINVAL, "weft_group_create: %u members (2 .. %u allowed)", n,
                          WEFT_GROUP_MAX_COMPONENTS);
    }
    *count = n;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = d->components[i].id;
        if (weft__component(world, c) == NULL) {
            return WEFT__FAIL(log, WEFT_EINVAL, "weft_group_create: unknown component id %u", c);
        }
        if (world->components[c]->pool.multi != NULL) {
            return WEFT__FAIL(log, WEFT_EINVAL, "weft_group_create: '%s' is multi-instance",
                              world->components[c]->name);
        }
        /* insertion sort; refuse repeats */
        uint32_t j = i;
        while (j > 0 && ids[j - 1u] > c) {
            ids[j] = ids[j - 1u];
            j--;
        }
        if (j > 0 && ids[j - 1u] == c) {
            return WEFT__FAIL(log, WEFT_EINVAL, "weft_group_create: component %u repeated", c);
        }
        ids[j] = c;
    }
    return WEFT_OK;
}

weft_result_t weft_group_create(weft_world_t *world, const weft_group_desc_t *desc,
                                weft_group_t *out) {
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(out != NULL, world->log, WEFT_EINVAL, "weft_group_create: out is NULL");
    out->id = 0;
    uint32_t ids[WEFT_GROUP_MAX_COMPONENTS];
    uint32_t count = 0;
    weft_result_t r = check_desc(world, desc, ids, &count);
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t existing = world->components[ids[0]]->pool.group;
    if (existing != 0 && world->groups[existing].count == count &&
        memcmp(world->groups[existing].members, ids, count * sizeof(uint32_t)) == 0) {
        out->id = existing;
        return WEFT_OK;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (world->components[ids[i]]->pool.group != 0) {
            return WEFT__FAIL(
                world->log, WEFT_ECONFLICT, "weft_group_create: '%s' already belongs to group %u",
                world->components[ids[i]]->name, world->components[ids[i]]->pool.group);
        }
    }
    if (world->group_count + 1u >= WEFT__MAX_GROUPS) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY, "weft_group_create: %u groups exist",
                          world->group_count);
    }
    uint32_t g = ++world->group_count;
    weft__group_t *grp = &world->groups[g];
    memcpy(grp->members, ids, count * sizeof(uint32_t));
    grp->count = count;
    grp->n = 0;
    uint32_t smallest = 0;
    for (uint32_t m = 0; m < grp->count; m++) {
        member_pool(world, grp, m)->group = g;
        if (member_pool(world, grp, m)->count < member_pool(world, grp, smallest)->count) {
            smallest = m;
        }
    }
    /* Rows [n, r) of the smallest pool were examined and rejected, so swapping row r with row
     * n never brings an unexamined row behind the cursor. */
    weft__pool_t *walk = member_pool(world, grp, smallest);
    for (uint32_t row = 0; row < walk->count; row++) {
        weft__group_on_add(world, g, walk->dense[row]);
    }
    weft_assert_expensive(weft__group_check(world, g));
    out->id = g;
    return WEFT_OK;
}

/* ---- readers ------------------------------------------------------------------ >>read */

static const weft__group_t *group_get(const weft_world_t *world, weft_group_t g) {
    return (g.id != 0 && g.id <= world->group_count) ? &world->groups[g.id] : NULL;
}

weft_group_t weft_group_of(const weft_world_t *world, weft_component_t c) {
    WEFT__NONNULL(world, (weft_group_t){0});
    const weft__component_t *comp = weft__component(world, c.id);
    return (weft_group_t){comp ? comp->pool.group : 0};
}

uint32_t weft_group_rows(const weft_world_t *world, weft_group_t g) {
    WEFT__NONNULL(world, 0);
    const weft__group_t *grp = group_get(world, g);
    return grp ? grp->n : 0;
}

const uint32_t *weft_group_entities(const weft_world_t *world, weft_group_t g) {
    WEFT__NONNULL(world, NULL);
    const weft__group_t *grp = group_get(world, g);
    return grp ? member_pool(world, grp, 0)->dense : NULL;
}

static void *column(const weft_world_t *world, weft_group_t g, weft_component_t c) {
    const weft__group_t *grp = group_get(world, g);
    if (grp == NULL) {
        return NULL;
    }
    for (uint32_t m = 0; m < grp->count; m++) {
        if (grp->members[m] == c.id) {
            return member_pool(world, grp, m)->data;
        }
    }
    return NULL;
}

void *weft_group_column_mut(weft_world_t *world, weft_group_t g, weft_component_t c) {
    WEFT__NONNULL(world, NULL);
    WEFT__ACCESS(world, c.id, WEFT__ACCESS_WRITE);
    return column(world, g, c);
}

const void *weft_group_column(const weft_world_t *world, weft_group_t g, weft_component_t c) {
    WEFT__NONNULL(world, NULL);
    WEFT__ACCESS(world, c.id, WEFT__ACCESS_READ);
    return column(world, g, c);
}
