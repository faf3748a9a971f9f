/* auto_group.c: the automatic grouping planner (auto_group.h). */
#include "auto_group.h"

#include <math.h>
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

/* ---- packed families ------------------------------------------------------- >>families */

/* True when candidate `set` contains the members of one of the chosen groups (that group
 * would drive its queries) or is one of them. */
static bool holds_chosen(const weft__auto_set_t *set, const weft__auto_set_t *const *chosen,
                         uint32_t nchosen) {
    for (uint32_t k = 0; k < nchosen; k++) {
        if (weft__ids_subset(chosen[k]->ids, chosen[k]->count, set->ids, set->count)) {
            return true;
        }
    }
    return false;
}

/* True when component c is a member of a chosen group. */
static bool in_chosen(uint32_t c, const weft__auto_set_t *const *chosen, uint32_t nchosen) {
    for (uint32_t k = 0; k < nchosen; k++) {
        if (weft__ids_subset(&c, 1, chosen[k]->ids, chosen[k]->count)) {
            return true;
        }
    }
    return false;
}

/* The packed families of a plan (DESIGN, PACKED FAMILIES): the candidates left out of the
 * chains, heaviest first (ties: candidate order), that hold no chosen group, have a pool in
 * no chain (their driving pool) and share no pool with a heavier family. Fresh accounts. */
static uint32_t pick_families(const weft__auto_set_t *const *cand, const uint64_t *w, uint32_t n,
                              const weft__auto_set_t *const *chosen, uint32_t nchosen,
                              weft__auto_family_t *out) {
    bool taken[WEFT__AUTO_CANDIDATES];
    for (uint32_t i = 0; i < n; i++) {
        taken[i] = holds_chosen(cand[i], chosen, nchosen);
        bool free_pool = false;
        for (uint32_t c = 0; c < cand[i]->count && !taken[i]; c++) {
            free_pool = free_pool || !in_chosen(cand[i]->ids[c], chosen, nchosen);
        }
        taken[i] = taken[i] || !free_pool;
    }
    uint32_t nfam = 0;
    while (nfam < WEFT__AUTO_FAMILIES) {
        uint32_t top = UINT32_MAX;
        for (uint32_t i = 0; i < n; i++) {
            if (!taken[i] && (top == UINT32_MAX || w[i] > w[top])) {
                top = i;
            }
        }
        if (top == UINT32_MAX) {
            break;
        }
        weft__auto_family_t *fam = &out[nfam++];
        memset(fam, 0, sizeof *fam);
        memcpy(fam->ids, cand[top]->ids, cand[top]->count * sizeof fam->ids[0]);
        fam->count = cand[top]->count;
        fam->systems = cand[top]->systems;
        for (uint32_t i = 0; i < n; i++) { /* a pool is packed for one family */
            taken[i] = taken[i] || shares(cand[i], cand[top]);
        }
    }
    return nfam;
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
    weft__auto_family_t fams[WEFT__AUTO_FAMILIES];
    uint32_t nfam = pick_families(cand, w, n, chosen, nchosen, fams);
    if (!same_groups(world, chosen, nchosen)) {
        weft__group_drop_auto(world);
        for (uint32_t k = 0; k < nchosen; k++) {
            uint32_t g = weft__group_make_auto(world, chosen[k]->ids, chosen[k]->count);
            weft_assert_internal(g != 0);
            (void)g;
        }
    }
    /* A family the plan had already keeps its account while the groups stay; re-made groups
     * dropped the families (their rows moved), so those start afresh. */
    for (uint32_t f = 0; f < nfam; f++) {
        for (uint32_t o = 0; o < world->auto_family_count; o++) {
            const weft__auto_family_t *old = &world->auto_families[o];
            if (old->count == fams[f].count &&
                memcmp(old->ids, fams[f].ids, old->count * sizeof old->ids[0]) == 0) {
                uint32_t systems = fams[f].systems;
                fams[f] = *old;
                fams[f].systems = systems;
            }
        }
    }
    memcpy(world->auto_families, fams, nfam * sizeof fams[0]);
    world->auto_family_count = nfam;
    world->auto_stale = false;
}

/* ---- re-packs ------------------------------------------------------------------ >>repack */

/* Cost model of the rent-or-buy rule (DESIGN), in nanoseconds, measured on the bench's
 * auto_groups world (1M entities, 500k {P,H} rows; weft_bench --suite query):
 * - LOST_NS_PER_ROW: a row a system reads from resolved row arrays instead of a column,
 *   per frame (the {P,H} system unpacked minus packed, per row);
 * - SCAN_NS_PER_ROW: a re-pack's pass over a driving row that is already in place;
 * - MOVE_NS_PER_ROW: a re-pack's move of a row (a swap in each pool, scattered rows). */
#define LOST_NS_PER_ROW 3u
#define SCAN_NS_PER_ROW 6u
#define MOVE_NS_PER_ROW 40u

/* The family's pool of component c. */
static weft__pool_t *fam_pool(weft_world_t *world, const weft__auto_family_t *fam, uint32_t m) {
    return &world->components[fam->ids[m]]->pool;
}

/* Sum of the family's pools' layout counts (every row added, moved or removed bumps it). */
static uint64_t fam_layout(const weft_world_t *world, const weft__auto_family_t *fam) {
    uint64_t sum = 0;
    for (uint32_t m = 0; m < fam->count; m++) {
        sum += world->components[fam->ids[m]]->pool.layout;
    }
    return sum;
}

/* The family's driving pool: the smallest pool in no group (ties: the smaller id), which is
 * the pool its queries drive from (query.c plans from the smallest pool); fam->count when
 * every pool is grouped. */
