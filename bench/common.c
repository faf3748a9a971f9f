/* bench/common.c: the weft_bench harness: timers, medians and the figure report (table or
 * JSON lines) shared by every suite.
 *
 * DESIGN: one wb_ctx_t lives for the whole run and is touched only by the main thread (suites
 * call wb_report after their timed regions). Rows are printed as they are reported, so a long
 * suite shows progress; targets met and missed are tallied for the closing summary, and the
 * missed ones are remembered by name so the summary can list them. Output goes to stdout,
 * which is flushed after every row so a pipe to `tee` shows progress too. */
#define _POSIX_C_SOURCE 200809L

#include "common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MISSED_NAME_MAX = 96 }; /* "suite/case/impl@workers" of a missed target */

typedef struct wb_desc {
    const char *suite, *name, *impl, *did;
} wb_desc_t;

struct wb_ctx {
    wb_options_t opt;                      /* resolved: reps and max_workers filled in */
    int met;                               /* targets met so far */
    int missed;                            /* targets missed so far */
    int rows;                              /* figures reported so far */
    char (*missed_names)[MISSED_NAME_MAX]; /* [named]; grown by doubling */
    int named;                             /* entries used in missed_names (<= missed) */
    int missed_cap;                        /* capacity of missed_names */
    wb_desc_t *descs;                      /* wb_describe entries; grown by doubling */
    int ndescs, descs_cap;
    uint32_t counts[WB_MAX_COUNTS]; /* wb_worker_counts, resolved once */
    uint32_t ncounts;
};

/* ---- clocks ------------------------------------------------------------- >>clock */

double wb_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

double wb_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void wb_sleep_ns(long ns) {
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

uint32_t wb_hw_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : (uint32_t)n;
}

/* ---- statistics ----------------------------------------------------------- >>stats */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

