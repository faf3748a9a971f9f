/* merge_join.c: the merge-join plan over entity-ordered pools (see merge_join.h).
 *
 * DESIGN
 * The iterator keeps one cursor per include check (merge_at): the first row of that pool not
 * yet passed. For the driving row r, each pool's cursor gallops to the first entity >= the
 * driving entity; a pool that lands past it makes the driving cursor gallop to that entity
 * (bounded by the chunk's end) and the round starts again, so long stretches only one pool
 * holds are skipped in O(log gap) probes instead of one visit per row. Cursors never move
 * back: across batches of a chunk the work is one pass over each pool's overlapping rows. A
 * pool whose cursor reaches its end ends the chunk (nothing later can match). */
#include "merge_join.h"
#include "query.h"

#include "weft/query.h"

#define MERGE_MIN_RUN 16u /* as query.c: shorter in-step runs go into a block */

/* Cost weights, in quarters of the planner's unit (a driving-row visit; a sparse probe of
 * the probe plan is two). Measured with weft_bench --suite query: merge_join_vs_probe_dense
 * (every candidate a match, two gallop probes per pool: 4 probes + 1 candidate per driving
 * row) took 1.7x the probe plan's time (5 units per row), and merge_join_vs_probe_sparse1
 * (about 26 probes and 2 candidates per match, 10,000 matches) 0.24x its 1.5M units; the
 * two give about 1.25 units per probe and 3.5 per candidate. */
#define MERGE_STEP_Q 5u   /* one gallop probe of a sorted dense array */
#define MERGE_ROW_Q 14u   /* a candidate: the round over the pools, a match's bookkeeping */
#define SAMPLE_WINDOWS 4u /* driving-row windows the estimate runs the join over */
#define SAMPLE_ROWS 128u  /* driving rows per window (the whole range when it is smaller) */

/* First index i in [lo, hi) with a[i] >= x, or hi: exponential search from lo for the
 * bracket, then binary search inside it. O(log(i - lo)). *probes (NULL: not counted) grows
 * by the array reads. */
static inline uint32_t gallop(const uint32_t *a, uint32_t lo, uint32_t hi, uint32_t x,
                              uint64_t *probes) {
    if (lo >= hi || a[lo] >= x) {
        if (probes != NULL) {
            *probes += lo < hi;
        }
        return lo;
    }
    uint32_t below = lo, step = 1, reads = 1; /* a[below] < x */
    while (step < hi - below && a[below + step] < x) {
        below += step;
        step *= 2u;
        reads++;
    }
    uint32_t l = below + 1u, h = step < hi - below ? below + step : hi; /* answer in [l, h] */
    while (l < h) {
        uint32_t mid = l + (h - l) / 2u;
        reads++;
        if (a[mid] < x) {
            l = mid + 1u;
        } else {
            h = mid;
        }
    }
    if (probes != NULL) {
        *probes += reads;
    }
    return l;
}

/* Run the leapfrog over the pools' rows [first[i], past[i]) from driving row `start`
 * (pools[0]) until the driving cursor reaches `stop` or a pool runs out, adding its gallop
 * probes and candidates to work[0] and work[1]; returns the driving row it stopped at. */
static uint32_t sample(const weft__pool_t *const *pools, uint32_t n, const uint32_t *first,
                       const uint32_t *past, uint32_t start, uint32_t stop, uint64_t *work) {
    const uint32_t *d = pools[0]->dense;
    uint32_t cur[WEFT_QUERY_MAX_TERMS];
    for (uint32_t i = 1; i < n; i++) { /* placing the cursors is not the join's work */
        cur[i] = gallop(pools[i]->dense, first[i], past[i], d[start], NULL);
    }
    uint32_t r = start;
    while (r < stop) {
        uint32_t target = d[r];
        work[1]++;
        for (uint32_t i = 1; i < n;) {
            const uint32_t *a = pools[i]->dense;
            cur[i] = gallop(a, cur[i], past[i], target, &work[0]);
            if (cur[i] == past[i]) {
                return past[0];
            }
            if (a[cur[i]] != target) {
                r = gallop(d, r + 1u, past[0], a[cur[i]], &work[0]);
                if (r >= stop) {
                    return r;
                }
                target = d[r];
                work[1]++;
                i = 1;
                continue;
            }
            i++;
        }
        for (uint32_t i = 1; i < n; i++) {
            cur[i]++;
        }
        r++;
    }
    return r;
}

