/* bench_hierarchy.c: the "hierarchy" suite — the ordered hierarchy's world-matrix passes
 * against a pointer-based recursive tree walk over the same nodes, the level-parallel pass at
 * 2 workers, and the cost of attach/detach and of building a large forest.
 *
 * DESIGN
 * Three shapes of N nodes (1,000,000; 100,000 with --quick): flat (one root, every other node
 * its child), deep (1,000 chains; N / 1,000 deep) and balanced (branching factor 4). Each
 * shape is built once into a world with 2 workers (parents created and attached first, random
 * transforms from a fixed seed) and, with the same transforms and binds, into a pointer tree:
 * one malloc'd node per entity in creation order, first-child / next-sibling pointers,
 * updated by a recursive walk. The baseline inlines the same compose/multiply formulas as
 * weft (bench_compose below and wb_mat4_mul mirror weft's math), so the comparison measures
 * layout and traversal, not arithmetic; a spot check confirms both give the same bits.
 * The floor (floor_hier.h) is the least work that gives the same matrices: a flat array in
 * creation order (parents first), one multiply per node by a local matrix composed once.
 * Per repetition: weft sequential and the floor (their order swapped every rep), the deep
 * shape's floor in level order, the pointer walk, weft level-parallel, then the level-parallel
 * floor, each pass after the same 128 MiB write that evicts the caches (wb_cold); medians, and
 * ratios as medians of per-rep ratios.
 * The level-parallel floor (built with OpenMP only; flat and balanced, whose creation order is
 * grouped by depth): the floor's arrays, each level's rows split in two halves run by an
 * OpenMP team of 2 threads with a barrier between levels, timed after weft's passes in each
 * rep against the same code on a team of 1 thread. Its speedup is what this machine allows
 * the pass, the ceiling for hier_level_parallel_speedup_<shape>; hier_level_parallel_<shape>
 * _vs_floor is weft's level pass over the floor's 2-thread pass.
 * weft's layout is the one left by the first level pass (done before timing): grouped by
 * depth for flat and balanced, creation order for deep (no level wide enough to split).
 * pass_<shape>_level_parallel_cores is the process CPU time of the level pass over its wall
 * time (median): near 2 when both workers really ran side by side; well below 2 means the
 * second core was busy with other processes, so the speedup then measures the machine's
 * load rather than the pass.
 * attach/detach: a 100,000-node balanced hierarchy; random nodes are detached and re-attached
 * under random non-descendants, each call timed alone (median µs per call).
 * build: N entities created up front, then timed: weft_hier_add for all and weft_hier_attach
 * for every non-root, a forest of 1,000 balanced trees attached parents first.
 * WB_HIER_CASE=<name> runs only that case (flat, deep, balanced, attach, dirty or build). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "floor_hier.h"
#include "mat4_mul.h"
#include "share.h"
#include "weft.h"

#define SUITE "hierarchy"
#define CHAINS 1000u
#define BRANCH 4u

/* ---- shared data ---------------------------------------------------------- >>data */

typedef enum shape { SHAPE_FLAT, SHAPE_DEEP, SHAPE_BALANCED, SHAPE_COUNT } shape_t;
static const char *const shape_names[SHAPE_COUNT] = {"flat", "deep", "balanced"};

/* Parent index of node i (UINT32_MAX for roots) in each shape; parents have lower indices. */
static uint32_t parent_of(shape_t shape, uint32_t i, uint32_t n) {
    switch (shape) {
    case SHAPE_FLAT:
        return i == 0 ? UINT32_MAX : 0;
    case SHAPE_DEEP: {
        const uint32_t depth = n / CHAINS; /* chain c holds nodes c*depth .. c*depth+depth-1 */
        return i % depth == 0 ? UINT32_MAX : i - 1;
    }
    default:
        return i == 0 ? UINT32_MAX : (i - 1) / BRANCH;
    }
}

static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float rng_float(uint64_t *s, float lo, float hi) {
    return lo + (hi - lo) * (float)(rng_next(s) >> 40) / (float)(1u << 24);
}

/* Near-identity transforms keep 1,000-deep chains finite. */
static weft_transform_t random_transform(uint64_t *s) {
    weft_transform_t t;
    t.position = weft_vec3_make(rng_float(s, -1, 1), rng_float(s, -1, 1), rng_float(s, -1, 1));
    t.rotation = weft_quat_from_axis_angle(
        weft_vec3_make(rng_float(s, -1, 1), rng_float(s, -1, 1), 0.5f), rng_float(s, -0.1f, 0.1f));
    t.scale = weft_vec3_make(1.0f, 1.0f, 1.0f);
    return t;
}

/* ---- pointer baseline ------------------------------------------------------- >>pointer */

typedef struct pnode {
    weft_transform_t local;
    bool plain; /* the bind is the identity: one multiply, as weft */
    weft_mat4_t bind;
    weft_mat4_t world;
    struct pnode *first_child;
    struct pnode *next_sibling;
} pnode_t;

/* Same formulas and operation order as weft's math (wb_mat4_mul, bench/mat4_mul.h). */
static inline void bench_compose(weft_mat4_t *restrict r, const weft_transform_t *t) {
    const weft_quat_t *q = &t->rotation;
    const float xx = q->x * q->x, yy = q->y * q->y, zz = q->z * q->z;
    const float xy = q->x * q->y, xz = q->x * q->z, yz = q->y * q->z;
    const float wx = q->w * q->x, wy = q->w * q->y, wz = q->w * q->z;
    r->m[0] = (1.0f - 2.0f * (yy + zz)) * t->scale.x;
    r->m[1] = (2.0f * (xy + wz)) * t->scale.x;
    r->m[2] = (2.0f * (xz - wy)) * t->scale.x;
    r->m[3] = 0.0f;
    r->m[4] = (2.0f * (xy - wz)) * t->scale.y;
    r->m[5] = (1.0f - 2.0f * (xx + zz)) * t->scale.y;
    r->m[6] = (2.0f * (yz + wx)) * t->scale.y;
    r->m[7] = 0.0f;
    r->m[8] = (2.0f * (xz + wy)) * t->scale.z;
    r->m[9] = (2.0f * (yz - wx)) * t->scale.z;
    r->m[10] = (1.0f - 2.0f * (xx + yy)) * t->scale.z;
    r->m[11] = 0.0f;
    r->m[12] = t->position.x;
    r->m[13] = t->position.y;
    r->m[14] = t->position.z;
    r->m[15] = 1.0f;
}

