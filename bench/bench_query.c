/* bench_query.c: the "query" suite — change detection (weft_query_term_t.filter).
 *
 * DESIGN
 * N entities (1,000,000; 100,000 with --quick) carry Position and Velocity (3 floats each),
 * created in one run so rows follow entity order. Each repetition is one "frame": 1% of the
 * entities, drawn at random (a fresh draw per repetition), are written, half through
 * weft_component_set and half through weft_component_get_mut.
 *
 * changed_1pct_vs_full: after the frame's writes to Position, the time to iterate a query
 * with a CHANGED filter on Position (summing the three floats of every match, then
 * weft_query_mark_seen) against the time to iterate the same query without the filter over
 * every row (the same sum): what a system pays to find the frame's changes with and without
 * change detection. The ratio is the median over repetitions of the pair timed back to back.
 * The changed iteration must yield exactly the written entities (checked every repetition).
 * changed_1pct_gather_floor: context for that ratio, no target: what a loop that already knew
 * the frame's changed rows (sorted, found outside the timing) pays to read each one's data
 * (the same sum) and entity, each row's two lines prefetched 16 rows ahead, i.e. what any change detection must at least pay for the
 * changed query's contract, against the same full iteration. Separate frames of the same
 * shape (draw, writes, then the timed pair), so that the changed case keeps its order.
 * changed_1pct_data_floor: the same loop with each row's entity taken from a side list (built
 * outside the timing, in the rows' order), only the data line prefetched: what a detection
 * whose log carried (row, entity) pairs would at least pay, one random line per changed row.
 * Context for whether such a log could reach the target where the gather floor cannot.
 *
 * change_tracking_write_cost: the same writes to Position (tracked: a query filters on it)
 * and to Velocity (untracked: no query filters on it), both pools identical in size and row
 * order, timed back to back in alternating order; ratio = tracked / untracked. The filtering
 * query is marked seen after every frame (outside the timing), so each frame's first tracked
 * write closes the previous frame's dirty-row epoch (change.h) inside the timed writes: every
 * cost of tracking is in the figure. change_tracking_lagging_write_cost: the same, with a
 * second filtering query that is never marked seen after the first frame, so every closed
 * epoch is copied into the row ticks (materialised), also inside the timed writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "weft.h"

#define SUITE "query"
#define WRITE_FRAMES 8 /* frames of 1% writes timed per repetition of the write cost */

typedef struct v3 {
    float x, y, z;
} v3_t;

typedef struct bench {
    weft_world_t *w;
    weft_component_t pos, vel;
    weft_query_t *changed; /* Position, CHANGED */
    weft_query_t *full;    /* Position, no filter */
    weft_entity_t *es;
    uint32_t n;
    uint32_t *pick; /* this frame's written entity positions */
    uint32_t npick;
    uint8_t *mark; /* dedup of picks */
    uint64_t rng;
} bench_t;

static uint64_t next_rand(bench_t *b) {
    b->rng ^= b->rng << 13;
    b->rng ^= b->rng >> 7;
    b->rng ^= b->rng << 17;
    return b->rng;
}

static void must(weft_result_t r, const char *what) {
    if (r != WEFT_OK) {
        fprintf(stderr, "bench query: %s: %s\n", what, weft_last_error());
        exit(1);
    }
}

static void setup(bench_t *b, uint32_t n) {
    memset(b, 0, sizeof *b);
    b->n = n;
    b->rng = 0x9E3779B97F4A7C15ull;
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE};
    must(weft_world_create(&d, &b->w), "world");
    weft_component_desc_t p = {.name = "Position", .size = sizeof(v3_t)};
    weft_component_desc_t v = {.name = "Velocity", .size = sizeof(v3_t)};
    must(weft_component_register(b->w, &p, &b->pos), "register");
    must(weft_component_register(b->w, &v, &b->vel), "register");
    b->es = malloc((size_t)n * sizeof *b->es);
    b->pick = malloc((size_t)n / 100u * sizeof *b->pick + sizeof *b->pick);
    b->mark = calloc(n, 1);
    v3_t *vals = malloc((size_t)n * sizeof *vals);
    if (!b->es || !b->pick || !b->mark || !vals) {
        fprintf(stderr, "bench query: out of memory\n");
        exit(1);
    }
    for (uint32_t i = 0; i < n; i++) {
        vals[i] = (v3_t){(float)i, 1.0f, 2.0f};
    }
    weft_component_t cs[2] = {b->pos, b->vel};
    const void *values[2] = {vals, vals};
    must(weft_entity_create_with(b->w, n, cs, 2, values, b->es), "create");
    free(vals);
    weft_query_desc_t qc = {
        .terms = {
            {.component = b->pos, .access = WEFT_ACCESS_READ, .filter = WEFT_CHANGE_CHANGED}}};
    weft_query_desc_t qf = {.terms = {{.component = b->pos, .access = WEFT_ACCESS_READ}}};
    must(weft_query_create(b->w, &qc, &b->changed), "query");
    must(weft_query_create(b->w, &qf, &b->full), "query");
    weft_query_mark_seen(b->changed);
}

static void teardown(bench_t *b) {
    weft_world_destroy(b->w);
    free(b->es);
    free(b->pick);
    free(b->mark);
}

/* Draw 1% of the entities, distinct, in random order. */
static void draw(bench_t *b) {
    uint32_t want = b->n / 100u;
    b->npick = 0;
    while (b->npick < want) {
        uint32_t i = (uint32_t)(next_rand(b) % b->n);
        if (!b->mark[i]) {
            b->mark[i] = 1;
            b->pick[b->npick++] = i;
        }
    }
    for (uint32_t k = 0; k < b->npick; k++) {
        b->mark[b->pick[k]] = 0;
    }
}

/* The frame's writes to component c: even picks through set, odd ones through get_mut. */
static void write_picks(bench_t *b, weft_component_t c) {
    for (uint32_t k = 0; k < b->npick; k++) {
        weft_entity_t e = b->es[b->pick[k]];
        if (k & 1u) {
            v3_t *p = weft_component_get_mut(b->w, e, c);
            p->x += 1.0f;
        } else {
            v3_t v = {(float)k, 3.0f, 4.0f};
            weft_component_set(b->w, e, c, &v);
        }
    }
}

/* Sum every matched Position of q (one chunk, as one system would); *rows gets the matches.
 * Both sides of a ratio run this same loop: the column when the batch has one, else
 * weft_iter_get (weft/query.h's batch forms). */
static double iterate(weft_query_t *q, uint32_t *rows) {
    weft_iter_t it;
    float sum = 0;
    uint32_t n = 0;
    weft_query_iter(q, 0, 0, &it);
    while (weft_iter_next(&it)) {
        const v3_t *p = it.columns[0];
        if (p != NULL) { /* a run: the plain array */
            for (uint32_t i = 0; i < it.rows; i++) {
                sum += p[i].x + p[i].y + p[i].z;
            }
        } else { /* a resolved block (scattered rows): the documented accessor */
            for (uint32_t i = 0; i < it.rows; i++) {
                const v3_t *q = weft_iter_get(&it, 0, i);
                sum += q->x + q->y + q->z;
            }
        }
        n += it.rows;
    }
    *rows = n;
    return sum;
}