uint64_t weft__merge_join_cost(const weft__pool_t *const *pools, uint32_t n) {
    uint32_t lo = 0, hi = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        if (pools[i]->count == 0) {
            return 0;
        }
        lo = pools[i]->dense[0] > lo ? pools[i]->dense[0] : lo;
        hi =
            pools[i]->dense[pools[i]->count - 1u] < hi ? pools[i]->dense[pools[i]->count - 1u] : hi;
    }
    if (lo > hi) {
        return 0; /* the ranges do not meet: the first gallops end it */
    }
    uint32_t first[WEFT_QUERY_MAX_TERMS], past[WEFT_QUERY_MAX_TERMS];
    for (uint32_t i = 0; i < n; i++) {
        const weft__pool_t *p = pools[i];
        first[i] = gallop(p->dense, 0, p->count, lo, NULL);
        past[i] = hi == UINT32_MAX ? p->count : gallop(p->dense, first[i], p->count, hi + 1u, NULL);
    }
    /* The join itself over a few evenly spaced windows of the driving rows in range (all of
     * them when they are few), scaled to the whole range by the driving rows it crossed. */
    const uint64_t rows = past[0] - first[0];
    uint64_t work[2] = {0, 0}, crossed = 0;
    const uint32_t windows = rows <= SAMPLE_WINDOWS * SAMPLE_ROWS ? 1u : SAMPLE_WINDOWS;
    for (uint32_t w = 0; w < windows; w++) {
        uint32_t start = first[0] + (uint32_t)(rows * w / windows);
        uint32_t stop = windows == 1u ? past[0] : start + SAMPLE_ROWS;
        uint32_t end = sample(pools, n, first, past, start, stop, work);
        crossed += (end < past[0] ? end : past[0]) - start;
    }
    uint64_t quarters = MERGE_STEP_Q * work[0] + MERGE_ROW_Q * work[1];
    if (crossed != 0 && crossed < rows) {
        quarters = quarters * rows / crossed;
    }
    return quarters / 4u + 1u;
}

uint64_t weft__merge_join_key(const weft__pool_t *const *pools, uint32_t n) {
    uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a over each pool's layout */
    for (uint32_t i = 0; i < n; i++) {
        h = (h ^ pools[i]->layout) * UINT64_C(1099511628211);
        h = (h ^ pools[i]->count) * UINT64_C(1099511628211);
        h = (h ^ pools[i]->id) * UINT64_C(1099511628211);
    }
    return h;
}

/* Include checks of the iterator (they come first among the checks). */
static uint32_t includes_of(const weft__iter_private_t *pv) {
    uint32_t n = 0;
    while (n < pv->check_count && pv->checks[n].term != UINT32_MAX) {
        n++;
    }
    return n;
}

void weft__merge_join_begin(weft_iter_t *it) {
    it->_private.merge = 1;
    for (uint32_t k = 0; k < includes_of(&it->_private); k++) { /* excludes have no cursor */
        it->_private.merge_at[k] = 0;
    }
}

/* True when entity index idx has a component of an exclude check (checks [from, count)). */
static bool excluded(const weft__iter_private_t *pv, uint32_t from, uint32_t idx) {
    uint32_t p = idx >> WEFT__SPARSE_SHIFT;
    for (uint32_t k = from; k < pv->check_count; k++) {
        const weft__iter_check_t *c = &pv->checks[k];
        if (p < c->pages && c->sparse[p] != NULL &&
            weft__sparse_get(c->sparse[p], idx & WEFT__SPARSE_MASK, c->sparse_wide) !=
                WEFT__ROW_NONE) {
            return true;
        }
    }
    return false;
}

