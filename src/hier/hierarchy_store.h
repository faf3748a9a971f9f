/* hierarchy_store.h: the ordered hierarchy store — rows of nodes kept so that every parent
 * precedes all of its children, with the transform data beside them (private to src/).
 *
 * DESIGN
 * Layout. One index space, the row. Every per-node array (entity, structure links, local
 * transform, parent link, world matrix) is indexed by row, so the update is one forward walk
 * over parallel arrays: world[r] is computed from local[r], link[r] and world[parent[r]].
 * Children of a node form an intrusive doubly linked list (first_child / next_sib / prev_sib),
 * used only by structural operations, never by the update.
 *
 * Invariant (ORDER): for every live row r with a parent, parent[r] < r. It holds after every
 * store call returns (checked by weft__hstore_check), not lazily, so a sequential pass may run
 * at any time. Dead rows ("holes", entity 0) may sit anywhere; they are roots with identity data
 * so the pass may compute them blindly without a branch.
 *
 * Attach(c, p) adds one edge p -> c. Every other edge is unchanged, so ORDER can only break
 * through that edge: when p < c (the common case: parents are usually created first) attach is
 * O(1). When p > c — the classic counter-example is attach(E4,E3); attach(E2,E1);
 * attach(E3,E2) — the subtree of c is moved to the end of the array in breadth-first order
 * (parents first, holes left behind): O(subtree), never O(n). Detach turns a node into a root
 * in place: a root satisfies ORDER anywhere. Removing a node leaves a hole.
 *
 * Levels. The level-parallel pass needs nodes grouped by depth. A level sort (O(n), stable
 * counting sort by depth, depths computed by one forward pass thanks to ORDER) rewrites the
 * arrays level by level and drops holes; level_start[] then delimits each level. Any
 * structural change clears levels_valid. Holes are also dropped by an order-keeping
 * compaction once they exceed a quarter of the rows, so they never dominate the pass.
 *
 * Change tracking. lmat[r] caches r's local matrix with its bind folded in (bind * compose
 * (local), or compose(local) when the bind is bitwise the identity), so recomputing a world
 * matrix is one multiply, parent_world * lmat, in the documented operation order. flags[r]
 * carries DIRTY (r's world must be recomputed), LOCAL (lmat must be recomposed first: r's
 * local, parent or bind changed) and PLAIN. Every call that changes a row's inputs sets
 * DIRTY | LOCAL; the update recomputes a row when it or its parent reads DIRTY and sets the
 * row's bit, so changes flow down the whole subtree in one forward pass, and clears every
 * bit at its end. Rows that were not recomputed hold what a recomputation would give,
 * because their inputs are unchanged. Holes are never DIRTY.
 *
 * Ownership and threads: the store owns every array, allocated through its allocator. All
 * structural calls are single-threaded (the world's main thread, between frames); the update
 * pass writes world[] only, and rows of one level are independent, so a level may be split
 * across workers. */
#ifndef WEFT_SRC_HIERARCHY_STORE_H
#define WEFT_SRC_HIERARCHY_STORE_H

#include "weft/base.h"
#include "weft/jobs.h"
#include "weft/math.h"

/* The store only needs the handle's representation (index in the low 32 bits, generation
 * above); hierarchy.c asserts it matches weft_entity_t. */
typedef uint64_t weft__hentity_t;

#define WEFT__HROW_NONE UINT32_MAX /* "no row": no parent, no child, no sibling */

/* Parent link as stored (same layout as weft_parent_link_t in weft/hierarchy.h). */
typedef struct weft__hlink {
    weft__hentity_t parent;   /* parent entity, 0 for roots */
    weft_mat4_t inverse_bind; /* inverse of the parent's world matrix at attach time */
} weft__hlink_t;

/* Per-row flags. DIRTY: the row's world matrix must be recomputed (set by the structural
 * calls and weft_hier_local; the update also sets it on every row it
 * recomputes, then clears all at its end). LOCAL: the cached local matrix must be recomposed
 * too. PLAIN: the inverse bind is bitwise the identity (always for roots and holes), so the
 * cached local matrix is compose(local) without a bind multiply. */
