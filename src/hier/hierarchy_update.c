/* hierarchy_update.c: the whole-store passes of the hierarchy — the level regrouping (rows
 * sorted by depth), the order-keeping compaction, the level index, the automatic choice of
 * pass, and the two world-matrix passes (one forward walk, or level by level with wide levels
 * split across workers).
 *
 * DESIGN
 * Rewrites (level sort, compaction) compute a map old row -> new row in the store's scratch
 * array, then scatter every per-row array into a freshly allocated set (so a failed
 * allocation changes nothing) and remap the row links through the same map. Depths come from
 * one forward walk, which is valid because every parent precedes its children (ORDER). The
 * level sort is a stable counting sort: within a level, rows keep their previous relative
 * order, so the layout is a pure function of the previous layout and the calls made.
 *
 * Passes: a row's world matrix depends only on its own local transform and inverse bind and on its
 * parent's world matrix, through weft__hier_local_matrix() and one multiply (math_inline.h; this
 * file is built with -ffp-contract=off). A pass visits every row but recomputes only those whose
 * flags (or whose parent's) read DIRTY; see hierarchy_store.h, "Change tracking". In the level pass
 * a range writes the flag bytes of its own rows and reads those of the previous level, finished
 * before parallel-for started this one. The sequential pass is correct because parents precede
 * children; the level pass because every parent lies in an earlier level and a level starts only
 * after the previous one finished (weft_parallel_for returns when all ranges are done, which orders
 * the writes of level d before the reads of level d + 1). Which worker computes a row, and how a
 * level is split, never changes the value computed: results are bit-identical between passes and
 * across worker counts. Inside a frame the data must not move (other systems may read it), so
 * there the level pass walks a level index of row numbers instead of regrouping the rows. */
#include <string.h>

#include "hierarchy_store.h"
#include "jobs/platform/report.h"
#include "math_inline.h"

/* ---- regrouping ------------------------------------------------------------ >>hier_regroup */

static uint32_t remap(const uint32_t *newrow, uint32_t r) {
    return r == WEFT__HROW_NONE ? WEFT__HROW_NONE : newrow[r];
}

/* Rewrite the store so that old row r lands at newrow[r] (NONE: dropped hole), with
 * new_count rows in all. newrow must be s->rows.scratch or outlive the call. */
static weft_result_t permute(weft__hstore_t *s, const uint32_t *newrow, uint32_t new_count) {
    weft__hrows_t to;
    if (weft__hstore_alloc_rows(s, &to, s->capacity) != WEFT_OK) {
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "hierarchy: out of memory rewriting %u rows",
                          s->count);
    }
    const weft__hrows_t *from = &s->rows;
    for (uint32_t r = 0; r < s->count; r++) {
        const uint32_t n = newrow[r];
        if (n == WEFT__HROW_NONE) {
            continue;
        }
        to.ent[n] = from->ent[r];
        to.parent[n] = remap(newrow, from->parent[r]);
        to.first_child[n] = remap(newrow, from->first_child[r]);
        to.next_sib[n] = remap(newrow, from->next_sib[r]);
        to.prev_sib[n] = remap(newrow, from->prev_sib[r]);
        to.local[n] = from->local[r];
        to.link[n] = from->link[r];
        to.world[n] = from->world[r];
        to.flags[n] = from->flags[r];
        to.lmat[n] = from->lmat[r];
        weft__hstore_map_set(s, from->ent[r], n);
    }
    weft__hstore_free_rows(s, &s->rows, s->capacity);
    s->rows = to;
    s->count = new_count;
    s->holes = 0;
    s->index_valid = false;
    s->blocks_valid = false;
    s->spans_state = 0;
    s->kids_rows = 0; /* rows renumbered: the parent bitset is rebuilt when next needed */
    s->auto_known = false;
    return WEFT_OK;
}

/* Depth of every row into scratch (holes: NONE); returns the largest depth + 1 (0: empty). */
uint32_t weft__hstore_depths(weft__hstore_t *s) {
    const weft__hrows_t *w = &s->rows;
    uint32_t *depth = w->scratch;
    uint32_t levels = 0;
    for (uint32_t r = 0; r < s->count; r++) {
        if (w->ent[r] == 0) {
            depth[r] = WEFT__HROW_NONE;
            continue;
        }
        const uint32_t p = w->parent[r];
        const uint32_t d = p == WEFT__HROW_NONE ? 0 : depth[p] + 1; /* p < r: already set */
        depth[r] = d;
        if (d + 1 > levels) {
            levels = d + 1;
        }
    }
    return levels;
}

static weft_result_t reserve_levels(weft__hstore_t *s, uint32_t n) {
    if (n <= s->level_capacity) {
        return WEFT_OK;
    }
    uint32_t cap = s->level_capacity ? s->level_capacity : 16;
    while (cap < n) {
        cap *= 2;
    }
    uint32_t *p = weft__hstore_alloc(s, (size_t)cap * sizeof(uint32_t));
    if (p == NULL) {
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "hierarchy: out of memory for %u levels", n);
    }
    weft__hstore_free(s, s->level_start, (size_t)s->level_capacity * sizeof(uint32_t));
    s->level_start = p;
    s->level_capacity = cap;
    return WEFT_OK;
}

weft_result_t weft__hstore_level_sort(weft__hstore_t *s) {
    if (s->levels_valid) {
        return WEFT_OK;
    }
    const uint32_t levels = weft__hstore_depths(s);
    weft_result_t r = reserve_levels(s, levels + 1);
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t *cursor = weft__hstore_alloc(s, ((size_t)levels + 1) * sizeof(uint32_t));
    if (cursor == NULL) {
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "hierarchy: out of memory sorting levels");
    }

    /* Histogram, then prefix sums: level_start[d] is where depth d begins. */
    uint32_t *depth = s->rows.scratch;
    memset(cursor, 0, ((size_t)levels + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < s->count; i++) {
        if (depth[i] != WEFT__HROW_NONE) {
            cursor[depth[i]]++;
        }
    }
    uint32_t sum = 0, widest = 0;
    for (uint32_t d = 0; d < levels; d++) {
        const uint32_t width = cursor[d];
        widest = width > widest ? width : widest;
        s->level_start[d] = sum;
        cursor[d] = sum;
        sum += width;
    }
    s->level_start[levels] = sum;
    /* Stable: increasing old rows take increasing slots of their level. The depth of row i is
     * replaced by its new row in place (scratch becomes the old -> new map). */
    for (uint32_t i = 0; i < s->count; i++) {
        if (depth[i] != WEFT__HROW_NONE) {
            depth[i] = cursor[depth[i]]++;
        }
    }
    weft__hstore_free(s, cursor, ((size_t)levels + 1) * sizeof(uint32_t));

    r = permute(s, depth, sum);
    if (r != WEFT_OK) {
        return r;
    }
    s->level_count = levels;
    s->max_level_width = widest;
    s->levels_valid = true;
    s->sorts++;
    return WEFT_OK;
}