/* One figure per repetition. */
static double *times(int reps) {
    double *t = malloc((size_t)reps * sizeof *t);
    if (t == NULL) {
        fprintf(stderr, "bench query: out of memory\n");
        exit(1);
    }
    return t;
}

/* A case of two sides and their ratio: the three descriptions. */
static void describe_pair(wb_ctx_t *ctx, const char *name, const char *a, const char *a_text,
                          const char *b, const char *b_text, const char *ratio_text) {
    wb_describe(ctx, SUITE, name, a, a_text);
    wb_describe(ctx, SUITE, name, b, b_text);
    wb_describe(ctx, SUITE, name, "ratio", ratio_text);
}

/* Its figures: each side's median (times scale, in unit) and the median of the paired
 * ratios ta/tb, against `target` when goal is not WB_NO_TARGET. Frees ta and tb. */
static void report_pair(wb_ctx_t *ctx, const char *name, const char *a, double *ta, const char *b,
                        double *tb, int reps, double scale, const char *unit, wb_goal_t goal,
                        double target) {
    wb_report(ctx, SUITE, name, a, 1, wb_median(ta, reps) * scale, unit, WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, name, b, 1, wb_median(tb, reps) * scale, unit, WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, name, "ratio", 1, wb_median_ratio(ta, tb, reps), "x", goal, target);
    free(ta);
    free(tb);
}

