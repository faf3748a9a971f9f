/* schedule.c: builds the system dependency graph from access sets, phases and before/after
 * constraints (see schedule.h for the design). Pure code: no world, no threads. */
#include "schedule.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/platform/alloc.h"
#include "jobs/platform/report.h"
#include "src/core/world.h"

/* ---- allocation --------------------------------------------------------- >>alloc */

/* Every scheduler allocation goes through the world's allocator hook directly (not
 * weft__alloc): command buffers grow on worker threads, and the hook is thread-safe by
 * contract while the world's byte counter is not. */
void *weft__sched_alloc(const weft_allocator_t *alloc, size_t size) {
    /* 64-byte alignment: counters and per-worker records are cache-line aligned. */
    return weft__hook_alloc(alloc, size ? size : 1u, 64);
}

void weft__sched_free(const weft_allocator_t *alloc, void *p, size_t size) {
    weft__hook_free(alloc, p, size ? size : 1u);
}

void weft__sched_populate(void *p, size_t size) { weft__populate(p, size); }

bool weft__sched_scratch(const weft_allocator_t *alloc, void **p, uint32_t *cap, uint32_t n,
                         size_t elem) {
    if (n <= *cap) {
        return true;
    }
    uint32_t c = *cap ? *cap : 64;
    while (c < n) {
        c *= 2;
    }
    void *q = weft__sched_alloc(alloc, c * elem);
    if (!q) {
        return false;
    }
    weft__sched_free(alloc, *p, *cap * elem);
    *p = q;
    *cap = c;
    return true;
}

/* ---- access conflicts ----------------------------------------------------- >>conflict */

/* Smallest id present in both sorted lists, or UINT32_MAX. */
static uint32_t first_common(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb) {
    uint32_t i = 0, j = 0;
    while (i < na && j < nb) {
        if (a[i] == b[j]) {
            return a[i];
        }
        if (a[i] < b[j]) {
            i++;
        } else {
            j++;
        }
    }
    return UINT32_MAX;
}

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* Write/write, write/read and read/write all conflict; read/read never does. The smallest
 * id is returned so the edge label is stable and reproducible. */
uint32_t weft__sched_conflict(const weft__sched_sys_t *a, const weft__sched_sys_t *b) {
    uint32_t c = first_common(a->writes, a->nwrites, b->writes, b->nwrites);
    c = min_u32(c, first_common(a->writes, a->nwrites, b->reads, b->nreads));
    return min_u32(c, first_common(a->reads, a->nreads, b->writes, b->nwrites));
}

/* ---- cycle check ------------------------------------------------------------ >>cycle */

/* Name one cycle among the nodes Kahn's algorithm could not place: every such node has an
 * unplaced predecessor, so walking predecessors must repeat a node. */
static weft_result_t report_cycle(const weft__sched_sys_t *systems, uint32_t n,
                                  const uint32_t *indeg, uint32_t *walk, const weft_logger_t *log) {
    uint32_t v = 0;
    while (v < n && indeg[v] == 0) {
        v++;
    }
    uint32_t len = 0;
    for (;;) {
        for (uint32_t k = 0; k < len; k++) {
            if (walk[k] != v) {
                continue;
            }
            /* walk[k..len) is the cycle, in "runs after" direction: print it reversed. */
            char msg[512];
            size_t at = 0;
            msg[0] = '\0';
            for (uint32_t m = len; m-- > k && at < sizeof msg;) {
                int w = snprintf(msg + at, sizeof msg - at, "'%s' -> ", systems[walk[m]].name);
                at += w > 0 ? (size_t)w : 0;
            }
            if (at < sizeof msg) {
                (void)snprintf(msg + at, sizeof msg - at, "'%s'", systems[walk[len - 1]].name);
            }
            return WEFT__FAIL(log, WEFT_ECYCLE, "before/after constraints form a cycle: %s", msg);
        }
        walk[len++] = v;
        const weft__sched_sys_t *s = &systems[v];
        for (uint32_t i = 0; i < s->nafter; i++) {
            if (indeg[s->after[i]] != 0) {
                v = s->after[i];
                break;
            }
        }
    }
}

static uint32_t count_after(const weft__sched_sys_t *sys, uint32_t n) {
    uint32_t a = 0;
    for (uint32_t v = 0; v < n; v++) {
        a += sys[v].nafter;
    }
    return a;
}

