/* tests/tools/test_svg.c: every SVG the tools produce (timeline, speedup chart, the
 * weft_trace_svg program) is well-formed XML with real content. Randomised traces print their
 * seed. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_trace.h"
#include "svg.h"
#include "svg_chart.h"
#include "svg_timeline.h"
#include "tools_test.h"
#include "xml_check.h"

TestSuite(svg, .timeout = 30);

/* A synthetic trace like one weft frame: `lanes` workers, 12 systems of different sizes run as
 * chunk jobs packed back to back per lane, plus a frame span on lane 0 enclosing everything.
 * One system's name needs escaping. Returns malloc'd JSON text. */
static char *synthetic_trace(unsigned seed, int lanes, int jobs) {
    static const char *const systems[12] = {
        "movement",  "grid_build", "neighbours", "state<machine>",        "lifetime", "spawn",
        "hierarchy", "bounds",     "culling",    "stats \"hist\" & sums", "ai_think", "damage"};
    size_t cap = (size_t)jobs * 200 + 4096;
    char *s = malloc(cap);
    cr_assert(s != NULL);
    size_t n = (size_t)snprintf(s, cap, "{\"traceEvents\":[\n");
    for (int l = 0; l < lanes; l++) {
        n += (size_t)snprintf(s + n, cap - n,
                              "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
                              "\"args\":{\"name\":\"weft-worker-%d\"}},\n",
                              l, l);
    }
    double *clock = calloc((size_t)lanes, sizeof *clock);
    cr_assert(clock != NULL);
    srand(seed);
    double end = 0;
    for (int j = 0; j < jobs; j++) {
        int l = rand() % lanes;
        int sys = (j * 12) / jobs; /* systems in order, like phases */
        double dur = 5.0 + (double)(rand() % 400) / 4.0;
        clock[l] += (double)(rand() % 3);
        n += (size_t)snprintf(s + n, cap - n,
                              "{\"name\":\"%s\",\"cat\":\"system\",\"ph\":\"X\",\"ts\":%.3f,"
                              "\"dur\":%.3f,\"pid\":1,\"tid\":%d,\"args\":{\"chunk\":%d}},\n",
                              sys == 9 ? "stats \\\"hist\\\" & sums" : systems[sys], clock[l], dur,
                              l, j);
        clock[l] += dur;
        end = clock[l] > end ? clock[l] : end;
    }
    n += (size_t)snprintf(s + n, cap - n,
                          "{\"name\":\"frame\",\"ph\":\"X\",\"ts\":0,\"dur\":%.3f,\"pid\":1,"
                          "\"tid\":0}\n]}\n",
                          end + 1);
    free(clock);
    return s;
}

/* Render `t` as a timeline into memory, check it, return the stats. */
static xml_stats_t render_and_check(const wt_trace_t *t, const wt_timeline_desc_t *d,
                                    char **svg_out) {
    FILE *f = tmpfile();
    cr_assert(f != NULL);
    cr_assert(eq(int, wt_svg_timeline(f, t, d), 0));
    size_t len = 0;
    char *svg = tt_slurp(f, &len);
    fclose(f);
    cr_assert(svg != NULL);
    xml_stats_t st;
    char err[200] = "";
    cr_assert(eq(int, xml_check(svg, len, &st, err, sizeof err), 0), "not well-formed: %s", err);
    cr_assert(eq(str, st.root, "svg"));
    cr_assert(not(eq(ptr, strstr(svg, "xmlns=\"http://www.w3.org/2000/svg\""), NULL)));
    *svg_out = svg;
    return st;
}

Test(svg, timeline_of_a_synthetic_frame_is_well_formed_with_lanes_spans_and_legend) {
    unsigned seed = (unsigned)time(NULL);
    cr_log_info("seed %u", seed);
    char *text = synthetic_trace(seed, 4, 600);
    wt_trace_t t;
    char err[200] = "";
    cr_assert(eq(int, wt_trace_load(text, strlen(text), &t, err, sizeof err), 0), "%s", err);
    cr_assert(eq(sz, t.count, 601));
    cr_assert(eq(sz, t.lane_count, 4));
    char *svg = NULL;
    xml_stats_t st = render_and_check(&t, NULL, &svg);
    /* One rect per span, plus background, lane rows and legend swatches. */
    cr_expect(ge(sz, xml_count(&st, "rect"), 601 + 4 + 12));
    cr_expect(ge(sz, xml_count(&st, "text"), 4 * 2 + 12));
    cr_expect(xml_count(&st, "line") > 3, "xml_count(&st, \"line\") > 3 (%zu vs %zu)",
              (size_t)(xml_count(&st, "line")), (size_t)(3)); /* axis and grid */
    cr_expect(st.text_chars > 200, "st.text_chars > 200 (%zu vs %zu)", (size_t)(st.text_chars),
              (size_t)(200));
    for (int l = 0; l < 4; l++) {
        char lane[32];
        snprintf(lane, sizeof lane, ">weft-worker-%d<", l);
        cr_expect(not(eq(ptr, strstr(svg, lane), NULL)), "lane label %s missing", lane);
    }
    cr_expect(not(eq(ptr, strstr(svg, "state&lt;machine&gt;"), NULL)));
    cr_expect(not(eq(ptr, strstr(svg, "stats &quot;hist&quot; &amp; sums"), NULL)));
    free(svg);
    wt_trace_free(&t);
    free(text);
}