static void changed_vs_full(wb_ctx_t *ctx, bench_t *b, int reps) {
    double *tc = times(reps), *tf = times(reps);
    describe_pair(ctx, "changed_1pct_vs_full", "weft",
                  "after 1% random rows of Position were written (set or get_mut): iterate a "
                  "query with a CHANGED filter on Position, summing the 3 floats of each match, "
                  "then weft_query_mark_seen",
                  "full", "iterate the same query without the filter over every row, same sum",
                  "median over reps of changed ns / full ns, timed back to back");
    for (int r = 0; r < reps; r++) {
        draw(b);
        write_picks(b, b->pos);
        uint32_t nc = 0, nf = 0;
        double t0 = wb_now_ns();
        double sc = iterate(b->changed, &nc);
        weft_query_mark_seen(b->changed);
        double t1 = wb_now_ns();
        double sf = iterate(b->full, &nf);
        double t2 = wb_now_ns();
        wb_sink(&sc);
        wb_sink(&sf);
        if (nc != b->npick || nf != b->n) {
            fprintf(stderr, "bench query: changed query matched %u of %u written rows\n", nc,
                    b->npick);
            exit(1);
        }
        tc[r] = t1 - t0;
        tf[r] = t2 - t1;
    }
    report_pair(ctx, "changed_1pct_vs_full", "weft", tc, "full", tf, reps, 1e-3, "us", WB_AT_MOST,
                0.1);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Rows the floor fetches ahead: the best such loop measured here (cold rows: 0.76x the time of
 * the same loop without prefetching), as weft's own gather does. */
#define FLOOR_AHEAD 16u

/* changed_1pct_gather_floor and, with `side_list`, changed_1pct_data_floor (see DESIGN). The
 * pool's rows follow entity order (one create_with run, checked), so a pick's position is its
 * row. */
static void gather_floor(wb_ctx_t *ctx, bench_t *b, int reps, bool side_list) {
    weft_iter_t it;
    weft_query_iter(b->full, 0, 0, &it);
    if (!weft_iter_next(&it) || it.rows != b->n || it.columns[0] == NULL) {
        fprintf(stderr, "bench query: the full query is not one run of every row\n");
        exit(1);
    }
    const v3_t *data = it.columns[0];
    const uint32_t *ents = it.entities;
    for (uint32_t i = 0; i < b->n; i++) {
        if (ents[i] != weft_entity_index(b->es[i])) {
            fprintf(stderr, "bench query: rows do not follow entity order\n");
            exit(1);
        }
    }
    double *tg = times(reps), *tf = times(reps);
    uint32_t *side = malloc(((size_t)b->n / 100u + 1u) * sizeof *side);
    if (side == NULL) {
        fprintf(stderr, "bench query: out of memory\n");
        exit(1);
    }
    const char *name = side_list ? "changed_1pct_data_floor" : "changed_1pct_gather_floor";
    describe_pair(
        ctx, name, "gather",
        side_list ? "a raw loop over the frame's changed rows (sorted outside the timing, right "
                    "after the writes), each row's entity in a side list built outside the "
                    "timing: the same sum of each row's Position (its line prefetched 16 rows "
                    "ahead) and a read of its entity from the list"
                  : "a raw loop over the frame's changed rows (sorted outside the timing, right "
                    "after the writes): the same sum of each row's Position and a read of its "
                    "entity, both lines prefetched 16 rows ahead",
        "full", "the full iteration of changed_1pct_vs_full, timed right after",
        side_list ? "median over reps of gather ns / full ns: the floor of a log of "
                    "(row, entity) pairs"
                  : "median over reps of gather ns / full ns: the floor of "
                    "changed_1pct_vs_full");
    for (int r = 0; r < reps; r++) {
        draw(b);
        write_picks(b, b->pos);
        qsort(b->pick, b->npick, sizeof *b->pick, cmp_u32);
        uint32_t nf = 0, e = 0;
        float sg = 0;
        for (uint32_t k = 0; k < b->npick && side_list; k++) { /* outside the timing */
            side[k] = ents[b->pick[k]];
        }
        double t0 = wb_now_ns();
        if (side_list) {
            for (uint32_t k = 0; k < b->npick; k++) {
                if (k + FLOOR_AHEAD < b->npick) { /* the data line 16 rows ahead */
                    __builtin_prefetch(&data[b->pick[k + FLOOR_AHEAD]]);
                }
                const v3_t *p = &data[b->pick[k]];
                sg += p->x + p->y + p->z;
                e += side[k];
            }
        } else {
            for (uint32_t k = 0; k < b->npick; k++) {
                if (k + FLOOR_AHEAD < b->npick) { /* both lines of a row 16 rows ahead */
                    __builtin_prefetch(&data[b->pick[k + FLOOR_AHEAD]]);
                    __builtin_prefetch(&ents[b->pick[k + FLOOR_AHEAD]]);
                }
                const v3_t *p = &data[b->pick[k]];
                sg += p->x + p->y + p->z;
                e += ents[b->pick[k]];
            }
        }
        double t1 = wb_now_ns();
        double sf = iterate(b->full, &nf);
        double t2 = wb_now_ns();
        double sgd = sg + (double)e;
        wb_sink(&sgd);
        wb_sink(&sf);
        weft_query_mark_seen(b->changed); /* the frame's epoch ends, as in the changed case */
        tg[r] = t1 - t0;
        tf[r] = t2 - t1;
    }
    free(side);
    report_pair(ctx, name, "gather", tg, "full", tf, reps, 1e-3, "us", WB_NO_TARGET, 0);
}

static void write_cost(wb_ctx_t *ctx, bench_t *b, int reps, const char *name) {
    double *tt = times(reps), *tu = times(reps);
    describe_pair(ctx, name, "weft",
                  "1% random rows per frame, 8 frames, written half through weft_component_set "
                  "and half through get_mut, to Position (tracked: a query filters on it, marked "
                  "seen after each frame, untimed; the epoch close at a frame's first write is "
                  "timed); ns per write",
                  "untracked", "the same writes to Velocity (same size and rows, no filter on it)",
                  "median over reps of tracked ns / untracked ns, timed back to back in "
                  "alternating order");
    for (int r = 0; r < reps; r++) {
        double t_tracked = 0, t_untracked = 0;
        for (int f = 0; f < WRITE_FRAMES; f++) {
            draw(b);
            for (int side = 0; side < 2; side++) {
                bool tracked = (side == 0) == ((r + f) % 2 == 0);
                double t0 = wb_now_ns();
                write_picks(b, tracked ? b->pos : b->vel);
                double t = wb_now_ns() - t0;
                if (tracked) {
                    t_tracked += t;
                } else {
                    t_untracked += t;
                }
            }
            weft_query_mark_seen(b->changed);
        }
        tt[r] = t_tracked / (WRITE_FRAMES * (double)b->npick);
        tu[r] = t_untracked / (WRITE_FRAMES * (double)b->npick);
    }
    bool lagging = strcmp(name, "change_tracking_write_cost") != 0;
    report_pair(ctx, name, "weft", tt, "untracked", tu, reps, 1.0, "ns",
                lagging ? WB_NO_TARGET : WB_AT_MOST, lagging ? 0 : 1.1);
}

/* ---- joins (issue 16) ------------------------------------------------------- >>join
 *
 * N entities carry Position and Velocity (3 floats), every second one also Mass (a float),
 * created in entity order; the query is {Position write, Velocity read, Mass read} (or
 * {Position, Velocity}) and the work p += v * dt / m (or p += v * dt). Every weft side runs
 * the loop weft/query.h documents for a system body: one weft_query_iter per chunk of
 * JOIN_CHUNK driving rows, then per batch one loop over its rows through weft_iter_get
 * (no second path). Each repetition times the two sides of a case back to back, the
 * join3_* loops each after a 128 MiB write that evicts the caches (wb_cold); ratios are
 * medians over repetitions of the pair's ratio, ns are per matched entity.
 *
 * join3_ungrouped_vs_gather: the query in a world without groups, against the floor of any
 * sparse-set join: a raw loop over dense Mass with precomputed row-index arrays into plain
 * Position and Velocity arrays (the rows those entities hold in the pools).
 * join3_partial_group_vs_ungrouped: the same query in a world that also has a {P,V} group,
 * against the no-group world.
 * nested_outer_vs_raw / nested_inner_vs_raw: one world with groups {P,V,M} and {P,V}; the
 * {P,V,M} query against the raw dense join loop over as many rows, and the {P,V} query
 * against the raw dense move loop over every entity. Their weft side hands each batch's
 * columns to the same kernel (as core/join3_group does), so the ratio is the iteration's
 * cost over dense data, not a difference in the loop's machine code. Each side of every
 * pair here starts from cold caches (wb_cold).
 * nested_outer_memory_vs_raw (no target): the raw dense join loop itself over the nested
 * world's own P, V, M columns against the raw arrays, both cold: how much of
 * nested_outer_vs_raw is where the data sit in memory rather than the iteration. On the
 * 2-vCPU VM this moves by about +-10% from one process to the next (the pages each run gets),
 * so nested_* figures are read as medians over several runs. */

#define JOIN_CHUNK 4096u
#define JOIN_DT 0.016f

typedef struct join_world {
    weft_world_t *w;
    weft_component_t pos, vel, mass;
    weft_query_t *q3;        /* {P write, V, M} */
    weft_query_t *q2;        /* {P write, V} */
    weft_entity_t last_mass; /* the entity holding Mass's last row */
    bool refused;            /* a group was refused (the world has fewer groups than asked) */
} join_world_t;

/* groups: bit 0 a {P,V} group, bit 1 a {P,V,M} group (created before the entities). */
static void join_setup(join_world_t *j, uint32_t n, unsigned groups) {
    memset(j, 0, sizeof *j);
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE};
    must(weft_world_create(&d, &j->w), "world");
    weft_component_desc_t p = {.name = "Position", .size = sizeof(v3_t)};
    weft_component_desc_t v = {.name = "Velocity", .size = sizeof(v3_t)};
    weft_component_desc_t m = {.name = "Mass", .size = sizeof(float)};
    must(weft_component_register(j->w, &p, &j->pos), "register");
    must(weft_component_register(j->w, &v, &j->vel), "register");
    must(weft_component_register(j->w, &m, &j->mass), "register");
    weft_group_t g;
    if (groups & 2u) {
        weft_group_desc_t gd = {.components = {j->pos, j->vel, j->mass}};
        must(weft_group_create(j->w, &gd, &g), "group {P,V,M}");
    }
    if (groups & 1u) {
        weft_group_desc_t gd = {.components = {j->pos, j->vel}};
        j->refused = weft_group_create(j->w, &gd, &g) != WEFT_OK;
    }
    weft_entity_t *es = malloc((size_t)n * sizeof *es);
    v3_t *pv = malloc((size_t)n * sizeof *pv), *vv = malloc((size_t)n * sizeof *vv);
    if (!es || !pv || !vv) {
        fprintf(stderr, "bench query: out of memory\n");
        exit(1);
    }
    for (uint32_t i = 0; i < n; i++) {
        pv[i] = (v3_t){(float)i, 0.0f, 0.0f};
        vv[i] = (v3_t){1.0f, 2.0f, 3.0f};
    }
    weft_component_t cs[2] = {j->pos, j->vel};
    const void *values[2] = {pv, vv};
    must(weft_entity_create_with(j->w, n, cs, 2, values, es), "create");
    for (uint32_t i = 0; i < n; i += 2) {
        float mv = 2.0f;
        must(weft_component_set(j->w, es[i], j->mass, &mv), "mass");
        j->last_mass = es[i];
    }
    free(es);
    free(pv);
    free(vv);
    weft_query_desc_t d3 = {.terms = {{.component = j->pos, .access = WEFT_ACCESS_WRITE},
                                      {.component = j->vel, .access = WEFT_ACCESS_READ},
                                      {.component = j->mass, .access = WEFT_ACCESS_READ}}};
    weft_query_desc_t d2 = {.terms = {{.component = j->pos, .access = WEFT_ACCESS_WRITE},
                                      {.component = j->vel, .access = WEFT_ACCESS_READ}}};
    must(weft_query_create(j->w, &d3, &j->q3), "query");
    must(weft_query_create(j->w, &d2, &j->q2), "query");
}

/* p += v * dt / m through the query, as a system body: returns entities visited. */
/* The documented body loop over one batch of the {P write, V, M} query. */
static inline void join3_entries(const weft_iter_t *it) {
    for (uint32_t i = 0; i < it->rows; i++) {
        v3_t *p = weft_iter_get(it, 0, i);
        const v3_t *v = weft_iter_get(it, 1, i);
        float k = JOIN_DT / *(const float *)weft_iter_get(it, 2, i);
        p->x += v->x * k;
        p->y += v->y * k;
        p->z += v->z * k;
    }
}

static uint32_t join3_weft(const weft_query_t *q) {
    uint32_t seen = 0, chunks = weft_query_chunk_count(q, JOIN_CHUNK);
    for (uint32_t c = 0; c < chunks; c++) {
        weft_iter_t it;
        weft_query_iter(q, JOIN_CHUNK, c, &it);
        while (weft_iter_next(&it)) {
            join3_entries(&it);
            seen += it.rows;
        }
    }
    return seen;
}