#define WEFT__HFLAG_DIRTY 1u
#define WEFT__HFLAG_PLAIN 2u
#define WEFT__HFLAG_LOCAL \
    4u /* lmat must be recomposed (local, bind or parenthood changed);
                                always set together with DIRTY */
#define WEFT__HFLAG_CHANGED (WEFT__HFLAG_DIRTY | WEFT__HFLAG_LOCAL)

/* Paged map from entity index to row (pages of 4096 entries, allocated on first use); the
 * module's row views hand it to queries as their entity -> row table (weft/module.h). */
#define WEFT__HMAP_PAGE_BITS 12u
typedef struct weft__hmap {
    uint32_t **pages;    /* page table; NULL page: every entry absent */
    uint32_t page_count; /* entries in pages */
} weft__hmap_t;

/* The per-row arrays, all indexed by row and sized to the store's capacity. */
typedef struct weft__hrows {
    weft__hentity_t *ent;    /* row -> entity; 0: hole */
    uint32_t *parent;        /* row -> parent row or NONE */
    uint32_t *first_child;   /* row -> first child row or NONE */
    uint32_t *next_sib;      /* row -> next sibling row or NONE */
    uint32_t *prev_sib;      /* row -> previous sibling row or NONE */
    weft_transform_t *local; /* row -> local transform */
    weft__hlink_t *link;     /* row -> parent link (inverse bind) */
    weft_mat4_t *world;      /* row -> world matrix (written by the update) */
    weft_mat4_t *lmat;       /* row -> compose(local) for roots and PLAIN rows, else
                                inverse_bind * compose(local); valid unless LOCAL is set */
    uint8_t *flags;          /* row -> WEFT__HFLAG_* bits */
    uint32_t *scratch;       /* temporary space for moves and sorts (no meaning per row) */
} weft__hrows_t;

