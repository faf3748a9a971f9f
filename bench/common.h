/* bench/common.h: the weft_bench harness shared by every suite (bench_<suite>.c).
 *
 * A suite is a function `void wb_suite_<name>(wb_ctx_t *ctx)` registered in bench/main.c.
 * It runs weft and its baselines interleaved in the same process (weft, raw, openmp, weft,
 * raw, openmp, ... for wb_reps(ctx) repetitions), takes medians, and reports each figure
 * with wb_report(); ratios are reported as their own cases with unit "x". */
#ifndef WEFT_BENCH_COMMON_H
#define WEFT_BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wb_ctx wb_ctx_t;

/* Target comparison printed beside a figure: value <= target (WB_AT_MOST) or >= (WB_AT_LEAST). */
typedef enum wb_goal { WB_NO_TARGET = 0, WB_AT_MOST = 1, WB_AT_LEAST = 2 } wb_goal_t;

/* Monotonic clock in nanoseconds. */
double wb_now_ns(void);

/* Median of v[0..n) (sorts v in place). */
double wb_median(double *v, int n);

/* Repetitions to run per case (more without --quick). */
int wb_reps(const wb_ctx_t *ctx);

/* True with --quick: suites shrink sizes/reps so the whole program runs in under a minute. */
bool wb_quick(const wb_ctx_t *ctx);

/* Maximum worker count to measure (--workers N, default: hardware threads). */
uint32_t wb_max_workers(const wb_ctx_t *ctx);

/* Report one figure. impl: "weft", "raw", "openmp", "ratio", ... unit: "ns", "us", "ms",
 * "x", "B", "core", ... Prints a table row (or a JSON line with --json). With a goal, the
 * row also shows the target and whether it was met; misses are counted for the summary. */
void wb_report(wb_ctx_t *ctx, const char *suite, const char *name, const char *impl,
               uint32_t workers, double value, const char *unit, wb_goal_t goal, double target);

/* Prevent the compiler from optimising a computed value away. */
void wb_sink(const void *p);

#endif /* WEFT_BENCH_COMMON_H */