#if defined(__GNUC__) || defined(__clang__)
#define JOIN_NOINLINE __attribute__((noinline))
#else
#define JOIN_NOINLINE
#endif

/* The gather floor: dense Mass, Position and Velocity reached through row-index arrays. */
JOIN_NOINLINE static void join3_gather(v3_t *restrict p, const v3_t *restrict v,
                                       const float *restrict m, const uint32_t *restrict ip,
                                       const uint32_t *restrict iv, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        float k = JOIN_DT / m[i];
        v3_t *pp = &p[ip[i]];
        const v3_t *vv = &v[iv[i]];
        pp->x += vv->x * k;
        pp->y += vv->y * k;
        pp->z += vv->z * k;
    }
}

/* The dense floors: plain parallel arrays. */
JOIN_NOINLINE static void join3_dense(v3_t *restrict p, const v3_t *restrict v,
                                      const float *restrict m, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        float k = JOIN_DT / m[i];
        p[i].x += v[i].x * k;
        p[i].y += v[i].y * k;
        p[i].z += v[i].z * k;
    }
}

JOIN_NOINLINE static void join2_dense(v3_t *restrict p, const v3_t *restrict v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        p[i].x += v[i].x * JOIN_DT;
        p[i].y += v[i].y * JOIN_DT;
        p[i].z += v[i].z * JOIN_DT;
    }
}

/* The nested cases' weft side: a batch with a column for every term (a group drives) goes
 * to the same dense kernel the raw side runs (weft/query.h: columns are plain arrays for
 * vectorised code), any other batch through the documented per-entry loop. So both sides run
 * the same machine code over dense data, and the ratio is what the iteration adds. */
static uint32_t join3_weft_columns(const weft_query_t *q) {
    uint32_t seen = 0, chunks = weft_query_chunk_count(q, JOIN_CHUNK);
    for (uint32_t c = 0; c < chunks; c++) {
        weft_iter_t it;
        weft_query_iter(q, JOIN_CHUNK, c, &it);
        while (weft_iter_next(&it)) {
            if (it.columns[0] && it.columns[1] && it.columns[2]) {
                join3_dense(it.columns[0], it.columns[1], it.columns[2], it.rows);
            } else {
                join3_entries(&it);
            }
            seen += it.rows;
        }
    }
    return seen;
}

/* p += v dt over one batch of a {P write, V} query: its columns to the dense kernel when it
 * has both, else through weft_iter_get per row. */
static void join2_batch(const weft_iter_t *it) {
    if (it->columns[0] && it->columns[1]) {
        join2_dense(it->columns[0], it->columns[1], it->rows);
        return;
    }
    for (uint32_t i = 0; i < it->rows; i++) {
        v3_t *p = weft_iter_get(it, 0, i);
        const v3_t *v = weft_iter_get(it, 1, i);
        p->x += v->x * JOIN_DT;
        p->y += v->y * JOIN_DT;
        p->z += v->z * JOIN_DT;
    }
}

/* p += v dt through q, batch by batch (join2_batch): returns entities visited. */
static uint32_t join2_weft_columns(const weft_query_t *q) {
    uint32_t seen = 0, chunks = weft_query_chunk_count(q, JOIN_CHUNK);
    for (uint32_t c = 0; c < chunks; c++) {
        weft_iter_t it;
        weft_query_iter(q, JOIN_CHUNK, c, &it);
        while (weft_iter_next(&it)) {
            join2_batch(&it);
            seen += it.rows;
        }
    }
    return seen;
}

typedef struct join_raw {
    v3_t *p, *v;
    float *m;
    uint32_t *ip, *iv; /* row in p / v of Mass row i */
    uint32_t nm;       /* Mass rows */
} join_raw_t;

static void join_raw_init(join_raw_t *r, uint32_t n) {
    r->nm = (n + 1u) / 2u;
    r->p = malloc((size_t)n * sizeof *r->p);
    r->v = malloc((size_t)n * sizeof *r->v);
    r->m = malloc((size_t)r->nm * sizeof *r->m);
    r->ip = malloc((size_t)r->nm * sizeof *r->ip);
    r->iv = malloc((size_t)r->nm * sizeof *r->iv);
    if (!r->p || !r->v || !r->m || !r->ip || !r->iv) {
        fprintf(stderr, "bench query: out of memory\n");
        exit(1);
    }
    for (uint32_t i = 0; i < n; i++) {
        r->p[i] = (v3_t){(float)i, 0.0f, 0.0f};
        r->v[i] = (v3_t){1.0f, 2.0f, 3.0f};
    }
    for (uint32_t i = 0; i < r->nm; i++) { /* Mass entity i is entity 2i: row 2i in P and V */
        r->m[i] = 2.0f;
        r->ip[i] = 2u * i;
        r->iv[i] = 2u * i;
    }
}

static void join_raw_fini(join_raw_t *r) {
    free(r->p);
    free(r->v);
    free(r->m);
    free(r->ip);
    free(r->iv);
}

/* A layout change of the join with the same data and row order afterwards: the entity
 * holding Mass's last row loses Mass (no row moves) and gets it back (appended: the same
 * row). The join cache is keyed by the pools' layout counts, so the next iteration resolves
 * every window again. */
static void join_relayout(join_world_t *j) {
    float mv = 2.0f;
    must(weft_component_remove(j->w, j->last_mass, j->mass), "relayout remove");
    must(weft_component_set(j->w, j->last_mass, j->mass, &mv), "relayout add");
}

/* Report a pair timed back to back (per-entity ns arrays a and b over reps; target 0: none). */
static void join_report(wb_ctx_t *ctx, const char *name, const char *ia, double *a, const char *ib,
                        double *b, int reps, double target) {
    double ratio = wb_median_ratio(a, b, reps);
    wb_report(ctx, SUITE, name, ia, 1, wb_median(a, reps), "ns", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, name, ib, 1, wb_median(b, reps), "ns", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, name, "ratio", 1, ratio, "x", target > 0 ? WB_AT_MOST : WB_NO_TARGET,
              target);
}

static void join_check(uint32_t got, uint32_t want, const char *what) {
    if (got != want) {
        fprintf(stderr, "bench query: %s visited %u entities, expected %u\n", what, got, want);
        exit(1);
    }
}

/* ns per match of the 3-term join through q, from cold caches. */
static double cold_weft(unsigned char *cold, const weft_query_t *q, const join_raw_t *raw,
                        const char *what) {
    const double t0 = wb_cold(cold);
    join_check(join3_weft(q), raw->nm, what);
    return (wb_now_ns() - t0) / raw->nm;
}

/* ns per match of the gather floor, from cold caches. */
static double cold_gather(unsigned char *cold, join_raw_t *raw) {
    const double t0 = wb_cold(cold);
    join3_gather(raw->p, raw->v, raw->m, raw->ip, raw->iv, raw->nm);
    return (wb_now_ns() - t0) / raw->nm;
}

/* The four sides of the nested pairs. */
typedef enum nested_side {
    NESTED_OUTER_WEFT, /* {P,V,M} query in the nested world */
    NESTED_OUTER_RAW,  /* the dense join loop over as many rows */
    NESTED_INNER_WEFT, /* {P,V} query in the nested world */
    NESTED_INNER_RAW,  /* the dense move loop over every entity */
    NESTED_OUTER_MEM   /* the dense join loop over the nested world's own P, V, M columns */
} nested_side_t;