typedef struct weft__hstore {
    weft_allocator_t alloc;   /* resolved: both functions set */
    const weft_logger_t *log; /* where failures are reported (NULL: stderr in debug builds);
                                 calls taking a `log` argument use it when it is non-NULL */

    uint32_t count;    /* rows in use (live + holes) */
    uint32_t capacity; /* rows allocated in every array */
    uint32_t live;     /* live rows */
    uint32_t holes;    /* dead rows below count */

    weft__hrows_t rows; /* the per-row arrays, `capacity` rows each */

    weft__hmap_t map;          /* entity index -> row */
    weft__hentity_t *removed;  /* entities of the last subtree removal (parents first) */
    uint32_t removed_capacity; /* entries allocated in removed */

    bool levels_valid;     /* rows [0, count) are cut into levels by level_start and every
                              row's parent lies in an earlier level (holes and roots may sit
                              in any level); kept across detach, remove and compatible
                              attaches, cleared by add and by subtree moves */
    uint32_t level_count;  /* number of depths present (when levels_valid) */
    uint32_t *level_start; /* level_count + 1 row offsets (when levels_valid) */
    uint32_t level_capacity;
    uint32_t max_level_width; /* widest level (when levels_valid) */

    /* Level index: the rows grouped by depth without moving any data, for level passes run
     * inside a frame, where other systems may be reading the arrays and the map. */
    bool index_valid;        /* no structural change since the index was built */
    uint32_t *index_rows;    /* live rows grouped by depth, ascending within a level */
    uint32_t index_capacity; /* entries allocated in index_rows */
    uint32_t *index_start;   /* index_levels + 1 offsets into index_rows */
    uint32_t index_start_capacity;
    uint32_t index_levels; /* depth levels in the index */
    /* Parent ranges per block of WEFT__HIER_BLOCK rows, for the sequential pass to skip
     * blocks none of whose rows or parents changed (rebuilt after structural changes). */
    bool blocks_valid;       /* no structural change since the ranges were built */
    uint32_t *block_lo;      /* smallest parent row of the block's rows (NONE: all roots) */
    uint32_t *block_hi;      /* largest parent row of the block's rows */
    uint32_t block_capacity; /* entries allocated in block_lo and block_hi */
    /* Subtree marks for the sparse sequential pass (hierarchy_update.c): one bit per row,
     * all zero between updates. */
    uint64_t *mark;      /* mark_words words (NULL until the first sparse pass) */
    uint32_t mark_words; /* words allocated in mark */
    /* Parent bitset for the sparse pass, so that marking skips childless rows' lists: for
     * rows [0, kids_rows), bit r is set when row r has a child (it may stay set after the
     * last child left); rows from kids_rows on count as parents. Built by a sparse pass,
     * kept by attach (which sets the new parent's bit), dropped by row rewrites (level
     * sort, compaction: kids_rows = 0). */
    uint64_t *kids;      /* kids_words words (NULL until the first sparse pass) */
    uint32_t kids_words; /* words allocated in kids */
    uint32_t kids_rows;  /* rows the bitset describes (0: none) */
    /* Child spans for the sparse pass's range marking (hierarchy_update.c): when the layout
     * is NESTED (the parents of the rows that have one never decrease with the row, and the
     * first row with a parent after a root or hole has a parent at or after it), the children
     * of a run of rows form one run of rows, spans[p] (NONE, NONE when p has none), and
     * a changed subtree is marked one run per depth. Built on the second sparse pass after a
     * structural change (so a structure changed every frame never pays the O(n) build). */
    uint8_t spans_state;    /* 0: stale, 1: stale after one sparse pass, 2: built */
    bool nested;            /* NESTED held when the spans were built (spans filled) */
    uint32_t (*spans)[2];   /* row -> {lowest, highest} child row (NONE, NONE: childless) */
    uint32_t span_capacity; /* entries allocated in spans */
    bool touched_all;       /* weft__hstore_touch_all since the last update: the next one
                            recomputes every live row, whatever their DIRTY bits say */
    bool auto_known;        /* auto_choice and widest hold for the current structure */
    int auto_choice;        /* the weft__hpass_t the automatic mode picked */
    uint32_t widest;        /* rows of the widest level (when auto_known; UINT32_MAX when
                               the depth histogram could not be allocated) */

    uint64_t moved_rows; /* statistics: rows moved by attach (subtree moves) */
    uint32_t recomputed; /* statistics: rows the last update recomputed */
    uint64_t sorts;      /* statistics: level sorts done */
} weft__hstore_t;

/* ---- lifetime ----------------------------------------------------------- >>hstore_life */

/* Init an empty store using `alloc` (zero functions: malloc/free) that reports failures to
 * `log` (the owning world's logger; NULL: stderr in debug builds). Never fails. */
void weft__hstore_init(weft__hstore_t *s, const weft_allocator_t *alloc, const weft_logger_t *log);
/* Free every array. The store may be init-ed again. */
void weft__hstore_fini(weft__hstore_t *s);

/* ---- queries ------------------------------------------------------------ >>hstore_query */

/* Row of entity e, or NONE when e is not a node (stale handles are not nodes). */
uint32_t weft__hstore_row(const weft__hstore_t *s, weft__hentity_t e);

/* Depth of row r (0 for roots), by walking up: O(depth). */
uint32_t weft__hstore_depth(const weft__hstore_t *s, uint32_t r);

/* True when row `a` is `r` itself or one of its ancestors. O(depth of r). */
bool weft__hstore_is_ancestor(const weft__hstore_t *s, uint32_t a, uint32_t r);

/* Check ORDER, the sibling lists, the map and the counters: returns a static description of
 * the first violation, or NULL when all hold. O(n). For tests and expensive asserts. */
const char *weft__hstore_check(const weft__hstore_t *s);

/* Fold every node into h with `mix` (weft_world_hash's mixing), in entity index order, so the
 * result depends on the nodes' data only, never on row layout or history: per node its
 * entity, parent entity, local transform, inverse bind and world matrix. O(n + map pages). */
