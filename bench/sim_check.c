/* bench/sim_check.c: the schedule simulator against measured frames (sim_check.h). */
#include "sim_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim_record.h"

struct wb_sim_sample_one {
    wt_sim_trace_t trace[WB_SIM_MAX_TRACED]; /* events malloc'd */
    uint32_t traced;                         /* frames in trace[] */
    double block_ms;                         /* the measured block they follow */
};

bool wb_sim_samples_init(wb_sim_samples_t *s, uint32_t reps) {
    *s = (wb_sim_samples_t){0};
    s->s[0] = calloc((size_t)reps + 1, sizeof *s->s[0]);
    s->s[1] = calloc((size_t)reps + 1, sizeof *s->s[1]);
    s->cap = reps;
    s->failed = !s->s[0] || !s->s[1];
    return !s->failed;
}

void wb_sim_samples_free(wb_sim_samples_t *s) {
    for (int k = 0; k < 2; k++) {
        for (uint32_t i = 0; s->s[k] && i < s->n[k]; i++) {
            for (uint32_t j = 0; j < s->s[k][i].traced; j++) {
                free((void *)s->s[k][i].trace[j].events);
            }
        }
        free(s->s[k]);
    }
    *s = (wb_sim_samples_t){0};
}

/* One traced frame of a side (the trace holds that frame only): its events and wall time.
 * It runs right after the side's timed block, so it starts as warm as the block's frames. */
static bool trace_frame(const wb_sim_side_t *s, uint32_t workers, wt_sim_trace_t *out) {
    weft_trace_event_t *ev = NULL;
    *out = (wt_sim_trace_t){NULL, 0, workers, 0};
    if (weft_trace_enable(s->world, NULL) != WEFT_OK) {
        return false;
    }
    double t0 = wb_now_ns();
    weft_result_t r = s->frame(s->arg);
    double wall = wb_now_ns() - t0;
    uint32_t n = weft_trace_events(s->world, NULL, 0);
    bool ok = r == WEFT_OK && weft_trace_dropped(s->world) == 0;
    if (ok) {
        ev = malloc(((size_t)n + 1) * sizeof *ev);
        ok = ev != NULL;
    }
    if (ok) {
        n = weft_trace_events(s->world, ev, n);
    }
    weft_trace_disable(s->world);
    *out = (wt_sim_trace_t){ev, ok ? n : 0, workers, wall};
    if (!ok) {
        free(ev);
        out->events = NULL;
    }
    return ok;
}

void wb_sim_sample(wb_sim_samples_t *s, const wb_sim_side_t *side, int k, double block_ms,
                   uint32_t frames) {
    if (s->failed || s->n[k] == s->cap || frames == 0 || frames > WB_SIM_MAX_TRACED) {
        s->failed = true;
        return;
    }
    struct wb_sim_sample_one *o = &s->s[k][s->n[k]++]; /* counted now: freed with the rest */
    o->block_ms = block_ms;
    for (uint32_t j = 0; j < frames && !s->failed; j++) {
        s->failed = !trace_frame(side, k == 0 ? 1u : 2u, &o->trace[j]);
        o->traced += s->failed ? 0 : 1;
    }
}

weft_result_t wb_sim_progress(void *world) { return weft_world_progress(world, 0.016f); }