static void pointer_walk(pnode_t *n, const weft_mat4_t *parent_world) {
    for (; n != NULL; n = n->next_sibling) {
        if (parent_world == NULL) {
            bench_compose(&n->world, &n->local);
        } else if (n->plain) {
            weft_mat4_t l;
            bench_compose(&l, &n->local);
            wb_mat4_mul(&n->world, parent_world, &l);
        } else {
            weft_mat4_t l, bl;
            bench_compose(&l, &n->local);
            wb_mat4_mul(&bl, &n->bind, &l);
            wb_mat4_mul(&n->world, parent_world, &bl);
        }
        pointer_walk(n->first_child, &n->world);
    }
}

/* ---- fixture ----------------------------------------------------------------- >>fixture */

typedef struct fixture {
    weft_world_t *world;
    weft_entity_t *ents;      /* node i's entity */
    pnode_t **nodes;          /* node i's pointer-tree node */
    pnode_t *roots;           /* first root; roots chained through next_sibling */
    uint32_t *parent;         /* floor: node i's parent index (UINT32_MAX: root) */
    weft_mat4_t *local;       /* floor: inverse bind * compose(local), composed once */
    weft_mat4_t *floor_world; /* floor: world matrices */
    uint32_t n;
} fixture_t;

static weft_world_t *make_world(uint32_t workers) {
    weft_world_t *w = NULL;
    if (weft_world_create(&(weft_world_desc_t){.worker_count = workers}, &w) != WEFT_OK) {
        fprintf(stderr, "bench hierarchy: cannot create a world: %s\n", weft_last_error());
        exit(1);
    }
    return w;
}

static void must(weft_result_t r, const char *what) {
    if (r != WEFT_OK) {
        fprintf(stderr, "bench hierarchy: %s failed: %s (%s)\n", what, weft_result_name(r),
                weft_last_error());
        exit(1);
    }
}

static void fixture_build(fixture_t *f, shape_t shape, uint32_t n) {
    memset(f, 0, sizeof(*f));
    f->n = n;
    f->world = make_world(2);
    f->ents = malloc((size_t)n * sizeof(*f->ents));
    f->nodes = malloc((size_t)n * sizeof(*f->nodes));
    must(weft_entity_create_n(f->world, n, f->ents), "entity_create_n");
    uint64_t seed = 42;
    pnode_t *last_root = NULL;
    for (uint32_t i = 0; i < n; i++) {
        const weft_transform_t t = random_transform(&seed);
        must(weft_hier_add(f->world, f->ents[i], &t), "hier_add");
        pnode_t *p = calloc(1, sizeof(*p));
        p->local = t;
        f->nodes[i] = p;
        const uint32_t parent = parent_of(shape, i, n);
        if (parent == UINT32_MAX) {
            if (last_root != NULL) {
                last_root->next_sibling = p;
            } else {
                f->roots = p;
            }
            last_root = p;
        } else {
            must(weft_hier_attach_ex(f->world, f->ents[i], f->ents[parent], WEFT_HIER_KEEP_LOCAL),
                 "hier_attach");
            p->bind = weft_hier_link(f->world, f->ents[i])->inverse_bind;
            p->plain = true;
            p->next_sibling = f->nodes[parent]->first_child; /* head insertion, like weft */
            f->nodes[parent]->first_child = p;
        }
    }
    /* The floor's inputs: node order is creation order, parents first in every shape. */
    f->parent = malloc((size_t)n * sizeof(*f->parent));
    /* 64-byte aligned, as the hierarchy store allocates its matrices: one cache line each */
    f->local = aligned_alloc(64, (size_t)n * sizeof(*f->local));
    f->floor_world = aligned_alloc(64, (size_t)n * sizeof(*f->floor_world));
    for (uint32_t i = 0; i < n; i++) {
        const pnode_t *p = f->nodes[i];
        f->parent[i] = parent_of(shape, i, n);
        weft_mat4_t l = weft_mat4_compose(p->local.position, p->local.rotation, p->local.scale);
        f->local[i] = f->parent[i] == UINT32_MAX || p->plain ? l : weft_mat4_mul(&p->bind, &l);
    }
    /* One level pass regroups the rows by depth where it splits levels (flat, balanced;
     * deep's 1,000-node levels stay in creation order); timing starts from that layout. */
    must(weft_hier_update(f->world, WEFT_HIER_PASS_LEVELS), "hier_update");
}

static void fixture_free(fixture_t *f) {
    for (uint32_t i = 0; i < f->n; i++) {
        free(f->nodes[i]);
    }
    free(f->nodes);
    free(f->ents);
    free(f->parent);
    free(f->local);
    free(f->floor_world);
    weft_world_destroy(f->world);
}

/* Spot check: weft's world matrices equal the pointer walk's and the floor's, bit for bit. */
static void check_same(const fixture_t *f, const char *shape) {
    uint32_t bad = 0, bad_floor = 0;
    for (uint32_t i = 0; i < f->n; i += 997) {
        const weft_mat4_t *w = weft_hier_world(f->world, f->ents[i]);
        bad += memcmp(w, &f->nodes[i]->world, sizeof(weft_mat4_t)) != 0;
        bad_floor += memcmp(w, &f->floor_world[i], sizeof(weft_mat4_t)) != 0;
    }
    if (bad != 0 || bad_floor != 0) {
        fprintf(stderr,
                "bench hierarchy: %s: %u / %u sampled world matrices differ from the "
                "pointer walk / the floor (compiler contracted a baseline's arithmetic?)\n",
                shape, bad, bad_floor);
    }
}

/* ---- level-parallel floor ----------------------------------------------- >>level_floor */

/* libgomp's idle team spins for a while after a region (about 7.5 ms on the 2-vCPU VM, its
 * default wait policy); each rep waits this long after the 2-thread floor so that the spin
 * overlaps none of the next rep's passes. */
#define OMP_IDLE_NS 20000000L

typedef struct level_floor {
    uint32_t levels;       /* 0: not measured (no OpenMP, or rows not grouped by depth) */
    uint32_t *level_start; /* level l: rows [level_start[l], level_start[l + 1]) */
    weft_mat4_t *world;    /* the level passes' world matrices, checked against the floor's */
    double *ms1, *ms2;     /* per rep: 1-thread and 2-thread pass, ms */
    double *cores;         /* per rep: process CPU time over wall time of the 2-thread pass */
    uint32_t bad;          /* sampled matrices that differ from the sequential floor's */
} level_floor_t;

