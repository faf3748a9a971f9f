/* auto_group.c: the automatic grouping planner (auto_group.h). */
#include "auto_group.h"

#include <string.h>

#include "group.h"
#include "jobs/platform/report.h"

static bool shares(const weft__auto_set_t *a, const weft__auto_set_t *b) {
    for (uint32_t i = 0; i < a->count; i++) {
        for (uint32_t j = 0; j < b->count; j++) {
            if (a->ids[i] == b->ids[j]) {
                return true;
            }
        }
    }
    return false;
}

/* Candidate order: fewer components first, then smaller ids (a strict subset comes first). */
static bool less_ids(const weft__auto_set_t *a, const weft__auto_set_t *b) {
    if (a->count != b->count) {
        return a->count < b->count;
    }
    for (uint32_t i = 0; i < a->count; i++) {
        if (a->ids[i] != b->ids[i]) {
            return a->ids[i] < b->ids[i];
        }
    }
    return false;
}

void weft__auto_plan_add(const weft_world_t *world, weft__auto_plan_t *plan, const uint32_t *ids,
                         uint32_t count) {
    if (count < 2 || count > WEFT_GROUP_MAX_COMPONENTS) {
        return;
    }
    weft__auto_set_t set = {.count = count, .systems = 1};
    for (uint32_t i = 0; i < count; i++) {
        const weft__component_t *comp = weft__component(world, ids[i]);
        if (comp == NULL || comp->pool.multi != NULL || comp->owned.refuse != NULL ||
            comp->user_ordered ||
            (comp->pool.group != 0 && comp->pool.group <= world->user_groups)) {
            return;
        }
        uint32_t j = i; /* insertion sort; a query's terms are distinct */
        while (j > 0 && set.ids[j - 1u] > ids[i]) {
            set.ids[j] = set.ids[j - 1u];
            j--;
        }
        set.ids[j] = ids[i];
    }
    for (uint32_t k = 0; k < plan->count; k++) {
        weft__auto_set_t *have = &plan->sets[k];
        if (have->count == count && memcmp(have->ids, set.ids, count * sizeof set.ids[0]) == 0) {
            have->systems++;
            return;
        }
    }
    if (plan->count < WEFT__AUTO_CANDIDATES) {
        plan->sets[plan->count++] = set;
    }
}

/* Rows the candidate's systems iterate per frame, estimated from counts (auto_group.h). */
static uint64_t weight(const weft_world_t *world, const weft__auto_set_t *set) {
    uint32_t rows = UINT32_MAX;
    for (uint32_t i = 0; i < set->count; i++) {
        uint32_t n = world->components[set->ids[i]]->pool.count;
        rows = n < rows ? n : rows;
    }
    return (uint64_t)set->systems * (1u + (uint64_t)rows);
}

/* True when the automatic groups are exactly `sets` (chain by chain, outermost first). */
static bool same_groups(const weft_world_t *world, const weft__auto_set_t *const *sets,
                        uint32_t n) {
    if (world->group_count - world->user_groups != n) {
        return false;
    }
    for (uint32_t k = 0; k < n; k++) {
        const weft__group_t *grp = &world->groups[world->user_groups + 1u + k];
        if (grp->count != sets[k]->count ||
            memcmp(grp->members, sets[k]->ids, grp->count * sizeof grp->members[0]) != 0) {
            return false;
        }
    }
    return true;
}

void weft__auto_plan_apply(weft_world_t *world, const weft__auto_plan_t *plan) {
    world->auto_stale = false;
    if (!world->auto_groups) {
        weft__group_drop_auto(world);
        world->auto_stale = false;
        return;
    }
    /* Candidates in order (insertion sort of at most 64 pointers). */
    const weft__auto_set_t *cand[WEFT__AUTO_CANDIDATES];
    uint64_t w[WEFT__AUTO_CANDIDATES];
    uint32_t n = 0;
    for (uint32_t k = 0; k < plan->count; k++) {
        uint32_t j = n++;
        while (j > 0 && less_ids(&plan->sets[k], cand[j - 1u])) {
            cand[j] = cand[j - 1u];
            j--;
        }
        cand[j] = &plan->sets[k];
    }
    for (uint32_t i = 0; i < n; i++) {
        w[i] = weight(world, cand[i]);
    }
    bool alive[WEFT__AUTO_CANDIDATES];
    for (uint32_t i = 0; i < n; i++) {
        alive[i] = true;
    }
    const weft__auto_set_t *chosen[WEFT__MAX_GROUPS];
    uint32_t nchosen = 0;
    const uint32_t room = WEFT__MAX_GROUPS - 1u - world->user_groups;
    for (;;) {
        /* Heaviest chain ending at each candidate: subsets come earlier in the order. */
        uint64_t best[WEFT__AUTO_CANDIDATES];
        uint32_t prev[WEFT__AUTO_CANDIDATES];
        uint32_t top = UINT32_MAX;
        for (uint32_t i = 0; i < n; i++) {
            if (!alive[i]) {
                continue;
            }
            best[i] = w[i];
            prev[i] = UINT32_MAX;
            for (uint32_t j = 0; j < i; j++) {
                if (alive[j] && cand[j]->count < cand[i]->count &&
                    weft__ids_subset(cand[j]->ids, cand[j]->count, cand[i]->ids, cand[i]->count) &&
                    w[i] + best[j] > best[i]) {
                    best[i] = w[i] + best[j];
                    prev[i] = j;
                }
            }
            if (top == UINT32_MAX || best[i] > best[top]) {
                top = i; /* strictly: ties keep the earlier candidate */
            }
        }
        if (top == UINT32_MAX) {
            break;
        }
        uint32_t chain[WEFT_GROUP_MAX_COMPONENTS]; /* innermost first; each adds a component */
        uint32_t len = 0;
        for (uint32_t i = top; i != UINT32_MAX; i = prev[i]) {
            chain[len++] = i;
        }
        if (nchosen + len > room) {
            break; /* the world's groups are used up */
        }
        for (uint32_t k = len; k-- > 0;) {
            chosen[nchosen++] = cand[chain[k]];
        }
        for (uint32_t i = 0; i < n; i++) { /* the chain's innermost set is its union */
            alive[i] = alive[i] && !shares(cand[i], cand[top]);
        }
    }
    if (same_groups(world, chosen, nchosen)) {
        return;
    }
    weft__group_drop_auto(world);
    for (uint32_t k = 0; k < nchosen; k++) {
        uint32_t g = weft__group_make_auto(world, chosen[k]->ids, chosen[k]->count);
        weft_assert_internal(g != 0);
        (void)g;
    }
    world->auto_stale = false;
}