/* The nested world's {P,V,M} rows as three dense columns (the group's prefix: one batch when
 * iterated as one chunk), resolved once before the timed loops (no pool changes between reps,
 * so they stay valid); p NULL when weft hands them out otherwise. */
typedef struct nested_cols {
    v3_t *p, *v;
    float *m;
} nested_cols_t;

static nested_cols_t nested_columns(const join_world_t *nested, uint32_t nm) {
    weft_iter_t it;
    if (weft_query_iter(nested->q3, 0, 0, &it) != WEFT_OK || !weft_iter_next(&it) ||
        it.rows != nm || !it.columns[0] || !it.columns[1] || !it.columns[2]) {
        return (nested_cols_t){0};
    }
    return (nested_cols_t){it.columns[0], it.columns[1], it.columns[2]};
}

/* ns of one side of a nested pair, from cold caches like every pair above: without the
 * eviction each side found whatever the loops before it left in the last-level cache, and
 * the pair's ratio moved with the order of the rep, not with the iteration. */
static double cold_nested(unsigned char *cold, nested_side_t side, const join_world_t *nested,
                          const nested_cols_t *cols, join_raw_t *raw, uint32_t n) {
    const double t0 = wb_cold(cold);
    switch (side) {
    case NESTED_OUTER_WEFT:
        join_check(join3_weft_columns(nested->q3), raw->nm, "nested outer");
        break;
    case NESTED_OUTER_RAW:
        join3_dense(raw->p, raw->v, raw->m, raw->nm);
        break;
    case NESTED_INNER_WEFT:
        join_check(join2_weft_columns(nested->q2), n, "nested inner");
        break;
    case NESTED_INNER_RAW:
        join2_dense(raw->p, raw->v, n);
        break;
    case NESTED_OUTER_MEM:
        join3_dense(cols->p, cols->v, cols->m, raw->nm);
        break;
    }
    return wb_now_ns() - t0;
}

static void joins(wb_ctx_t *ctx, uint32_t n, int reps) {
    join_world_t plain, partial, nested;
    join_setup(&plain, n, 0u);
    join_setup(&partial, n, 1u);
    join_setup(&nested, n, 3u);
    join_raw_t raw;
    join_raw_init(&raw, n);
    double *t = malloc((size_t)reps * 11u * sizeof *t);
    unsigned char *cold = malloc(WB_COLD_BYTES);
    if (t == NULL || cold == NULL) {
        fprintf(stderr, "bench query: out of memory\n");
        exit(1);
    }
    double *t_ung = t, *t_gat = t + reps, *t_part = t + 2 * reps, *t_ung2 = t + 3 * reps;
    double *t_out = t + 4 * reps, *t_d3 = t + 5 * reps, *t_in = t + 6 * reps, *t_d2 = t + 7 * reps;
    double *t_rel = t + 8 * reps, *t_gat2 = t + 9 * reps, *t_mem = t + 10 * reps;
    const double nm = raw.nm;
    const nested_cols_t cols =
        nested.refused ? (nested_cols_t){0} : nested_columns(&nested, raw.nm);
    for (int r = 0; r < reps; r++) {
        t_ung[r] = cold_weft(cold, plain.q3, &raw, "join3 ungrouped");
        t_gat[r] = cold_gather(cold, &raw);
        t_part[r] = cold_weft(cold, partial.q3, &raw, "join3 partial group");
        t_ung2[r] = cold_weft(cold, plain.q3, &raw, "join3 ungrouped");
        if (!nested.refused) {
            t_out[r] = cold_nested(cold, NESTED_OUTER_WEFT, &nested, &cols, &raw, n) / nm;
            t_d3[r] = cold_nested(cold, NESTED_OUTER_RAW, &nested, &cols, &raw, n) / nm;
            t_in[r] = cold_nested(cold, NESTED_INNER_WEFT, &nested, &cols, &raw, n) / n;
            t_d2[r] = cold_nested(cold, NESTED_INNER_RAW, &nested, &cols, &raw, n) / n;
            if (cols.p != NULL) {
                t_mem[r] = cold_nested(cold, NESTED_OUTER_MEM, &nested, &cols, &raw, n) / nm;
            }
        }
        join_relayout(&plain);
        t_rel[r] = cold_weft(cold, plain.q3, &raw, "join3 ungrouped after a relayout");
        t_gat2[r] = cold_gather(cold, &raw);
    }
    wb_sink(raw.p);
    join_report(ctx, "join3_ungrouped_vs_gather", "weft", t_ung, "gather", t_gat, reps, 1.5);
    join_report(ctx, "join3_partial_group_vs_ungrouped", "weft", t_part, "ungrouped", t_ung2, reps,
                1.0);
    wb_report(ctx, SUITE, "join3_relayout_vs_gather", "weft", 1, wb_median(t_rel, reps), "ns",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "join3_relayout_vs_gather", "gather", 1, wb_median(t_gat2, reps), "ns",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "join3_relayout_vs_gather", "ratio", 1,
              wb_median_ratio(t_rel, t_gat2, reps), "x", WB_NO_TARGET, 0);
    if (nested.refused) {
        wb_note(ctx, SUITE, "nested_*: weft refused the {P,V} group beside {P,V,M}: %s",
                weft_last_error());
    } else {
        join_report(ctx, "nested_outer_vs_raw", "weft", t_out, "raw", t_d3, reps, 1.1);
        join_report(ctx, "nested_inner_vs_raw", "weft", t_in, "raw", t_d2, reps, 1.1);
        if (cols.p != NULL) {
            join_report(ctx, "nested_outer_memory_vs_raw", "kernel", t_mem, "raw", t_d3, reps, 0);
        }
    }
    free(t);
    free(cold);
    join_raw_fini(&raw);
    weft_world_destroy(plain.w);
    weft_world_destroy(partial.w);
    weft_world_destroy(nested.w);
}

/* ---- merge-join against probing (issue 16, item 5) ------------------------- >>merge
 *
 * Both sides of each case iterate the same query over the same world (every pool sorted by
 * entity: entities get their components in ascending entity order) with the same body loop;
 * only weft_query_desc_t.join differs: WEFT_JOIN_MERGE (the pools walked together with
 * galloping cursors) against WEFT_JOIN_PROBE (each driving entity looked up in the other
 * pools' sparse indices). Both plans drive from the same pool. Before each timed loop the
 * world's layout changes with the same data and order (join_relayout: the entity holding the
 * last row of a pool loses the component and gets it back, appended at the same row, so the
 * pools stay sorted) and the caches are evicted: the probe side resolves every window again
 * instead of reading its join cache, as in a frame after any add or remove; the merge side
 * has no cache. The order of the two sides alternates per repetition; ns are per match.
 *
 * merge_join_vs_probe_dense: the join3 world (P and V on every entity, Mass on every second),
 * query {P write, V, M}, body p += v * dt / m (join3_entries); Mass's 500,000 rows drive.
 * merge_join_vs_probe_sparse1: P on the entities whose index mod 100 is 0..50, V on 50..99:
 * 1% of the entities have both, spread evenly; query {P write, V}, body p += v * dt; V's
 * rows drive (the smaller pool). */

