/* tests/tools/test_demo.c: the scaling demo end to end on a small world — it succeeds with more
 * workers than cores, every output file exists, every SVG it writes is well-formed XML with
 * content, the report says the hashes matched and marks the simulated figures as simulated, with
 * their error against the measured frames at 1 and 2 workers, taken from the median of the
 * traced pairs. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "json_trace.h"
#include "tools_test.h"
#include "xml_check.h"

TestSuite(demo, .timeout = 300);

static void check_svg(const char *dir, const char *name, size_t min_shapes, size_t min_texts) {
    char path[700];
    char err[200] = "";
    xml_stats_t st;
    tt_path(path, sizeof path, dir, name);
    cr_assert(eq(int, xml_check_file(path, &st, err, sizeof err), 0), "%s: %s", name, err);
    cr_expect(eq(str, st.root, "svg"), "%s: root is %s", name, st.root);
    static const char *const shapes[] = {"rect",     "polygon", "path",   "line",
                                         "polyline", "circle",  "ellipse"};
    size_t n = 0;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        n += xml_count(&st, shapes[k]);
    }
    cr_expect(ge(sz, n, min_shapes), "%s has too few shapes (%zu)", name, n);
    cr_expect(ge(sz, xml_count(&st, "text"), min_texts), "%s has too little text", name);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-4 * fabs(b) + 1e-9; }

/* The simulated figures stand for all traced pairs, not one frame: the frames at 1 and 2
 * workers are the medians of the pairs' (5 asked for), and the errors are those medians
 * against the measured median frames. */
static void check_sim_medians(const wt_json_t *sim, const wt_json_t *runs) {
    const wt_json_t *pairs = wt_json_get(sim, "pairs");
    cr_assert(not(eq(ptr, (void *)pairs, NULL)), "simulation.pairs missing");
    cr_expect(eq(dbl, wt_json_number(wt_json_get(sim, "traced_pairs"), 0), 5.0));
    cr_assert(eq(sz, pairs->length, 5));
    static const char *const key[2] = {"sim_ms_p1", "sim_ms_p2"};
    static const char *const err[2] = {"sim_error_p1", "sim_error_p2"};
    const wt_json_t *point = wt_json_get(sim, "points")->child;
    const wt_json_t *run = runs->child;
    for (int k = 0; k < 2; k++, point = point->next, run = run->next) {
        double v[5];
        size_t n = 0;
        for (const wt_json_t *p = pairs->child; p != NULL && n < 5; p = p->next) {
            v[n++] = wt_json_number(wt_json_get(p, key[k]), -1);
            const wt_json_t *all = wt_json_get(p, "sim_ms"); /* every P, 1..64 */
            cr_expect(all != NULL && all->length == 7, "pair %zu: sim_ms at 7 worker counts", n);
        }
        qsort(v, n, sizeof v[0], cmp_double);
        double frame = wt_json_number(wt_json_get(point, "frame_ms"), -1);
        cr_expect(v[0] > 0 && near(frame, v[2]),
                  "simulated frame at %d workers %g ms, the pairs' median %g (%g..%g)", k + 1,
                  frame, v[2], v[0], v[4]);
        double measured = wt_json_number(wt_json_get(run, "frame_ms_median"), -1);
        double e = wt_json_number(wt_json_get(sim, err[k]), 99);
        cr_expect(fabs(e - (frame / measured - 1.0)) < 1e-4, "%s %g against %g / %g", err[k], e,
                  frame, measured);
    }
}