static uint32_t fam_drive(weft_world_t *world, const weft__auto_family_t *fam) {
    uint32_t drive = fam->count;
    for (uint32_t m = 0; m < fam->count; m++) {
        const weft__pool_t *pool = fam_pool(world, fam, m);
        if (pool->group == 0 &&
            (drive == fam->count || pool->count < fam_pool(world, fam, drive)->count)) {
            drive = m;
        }
    }
    return drive;
}

uint32_t weft__auto_repack(weft_world_t *world, weft__auto_family_t *fam) {
    uint32_t d = fam_drive(world, fam);
    if (d == fam->count) {
        return 0;
    }
    weft__pool_t *drive = fam_pool(world, fam, d);
    uint32_t base[WEFT_GROUP_MAX_COMPONENTS]; /* first row past each pool's group prefix */
    for (uint32_t m = 0; m < fam->count; m++) {
        uint32_t g = fam_pool(world, fam, m)->group;
        base[m] = g != 0 ? world->groups[g].n : 0u;
    }
    /* The driving pool: the entities whose every other row is past its prefix first, in the
     * order they are in (their rows in the other pools are free to move). */
    uint32_t k = 0;
    for (uint32_t r = 0; r < drive->count; r++) {
        uint32_t idx = drive->dense[r];
        bool in = true;
        for (uint32_t m = 0; m < fam->count && in; m++) {
            if (m != d) {
                uint32_t row = weft__pool_row(fam_pool(world, fam, m), idx);
                in = row != WEFT__ROW_NONE && row >= base[m];
            }
        }
        if (in) {
            weft__pool_swap_rows(drive, k++, r); /* rows [k, r) were rejected: none is skipped */
        }
    }
    /* Every other pool: rows base + i follow the driving rows i < k. Rows [base, base + i)
     * hold the first i of them, so the next one's row is at or past base + i. */
    for (uint32_t m = 0; m < fam->count; m++) {
        if (m == d) {
            continue;
        }
        weft__pool_t *pool = fam_pool(world, fam, m);
        for (uint32_t i = 0; i < k; i++) {
            weft__pool_swap_rows(pool, base[m] + i, weft__pool_row(pool, drive->dense[i]));
        }
    }
    fam->drive = drive->id;
    fam->packed = k;
    fam->layout = fam_layout(world, fam);
    fam->seen = fam->layout; /* its own moves are no churn */
    fam->lost = 0;
    fam->repacks++;
    return k;
}

void weft__auto_frame(weft_world_t *world) {
    for (uint32_t f = 0; f < world->auto_family_count; f++) {
        weft__auto_family_t *fam = &world->auto_families[f];
        uint64_t now = fam_layout(world, fam);
        /* Writes since the last re-pack and since the previous frame (all of them when there
         * was none, or when a snapshot restore rewound the counts). */
        uint64_t writes = fam->layout != 0 && now >= fam->layout ? now - fam->layout : now;
        uint64_t recent = fam->seen != 0 && now >= fam->seen ? now - fam->seen : now;
        fam->seen = now;
        uint32_t rows = UINT32_MAX, d = fam_drive(world, fam);
        for (uint32_t m = 0; m < fam->count; m++) {
            uint32_t c = fam_pool(world, fam, m)->count;
            rows = c < rows ? c : rows;
        }
        if (writes == 0 || d == fam->count || rows == 0) {
            continue; /* as packed as at the last re-pack, or nothing to pack */
        }
        /* Rent: a moved row takes its window of the join (WEFT__ITER_BLOCK driving rows) out of
         * the column batches; with writes falling on windows at random, a share
         * 1 - exp(-writes / windows) of them is out after `writes`, each frame. */
        double windows = (double)((rows + WEFT__ITER_BLOCK - 1u) / WEFT__ITER_BLOCK);
        double out = 1.0 - exp(-(double)writes / windows);
        double frame_rent = (double)rows * out * LOST_NS_PER_ROW * fam->systems;
        fam->lost += (uint64_t)frame_rent;
        /* Buy: a pass over the driving rows and a move per write in each other pool. */
        uint64_t moved = writes < rows ? writes : rows;
        uint64_t cost = (uint64_t)fam_pool(world, fam, d)->count * SCAN_NS_PER_ROW +
                        moved * MOVE_NS_PER_ROW * (fam->count - 1u);
        if (fam->lost < cost) {
            continue;
        }
        /* ... but only when the pack pays back: at the last frame's rate of writes a share
         * q = exp(-recent / windows) of its windows survives each frame, so over the frames to
         * come it saves frame_rent x (1 + q + q^2 + ...) = frame_rent / (1 - q). Churn that
         * breaks most windows within a frame never buys a re-pack. */
        double keep = exp(-(double)recent / windows);
        if (keep >= 1.0 || frame_rent / (1.0 - keep) >= (double)cost) {
            (void)weft__auto_repack(world, fam);
        }
    }
}

uint32_t weft__auto_packed(const weft_world_t *world, const weft__pool_t *drive,
                           const weft__pool_t *const *pools, uint32_t count) {
    for (uint32_t f = 0; f < world->auto_family_count; f++) {
        const weft__auto_family_t *fam = &world->auto_families[f];
        if (fam->packed == 0 || fam->drive != drive->id) {
            continue;
        }
        bool all = true;
        for (uint32_t t = 0; t < count && all; t++) {
            all = weft__ids_subset(&pools[t]->id, 1, fam->ids, fam->count);
        }
        /* Layout counts only grow, so an unchanged sum means no row of the family moved. */
        return all && fam_layout(world, fam) == fam->layout ? fam->packed : 0u;
    }
    return 0;
}