typedef struct merge_world {
    weft_world_t *w;
    weft_component_t pos, vel;
    weft_query_t *merge, *probe; /* {P write, V}, join MERGE / PROBE */
    weft_entity_t last_vel;      /* the entity holding V's last row */
    uint32_t matches;
} merge_world_t;

static void merge_sparse_setup(merge_world_t *m, uint32_t n) {
    memset(m, 0, sizeof *m);
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE};
    must(weft_world_create(&d, &m->w), "world");
    weft_component_desc_t p = {.name = "Position", .size = sizeof(v3_t)};
    weft_component_desc_t v = {.name = "Velocity", .size = sizeof(v3_t)};
    must(weft_component_register(m->w, &p, &m->pos), "register");
    must(weft_component_register(m->w, &v, &m->vel), "register");
    for (uint32_t i = 0; i < n; i++) {
        weft_entity_t e;
        must(weft_entity_create(m->w, &e), "create");
        v3_t pv = {(float)i, 0.0f, 0.0f}, vv = {1.0f, 2.0f, 3.0f};
        if (i % 100u <= 50u) {
            must(weft_component_set(m->w, e, m->pos, &pv), "position");
        }
        if (i % 100u >= 50u) {
            must(weft_component_set(m->w, e, m->vel, &vv), "velocity");
            m->last_vel = e;
        }
        m->matches += i % 100u == 50u;
    }
    weft_query_desc_t qd = {.terms = {{.component = m->pos, .access = WEFT_ACCESS_WRITE},
                                      {.component = m->vel, .access = WEFT_ACCESS_READ}}};
    qd.join = WEFT_JOIN_MERGE;
    must(weft_query_create(m->w, &qd, &m->merge), "query");
    qd.join = WEFT_JOIN_PROBE;
    must(weft_query_create(m->w, &qd, &m->probe), "query");
}

/* ns per match of one side: relayout (same data and order), evict the caches, iterate. */
static double merge_side(unsigned char *cold, merge_world_t *m, const weft_query_t *q) {
    v3_t vv = {1.0f, 2.0f, 3.0f};
    must(weft_component_remove(m->w, m->last_vel, m->vel), "relayout remove");
    must(weft_component_set(m->w, m->last_vel, m->vel, &vv), "relayout add");
    const double t0 = wb_cold(cold);
    join_check(join2_weft_columns(q), m->matches, "merge_join_vs_probe_sparse1");
    return (wb_now_ns() - t0) / m->matches;
}

/* ns per match of the dense case's query q (join3 world j, matches raw->nm). */
static double merge_dense_side(unsigned char *cold, join_world_t *j, const weft_query_t *q,
                               uint32_t nm) {
    join_relayout(j);
    const double t0 = wb_cold(cold);
    join_check(join3_weft(q), nm, "merge_join_vs_probe_dense");
    return (wb_now_ns() - t0) / nm;
}

static void merge_joins(wb_ctx_t *ctx, uint32_t n, int reps) {
    join_world_t dense;
    join_setup(&dense, n, 0u);
    weft_query_desc_t d3 = {.terms = {{.component = dense.pos, .access = WEFT_ACCESS_WRITE},
                                      {.component = dense.vel, .access = WEFT_ACCESS_READ},
                                      {.component = dense.mass, .access = WEFT_ACCESS_READ}}};
    weft_query_t *dm = NULL, *dp = NULL;
    d3.join = WEFT_JOIN_MERGE;
    must(weft_query_create(dense.w, &d3, &dm), "query");
    d3.join = WEFT_JOIN_PROBE;
    must(weft_query_create(dense.w, &d3, &dp), "query");
    const uint32_t nm = (n + 1u) / 2u;
    merge_world_t sp;
    merge_sparse_setup(&sp, n);
    double *t = malloc((size_t)reps * 4u * sizeof *t);
    unsigned char *cold = malloc(WB_COLD_BYTES);
    if (t == NULL || cold == NULL) {
        fprintf(stderr, "bench query: out of memory\n");
        exit(1);
    }
    double *t_dm = t, *t_dp = t + reps, *t_sm = t + 2 * reps, *t_sp = t + 3 * reps;
    for (int r = 0; r < reps; r++) {
        if (r % 2 == 0) {
            t_dm[r] = merge_dense_side(cold, &dense, dm, nm);
            t_dp[r] = merge_dense_side(cold, &dense, dp, nm);
            t_sm[r] = merge_side(cold, &sp, sp.merge);
            t_sp[r] = merge_side(cold, &sp, sp.probe);
        } else {
            t_dp[r] = merge_dense_side(cold, &dense, dp, nm);
            t_dm[r] = merge_dense_side(cold, &dense, dm, nm);
            t_sp[r] = merge_side(cold, &sp, sp.probe);
            t_sm[r] = merge_side(cold, &sp, sp.merge);
        }
    }
    join_report(ctx, "merge_join_vs_probe_dense", "merge", t_dm, "probe", t_dp, reps, 0);
    join_report(ctx, "merge_join_vs_probe_sparse1", "merge", t_sm, "probe", t_sp, reps, 0);
    free(t);
    free(cold);
    weft_world_destroy(dense.w);
    weft_world_destroy(sp.w);
}

static void describe_joins(wb_ctx_t *ctx) {
    wb_describe(ctx, SUITE, "merge_join_vs_probe_dense", "merge",
                "query {P write, V, M} (P, V on every entity, M on every second; pools sorted by "
                "entity) with join = WEFT_JOIN_MERGE, the documented body loop, after a relayout "
                "and a cache eviction; ns per match");
    wb_describe(ctx, SUITE, "merge_join_vs_probe_dense", "probe",
                "the same query, world and loop with join = WEFT_JOIN_PROBE");
    wb_describe(ctx, SUITE, "merge_join_vs_probe_sparse1", "merge",
                "query {P write, V}, P on entities i%100 in 0..50, V on 50..99 (1% have both), "
                "join = WEFT_JOIN_MERGE, per batch the dense kernel when both columns are given, "
                "else weft_iter_get per row, after a relayout and a cache eviction; ns per match");
    wb_describe(ctx, SUITE, "merge_join_vs_probe_sparse1", "probe",
                "the same query, world and loop with join = WEFT_JOIN_PROBE");
    wb_describe(ctx, SUITE, "join3_ungrouped_vs_gather", "weft",
                "query {P write, V, M} in a world without groups, the documented body loop "
                "(weft_iter_get per term and row, chunks of 4096 driving rows); ns per match. No "
                "pool of the join changes between repetitions, so the rows come from the "
                "query's join cache (join3_relayout_vs_gather times the iteration after a change)");
    wb_describe(ctx, SUITE, "join3_relayout_vs_gather", "weft",
                "the same query and loop right after one entity lost and regained Mass (same "
                "data and row order, new layout count): every window is looked up again");
    wb_describe(ctx, SUITE, "join3_relayout_vs_gather", "gather",
                "the gather floor again, timed right after it");
    wb_describe(ctx, SUITE, "join3_ungrouped_vs_gather", "gather",
                "raw loop over dense Mass with precomputed row-index arrays into plain P and V "
                "arrays, same arithmetic");
    wb_describe(ctx, SUITE, "join3_partial_group_vs_ungrouped", "weft",
                "the same query and loop in a world that also has a {P,V} group");
    wb_describe(ctx, SUITE, "join3_partial_group_vs_ungrouped", "ungrouped",
                "the same query and loop in the world without groups");
    wb_describe(ctx, SUITE, "nested_outer_vs_raw", "weft",
                "query {P,V,M} in a world with groups {P,V,M} and {P,V}; batches with a column per "
                "term go to the raw side's dense kernel, others through weft_iter_get");
    wb_describe(ctx, SUITE, "nested_outer_vs_raw", "raw",
                "raw loop over plain dense P, V, M arrays of as many rows");
    wb_describe(ctx, SUITE, "nested_inner_vs_raw", "weft",
                "query {P,V} in the same nested world, columns to the same dense kernel as the raw "
                "side; ns per entity");
    wb_describe(ctx, SUITE, "nested_outer_memory_vs_raw", "kernel",
                "the raw side's dense join loop over the nested world's own P, V, M columns "
                "(weft not iterating): memory placement alone");
    wb_describe(ctx, SUITE, "nested_outer_memory_vs_raw", "raw",
                "nested_outer_vs_raw's raw side, from the same reps");
    wb_describe(ctx, SUITE, "nested_inner_vs_raw", "raw",
                "raw loop over plain dense P and V arrays of every entity");
}

