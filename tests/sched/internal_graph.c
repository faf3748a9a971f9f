/* internal_graph.c: the graph builder (src/sched/schedule.c, conflicts through per-component
 * access lists and a reduction per weakly connected piece) gives exactly the graph of the
 * quadratic reference below (every same-phase pair tested, reachability over the whole
 * schedule) on random system sets: same run order, same reduced edges in the same order with
 * the same labels, same phases. The seed is printed; set WEFT_SEED to replay one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "sched_fixture.h"
#include "src/sched/schedule.h"

TestSuite(graph_builder, .timeout = 120);

/* ---- the reference: the builder as it was before per-component lists ---- */

static uint32_t ref_common(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb) {
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < na; i++) {
        for (uint32_t j = 0; j < nb; j++) {
            best = a[i] == b[j] && a[i] < best ? a[i] : best;
        }
    }
    return best;
}

static uint32_t ref_conflict(const weft__sched_sys_t *a, const weft__sched_sys_t *b) {
    uint32_t c = ref_common(a->writes, a->nwrites, b->writes, b->nwrites);
    uint32_t d = ref_common(a->writes, a->nwrites, b->reads, b->nreads);
    uint32_t e = ref_common(a->reads, a->nreads, b->writes, b->nwrites);
    c = d < c ? d : c;
    return e < c ? e : c;
}

static bool ref_after(const weft__sched_sys_t *s, uint32_t idx) {
    for (uint32_t i = 0; i < s->nafter; i++) {
        if (s->after[i] == idx) {
            return true;
        }
    }
    return false;
}

typedef struct ref_graph {
    uint32_t n;
    uint32_t *order; /* [n] */
    uint8_t *edge;   /* [n * n] reduced edge between run positions p -> q */
} ref_graph_t;

static void ref_build(const weft__sched_sys_t *sys, uint32_t n, ref_graph_t *g) {
    g->n = n;
    g->order = calloc(n + 1, sizeof *g->order);
    g->edge = calloc((size_t)n * n + 1, 1);
    uint8_t *done = calloc(n + 1, 1), *reach = calloc((size_t)n * n + 1, 1);
    uint32_t *indeg = calloc(n + 1, sizeof *indeg);
    cr_assert(g->order && g->edge && done && reach && indeg);
    /* Phases ascending; inside one, the ready system with the smallest index first. */
    uint32_t at = 0;
    while (at < n) {
        uint32_t phase = UINT32_MAX;
        for (uint32_t v = 0; v < n; v++) {
            phase = !done[v] && sys[v].phase < phase ? sys[v].phase : phase;
        }
        for (;;) {
            uint32_t pick = UINT32_MAX;
            for (uint32_t v = 0; v < n && pick == UINT32_MAX; v++) {
                if (done[v] || sys[v].phase != phase) {
                    continue;
                }
                bool ready = true;
                for (uint32_t i = 0; i < sys[v].nafter; i++) {
                    uint32_t u = sys[v].after[i];
                    ready = ready && (sys[u].phase != phase || done[u]);
                }
                pick = ready ? v : pick;
            }
            if (pick == UINT32_MAX) {
                break;
            }
            done[pick] = 1;
            g->order[at++] = pick;
        }
    }
    /* Every conflicting or constrained same-phase pair, then the reduction from the back. */
    for (uint32_t p = 0; p < n; p++) {
        for (uint32_t q = p + 1; q < n; q++) {
            const weft__sched_sys_t *a = &sys[g->order[p]], *b = &sys[g->order[q]];
            g->edge[(size_t)p * n + q] =
                a->phase == b->phase &&
                (ref_conflict(a, b) != UINT32_MAX || ref_after(b, g->order[p]));
        }
    }
    for (uint32_t p = n; p-- > 0;) {
        for (uint32_t q = p + 1; q < n; q++) {
            if (!g->edge[(size_t)p * n + q]) {
                continue;
            }
            if (reach[(size_t)p * n + q]) {
                g->edge[(size_t)p * n + q] = 0;
                continue;
            }
            reach[(size_t)p * n + q] = 1;
            for (uint32_t w = 0; w < n; w++) {
                reach[(size_t)p * n + w] |= reach[(size_t)q * n + w];
            }
        }
    }
    free(done);
    free(reach);
    free(indeg);
}