uint64_t weft__hstore_hash(const weft__hstore_t *s, uint64_t h,
                           uint64_t (*mix)(uint64_t h, const void *p, size_t n));

/* ---- structure ---------------------------------------------------------- >>hstore_ops */

/* Add e as a root with `local`, world = compose(local). Errors: WEFT_EEXIST, WEFT_ENOMEM.
 * `e` must be nonzero. */
weft_result_t weft__hstore_add(weft__hstore_t *s, weft__hentity_t e, const weft_transform_t *local);

/* Attach child under parent (see weft_hier_attach for the contract). All checks happen
 * before any change: on error nothing changed. Errors: WEFT_ENOENT (not a node),
 * WEFT_ECYCLE (parent is child or a descendant of it), WEFT_EINVAL (singular parent world),
 * WEFT_ENOMEM. `log` names the failure. */
weft_result_t weft__hstore_attach(weft__hstore_t *s, weft__hentity_t child, weft__hentity_t parent,
                                  const weft_logger_t *log);

/* How attach treats a child: keep its world matrix (bake, then bind to the parent's inverse
 * world) or keep its local transform (identity bind: it moves with the composition). */
typedef enum weft__hattach {
    WEFT__HATTACH_KEEP_WORLD = 0,
    WEFT__HATTACH_KEEP_LOCAL = 1,
} weft__hattach_t;

/* Attach with an explicit mode (weft__hstore_attach is KEEP_WORLD). Same errors, except that
 * KEEP_LOCAL never returns WEFT_EINVAL (no inverse is taken). */
weft_result_t weft__hstore_attach_mode(weft__hstore_t *s, weft__hentity_t child,
                                       weft__hentity_t parent, weft__hattach_t mode,
                                       const weft_logger_t *log);

/* Overwrite node row r's data wholesale (snapshot restore, archive load): local transform,
 * inverse bind and world matrix; the flags follow (PLAIN from the bind, DIRTY and LOCAL). The
 * structure (parent rows) is not touched: the link's entity is the caller's to keep equal. */
void weft__hstore_set_data(weft__hstore_t *s, uint32_t r, const weft_transform_t *local,
                           const weft_mat4_t *inverse_bind, const weft_mat4_t *world);

/* Make the next update recompute every live row's world matrix (from the cached local
 * matrices, which stay valid). O(1): it sets touched_all, and the update then walks every
 * row, or marks them all with weft__hstore_mark_all first when holes must be skipped. */
void weft__hstore_touch_all(weft__hstore_t *s);

/* Set DIRTY on every live row. O(rows). */
void weft__hstore_mark_all(weft__hstore_t *s);

/* Detach a child: bake world into local, unlink, stays in place. A root: no change, WEFT_OK.
 * Errors: WEFT_ENOENT. */
weft_result_t weft__hstore_detach(weft__hstore_t *s, weft__hentity_t e, const weft_logger_t *log);

/* Remove e from the store. subtree == false: its children are detached (baked) first.
 * subtree == true: e and all its descendants are removed; if `removed` is non-NULL it gets
 * their entities (parents first) and *removed_count their number — the array is owned by the
 * store's scratch space and valid until the next store call. Errors: WEFT_ENOENT. */
weft_result_t weft__hstore_remove(weft__hstore_t *s, weft__hentity_t e, bool subtree,
                                  const weft__hentity_t **removed, uint32_t *removed_count,
                                  const weft_logger_t *log);

/* List e and all its descendants, parents first, without changing anything: *out points
 * into the store's buffer, valid until the next store call that lists or removes a subtree
 * (a plain remove does not touch it). Errors: WEFT_ENOENT, WEFT_ENOMEM. */
weft_result_t weft__hstore_subtree(weft__hstore_t *s, weft__hentity_t e,
                                   const weft__hentity_t **out, uint32_t *count,
                                   const weft_logger_t *log);

/* Rewrite rows grouped by depth (stable within a level), dropping holes; sets levels_valid.
 * No-op when already valid. Errors: WEFT_ENOMEM (store unchanged). */
weft_result_t weft__hstore_level_sort(weft__hstore_t *s);

