/* tools/bench_compare.c: weft_bench_compare — compare two `weft_bench --json` reports and flag
 * regressions beyond noise.
 *
 *   weft_bench_compare [--threshold PCT] [--higher-better SUBSTR] [--lower-better SUBSTR]
 *                      [--only-changes] [--fail-missing] base.jsonl new.jsonl
 *
 * Input: one JSON object per line, e.g.
 *   {"suite":"jobs","case":"fork_join_empty","impl":"weft","workers":2,"value":0.91,"unit":"us"}
 * Other lines (headers, blank lines, text) are skipped. Rows are matched by
 * (suite, case, impl, workers); repeated rows of one key (several runs appended into one file)
 * are reduced to their median.
 *
 * Which direction is better (first rule that applies):
 *   1. --higher-better / --lower-better SUBSTR given on the command line and found in the case name;
 *   2. the row's own "goal" field, which weft_bench writes for figures with a target:
 *      "at_least" is higher-better, "at_most" lower-better;
 *   3. unit "x" (ratios): a case name containing "speedup", "efficiency" or "scaling" is
 *      higher-better; any other ratio — in particular `*_vs_*` (weft time over a baseline's
 *      time) — is lower-better;
 *   4. throughput units (ending in "/s", or "ops", "fps", "hz") or a case name containing
 *      "throughput" are higher-better;
 *   5. everything else (ns, us, ms, s, B, counts) is lower-better.
 *
 * Change is measured as a cost ratio, so both directions read the same way: for lower-better,
 * cost = value; for higher-better, cost = 1/value; change = cost_new/cost_old - 1 ("+25%" means
 * 25% worse). A row is a REGRESSION when the change exceeds the threshold (default 10%) and,
 * when both files hold at least two samples of the row, the best new sample is still worse than
 * the worst base sample (so overlapping noise is not flagged). Improvements beyond the threshold
 * are reported as "improved". A base value of 0 cannot be compared as a ratio: reported, never
 * flagged.
 *
 * Exit status: 0 no regression; 1 at least one regression (or, with --fail-missing, a base row
 * absent from the new report); 2 bad usage or unreadable input (including no rows at all). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define MAX_PATTERNS 16

typedef struct row {
    char *suite;    /* owned */
    char *name;     /* the "case" field; owned */
    char *impl;     /* owned; "" when absent */
    char *unit;     /* owned; "" when absent */
    long workers;   /* -1 when absent */
    int goal;       /* +1: "goal":"at_least", -1: "at_most", 0: none */
    double *values; /* samples; owned */
    size_t n;       /* number of samples */
    size_t cap;     /* capacity of values */
    bool matched;   /* found in the other report */
} row_t;

typedef struct report {
    row_t *rows;  /* owned */
    size_t count; /* rows in use */
    size_t cap;   /* capacity */
} report_t;

typedef struct options {
    double threshold;                 /* fraction, e.g. 0.10 */
    const char *higher[MAX_PATTERNS]; /* --higher-better substrings */
    size_t higher_n;                  /* count of the above */
    const char *lower[MAX_PATTERNS];  /* --lower-better substrings */
    size_t lower_n;                   /* count of the above */
    bool only_changes;                /* print only rows beyond the threshold */
    bool fail_missing;                /* missing rows count as failures */
} options_t;

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL) {
        memcpy(d, s, n);
    }
    return d;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(row_t *r) {
    qsort(r->values, r->n, sizeof *r->values, cmp_double);
    return r->n % 2 ? r->values[r->n / 2] : (r->values[r->n / 2 - 1] + r->values[r->n / 2]) / 2;
}

static row_t *find_row(report_t *rep, const char *suite, const char *name, const char *impl,
                       long workers) {
    for (size_t i = 0; i < rep->count; i++) {
        row_t *r = &rep->rows[i];
        if (r->workers == workers && strcmp(r->suite, suite) == 0 && strcmp(r->name, name) == 0 &&
            strcmp(r->impl, impl) == 0) {
            return r;
        }
    }
    return NULL;
}