bool wb_sim_check(wb_ctx_t *ctx, const char *suite, const char *name, const wb_sim_side_t side[2],
                  const wb_sim_samples_t *samples, const double *speedup_target) {
    static wt_sim_costs_t costs;
    static bool calibrated;
    if (!calibrated && wt_sim_calibrate(&costs, 0) != 0) {
        wb_note(ctx, suite, "%s: calibrating the simulator failed", name);
        return false;
    }
    calibrated = true;
    const uint32_t pairs = samples->n[0] < samples->n[1] ? samples->n[0] : samples->n[1];
    bool ok = !samples->failed && pairs > 0;
    double *sim_ms[WB_SIM_POINTS] = {0}, *lane_ms[WB_SIM_POINTS] = {0}, *meas[2] = {0};
    double *path_ms = calloc((size_t)pairs + 1, sizeof(double));
    double *serial_ms = calloc((size_t)pairs + 1, sizeof(double));
    ok = ok && path_ms && serial_ms;
    for (int k = 0; k < WB_SIM_POINTS; k++) {
        sim_ms[k] = calloc((size_t)pairs + 1, sizeof(double));
        lane_ms[k] = calloc((size_t)pairs + 1, sizeof(double));
        ok = ok && sim_ms[k] && lane_ms[k];
    }
    meas[0] = calloc((size_t)pairs + 1, sizeof(double));
    meas[1] = calloc((size_t)pairs + 1, sizeof(double));
    double *traced_ms[2] = {calloc((size_t)pairs + 1, sizeof(double)),
                            calloc((size_t)pairs + 1, sizeof(double))};
    ok = ok && meas[0] && meas[1] && traced_ms[0] && traced_ms[1];
    for (uint32_t f = 0; f < pairs && ok; f++) {
        const struct wb_sim_sample_one *a = &samples->s[0][f], *b = &samples->s[1][f];
        const uint32_t m = a->traced < b->traced ? a->traced : b->traced;
        ok = m > 0;
        for (uint32_t j = 0; j < m && ok; j++) { /* the rep's traced pairs, averaged */
            wt_sim_record_t rec = {0};           /* empty until built; freeing it is then a no-op */
            ok = wt_sim_record_build(&rec, side[0].world, &a->trace[j], &b->trace[j], &costs) == 0;
            wt_sim_bound_t bd;
            ok = ok && wt_sim_bound(&rec.one, &bd) == 0;
            path_ms[f] += ok ? bd.path_ns / 1e6 / m : 0;
            serial_ms[f] += ok ? bd.serial_ns / 1e6 / m : 0;
            for (int k = 0; k < WB_SIM_POINTS && ok; k++) {
                wt_sim_result_t r;
                ok = wt_sim_run(k == 0 ? &rec.one : &rec.many, 1u << k, &r) == 0;
                sim_ms[k][f] += r.frame_ns / 1e6 / m;
            }
            rec.many.apply_measured = false; /* the same with the apply-lane model on */
            for (int k = 1; k < WB_SIM_POINTS && ok; k++) {
                wt_sim_result_t r;
                ok = wt_sim_run(&rec.many, 1u << k, &r) == 0;
                lane_ms[k][f] += r.frame_ns / 1e6 / m;
            }
            wt_sim_record_free(&rec);
            traced_ms[0][f] += a->trace[j].frame_ns / 1e6 / m;
            traced_ms[1][f] += b->trace[j].frame_ns / 1e6 / m;
        }
        meas[0][f] = a->block_ms;
        meas[1][f] = b->block_ms;
    }
    if (ok) {
        /* paired: each rep's traced pair against the blocks they followed */
        double e1 = wb_median_ratio(sim_ms[0], meas[0], (int)pairs) - 1.0;
        double e2 = wb_median_ratio(sim_ms[1], meas[1], (int)pairs) - 1.0;
        /* the errors' two sources: the traced frames against their blocks (the sample),
         * and the simulation against the traced frames (the model; 0 at 1 worker, where
         * frame_ns is read off the traced frame) */
        const double tb1 = wb_median_ratio(traced_ms[0], meas[0], (int)pairs) - 1.0;
        const double tb2 = wb_median_ratio(traced_ms[1], meas[1], (int)pairs) - 1.0;
        const double model2 = wb_median_ratio(sim_ms[1], traced_ms[1], (int)pairs) - 1.0;
        for (uint32_t f = 0; f < pairs; f++) {
            path_ms[f] += serial_ms[f]; /* the bound itself */
        }
        /* medians of the per-rep ratios */
        const double bound_x = wb_median_ratio(sim_ms[0], path_ms, (int)pairs);
        const double serial_x = wb_median_ratio(serial_ms, sim_ms[0], (int)pairs);
        const double e2_lanes = wb_median_ratio(lane_ms[1], meas[1], (int)pairs) - 1.0;
        double med[WB_SIM_POINTS], med_lanes[WB_SIM_POINTS];
        for (int k = 0; k < WB_SIM_POINTS; k++) {
            med[k] = wb_median(sim_ms[k], (int)pairs);
            med_lanes[k] = k ? wb_median(lane_ms[k], (int)pairs) : med[0];
        }
        /* the figures: <name><suffix>, what each says */
        static const struct {
            const char *suffix, *impl, *did;
        } figs[8] = {
            {"_sim_error_p1", "ratio",
             "|median over reps of simulated / measured - 1| at 1 worker: tools/sim replaying "
             "the frames traced right after each timed block (their mean), against that block"},
            {"_sim_error_p2", "ratio", "the same at 2 workers"},
            {"_sim_frame", "simulated",
             "SIMULATED, not measured: tools/sim's frame on P workers (median over reps), "
             "replaying the 2-worker traced frames' durations with this machine's "
             "job/steal/notice/wake/claim costs"},
            {"_sim_speedup", "simulated", "SIMULATED: median simulated frame at 1 / at P workers"},
            {"_sim_bound_speedup", "simulated",
             "SIMULATED: the 1-worker frame / what no worker count can beat with this schedule "
             "and the 1-worker durations, overheads aside: the serial part plus each phase's "
             "longest path of longest chunks (tools/sim wt_sim_bound)"},
            {"_sim_serial_share", "simulated",
             "the serial part (applies, work outside jobs) / the 1-worker frame"},
            {"_sim_lanes_error_p2", "ratio",
             "_sim_error_p2 with the apply-lane model on (placed applies replayed as their "
             "walk and lanes, tools/sim/sim.h): to validate on quiet runs before it is used"},
            {"_sim_lanes_speedup", "simulated",
             "SIMULATED: _sim_speedup with the apply-lane model on (not yet validated)"},
        };
        char fig[8][96];
        for (int i = 0; i < 8; i++) {
            snprintf(fig[i], sizeof fig[i], "%s%s", name, figs[i].suffix);
            wb_describe(ctx, suite, fig[i], figs[i].impl, figs[i].did);
        }
        const char *n1 = fig[0], *n2 = fig[1], *nf = fig[2], *ns = fig[3], *nb = fig[4],
                   *nsr = fig[5];
        wb_note(ctx, suite,
                "%s: simulated %.3f / %.3f ms at 1 / 2 workers (medians over %u reps), "
                "paired errors %+.1f%% / %+.1f%%",
                name, med[0], med[1], pairs, 100.0 * e1, 100.0 * e2);
        wb_note(ctx, suite,
                "%s: traced frames against their blocks %+.1f%% / %+.1f%% at 1 / 2 workers; "
                "simulated against the traced frames %+.1f%% at 2",
                name, 100.0 * tb1, 100.0 * tb2, 100.0 * model2);
        wb_report(ctx, suite, nb, "simulated", 0, bound_x, "x", WB_NO_TARGET, 0);
        wb_report(ctx, suite, nsr, "simulated", 1, serial_x, "x", WB_NO_TARGET, 0);
        wb_report(ctx, suite, n1, "ratio", 1, fabs(e1), "x", WB_AT_MOST, 0.07);
        wb_report(ctx, suite, n2, "ratio", 2, fabs(e2), "x", WB_AT_MOST, 0.07);
        wb_report(ctx, suite, fig[6], "ratio", 2, fabs(e2_lanes), "x", WB_NO_TARGET, 0);
        for (int k = 2; k < WB_SIM_POINTS; k++) {
            double target = speedup_target ? speedup_target[k] : 0;
            wb_report(ctx, suite, nf, "simulated", 1u << k, med[k], "ms", WB_NO_TARGET, 0);
            wb_report(ctx, suite, ns, "simulated", 1u << k, med[0] / med[k], "x",
                      target > 0 ? WB_AT_LEAST : WB_NO_TARGET, target);
        }
        for (int k = 4; k < WB_SIM_POINTS; k += 2) { /* 16 and 64 workers */
            wb_report(ctx, suite, fig[7], "simulated", 1u << k, med_lanes[0] / med_lanes[k], "x",
                      WB_NO_TARGET, 0);
        }
    } else {
        wb_note(ctx, suite, "%s: tracing or simulating a frame failed: %s", name,
                weft_last_error());
    }
    for (int k = 0; k < WB_SIM_POINTS; k++) {
        free(sim_ms[k]);
        free(lane_ms[k]);
    }
    free(meas[0]);
    free(meas[1]);
    free(traced_ms[0]);
    free(traced_ms[1]);
    free(path_ms);
    free(serial_ms);
    return ok;
}
