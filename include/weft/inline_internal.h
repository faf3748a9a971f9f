/* weft/inline_internal.h: NOT API. The few internal structures the public headers need so
 * that the hot iteration accessor, weft_iter_get() (weft/query.h), can be inlined into system
 * bodies; everything here may change in any release. Measured reason (weft_bench --suite
 * core): a term read through an out-of-line call instead of this inline path cost the sparse
 * lookup case more than the lookup itself. Included by weft/query.h; never include it
 * directly. */
#ifndef WEFT_INLINE_INTERNAL_H
#define WEFT_INLINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "weft/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* WEFT_QUERY_MAX_TERMS and WEFT_QUERY_MAX_EXCLUDES (weft/query.h checks they agree). */
#define WEFT__ITER_MAX_TERMS 16
#define WEFT__ITER_MAX_EXCLUDES 8
#define WEFT__ITER_RING 64   /* blocks a change-filtered iterator scans ahead */
#define WEFT__ITER_BLOCK 128 /* entries of a resolved block batch (src/core/query.c) */

/* Private per-term lookup data of an iterator. */
typedef struct weft__iter_term {
    unsigned char *data;                /* pool data base */
    const uint32_t *rows;               /* block batch: pool row of each entry, else NULL */
    const unsigned char *const *sparse; /* pool sparse directory */
    size_t size;                        /* component size (0 for tags) */
    uint32_t sparse_wide;               /* pool sparse entry width: 0 narrow (3 B), 1 wide (4 B) */
    uint32_t pages;                     /* directory length (presence of OPTIONAL/OR terms) */
} weft__iter_term_t;

/* Private membership check of an iterator (an include not covered by the driving range, or an
 * exclude). */
typedef struct weft__iter_check {
    const unsigned char *const *sparse; /* pool sparse directory */
    const uint32_t *dense;              /* pool entity indices (alignment test of includes) */
    uint32_t pages;                     /* directory length */
    uint32_t sparse_wide;               /* pool sparse entry width: 0 narrow, 1 wide */
    uint32_t count;                     /* pool rows */
    uint32_t term;                      /* include: its term index; exclude: UINT32_MAX */
    uint32_t follow;      /* include: 1 + an earlier include check whose pool shares a group
                             with this one, 0: none (then rows below `follow_rows` agree) */
    uint32_t follow_rows; /* the shared group's aligned rows */
} weft__iter_check_t;

#define WEFT__SPARSE_SHIFT 10u /* 1024 entries per page */
#define WEFT__SPARSE_MASK ((1u << WEFT__SPARSE_SHIFT) - 1u)

/* Private: decode sparse entry i of a page. Entries hold row + 1 (0: absent, which decodes to
 * 0xFFFFFFFF, the "no row" value) in 3 bytes while a pool stays under 2^24 - 1 rows, in 4
 * bytes after it widens (src/core/pool.h). A narrow entry is read the way it is written, a 16-bit
 * and an 8-bit access, so a page needs no padding and no byte-order assumption (a masked
 * 32-bit load measured the same). */
static inline uint32_t weft__sparse_get(const unsigned char *page, uint32_t i, uint32_t wide) {
    if (wide) {
        uint32_t v;
        memcpy(&v, page + (size_t)i * 4u, sizeof v);
        return v - 1u;
    }
    uint16_t lo;
    memcpy(&lo, page + (size_t)i * 3u, sizeof lo);
    return ((uint32_t)lo | (uint32_t)page[(size_t)i * 3u + 2u] << 16) - 1u;
}

/* Private state of an iterator over a query that names module-owned components through
 * their row views (src/core/query_view.c); unused otherwise. */