static void level_floor_init(level_floor_t *lf, const fixture_t *f, int reps) {
    memset(lf, 0, sizeof(*lf));
#ifdef WB_HAVE_OPENMP
    lf->level_start = malloc(((size_t)f->n + 1) * sizeof(*lf->level_start));
    lf->levels = wb_floor_hier_levels(f->parent, f->n, lf->level_start);
    lf->world = aligned_alloc(64, (size_t)f->n * sizeof(*lf->world));
    lf->ms1 = malloc((size_t)reps * sizeof(double));
    lf->ms2 = malloc((size_t)reps * sizeof(double));
    lf->cores = malloc((size_t)reps * sizeof(double));
    if (lf->levels != 0) { /* pages touched, the team created */
        wb_floor_hier_update_levels(f->parent, f->local, lf->world, lf->level_start, lf->levels, 2);
        wb_sleep_ns(OMP_IDLE_NS);
    }
#else
    (void)f;
    (void)reps;
#endif
}

#ifdef WB_HAVE_OPENMP
/* One level-parallel floor pass on a team of `threads`: returns its wall time (ms) and its
 * process CPU time over wall time in *cores. Its rows sampled as check_same are poisoned
 * first, so that a row the pass skipped cannot keep an earlier pass's result, and compared
 * after with the sequential floor's (run earlier in the rep) into lf->bad. */
static double level_floor_pass(level_floor_t *lf, const fixture_t *f, int threads, double *cores) {
    for (uint32_t i = 0; i < f->n; i += 997) {
        memset(&lf->world[i], 0xff, sizeof(weft_mat4_t));
    }
    const double c0 = wb_cpu_ns(), t0 = wb_now_ns();
    wb_floor_hier_update_levels(f->parent, f->local, lf->world, lf->level_start, lf->levels,
                                threads);
    const double t1 = wb_now_ns();
    *cores = (wb_cpu_ns() - c0) / (t1 - t0);
    wb_sink(lf->world);
    for (uint32_t i = 0; i < f->n; i += 997) {
        lf->bad += memcmp(&lf->world[i], &f->floor_world[i], sizeof(weft_mat4_t)) != 0;
    }
    return (t1 - t0) / 1e6;
}
#endif

/* One rep: 1 thread, then 2 threads, each from evicted caches (cold: a WB_COLD_BYTES buffer),
 * after the sequential floor has run in this rep. */
static void level_floor_rep(level_floor_t *lf, const fixture_t *f, unsigned char *cold, int r) {
#ifdef WB_HAVE_OPENMP
    if (lf->levels == 0) {
        return;
    }
    double cores1;
    (void)wb_cold(cold);
    lf->ms1[r] = level_floor_pass(lf, f, 1, &cores1);
    (void)wb_cold(cold);
    lf->ms2[r] = level_floor_pass(lf, f, 2, &lf->cores[r]);
    wb_sleep_ns(OMP_IDLE_NS);
#else
    (void)lf;
    (void)f;
    (void)cold;
    (void)r;
#endif
}

/* lvl: weft's level pass per rep (ms), timed in the same reps. */
static void level_floor_report(wb_ctx_t *ctx, level_floor_t *lf, const char *shape,
                               const double *lvl, int reps) {
    if (lf->levels == 0) {
        return;
    }
    if (lf->bad != 0) {
        fprintf(stderr,
                "bench hierarchy: %s: %u sampled world matrices of the level-parallel floor "
                "differ from the floor's\n",
                shape, lf->bad);
    }
    char name[96];
    snprintf(name, sizeof(name), "level_parallel_floor_%s", shape);
    wb_report(ctx, SUITE, name, "raw", 1, wb_median(lf->ms1, reps), "ms", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, name, "raw", 2, wb_median(lf->ms2, reps), "ms", WB_NO_TARGET, 0);
    snprintf(name, sizeof(name), "level_parallel_floor_%s_cores", shape);
    wb_report(ctx, SUITE, name, "raw", 2, wb_median(lf->cores, reps), "core", WB_NO_TARGET, 0);
    snprintf(name, sizeof(name), "level_parallel_floor_speedup_%s", shape);
    wb_report(ctx, SUITE, name, "raw", 2, wb_median_ratio(lf->ms1, lf->ms2, reps), "x",
              WB_NO_TARGET, 0);
    snprintf(name, sizeof(name), "hier_level_parallel_%s_vs_floor", shape);
    wb_report(ctx, SUITE, name, "ratio", 2, wb_median_ratio(lvl, lf->ms2, reps), "x", WB_NO_TARGET,
              0);
}

static void level_floor_free(level_floor_t *lf) {
    free(lf->level_start);
    free(lf->world);
    free(lf->ms1);
    free(lf->ms2);
    free(lf->cores);
}

/* ---- cases -------------------------------------------------------------------- >>cases */

/* The floor's arrays laid out level by level (stable by depth), for the deep shape's
 * deep_floor_level_order_vs_floor: the same loop over the same chains with each parent a
 * level back instead of a row back, the order weft would walk if it regrouped a forest
 * whose levels are too narrow to split (it does not: weft__hstore_pass_for). */
typedef struct level_order {
    uint32_t *parent;
    weft_mat4_t *local, *world;
} level_order_t;

static void level_order_init(level_order_t *lo, const fixture_t *f) {
    const uint32_t n = f->n;
    uint32_t *depth = malloc((size_t)n * sizeof(*depth));
    uint32_t *at = calloc((size_t)n + 1, sizeof(*at)); /* per depth: next free row */
    uint32_t *row = malloc((size_t)n * sizeof(*row));  /* node -> row in level order */
    lo->parent = malloc((size_t)n * sizeof(*lo->parent));
    lo->local = aligned_alloc(64, (size_t)n * sizeof(*lo->local));
    lo->world = aligned_alloc(64, (size_t)n * sizeof(*lo->world));
    if (!depth || !at || !row || !lo->parent || !lo->local || !lo->world) {
        fprintf(stderr, "bench hierarchy: out of memory\n");
        exit(1);
    }
    for (uint32_t i = 0; i < n; i++) { /* parents first: depth[parent] is known */
        depth[i] = f->parent[i] == UINT32_MAX ? 0 : depth[f->parent[i]] + 1;
        at[depth[i] + 1]++;
    }
    for (uint32_t d = 1; d <= n; d++) {
        at[d] += at[d - 1];
    }
    for (uint32_t i = 0; i < n; i++) {
        row[i] = at[depth[i]]++;
    }
    for (uint32_t i = 0; i < n; i++) {
        lo->parent[row[i]] = f->parent[i] == UINT32_MAX ? UINT32_MAX : row[f->parent[i]];
        lo->local[row[i]] = f->local[i];
    }
    memset(lo->world, 0, (size_t)n * sizeof(*lo->world));
    free(depth);
    free(at);
    free(row);
}

