/* group.c: groups — member pools whose row prefixes are kept aligned (see weft/group.h).
 *
 * DESIGN
 * A group is a fixed record in the world (members, n); it owns no memory, so creating one
 * cannot fail for lack of memory. Invariant, for every member pool P and row r < n:
 * P.dense[r] is the same entity index in every member, and an entity has every member exactly
 * when its rows are < n. Entering the group swaps the entity's row with row n in each member
 * and grows n; leaving swaps it with row n - 1 and shrinks n; both are O(members). Rows >= n
 * are unordered as in any pool. Ordered pool operations (remove_ordered, move_row, sort) are
 * refused on members because they would break the alignment.
 *
 * Nested groups. Groups whose member sets nest ({P,V} c {P,V,M} c {P,V,M,T}) share pools as a
 * chain, outermost (fewest members) to innermost. Every entity in an inner group is in each
 * outer one, and each inner prefix lies inside the outer prefix of every pool they share, so
 * every group of the chain iterates dense columns. An entity enters the chain's groups from
 * the outside in: entering an inner group swaps rows inside the outer prefix only (row
 * inner.n <= its row < outer.n), which keeps the outer group's rows where they are. It leaves
 * from the inside out, for the same reason. A pool's `group` is the outermost group that has
 * it as a member; the groups further in all have it too. Groups that share members without
 * nesting cannot be aligned together and are refused at creation.
 *
 * Automatic groups (auto_group.c) are ordinary groups made after the user's: ids 1 ..
 * user_groups are the user's, the ids after them automatic. They never share a pool with a
 * user group, so dropping them all (a re-plan, or a user group being created) only resets
 * their pools' `group` and never disturbs a user chain; user ids never change. */
#include "group.h"

#include <stdio.h>
#include <string.h>

#include "access.h"
#include "entity.h"

/* ---- alignment -------------------------------------------------------------- >>align */

static weft__pool_t *member_pool(const weft_world_t *world, const weft__group_t *grp, uint32_t m) {
    return &world->components[grp->members[m]]->pool;
}

/* idx's row in the group's prefix, or WEFT__ROW_NONE when it is not in the group. */
static uint32_t prefix_row(const weft_world_t *world, const weft__group_t *grp, uint32_t idx) {
    uint32_t row = weft__pool_row(member_pool(world, grp, 0), idx);
    return row != WEFT__ROW_NONE && row < grp->n ? row : WEFT__ROW_NONE;
}