/* Matches from driving row r on (r and at[] a match) whose rows step by one in every include
 * pool and that no exclude rejects, up to the chunk's end. */
static uint32_t in_step(const weft__iter_private_t *pv, uint32_t includes, uint32_t r,
                        const uint32_t *at) {
    enum { BLOCK = 64 }; /* rows compared per memcmp */
    uint32_t len = pv->end - r;
    const uint32_t *d = pv->drive_dense + r;
    for (uint32_t k = 0; k < includes && len != 0; k++) {
        const weft__iter_check_t *c = &pv->checks[k];
        uint32_t n = c->count - at[k] < len ? c->count - at[k] : len;
        const uint32_t *a = c->dense + at[k];
        uint32_t j = 0;
        while (j + BLOCK <= n && memcmp(a + j, d + j, BLOCK * sizeof(uint32_t)) == 0) {
            j += BLOCK;
        }
        while (j < n && a[j] == d[j]) {
            j++;
        }
        len = j;
    }
    if (includes < pv->check_count) {
        for (uint32_t j = 0; j < len; j++) {
            if (excluded(pv, includes, d[j])) {
                return j;
            }
        }
    }
    return len;
}

/* Hand out the batch: n entries from driving row `start` whose include rows run on from
 * first[k] (columns), or, when !run, the n entries collected in the block arrays. */
static bool emit(weft_iter_t *it, uint32_t includes, bool run, uint32_t start, uint32_t n,
                 const uint32_t *first, uint32_t *base) {
    weft__iter_private_t *pv = &it->_private;
    it->rows = n;
    it->entities = run ? pv->drive_dense + start : pv->block_ents;
    pv->blocked = !run;
    weft__query_drive_terms(it, start, run, base);
    for (uint32_t k = 0; k < includes; k++) {
        uint32_t t = pv->checks[k].term;
        if (run) {
            it->columns[t] = pv->terms[t].data + (size_t)first[k] * pv->terms[t].size;
            if (base != NULL) {
                base[t] = first[k];
            }
        } else {
            pv->terms[t].rows = pv->block_rows[k];
        }
    }
    return true;
}

bool weft__merge_join_next(weft_iter_t *it, uint32_t *base) {
    weft__iter_private_t *pv = &it->_private;
    const uint32_t includes = includes_of(pv);
    const uint32_t *dd = pv->drive_dense;
    uint32_t *at = pv->merge_at;
    uint32_t r = pv->row, end = pv->end, m = 0;
    while (r < end && m < WEFT__ITER_BLOCK) {
        uint32_t target = dd[r];
        for (uint32_t k = 0; k < includes;) { /* every pool's cursor onto target, or past */
            const weft__iter_check_t *c = &pv->checks[k];
            at[k] = gallop(c->dense, at[k], c->count, target, NULL);
            if (at[k] == c->count) {
                r = end; /* this pool has nothing further: no later match */
                goto out;
            }
            if (c->dense[at[k]] != target) { /* ahead: the driving cursor catches up */
                r = gallop(dd, r + 1u, end, c->dense[at[k]], NULL);
                if (r == end) {
                    goto out;
                }
                target = dd[r];
                k = 0;
                continue;
            }
            k++;
        }
        if (includes < pv->check_count && excluded(pv, includes, target)) {
            r++;
            continue;
        }
        if (m == 0) {
            uint32_t n = in_step(pv, includes, r, at);
            if (n >= MERGE_MIN_RUN) {
                uint32_t first[WEFT_QUERY_MAX_TERMS];
                for (uint32_t k = 0; k < includes; k++) {
                    first[k] = at[k];
                    at[k] += n;
                }
                pv->row = r + n;
                return emit(it, includes, true, r, n, first, base);
            }
        }
        pv->block_ents[m] = target;
        pv->block_drive[m] = r;
        for (uint32_t k = 0; k < includes; k++) {
            pv->block_rows[k][m] = at[k]++;
        }
        m++;
        r++;
    }
out:
    pv->row = r;
    if (m == 0) {
        it->rows = 0;
        return false;
    }
    return emit(it, includes, false, 0, m, NULL, base);
}