typedef struct weft__iter_view {
    const uint64_t *ents; /* the driving view's row -> entity handle (0: a hole);
                             NULL: a pool drives (drive_dense) */
    uint32_t holes;       /* the driving view may hold holes */
    uint32_t slot;        /* change slot of the stamps of tracked write terms */
    uint32_t covered;     /* bit t: term t is read at the driving row */
    /* check k's pool; NULL: a lookup in the view of term checks[k].term */
    const void *check_pool[WEFT__ITER_MAX_TERMS + WEFT__ITER_MAX_EXCLUDES];
    const uint32_t *const *map[WEFT__ITER_MAX_TERMS]; /* per view term: index -> row pages */
    uint32_t map_pages[WEFT__ITER_MAX_TERMS];
    uint32_t map_shift[WEFT__ITER_MAX_TERMS];
    unsigned char *marks[WEFT__ITER_MAX_TERMS]; /* per view term: row marks, NULL: pool term */
    unsigned char mark_bits[WEFT__ITER_MAX_TERMS];
    const void *pools[WEFT__ITER_MAX_TERMS]; /* per term: its pool, NULL for a view term */
} weft__iter_view_t;

/* The private state of weft_iter_t (weft/query.h), filled by weft_query_iter and advanced
 * by weft_iter_next (src/core/query.c). */
typedef struct weft__iter_private {
    const struct weft_world *world; /* the query's world */
    const uint32_t *drive_dense;    /* driving entity indices */
    uint32_t row;                   /* next driving row to examine */
    uint32_t end;                   /* end of the chunk's driving rows */
    uint32_t check_count;           /* entries in checks */
    uint32_t contiguous;            /* bit t: term t is a column of the driving range */
    const void *query;              /* the weft_query_t iterated (change ticks of its pools) */
    uint32_t since;                 /* change filters pass rows newer than this tick */
    uint32_t tick;                  /* tick stamped on the rows of stamped terms */
    uint32_t filtered;              /* bit t: term t has a change filter to test */
    uint32_t stamped;               /* bit t: term t writes a pool with change ticks (or
                                       marks a view's rows) */
    uint32_t view;                  /* nonzero: a view query (weft__iter_view_t below) */
    uint32_t lead;                  /* 1 + the term whose ticks alone decide, 0: none */
    uint32_t loose;                 /* bit t: term t is OPTIONAL or OR */
    uint32_t or_count;              /* entries in or_groups */
    uint32_t or_groups[WEFT__ITER_MAX_TERMS / 2]; /* per OR group: its terms' bits */
    uint32_t scan;                                /* next 16-row block to scan for changes */
    uint32_t ring_at;                             /* next entry of ring_block/ring_mask */
    uint32_t ring_len;                            /* entries in ring_block/ring_mask */
    uint32_t ring_block[WEFT__ITER_RING];         /* blocks with changed rows, ascending */
    uint16_t ring_mask[WEFT__ITER_RING];          /* their changed rows not yet handed out */
    uint32_t blocked;                             /* the current batch is a resolved block */
    void *cache;             /* the query's join cache (src/core/join_cache.h), NULL: none */
    uint64_t cache_epoch;    /* its epoch for this iterator */
    const void *cache_drive; /* the plan's driving pool, NULL: the cache does not apply */
    uint32_t cache_group;    /* the plan's driving group */
    uint32_t cache_rows;     /* driving rows of the plan (the windows cover them) */
    uint32_t misaligned;     /* the last block's include rows did not run in step */
    uint32_t block_ents[WEFT__ITER_BLOCK];                       /* a block's entity indices */
    uint32_t block_drive[WEFT__ITER_BLOCK];                      /* a block's driving rows */
    uint32_t block_rows[WEFT__ITER_MAX_TERMS][WEFT__ITER_BLOCK]; /* per include check */
    weft__iter_term_t terms[WEFT__ITER_MAX_TERMS];
    weft__iter_check_t checks[WEFT__ITER_MAX_TERMS + WEFT__ITER_MAX_EXCLUDES];
    weft__iter_view_t views;
    /* Last, so the fields above keep the offsets the hot paths were measured with. */
    uint32_t merge;                          /* 1: a merge-join iterator (src/core/merge_join.c) */
    uint32_t merge_at[WEFT__ITER_MAX_TERMS]; /* its cursor in each include check's pool */
    uint32_t listed;   /* 1 + the next entry of the lead pool's write list, 0: not served from it */
    uint32_t list_end; /* the list's length when the iteration took it */
    uint32_t packed;   /* driving rows [0, packed) run in step with every include check: a
                          packed family untouched since its re-pack (src/core/auto_group.h) */
} weft__iter_private_t;

#ifdef __cplusplus
}
#endif
#endif /* WEFT_INLINE_INTERNAL_H */