/* Add one sample, creating the row on first sight. Returns -1 on OOM. */
static int add_sample(report_t *rep, const wt_json_t *obj) {
    const char *suite = wt_json_string(wt_json_get(obj, "suite"), NULL);
    const char *name = wt_json_string(wt_json_get(obj, "case"), NULL);
    const wt_json_t *value = wt_json_get(obj, "value");
    if (suite == NULL || name == NULL || value == NULL || value->type != WT_JSON_NUMBER) {
        return 0; /* not a result row (e.g. a config line): skip */
    }
    const char *impl = wt_json_string(wt_json_get(obj, "impl"), "");
    long workers = (long)wt_json_number(wt_json_get(obj, "workers"), -1);
    row_t *r = find_row(rep, suite, name, impl, workers);
    if (r == NULL) {
        if (rep->count == rep->cap) {
            size_t cap = rep->cap ? rep->cap * 2 : 64;
            row_t *grown = realloc(rep->rows, cap * sizeof *grown);
            if (grown == NULL) {
                return -1;
            }
            rep->rows = grown;
            rep->cap = cap;
        }
        r = &rep->rows[rep->count];
        *r = (row_t){.suite = dup_str(suite),
                     .name = dup_str(name),
                     .impl = dup_str(impl),
                     .unit = dup_str(wt_json_string(wt_json_get(obj, "unit"), "")),
                     .workers = workers};
        const char *goal = wt_json_string(wt_json_get(obj, "goal"), "");
        r->goal = strcmp(goal, "at_least") == 0 ? 1 : strcmp(goal, "at_most") == 0 ? -1 : 0;
        rep->count++;
        if (!r->suite || !r->name || !r->impl || !r->unit) {
            return -1;
        }
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4;
        double *grown = realloc(r->values, cap * sizeof *grown);
        if (grown == NULL) {
            return -1;
        }
        r->values = grown;
        r->cap = cap;
    }
    r->values[r->n++] = value->number;
    return 0;
}

static void free_report(report_t *rep) {
    for (size_t i = 0; i < rep->count; i++) {
        free(rep->rows[i].suite);
        free(rep->rows[i].name);
        free(rep->rows[i].impl);
        free(rep->rows[i].unit);
        free(rep->rows[i].values);
    }
    free(rep->rows);
}

