/* auto_group.h: automatic grouping — nested group chains derived from the registered systems'
 * include terms (private to the build; the setting is in weft/group.h).
 *
 * DESIGN
 * The scheduler hands the planner one component set per registered system (its AND terms)
 * and the planner chooses, pool by pool, the nested chains of automatic groups to make:
 * - Candidates: the distinct sets of 2 .. WEFT_GROUP_MAX_COMPONENTS components whose pools are
 *   one-row-per-entity, not module-owned, not in a user group (the user's groups win) and not
 *   ordered by the user (sort, move_row, remove_ordered: the user's order is kept). The first
 *   WEFT__AUTO_CANDIDATES distinct sets count; later ones are not grouped.
 * - Weight of a candidate: the rows its systems iterate per frame, estimated from counts at
 *   planning time as (systems with exactly that set) x (1 + the smallest count among its
 *   pools): a system over S visits at most that many rows, which is the bound the query
 *   planner drives from; the 1 makes systems registered before any entity exists count by
 *   their number.
 * - A chain is a sequence of candidates each a strict subset of the next; its weight is the
 *   sum of its members'. The heaviest chain is taken (ties: the one ending at the candidate
 *   with fewer components, then the smaller ids), every candidate sharing a component with
 *   it is dropped (a pool serves one chain), and the next heaviest is taken from what is
 *   left, until none is left or the world's 63 groups are used.
 * Why a pool serves one chain: two chains sharing a pool X ({P,V} and {P,H} on P) would need X
 * ordered in segments, one per family, each aligned row by row with its family's other pools.
 * A pool has no spare rows, so when the pools are tight (every V and H entity in its family,
 * every P entity in one of the two) X is exactly [first segment][second segment], and an add
 * that grows the first family must shift the whole second segment by one row of X while the
 * rows of its other pools (H) stay where they are: Omega(rows of the second family) moves for
 * one add. Moving only the boundary row (first to last) keeps the segment contiguous but
 * breaks its alignment with H. Single aligned runs for both families need spare rows in X
 * (reserved rows between segments, which every pool reader would have to skip) or per-family
 * storage of X; aligning a family in several runs instead needs periodic O(rows) re-packing.
 * PACKED FAMILIES. What is built instead of segments: a candidate left out of the chains
 * (heaviest first) that holds no chosen group (whose query a group would drive), has a pool
 * in no chain and shares no pool with a heavier family becomes a packed family ({P,H} beside
 * the {P,V} c {P,V,M} chain; at most WEFT__AUTO_FAMILIES). Its driving pool F is its smallest
 * pool in no group (the pool its queries drive from); the other pools X keep their rows past
 * their chain's prefix (rows >= the outermost group's n; all rows of an ungrouped X) in F's
 * order. No invariant is kept: those rows belong to no group, so any order is valid, and a
 * query finds the family's windows in step and hands out columns (query.c, aligned_run and
 * cached_batch). A re-pack (weft__auto_repack) moves F's rows whose every X row is past its
 * prefix to the front (entities also in a chain go last), then swaps each X's rows
 * base + i to follow F's rows i: O(F's rows) lookups and a swap per misplaced row
 * (prefetching the rows of the swaps a few ahead was measured: no faster from entity order,
 * two to three times slower when in place, so there is none). Adds and removes undo it
 * (each removal moves a pool's last row into the hole and breaks that window; an entity
 * entering a chain moves the first row past the prefix), so re-packs follow a rent-or-buy
 * rule between frames
 * (weft__auto_frame, before a frame's first phase: it moves rows like the group hooks, and
 * never while systems iterate):
 * - rent: each frame, the family is charged the rows its systems probe instead of reading
 *   columns, estimated from the layout writes of its pools since the last re-pack: a moved
 *   row takes its window (WEFT__ITER_BLOCK driving rows) out of the column batches, and with
 *   writes falling on windows at random a share 1 - exp(-writes / windows) of the windows is
 *   out (writes inside a chain's prefix count too: an over-estimate), times the family's
 *   systems, at LOST_NS_PER_ROW a row;
 * - buy: a re-pack costs a pass over F (SCAN_NS_PER_ROW a row) plus a move per write in each
 *   X (MOVE_NS_PER_ROW, at most every row);
 * - re-pack once the rent charged since the last re-pack reaches that cost, and only when
 *   the pack pays back: at the last frame's rate of r writes a share q = exp(-r / windows)
 *   of the windows survives each frame, so it saves about a frame's rent / (1 - q) in all;
 *   churn that breaks most windows within a frame never buys a re-pack.
 * The costs are wall-clock figures measured on the bench's auto_groups world (1M entities,
 * 500k {P,H} rows, 1 worker, load 3-4 on 2 cores): a probed row loses about 3 ns per frame
 * against a column (frame 2.4-3 ms unpacked, 1.1-1.2 ms packed); a re-pack takes 3-4 ms in
 * place (6 ns per F row) and 19-41 ms from entity order (about 40 ns per row moved). So from
 * entity order the family re-packs at about the 16th frame, after churn of a few rows on the
 * next frame, and the rule pays at most about twice the rent a never-packed family would (the
 * usual rent-or-buy bound, as far as the estimate holds). Iterators take a family untouched
 * since its re-pack as in step without comparing its dense arrays (weft__auto_packed).
 * Measured: the settled frame's ratio to the raw loops 0.90-1.04 (7 runs; 2.7-3.1 with the
 * setting off); the first 40 frames, re-pack included, 1.5-1.7 (query/auto_groups_*);
 * callgrind, one frame of a throwaway driver of that world: 21.2M instructions unpacked,
 * 11.8M settled.
 * Families keep their account across re-plans that keep them; dropping the automatic groups
 * (user group, user-ordered pool, snapshot of an older plan) drops the families too, and an
 * ordered operation on a family's pool makes it the user's like a grouped one.
 * Applying compares the result with the automatic groups that exist and, when it differs,
 * drops them and creates the new ones outermost first (O(rows of the pools involved)).
 * Planning reads counts only when it runs: when a system registers or unregisters, when the
 * setting is turned on (again), and before the first frame after the automatic groups were
 * dropped (a user group created, a user-ordered pool, a snapshot of an older plan restored).
 * Iteration order inside the pools changes with the plan and the re-packs; what systems
 * compute per entity does not. */
