/* iter_cpp_vs_c.c: core/iter_cpp_vs_c, the cost of include/weft.hpp's lambda systems.
 *
 * DESIGN
 * Two worlds with the same N entities (Position, Velocity; 1,000,000, 100,000 with --quick),
 * each with one parallel system (default chunk size) computing position += velocity * dt:
 * here written by hand in C over weft_iter_t, in iter_cpp_vs_c.cpp as a weft.hpp lambda. Both
 * worlds run inline (one thread), so the figure is the per-entity loop and the per-chunk
 * dispatch, not scheduling. Every repetition times FRAMES weft_world_progress calls of each
 * world interleaved frame by frame (order rotating); the case reports ns per entity per frame
 * for each and the median over repetitions of the per-repetition ratio cpp / C (target
 * <= 1.05). A second, identical C world is timed the same way and reported as the ratio
 * iter_cpp_vs_c_aa (C / C): the spread the machine alone produces. The worlds must hash
 * equal afterwards (a note says so if not). */
#include <math.h>
#include <stdlib.h>

#include "common.h"
#include "iter_cpp.h"

#define SUITE "core"
#define FRAMES 20

weft_world_desc_t wb_iter_world_desc(void) {
    return (weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE};
}

weft_result_t wb_iter_populate(weft_world_t *w, weft_component_t pos, weft_component_t vel,
                               uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        weft_entity_t e;
        void *p, *v;
        weft_result_t r = weft_entity_create(w, &e);
        if (r == WEFT_OK) {
            r = weft_component_add(w, e, pos, &p);
        }
        if (r == WEFT_OK) {
            r = weft_component_add(w, e, vel, &v);
        }
        if (r != WEFT_OK) {
            return r;
        }
        *(wb_pos_t *)p = (wb_pos_t){(float)i, 0, 0};
        *(wb_vel_t *)v = (wb_vel_t){1, 2, 3};
    }
    return WEFT_OK;
}

/* The hand-written C system: contiguous columns when the batch has them, else lookups. */
static void c_move(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        const uint32_t n = it->rows;
        if (it->columns[0] && it->columns[1]) {
            wb_pos_t *p = it->columns[0];
            const wb_vel_t *v = it->columns[1];
            for (uint32_t i = 0; i < n; i++) {
                p[i].x += v[i].x * WB_ITER_DT;
                p[i].y += v[i].y * WB_ITER_DT;
                p[i].z += v[i].z * WB_ITER_DT;
            }
        } else {
            for (uint32_t i = 0; i < n; i++) {
                wb_pos_t *p = weft_iter_get(it, 0, i);
                const wb_vel_t *v = weft_iter_get(it, 1, i);
                p->x += v->x * WB_ITER_DT;
                p->y += v->y * WB_ITER_DT;
                p->z += v->z * WB_ITER_DT;
            }
        }
    }
}

static weft_world_t *c_world(uint32_t n) {
    weft_world_desc_t d = wb_iter_world_desc();
    weft_world_t *w = NULL;
    weft_component_t pos, vel;
    weft_result_t r = weft_world_create(&d, &w);
    if (r == WEFT_OK) {
        r = weft_component_register(
            w, &(weft_component_desc_t){.name = "Position", .size = sizeof(wb_pos_t)}, &pos);
    }
    if (r == WEFT_OK) {
        r = weft_component_register(
            w, &(weft_component_desc_t){.name = "Velocity", .size = sizeof(wb_vel_t)}, &vel);
    }
    if (r == WEFT_OK) {
        r = wb_iter_populate(w, pos, vel, n);
    }
    if (r == WEFT_OK) {
        weft_system_desc_t s = {.name = "move",
                                .fn = c_move,
                                .terms = {{.component = pos, .access = WEFT_ACCESS_WRITE},
                                          {.component = vel, .access = WEFT_ACCESS_READ}},
                                .parallel = true};
        r = weft_system_register(w, &s, NULL);
    }
    if (r != WEFT_OK) {
        fprintf(stderr, "bench core: C world: %s (%s)\n", weft_result_name(r), weft_last_error());
        weft_world_destroy(w);
        return NULL;
    }
    return w;
}

/* One frame of `w`; ns, or -1 when the frame failed. */
static double frame(weft_world_t *w) {
    double t0 = wb_now_ns();
    if (weft_world_progress(w, WB_ITER_DT) != WEFT_OK) {
        return -1.0;
    }
    return wb_now_ns() - t0;
}

