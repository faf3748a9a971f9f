/* bench/common.h: the weft_bench harness shared by every suite (bench_<suite>.c).
 *
 * A suite is a function `void wb_suite_<name>(wb_ctx_t *ctx)` registered in bench/main.c.
 * It runs weft and its baselines interleaved in the same process (weft, raw, openmp, weft,
 * raw, openmp, ... for wb_reps(ctx) repetitions), takes medians, and reports each figure
 * with wb_report(); ratios are reported as their own cases with unit "x".
 *
 * With --json, stdout holds one JSON object per line: first {"config":{...}} (compiler,
 * flags, build type, hardware threads, date, options), then one line per figure,
 *   {"suite":"jobs","case":"fork_join_empty","impl":"weft","workers":2,"value":0.91,"unit":"us"}
 * plus "target", "goal" ("at_most"/"at_least") and "met" when the figure has a target, and
 * "value":null when it could not be measured; last {"summary":{...}}. Notes go to stderr. */
#ifndef WEFT_BENCH_COMMON_H
#define WEFT_BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h" /* wt_json_write_string (tools/json.h) */

typedef struct wb_ctx wb_ctx_t;

/* Target comparison printed beside a figure: value <= target (WB_AT_MOST) or >= (WB_AT_LEAST). */
typedef enum wb_goal { WB_NO_TARGET = 0, WB_AT_MOST = 1, WB_AT_LEAST = 2 } wb_goal_t;

/* Monotonic clock in nanoseconds. */
double wb_now_ns(void);

/* Median of v[0..n) (sorts v in place). */
double wb_median(double *v, int n);

/* Median over reps of num[i] / den[i]: the ratio of two figures timed back to back in the same
 * repetition. On a shared machine a slow patch hits both sides of a pair, so this is steadier
 * than the ratio of the two medians. Leaves num and den unchanged; NAN when n <= 0. */
double wb_median_ratio(const double *num, const double *den, int n);

/* Repetitions to run per case (more without --quick). */
int wb_reps(const wb_ctx_t *ctx);

/* True with --quick: suites shrink sizes/reps so the whole program runs in under a minute. */
bool wb_quick(const wb_ctx_t *ctx);

/* Maximum worker count to measure: the last of wb_worker_counts. */
uint32_t wb_max_workers(const wb_ctx_t *ctx);

/* The most worker counts one run measures. */
#define WB_MAX_COUNTS 16u

/* The worker counts that scaling cases measure, ascending and distinct, the first always 1
 * (a speedup needs its 1-worker side): `--workers N` gives 1, 2, 4, 8, ... (the powers of two
 * below N) and N; `--workers 1,3,8` gives that list (1 added when missing); the default is
 * `--workers <hardware threads>`. So the same command measures 1 and 2 workers on a 2-core
 * machine and 1, 2, 4, ..., 64 on a 64-core one. Writes at most WB_MAX_COUNTS entries into
 * out and returns how many. Cases whose subject is a fixed worker count (fork-join at 2) do
 * not use it. */
uint32_t wb_worker_counts(const wb_ctx_t *ctx, uint32_t out[WB_MAX_COUNTS]);

/* Report one figure. impl: "weft", "raw", "openmp", "ratio", ... unit: "ns", "us", "ms",
 * "x", "B", "core", ... Prints a table row (or a JSON line with --json). With a goal, the
 * row also shows the target and whether it was met; misses are counted for the summary. */
void wb_report(wb_ctx_t *ctx, const char *suite, const char *name, const char *impl,
               uint32_t workers, double value, const char *unit, wb_goal_t goal, double target);

/* Prevent the compiler from optimising a computed value away: the pointee counts as read. */
void wb_sink(const void *p);

/* Bytes wb_cold writes: more than the last-level cache this VM's cores can reach. */
#define WB_COLD_BYTES (128u << 20)

/* Evict the caches before a timed memory-bound loop by writing WB_COLD_BYTES into buf (the
 * caller's buffer of that size), so that each side of a pair starts from memory instead of
 * finding whatever the loop before it left in the last-level cache. Returns wb_now_ns()
 * after the write, for the next loop's clock. Main thread only. */
double wb_cold(unsigned char *buf);

/* ---- additions for suites ------------------------------------------------ >>wb_extra */

/* CPU time consumed by the whole process (every thread) in nanoseconds; divide its growth by
 * wall time for a "core" figure such as idle burn. */
double wb_cpu_ns(void);

/* Sleep the calling thread for `ns` nanoseconds (restarted after signals). Idling is what
 * cases such as idle burn or paced frames measure, not a workaround. */
void wb_sleep_ns(long ns);

/* Hardware threads online (at least 1). */
uint32_t wb_hw_threads(void);

/* True with --json (suites normally need not care: wb_report and wb_note handle both). */
bool wb_json(const wb_ctx_t *ctx);

/* A note for the reader, e.g. "openmp baseline not built". Printed as "  # ..." under the
 * suite's table, or on stderr with --json so stdout stays one JSON object per line. */
void wb_note(wb_ctx_t *ctx, const char *suite, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Say what `impl` does in case `name` (and in every case whose name continues it with '_',
 * e.g. "fork_join_forced" covers "fork_join_forced_overhead"), e.g. "raw: parent-index loop,
 * one 4x4 multiply per node". With --json every figure line of those cases carries it as
 * "did", so a reader of the JSON alone can judge the comparison; the table prints it once as
 * a note. impl "ratio" describes how a ratio was formed. Strings must stay valid for the run. */
void wb_describe(wb_ctx_t *ctx, const char *suite, const char *name, const char *impl,
                 const char *did);

/* Report `<name>_share` (unit "share", impl "weft"): the fraction of the work items run by
 * the least busy of `workers` workers (bench/share.h). Every case that claims N >= 2 workers
 * reports one. */
void wb_report_share(wb_ctx_t *ctx, const char *suite, const char *name, uint32_t workers,
                     double share, wb_goal_t goal, double target);

/* wb_report for a figure that is only meaningful when `workers` threads ran the work (a
 * speedup): with share 0 every item ran on one thread, so the figure is reported as not
 * measured (null, target missed) and a note gives the value it would have shown. */
void wb_report_scaled(wb_ctx_t *ctx, const char *suite, const char *name, const char *impl,
                      uint32_t workers, double value, const char *unit, wb_goal_t goal,
                      double target, double share);

/* ---- harness side (bench/main.c only) ------------------------------------ >>wb_harness */

typedef struct wb_options {
    bool quick;                     /* --quick */
    bool json;                      /* --json */
    int reps;                       /* --reps N; 0: 11, or 5 with --quick */
    uint32_t max_workers;           /* --workers N; 0: wb_hw_threads() */
    uint32_t counts[WB_MAX_COUNTS]; /* --workers a,b,c: the listed counts, as given */
    uint32_t ncounts;               /* entries in counts; 0: derived from max_workers */
} wb_options_t;

/* Create the context (aborts on OOM: a benchmark without memory has nothing to say). */
wb_ctx_t *wb_ctx_create(const wb_options_t *opt);
void wb_ctx_destroy(wb_ctx_t *ctx);

/* Print the table header of `suite` (nothing with --json). */
void wb_suite_begin(wb_ctx_t *ctx, const char *suite);
/* Close the suite's table with its wall time. */
void wb_suite_end(wb_ctx_t *ctx, const char *suite, double seconds);

/* Print the targets met/missed summary (a {"summary":...} line with --json); returns the
 * number of missed targets. */
int wb_summary(wb_ctx_t *ctx);

#endif /* WEFT_BENCH_COMMON_H */