/* Drop holes keeping order. Errors: WEFT_ENOMEM (store unchanged). */
weft_result_t weft__hstore_compact(weft__hstore_t *s);

/* ---- shared by the store's files ---------------------------------------- >>hstore_shared */

void *weft__hstore_alloc(const weft__hstore_t *s, size_t size);
void weft__hstore_free(const weft__hstore_t *s, void *ptr, size_t size);
weft_result_t weft__hstore_alloc_rows(const weft__hstore_t *s, weft__hrows_t *rows, uint32_t cap);
void weft__hstore_free_rows(const weft__hstore_t *s, weft__hrows_t *rows, uint32_t cap);
void weft__hstore_map_set(weft__hstore_t *s, weft__hentity_t e, uint32_t row);

/* ---- update ------------------------------------------------------------- >>hstore_update */

typedef enum weft__hpass {
    WEFT__HPASS_SEQUENTIAL = 1, /* one forward walk over every row */
    WEFT__HPASS_LEVELS = 2,     /* level by level; wide levels split with weft_parallel_for */
} weft__hpass_t;

/* Rows per block of the update (see hierarchy_update.c). */
#define WEFT__HIER_BLOCK 1024u

/* Rows per parallel-for range in the level pass; levels narrower than 2 grains run inline. */
#define WEFT__HIER_GRAIN 4096u

/* Recompute the world matrix of every row that is DIRTY or has a recomputed parent (rows
 * whose inputs did not change keep their bits, which equal a recomputation's), then clear
 * DIRTY everywhere; nothing to do when no row is DIRTY. SEQUENTIAL needs nothing. LEVELS
 * with `regroup` level-sorts the rows first when needed (moving data: main thread, no
 * concurrent readers); without it, it walks a level index of row numbers instead (built when stale; data never moves, so it
 * is safe inside a frame). Wide levels use `jobs` (NULL: inline). On WEFT_ENOMEM nothing was
 * computed. The results are bit-identical in every mode and at every worker count. */
weft_result_t weft__hstore_update(weft__hstore_t *s, weft__hpass_t pass, bool regroup,
                                  weft_jobs_t *jobs);

/* Depth of every row into the scratch array (holes: NONE); returns max depth + 1. */
uint32_t weft__hstore_depths(weft__hstore_t *s);

/* The pass the automatic mode picks for the store's current shape: LEVELS when its widest
 * level spans at least 2 grains and it holds at least 16 grains of rows, else SEQUENTIAL.
 * Independent of the worker count so the layout never depends on it. May compute depths
 * (O(n) walk using the scratch array) when levels are not valid. */
weft__hpass_t weft__hstore_auto_pass(weft__hstore_t *s);

/* The pass that serves a request for `requested`: LEVELS only when some level spans at least
 * 2 grains (the level pass splits nothing narrower), else SEQUENTIAL, which computes the same
 * bits in the rows' current order without regrouping them: a level order helps only a pass
 * that splits levels, and slows a forward walk whose parents are then a level back instead
 * of a row back (the floor's loop over 1,000 chains of 1,000 in level order against chain
 * order: 1.27-1.38x, medians of 10-12 runs in six sets of the whole bench hierarchy suite,
 * deep_floor_level_order_vs_floor; 1.04-1.21 with the deep case run alone, where the arrays
 * land elsewhere; 1.26-1.31 in a standalone driver). A level pass never splitting anything,
 * the regroup buys nothing whichever way the placement falls.
 * Shape only, never the worker count. Same cost and caching as weft__hstore_auto_pass. */
weft__hpass_t weft__hstore_pass_for(weft__hstore_t *s, weft__hpass_t requested);

/* The store of the world's hierarchy state (the module's user pointer, non-NULL), for the
 * module callbacks (hierarchy_module.c). Defined in hierarchy.c. Thread: as for the store
 * calls. */
struct weft_hier;
weft__hstore_t *weft__hier_store(struct weft_hier *h);

#endif /* WEFT_SRC_HIERARCHY_STORE_H */