/* NAN for an empty sample: a figure that was never measured must not look like zero. */
double wb_median(double *v, int n) {
    if (n <= 0) {
        return NAN;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    if (n % 2 == 1) {
        return v[n / 2];
    }
    return 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double wb_median_ratio(const double *num, const double *den, int n) {
    if (n <= 0) {
        return NAN;
    }
    double *r = malloc((size_t)n * sizeof *r);
    if (r == NULL) {
        return NAN;
    }
    for (int i = 0; i < n; i++) {
        r[i] = num[i] / den[i];
    }
    double m = wb_median(r, n);
    free(r);
    return m;
}

/* The pointer escapes through a volatile store in another translation unit, so the compiler
 * must assume the pointee is read and cannot drop the computation that produced it. */
static const void *volatile sink_slot;
void wb_sink(const void *p) { sink_slot = p; }

double wb_cold(unsigned char *buf) {
    static unsigned char pass; /* a new value each time: no write can be skipped */
    memset(buf, ++pass, WB_COLD_BYTES);
    wb_sink(buf);
    return wb_now_ns();
}

/* ---- context ------------------------------------------------------------ >>ctx */

/* Insert w into the ascending, distinct list out[0..n) (capped at WB_MAX_COUNTS). */
static uint32_t add_count(uint32_t *out, uint32_t n, uint32_t w) {
    uint32_t i = 0;
    while (i < n && out[i] < w) {
        i++;
    }
    if ((i < n && out[i] == w) || n == WB_MAX_COUNTS) {
        return n;
    }
    memmove(out + i + 1, out + i, (size_t)(n - i) * sizeof *out);
    out[i] = w;
    return n + 1u;
}

/* The explicit list when one was given, else 1, 2, 4, ... below max_workers, and max_workers;
 * 1 is always first. */
static uint32_t resolve_counts(const wb_options_t *opt, uint32_t *out) {
    uint32_t n = add_count(out, 0, 1u);
    if (opt->ncounts > 0) {
        for (uint32_t i = 0; i < opt->ncounts; i++) {
            n = add_count(out, n, opt->counts[i]);
        }
        return n;
    }
    for (uint32_t w = 2; w < opt->max_workers; w *= 2u) {
        n = add_count(out, n, w);
    }
    return add_count(out, n, opt->max_workers);
}

wb_ctx_t *wb_ctx_create(const wb_options_t *opt) {
    wb_ctx_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        fprintf(stderr, "weft_bench: out of memory\n");
        abort();
    }
    ctx->opt = *opt;
    if (ctx->opt.reps <= 0) {
        ctx->opt.reps = ctx->opt.quick ? 5 : 11;
    }
    if (ctx->opt.max_workers == 0) {
        ctx->opt.max_workers = wb_hw_threads();
    }
    ctx->ncounts = resolve_counts(&ctx->opt, ctx->counts);
    ctx->opt.max_workers = ctx->counts[ctx->ncounts - 1u];
    return ctx;
}

void wb_ctx_destroy(wb_ctx_t *ctx) {
    if (!ctx) {
        return;
    }
    free(ctx->missed_names);
    free(ctx->descs);
    free(ctx);
}

int wb_reps(const wb_ctx_t *ctx) { return ctx->opt.reps; }
bool wb_quick(const wb_ctx_t *ctx) { return ctx->opt.quick; }
bool wb_json(const wb_ctx_t *ctx) { return ctx->opt.json; }
uint32_t wb_max_workers(const wb_ctx_t *ctx) { return ctx->opt.max_workers; }

uint32_t wb_worker_counts(const wb_ctx_t *ctx, uint32_t out[WB_MAX_COUNTS]) {
    memcpy(out, ctx->counts, ctx->ncounts * sizeof *out);
    return ctx->ncounts;
}

/* ---- output ------------------------------------------------------------- >>output */

/* JSON has no NaN or infinity: a failed measurement is written as null. */
static void put_json_number(FILE *f, double v) {
    if (isfinite(v)) {
        fprintf(f, "%.8g", v);
    } else {
        fputs("null", f);
    }
}

/* About four significant digits without an exponent, e.g. 0.9134, 12.35, 1234, 1234567. */
static void format_value(char *buf, size_t n, double v) {
    if (!isfinite(v)) {
        snprintf(buf, n, "%s", isnan(v) ? "n/a" : (v > 0 ? "inf" : "-inf"));
        return;
    }
    double mag = fabs(v);
    int decimals = mag >= 1000 ? 0 : mag >= 100 ? 1 : mag >= 10 ? 2 : mag >= 1 ? 3 : 4;
    if (mag > 0 && mag < 0.001) {
        snprintf(buf, n, "%.3e", v);
    } else {
        snprintf(buf, n, "%.*f", decimals, v);
    }
}

static const char *goal_symbol(wb_goal_t goal) {
    return goal == WB_AT_MOST ? "<=" : goal == WB_AT_LEAST ? ">=" : "";
}

static void remember_missed(wb_ctx_t *ctx, const char *suite, const char *name, const char *impl,
                            uint32_t workers) {
    if (ctx->named >= ctx->missed_cap) {
        int cap = ctx->missed_cap ? ctx->missed_cap * 2 : 16;
        void *grown = realloc(ctx->missed_names, (size_t)cap * MISSED_NAME_MAX);
        if (!grown) {
            return; /* the count stays right; only the name list is short */
        }
        ctx->missed_names = grown;
        ctx->missed_cap = cap;
    }
    snprintf(ctx->missed_names[ctx->named++], MISSED_NAME_MAX, "%s/%s/%s@%u", suite, name, impl,
             workers);
}

void wb_suite_begin(wb_ctx_t *ctx, const char *suite) {
    if (ctx->opt.json) {
        return;
    }
    printf("\n== suite %s ==\n", suite);
    printf("  %-28s %-8s %7s %12s %-6s %12s  %s\n", "case", "impl", "workers", "value", "unit",
           "target", "met?");
    fflush(stdout);
}

void wb_suite_end(wb_ctx_t *ctx, const char *suite, double seconds) {
    if (ctx->opt.json) {
        fprintf(stderr, "# suite %s finished in %.1f s\n", suite, seconds);
    } else {
        printf("  (suite %s: %.1f s)\n", suite, seconds);
    }
    fflush(stdout);
}

void wb_describe(wb_ctx_t *ctx, const char *suite, const char *name, const char *impl,
                 const char *did) {
    if (ctx->ndescs >= ctx->descs_cap) {
        int cap = ctx->descs_cap ? ctx->descs_cap * 2 : 32;
        void *grown = realloc(ctx->descs, (size_t)cap * sizeof *ctx->descs);
        if (!grown) {
            return; /* the figures stay right; only their description is missing */
        }
        ctx->descs = grown;
        ctx->descs_cap = cap;
    }
    ctx->descs[ctx->ndescs++] = (wb_desc_t){suite, name, impl, did};
    if (!ctx->opt.json) {
        printf("  # %s/%s: %s\n", name, impl, did);
    }
}

/* The description of (suite, name, impl): the longest described case that `name` equals or
 * continues with '_'. */
static const char *description_of(const wb_ctx_t *ctx, const char *suite, const char *name,
                                  const char *impl) {
    const char *best = NULL;
    size_t best_len = 0;
    for (int i = 0; i < ctx->ndescs; i++) {
        const wb_desc_t *d = &ctx->descs[i];
        size_t len = strlen(d->name);
        if (strcmp(d->suite, suite) != 0 || strcmp(d->impl, impl) != 0 ||
            strncmp(d->name, name, len) != 0 || (name[len] != '\0' && name[len] != '_') ||
            len < best_len) {
            continue;
        }
        best = d->did;
        best_len = len;
    }
    return best;
}

void wb_report_share(wb_ctx_t *ctx, const char *suite, const char *name, uint32_t workers,
                     double share, wb_goal_t goal, double target) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s_share", name);
    wb_report(ctx, suite, buf, "weft", workers, share, "share", goal, target);
}