/* Order-keeping compaction. It is cheaper than a level sort (no depths, no histogram) but
 * shifts level boundaries, so the level cut is dropped: the next level pass re-sorts. */
weft_result_t weft__hstore_compact(weft__hstore_t *s) {
    if (s->holes == 0) {
        return WEFT_OK;
    }
    uint32_t *newrow = s->rows.scratch;
    uint32_t k = 0;
    for (uint32_t r = 0; r < s->count; r++) {
        newrow[r] = s->rows.ent[r] != 0 ? k++ : WEFT__HROW_NONE;
    }
    weft_result_t res = permute(s, newrow, k);
    if (res != WEFT_OK) {
        return res;
    }
    s->levels_valid = false;
    return WEFT_OK;
}

/* Rows of the widest level: from the level cut when valid, else a depth histogram (O(n),
 * scratch array); UINT32_MAX when the histogram cannot be allocated. */
static uint32_t measure_widest(weft__hstore_t *s) {
    if (s->levels_valid) {
        return s->max_level_width;
    }
    const uint32_t levels = weft__hstore_depths(s);
    uint32_t *hist = weft__hstore_alloc(s, ((size_t)levels + 1) * sizeof(uint32_t));
    if (hist == NULL) {
        return UINT32_MAX;
    }
    memset(hist, 0, ((size_t)levels + 1) * sizeof(uint32_t));
    const uint32_t *depth = s->rows.scratch;
    uint32_t widest = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        if (depth[i] != WEFT__HROW_NONE && ++hist[depth[i]] > widest) {
            widest = hist[depth[i]];
        }
    }
    weft__hstore_free(s, hist, ((size_t)levels + 1) * sizeof(uint32_t));
    return widest;
}

/* The shape facts both choices below read, computed once per structure: the choice is cached
 * until the next structural change, so a steady hierarchy pays for the depth walk only once. */
static void know_shape(weft__hstore_t *s) {
    if (s->auto_known) {
        return;
    }
    s->widest = measure_widest(s);
    const bool splits = s->widest != UINT32_MAX && s->widest >= 2 * WEFT__HIER_GRAIN;
    /* Without the histogram: the sequential pass, which needs no memory. */
    s->auto_choice = (int)(splits && s->live >= 16 * WEFT__HIER_GRAIN ? WEFT__HPASS_LEVELS
                                                                      : WEFT__HPASS_SEQUENTIAL);
    s->auto_known = true;
}

weft__hpass_t weft__hstore_auto_pass(weft__hstore_t *s) {
    know_shape(s);
    return (weft__hpass_t)s->auto_choice;
}

weft__hpass_t weft__hstore_pass_for(weft__hstore_t *s, weft__hpass_t requested) {
    if (requested != WEFT__HPASS_LEVELS) {
        return requested;
    }
    know_shape(s);
    return s->widest >= 2 * WEFT__HIER_GRAIN ? WEFT__HPASS_LEVELS : WEFT__HPASS_SEQUENTIAL;
}

/* ---- passes ---------------------------------------------------------------- >>hier_pass */

/* Hints that change no result: keep the rarely taken recomposition out of the hot loop,
 * and fetch the matrices of rows about to be recomputed. */
#if defined(__GNUC__)
#define HIER_NOINLINE __attribute__((noinline))
#define HIER_INLINE __attribute__((always_inline)) inline
#define HIER_PREFETCH(p, rw) __builtin_prefetch((p), (rw))
#else
#define HIER_NOINLINE
#define HIER_INLINE inline
#define HIER_PREFETCH(p, rw) ((void)(p))
#endif

/* Fetch both ends of a row of an array whose rows straddle cache lines (local transforms,
 * 40 bytes: half of them span two lines; parent links, 72 bytes: every one does). */
#define HIER_PREFETCH_ROW(p) (HIER_PREFETCH((p), 0), HIER_PREFETCH((const char *)((p) + 1) - 1, 0))

/* Rows per block, how far ahead the sparse path prefetches, and the widest parent range a
 * block summary is scanned for (wider: the block is pulled row by row instead). */
#define HIER_BLOCK WEFT__HIER_BLOCK
#define HIER_AHEAD 8u
#define HIER_SPAN (4u * HIER_BLOCK)

/* Recompose row r's cached local matrix (its local, parent or bind changed). */
static HIER_NOINLINE void recompose(const weft__hrows_t *w, uint32_t r, uint32_t p, uint8_t f) {
    weft__hier_local_matrix(&w->lmat[r], &w->local[r], &w->link[r].inverse_bind,
                            p == WEFT__HROW_NONE || (f & WEFT__HFLAG_PLAIN) != 0);
}

/* Row r's world matrix, r known to need it (flags f, parent p). */
static inline void compute_row(const weft__hrows_t *w, uint32_t r, uint32_t p, uint8_t f) {
    if ((f & WEFT__HFLAG_LOCAL) != 0) {
        recompose(w, r, p, f);
    }
    if (p == WEFT__HROW_NONE) {
        w->world[r] = w->lmat[r];
    } else {
        weft__mat4_mul_into(&w->world[r], &w->world[p], &w->lmat[r]);
    }
}

/* Row r's flags as the pass sees them: its own, plus DIRTY when its parent was recomputed
 * in this pass (pull: bits are cleared only at the end of the pass, so a recomputed parent
 * still reads DIRTY). The parent lies in an earlier row or level, finished before. */
static inline uint8_t pulled_flags(const weft__hrows_t *w, uint32_t r, uint32_t p) {
    uint8_t f = w->flags[r];
    if (p != WEFT__HROW_NONE) {
        f |= (uint8_t)(w->flags[p] & WEFT__HFLAG_DIRTY);
    }
    return f;
}

/* Eight flag bytes as one word (any alignment), and a bit in every byte of a word. */
static inline uint64_t flag_word(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}
#define EVERY_BYTE(bit) (0x0101010101010101ull * (uint64_t)(bit))

/* True when every row of [begin, end) has DIRTY set (a full update's blocks). */
static bool all_dirty(const uint8_t *flags, uint32_t begin, uint32_t end) {
    uint64_t all = EVERY_BYTE(WEFT__HFLAG_DIRTY);
    uint32_t r = begin;
    for (; r + 8 <= end; r += 8) {
        all &= flag_word(flags + r);
    }
    for (; r < end; r++) {
        all &= (uint64_t)flags[r] * EVERY_BYTE(1);
    }
    return all == EVERY_BYTE(WEFT__HFLAG_DIRTY);
}