/* Enter group g if idx has every member; returns its new row, or WEFT__ROW_NONE. */
static uint32_t enter(weft_world_t *world, uint32_t g, uint32_t idx) {
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

uint32_t weft__group_on_add(weft_world_t *world, uint32_t g, uint32_t idx) {
    uint32_t root = g;
    while (world->groups[root].outer != 0) {
        root = world->groups[root].outer;
    }
    /* From the outside in; a group idx is already in (an outer one it entered before this
     * add) is passed; the first it cannot enter ends the walk, as every inner one has more
     * members. */
    uint32_t row = WEFT__ROW_NONE;
    bool reached = false; /* at g or inside it: the rows are those of g's pools */
    for (uint32_t h = root; h != 0; h = world->groups[h].inner) {
        reached = reached || h == g;
        uint32_t in = prefix_row(world, &world->groups[h], idx);
        if (in == WEFT__ROW_NONE) {
            in = enter(world, h, idx);
            if (in == WEFT__ROW_NONE) {
                break;
            }
        }
        if (reached) {
            row = in;
        }
    }
    return row;
}

uint32_t weft__group_on_remove(weft_world_t *world, uint32_t g, uint32_t idx) {
    if (prefix_row(world, &world->groups[g], idx) == WEFT__ROW_NONE) {
        return WEFT__ROW_NONE; /* not in g, so in none of the inner groups either */
    }
    uint32_t innermost = g;
    while (world->groups[innermost].inner != 0 &&
           prefix_row(world, &world->groups[world->groups[innermost].inner], idx) !=
               WEFT__ROW_NONE) {
        innermost = world->groups[innermost].inner;
    }
    /* From the inside out, to g: each step leaves the entity at the end of the next group
     * out's prefix, inside it. */
    uint32_t last = WEFT__ROW_NONE;
    for (uint32_t h = innermost;; h = world->groups[h].outer) {
        weft__group_t *grp = &world->groups[h];
        /* prefix rows agree across members, so member 0's row is every member's */
        uint32_t row = weft__pool_row(member_pool(world, grp, 0), idx);
        last = grp->n - 1u;
        for (uint32_t m = 0; m < grp->count; m++) {
            weft__pool_swap_rows(member_pool(world, grp, m), row, last);
        }
        grp->n = last;
        if (h == g) {
            break;
        }
    }
    return last;
}

/* True when pool is a member of group g. */
bool weft__group_has(const weft_world_t *world, uint32_t g, const weft__pool_t *pool) {
    const weft__group_t *grp = &world->groups[g];
    for (uint32_t m = 0; m < grp->count; m++) {
        if (member_pool(world, grp, m) == pool) {
            return true;
        }
    }
    return false;
}

bool weft__group_check(const weft_world_t *world, uint32_t g) {
    const weft__group_t *grp = &world->groups[g];
    const weft__pool_t *lead = member_pool(world, grp, 0);
    if (grp->inner != 0 && world->groups[grp->inner].n > grp->n) {
        return false; /* an inner prefix longer than the outer one */
    }
    for (uint32_t m = 0; m < grp->count; m++) {
        const weft__pool_t *pool = member_pool(world, grp, m);
        bool in_chain = false; /* g is the pool's group or inside it */
        for (uint32_t h = pool->group; h != 0 && !in_chain; h = world->groups[h].inner) {
            in_chain = h == g;
        }
        if (pool->count < grp->n || !in_chain) {
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
        if (world->components[c]->pool.multi != NULL ||
            world->components[c]->owned.refuse != NULL) {
            return WEFT__FAIL(log, WEFT_EINVAL,
                              "weft_group_create: '%s' is multi-instance or module-owned",
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

bool weft__ids_subset(const uint32_t *a, uint32_t count_a, const uint32_t *b, uint32_t count_b) {
    uint32_t j = 0;
    for (uint32_t i = 0; i < count_a; i++) {
        while (j < count_b && b[j] < a[i]) {
            j++;
        }
        if (j == count_b || b[j] != a[i]) {
            return false;
        }
    }
    return true;
}

/* "{A, B, C}" for messages. */
static void describe(const weft_world_t *world, const uint32_t *ids, uint32_t count, char *buf,
                     size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "{");
    for (uint32_t i = 0; i < count && len < cap; i++) {
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "",
                                world->components[ids[i]]->name);
    }
    if (len < cap) {
        (void)snprintf(buf + len, cap - len, "}");
    }
}

/* Where a group over ids fits: among the existing groups sharing a member with it, the
 * nearest one inside (*inner: a strict superset) and outside (*outer: a strict subset); those
 * groups and the new one must form one chain. Returns an existing group with the same members
 * in *same, or an error naming the group that overlaps without nesting. Only groups 1 .. upto
 * are considered. */
static weft_result_t place(const weft_world_t *world, const uint32_t *ids, uint32_t count,
                           uint32_t upto, uint32_t *outer, uint32_t *inner, uint32_t *same) {
    *outer = *inner = *same = 0;
    for (uint32_t g = 1; g <= upto; g++) {
        const weft__group_t *grp = &world->groups[g];
        bool shares = false;
        for (uint32_t i = 0; i < count && !shares; i++) {
            shares = weft__group_has(world, g, &world->components[ids[i]]->pool);
        }
        if (!shares) {
            continue;
        }
        bool in = weft__ids_subset(grp->members, grp->count, ids, count);  /* grp c new */
        bool out = weft__ids_subset(ids, count, grp->members, grp->count); /* new c grp */
        if (in && out) {
            *same = g;
            return WEFT_OK;
        }
        /* It must also nest with the chain found so far: the nearest outer group is inside
         * every other outer one, and the nearest inner group outside every other inner one. */
        const weft__group_t *o = *outer ? &world->groups[*outer] : NULL;
        const weft__group_t *n = *inner ? &world->groups[*inner] : NULL;
        bool chain =
            in ? (o == NULL || weft__ids_subset(o->members, o->count, grp->members, grp->count) ||
                  weft__ids_subset(grp->members, grp->count, o->members, o->count))
               : (n == NULL || weft__ids_subset(n->members, n->count, grp->members, grp->count) ||
                  weft__ids_subset(grp->members, grp->count, n->members, n->count));
        if (!in && !out) {
            char want[256], have[256];
            describe(world, ids, count, want, sizeof want);
            describe(world, grp->members, grp->count, have, sizeof have);
            return WEFT__FAIL(world->log, WEFT_ECONFLICT,
                              "weft_group_create: %s shares components with group %u %s and "
                              "neither contains the other (groups on the same pools must nest)",
                              want, g, have);
        }
        if (!chain) {
            uint32_t other = in ? *outer : *inner;
            char want[256], have[256], also[256];
            describe(world, ids, count, want, sizeof want);
            describe(world, grp->members, grp->count, have, sizeof have);
            describe(world, world->groups[other].members, world->groups[other].count, also,
                     sizeof also);
            return WEFT__FAIL(world->log, WEFT_ECONFLICT,
                              "weft_group_create: %s would nest with both group %u %s and group "
                              "%u %s, which do not nest with each other",
                              want, g, have, other, also);
        }
        if (in && (o == NULL || grp->count > o->count)) {
            *outer = g;
        }
        if (out && (n == NULL || grp->count < n->count)) {
            *inner = g;
        }
    }
    return WEFT_OK;
}

/* Create the group over ids (sorted, distinct, checked) once place() found where it fits:
 * link it into its chain and align the entities that already have every member. */
static uint32_t make(weft_world_t *world, const uint32_t *ids, uint32_t count, uint32_t outer,
                     uint32_t inner) {
    uint32_t g = ++world->group_count;
    world->group_epoch++;
    weft__group_t *grp = &world->groups[g];
    memcpy(grp->members, ids, count * sizeof(uint32_t));
    grp->count = count;
    /* The inner group's entities have every member and already sit at rows [0, inner.n) of
     * every pool they share with the new group, which are all of its pools. */
    grp->n = inner ? world->groups[inner].n : 0u;
    grp->outer = outer;
    grp->inner = inner;
    if (outer) {
        world->groups[outer].inner = g;
    }
    if (inner) {
        world->groups[inner].outer = g;
    }
    uint32_t smallest = 0;
    for (uint32_t m = 0; m < grp->count; m++) {
        weft__pool_t *pool = member_pool(world, grp, m);
        if (pool->group == 0 || pool->group == inner) {
            pool->group = g; /* the new group is now the outermost one with this pool */
        }
        if (pool->count < member_pool(world, grp, smallest)->count) {
            smallest = m;
        }
    }
    /* Candidates: rows past the inner prefix, inside the outer prefix when there is one (an
     * entity with every member is in it). Rows [grp->n, row) were examined and rejected, so
     * entering (a swap of row `row` with row grp->n) never brings an unexamined row behind
     * the cursor. */
    const weft__pool_t *walk =
        outer ? member_pool(world, &world->groups[outer], 0) : member_pool(world, grp, smallest);
    uint32_t end = outer ? world->groups[outer].n : walk->count;
    for (uint32_t row = grp->n; row < end; row++) {
        (void)enter(world, g, walk->dense[row]);
    }
    weft_assert_expensive(weft__group_check(world, g));
    return g;
}

uint32_t weft__group_make_auto(weft_world_t *world, const uint32_t *ids, uint32_t count) {
    uint32_t outer = 0, inner = 0, same = 0;
    if (world->group_count + 1u >= WEFT__MAX_GROUPS ||
        place(world, ids, count, world->group_count, &outer, &inner, &same) != WEFT_OK ||
        same != 0) {
        return 0; /* the planner never asks for these (auto_group.c) */
    }
    for (uint32_t m = 0; m < count; m++) {
        world->components[ids[m]]->pool.layout++; /* join caches re-key under the new plan */
    }
    return make(world, ids, count, outer, inner);
}

void weft__group_drop_auto(weft_world_t *world) {
    if (world->auto_family_count != 0) { /* packed families: their rows stay where they are */
        world->auto_family_count = 0;
        world->auto_stale = world->auto_groups;
    }
    if (world->group_count == world->user_groups) {
        return;
    }
    for (uint32_t g = world->user_groups + 1u; g <= world->group_count; g++) {
        weft__group_t *grp = &world->groups[g];
        for (uint32_t m = 0; m < grp->count; m++) {
            weft__pool_t *pool = member_pool(world, grp, m);
            pool->group = 0; /* automatic chains never share a pool with a user group */
            pool->layout++;  /* join caches keyed on the old groups re-resolve */
        }
        memset(grp, 0, sizeof *grp);
    }
    world->group_count = world->user_groups;
    world->group_epoch++;
    world->auto_stale = world->auto_groups;
}

bool weft__group_user_owned(const weft_world_t *world, const weft__pool_t *pool) {
    return pool->group != 0 && pool->group <= world->user_groups;
}

/* True when component id c is in a packed family of the automatic plan (auto_group.h). */
static bool in_family(const weft_world_t *world, uint32_t c) {
    for (uint32_t f = 0; f < world->auto_family_count; f++) {
        const weft__auto_family_t *fam = &world->auto_families[f];
        if (weft__ids_subset(&c, 1, fam->ids, fam->count)) {
            return true;
        }
    }
    return false;
}

void weft__group_yield_pool(weft_world_t *world, weft__component_t *comp) {
    comp->user_ordered = true;
    if (comp->pool.group != 0 || in_family(world, comp->pool.id)) {
        weft__group_drop_auto(world);
    }
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
    /* The user's groups win over automatic ones: only the user's are checked, and the
     * automatic ones are dropped before the new group is made (re-planned before the next
     * frame, around the user's groups), which also keeps every user id below every
     * automatic one. */
    uint32_t outer = 0, inner = 0, same = 0;
    r = place(world, ids, count, world->user_groups, &outer, &inner, &same);
    if (r != WEFT_OK || same != 0) {
        out->id = same;
        return r;
    }
    if (world->user_groups + 1u >= WEFT__MAX_GROUPS) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY, "weft_group_create: %u groups exist",
                          world->user_groups);
    }
    weft__group_drop_auto(world);
    out->id = make(world, ids, count, outer, inner);
    world->user_groups = out->id;
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