/* The reverse of the "after" lists as CSR: users[first[t]..first[t + 1]) are the systems that
 * list t, ascending. first has n + 1 entries, users one per "after" entry. */
static void reverse_after(const weft__sched_sys_t *sys, uint32_t n, uint32_t *first,
                          uint32_t *users) {
    memset(first, 0, ((size_t)n + 1) * sizeof *first);
    for (uint32_t v = 0; v < n; v++) {
        for (uint32_t i = 0; i < sys[v].nafter; i++) {
            first[sys[v].after[i] + 1]++;
        }
    }
    for (uint32_t t = 0; t < n; t++) {
        first[t + 1] += first[t];
    }
    for (uint32_t v = 0; v < n; v++) {
        for (uint32_t i = 0; i < sys[v].nafter; i++) {
            users[first[sys[v].after[i]]++] = v;
        }
    }
    for (uint32_t t = n; t > 0; t--) { /* the fill moved each start to the next one's */
        first[t] = first[t - 1];
    }
    first[0] = 0;
}

/* The check itself, over caller scratch: indeg, stack and walk of n entries each, and the
 * reverse "after" lists (reverse_after) in first/users. */
static weft_result_t check_cycles_in(const weft__sched_sys_t *systems, uint32_t n,
                                     const uint32_t *first, const uint32_t *users, uint32_t *indeg,
                                     uint32_t *stack, uint32_t *walk, const weft_logger_t *log) {
    /* A constraint against the phase order is a cycle through the phase barrier. */
    for (uint32_t v = 0; v < n; v++) {
        const weft__sched_sys_t *s = &systems[v];
        for (uint32_t i = 0; i < s->nafter; i++) {
            const weft__sched_sys_t *t = &systems[s->after[i]];
            if (t->phase > s->phase) {
                return WEFT__FAIL(log, WEFT_ECYCLE,
                                  "'%s' (phase %u) must run after '%s' (phase %u), but phases "
                                  "run in ascending order",
                                  s->name, s->phase, t->name, t->phase);
            }
        }
    }
    /* indeg[v] = number of distinct systems v must follow that are not yet placed. Kahn
     * over "after" edges: placing t releases every s that lists t. O(n + constraints). The
     * set left unplaced does not depend on the placing order, so neither does the message. */
    uint32_t top = 0, placed = 0;
    for (uint32_t v = 0; v < n; v++) {
        indeg[v] = systems[v].nafter;
        if (indeg[v] == 0) {
            stack[top++] = v;
        }
    }
    while (top > 0) {
        uint32_t t = stack[--top];
        placed++;
        for (uint32_t k = first[t]; k < first[t + 1]; k++) {
            if (--indeg[users[k]] == 0) {
                stack[top++] = users[k];
            }
        }
    }
    return placed == n ? WEFT_OK : report_cycle(systems, n, indeg, walk, log);
}

/* Registration-time check, so a cycle is reported once, naming its systems, instead of
 * failing every frame. Phase violations are checked first: they are cycles through the phase
 * barrier and deserve their own message. */
weft_result_t weft__sched_check_cycles(const weft__sched_sys_t *systems, uint32_t n,
                                       const weft_allocator_t *alloc, const weft_logger_t *log) {
    size_t bytes = ((size_t)n * 4 + 1 + count_after(systems, n)) * sizeof(uint32_t);
    uint32_t *indeg = weft__sched_alloc(alloc, bytes);
    if (!indeg) {
        return WEFT__FAIL(log, WEFT_ENOMEM, "schedule: out of memory checking constraints");
    }
    uint32_t *stack = indeg + n, *walk = stack + n, *first = walk + n, *users = first + n + 1;
    reverse_after(systems, n, first, users);
    weft_result_t r = check_cycles_in(systems, n, first, users, indeg, stack, walk, log);
    weft__sched_free(alloc, indeg, bytes);
    return r;
}

/* ---- graph build ------------------------------------------------------------ >>build */

typedef uint64_t word_t;