/* True when some row of [begin, end) has DIRTY set. */
static bool any_dirty(const uint8_t *flags, uint32_t begin, uint32_t end) {
    uint32_t r = begin;
    for (; r + 8 <= end; r += 8) {
        if ((flag_word(flags + r) & EVERY_BYTE(WEFT__HFLAG_DIRTY)) != 0) {
            return true;
        }
    }
    for (; r < end; r++) {
        if ((flags[r] & WEFT__HFLAG_DIRTY) != 0) {
            return true;
        }
    }
    return false;
}

/* True when no row of block [b, e) (inside aligned block g) needs recomputing: none is
 * DIRTY and none of the parent rows the block's summary spans is (those precede the block
 * and are final). Without summaries (lo NULL) or with a wide span it answers false. */
static bool block_clean(const uint8_t *flags, const uint32_t *lo, const uint32_t *hi, uint32_t g,
                        uint32_t b, uint32_t e) {
    if (lo == NULL || any_dirty(flags, b, e)) {
        return false;
    }
    if (lo[g] == WEFT__HROW_NONE) {
        return true; /* only roots and holes */
    }
    return hi[g] - lo[g] < HIER_SPAN && !any_dirty(flags, lo[g], hi[g] + 1);
}

/* Compute world[] for the rows list[0, k) (ascending, scattered). `flagged`: their flags
 * (already pulled) say whether each must recompose its local matrix first; else every
 * cached local matrix is current and no flag is read (one line fewer per row). The rows'
 * lines are fetched in two stages, since scattered rows miss the cache on every array:
 * 2 * HIER_AHEAD rows ahead, the row's own lines (parent row, flags, matrices); HIER_AHEAD
 * rows ahead, the lines those name (the parent's world matrix, the local transform when it
 * must be recomposed), whose addresses the first stage brought in. A stage that waited for
 * its own load would stall the loop. */
static inline void compute_list(const weft__hrows_t *w, const uint32_t *list, uint32_t k,
                                bool flagged) {
    const uint32_t *parent = w->parent;
    const uint8_t *flags = w->flags;
    for (uint32_t i = 0; i < k; i++) {
        if (i + 2 * HIER_AHEAD < k) {
            const uint32_t q = list[i + 2 * HIER_AHEAD];
            HIER_PREFETCH(&parent[q], 0);
            if (flagged) {
                HIER_PREFETCH(&flags[q], 0);
            }
            HIER_PREFETCH(&w->lmat[q], 1);
            HIER_PREFETCH(&w->world[q], 1);
        }
        if (i + HIER_AHEAD < k) {
            const uint32_t q = list[i + HIER_AHEAD];
            if (parent[q] != WEFT__HROW_NONE) {
                HIER_PREFETCH(&w->world[parent[q]], 0);
            }
            if (flagged && (flags[q] & WEFT__HFLAG_LOCAL) != 0) {
                HIER_PREFETCH_ROW(&w->local[q]);
            }
        }
        const uint32_t r = list[i];
        compute_row(w, r, parent[r], flagged ? flags[r] : 0);
    }
}

/* Compute world[] for rows [begin, end), block by block (blocks aligned to HIER_BLOCK rows,
 * so block summaries lo/hi, when given, describe a superset of each block's rows). A block
 * whose rows and parents are clean is skipped. A block whose rows are all marked (a full
 * update) is one forward walk. Otherwise its flags are pulled first (a cheap walk over
 * parent rows and flag bytes) into a list of the rows to recompute, which are then computed
 * in the same order with their matrices prefetched, since they lie scattered. */
static void update_rows(const weft__hrows_t *w, uint32_t begin, uint32_t end, const uint32_t *lo,
                        const uint32_t *hi) {
    const uint32_t *parent = w->parent;
    uint8_t *flags = w->flags;
    uint32_t list[HIER_BLOCK];
    for (uint32_t b = begin; b < end;) {
        const uint32_t g = b / HIER_BLOCK;
        const uint32_t next = (g + 1) * HIER_BLOCK;
        const uint32_t e = end < next ? end : next;
        const uint32_t block_begin = b;
        b = e;
        if (block_clean(flags, lo, hi, g, block_begin, e)) {
            continue;
        }
        if (all_dirty(flags, block_begin, e)) {
            for (uint32_t r = block_begin; r < e; r++) {
                compute_row(w, r, parent[r], pulled_flags(w, r, parent[r]));
            }
            continue;
        }
        uint32_t k = 0;
        for (uint32_t r = block_begin; r < e; r++) {
            const uint8_t f = pulled_flags(w, r, parent[r]);
            flags[r] = f;
            list[k] = r;
            k += f & WEFT__HFLAG_DIRTY;
        }
        compute_list(w, list, k, true);
    }
}

/* A full update's step for row r: compute it and clear its DIRTY and LOCAL bits. Nothing
 * reads another row's flags, so a range may run beside ranges of its own level. */
static inline void update_one(const weft__hrows_t *w, uint32_t r) {
    const uint8_t f = w->flags[r];
    compute_row(w, r, w->parent[r], f);
    if ((f & WEFT__HFLAG_CHANGED) != 0) {
        w->flags[r] = (uint8_t)(f & ~WEFT__HFLAG_CHANGED);
    }
}

/* A full update's walk over rows [begin, end) (no holes among them): update_one with the
 * array pointers held in locals, since a flag-byte store may alias anything and would make
 * the loop reload them from the struct on every row. */
static void update_all(const weft__hrows_t *w, uint32_t begin, uint32_t end) {
    const uint32_t *parent = w->parent;
    const weft_mat4_t *lmat = w->lmat;
    weft_mat4_t *world = w->world;
    uint8_t *flags = w->flags;
    for (uint32_t r = begin; r < end; r++) {
        const uint8_t f = flags[r];
        const uint32_t p = parent[r];
        if ((f & WEFT__HFLAG_CHANGED) != 0) {
            if ((f & WEFT__HFLAG_LOCAL) != 0) {
                recompose(w, r, p, f);
            }
            flags[r] = (uint8_t)(f & ~WEFT__HFLAG_CHANGED);
        }
        if (p == WEFT__HROW_NONE) {
            world[r] = lmat[r];
        } else {
            weft__mat4_mul_into(&world[r], &world[p], &lmat[r]);
        }
    }
}

/* update_all for the rows idx[begin, end) of the level index. */
static void update_all_indexed(const weft__hrows_t *w, const uint32_t *idx, uint32_t begin,
                               uint32_t end) {
    for (uint32_t i = begin; i < end; i++) {
        update_one(w, idx[i]);
    }
}

