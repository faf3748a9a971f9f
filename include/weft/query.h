/* weft/query.h: queries — include/exclude component sets iterated in fixed chunks.
 *
 * A query is a description (include terms with read or write access, exclude components)
 * bound to a world. Iteration chooses a "driving" row range: the aligned rows [0, n) of a
 * group when some group's members are all among the include terms (the largest such group),
 * else the rows of the smallest included pool (ties: the earliest term). The choice depends
 * only on the data, so every caller that starts an iteration while no structural change runs
 * gets the same driving range.
 *
 * Chunks: chunk k covers driving rows [k * chunk_rows, (k + 1) * chunk_rows), so boundaries
 * depend only on chunk_rows and the data, never on worker counts. Inside a chunk the iterator
 * hands out batches: runs of consecutive driving rows that match every term. A batch gives its
 * entity indices and, per term, either a contiguous column or NULL, in which case
 * weft_iter_get() looks the row up through the pool's sparse index. Columns are contiguous
 * for the driving pool, for every group member when a group drives, and for any other
 * included pool whose rows happen to line up with the driving rows over the batch (pools
 * filled in the same order: a "1-1 mapping" of rows, detected at run time; a run of at
 * least 16 such rows becomes its own batch). User code never handles raw pool rows.
 *
 * Thread: create/destroy are main-only. weft_query_iter/weft_iter_next may run concurrently
 * from any number of jobs (each with its own weft_iter_t) while no structural change runs;
 * they never mutate the query or the world. In debug builds, weft_query_iter checks every term
 * against the access declared by the system running on the calling thread. */
#ifndef WEFT_QUERY_H
#define WEFT_QUERY_H

#include <string.h>

#include "weft/component.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_query weft_query_t; /* opaque; owned by its creator */

#define WEFT_QUERY_MAX_TERMS 8    /* include terms per query */
#define WEFT_QUERY_MAX_EXCLUDES 8 /* exclude components per query */

typedef enum weft_access {
    WEFT_ACCESS_READ = 0,  /* default: the term's data is only read */
    WEFT_ACCESS_WRITE = 1, /* the term's data is written (implies read) */
    WEFT_ACCESS_COUNT = 2
} weft_access_t;

typedef struct weft_query_term {
    weft_component_t component; /* required */
    weft_access_t access;       /* 0: read */
} weft_query_term_t;

typedef struct weft_query_desc {
    weft_query_term_t terms[WEFT_QUERY_MAX_TERMS];     /* include terms, distinct components */
    uint32_t term_count;                               /* required: 1 .. WEFT_QUERY_MAX_TERMS */
    weft_component_t exclude[WEFT_QUERY_MAX_EXCLUDES]; /* entities with any of these are skipped */
    uint32_t exclude_count;                            /* 0: no excludes */
    uint32_t _canary;                                  /* must stay 0 */
} weft_query_desc_t;

/* Create a query over `world`. The desc is copied. Errors: WEFT_EINVAL (bad desc, unknown or
 * repeated components, a component both included and excluded), WEFT_ENOMEM.
 * Thread: main. The caller owns *out (weft_query_destroy, or the world frees it at destroy). */
WEFT_API weft_result_t weft_query_create(weft_world_t *world, const weft_query_desc_t *desc,
                                         weft_query_t **out);

/* Free a query. NULL is ignored. Thread: main. */
WEFT_API void weft_query_destroy(weft_query_t *query);

/* The query's desc as created. Thread: any. */
WEFT_API const weft_query_desc_t *weft_query_desc(const weft_query_t *query);

/* Number of driving rows (an upper bound on matches; the input to chunking). Thread: jobs. */
WEFT_API uint32_t weft_query_rows(const weft_query_t *query);

/* Chunks of chunk_rows driving rows (0 when there are no rows). chunk_rows 0 means one chunk
 * holding everything. Thread: jobs. */
WEFT_API uint32_t weft_query_chunk_count(const weft_query_t *query, uint32_t chunk_rows);

/* Number of entities matching the query (walks every row). Thread: jobs. */
WEFT_API uint32_t weft_query_count(const weft_query_t *query);

/* ---- iteration ------------------------------------------------------------- >>iter */

/* Private per-term lookup data of an iterator. */
typedef struct weft__iter_term {
    unsigned char *data;                /* pool data base */
    const unsigned char *const *sparse; /* pool sparse directory */
    size_t size;                        /* component size (0 for tags) */
    uint32_t sparse_wide;               /* pool sparse entry width: 0 narrow (3 B), 1 wide (4 B) */
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

/* An iterator over one chunk. Caller-owned storage (e.g. on the job's stack); fields below
 * "private" are not part of the API. */
typedef struct weft_iter {
    uint32_t count;                      /* entries in the current batch */
    const uint32_t *entities;            /* entity indices of the batch (count) */
    void *columns[WEFT_QUERY_MAX_TERMS]; /* term t: contiguous data of the batch, or NULL */
    uint32_t term_count;                 /* include terms */
    /* private */
    const weft_world_t *world;   /* the query's world */
    const uint32_t *drive_dense; /* driving entity indices */
    uint32_t row;                /* next driving row to examine */
    uint32_t end;                /* end of the chunk's driving rows */
    uint32_t check_count;        /* entries in checks */
    uint32_t contiguous;         /* bit t: term t is a column of the driving range */
    weft__iter_term_t terms[WEFT_QUERY_MAX_TERMS];
    weft__iter_check_t checks[WEFT_QUERY_MAX_TERMS + WEFT_QUERY_MAX_EXCLUDES];
} weft_iter_t;

/* Start iterating chunk `chunk` of `chunk_rows` rows (0: one chunk with everything). A chunk
 * index past the end gives an iterator with no batches. Errors: WEFT_EINVAL (NULL query/it).
 * Thread: jobs (any number concurrently, each with its own iterator). */
WEFT_API weft_result_t weft_query_iter(const weft_query_t *query, uint32_t chunk_rows,
                                       uint32_t chunk, weft_iter_t *it);

/* Advance to the next batch of the chunk; false when the chunk is exhausted (count is then 0).
 * Batches are in driving-row order. */
WEFT_API bool weft_iter_next(weft_iter_t *it);

/* The handle of batch entry i. */
WEFT_API weft_entity_t weft_iter_entity(const weft_iter_t *it, uint32_t i);

/* Term t's data for batch entry i (never NULL; for tags a dummy non-NULL pointer). Write
 * through it only for WEFT_ACCESS_WRITE terms. */
static inline void *weft_iter_get(const weft_iter_t *it, uint32_t t, uint32_t i) {
    const weft__iter_term_t *term = &it->terms[t];
    if (it->columns[t]) {
        return (unsigned char *)it->columns[t] + (size_t)i * term->size;
    }
    uint32_t idx = it->entities[i];
    uint32_t row = weft__sparse_get(term->sparse[idx >> WEFT__SPARSE_SHIFT],
                                    idx & WEFT__SPARSE_MASK, term->sparse_wide);
    return term->data + (size_t)row * term->size;
}

#ifdef __cplusplus
}
#endif
#endif /* WEFT_QUERY_H */