Test(demo, small_world_runs_oversubscribed_and_writes_well_formed_outputs) {
    const char *dir = tt_tempdir();
    char cmd[1200];
    char *log = NULL;
    snprintf(
        cmd, sizeof cmd,
        "'%s' --entities 20000 --frames 3 --warmup 1 --max-workers 3 --traced 5 --out '%s/out'",
        WT_DEMO_EXE, dir);
    int rc = tt_run(cmd, &log);
    cr_log_info("%s", log ? log : "");
    cr_assert(eq(int, rc, 0), "weft_demo failed (%d):\n%s", rc, log ? log : "");
    cr_expect(not(eq(ptr, strstr(log, "world hash identical for every worker count: yes"), NULL)));
    cr_expect(not(eq(ptr, strstr(log, "SIMULATED"), NULL)));
    free(log);

    char out[700];
    tt_path(out, sizeof out, dir, "out");
    check_svg(out, "speedup.svg", 8, 10); /* grid, ideal, series, points */
    check_svg(out, "timeline.svg", 20, 10);
    char path[800];
    size_t len = 0;
    char *dot = tt_read(tt_path(path, sizeof path, out, "schedule.dot"), &len);
    cr_assert(not(eq(ptr, dot, NULL)), "schedule.dot missing");
    cr_expect(not(eq(ptr, strstr(dot, "digraph"), NULL)));
    cr_expect(not(eq(ptr, strstr(dot, "movement"), NULL)));
    free(dot);
    if (system("command -v dot >/dev/null 2>&1") == 0) {
        check_svg(out, "schedule.svg", 17, 17); /* a node and a label per system at least */
    }

    char err[200] = "";
    char *text = tt_read(tt_path(path, sizeof path, out, "trace.json"), &len);
    cr_assert(not(eq(ptr, text, NULL)), "trace.json missing");
    wt_trace_t trace;
    cr_assert(eq(int, wt_trace_load(text, len, &trace, err, sizeof err), 0), "%s", err);
    cr_expect(trace.count > 17, "trace.count > 17 (%zu vs %zu)", (size_t)(trace.count),
              (size_t)(17)); /* at least one job per system */
    cr_expect(eq(sz, trace.lane_count, 3));
    wt_trace_free(&trace);
    free(text);

    text = tt_read(tt_path(path, sizeof path, out, "report.json"), &len);
    cr_assert(not(eq(ptr, text, NULL)), "report.json missing");
    wt_json_doc_t *doc = wt_json_parse(text, len, 0, err, sizeof err);
    cr_assert(not(eq(ptr, doc, NULL)), "report.json: %s", err);
    const wt_json_t *root = wt_json_root(doc);
    const wt_json_t *same = wt_json_get(root, "hash_identical");
    cr_expect(same != NULL && same->type == WT_JSON_BOOL && same->boolean);
    cr_expect(eq(sz, wt_json_get(root, "runs")->length, 3));
    /* each run says how much of its frame the main thread ran: some, and never more than the
     * frame's wall time (a thread runs on one core at a time) */
    const wt_json_t *runs = wt_json_get(root, "runs");
    size_t i = 0;
    for (const wt_json_t *run = runs->child; run != NULL; run = run->next, i++) {
        double cpu = wt_json_number(wt_json_get(run, "main_cpu_ms_median"), -1);
        double off = wt_json_number(wt_json_get(run, "main_off_cpu_ms_median"), -1e9);
        double max = wt_json_number(wt_json_get(run, "frame_ms_max"), 0);
        cr_expect(cpu > 0 && cpu <= max * 1.01 + 0.01,
                  "run %zu: main thread CPU %g ms, "
                  "slowest frame %g ms",
                  i, cpu, max);
        cr_expect(off > -0.01 * max - 0.01 && off <= max, "run %zu: off a core %g ms", i, off);
    }
    const wt_json_t *sim = wt_json_get(root, "simulation");
    const char *kind = wt_json_string(wt_json_get(sim, "kind"), "");
    cr_expect(eq(int, strncmp(kind, "SIMULATED", 9), 0), "simulation kind '%s'", kind);
    cr_assert(not(eq(ptr, (void *)wt_json_get(sim, "points"), NULL)));
    cr_expect(eq(sz, wt_json_get(sim, "points")->length, 7));
    /* the errors are measured against this run's medians: finite, and the 1-worker one small
     * enough that the replay is of the same frame (a loaded CI machine can skew either) */
    double e1 = wt_json_number(wt_json_get(sim, "sim_error_p1"), 99);
    double e2 = wt_json_number(wt_json_get(sim, "sim_error_p2"), 99);
    cr_expect(e1 > -0.9 && e1 < 9, "sim_error_p1 %g", e1);
    cr_expect(e2 > -0.9 && e2 < 9, "sim_error_p2 %g", e2);
    cr_expect(wt_json_number(wt_json_get(wt_json_get(sim, "costs_ns"), "job"), 0) > 0,
              "the calibration measured a job's cost");
    check_sim_medians(sim, runs);
    const wt_json_t *measured = wt_json_get(root, "measured");
    cr_expect(wt_json_number(wt_json_get(measured, "serial_fraction"), -1) >= 0);
    cr_expect(not(eq(ptr, (void *)wt_json_get(measured, "synchronisation_fraction"), NULL)));
    wt_json_free(doc);
    free(text);
    tt_rmtree(dir);
}

Test(demo, a_run_that_diverges_fails_loudly_with_status_3) {
    const char *dir = tt_tempdir();
    char cmd[1200];
    char *log = NULL;
    snprintf(cmd, sizeof cmd,
             "'%s' --entities 5000 --frames 2 --warmup 0 --max-workers 2 --perturb-at 2 "
             "--out '%s/out'",
             WT_DEMO_EXE, dir);
    cr_expect(eq(int, tt_run(cmd, &log), 3), "%s", log ? log : "");
    cr_expect(not(eq(ptr, strstr(log, "world hash identical for every worker count: NO"), NULL)));
    cr_expect(not(eq(ptr, strstr(log, "FAILED"), NULL)));
    free(log);
    char path[800];
    size_t len = 0;
    char *text = tt_read(tt_path(path, sizeof path, dir, "out/report.json"), &len);
    cr_assert(not(eq(ptr, text, NULL)));
    cr_expect(not(eq(ptr, strstr(text, "\"hash_identical\": false"), NULL)));
    free(text);
    tt_rmtree(dir);
}

Test(demo, bad_options_are_a_usage_error) {
    char cmd[700];
    char *log = NULL;
    snprintf(cmd, sizeof cmd, "'%s' --frames 0", WT_DEMO_EXE);
    cr_expect(eq(int, tt_run(cmd, &log), 2), "%s", log ? log : "");
    free(log);
    snprintf(cmd, sizeof cmd, "'%s' --bogus", WT_DEMO_EXE);
    cr_expect(eq(int, tt_run(cmd, &log), 2), "%s", log ? log : "");
    free(log);
    static const char *const traced[] = {"0", "16"}; /* 1..15 traced frames per count */
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "'%s' --traced %s", WT_DEMO_EXE, traced[i]);
        cr_expect(eq(int, tt_run(cmd, &log), 2), "--traced %s: %s", traced[i], log ? log : "");
        free(log);
    }
}