static void level_order_free(level_order_t *lo) {
    free(lo->parent);
    free(lo->local);
    free(lo->world);
}

/* One full sequential pass of weft (every node recomputed) from evicted caches: ms. */
static double time_sequential(const fixture_t *f, unsigned char *cold) {
    const double t0 = wb_cold(cold);
    weft_hier_invalidate(f->world);
    must(weft_hier_update(f->world, WEFT_HIER_PASS_SEQUENTIAL), "sequential pass");
    return (wb_now_ns() - t0) / 1e6;
}

/* One pass of the floor's loop over n rows of these arrays from evicted caches: ms. */
static double time_floor(const uint32_t *parent, const weft_mat4_t *local, weft_mat4_t *world,
                         uint32_t n, unsigned char *cold) {
    const double t0 = wb_cold(cold);
    wb_floor_hier_update(parent, local, world, n);
    const double t1 = wb_now_ns();
    wb_sink(world);
    return (t1 - t0) / 1e6;
}

/* One full level-parallel pass of weft (2 workers) from evicted caches: ms; its process CPU
 * time over wall time into *cores, and its workers' share added to *share. */
static double time_levels(const fixture_t *f, unsigned char *cold, double *cores, double *share) {
    wb_share_t sh;
    (void)wb_cold(cold);
    wb_share_begin(&sh, weft_world_jobs(f->world));
    const double c0 = wb_cpu_ns();
    const double t0 = wb_now_ns();
    weft_hier_invalidate(f->world);
    must(weft_hier_update(f->world, WEFT_HIER_PASS_LEVELS), "level pass");
    const double t1 = wb_now_ns();
    *cores = (wb_cpu_ns() - c0) / (t1 - t0);
    *share += wb_share_end(&sh, NULL);
    return (t1 - t0) / 1e6;
}

static void bench_shape(wb_ctx_t *ctx, shape_t shape, uint32_t n) {
    fixture_t f;
    fixture_build(&f, shape, n);
    const int reps = wb_reps(ctx);
    double *seq = malloc((size_t)reps * sizeof(double));
    double *ptr = malloc((size_t)reps * sizeof(double));
    double *lvl = malloc((size_t)reps * sizeof(double));
    double *cores = malloc((size_t)reps * sizeof(double));
    double *flr = malloc((size_t)reps * sizeof(double));
    double *flo = malloc((size_t)reps * sizeof(double)); /* deep: floor in level order */
    level_order_t lo;
    if (shape == SHAPE_DEEP) {
        level_order_init(&lo, &f);
    }
    level_floor_t lf;
    level_floor_init(&lf, &f, reps);
    unsigned char *cold = malloc(WB_COLD_BYTES);
    if (cold == NULL) {
        fprintf(stderr, "bench hierarchy: out of memory\n");
        exit(1);
    }
    double share = 0;
    for (int r = 0; r < reps; r++) {
        /* Every pass starts from evicted caches (the passes stream more than the last-level
         * cache, so whichever ran right after its own data's last use, or right after the
         * previous rep's idle wait, would be favoured), and weft's sequential pass and the
         * floor swap places every rep. */
        if (r % 2 == 0) {
            seq[r] = time_sequential(&f, cold);
            flr[r] = time_floor(f.parent, f.local, f.floor_world, f.n, cold);
        } else {
            flr[r] = time_floor(f.parent, f.local, f.floor_world, f.n, cold);
            seq[r] = time_sequential(&f, cold);
        }
        if (shape == SHAPE_DEEP) {
            flo[r] = time_floor(lo.parent, lo.local, lo.world, f.n, cold);
        }
        double t0 = wb_cold(cold);
        pointer_walk(f.roots, NULL);
        ptr[r] = (wb_now_ns() - t0) / 1e6;
        wb_sink(f.roots);
        lvl[r] = time_levels(&f, cold, &cores[r], &share);
        level_floor_rep(&lf, &f, cold, r);
    }
    share /= reps;
    free(cold);
    check_same(&f, shape_names[shape]);
    /* ratios are medians of per-rep ratios: the passes of a rep run in turn, each cold */
    const double s_over_f = wb_median_ratio(seq, flr, reps);
    const double s_over_p = wb_median_ratio(seq, ptr, reps);
    const double s_over_l = wb_median_ratio(seq, lvl, reps);
    const double s = wb_median(seq, reps), p = wb_median(ptr, reps), l = wb_median(lvl, reps);
    char name[96];
    snprintf(name, sizeof(name), "pass_%s_sequential", shape_names[shape]);
    wb_report(ctx, SUITE, name, "weft", 1, s, "ms", WB_NO_TARGET, 0);
    snprintf(name, sizeof(name), "pass_%s_floor", shape_names[shape]);
    wb_report(ctx, SUITE, name, "raw", 1, wb_median(flr, reps), "ms", WB_NO_TARGET, 0);
    snprintf(name, sizeof(name), "pass_%s_pointer", shape_names[shape]);
    wb_report(ctx, SUITE, name, "pointer", 1, p, "ms", WB_NO_TARGET, 0);
    snprintf(name, sizeof(name), "pass_%s_level_parallel", shape_names[shape]);
    wb_report(ctx, SUITE, name, "weft", 2, l, "ms", WB_NO_TARGET, 0);
    snprintf(name, sizeof(name), "hier_%s_vs_floor", shape_names[shape]);
    wb_report(ctx, SUITE, name, "ratio", 1, s_over_f, "x", WB_AT_MOST,
              shape == SHAPE_DEEP ? 1.2 : 1.15);
    snprintf(name, sizeof(name), "hier_%s_vs_pointer", shape_names[shape]);
    wb_report(ctx, SUITE, name, "ratio", 1, s_over_p, "x", WB_AT_MOST,
              shape == SHAPE_DEEP ? 1.2 : 1.0);
    snprintf(name, sizeof(name), "hier_level_parallel_speedup_%s", shape_names[shape]);
    wb_report_scaled(ctx, SUITE, name, "ratio", 2, s_over_l, "x",
                     shape == SHAPE_DEEP ? WB_NO_TARGET : WB_AT_LEAST, 1.8, share);
    snprintf(name, sizeof(name), "pass_%s_level_parallel", shape_names[shape]);
    wb_report_share(ctx, SUITE, name, 2, share, WB_NO_TARGET, 0);
    snprintf(name, sizeof(name), "pass_%s_level_parallel_cores", shape_names[shape]);
    wb_report(ctx, SUITE, name, "weft", 2, wb_median(cores, reps), "core", WB_NO_TARGET, 0);
    level_floor_report(ctx, &lf, shape_names[shape], lvl, reps);
    if (shape == SHAPE_DEEP) {
        /* the same bits in either order (sampled) */
        uint32_t bad = 0;
        for (uint32_t i = 0; i < f.n; i += 997) {
            const uint32_t depth = i % (f.n / CHAINS), chain = i / (f.n / CHAINS);
            bad += memcmp(&lo.world[depth * CHAINS + chain], &f.floor_world[i],
                          sizeof(weft_mat4_t)) != 0;
        }
        if (bad != 0) {
            fprintf(stderr, "bench hierarchy: deep: %u sampled level-order matrices differ\n", bad);
        }
        wb_report(ctx, SUITE, "deep_floor_level_order_vs_floor", "ratio", 1,
                  wb_median_ratio(flo, flr, reps), "x", WB_NO_TARGET, 0);
        level_order_free(&lo);
    }
    free(flo);
    level_floor_free(&lf);
    free(cores);
    free(flr);
    free(seq);
    free(ptr);
    free(lvl);
    fixture_free(&f);
}