#ifndef WEFT_SRC_AUTO_GROUP_H
#define WEFT_SRC_AUTO_GROUP_H

#include "world.h"

#define WEFT__AUTO_CANDIDATES 64 /* distinct component sets a plan weighs */

typedef struct weft__auto_set {
    uint32_t ids[WEFT_GROUP_MAX_COMPONENTS]; /* sorted ascending */
    uint32_t count;                          /* components */
    uint32_t systems;                        /* systems whose AND terms are exactly this set */
} weft__auto_set_t;

/* The systems' sets gathered for one plan (zero it to start; lives on the caller's stack). */
typedef struct weft__auto_plan {
    uint32_t count;
    weft__auto_set_t sets[WEFT__AUTO_CANDIDATES];
} weft__auto_plan_t;

/* Count one system whose AND terms are ids[0 .. count) (any order). Sets that cannot be a
 * group (see DESIGN) are ignored. Thread: main. */
void weft__auto_plan_add(const weft_world_t *world, weft__auto_plan_t *plan, const uint32_t *ids,
                         uint32_t count);

/* Choose the chains for `plan` and make the world's automatic groups those (nothing moves when
 * they already are); clears world->auto_stale. Allocates nothing, cannot fail. With the
 * setting off it only drops the automatic groups. Thread: main, no frame running. */
void weft__auto_plan_apply(weft_world_t *world, const weft__auto_plan_t *plan);

/* Between frames: charge each packed family the rows its systems probe instead of reading
 * columns, estimated from the layout writes since its last re-pack, and re-pack the families
 * whose charge reached a re-pack's cost (DESIGN). Moves rows past group prefixes only.
 * Allocates nothing, cannot fail. Thread: main, no iterator running (the scheduler calls it
 * before a frame's first phase). */
void weft__auto_frame(weft_world_t *world);

/* Driving rows [0, n) of `drive` run in step with the rows of every pool in pools[0 .. count)
 * other than drive: n when drive is the driving pool of a packed family that holds all of
 * them and no row of the family moved since its re-pack (O(families x members)), else 0.
 * Thread: any reader, while the main thread makes no structural change. */
uint32_t weft__auto_packed(const weft_world_t *world, const weft__pool_t *drive,
                           const weft__pool_t *const *pools, uint32_t count);

/* Re-pack one family now (DESIGN): its driving pool's rows that are in the family first, each
 * other pool's rows past its group prefix in that order. Returns the rows packed. Thread:
 * main, no iterator running. */
uint32_t weft__auto_repack(weft_world_t *world, weft__auto_family_t *fam);

#endif /* WEFT_SRC_AUTO_GROUP_H */