/* ---- automatic grouping ------------------------------------------------- >>auto_groups
 *
 * auto_groups_frame_vs_raw: N entities (1,000,000) all with Position; the even ones have
 * Velocity (N/2), every fourth one also Mass (N/4), the odd ones Health (a float; N/2,
 * disjoint from the Velocity ones), added entity by entity in that interleaved order. A
 * 1-worker world (worker_count 1) with weft_world_set_auto_groups(true), registered before the
 * entities exist, runs three systems each frame: {P write, V} p += v dt, {P write, V, M}
 * p += v dt / m, {P write, H} p.y += h dt, in that order (all write P). No group code: the
 * groups are weft's own. Each body hands a batch with a column for every term to the same
 * dense kernel the raw side runs, any other batch through weft_iter_get per row, and counts
 * its rows (checked: N/2, N/4, N/2 per frame). The weft side is one weft_world_progress.
 * The raw side is what an archetype ECS gets here: the three kernels over plain packed
 * arrays (P and V of the N/2 Velocity entities with the N/4 Mass ones first, Mass, P and H
 * of the N/2 Health ones). Both sides start from caches evicted by wb_cold; ns are per
 * row visited (N/2 + N/4 + N/2), the ratio the median of the pairs' ratios. The pairs are
 * timed after AUTO_SETTLE_FRAMES frames (40) of each world: the {P,H} rows are a packed
 * family that weft re-packs between frames once the frames' lost column batches have cost
 * about what a re-pack does (src/core/auto_group.h), which from the creation order here takes
 * about 16 frames; the case measures a frame of the settled world.
 * auto_groups_settle_vs_raw: those first frames, re-pack included: their mean ns per row
 * visited against as many raw frames (no target: what settling costs).
 * auto_groups_off_frame_vs_raw: the same frame in a world with the setting off (no target:
 * what automatic grouping changes). */

#define AUTO_SETTLE_FRAMES 40 /* frames run before the timed ones (see above) */

typedef struct auto_world {
    weft_world_t *w;
    weft_component_t pos, vel, mass, hp;
    uint32_t rows[3]; /* rows each system visited in the last frame */
} auto_world_t;

JOIN_NOINLINE static void ph_dense(v3_t *restrict p, const float *restrict h, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        p[i].y += h[i] * JOIN_DT;
    }
}

static void auto_sys_pv(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    auto_world_t *a = ctx->user;
    while (weft_iter_next(it)) {
        join2_batch(it);
        a->rows[0] += it->rows;
    }
}

static void auto_sys_pvm(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    auto_world_t *a = ctx->user;
    while (weft_iter_next(it)) {
        if (it->columns[0] && it->columns[1] && it->columns[2]) {
            join3_dense(it->columns[0], it->columns[1], it->columns[2], it->rows);
        } else {
            join3_entries(it);
        }
        a->rows[1] += it->rows;
    }
}

static void auto_sys_ph(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    auto_world_t *a = ctx->user;
    while (weft_iter_next(it)) {
        if (it->columns[0] && it->columns[1]) {
            ph_dense(it->columns[0], it->columns[1], it->rows);
        } else {
            for (uint32_t i = 0; i < it->rows; i++) {
                v3_t *p = weft_iter_get(it, 0, i);
                p->y += *(const float *)weft_iter_get(it, 1, i) * JOIN_DT;
            }
        }
        a->rows[2] += it->rows;
    }
}

static void auto_setup(auto_world_t *a, uint32_t n, bool on) {
    memset(a, 0, sizeof *a);
    weft_world_desc_t d = {.worker_count = 1};
    must(weft_world_create(&d, &a->w), "world");
    weft_component_desc_t p = {.name = "Position", .size = sizeof(v3_t)};
    weft_component_desc_t v = {.name = "Velocity", .size = sizeof(v3_t)};
    weft_component_desc_t m = {.name = "Mass", .size = sizeof(float)};
    weft_component_desc_t h = {.name = "Health", .size = sizeof(float)};
    must(weft_component_register(a->w, &p, &a->pos), "register");
    must(weft_component_register(a->w, &v, &a->vel), "register");
    must(weft_component_register(a->w, &m, &a->mass), "register");
    must(weft_component_register(a->w, &h, &a->hp), "register");
    must(weft_world_set_auto_groups(a->w, on), "auto groups");
    weft_system_desc_t s1 = {
        .name = "move",
        .fn = auto_sys_pv,
        .user = a,
        .terms = {{.component = a->pos, .access = WEFT_ACCESS_WRITE}, {.component = a->vel}}};
    weft_system_desc_t s2 = {.name = "move_mass",
                             .fn = auto_sys_pvm,
                             .user = a,
                             .terms = {{.component = a->pos, .access = WEFT_ACCESS_WRITE},
                                       {.component = a->vel},
                                       {.component = a->mass}}};
    weft_system_desc_t s3 = {
        .name = "heal",
        .fn = auto_sys_ph,
        .user = a,
        .terms = {{.component = a->pos, .access = WEFT_ACCESS_WRITE}, {.component = a->hp}}};
    must(weft_system_register(a->w, &s1, NULL), "system");
    must(weft_system_register(a->w, &s2, NULL), "system");
    must(weft_system_register(a->w, &s3, NULL), "system");
    for (uint32_t i = 0; i < n; i++) {
        weft_entity_t e;
        must(weft_entity_create(a->w, &e), "create");
        v3_t pv = {(float)i, 0.0f, 0.0f}, vv = {1.0f, 2.0f, 3.0f};
        float mv = 2.0f, hv = 0.5f;
        must(weft_component_set(a->w, e, a->pos, &pv), "set");
        if (i % 2u == 0) {
            must(weft_component_set(a->w, e, a->vel, &vv), "set");
            if (i % 4u == 0) {
                must(weft_component_set(a->w, e, a->mass, &mv), "set");
            }
        } else {
            must(weft_component_set(a->w, e, a->hp, &hv), "set");
        }
    }
}

/* One frame of the three systems; ns per row visited. */
static double auto_frame(unsigned char *cold, auto_world_t *a, uint32_t n, const char *what) {
    (void)wb_cold(cold);
    memset(a->rows, 0, sizeof a->rows);
    double t0 = wb_now_ns();
    must(weft_world_progress(a->w, JOIN_DT), "frame");
    double t = wb_now_ns() - t0;
    join_check(a->rows[0], n / 2u, what);
    join_check(a->rows[1], n / 4u, what);
    join_check(a->rows[2], n / 2u, what);
    return t / (double)(n / 2u + n / 4u + n / 2u);
}