static bool is_ancestor(const weft_world_t *w, weft_entity_t a, weft_entity_t x) {
    for (; x != 0; x = weft_hier_parent(w, x)) {
        if (x == a) {
            return true;
        }
    }
    return false;
}

static void bench_attach(wb_ctx_t *ctx, uint32_t n) {
    fixture_t f;
    fixture_build(&f, SHAPE_BALANCED, n);
    const int ops = wb_quick(ctx) ? 2000 : 20000;
    double *att = malloc((size_t)ops * sizeof(double));
    double *det = malloc((size_t)ops * sizeof(double));
    int na = 0, nd = 0;
    uint64_t seed = 7;
    for (int i = 0; i < ops; i++) {
        const weft_entity_t x = f.ents[1 + rng_next(&seed) % (n - 1)];
        const weft_entity_t y = f.ents[rng_next(&seed) % n];
        double t0 = wb_now_ns();
        must(weft_hier_detach(f.world, x), "detach");
        double t1 = wb_now_ns();
        det[nd++] = (t1 - t0) / 1e3;
        const weft_entity_t to = is_ancestor(f.world, x, y) ? f.ents[0] : y;
        if (to == x) {
            continue;
        }
        t0 = wb_now_ns();
        must(weft_hier_attach(f.world, x, to), "attach");
        t1 = wb_now_ns();
        att[na++] = (t1 - t0) / 1e3;
    }
    /* What the changes cost the next level-parallel pass: one regroup of the whole store. */
    wb_share_t sh;
    wb_share_begin(&sh, weft_world_jobs(f.world));
    double t0 = wb_now_ns();
    must(weft_hier_update(f.world, WEFT_HIER_PASS_LEVELS), "level pass");
    const double regroup = (wb_now_ns() - t0) / 1e6;
    const double share = wb_share_end(&sh, NULL);
    weft_hier_stats_t st;
    weft_hier_stats(f.world, &st);
    wb_report(ctx, SUITE, "attach_one_100k", "weft", 1, wb_median(att, na), "us", WB_AT_MOST, 50.0);
    wb_report(ctx, SUITE, "detach_one_100k", "weft", 1, wb_median(det, nd), "us", WB_AT_MOST, 50.0);
    wb_report(ctx, SUITE, "level_pass_with_regroup_100k", "weft", 2, regroup, "ms", WB_NO_TARGET,
              0);
    wb_report_share(ctx, SUITE, "level_pass_with_regroup_100k", 2, share, WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "rows_moved_per_attach_100k", "weft", 1,
              na ? (double)st.moved_rows / na : 0.0, "rows", WB_NO_TARGET, 0);
    free(att);
    free(det);
    fixture_free(&f);
}

/* Depth-first pre-order of a forest given parents first (parent[i] < i): pos[i] is node i's
 * place, children in index order. `size` and `cursor` are scratch of n entries each. */
static void preorder(const uint32_t *parent, uint32_t n, uint32_t *pos, uint32_t *size,
                     uint32_t *cursor) {
    for (uint32_t i = 0; i < n; i++) {
        size[i] = 1;
    }
    for (uint32_t i = n; i-- > 0;) { /* subtree sizes: children come after their parents */
        if (parent[i] != UINT32_MAX) {
            size[parent[i]] += size[i];
        }
    }
    uint32_t next_root = 0;
    for (uint32_t i = 0; i < n; i++) { /* a parent is placed before its children */
        const uint32_t p = parent[i];
        if (p == UINT32_MAX) {
            pos[i] = next_root;
            next_root += size[i];
        } else {
            pos[i] = cursor[p];
            cursor[p] += size[i];
        }
        cursor[i] = pos[i] + 1;
    }
}

/* Runs of consecutive rows shorter than this are "short" in the floor's split of the dirty1
 * list: under 64 rows, a run spans less than a 4 KiB page of each matrix array. */
#define SHORT_RUN 64u

/* Copy list[0, m) (ascending) into out: first the rows of its runs of consecutive rows shorter
 * than SHORT_RUN, then the others, each group ascending. Returns the number of short rows. */
static uint32_t split_runs(const uint32_t *list, uint32_t m, uint32_t *out) {
    uint32_t n_short = 0;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t o = pass == 0 ? 0 : n_short;
        for (uint32_t a = 0; a < m;) {
            uint32_t b = a + 1;
            while (b < m && list[b] == list[b - 1] + 1) {
                b++;
            }
            if ((b - a < SHORT_RUN) == (pass == 0)) {
                memcpy(out + o, list + a, (size_t)(b - a) * sizeof(*list));
                o += b - a;
            }
            a = b;
        }
        if (pass == 0) {
            n_short = o;
        }
    }
    return n_short;
}