static bool bit_get(const word_t *row, uint32_t i) { return (row[i >> 6] >> (i & 63)) & 1u; }
static void bit_set(word_t *row, uint32_t i) { row[i >> 6] |= (word_t)1 << (i & 63); }

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Min-heap of registration indices: the ready systems of compute_order. */
static void heap_push(uint32_t *h, uint32_t *len, uint32_t v) {
    uint32_t i = (*len)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static uint32_t heap_pop(uint32_t *h, uint32_t *len) {
    uint32_t top = h[0], v = h[--*len], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= *len) {
            break;
        }
        c += c + 1 < *len && h[c + 1] < h[c];
        if (h[c] >= v) {
            break;
        }
        h[i] = h[c];
        i = c;
    }
    h[i] = v; /* when the heap is now empty this writes the freed slot: harmless */
    return top;
}

/* Scratch of one build, one allocation sized up front from the system count n, the access
 * entries k and the constraints a (candidate edges are at most 2k + a). */
typedef struct build {
    const weft__sched_sys_t *sys;
    uint32_t n;
    uint64_t *keys;            /* [n] (phase << 32 | index), sorted */
    uint32_t *order, *pos;     /* [n] run position <-> system index */
    uint32_t *rfirst, *rusers; /* [n + 1], [a] reverse "after" lists (reverse_after) */
    uint32_t *indeg, *heap;    /* [n] Kahn state of compute_order */
    uint32_t ncomp;            /* component ids are below this */
    uint32_t *cfirst, *cacc;   /* [ncomp + 1], [k] accesses by component: pos << 1 | write */
    uint32_t *since;           /* [k] reads since the component's last write */
    uint32_t *esrc, *edst;     /* [2k + a] candidate edges (run positions) */
    uint32_t nedges;           /* candidate edges emitted */
    uint32_t *sfirst, *sdst;   /* [n + 1], [2k + a] successors by run position */
    uint32_t *parent, *start;  /* [n], [n + 1] weakly connected pieces */
    uint32_t *members, *lid;   /* [n] run positions by piece; rank inside its piece */
    uint8_t *kept;             /* [2k + a] sdst entry survives the reduction */
} build_t;

/* Run order: phases ascending (stable), then inside each phase Kahn over in-phase "after"
 * edges, always taking the ready system with the smallest registration index.
 * O(n log n + constraints). */
static void compute_order(build_t *b) {
    const weft__sched_sys_t *sys = b->sys;
    uint32_t n = b->n, at = 0;
    for (uint32_t v = 0; v < n; v++) {
        b->keys[v] = (uint64_t)sys[v].phase << 32 | v;
    }
    if (n > 1) {
        qsort(b->keys, n, sizeof *b->keys, cmp_u64);
    }
    for (uint32_t a = 0; a < n;) {
        uint32_t phase = (uint32_t)(b->keys[a] >> 32), end = a, len = 0;
        while (end < n && (uint32_t)(b->keys[end] >> 32) == phase) {
            end++;
        }
        for (uint32_t k = a; k < end; k++) {
            uint32_t v = (uint32_t)b->keys[k];
            b->indeg[v] = 0;
            for (uint32_t i = 0; i < sys[v].nafter; i++) {
                b->indeg[v] += sys[sys[v].after[i]].phase == phase;
            }
            if (b->indeg[v] == 0) {
                heap_push(b->heap, &len, v);
            }
        }
        while (len > 0) { /* cycles were rejected before, so the phase empties */
            uint32_t v = heap_pop(b->heap, &len);
            b->order[at++] = v;
            for (uint32_t k = b->rfirst[v]; k < b->rfirst[v + 1]; k++) {
                uint32_t w = b->rusers[k];
                if (sys[w].phase == phase && --b->indeg[w] == 0) {
                    heap_push(b->heap, &len, w);
                }
            }
        }
        a = end;
    }
    for (uint32_t p = 0; p < n; p++) {
        b->pos[b->order[p]] = p;
    }
}

static void emit(build_t *b, uint32_t from, uint32_t to) {
    b->esrc[b->nedges] = from;
    b->edst[b->nedges++] = to;
}

/* Candidate edges whose transitive closure equals that of "every conflicting or constrained
 * same-phase pair": per component, in run order, a reader follows the last writer and a
 * writer follows the last writer and every reader since (an earlier access reaches those
 * through the chain of writers). Found through per-component access lists, O(accesses). */
