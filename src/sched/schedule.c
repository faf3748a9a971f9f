/* schedule.c: builds the system dependency graph from access sets, phases and before/after
 * constraints (see schedule.h for the design). Pure code: no world, no threads. */
#include "schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/platform/alloc.h"
#include "jobs/platform/report.h"

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

static bool has_after(const weft__sched_sys_t *s, uint32_t idx) {
    for (uint32_t i = 0; i < s->nafter; i++) {
        if (s->after[i] == idx) {
            return true;
        }
    }
    return false;
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

/* Registration-time check, so a cycle is reported once, naming its systems, instead of
 * failing every frame. Phase violations are checked first: they are cycles through the phase
 * barrier and deserve their own message. */
weft_result_t weft__sched_check_cycles(const weft__sched_sys_t *systems, uint32_t n,
                                       const weft_allocator_t *alloc, const weft_logger_t *log) {
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
    size_t bytes = (size_t)n * 3 * sizeof(uint32_t);
    uint32_t *indeg = weft__sched_alloc(alloc, bytes);
    if (!indeg) {
        return WEFT__FAIL(log, WEFT_ENOMEM, "schedule: out of memory checking constraints");
    }
    uint32_t *stack = indeg + n, *walk = indeg + 2 * (size_t)n;
    /* indeg[v] = number of distinct systems v must follow that are not yet placed. Kahn
     * over "after" edges: placing t releases every s that lists t. O(n * constraints). */
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
        for (uint32_t v = 0; v < n; v++) {
            const weft__sched_sys_t *s = &systems[v];
            for (uint32_t i = 0; i < s->nafter; i++) {
                if (s->after[i] == t && --indeg[v] == 0) {
                    stack[top++] = v;
                }
            }
        }
    }
    weft_result_t r = WEFT_OK;
    if (placed != n) {
        r = report_cycle(systems, n, indeg, walk, log);
    }
    weft__sched_free(alloc, indeg, bytes);
    return r;
}

/* ---- graph build ------------------------------------------------------------ >>build */

typedef uint64_t word_t;

static bool bit_get(const word_t *row, uint32_t i) { return (row[i >> 6] >> (i & 63)) & 1u; }
static void bit_set(word_t *row, uint32_t i) { row[i >> 6] |= (word_t)1 << (i & 63); }

/* Run order: phases ascending (stable), then inside each phase Kahn over in-phase "after"
 * edges, always taking the ready system with the smallest registration index. O(n^2). */
static void compute_order(const weft__sched_sys_t *sys, uint32_t n, uint32_t *order,
                          uint32_t *indeg, uint8_t *done) {
    uint32_t at = 0;
    uint32_t phase = 0;
    bool have_phase = true;
    while (have_phase) {
        /* The smallest phase not yet placed. */
        have_phase = false;
        for (uint32_t v = 0; v < n; v++) {
            if (!done[v] && (!have_phase || sys[v].phase < phase)) {
                phase = sys[v].phase;
                have_phase = true;
            }
        }
        if (!have_phase) {
            break;
        }
        for (uint32_t v = 0; v < n; v++) {
            indeg[v] = 0;
            if (sys[v].phase != phase) {
                continue;
            }
            for (uint32_t i = 0; i < sys[v].nafter; i++) {
                if (sys[sys[v].after[i]].phase == phase && !done[sys[v].after[i]]) {
                    indeg[v]++;
                }
            }
        }
        for (;;) {
            uint32_t pick = UINT32_MAX;
            for (uint32_t v = 0; v < n && pick == UINT32_MAX; v++) {
                if (!done[v] && sys[v].phase == phase && indeg[v] == 0) {
                    pick = v;
                }
            }
            if (pick == UINT32_MAX) {
                break; /* phase complete (cycles were rejected at registration) */
            }
            done[pick] = 1;
            order[at++] = pick;
            for (uint32_t v = 0; v < n; v++) {
                if (!done[v] && sys[v].phase == phase && has_after(&sys[v], pick)) {
                    indeg[v]--;
                }
            }
        }
    }
}

/* Edges only join systems of the same phase: the barrier already orders phases, and keeping
 * cross-phase edges out keeps each phase's submit self-contained. Reachability bitsets cost
 * n^2 bits (128 KiB for 1024 systems) and are freed before returning. */