/* Change tracking: a balanced forest of n nodes; per rep, a full update (every node marked),
 * an update after 1% of the nodes (random, fixed seed) got a new local transform, and an
 * update with nothing changed; all sequential, timed back to back. Then the cost per
 * recomputed row of the two kinds of rows such an update mixes: scattered rows (1% of the
 * leaves changed: each recomputes its own row only, far from the others) and rows in runs
 * (one depth-2 node changed: its n/16 descendants lie in contiguous runs, one per depth, in
 * this layout), against a full update's cost per row. The floor of the 1% update
 * (pass_dirty1_floor): the floor's arrays given the same new local transforms recompute a list
 * of exactly the changed nodes and their descendants, listed beforehand (not timed), so it does
 * none of the finding weft does; dirty1_floor_vs_full reads it against the floor's full pass of
 * the same rep, the bound hier_dirty1_vs_full can reach with this method on the machine.
 * Where that bound goes: the same list split in two (split_runs), each part recomputed alone
 * after its own full pass and writes: dirty1_floor_short_vs_full, the rows lying in runs of
 * consecutive rows shorter than SHORT_RUN (dirty1_floor_short_rows: their share of all nodes),
 * whose lines come from memory one row at a time, and dirty1_floor_long_vs_full, the rows of
 * longer runs, which stream like the full pass. The floor's writes (the new local transforms
 * and their flags) are made after its own full pass, as weft's are after its own, so neither
 * dirty pass finds them evicted. dirty1_best_floor_vs_full (no target) does the same with the best layout found for this
 * update (floor_hier.h: depth-first pre-order, world and local matrix in one record), read
 * against its own full pass: the lowest this machine gave among the layouts tried. Each
 * side's dirty pass runs right after its own full pass and its untimed preparation (weft: the
 * writes; the floor: the list), so both find the cache as their own full pass left it: the
 * tail of the arrays, where most of a balanced tree's rows lie, still cached. */