/* Load a JSON-lines report. Returns 0, or -1 with a message printed. */
static int load_report(const char *path, report_t *rep) {
    char err[256];
    size_t len = 0;
    char *text = wt_json_read_file(path, &len, err, sizeof err);
    if (text == NULL) {
        fprintf(stderr, "weft_bench_compare: %s\n", err);
        return -1;
    }
    int rc = 0;
    size_t lineno = 0;
    for (char *line = text; line != NULL && *line != '\0';) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        lineno++;
        size_t lead = strspn(line, " \t\r");
        if (lead < n && line[lead] == '{') {
            wt_json_doc_t *doc = wt_json_parse(line, n, 0, err, sizeof err);
            if (doc == NULL) {
                fprintf(stderr, "weft_bench_compare: %s:%zu: skipped, %s\n", path, lineno, err);
            } else {
                rc = add_sample(rep, wt_json_root(doc));
                wt_json_free(doc);
                if (rc != 0) {
                    fprintf(stderr, "weft_bench_compare: out of memory\n");
                    break;
                }
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    if (rc == 0 && rep->count == 0) {
        fprintf(stderr, "weft_bench_compare: %s: no result rows (expected weft_bench --json)\n",
                path);
        rc = -1;
    }
    return rc;
}

static bool contains_any(const char *s, const char *const *pats, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (strstr(s, pats[i]) != NULL) {
            return true;
        }
    }
    return false;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s);
    size_t b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The direction rule documented at the top of this file. */
static bool is_higher_better(const options_t *o, const row_t *r) {
    if (contains_any(r->name, o->higher, o->higher_n)) {
        return true;
    }
    if (contains_any(r->name, o->lower, o->lower_n)) {
        return false;
    }
    if (r->goal != 0) {
        return r->goal > 0;
    }
    if (strcmp(r->unit, "x") == 0) {
        static const char *const up[] = {"speedup", "efficiency", "scaling"};
        return contains_any(r->name, up, 3);
    }
    return ends_with(r->unit, "/s") || strstr(r->unit, "ops") != NULL ||
           strcmp(r->unit, "fps") == 0 || strcmp(r->unit, "hz") == 0 ||
           strcmp(r->unit, "Hz") == 0 || strstr(r->name, "throughput") != NULL;
}

/* Compare one matched pair; returns 1 for a regression, else 0. Prints the row. */
static int compare_row(const options_t *o, row_t *b, row_t *n) {
    bool up = is_higher_better(o, b);
    double vb = median(b);
    double vn = median(n);
    const char *verdict = "ok";
    char change[32] = "n/a";
    int regression = 0;
    bool beyond = false;
    if (vb > 0 && vn > 0) {
        double cost_ratio = up ? vb / vn : vn / vb;
        double c = cost_ratio - 1.0;
        snprintf(change, sizeof change, "%+.1f%%", 100.0 * c);
        /* With samples on both sides, a regression must also clear the spread: the best new
         * sample must be worse than the worst base sample. values[] are sorted by median(). */
        double best_new = up ? n->values[n->n - 1] : n->values[0];
        double worst_base = up ? b->values[0] : b->values[b->n - 1];
        bool clear = b->n < 2 || n->n < 2 || (up ? best_new < worst_base : best_new > worst_base);
        if (c > o->threshold) {
            beyond = true;
            verdict = clear ? "REGRESSION" : "noisy (ranges overlap)";
            regression = clear ? 1 : 0;
        } else if (c < -o->threshold) {
            beyond = true;
            verdict = "improved";
        }
    } else if (vb != vn) {
        beyond = true;
        verdict = "changed (no ratio: zero or negative)";
    }
    if (!o->only_changes || beyond) {
        printf("%-10s %-34s %-8s %3ld  %12.4g %12.4g %-5s %-4s %8s  %s\n", b->suite, b->name,
               b->impl, b->workers, vb, vn, b->unit, up ? "high" : "low", change, verdict);
    }
    return regression;
}

static int usage(void) {
    fprintf(stderr,
            "usage: weft_bench_compare [--threshold PCT] [--higher-better SUBSTR]... "
            "[--lower-better SUBSTR]... [--only-changes] [--fail-missing] base.jsonl new.jsonl\n");
    return 2;
}

int main(int argc, char **argv) {
    options_t o = {.threshold = 0.10};
    const char *files[2] = {NULL, NULL};
    size_t nfiles = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool val = i + 1 < argc;
        if (strcmp(a, "--threshold") == 0 && val) {
            char *end = NULL;
            double pct = strtod(argv[++i], &end);
            if (*end != '\0' || !(pct >= 0) || pct > 1000) {
                fprintf(stderr, "weft_bench_compare: --threshold wants a percentage, e.g. 10\n");
                return 2;
            }
            o.threshold = pct / 100.0;
        } else if (strcmp(a, "--higher-better") == 0 && val && o.higher_n < MAX_PATTERNS) {
            o.higher[o.higher_n++] = argv[++i];
        } else if (strcmp(a, "--lower-better") == 0 && val && o.lower_n < MAX_PATTERNS) {
            o.lower[o.lower_n++] = argv[++i];
        } else if (strcmp(a, "--only-changes") == 0) {
            o.only_changes = true;
        } else if (strcmp(a, "--fail-missing") == 0) {
            o.fail_missing = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "weft_bench_compare: unknown or incomplete option '%s'\n", a);
            return usage();
        } else if (nfiles < 2) {
            files[nfiles++] = a;
        } else {
            return usage();
        }
    }
    if (nfiles != 2) {
        return usage();
    }
    report_t base = {0};
    report_t cur = {0};
    if (load_report(files[0], &base) != 0 || load_report(files[1], &cur) != 0) {
        free_report(&base);
        free_report(&cur);
        return 2;
    }
    printf("weft_bench_compare: %s -> %s, noise threshold %.1f%%\n", files[0], files[1],
           100.0 * o.threshold);
    printf("%-10s %-34s %-8s %3s  %12s %12s %-5s %-4s %8s  %s\n", "suite", "case", "impl", "w",
           "base", "new", "unit", "best", "change", "verdict");
    size_t regressions = 0;
    size_t missing = 0;
    size_t added = 0;
    for (size_t i = 0; i < base.count; i++) {
        row_t *b = &base.rows[i];
        row_t *n = find_row(&cur, b->suite, b->name, b->impl, b->workers);
        if (n == NULL) {
            missing++;
            printf("%-10s %-34s %-8s %3ld  %12.4g %12s %-5s %-4s %8s  %s\n", b->suite, b->name,
                   b->impl, b->workers, median(b), "-", b->unit, "", "", "MISSING in new");
            continue;
        }
        n->matched = true;
        regressions += (size_t)compare_row(&o, b, n);
    }
    for (size_t i = 0; i < cur.count; i++) {
        added += cur.rows[i].matched ? 0 : 1;
    }
    printf("summary: %zu rows compared, %zu regression(s) beyond %.1f%%, %zu missing in new, "
           "%zu only in new\n",
           base.count - missing, regressions, 100.0 * o.threshold, missing, added);
    free_report(&base);
    free_report(&cur);
    return (regressions > 0 || (o.fail_missing && missing > 0)) ? 1 : 0;
}