Test(svg, timeline_gives_each_system_its_own_colour) {
    char *text = synthetic_trace(7, 2, 240);
    wt_trace_t t;
    char err[200] = "";
    cr_assert(eq(int, wt_trace_load(text, strlen(text), &t, err, sizeof err), 0), "%s", err);
    char *svg = NULL;
    render_and_check(&t, NULL, &svg);
    /* 13 distinct colour keys (12 systems + frame): the first 13 palette colours, all
     * different, all used. */
    char a[8];
    char b[8];
    for (size_t i = 0; i < 13; i++) {
        wt_svg_palette(i, a);
        for (size_t j = i + 1; j < 13; j++) {
            wt_svg_palette(j, b);
            cr_expect(ne(str, a, b), "palette %zu and %zu collide (%s)", i, j, a);
        }
        cr_expect(not(eq(ptr, strstr(svg, a), NULL)), "colour %s of key %zu unused", a, i);
    }
    wt_svg_palette(13, a);
    cr_expect(eq(ptr, strstr(svg, a), NULL), "a 14th colour key appeared");
    free(svg);
    wt_trace_free(&t);
    free(text);
}

Test(svg, timeline_window_draws_only_the_spans_inside_it) {
    char *text = synthetic_trace(11, 2, 200);
    wt_trace_t t;
    char err[200] = "";
    cr_assert(eq(int, wt_trace_load(text, strlen(text), &t, err, sizeof err), 0), "%s", err);
    char *all = NULL;
    char *part = NULL;
    xml_stats_t whole = render_and_check(&t, NULL, &all);
    wt_timeline_desc_t d = {.title = "window", .from_us = 100, .to_us = 300, .width = 900};
    xml_stats_t win = render_and_check(&t, &d, &part);
    cr_expect(xml_count(&win, "rect") < xml_count(&whole, "rect"),
              "xml_count(&win, \"rect\") < xml_count(&whole, \"rect\") (%zu vs %zu)",
              (size_t)(xml_count(&win, "rect")), (size_t)(xml_count(&whole, "rect")));
    cr_expect(xml_count(&win, "rect") > 5, "xml_count(&win, \"rect\") > 5 (%zu vs %zu)",
              (size_t)(xml_count(&win, "rect")), (size_t)(5));
    free(all);
    free(part);
    wt_trace_free(&t);
    free(text);
}

Test(svg, timeline_of_an_empty_trace_is_a_valid_svg_that_says_so) {
    const char *text = "{\"traceEvents\":[]}";
    wt_trace_t t;
    char err[200] = "";
    cr_assert(eq(int, wt_trace_load(text, strlen(text), &t, err, sizeof err), 0), "%s", err);
    char *svg = NULL;
    render_and_check(&t, NULL, &svg);
    cr_expect(not(eq(ptr, strstr(svg, "no complete events"), NULL)));
    free(svg);
    wt_trace_free(&t);
}

Test(svg, timeline_skips_events_with_corrupt_times_instead_of_hanging) {
    /* A corrupted ts once made the axis loop step through a span of 1e300 microseconds. */
    const char *text =
        "{\"traceEvents\":["
        "{\"name\":\"ok\",\"ph\":\"X\",\"ts\":10,\"dur\":5,\"pid\":1,\"tid\":1},"
        "{\"name\":\"huge\",\"ph\":\"X\",\"ts\":1e300,\"dur\":5,\"pid\":1,\"tid\":1},"
        "{\"name\":\"inf\",\"ph\":\"X\",\"ts\":1e999,\"dur\":5,\"pid\":1,\"tid\":1},"
        "{\"name\":\"long\",\"ph\":\"X\",\"ts\":1,\"dur\":1e400,\"pid\":1,\"tid\":1}"
        "]}";
    wt_trace_t t;
    char err[200] = "";
    cr_assert(eq(int, wt_trace_load(text, strlen(text), &t, err, sizeof err), 0), "%s", err);
    cr_expect(eq(sz, t.count, 1));
    cr_expect(eq(sz, t.skipped, 3));
    char *svg = NULL;
    xml_stats_t st = render_and_check(&t, NULL, &svg);
    cr_expect(le(sz, xml_count(&st, "line"), 30)); /* a bounded axis */
    free(svg);
    wt_trace_free(&t);
}