static void bench_dirty(wb_ctx_t *ctx, uint32_t n) {
    fixture_t f;
    fixture_build(&f, SHAPE_BALANCED, n);
    const int reps = wb_reps(ctx);
    double *full = malloc((size_t)reps * sizeof(double));
    double *d1 = malloc((size_t)reps * sizeof(double));
    double *d0 = malloc((size_t)reps * sizeof(double));
    double *row_full = malloc((size_t)reps * sizeof(double));
    double *row_scattered = malloc((size_t)reps * sizeof(double));
    double *row_runs = malloc((size_t)reps * sizeof(double));
    const uint32_t first_leaf = (n - 2) / BRANCH + 1; /* node i has children iff 4i + 1 < n */
    double *flr_full = malloc((size_t)reps * sizeof(double));
    double *flr_d1 = malloc((size_t)reps * sizeof(double));
    uint8_t *changed = calloc(n, 1);
    uint8_t *need = malloc(n);
    uint32_t *list = malloc((size_t)n * sizeof(*list));
    weft_transform_t *new_local = malloc((size_t)n * sizeof(*new_local));
    uint32_t *split = malloc((size_t)n * sizeof(*split)); /* the list's short runs, then long */
    double *short_part = malloc((size_t)reps * sizeof(double));
    double *long_part = malloc((size_t)reps * sizeof(double));
    double short_rows = 0;
    uint32_t *picked = malloc((size_t)n / 100 * sizeof(*picked)); /* a rep's changes, in order */
    weft_transform_t *picked_t = malloc((size_t)n / 100 * sizeof(*picked_t));
    /* The best layout's floor (floor_hier.h): the same nodes in depth-first pre-order. */
    uint32_t *dpos = malloc((size_t)n * sizeof(*dpos));
    uint32_t *dparent = malloc((size_t)n * sizeof(*dparent));
    uint8_t *dchanged = calloc(n, 1);
    weft_transform_t *dnew_local = malloc((size_t)n * sizeof(*dnew_local));
    wb_floor_rec_t *rec = aligned_alloc(64, (size_t)n * sizeof(*rec));
    double *best_full = malloc((size_t)reps * sizeof(double));
    double *best_d1 = malloc((size_t)reps * sizeof(double));
    preorder(f.parent, n, dpos, list, dparent); /* dparent: scratch until set below */
    for (uint32_t i = 0; i < n; i++) {
        dparent[dpos[i]] = f.parent[i] == UINT32_MAX ? UINT32_MAX : dpos[f.parent[i]];
        rec[dpos[i]].local = f.local[i];
    }
    double touched = 0;
    uint32_t bad_floor = 0, bad_best = 0;
    uint64_t seed = 11;
    const uint32_t k = n / 100;
    for (int r = 0; r < reps; r++) {
        double t0 = wb_now_ns();
        weft_hier_invalidate(f.world);
        must(weft_hier_update(f.world, WEFT_HIER_PASS_SEQUENTIAL), "full pass");
        double t1 = wb_now_ns();
        for (uint32_t i = 0; i < k; i++) {
            picked[i] = (uint32_t)(rng_next(&seed) % n);
            picked_t[i] = random_transform(&seed);
            *weft_hier_local(f.world, f.ents[picked[i]]) = picked_t[i];
        }
        double t2 = wb_now_ns();
        must(weft_hier_update(f.world, WEFT_HIER_PASS_SEQUENTIAL), "dirty pass");
        double t3 = wb_now_ns();
        weft_hier_stats_t st;
        weft_hier_stats(f.world, &st);
        touched += (double)st.recomputed / n / reps;
        must(weft_hier_update(f.world, WEFT_HIER_PASS_SEQUENTIAL), "clean pass");
        double t4 = wb_now_ns();
        /* The floor's passes, after weft's so that each side's dirty pass finds the cache
         * as its own full pass left it (weft's follows its full pass and the untimed
         * writes; the floor's its full pass and the untimed listing): the full pass, then
         * the changed nodes and their descendants listed parents first (not timed), then
         * recomputed. */
        const double tf0 = wb_now_ns();
        wb_floor_hier_update(f.parent, f.local, f.floor_world, n);
        const double tf0_end = wb_now_ns();
        wb_sink(f.floor_world);
        for (uint32_t i = 0; i < k; i++) { /* the floor's writes, as weft's after its full pass */
            new_local[picked[i]] = picked_t[i];
            changed[picked[i]] = 1;
        }
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; i++) {
            need[i] = changed[i] || (f.parent[i] != UINT32_MAX && need[f.parent[i]]);
            list[m] = i;
            m += need[i];
        }
        const double tf1 = wb_now_ns();
        wb_floor_hier_update_list(f.parent, f.local, f.floor_world, list, m, changed, new_local);
        flr_d1[r] = (wb_now_ns() - tf1) / 1e6;
        flr_full[r] = (tf0_end - tf0) / 1e6;
        wb_sink(f.floor_world);
        /* The same list split in two, each part timed alone the same way (its own full pass
         * and writes first): rows in runs of consecutive rows shorter than SHORT_RUN, whose
         * lines are fetched one row at a time, and the rest, which stream. */
        const uint32_t n_short = split_runs(list, m, split);
        short_rows += (double)n_short / n / reps;
        for (int part = 0; part < 2; part++) {
            const double tp0 = wb_now_ns();
            wb_floor_hier_update(f.parent, f.local, f.floor_world, n);
            const double tp0_end = wb_now_ns();
            wb_sink(f.floor_world);
            for (uint32_t i = 0; i < k; i++) {
                new_local[picked[i]] = picked_t[i];
            }
            const uint32_t *rows = part == 0 ? split : split + n_short;
            const uint32_t count = part == 0 ? n_short : m - n_short;
            const double tp1 = wb_now_ns();
            wb_floor_hier_update_list(f.parent, f.local, f.floor_world, rows, count, changed,
                                      new_local);
            (part == 0 ? short_part : long_part)[r] = (wb_now_ns() - tp1) / (tp0_end - tp0);
            wb_sink(f.floor_world);
        }
        /* Both parts recomposed every changed local: one full pass gives the update's result
         * again for the checks below. */
        wb_floor_hier_update(f.parent, f.local, f.floor_world, n);
        /* The best layout's floor, the same way: its full pass, the same changes mapped to
         * its rows and its list (not timed), then the update. */
        const double tb0 = wb_now_ns();
        wb_floor_hier_update_rec(dparent, rec, n);
        const double tb0_end = wb_now_ns();
        wb_sink(rec);
        for (uint32_t i = 0; i < n; i++) {
            if (changed[i]) {
                dchanged[dpos[i]] = 1;
                dnew_local[dpos[i]] = new_local[i];
            }
        }
        m = 0;
        for (uint32_t i = 0; i < n; i++) {
            need[i] = dchanged[i] || (dparent[i] != UINT32_MAX && need[dparent[i]]);
            list[m] = i;
            m += need[i];
        }
        const double tb1 = wb_now_ns();
        wb_floor_hier_update_rec_list(dparent, rec, list, m, dchanged, dnew_local);
        best_d1[r] = (wb_now_ns() - tb1) / 1e6;
        best_full[r] = (tb0_end - tb0) / 1e6;
        wb_sink(rec);
        memset(dchanged, 0, n);
        memset(changed, 0, n);
        for (uint32_t i = 0; i < n; i += 997) {
            bad_best += memcmp(&rec[dpos[i]].world, &f.floor_world[i], sizeof(weft_mat4_t)) != 0;
        }
        if (r == 0) { /* later reps change weft's nodes below without telling the floor */
            for (uint32_t i = 0; i < n; i += 997) {
                bad_floor += memcmp(weft_hier_world(f.world, f.ents[i]), &f.floor_world[i],
                                    sizeof(weft_mat4_t)) != 0;
            }
        }
        full[r] = (t1 - t0) / 1e6;
        d1[r] = (t3 - t2) / 1e6;
        d0[r] = (t4 - t3) / 1e6;
        row_full[r] = (t1 - t0) / weft_hier_count(f.world);
        for (uint32_t i = 0; i < k; i++) {
            const uint32_t leaf = first_leaf + (uint32_t)(rng_next(&seed) % (n - first_leaf));
            *weft_hier_local(f.world, f.ents[leaf]) = random_transform(&seed);
        }
        t0 = wb_now_ns();
        must(weft_hier_update(f.world, WEFT_HIER_PASS_SEQUENTIAL), "scattered pass");
        t1 = wb_now_ns();
        weft_hier_stats(f.world, &st);
        row_scattered[r] = (t1 - t0) / (st.recomputed ? st.recomputed : 1);
        const uint32_t depth2 = 1 + BRANCH + (uint32_t)(rng_next(&seed) % (BRANCH * BRANCH));
        *weft_hier_local(f.world, f.ents[depth2]) = random_transform(&seed);
        t0 = wb_now_ns();
        must(weft_hier_update(f.world, WEFT_HIER_PASS_SEQUENTIAL), "runs pass");
        t1 = wb_now_ns();
        weft_hier_stats(f.world, &st);
        row_runs[r] = (t1 - t0) / (st.recomputed ? st.recomputed : 1);
    }
    wb_report(ctx, SUITE, "pass_dirty_full", "weft", 1, wb_median(full, reps), "ms", WB_NO_TARGET,
              0);
    wb_report(ctx, SUITE, "pass_dirty1", "weft", 1, wb_median(d1, reps), "ms", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "pass_dirty0", "weft", 1, wb_median(d0, reps), "ms", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "dirty1_recomputed_fraction", "weft", 1, touched, "x", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "dirty_row_full", "weft", 1, wb_median(row_full, reps), "ns",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "dirty_row_scattered", "weft", 1, wb_median(row_scattered, reps), "ns",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "dirty_row_runs", "weft", 1, wb_median(row_runs, reps), "ns",
              WB_NO_TARGET, 0);
    if (bad_floor != 0) {
        fprintf(stderr,
                "bench hierarchy: dirty1: %u sampled world matrices differ from the floor\n",
                bad_floor);
    }
    wb_report(ctx, SUITE, "pass_dirty1_floor", "raw", 1, wb_median(flr_d1, reps), "ms",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "dirty1_floor_vs_full", "raw", 1, wb_median_ratio(flr_d1, flr_full, reps),
              "x", WB_NO_TARGET, 0);
    if (bad_best != 0) {
        fprintf(stderr,
                "bench hierarchy: dirty1: %u sampled world matrices of the best layout's floor "
                "differ from the floor\n",
                bad_best);
    }
    wb_report(ctx, SUITE, "dirty1_floor_short_rows", "raw", 1, short_rows, "x", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "dirty1_floor_short_vs_full", "raw", 1, wb_median(short_part, reps), "x",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "dirty1_floor_long_vs_full", "raw", 1, wb_median(long_part, reps), "x",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "pass_dirty_best_floor_full", "raw", 1, wb_median(best_full, reps), "ms",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "pass_dirty1_best_floor", "raw", 1, wb_median(best_d1, reps), "ms",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "dirty1_best_floor_vs_full", "raw", 1,
              wb_median_ratio(best_d1, best_full, reps), "x", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "hier_dirty1_vs_full", "ratio", 1, wb_median_ratio(d1, full, reps), "x",
              WB_AT_MOST, 0.25);
    wb_report(ctx, SUITE, "hier_dirty0_vs_full", "ratio", 1, wb_median_ratio(d0, full, reps), "x",
              WB_AT_MOST, 0.02);
    free(full);
    free(d1);
    free(d0);
    free(row_full);
    free(row_scattered);
    free(row_runs);
    free(flr_full);
    free(flr_d1);
    free(best_full);
    free(best_d1);
    free(rec);
    free(dnew_local);
    free(dchanged);
    free(dparent);
    free(dpos);
    free(changed);
    free(need);
    free(list);
    free(new_local);
    free(picked);
    free(picked_t);
    free(split);
    free(short_part);
    free(long_part);
    fixture_free(&f);
}