/* ---- random system sets ---- */

typedef struct rnd_set {
    uint32_t n;
    weft__sched_sys_t *sys;
    uint32_t (*lists)[3][8]; /* reads, writes, after per system */
    char (*names)[16];
} rnd_set_t;

static uint64_t rnd_next(uint64_t *state) {
    *state += 0x9e3779b97f4a7c15ull;
    return fixture_mix(*state);
}

/* n systems over `ncomp` components in up to `nphase` phases; constraints only point to
 * systems earlier in a hidden random rank (and not to a later phase), so there is no cycle. */
static void rnd_make(rnd_set_t *r, uint64_t *st, uint32_t n, uint32_t ncomp, uint32_t nphase) {
    r->n = n;
    r->sys = calloc(n, sizeof *r->sys);
    r->lists = calloc(n, sizeof *r->lists);
    r->names = calloc(n, sizeof *r->names);
    uint32_t *rank = calloc(n, sizeof *rank);
    cr_assert(r->sys && r->lists && r->names && rank);
    for (uint32_t v = 0; v < n; v++) {
        rank[v] = (uint32_t)(rnd_next(st) % (n * 4u));
    }
    for (uint32_t v = 0; v < n; v++) {
        weft__sched_sys_t *s = &r->sys[v];
        snprintf(r->names[v], sizeof r->names[v], "s%u", v);
        s->name = r->names[v];
        s->phase = (uint32_t)(rnd_next(st) % nphase) * 10;
        uint32_t nw = (uint32_t)(rnd_next(st) % 3), nr = (uint32_t)(rnd_next(st) % 4);
        for (uint32_t id = 1; id <= ncomp; id++) { /* sorted by construction */
            uint64_t x = rnd_next(st) % ncomp;
            if (x < nw && s->nwrites < 8) {
                r->lists[v][1][s->nwrites++] = id;
            } else if (x < nw + nr && s->nreads < 8) {
                r->lists[v][0][s->nreads++] = id;
            }
        }
        uint32_t na = (uint32_t)(rnd_next(st) % 4);
        for (uint32_t t = 0; t < na * 3 && s->nafter < na; t++) {
            uint32_t u = (uint32_t)(rnd_next(st) % n);
            bool dup = false;
            for (uint32_t i = 0; i < s->nafter; i++) {
                dup = dup || r->lists[v][2][i] == u;
            }
            if (!dup && u != v && rank[u] < rank[v] && r->sys[u].phase <= s->phase &&
                (u < v || rnd_next(st) % 2)) {
                r->lists[v][2][s->nafter++] = u;
            }
        }
        s->reads = r->lists[v][0];
        s->writes = r->lists[v][1];
        s->after = r->lists[v][2];
    }
    /* Later systems' phases were drawn after some constraints were checked: drop any edge
     * that now points to a later phase (rank keeps the rest acyclic). */
    for (uint32_t v = 0; v < n; v++) {
        weft__sched_sys_t *s = &r->sys[v];
        uint32_t kept = 0;
        for (uint32_t i = 0; i < s->nafter; i++) {
            if (r->sys[s->after[i]].phase <= s->phase) {
                r->lists[v][2][kept++] = s->after[i];
            }
        }
        s->nafter = kept;
    }
    free(rank);
}

static void rnd_free(rnd_set_t *r) {
    free(r->sys);
    free(r->lists);
    free(r->names);
}