/* Compute world[] for the rows idx[begin, end) (a slice of one level of the index). */
static void update_indexed(const weft__hrows_t *w, const uint32_t *idx, uint32_t begin,
                           uint32_t end) {
    for (uint32_t i = begin; i < end; i++) {
        const uint32_t r = idx[i];
        const uint32_t p = w->parent[r];
        const uint8_t f = pulled_flags(w, r, p);
        if ((f & WEFT__HFLAG_DIRTY) != 0) {
            w->flags[r] = f;
            compute_row(w, r, p, f);
        }
    }
}

/* The first row with DIRTY set (count when none): eight flags per load where aligned, so
 * a static hierarchy costs one read of n bytes. */
static uint32_t first_dirty(const weft__hstore_t *s) {
    const uint8_t *f = s->rows.flags;
    uint32_t r = 0;
    while (r + 8 <= s->count && (flag_word(f + r) & EVERY_BYTE(WEFT__HFLAG_DIRTY)) == 0) {
        r += 8;
    }
    while (r < s->count && (f[r] & WEFT__HFLAG_DIRTY) == 0) {
        r++;
    }
    return r;
}

/* Clear DIRTY on rows [from, count) and count the rows that had it (the recomputed ones). */
static uint32_t clear_dirty(weft__hstore_t *s, uint32_t from) {
    uint8_t *f = s->rows.flags;
    uint32_t n = 0;
    uint32_t r = from;
    for (; r + 8 <= s->count; r += 8) { /* eight rows per word; DIRTY is bit 0 of a byte */
        uint64_t v = flag_word(f + r);
        n += (uint32_t)(((v & EVERY_BYTE(WEFT__HFLAG_DIRTY)) * EVERY_BYTE(1)) >> 56);
        v &= ~EVERY_BYTE(WEFT__HFLAG_CHANGED);
        memcpy(f + r, &v, sizeof(v));
    }
    for (; r < s->count; r++) {
        n += f[r] & WEFT__HFLAG_DIRTY;
        f[r] &= (uint8_t)~WEFT__HFLAG_CHANGED;
    }
    return n;
}

typedef struct level_ctx {
    const weft__hrows_t *rows; /* the store's arrays */
    const uint32_t *idx;       /* NULL: the level is rows [base, ...); else idx[base, ...) */
    uint32_t base;             /* first row (or index entry) of the level */
    bool all;                  /* a full update: every row recomputed (update_all) */
} level_ctx_t;

/* Rows [a, b) of a level (index entries when idx is non-NULL). */
static void level_slice(const weft__hrows_t *rows, const uint32_t *idx, bool all, uint32_t a,
                        uint32_t b) {
    if (idx != NULL) {
        if (all) {
            update_all_indexed(rows, idx, a, b);
        } else {
            update_indexed(rows, idx, a, b);
        }
    } else if (all) {
        update_all(rows, a, b);
    } else {
        update_rows(rows, a, b, NULL, NULL);
    }
}

static void level_range(void *arg, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    const level_ctx_t *ctx = arg;
    level_slice(ctx->rows, ctx->idx, ctx->all, ctx->base + (uint32_t)begin,
                ctx->base + (uint32_t)end);
}

/* Run levels start[0..levels) one after the other; see the file comment for why a level
 * needs no more synchronisation than parallel-for's return. */
static void run_levels(const weft__hrows_t *rows, const uint32_t *idx, const uint32_t *start,
                       uint32_t levels, bool all, weft_jobs_t *jobs) {
    for (uint32_t d = 0; d < levels; d++) {
        const uint32_t a = start[d];
        const uint32_t b = start[d + 1];
        if (jobs != NULL && b - a >= 2 * WEFT__HIER_GRAIN) {
            level_ctx_t ctx = {rows, idx, a, all};
            /* A fixed grain makes the split independent of the worker count. If the job
             * system refuses (out of memory, shutting down), the level is simply recomputed
             * here: every row's value is a pure function of earlier levels, so ranges that
             * did run are overwritten with identical bits. */
            if (weft_parallel_for(jobs, b - a, WEFT__HIER_GRAIN, level_range, &ctx) == WEFT_OK) {
                continue;
            }
        }
        level_slice(rows, idx, all, a, b);
    }
}

static weft_result_t grow_u32(weft__hstore_t *s, uint32_t **p, uint32_t *cap, uint32_t need) {
    if (need <= *cap) {
        return WEFT_OK;
    }
    uint32_t n = *cap ? *cap : 64;
    while (n < need) {
        n = n > UINT32_MAX / 2 ? need : n * 2;
    }
    uint32_t *q = weft__hstore_alloc(s, (size_t)n * sizeof(uint32_t));
    if (q == NULL) {
        return WEFT_ENOMEM;
    }
    weft__hstore_free(s, *p, (size_t)*cap * sizeof(uint32_t));
    *p = q;
    *cap = n;
    return WEFT_OK;
}

/* Build the level index: live rows grouped by depth, ascending rows within a level (a
 * counting sort of row numbers; no data moves). */
static weft_result_t build_index(weft__hstore_t *s) {
    if (s->index_valid) {
        return WEFT_OK;
    }
    const uint32_t levels = weft__hstore_depths(s);
    if (grow_u32(s, &s->index_rows, &s->index_capacity, s->live + 1) != WEFT_OK ||
        grow_u32(s, &s->index_start, &s->index_start_capacity, levels + 2) != WEFT_OK) {
        return WEFT_ENOMEM;
    }
    const uint32_t *depth = s->rows.scratch;
    uint32_t *start = s->index_start;
    memset(start, 0, ((size_t)levels + 2) * sizeof(uint32_t));
    for (uint32_t r = 0; r < s->count; r++) {
        if (depth[r] != WEFT__HROW_NONE) {
            start[depth[r] + 2]++;
        }
    }
    /* start[d + 1] becomes the fill cursor of level d; after the fill it is level d's end,
     * which is level d + 1's start. */
    for (uint32_t d = 2; d < levels + 2; d++) {
        start[d] += start[d - 1];
    }
    for (uint32_t r = 0; r < s->count; r++) {
        if (depth[r] != WEFT__HROW_NONE) {
            s->index_rows[start[depth[r] + 1]++] = r;
        }
    }
    s->index_levels = levels;
    s->index_valid = true;
    return WEFT_OK;
}

/* Build the per-block parent ranges (one walk over the parent rows; after structural changes
 * only). Level passes do not use them: a block there may straddle levels, and its range
 * would then name rows another worker is writing. */