static void candidate_edges(build_t *b) {
    const weft__sched_sys_t *sys = b->sys;
    uint32_t n = b->n;
    memset(b->cfirst, 0, ((size_t)b->ncomp + 1) * sizeof *b->cfirst);
    for (uint32_t v = 0; v < n; v++) {
        for (uint32_t i = 0; i < sys[v].nreads; i++) {
            b->cfirst[sys[v].reads[i] + 1]++;
        }
        for (uint32_t i = 0; i < sys[v].nwrites; i++) {
            b->cfirst[sys[v].writes[i] + 1]++;
        }
    }
    for (uint32_t c = 0; c < b->ncomp; c++) {
        b->cfirst[c + 1] += b->cfirst[c];
    }
    for (uint32_t p = 0; p < n; p++) { /* by run position, so each list is in run order */
        const weft__sched_sys_t *s = &sys[b->order[p]];
        for (uint32_t i = 0; i < s->nreads; i++) {
            b->cacc[b->cfirst[s->reads[i]]++] = p << 1;
        }
        for (uint32_t i = 0; i < s->nwrites; i++) {
            b->cacc[b->cfirst[s->writes[i]]++] = p << 1 | 1u;
        }
    }
    uint32_t begin = 0;
    for (uint32_t c = 0; c < b->ncomp; c++) {
        uint32_t end = b->cfirst[c], lastw = UINT32_MAX, nsince = 0, phase = 0;
        for (uint32_t k = begin; k < end; k++) {
            uint32_t p = b->cacc[k] >> 1;
            if (k == begin || sys[b->order[p]].phase != phase) { /* phases are barriers */
                phase = sys[b->order[p]].phase;
                lastw = UINT32_MAX;
                nsince = 0;
            }
            if (lastw != UINT32_MAX) {
                emit(b, lastw, p);
            }
            if (b->cacc[k] & 1u) {
                for (uint32_t r = 0; r < nsince; r++) {
                    emit(b, b->since[r], p);
                }
                nsince = 0;
                lastw = p;
            } else {
                b->since[nsince++] = p;
            }
        }
        begin = end;
    }
    for (uint32_t v = 0; v < n; v++) {
        for (uint32_t i = 0; i < sys[v].nafter; i++) {
            uint32_t u = sys[v].after[i];
            if (sys[u].phase == sys[v].phase) {
                emit(b, b->pos[u], b->pos[v]);
            }
        }
    }
}

/* Candidate edges as successor lists by run position, ascending and without duplicates. */
static void successor_lists(build_t *b) {
    uint32_t n = b->n;
    memset(b->sfirst, 0, ((size_t)n + 1) * sizeof *b->sfirst);
    for (uint32_t k = 0; k < b->nedges; k++) {
        b->sfirst[b->esrc[k] + 1]++;
    }
    for (uint32_t p = 0; p < n; p++) {
        b->sfirst[p + 1] += b->sfirst[p];
    }
    for (uint32_t k = 0; k < b->nedges; k++) {
        b->sdst[b->sfirst[b->esrc[k]]++] = b->edst[k];
    }
    uint32_t out = 0, begin = 0;
    for (uint32_t p = 0; p < n; p++) { /* sfirst[p] is now where p's list ends */
        uint32_t end = b->sfirst[p];
        if (end - begin > 1) {
            qsort(b->sdst + begin, end - begin, sizeof *b->sdst, cmp_u32);
        }
        b->sfirst[p] = out;
        for (uint32_t k = begin; k < end; k++) {
            if (k == begin || b->sdst[k] != b->sdst[k - 1]) {
                b->sdst[out++] = b->sdst[k];
            }
        }
        begin = end;
    }
    b->sfirst[n] = out;
}

