/* tests/tools/test_bench_compare.c: weft_bench_compare flags a planted regression, stays quiet
 * on an unchanged run (with noise below the threshold), and knows which direction is better. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools_test.h"

TestSuite(bench_compare, .timeout = 30);

#define ROW(suite, name, impl, w, v, unit)                                                 \
    "{\"suite\":\"" suite "\",\"case\":\"" name "\",\"impl\":\"" impl "\",\"workers\":" #w \
    ",\"value\":" #v ",\"unit\":\"" unit "\"}\n"

static const char *const base_report = "weft_bench 0.1.0 (a header line the tool must skip)\n" ROW(
    "jobs", "fork_join_empty", "weft", 2, 0.91, "us")
    ROW("jobs", "fork_join_empty", "openmp", 2, 1.20, "us")
        ROW("jobs", "fork_join_vs_openmp", "ratio", 2, 0.76, "x")
            ROW("iterate", "join3", "weft", 1, 2.10, "ns")
                ROW("demo", "demo_speedup", "ratio", 2, 1.90, "x")
                    ROW("demo", "frame", "weft", 1, 41.0, "ms")
                        ROW("demo", "frame", "weft", 2, 21.6, "ms")
                            ROW("spawn", "entities_per_s", "weft", 2, 5.0e7, "items/s");

/* Run the comparison of two report texts; returns the exit status, output in *log. */
static int compare(const char *base, const char *cur, const char *extra, char **log) {
    const char *dir = tt_tempdir();
    char a[600];
    char b[600];
    char cmd[2048];
    tt_write(tt_path(a, sizeof a, dir, "base.jsonl"), base);
    tt_write(tt_path(b, sizeof b, dir, "new.jsonl"), cur);
    snprintf(cmd, sizeof cmd, "'%s' %s '%s' '%s'", WT_BENCH_COMPARE_EXE, extra ? extra : "", a, b);
    int rc = tt_run(cmd, log);
    tt_rmtree(dir);
    cr_log_info("%s\n%s", cmd, *log ? *log : "");
    return rc;
}

/* The base report with every value scaled by a random factor within ±max_noise. */
static char *with_noise(const char *report, double max_noise, unsigned seed) {
    size_t cap = strlen(report) * 2 + 256;
    char *out = malloc(cap);
    cr_assert(out != NULL);
    size_t n = 0;
    srand(seed);
    for (const char *p = report; *p;) {
        const char *v = strstr(p, "\"value\":");
        if (v == NULL) {
            n += (size_t)snprintf(out + n, cap - n, "%s", p);
            break;
        }
        v += 8;
        memcpy(out + n, p, (size_t)(v - p));
        n += (size_t)(v - p);
        char *end = NULL;
        double x = strtod(v, &end);
        double f = 1.0 + max_noise * (2.0 * rand() / (double)RAND_MAX - 1.0);
        n += (size_t)snprintf(out + n, cap - n, "%.6g", x * f);
        p = end;
    }
    return out;
}

/* Start of the first output line containing both a and b, or NULL. */
static const char *find_line(const char *log, const char *a, const char *b) {
    for (const char *line = log; line != NULL && *line; line = strchr(line, '\n')) {
        line += *line == '\n';
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        const char *pa = strstr(line, a);
        const char *pb = strstr(line, b);
        if (pa != NULL && pb != NULL && (size_t)(pa - line) < n && (size_t)(pb - line) < n) {
            return line;
        }
    }
    return NULL;
}

static char *replace(const char *text, const char *from, const char *to) {
    const char *at = strstr(text, from);
    cr_assert(at != NULL, "planting failed: '%s' not found", from);
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    cr_assert(out != NULL);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return out;
}

Test(bench_compare, unchanged_run_with_small_noise_passes) {
    unsigned seed = (unsigned)time(NULL);
    cr_log_info("seed %u", seed);
    char *noisy = with_noise(base_report, 0.04, seed);
    char *log = NULL;
    cr_expect(eq(int, compare(base_report, noisy, NULL, &log), 0));
    cr_expect(eq(ptr, strstr(log, "REGRESSION"), NULL));
    cr_expect(not(eq(ptr, strstr(log, "8 rows compared, 0 regression(s)"), NULL)));
    free(log);
    free(noisy);
}

Test(bench_compare, planted_time_regression_is_flagged_with_its_case) {
    char *bad = replace(base_report,
                        "\"fork_join_empty\",\"impl\":\"weft\",\"workers\":2,"
                        "\"value\":0.91",
                        "\"fork_join_empty\",\"impl\":\"weft\",\"workers\":2,\"value\":1.20");
    char *log = NULL;
    cr_expect(eq(int, compare(base_report, bad, NULL, &log), 1));
    const char *line = find_line(log, "fork_join_empty", " weft ");
    cr_assert(not(eq(ptr, (void *)line, NULL)));
    cr_expect(eq(int, strncmp(strchr(line, '+'), "+31.9%  REGRESSION", 18), 0), "%s", line);
    /* The unchanged rows of the same case stay ok. */
    line = find_line(log, "fork_join_empty", " openmp ");
    cr_assert(not(eq(ptr, (void *)line, NULL)));
    cr_expect(eq(int, strncmp(strchr(line, '+'), "+0.0%  ok", 9), 0), "%s", line);
    cr_expect(not(eq(ptr, strstr(log, "1 regression(s)"), NULL)));
    free(log);
    free(bad);
}