/* One repetition: FRAMES frames of each world, interleaved frame by frame with the order
 * rotating, so load from other processes lands on every world alike. t[k] receives world k's
 * ns per entity per frame; false when a frame failed. */
static bool repetition(weft_world_t *const *w, int count, uint32_t n, int rep, double *t) {
    for (int k = 0; k < count; k++) {
        t[k] = 0;
    }
    for (int f = 0; f < FRAMES; f++) {
        for (int j = 0; j < count; j++) {
            int k = (rep + f + j) % count;
            double ns = frame(w[k]);
            if (ns < 0) {
                return false;
            }
            t[k] += ns;
        }
    }
    for (int k = 0; k < count; k++) {
        t[k] /= (double)n * FRAMES;
    }
    return true;
}

void wb_core_iter_cpp_vs_c(wb_ctx_t *ctx, uint32_t n, int reps);

void wb_core_iter_cpp_vs_c(wb_ctx_t *ctx, uint32_t n, int reps) {
    const char *name = "iter_cpp_vs_c";
    wb_describe(ctx, SUITE, name, "c",
                "hand-written C system over weft_iter_t: per batch, the contiguous-column loop "
                "p[i] += v[i] * dt (else weft_iter_get); parallel system, default chunks, "
                "weft_world_progress, inline world");
    wb_describe(ctx, SUITE, name, "weft.hpp",
                "the same system as a weft.hpp lambda each([](Pos &p, const Vel &v) {...}), "
                "same world, same flags");
    wb_describe(ctx, SUITE, name, "ratio",
                "median over repetitions of (cpp time / C time), frames of the two worlds "
                "interleaved one by one, order rotating; _aa: a second C world over the first "
                "(the noise floor)");
    /* World 0: C, world 1: weft.hpp, world 2: C again (the A/A control: the spread two
     * identical worlds show on this machine). */
    /* Created in the order C, weft.hpp, C again, so the C++ world's memory sits between the
     * two C worlds'. */
    weft_world_t *cw = c_world(n);
    wb_cpp_world_t *xw = wb_cpp_world_create(n);
    weft_world_t *cw2 = c_world(n);
    double *t = malloc((size_t)reps * 3 * sizeof *t);
    if (!cw || !cw2 || !xw || !t) {
        wb_note(ctx, SUITE, "%s: setup failed, not measured", name);
        wb_report(ctx, SUITE, name, "ratio", 1, NAN, "x", WB_AT_MOST, 1.05);
        free(t);
        weft_world_destroy(cw);
        weft_world_destroy(cw2);
        if (xw) {
            wb_cpp_world_destroy(xw);
        }
        return;
    }
    weft_world_t *w[3] = {cw, wb_cpp_world_c(xw), cw2};
    double *t_c = t, *t_x = t + reps, *t_c2 = t + 2 * reps;
    /* A warm-up repetition: the first frame builds the schedule and grows the tables. */
    double tr[3];
    bool ok = repetition(w, 3, n, 0, tr);
    for (int r = 0; r < reps && ok; r++) {
        ok = repetition(w, 3, n, r, tr);
        t_c[r] = tr[0];
        t_x[r] = tr[1];
        t_c2[r] = tr[2];
    }
    if (!ok) {
        wb_note(ctx, SUITE, "%s: a frame failed: %s", name, weft_last_error());
        wb_report(ctx, SUITE, name, "ratio", 1, NAN, "x", WB_AT_MOST, 1.05);
    } else {
        if (weft_world_hash(cw) != weft_world_hash(w[1]) ||
            weft_world_hash(cw) != weft_world_hash(cw2)) {
            wb_note(ctx, SUITE, "%s: the C and C++ worlds differ after the run", name);
        }
        double ratio = wb_median_ratio(t_x, t_c, reps);
        double aa = wb_median_ratio(t_c2, t_c, reps);
        wb_report(ctx, SUITE, "iter_cpp_vs_c_c", "c", 1, wb_median(t_c, reps), "ns", WB_NO_TARGET,
                  0);
        wb_report(ctx, SUITE, "iter_cpp_vs_c_cpp", "weft.hpp", 1, wb_median(t_x, reps), "ns",
                  WB_NO_TARGET, 0);
        wb_report(ctx, SUITE, "iter_cpp_vs_c_aa", "ratio", 1, aa, "x", WB_NO_TARGET, 0);
        wb_report(ctx, SUITE, name, "ratio", 1, ratio, "x", WB_AT_MOST, 1.05);
    }
    free(t);
    weft_world_destroy(cw);
    weft_world_destroy(cw2);
    wb_cpp_world_destroy(xw);
}