static weft_result_t build_blocks(weft__hstore_t *s) {
    if (s->blocks_valid) {
        return WEFT_OK;
    }
    const uint32_t blocks = (s->count + HIER_BLOCK - 1) / HIER_BLOCK;
    uint32_t cap = s->block_capacity;
    if (grow_u32(s, &s->block_lo, &cap, blocks) != WEFT_OK) {
        return WEFT_ENOMEM;
    }
    if (cap != s->block_capacity) { /* block_hi follows block_lo's new capacity */
        uint32_t *hi = weft__hstore_alloc(s, (size_t)cap * sizeof(uint32_t));
        if (hi == NULL) {
            weft__hstore_free(s, s->block_lo, (size_t)cap * sizeof(uint32_t));
            weft__hstore_free(s, s->block_hi, (size_t)s->block_capacity * sizeof(uint32_t));
            s->block_lo = s->block_hi = NULL;
            s->block_capacity = 0;
            return WEFT_ENOMEM;
        }
        weft__hstore_free(s, s->block_hi, (size_t)s->block_capacity * sizeof(uint32_t));
        s->block_hi = hi;
        s->block_capacity = cap;
    }
    const uint32_t *parent = s->rows.parent;
    for (uint32_t g = 0; g < blocks; g++) {
        uint32_t lo = WEFT__HROW_NONE, hi = 0;
        const uint32_t end = (g + 1) * HIER_BLOCK < s->count ? (g + 1) * HIER_BLOCK : s->count;
        for (uint32_t r = g * HIER_BLOCK; r < end; r++) {
            const uint32_t p = parent[r];
            if (p != WEFT__HROW_NONE) {
                lo = p < lo ? p : lo;
                hi = p > hi ? p : hi;
            }
        }
        s->block_lo[g] = lo;
        s->block_hi[g] = hi;
    }
    s->blocks_valid = true;
    return WEFT_OK;
}

/* Make *bits (a bitset of *cap words) hold at least `words` words, doubling; a new array
 * is all zero. False when out of memory (nothing changed). */
static bool grow_bits(const weft__hstore_t *s, uint64_t **bits, uint32_t *cap, uint32_t words) {
    if (words <= *cap) {
        return true;
    }
    uint32_t n = *cap ? *cap : 64u;
    while (n < words) {
        n *= 2; /* words <= 2^26: no overflow */
    }
    uint64_t *b = weft__hstore_alloc(s, (size_t)n * sizeof(uint64_t));
    if (b == NULL) {
        return false;
    }
    memset(b, 0, (size_t)n * sizeof(uint64_t));
    weft__hstore_free(s, *bits, (size_t)*cap * sizeof(uint64_t));
    *bits = b;
    *cap = n;
    return true;
}

/* Build the parent bitset over rows [0, count) unless it already covers at least half of
 * them (rows beyond it count as parents: correct, only slower), so that adding nodes costs
 * a rebuild only each time the rows double. On WEFT_ENOMEM it stays as it was. */
static weft_result_t build_kids(weft__hstore_t *s) {
    if (s->kids_rows != 0 && s->kids_rows >= s->count / 2) {
        return WEFT_OK;
    }
    const uint32_t words = s->count / 64u + 1u;
    if (!grow_bits(s, &s->kids, &s->kids_words, words)) {
        return WEFT_ENOMEM;
    }
    memset(s->kids, 0, (size_t)words * sizeof(uint64_t));
    const uint32_t *first_child = s->rows.first_child;
    for (uint32_t r = 0; r < s->count; r++) {
        s->kids[r / 64u] |= (uint64_t)(first_child[r] != WEFT__HROW_NONE) << (r % 64u);
    }
    s->kids_rows = s->count;
    return WEFT_OK;
}

/* True when row r may have a child (see the parent bitset in hierarchy_store.h). */
static inline bool may_have_kids(const weft__hstore_t *s, uint32_t r) {
    return r >= s->kids_rows || ((s->kids[r / 64u] >> (r % 64u)) & 1u) != 0;
}

/* ---- sparse pass ----------------------------------------------------------- >>hier_sparse */

/* The sequential pass either scans every row (update_rows: pulls every row's flags, a few
 * instructions a row, then recomputes the rows found) or, when few rows changed, marks the
 * changed subtrees in a bitset by following their child lists from the DIRTY rows
 * (mark_changed: about twenty instructions a marked row) and recomputes only the marked rows
 * in row order (update_marked), so its cost follows the changed subtrees' sizes, not the
 * hierarchy's. Marking stops once more than a quarter of the rows are marked, where its
 * per-row cost makes the scan the cheaper path, and the scan then runs: a large change
 * costs at most that quarter more. In a NESTED layout (hierarchy_store.h, child spans) the
 * marking follows runs of rows instead of child lists and is fused with the DIRTY rows' own
 * computation (update_by_spans), which costs bit operations per 64 marked rows, so it needs
 * no budget. After weft_hier_invalidate (every row DIRTY) the scan runs directly. Which path runs never changes a value: every recomputed row is
 * parent_world * lmat with the same inputs, parents first, either way. */
#define HIER_MARK_SHARE 4u

/* Make the mark bitset cover every row (all bits zero: marks are cleared after each use).
 * False when out of memory. */
static bool reserve_marks(weft__hstore_t *s) {
    return grow_bits(s, &s->mark, &s->mark_words, s->count / 64u + 1u);
}

/* Index of the lowest set bit of m (m nonzero). */
static inline uint32_t lowest_bit(uint64_t m) {
#if defined(__GNUC__)
    return (uint32_t)__builtin_ctzll(m);
#else
    uint32_t i = 0;
    while ((m & 1u) == 0) {
        m >>= 1;
        i++;
    }
    return i;
#endif
}

/* Index of the highest set bit of m (m nonzero). */
static inline uint32_t highest_bit(uint64_t m) {
#if defined(__GNUC__)
    return 63u - (uint32_t)__builtin_clzll(m);
#else
    uint32_t i = 63;
    while ((m >> i) == 0) {
        i--;
    }
    return i;
#endif
}

static bool marked(const uint64_t *mark, uint32_t r) {
    return ((mark[r / 64u] >> (r % 64u)) & 1u) != 0;
}

static void set_mark(uint64_t *mark, uint32_t r) { mark[r / 64u] |= 1ull << (r % 64u); }

/* The DIRTY bits of the 64 flag bytes from p as one word, bit j for byte j: eight bytes'
 * bits 0 gathered by one multiply each (the partial products never overlap). */
static inline uint64_t dirty_bits64(const uint8_t *p) {
    uint64_t m = 0;
    for (uint32_t j = 0; j < 8; j++) {
        const uint64_t v = flag_word(p + 8 * j) & EVERY_BYTE(WEFT__HFLAG_DIRTY);
        m |= ((v * 0x0102040810204080ull) >> 56) << (8 * j);
    }
    return m;
}