/* The built graph equals the reference; returns the reduced edge count. */
static uint32_t check_same(const weft__sched_sys_t *sys, uint32_t n, uint64_t seed, int round) {
    weft_allocator_t alloc = {0};
    weft__graph_t g;
    cr_assert(eq(int, weft__graph_build(sys, n, &alloc, NULL, &g), WEFT_OK),
              "seed %llu round %d: build failed", (unsigned long long)seed, round);
    ref_graph_t ref;
    ref_build(sys, n, &ref);
    uint32_t edges = 0;
    for (uint32_t p = 0; p < n; p++) {
        cr_assert(eq(u32, g.order[p], ref.order[p]), "seed %llu round %d: order differs at %u",
                  (unsigned long long)seed, round, p);
        cr_assert(eq(u32, g.pos[ref.order[p]], p));
    }
    for (uint32_t q = 0; q < n; q++) {
        uint32_t v = ref.order[q], e = g.pred_first[v], succ = 0;
        for (uint32_t p = 0; p < q; p++) { /* predecessors in run order */
            if (!ref.edge[(size_t)p * n + q]) {
                continue;
            }
            uint32_t c = ref_conflict(&sys[ref.order[p]], &sys[v]);
            cr_assert(lt(u32, e, g.pred_first[v + 1]),
                      "seed %llu round %d: system %u misses a predecessor",
                      (unsigned long long)seed, round, v);
            cr_assert(eq(u32, g.preds[e], ref.order[p]),
                      "seed %llu round %d: predecessor of %u differs", (unsigned long long)seed,
                      round, v);
            cr_assert(eq(u32, g.pred_label[e], c != UINT32_MAX ? c : WEFT__EDGE_CONSTRAINT));
            e++;
            edges++;
        }
        cr_assert(eq(u32, e, g.pred_first[v + 1]),
                  "seed %llu round %d: system %u has an extra predecessor",
                  (unsigned long long)seed, round, v);
        for (uint32_t w = q + 1; w < n; w++) {
            succ += ref.edge[(size_t)q * n + w];
        }
        cr_assert(eq(u32, g.succ_count[v], succ));
    }
    cr_assert(eq(u32, g.nedges, edges));
    uint32_t ph = 0;
    for (uint32_t p = 0; p < n; p++) {
        if (p == 0 || sys[ref.order[p]].phase != sys[ref.order[p - 1]].phase) {
            cr_assert(eq(u32, g.phase_first[ph], p));
            ph++;
        }
    }
    cr_assert(eq(u32, g.nphases, ph));
    cr_assert(eq(u32, g.phase_first[ph], n));
    weft__graph_free(&g, &alloc);
    free(ref.order);
    free(ref.edge);
    return edges;
}

Test(graph_builder, random_system_sets_give_the_reference_graph) {
    uint64_t seed = fixture_seed("graph_builder"), st = seed;
    uint64_t edges = 0;
    for (int round = 0; round < 300; round++) {
        uint32_t n = 1 + (uint32_t)(rnd_next(&st) % 160);
        uint32_t ncomp = 1 + (uint32_t)(rnd_next(&st) % 40);
        uint32_t nphase = 1 + (uint32_t)(rnd_next(&st) % 3);
        rnd_set_t r;
        rnd_make(&r, &st, n, ncomp, nphase);
        edges += check_same(r.sys, r.n, seed, round);
        rnd_free(&r);
    }
    cr_assert(gt(u64, edges, 1000), "the random sets should have edges to compare");
}

/* The benchmark's shape at a size the reference can afford: 48 writers per component, each
 * system writing one component and reading the next, so chains interleave. */
Test(graph_builder, many_writers_per_component_give_the_reference_graph) {
    enum { N = 1200, C = 25 };
    static uint32_t lists[N][2];
    static weft__sched_sys_t sys[N];
    for (uint32_t v = 0; v < N; v++) {
        lists[v][0] = 1 + (v + 1) % C;
        lists[v][1] = 1 + v % C;
        sys[v] = (weft__sched_sys_t){.name = "s",
                                     .reads = &lists[v][0],
                                     .nreads = v % 2,
                                     .writes = &lists[v][1],
                                     .nwrites = 1};
    }
    cr_assert(gt(u32, check_same(sys, N, 0, 0), N - C));
}