weft_result_t weft__graph_build(const weft__sched_sys_t *sys, uint32_t n,
                                const weft_allocator_t *alloc, const weft_logger_t *log,
                                weft__graph_t *out) {
    weft_result_t r = weft__sched_check_cycles(sys, n, alloc, log);
    if (r != WEFT_OK) {
        return r;
    }
    size_t words = ((size_t)n + 63) / 64;
    size_t scratch_bytes =
        2 * (size_t)n * words * sizeof(word_t) + (size_t)n * 3 * sizeof(uint32_t) + (size_t)n;
    word_t *adj = weft__sched_alloc(alloc, scratch_bytes);
    if (!adj) {
        return WEFT__FAIL(log, WEFT_ENOMEM, "schedule: out of memory building the graph");
    }
    memset(adj, 0, scratch_bytes);
    word_t *reach = adj + (size_t)n * words;
    uint32_t *order = (uint32_t *)(reach + (size_t)n * words);
    uint32_t *pos = order + n, *indeg = pos + n;
    uint8_t *done = (uint8_t *)(indeg + n);
    compute_order(sys, n, order, indeg, done);
    for (uint32_t p = 0; p < n; p++) {
        pos[order[p]] = p;
    }

    /* Full edge set by run position, then reachability from the back. */
    for (uint32_t p = 0; p < n; p++) {
        const weft__sched_sys_t *a = &sys[order[p]];
        for (uint32_t q = p + 1; q < n && sys[order[q]].phase == a->phase; q++) {
            const weft__sched_sys_t *b = &sys[order[q]];
            if (weft__sched_conflict(a, b) != UINT32_MAX || has_after(b, order[p])) {
                bit_set(adj + (size_t)p * words, q);
            }
        }
    }
    uint32_t nedges = 0;
    for (uint32_t p = n; p-- > 0;) {
        word_t *rp = reach + (size_t)p * words;
        word_t *ap = adj + (size_t)p * words;
        /* Successors ascending: a successor already reachable through an earlier kept one is
         * redundant (anything reaching q sits before q in the run order). */
        for (uint32_t q = p + 1; q < n; q++) {
            if (!bit_get(ap, q)) {
                continue;
            }
            if (bit_get(rp, q)) {
                ap[q >> 6] &= ~((word_t)1 << (q & 63));
                continue;
            }
            nedges++;
            bit_set(rp, q);
            const word_t *rq = reach + (size_t)q * words;
            for (size_t w = 0; w < words; w++) {
                rp[w] |= rq[w];
            }
        }
    }

    uint32_t nphases = 0;
    for (uint32_t p = 0; p < n; p++) {
        if (p == 0 || sys[order[p]].phase != sys[order[p - 1]].phase) {
            nphases++;
        }
    }
    size_t count = (size_t)n * 4 + 1 + 2 * (size_t)nedges + nphases + 1;
    size_t block_size = count * sizeof(uint32_t);
    uint32_t *block = weft__sched_alloc(alloc, block_size);
    if (!block) {
        weft__sched_free(alloc, adj, scratch_bytes);
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
    memcpy(g.order, order, n * sizeof(uint32_t));
    memcpy(g.pos, pos, n * sizeof(uint32_t));
    memset(g.succ_count, 0, n * sizeof(uint32_t));

    /* Predecessor lists by system index, in run-position order of the predecessor. */
    uint32_t e = 0;
    for (uint32_t v = 0; v < n; v++) {
        g.pred_first[v] = e;
        uint32_t q = pos[v];
        for (uint32_t p = 0; p < q; p++) {
            if (!bit_get(adj + (size_t)p * words, q)) {
                continue;
            }
            uint32_t c = weft__sched_conflict(&sys[order[p]], &sys[v]);
            g.preds[e] = order[p];
            g.pred_label[e] = c != UINT32_MAX ? c : WEFT__EDGE_CONSTRAINT;
            g.succ_count[order[p]]++;
            e++;
        }
    }
    g.pred_first[n] = e;
    uint32_t ph = 0;
    for (uint32_t p = 0; p < n; p++) {
        if (p == 0 || sys[order[p]].phase != sys[order[p - 1]].phase) {
            g.phase_first[ph++] = p;
        }
    }
    g.phase_first[nphases] = n;
    weft__sched_free(alloc, adj, scratch_bytes);
    *out = g;
    return WEFT_OK;
}

void weft__graph_free(weft__graph_t *g, const weft_allocator_t *alloc) {
    if (g->block) {
        weft__sched_free(alloc, g->block, g->block_size);
    }
    memset(g, 0, sizeof *g);
}