static xml_stats_t chart_and_check(const wt_speedup_chart_t *c, char **svg_out) {
    FILE *f = tmpfile();
    cr_assert(f != NULL);
    cr_assert(eq(int, wt_svg_speedup_chart(f, c), 0));
    size_t len = 0;
    char *svg = tt_slurp(f, &len);
    fclose(f);
    xml_stats_t st;
    char err[200] = "";
    cr_assert(eq(int, xml_check(svg, len, &st, err, sizeof err), 0), "not well-formed: %s", err);
    cr_assert(eq(str, st.root, "svg"));
    *svg_out = svg;
    return st;
}

Test(svg, speedup_chart_is_well_formed_with_ideal_line_and_measured_points) {
    double w[] = {1, 2};
    double s[] = {1.0, 1.86};
    wt_speedup_chart_t c = {.title = "speedup <2 cores>",
                            .workers = w,
                            .speedup = s,
                            .count = 2,
                            .hardware_threads = 2};
    char *svg = NULL;
    xml_stats_t st = chart_and_check(&c, &svg);
    cr_expect(ge(sz, xml_count(&st, "polyline"), 2)); /* ideal + measured */
    cr_expect(eq(sz, xml_count(&st, "circle"), 2));
    cr_expect(not(eq(ptr, strstr(svg, "1.86×"), NULL)));
    cr_expect(not(eq(ptr, strstr(svg, "ideal"), NULL)));
    cr_expect(not(eq(ptr, strstr(svg, "speedup &lt;2 cores&gt;"), NULL)));
    free(svg);
}

Test(svg, speedup_chart_with_projection_uses_log_axes_and_labels_the_projection) {
    double w[] = {1, 2, 3, 4};
    double s[] = {1.0, 1.9, 2.4, 2.2};
    double pw[] = {4, 8, 16, 32, 64};
    double ps[] = {3.6, 6.4, 10.2, 14.8, 19.0};
    wt_speedup_chart_t c = {.workers = w,
                            .speedup = s,
                            .count = 4,
                            .proj_workers = pw,
                            .proj_speedup = ps,
                            .proj_count = 5,
                            .hardware_threads = 2,
                            .proj_label = "projection: Amdahl, not measured"};
    char *svg = NULL;
    xml_stats_t st = chart_and_check(&c, &svg);
    cr_expect(ge(sz, xml_count(&st, "polyline"), 3));
    cr_expect(eq(sz, xml_count(&st, "circle"), 9));
    cr_expect(not(eq(ptr, strstr(svg, "log scale"), NULL)));
    cr_expect(not(eq(ptr, strstr(svg, "projection: Amdahl, not measured"), NULL)));
    cr_expect(not(eq(ptr, strstr(svg, ">64<"), NULL)), "x axis lacks the 64 tick");
    free(svg);
}

Test(svg, speedup_chart_refuses_an_empty_series) {
    wt_speedup_chart_t c = {0};
    FILE *f = tmpfile();
    cr_assert(f != NULL);
    cr_expect(eq(int, wt_svg_speedup_chart(f, &c), -1));
    fclose(f);
}

Test(svg, trace_svg_program_renders_a_trace_file_and_rejects_bad_input) {
    const char *dir = tt_tempdir();
    char in[600];
    char out[600];
    char bad[600];
    char cmd[2048];
    char *text = synthetic_trace(3, 3, 300);
    tt_write(tt_path(in, sizeof in, dir, "trace.json"), text);
    free(text);
    tt_path(out, sizeof out, dir, "trace.svg");
    char *log = NULL;
    snprintf(cmd, sizeof cmd, "'%s' --title 'one frame' '%s' -o '%s'", WT_TRACE_SVG_EXE, in, out);
    cr_assert(eq(int, tt_run(cmd, &log), 0), "%s", log ? log : "");
    free(log);
    xml_stats_t st;
    char err[200] = "";
    cr_assert(eq(int, xml_check_file(out, &st, err, sizeof err), 0), "%s", err);
    cr_expect(ge(sz, xml_count(&st, "rect"), 301));

    tt_write(tt_path(bad, sizeof bad, dir, "bad.json"), "{\"suite\":\"not a trace\"}\n");
    snprintf(cmd, sizeof cmd, "'%s' '%s' -o '%s/x.svg'", WT_TRACE_SVG_EXE, bad, dir);
    cr_expect(eq(int, tt_run(cmd, &log), 1), "%s", log ? log : "");
    free(log);
    snprintf(cmd, sizeof cmd, "'%s' --width", WT_TRACE_SVG_EXE);
    cr_expect(eq(int, tt_run(cmd, &log), 2), "%s", log ? log : "");
    free(log);
    tt_rmtree(dir);
}