static void bench_build(wb_ctx_t *ctx, uint32_t n) {
    const int reps = wb_quick(ctx) ? 1 : 3;
    double *t = malloc((size_t)reps * sizeof(double));
    weft_entity_t *ents = malloc((size_t)n * sizeof(*ents));
    const uint32_t per_tree = n / CHAINS; /* 1,000 balanced trees */
    for (int r = 0; r < reps; r++) {
        weft_world_t *w = make_world(1);
        must(weft_entity_create_n(w, n, ents), "entity_create_n");
        const weft_transform_t id = weft_transform_identity();
        double t0 = wb_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            must(weft_hier_add(w, ents[i], &id), "hier_add");
        }
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t k = i % per_tree;
            if (k != 0) {
                must(weft_hier_attach(w, ents[i], ents[i - k + (k - 1) / BRANCH]), "attach");
            }
        }
        t[r] = (wb_now_ns() - t0) / 1e9;
        weft_world_destroy(w);
    }
    char name[64];
    snprintf(name, sizeof(name), n >= 1000000 ? "build_1m_forest" : "build_%uk_forest", n / 1000);
    wb_report(ctx, SUITE, name, "weft", 1, wb_median(t, reps), "s", WB_AT_MOST, 2.0 * n / 1e6);
    free(ents);
    free(t);
}

/* WB_HIER_CASE=<name> runs only that case: flat, deep, balanced, attach, dirty or build. */
static bool want(const char *name) {
    const char *only = getenv("WB_HIER_CASE");
    return !only || !only[0] || strcmp(name, only) == 0;
}

void wb_suite_hierarchy(wb_ctx_t *ctx) {
    const uint32_t n = wb_quick(ctx) ? 100000u : 1000000u;
    wb_describe(ctx, SUITE, "pass", "weft",
                "weft_hier_invalidate + weft_hier_update over the whole forest (every node "
                "recomputed; sequential: one thread; level_parallel: 2 workers, one parallel-for "
                "per depth; deep: no level holds the 8192 nodes the pass splits, so the LEVELS "
                "request runs the sequential pass and its speedup reads not measured), rows "
                "regrouped by depth beforehand where the pass splits levels; children attached "
                "keeping their "
                "local transform (identity bind: compose + one multiply per node); "
                "dirty1/dirty0/dirty_full: balanced, sequential, update after 1% of nodes got a "
                "new local (writes not timed) / after no change / after weft_hier_invalidate; "
                "dirty_row_*: ns per recomputed row, full update / 1% of leaves changed "
                "(scattered rows) / one depth-2 node changed (its subtree in runs)");
    wb_describe(ctx, SUITE, "dirty1", "raw",
                "the floor of the dirty1 update: the floor's arrays recompute a list (made "
                "beforehand, not timed) of exactly the changed nodes and their descendants, "
                "composing the changed ones, prefetching two stages ahead as weft does; "
                "dirty1_floor_vs_full: against the floor's full pass in the same rep; "
                "best_floor: the same with the nodes in depth-first pre-order and each node's "
                "world and local matrices in one 128-byte record (floor_hier.h), against its "
                "own full pass; no target, context for hier_dirty1_vs_full; "
                "dirty1_floor_short_vs_full / _long_vs_full: the floor's list split into the rows "
                "of runs shorter than 64 consecutive rows (short_rows: their share of the nodes) "
                "and the others, each part alone after its own full pass");
    wb_describe(ctx, SUITE, "pass", "raw",
                "the floor: flat parent-index loop in creation order (parents first), "
                "world = world[parent] x local, one 4x4 multiply, local (bind included) composed "
                "once; own translation unit, -ffp-contract=off like weft's math; same bits");
    wb_describe(ctx, SUITE, "pass", "pointer",
                "recursive first-child/next-sibling walk over malloc'd nodes in creation order: "
                "compose + 1 multiply per node (identity bind), the same formulas as weft");
    wb_describe(ctx, SUITE, "deep_floor_level_order_vs_floor", "ratio",
                "the floor's loop over the deep shape's arrays laid out level by level (each "
                "parent a level back) / the floor in creation order (each parent the row "
                "before), both from evicted caches in the same rep, same bits (sampled): why a "
                "level pass that splits no level walks the rows in place (weft does not "
                "regroup such a forest); no target");
    wb_describe(ctx, SUITE, "hier", "ratio",
                "median over reps of weft sequential / baseline, timed in the same rep, each pass "
                "after a 128 MiB write that evicts the caches (wb_cold), weft and the floor in "
                "alternating order");
    wb_describe(
        ctx, SUITE, "level_parallel_floor", "raw",
        "the machine's ceiling for hier_level_parallel_speedup_*: the floor's arrays in "
        "their level order (flat, balanced), each level's rows split in two halves run "
        "by an OpenMP team of 2 threads (one fork per pass, a barrier between levels), "
        "against the same code on a team of 1 (workers 1), timed after weft's passes in "
        "each rep, each pass from evicted caches; speedup: median over reps of 1-thread / "
        "2-thread; _cores: process "
        "CPU time over wall time of the 2-thread pass: near 1 at 1M nodes means both threads "
        "shared one core (they then wait at the spinning barrier and the speedup is no "
        "ceiling); it reads low on a quiet machine too (about 1.5 at 1M nodes, 1.0 for the "
        "sub-ms passes of --quick beside speedups of 1.9): the process clock counts a thread "
        "still running elsewhere late; same bits as the floor (sampled); not reported "
        "without OpenMP");
    static const char *const vs_level_floor =
        "median over reps of weft level-parallel (2 workers) / the level-parallel floor at 2 "
        "threads, timed in the same rep; no target";
    wb_describe(ctx, SUITE, "hier_level_parallel_flat_vs_floor", "ratio", vs_level_floor);
    wb_describe(ctx, SUITE, "hier_level_parallel_balanced_vs_floor", "ratio", vs_level_floor);
    for (int s = 0; s < SHAPE_COUNT; s++) {
        if (want(shape_names[s])) {
            bench_shape(ctx, (shape_t)s, n);
        }
    }
    if (want("attach")) {
        bench_attach(ctx, 100000u);
    }
    if (want("dirty")) {
        bench_dirty(ctx, n);
    }
    if (want("build")) {
        bench_build(ctx, n);
    }
}