static uint32_t uf_find(uint32_t *parent, uint32_t v) {
    while (parent[v] != v) {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    return v;
}

/* Split the candidate graph into weakly connected pieces: members lists each piece's run
 * positions ascending from start[root], lid the rank inside it. Returns the most bitset words
 * one piece's reachability needs (m rows of ceil(m / 64) words). */
static size_t split_pieces(build_t *b) {
    uint32_t n = b->n;
    for (uint32_t p = 0; p < n; p++) {
        b->parent[p] = p;
    }
    for (uint32_t p = 0; p < n; p++) {
        for (uint32_t k = b->sfirst[p]; k < b->sfirst[p + 1]; k++) {
            uint32_t x = uf_find(b->parent, p), y = uf_find(b->parent, b->sdst[k]);
            b->parent[x > y ? x : y] = x < y ? x : y;
        }
    }
    memset(b->start, 0, ((size_t)n + 1) * sizeof *b->start);
    for (uint32_t p = 0; p < n; p++) {
        b->parent[p] = uf_find(b->parent, p);
        b->start[b->parent[p] + 1]++;
    }
    size_t most = 0;
    for (uint32_t r = 0; r < n; r++) {
        size_t m = b->start[r + 1], words = m * ((m + 63) / 64);
        most = words > most ? words : most;
        b->start[r + 1] += b->start[r];
    }
    uint32_t *filled = b->indeg; /* free after compute_order: members placed per piece */
    memset(filled, 0, (size_t)n * sizeof *filled);
    for (uint32_t p = 0; p < n; p++) {
        uint32_t r = b->parent[p];
        b->lid[p] = filled[r]++;
        b->members[b->start[r] + b->lid[p]] = p;
    }
    return most;
}

/* Transitive reduction of one piece, the successors of each system walked in run order from
 * the back: a successor already reachable through an earlier kept one is redundant (anything
 * reaching q sits before q in the run order). Returns the edges kept. */
static uint32_t reduce_piece(build_t *b, uint32_t root, word_t *reach) {
    uint32_t first = b->start[root], m = b->start[root + 1] - first, kept = 0;
    size_t words = ((size_t)m + 63) / 64;
    memset(reach, 0, (size_t)m * words * sizeof *reach);
    for (uint32_t i = m; i-- > 0;) {
        uint32_t p = b->members[first + i];
        word_t *rp = reach + (size_t)i * words;
        for (uint32_t k = b->sfirst[p]; k < b->sfirst[p + 1]; k++) {
            uint32_t q = b->lid[b->sdst[k]];
            b->kept[k] = !bit_get(rp, q);
            if (!b->kept[k]) {
                continue;
            }
            kept++;
            bit_set(rp, q);
            const word_t *rq = reach + (size_t)q * words;
            for (size_t w = q >> 6; w < words; w++) { /* q reaches only later positions */
                rp[w] |= rq[w];
            }
        }
    }
    return kept;
}

/* Lay the scratch out in one block; returns its size (call with base NULL to size it). */
static size_t build_layout(build_t *b, void *base, uint32_t k, uint32_t a) {
    size_t n = b->n, e = 2 * (size_t)k + a, at = 0;
    uint8_t *p = base;
#define TAKE(field, count)                        \
    do {                                          \
        b->field = (void *)(p ? p + at : NULL);   \
        at += (size_t)(count) * sizeof *b->field; \
        at = (at + 7) & ~(size_t)7;               \
    } while (0)
    TAKE(keys, n);
    TAKE(order, n);
    TAKE(pos, n);
    TAKE(rfirst, n + 1);
    TAKE(rusers, a);
    TAKE(indeg, n);
    TAKE(heap, n);
    TAKE(cfirst, (size_t)b->ncomp + 1);
    TAKE(cacc, k);
    TAKE(since, k);
    TAKE(esrc, e);
    TAKE(edst, e);
    TAKE(sfirst, n + 1);
    TAKE(sdst, e);
    TAKE(parent, n);
    TAKE(start, n + 1);
    TAKE(members, n);
    TAKE(lid, n);
    TAKE(kept, e);
#undef TAKE
    return at;
}

/* Edges only join systems of the same phase: the barrier already orders phases, and keeping
 * cross-phase edges out keeps each phase's submit self-contained. */
weft_result_t weft__graph_build(const weft__sched_sys_t *sys, uint32_t n,
                                const weft_allocator_t *alloc, const weft_logger_t *log,
                                weft__graph_t *out) {
    build_t b = {.sys = sys, .n = n};
    uint32_t k = 0;
    for (uint32_t v = 0; v < n; v++) {
        k += sys[v].nreads + sys[v].nwrites;
        for (uint32_t i = 0; i < sys[v].nreads; i++) {
            b.ncomp = sys[v].reads[i] >= b.ncomp ? sys[v].reads[i] + 1 : b.ncomp;
        }
        for (uint32_t i = 0; i < sys[v].nwrites; i++) {
            b.ncomp = sys[v].writes[i] >= b.ncomp ? sys[v].writes[i] + 1 : b.ncomp;
        }
    }
    uint32_t a = count_after(sys, n);
    size_t scratch_bytes = build_layout(&b, NULL, k, a);
    void *scratch = weft__sched_alloc(alloc, scratch_bytes);
    if (!scratch) {
        return WEFT__FAIL(log, WEFT_ENOMEM, "schedule: out of memory building the graph");
    }
    (void)build_layout(&b, scratch, k, a);
    reverse_after(sys, n, b.rfirst, b.rusers);
    weft_result_t r = check_cycles_in(sys, n, b.rfirst, b.rusers, b.indeg, b.heap, b.parent, log);
    if (r != WEFT_OK) {
        weft__sched_free(alloc, scratch, scratch_bytes);
        return r;
    }
    compute_order(&b);
    candidate_edges(&b);
    successor_lists(&b);
    size_t reach_words = split_pieces(&b);
    word_t *reach = weft__sched_alloc(alloc, reach_words * sizeof *reach);
    if (!reach) {
        weft__sched_free(alloc, scratch, scratch_bytes);
        return WEFT__FAIL(log, WEFT_ENOMEM, "schedule: out of memory building the graph");
    }
    uint32_t nedges = 0;
    for (uint32_t root = 0; root < n; root++) {
        if (b.start[root + 1] - b.start[root] > 1) {
            nedges += reduce_piece(&b, root, reach);
        }
    }
    weft__sched_free(alloc, reach, reach_words * sizeof *reach);

    uint32_t nphases = 0;
    for (uint32_t p = 0; p < n; p++) {
        if (p == 0 || sys[b.order[p]].phase != sys[b.order[p - 1]].phase) {
            nphases++;
        }
    }
    size_t count = (size_t)n * 4 + 1 + 2 * (size_t)nedges + nphases + 1;
    size_t block_size = count * sizeof(uint32_t);
    uint32_t *block = weft__sched_alloc(alloc, block_size);
    if (!block) {
        weft__sched_free(alloc, scratch, scratch_bytes);
        return WEFT__FAIL(log, WEFT_ENOMEM, "schedule: out of memory building the graph");
    }
    weft__graph_t g = {
        .n = n, .nphases = nphases, .nedges = nedges, .block = block, .block_size = block_size};
    g.order = block;
    g.pos = g.order + n;
    g.pred_first = g.pos + n;
    g.succ_count = g.pred_first + n + 1;
    g.preds = g.succ_count + n;
    g.pred_label = g.preds + nedges;
    g.phase_first = g.pred_label + nedges;
    memcpy(g.order, b.order, n * sizeof(uint32_t));
    memcpy(g.pos, b.pos, n * sizeof(uint32_t));
    memset(g.succ_count, 0, n * sizeof(uint32_t));

    /* Predecessor lists by system index, in run-position order of the predecessor: count,
     * then fill walking predecessors by ascending run position. */
    memset(g.pred_first, 0, ((size_t)n + 1) * sizeof(uint32_t));
    for (uint32_t k2 = 0; k2 < b.sfirst[n]; k2++) {
        g.pred_first[b.order[b.sdst[k2]] + 1] += b.kept[k2];
    }
    for (uint32_t v = 0; v < n; v++) {
        g.pred_first[v + 1] += g.pred_first[v];
    }
    uint32_t *fill = b.indeg; /* free again: per system, the next free slot of its list */
    memcpy(fill, g.pred_first, n * sizeof(uint32_t));
    for (uint32_t p = 0; p < n; p++) {
        uint32_t u = b.order[p];
        for (uint32_t k2 = b.sfirst[p]; k2 < b.sfirst[p + 1]; k2++) {
            if (!b.kept[k2]) {
                continue;
            }
            uint32_t v = b.order[b.sdst[k2]], e = fill[v]++;
            uint32_t c = weft__sched_conflict(&sys[u], &sys[v]);
            g.preds[e] = u;
            g.pred_label[e] = c != UINT32_MAX ? c : WEFT__EDGE_CONSTRAINT;
            g.succ_count[u]++;
        }
    }
    uint32_t ph = 0;
    for (uint32_t p = 0; p < n; p++) {
        if (p == 0 || sys[b.order[p]].phase != sys[b.order[p - 1]].phase) {
            g.phase_first[ph++] = p;
        }
    }
    g.phase_first[nphases] = n;
    weft__sched_free(alloc, scratch, scratch_bytes);
    *out = g;
    return WEFT_OK;
}

void weft__graph_free(weft__graph_t *g, const weft_allocator_t *alloc) {
    if (g->block) {
        weft__sched_free(alloc, g->block, g->block_size);
    }
    memset(g, 0, sizeof *g);
}