/* Queue the DIRTY rows of [first, n) in ascending order into queue, marking them when mark
 * is non-NULL, while the queue holds at most `budget` rows (beyond: it stops early). The
 * flags are read a line at a time, their DIRTY bits gathered into a word and taken lowest
 * first, so a line costs a few instructions and a DIRTY row a few more. Returns the queue
 * length. */
static inline uint32_t queue_all_dirty(const uint8_t *flags, uint32_t first, uint32_t n,
                                       uint32_t budget, uint64_t *mark, uint32_t *queue) {
    uint32_t tail = 0;
    uint32_t r = first;
    for (; r + 64 <= n && tail <= budget; r += 64) {
        uint64_t any = 0; /* a clean line (the common case) is eight loads and a test */
        for (uint32_t j = 0; j < 64; j += 8) {
            any |= flag_word(flags + r + j);
        }
        if ((any & EVERY_BYTE(WEFT__HFLAG_DIRTY)) == 0) {
            continue;
        }
        uint64_t m = dirty_bits64(flags + r);
        while (m != 0) {
            const uint32_t q = r + lowest_bit(m);
            m &= m - 1;
            if (mark != NULL) {
                set_mark(mark, q);
            }
            queue[tail++] = q;
        }
    }
    for (; r < n && tail <= budget; r++) {
        if ((flags[r] & WEFT__HFLAG_DIRTY) != 0) {
            if (mark != NULL) {
                set_mark(mark, r);
            }
            queue[tail++] = r;
        }
    }
    return tail;
}

/* Mark the subtree of every DIRTY row of [first, count). Returns the rows marked, or
 * UINT32_MAX (and no mark left set) when they would exceed the budget. The DIRTY rows are
 * found by queue_all_dirty (ascending). Then breadth first
 * over all changed subtrees at once, through a queue in the scratch array: the queue is
 * known ahead, so the child lists of rows a few places on are fetched while the current one
 * is read (walking one subtree after another would wait for every child list in turn). Only
 * rows that may have children (the parent bitset) join the queue after the DIRTY rows, so
 * a leaf, most marked rows of a wide tree, costs one bit test and never touches its
 * child-list line. A DIRTY row inside a subtree queued before it is marked once: it is
 * queued only as a root (children already marked are not queued again), and its own
 * children are queued from there. */
static uint32_t mark_changed(weft__hstore_t *s, uint32_t first, uint32_t *roots) {
    const weft__hrows_t *w = &s->rows;
    const uint8_t *flags = w->flags;
    uint64_t *mark = s->mark;
    uint32_t *queue = w->scratch;
    const uint32_t n = s->count; /* in a local: the queue's stores may alias the store */
    const uint32_t budget = n / HIER_MARK_SHARE;
    uint32_t tail = queue_all_dirty(flags, first, n, budget, mark, queue);
    *roots = tail;
    const uint32_t nroots = tail;
    uint32_t count = tail; /* rows marked */
    for (uint32_t head = 0; head < tail && count <= budget; head++) {
        /* Two stages, as in compute_list: a row's child-list head, then its first child's
         * sibling link, whose address the first stage brought in. */
        if (head + 2 * HIER_AHEAD < tail) {
            const uint32_t q = queue[head + 2 * HIER_AHEAD];
            if (head + 2 * HIER_AHEAD >= nroots || may_have_kids(s, q)) {
                HIER_PREFETCH(&w->first_child[q], 0);
            }
        }
        if (head + HIER_AHEAD < tail) {
            const uint32_t q = queue[head + HIER_AHEAD];
            if (head + HIER_AHEAD >= nroots || may_have_kids(s, q)) {
                const uint32_t c = w->first_child[q];
                if (c != WEFT__HROW_NONE) {
                    HIER_PREFETCH(&w->next_sib[c], 0);
                }
            }
        }
        if (head < nroots && !may_have_kids(s, queue[head])) {
            continue; /* rows queued after the roots all may have children */
        }
        for (uint32_t c = w->first_child[queue[head]]; c != WEFT__HROW_NONE; c = w->next_sib[c]) {
            if (!marked(mark, c)) {
                set_mark(mark, c);
                count++;
                if (may_have_kids(s, c)) {
                    queue[tail++] = c;
                }
            }
        }
    }
    if (count > budget) {
        memset(mark + first / 64u, 0, ((size_t)(n / 64u) - first / 64u + 1u) * sizeof(uint64_t));
        return UINT32_MAX;
    }
    return count;
}

/* Build the child spans and decide NESTED (hierarchy_store.h) in one walk over the parent
 * rows: with parents never decreasing, the rows naming parent p are one run, spans[p]. The
 * parent bitset is rebuilt exactly beside them, so that a set bit means a span. Without
 * NESTED, or out of memory, nested stays false and the child lists are followed. */
static void build_spans(weft__hstore_t *s) {
    s->spans_state = 2;
    s->nested = false;
    const uint32_t *parent = s->rows.parent;
    const uint32_t n = s->count;
    uint32_t last = 0;               /* the latest parent seen */
    uint32_t root = WEFT__HROW_NONE; /* the latest root or hole since the last child */
    for (uint32_t r = 0; r < n; r++) {
        const uint32_t p = parent[r];
        if (p == WEFT__HROW_NONE) {
            root = r;
            continue;
        }
        if (p < last || (root != WEFT__HROW_NONE && p < root)) {
            return; /* a run of children would hold another parent's child or a root */
        }
        last = p;
        root = WEFT__HROW_NONE;
    }
    if (n > s->span_capacity) {
        uint32_t cap = s->span_capacity ? s->span_capacity : 64u;
        while (cap < n) {
            cap = cap > UINT32_MAX / 2 ? n : cap * 2;
        }
        uint32_t(*spans)[2] = weft__hstore_alloc(s, (size_t)cap * sizeof(*spans));
        if (spans == NULL) {
            return;
        }
        weft__hstore_free(s, s->spans, (size_t)s->span_capacity * sizeof(*s->spans));
        s->spans = spans;
        s->span_capacity = cap;
    }
    memset(s->spans, 0xff, (size_t)n * sizeof(*s->spans)); /* NONE everywhere */
    for (uint32_t r = 0; r < n; r++) {
        const uint32_t p = parent[r];
        if (p != WEFT__HROW_NONE) {
            if (s->spans[p][0] == WEFT__HROW_NONE) {
                s->spans[p][0] = r;
            }
            s->spans[p][1] = r;
        }
    }
    s->kids_rows = 0;
    if (build_kids(s) != WEFT_OK || s->kids_rows != n) {
        return;
    }
    s->nested = true;
}