Test(bench_compare, threshold_decides_whether_a_change_is_noise) {
    char *slower = replace(base_report, "\"value\":2.10", "\"value\":2.31"); /* +10% */
    char *log = NULL;
    cr_expect(eq(int, compare(base_report, slower, "--threshold 5", &log), 1));
    free(log);
    cr_expect(eq(int, compare(base_report, slower, "--threshold 15", &log), 0));
    free(log);
    free(slower);
}

Test(bench_compare, speedup_ratios_are_higher_better_and_vs_ratios_lower_better) {
    char *log = NULL;
    /* A speedup falling from 1.90 to 1.50 is a regression ... */
    char *worse = replace(base_report, "\"value\":1.90", "\"value\":1.50");
    cr_expect(eq(int, compare(base_report, worse, NULL, &log), 1));
    cr_expect(not(eq(ptr, strstr(log, "demo_speedup"), NULL)));
    free(log);
    /* ... rising is an improvement, not a regression ... */
    char *better = replace(base_report, "\"value\":1.90", "\"value\":2.40");
    cr_expect(eq(int, compare(base_report, better, NULL, &log), 0));
    cr_expect(not(eq(ptr, strstr(log, "improved"), NULL)));
    free(log);
    /* ... while a *_vs_* ratio rising (weft slower relative to the baseline) is a regression ... */
    char *vs = replace(base_report, "\"value\":0.76", "\"value\":0.95");
    cr_expect(eq(int, compare(base_report, vs, NULL, &log), 1));
    free(log);
    /* ... and a throughput unit falling is one too. */
    char *tput = replace(base_report, "\"value\":5.0e7", "\"value\":3.0e7");
    cr_expect(eq(int, compare(base_report, tput, NULL, &log), 1));
    free(log);
    /* The override flips a direction: declared lower-better, the higher speedup regresses. */
    cr_expect(eq(int, compare(base_report, better, "--lower-better demo_speedup", &log), 1));
    free(log);
    free(worse);
    free(better);
    free(vs);
    free(tput);
}

Test(bench_compare, a_rows_goal_field_decides_its_direction) {
    /* "ratio_x" would be lower-better by name; weft_bench's goal says otherwise. */
    const char *base = "{\"suite\":\"s\",\"case\":\"ratio_x\",\"impl\":\"ratio\",\"workers\":2,"
                       "\"value\":2.0,\"unit\":\"x\",\"target\":1.5,\"goal\":\"at_least\","
                       "\"met\":true}\n";
    const char *lower = "{\"suite\":\"s\",\"case\":\"ratio_x\",\"impl\":\"ratio\",\"workers\":2,"
                        "\"value\":1.6,\"unit\":\"x\",\"target\":1.5,\"goal\":\"at_least\","
                        "\"met\":true}\n";
    char *log = NULL;
    cr_expect(eq(int, compare(base, lower, NULL, &log), 1));
    free(log);
    cr_expect(eq(int, compare(lower, base, NULL, &log), 0));
    free(log);
}

Test(bench_compare, repeated_samples_use_medians_and_overlapping_ranges_are_not_flagged) {
    const char *base = ROW("s", "c", "weft", 1, 10.0, "us") ROW("s", "c", "weft", 1, 10.2, "us")
        ROW("s", "c", "weft", 1, 14.0, "us");
    const char *cur = ROW("s", "c", "weft", 1, 11.5, "us") ROW("s", "c", "weft", 1, 12.0, "us")
        ROW("s", "c", "weft", 1, 11.8, "us");
    char *log = NULL;
    /* Medians 10.2 → 11.8 (+15.7%), but the new best 11.5 is within the base range. */
    cr_expect(eq(int, compare(base, cur, NULL, &log), 0));
    cr_expect(not(eq(ptr, strstr(log, "noisy"), NULL)));
    free(log);
    const char *clear = ROW("s", "c", "weft", 1, 14.5, "us") ROW("s", "c", "weft", 1, 15.0, "us");
    cr_expect(eq(int, compare(base, clear, NULL, &log), 1));
    free(log);
}

Test(bench_compare, missing_rows_are_reported_and_fail_only_on_request) {
    const char *cur = ROW("jobs", "fork_join_empty", "weft", 2, 0.91, "us");
    char *log = NULL;
    cr_expect(eq(int, compare(base_report, cur, NULL, &log), 0));
    cr_expect(not(eq(ptr, strstr(log, "MISSING in new"), NULL)));
    free(log);
    cr_expect(eq(int, compare(base_report, cur, "--fail-missing", &log), 1));
    free(log);
}

Test(bench_compare, unreadable_or_empty_input_is_a_usage_error) {
    char *log = NULL;
    cr_expect(eq(int, compare(base_report, "no json here\n", NULL, &log), 2));
    free(log);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' /nonexistent/a.jsonl /nonexistent/b.jsonl",
             WT_BENCH_COMPARE_EXE);
    cr_expect(eq(int, tt_run(cmd, &log), 2));
    free(log);
    snprintf(cmd, sizeof cmd, "'%s' --threshold abc a b", WT_BENCH_COMPARE_EXE);
    cr_expect(eq(int, tt_run(cmd, &log), 2));
    free(log);
}
