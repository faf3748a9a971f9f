/* bench/sim_check.c: the schedule simulator against measured frames (sim_check.h). */
#include "sim_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim_record.h"

#define SIM_FRAMES 5 /* traced pairs; the median simulated frame is compared */

/* One traced frame of a side: its events (malloc'd) and wall time. A traced frame of the
 * same world runs first and is dropped (the trace keeps the last frame), so the kept one
 * starts as warm as the case's timed frames (which run in blocks) rather than after the
 * other side's frame or tracing's first use. */
static bool trace_frame(const wb_sim_side_t *s, uint32_t workers, wt_sim_trace_t *out) {
    weft_trace_event_t *ev = NULL;
    *out = (wt_sim_trace_t){NULL, 0, workers, 0};
    if (weft_trace_enable(s->world, NULL) != WEFT_OK || s->frame(s->arg) != WEFT_OK) {
        weft_trace_disable(s->world);
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

weft_result_t wb_sim_progress(void *world) { return weft_world_progress(world, 0.016f); }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool wb_sim_check(wb_ctx_t *ctx, const char *suite, const char *name, const wb_sim_side_t side[2],
                  const double *speedup_target) {
    static wt_sim_costs_t costs;
    static bool calibrated;
    if (!calibrated && wt_sim_calibrate(&costs, 0) != 0) {
        wb_note(ctx, suite, "%s: calibrating the simulator failed", name);
        return false;
    }
    calibrated = true;
    double sim_ms[WB_SIM_POINTS][SIM_FRAMES];
    bool ok = true;
    for (int f = 0; f < SIM_FRAMES && ok; f++) {
        wt_sim_trace_t one, two;
        wt_sim_record_t rec = {0}; /* empty until built; freeing it is then a no-op */
        ok = trace_frame(&side[0], 1, &one);
        ok = trace_frame(&side[1], 2, &two) && ok;
        ok = ok && wt_sim_record_build(&rec, side[0].world, &one, &two, &costs) == 0;
        for (int k = 0; k < WB_SIM_POINTS && ok; k++) {
            wt_sim_result_t r;
            ok = wt_sim_run(k == 0 ? &rec.one : &rec.many, 1u << k, &r) == 0;
            sim_ms[k][f] = r.frame_ns / 1e6;
        }
        wt_sim_record_free(&rec);
        free((void *)one.events);
        free((void *)two.events);
    }
    if (!ok) {
        wb_note(ctx, suite, "%s: tracing or simulating a frame failed: %s", name,
                weft_last_error());
        return false;
    }
    double med[WB_SIM_POINTS];
    for (int k = 0; k < WB_SIM_POINTS; k++) {
        qsort(sim_ms[k], SIM_FRAMES, sizeof(double), cmp_double);
        med[k] = sim_ms[k][SIM_FRAMES / 2];
    }
    char n1[96], n2[96], nf[96], ns[96];
    snprintf(n1, sizeof n1, "%s_sim_error_p1", name);
    snprintf(n2, sizeof n2, "%s_sim_error_p2", name);
    snprintf(nf, sizeof nf, "%s_sim_frame", name);
    snprintf(ns, sizeof ns, "%s_sim_speedup", name);
    wb_describe(ctx, suite, n1, "ratio",
                "|simulated / measured - 1| at 1 worker: tools/sim replaying traced frames (median "
                "of 5) against the case's measured median frame");
    wb_describe(ctx, suite, n2, "ratio", "the same at 2 workers");
    wb_describe(ctx, suite, nf, "simulated",
                "SIMULATED, not measured: tools/sim's frame on P workers, replaying the 2-worker "
                "traced frames' durations with this machine's job/steal/notice/wake/claim costs");
    wb_describe(ctx, suite, ns, "simulated", "SIMULATED: simulated frame at 1 / at P workers");
    double e1 = med[0] / side[0].median_ms - 1.0, e2 = med[1] / side[1].median_ms - 1.0;
    wb_note(ctx, suite,
            "%s: simulated %.3f / %.3f ms at 1 / 2 workers against measured %.3f / %.3f "
            "(errors %+.1f%% / %+.1f%%)",
            name, med[0], med[1], side[0].median_ms, side[1].median_ms, 100.0 * e1, 100.0 * e2);
    wb_report(ctx, suite, n1, "ratio", 1, fabs(e1), "x", WB_AT_MOST, 0.07);
    wb_report(ctx, suite, n2, "ratio", 2, fabs(e2), "x", WB_AT_MOST, 0.07);
    for (int k = 2; k < WB_SIM_POINTS; k++) {
        double target = speedup_target ? speedup_target[k] : 0;
        wb_report(ctx, suite, nf, "simulated", 1u << k, med[k], "ms", WB_NO_TARGET, 0);
        wb_report(ctx, suite, ns, "simulated", 1u << k, med[0] / med[k], "x",
                  target > 0 ? WB_AT_LEAST : WB_NO_TARGET, target);
    }
    return true;
}