/* The lowest (up == true: highest) row of [a, b] whose bit is set in bits, or NONE. */
static uint32_t find_bit(const uint64_t *bits, uint32_t a, uint32_t b, bool up) {
    const uint32_t wa = a / 64u, wb = b / 64u;
    const uint64_t first_mask = UINT64_MAX << (a % 64u);
    const uint64_t last_mask = UINT64_MAX >> (63u - b % 64u);
    if (!up) {
        for (uint32_t i = wa; i <= wb; i++) {
            uint64_t m =
                bits[i] & (i == wa ? first_mask : UINT64_MAX) & (i == wb ? last_mask : UINT64_MAX);
            if (m != 0) {
                return i * 64u + lowest_bit(m);
            }
        }
        return WEFT__HROW_NONE;
    }
    for (uint32_t i = wb + 1; i-- > wa;) {
        uint64_t m =
            bits[i] & (i == wa ? first_mask : UINT64_MAX) & (i == wb ? last_mask : UINT64_MAX);
        if (m != 0) {
            return i * 64u + highest_bit(m);
        }
    }
    return WEFT__HROW_NONE;
}

/* Set the bits of rows [a, b] (a <= b). */
static void mark_run(uint64_t *mark, uint32_t a, uint32_t b) {
    const uint32_t wa = a / 64u, wb = b / 64u;
    const uint64_t first_mask = UINT64_MAX << (a % 64u);
    const uint64_t last_mask = UINT64_MAX >> (63u - b % 64u);
    if (wa == wb) {
        mark[wa] |= first_mask & last_mask;
        return;
    }
    mark[wa] |= first_mask;
    for (uint32_t i = wa + 1; i < wb; i++) {
        mark[i] = UINT64_MAX;
    }
    mark[wb] |= last_mask;
}

/* The two-stage prefetch (as in compute_list) of the DIRTY row queue[i + ...] that the
 * first step of the sparse pass takes: 2 * HIER_AHEAD rows ahead its own lines (and its
 * child span when `spans` is non-NULL and the parent bitset `kids` says it has children),
 * HIER_AHEAD rows ahead the lines those name (the parent's world matrix, the local transform
 * and bind to recompose). Always inlined: a function that only prefetches has no effect
 * the compiler must keep, and GCC 12 at -O2 emitted none of these prefetches without it. */
static HIER_INLINE void fetch_dirty_ahead(const weft__hrows_t *w, const uint32_t *queue, uint32_t i,
                                          uint32_t k, const uint64_t *kids,
                                          const uint32_t (*spans)[2]) {
    if (i + 2 * HIER_AHEAD < k) {
        const uint32_t q = queue[i + 2 * HIER_AHEAD];
        HIER_PREFETCH(&w->parent[q], 0);
        HIER_PREFETCH(&w->lmat[q], 1);
        HIER_PREFETCH(&w->world[q], 1);
        if (spans != NULL && marked(kids, q)) {
            HIER_PREFETCH(&spans[q], 0);
        }
    }
    if (i + HIER_AHEAD < k) {
        const uint32_t q = queue[i + HIER_AHEAD];
        const uint32_t p = w->parent[q];
        const uint8_t f = w->flags[q];
        if (p != WEFT__HROW_NONE) {
            HIER_PREFETCH(&w->world[p], 0);
        }
        if ((f & WEFT__HFLAG_LOCAL) != 0) {
            HIER_PREFETCH_ROW(&w->local[q]);
            if ((f & WEFT__HFLAG_PLAIN) == 0 && p != WEFT__HROW_NONE) {
                HIER_PREFETCH_ROW(&w->link[q]);
            }
        }
    }
}

/* A DIRTY row r (parent p) taken by the sparse pass: recompose its cached local matrix where
 * LOCAL asks for it and clear its DIRTY and LOCAL bits (in the sparse pass the only rows with
 * either bit set). */
static inline void take_dirty(const weft__hrows_t *w, uint32_t r, uint32_t p) {
    const uint8_t f = w->flags[r];
    if ((f & WEFT__HFLAG_LOCAL) != 0) {
        recompose(w, r, p, f);
    }
    w->flags[r] = (uint8_t)(f & ~WEFT__HFLAG_CHANGED);
}

/* First step of the sparse pass, over the DIRTY rows queue[0, k) (ascending: the roots
 * mark_changed queued, whose subtrees are all marked): recompose each one's cached local
 * matrix where LOCAL asks for it and clear its DIRTY and LOCAL bits (in the sparse pass the
 * only rows with either bit set). A row whose parent is not marked (or that has none) reads
 * a final parent world matrix, so its own is computed here too, while its lines are in, and
 * its mark is dropped; rows inside another changed subtree keep theirs and are computed in
 * row order after their parents. Either way a world matrix is parent world * lmat of the
 * same inputs. Lines are fetched in two stages as in compute_list. */
static void compute_roots(const weft__hrows_t *w, uint64_t *mark, const uint32_t *queue,
                          uint32_t k) {
    const uint32_t *parent = w->parent;
    weft_mat4_t *world = w->world;
    for (uint32_t i = 0; i < k; i++) {
        fetch_dirty_ahead(w, queue, i, k, NULL, NULL);
        const uint32_t r = queue[i];
        const uint32_t p = parent[r];
        take_dirty(w, r, p);
        if (p == WEFT__HROW_NONE) {
            world[r] = w->lmat[r];
        } else if (!marked(mark, p)) {
            weft__mat4_mul_into(&world[r], &world[p], &w->lmat[r]);
        } else {
            continue; /* computed after its parent, in row order */
        }
        mark[r / 64u] &= ~(1ull << (r % 64u));
    }
}

/* Compute world[] for rows [begin, end), all marked, with current cached local matrices: a
 * changed subtree's run of rows. The full pass's loop: the lines stream in row order, so
 * the list and its prefetches would only add instructions. */
static void compute_run(const weft__hrows_t *w, uint32_t begin, uint32_t end) {
    const uint32_t *parent = w->parent;
    const weft_mat4_t *lmat = w->lmat;
    weft_mat4_t *world = w->world;
    for (uint32_t r = begin; r < end; r++) {
        const uint32_t p = parent[r];
        if (p == WEFT__HROW_NONE) {
            world[r] = lmat[r];
        } else {
            weft__mat4_mul_into(&world[r], &world[p], &lmat[r]);
        }
    }
}

/* Compute the marked rows of [first, count) in row order (parents first), clearing their
 * marks; queue[0, roots) are the DIRTY rows, taken first (compute_roots). Words of 64
 * marked rows in a row are computed as runs, the others through a list. */