typedef struct auto_raw {
    v3_t *pv, *v, *ph;
    float *m, *h;
} auto_raw_t;

static double auto_raw_frame(unsigned char *cold, const auto_raw_t *r, uint32_t n) {
    const double t0 = wb_cold(cold);
    join2_dense(r->pv, r->v, n / 2u);
    join3_dense(r->pv, r->v, r->m, n / 4u);
    ph_dense(r->ph, r->h, n / 2u);
    double t = wb_now_ns() - t0;
    wb_sink(r->pv);
    wb_sink(r->ph);
    return t / (double)(n / 2u + n / 4u + n / 2u);
}

static void auto_groups(wb_ctx_t *ctx, uint32_t n, int reps) {
    n &= ~3u;
    auto_world_t on, off;
    auto_setup(&on, n, true);
    auto_setup(&off, n, false);
    auto_raw_t r;
    r.pv = malloc((size_t)n / 2u * sizeof *r.pv);
    r.v = malloc((size_t)n / 2u * sizeof *r.v);
    r.ph = malloc((size_t)n / 2u * sizeof *r.ph);
    r.m = malloc((size_t)n / 4u * sizeof *r.m);
    r.h = malloc((size_t)n / 2u * sizeof *r.h);
    double *t = malloc((size_t)reps * 4u * sizeof *t);
    unsigned char *cold = malloc(WB_COLD_BYTES);
    if (!r.pv || !r.v || !r.ph || !r.m || !r.h || !t || !cold) {
        fprintf(stderr, "bench query: out of memory\n");
        exit(1);
    }
    for (uint32_t i = 0; i < n / 2u; i++) {
        r.pv[i] = (v3_t){(float)i, 0.0f, 0.0f};
        r.v[i] = (v3_t){1.0f, 2.0f, 3.0f};
        r.ph[i] = (v3_t){(float)i, 0.0f, 0.0f};
        r.h[i] = 0.5f;
    }
    for (uint32_t i = 0; i < n / 4u; i++) {
        r.m[i] = 2.0f;
    }
    double *t_on = t, *t_raw = t + reps, *t_off = t + 2 * reps, *t_raw2 = t + 3 * reps;
    /* The first frames settle the layout (see above); the settle figure is their total. */
    double settle_on = 0, settle_raw = 0;
    for (int k = 0; k < AUTO_SETTLE_FRAMES; k++) {
        settle_on += auto_frame(cold, &on, n, "auto frame (settling)");
        settle_raw += auto_raw_frame(cold, &r, n);
        (void)auto_frame(cold, &off, n, "frame, setting off (settling)");
    }
    for (int k = 0; k < reps; k++) {
        t_on[k] = auto_frame(cold, &on, n, "auto frame");
        t_raw[k] = auto_raw_frame(cold, &r, n);
        t_off[k] = auto_frame(cold, &off, n, "frame, setting off");
        t_raw2[k] = auto_raw_frame(cold, &r, n);
    }
    join_report(ctx, "auto_groups_frame_vs_raw", "weft", t_on, "raw", t_raw, reps, 1.2);
    wb_report(ctx, SUITE, "auto_groups_settle_vs_raw", "weft", 1, settle_on / AUTO_SETTLE_FRAMES,
              "ns", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "auto_groups_settle_vs_raw", "raw", 1, settle_raw / AUTO_SETTLE_FRAMES,
              "ns", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "auto_groups_settle_vs_raw", "ratio", 1, settle_on / settle_raw, "x",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "auto_groups_off_frame_vs_raw", "weft", 1, wb_median(t_off, reps), "ns",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "auto_groups_off_frame_vs_raw", "raw", 1, wb_median(t_raw2, reps), "ns",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "auto_groups_off_frame_vs_raw", "ratio", 1,
              wb_median_ratio(t_off, t_raw2, reps), "x", WB_NO_TARGET, 0);
    free(t);
    free(cold);
    free(r.pv);
    free(r.v);
    free(r.ph);
    free(r.m);
    free(r.h);
    weft_world_destroy(on.w);
    weft_world_destroy(off.w);
}

static void describe_auto_groups(wb_ctx_t *ctx) {
    wb_describe(ctx, SUITE, "auto_groups_frame_vs_raw", "weft",
                "one weft_world_progress of systems {P,V}, {P,V,M}, {P,H} on 1 worker with "
                "automatic grouping on (no group code); full-column batches to the raw kernels, "
                "others per row; ns per row visited");
    wb_describe(ctx, SUITE, "auto_groups_frame_vs_raw", "raw",
                "the three kernels over plain packed arrays (the archetype layout): P,V of the "
                "Velocity entities, Mass ones first; P,H of the Health ones");
    wb_describe(ctx, SUITE, "auto_groups_settle_vs_raw", "weft",
                "the first 40 frames of that world (its re-pack included), mean ns per row "
                "visited");
    wb_describe(ctx, SUITE, "auto_groups_settle_vs_raw", "raw", "40 raw frames, mean");
    wb_describe(ctx, SUITE, "auto_groups_off_frame_vs_raw", "weft",
                "the same frame in a world with automatic grouping off");
    wb_describe(ctx, SUITE, "auto_groups_off_frame_vs_raw", "raw",
                "the raw frame again, timed right after it");
}

void wb_suite_query(wb_ctx_t *ctx);

void wb_suite_query(wb_ctx_t *ctx) {
    uint32_t n = wb_quick(ctx) ? 100000u : 1000000u;
    int reps = wb_reps(ctx) * 2 + 1;            /* cheap cases: more pairs steady the medians */
    const char *only = getenv("WB_QUERY_CASE"); /* "change": the change cases only */
    if (only != NULL && strcmp(only, "auto") == 0) { /* "auto": the automatic grouping ones */
        describe_auto_groups(ctx);
        auto_groups(ctx, n, wb_reps(ctx));
        return;
    }
    bench_t b;
    setup(&b, n);
    wb_note(ctx, SUITE, "%u entities with Position and Velocity, 1%% written per frame", n);
    changed_vs_full(ctx, &b, reps);
    gather_floor(ctx, &b, reps, false);
    gather_floor(ctx, &b, reps, true);
    write_cost(ctx, &b, reps, "change_tracking_write_cost");
    /* A second filtering query that saw the first frame only: every epoch is materialised. */
    weft_query_desc_t ql = {
        .terms = {{.component = b.pos, .access = WEFT_ACCESS_READ, .filter = WEFT_CHANGE_CHANGED}}};
    weft_query_t *lag = NULL;
    must(weft_query_create(b.w, &ql, &lag), "query");
    weft_query_mark_seen(lag);
    write_cost(ctx, &b, reps, "change_tracking_lagging_write_cost");
    weft_query_destroy(lag);
    teardown(&b);
    if (only != NULL && strcmp(only, "change") == 0) {
        return;
    }
    describe_joins(ctx);
    joins(ctx, n, reps);
    describe_auto_groups(ctx);
    auto_groups(ctx, n, wb_reps(ctx));
    merge_joins(ctx, n, reps);
}