void wb_report_scaled(wb_ctx_t *ctx, const char *suite, const char *name, const char *impl,
                      uint32_t workers, double value, const char *unit, wb_goal_t goal,
                      double target, double share) {
    if (workers >= 2 && !(share > 0.0)) {
        wb_note(ctx, suite,
                "%s@%u: every item ran on one thread (share 0), so %.4g %s is not a "
                "%u-worker figure; reported as not measured",
                name, workers, value, unit, workers);
        value = NAN;
    }
    wb_report(ctx, suite, name, impl, workers, value, unit, goal, target);
}

void wb_report(wb_ctx_t *ctx, const char *suite, const char *name, const char *impl,
               uint32_t workers, double value, const char *unit, wb_goal_t goal, double target) {
    bool has_goal = goal == WB_AT_MOST || goal == WB_AT_LEAST;
    /* A NaN value never meets a target: comparisons with NaN are false. */
    bool met = goal == WB_AT_MOST ? value <= target : goal == WB_AT_LEAST ? value >= target : false;
    ctx->rows++;
    if (has_goal) {
        if (met) {
            ctx->met++;
        } else {
            remember_missed(ctx, suite, name, impl, workers);
            ctx->missed++;
        }
    }

    if (ctx->opt.json) {
        fputs("{\"suite\":", stdout);
        wt_json_write_string(stdout, suite);
        fputs(",\"case\":", stdout);
        wt_json_write_string(stdout, name);
        fputs(",\"impl\":", stdout);
        wt_json_write_string(stdout, impl);
        printf(",\"workers\":%u,\"value\":", workers);
        put_json_number(stdout, value);
        fputs(",\"unit\":", stdout);
        wt_json_write_string(stdout, unit);
        if (has_goal) {
            fputs(",\"target\":", stdout);
            put_json_number(stdout, target);
            printf(",\"goal\":\"%s\",\"met\":%s", goal == WB_AT_MOST ? "at_most" : "at_least",
                   met ? "true" : "false");
        }
        const char *did = description_of(ctx, suite, name, impl);
        if (did) {
            fputs(",\"did\":", stdout);
            wt_json_write_string(stdout, did);
        }
        fputs("}\n", stdout);
    } else {
        char val[32];
        char tgt[40] = "";
        format_value(val, sizeof val, value);
        if (has_goal) {
            char t[32];
            format_value(t, sizeof t, target);
            snprintf(tgt, sizeof tgt, "%s %s", goal_symbol(goal), t);
        }
        printf("  %-28s %-8s %7u %12s %-6s %12s  %s\n", name, impl, workers, val, unit, tgt,
               has_goal ? (met ? "yes" : "MISSED") : "");
    }
    fflush(stdout);
}

void wb_note(wb_ctx_t *ctx, const char *suite, const char *fmt, ...) {
    FILE *f = ctx->opt.json ? stderr : stdout;
    va_list ap;
    va_start(ap, fmt);
    fprintf(f, "  # %s: ", suite);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    va_end(ap);
    fflush(f);
}

int wb_summary(wb_ctx_t *ctx) {
    if (ctx->opt.json) {
        printf("{\"summary\":{\"figures\":%d,\"targets\":%d,\"met\":%d,\"missed\":%d}}\n",
               ctx->rows, ctx->met + ctx->missed, ctx->met, ctx->missed);
    } else {
        printf("\n== summary: %d figures, %d targets: %d met, %d missed ==\n", ctx->rows,
               ctx->met + ctx->missed, ctx->met, ctx->missed);
        for (int i = 0; i < ctx->named; i++) {
            printf("  missed: %s\n", ctx->missed_names[i]);
        }
    }
    fflush(stdout);
    return ctx->missed;
}