static void compute_marked(weft__hstore_t *s, uint32_t first) {
    uint32_t list[HIER_BLOCK];
    uint32_t k = 0;
    const uint32_t words = s->count / 64u + 1u;
    for (uint32_t i = first / 64u; i < words; i++) {
        uint64_t m = s->mark[i];
        if (m == 0) {
            continue;
        }
        s->mark[i] = 0;
        if (m == UINT64_MAX) {
            compute_list(&s->rows, list, k, false); /* the rows before the run first */
            k = 0;
            uint32_t j = i + 1;
            while (j < words && s->mark[j] == UINT64_MAX) {
                s->mark[j++] = 0;
            }
            compute_run(&s->rows, i * 64u, j * 64u);
            i = j - 1;
            continue;
        }
        if (k + 64 > HIER_BLOCK) {
            compute_list(&s->rows, list, k, false);
            k = 0;
        }
        while (m != 0) {
            list[k++] = i * 64u + lowest_bit(m);
            m &= m - 1;
        }
    }
    compute_list(&s->rows, list, k, false);
}

static void update_marked(weft__hstore_t *s, uint32_t first, uint32_t roots) {
    compute_roots(&s->rows, s->mark, s->rows.scratch, roots);
    compute_marked(s, first);
}

/* The sparse pass's first steps for a NESTED layout, marking and compute_roots in one walk
 * over the DIRTY rows (ascending). Each one's cached local matrix is recomposed where LOCAL
 * asks for it and its DIRTY and LOCAL bits cleared. One already marked lies in the subtree
 * of an earlier one (parents precede children, and each subtree is marked whole when its
 * root is met) and is computed later in row order. Any other reads a final parent world
 * matrix: it is computed here, and its subtree below it marked one run per depth. The
 * children of the run [a, b] are the rows from the lowest child of its first row with
 * children to the highest child of its last one, and NESTED guarantees that this run holds
 * no other row (no root, no other parent's child): the marks are exactly the subtrees, two
 * of which never overlap. Cost: a span line per depth and bit operations per 64 rows where
 * the child lists cost a line and a bit test per row; no budget is needed (a large change
 * marks runs of whole words, which compute_marked walks like a full pass). Lines are fetched
 * in two stages as in compute_list. Returns the rows marked (computed or to compute). */
static uint32_t update_by_spans(weft__hstore_t *s, uint32_t first) {
    const weft__hrows_t *w = &s->rows;
    uint64_t *mark = s->mark;
    const uint64_t *kids = s->kids;
    const uint32_t(*spans)[2] = (const uint32_t(*)[2])s->spans;
    const uint32_t *parent = w->parent;
    weft_mat4_t *world = w->world;
    uint32_t *queue = w->scratch;
    const uint32_t n = s->count;
    const uint32_t k = queue_all_dirty(w->flags, first, n, n, NULL, queue);
    uint32_t count = 0;
    for (uint32_t i = 0; i < k; i++) {
        fetch_dirty_ahead(w, queue, i, k, kids, spans);
        const uint32_t r = queue[i];
        const uint32_t p = parent[r];
        take_dirty(w, r, p);
        if (marked(mark, r)) {
            continue; /* inside an earlier subtree: computed after its parent, in row order */
        }
        count++;
        if (p == WEFT__HROW_NONE) {
            world[r] = w->lmat[r];
        } else {
            weft__mat4_mul_into(&world[r], &world[p], &w->lmat[r]);
        }
        if (!marked(kids, r)) {
            continue; /* a leaf, most changed rows of a wide tree: no run below it */
        }
        uint32_t a = r, b = r;
        for (;;) {
            const uint32_t fp = find_bit(kids, a, b, false);
            if (fp == WEFT__HROW_NONE) {
                break;
            }
            const uint32_t lp = find_bit(kids, fp, b, true);
            a = spans[fp][0];
            b = spans[lp][1];
            mark_run(mark, a, b);
            count += b - a + 1;
        }
    }
    return count;
}

weft_result_t weft__hstore_update(weft__hstore_t *s, weft__hpass_t pass, bool regroup,
                                  weft_jobs_t *jobs) {
    const bool full = s->touched_all;
    const uint32_t first = full ? 0 : first_dirty(s);
    if (first == s->count) {
        s->touched_all = false;
        s->recomputed = 0;
        return WEFT_OK; /* nothing changed: every world matrix is current */
    }
    if (pass == WEFT__HPASS_LEVELS && regroup) {
        weft_result_t r = weft__hstore_level_sort(s); /* drops holes */
        if (r != WEFT_OK) {
            return r; /* nothing computed, touched_all kept */
        }
    }
    if (pass == WEFT__HPASS_LEVELS && !s->levels_valid && build_index(s) != WEFT_OK) {
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "hierarchy: out of memory for the level index");
    }
    s->touched_all = false;
    /* A full update walks every row without looking at DIRTY bits when no hole is in the way
     * (the index lists live rows only); else the rows are marked and the scan skips holes. */
    const bool walk_all =
        full && (s->holes == 0 || (pass == WEFT__HPASS_LEVELS && !s->levels_valid));
    if (full && !walk_all) {
        weft__hstore_mark_all(s);
    }
    if (pass != WEFT__HPASS_LEVELS) {
        if (walk_all) {
            update_all(&s->rows, 0, s->count);
            s->recomputed = s->live;
            return WEFT_OK;
        }
        if (!full && reserve_marks(s)) {
            if (s->spans_state < 2 && s->spans_state++ == 1) {
                build_spans(s); /* the structure outlived a pass: worth an O(n) walk */
            }
            (void)build_kids(s); /* without it the marking reads more child lists */
            uint32_t roots = 0;
            if (s->spans_state == 2 && s->nested) {
                const uint32_t n = update_by_spans(s, first);
                compute_marked(s, first);
                s->recomputed = n;
                return WEFT_OK;
            }
            const uint32_t n = mark_changed(s, first, &roots);
            if (n != UINT32_MAX) {
                update_marked(s, first, roots);
                s->recomputed = n;
                return WEFT_OK;
            }
        }
        const bool summaries = build_blocks(s) == WEFT_OK; /* else: no skipping */
        update_rows(&s->rows, first, s->count, summaries ? s->block_lo : NULL,
                    summaries ? s->block_hi : NULL);
        s->recomputed = clear_dirty(s, first);
        return WEFT_OK;
    }
    if (s->levels_valid) {
        run_levels(&s->rows, NULL, s->level_start, s->level_count, walk_all, jobs);
    } else {
        run_levels(&s->rows, s->index_rows, s->index_start, s->index_levels, walk_all, jobs);
    }
    /* A level sort may have moved the first dirty row: clear from the start. */
    s->recomputed = walk_all ? s->live : clear_dirty(s, 0);
    return WEFT_OK;
}
