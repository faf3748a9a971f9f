/* tools/svg_timeline.c: trace → SVG timeline (see svg_timeline.h).
 *
 * DESIGN: three passes over the sorted events. (1) Colour keys: events are sorted by their key
 * (name up to '[' or '#'), unique keys get palette colours in name order and accumulate their
 * total time. (2) Nesting: within a lane, a stack of end times gives each event its depth (an
 * event that starts before the enclosing one ends sits one row lower), and the deepest row sets
 * the lane's height. (3) Drawing: axis and grid, lanes with their labels and busy share, spans,
 * then the legend sorted by total time. Only the clipped part of each span inside the window
 * is drawn and counted. */
#include "svg_timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#define ROW_H 18.0       /* px per nesting row */
#define LANE_GAP 8.0     /* px between lanes */
#define LABEL_W 170.0    /* px for lane labels on the left */
#define MAX_DEPTH 8      /* deeper nesting is drawn in the last row */
#define LEGEND_COL 260.0 /* px per legend column */

typedef struct key_info {
    const char *name; /* first event name with this key (points into the trace) */
    size_t len;       /* key length in name */
    char colour[8];   /* "#rrggbb" */
    double total;     /* clipped time in the window, microseconds */
    size_t count;     /* events with this key */
} key_info_t;

typedef struct layout {
    double t0, t1;     /* window, microseconds */
    double x0, x1;     /* plot area, px */
    double top;        /* y of the first lane */
    double *lane_y;    /* per lane: top y */
    int *lane_rows;    /* per lane: rows (max depth + 1) */
    double *lane_busy; /* per lane: depth-0 time in the window */
    int *depth;        /* per event */
    size_t *key;       /* per event: index into keys */
    key_info_t *keys;  /* unique colour keys, name order */
    size_t key_count;  /* number of keys */
} layout_t;

static size_t key_len(const char *name) {
    size_t n = strcspn(name, "[#");
    while (n > 0 && name[n - 1] == ' ') {
        n--;
    }
    return n > 0 ? n : strlen(name);
}

static int cmp_key(const void *a, const void *b) {
    const wt_trace_event_t *x = *(const wt_trace_event_t *const *)a;
    const wt_trace_event_t *y = *(const wt_trace_event_t *const *)b;
    size_t lx = key_len(x->name);
    size_t ly = key_len(y->name);
    int c = strncmp(x->name, y->name, lx < ly ? lx : ly);
    return c != 0 ? c : (lx > ly) - (lx < ly);
}

static int cmp_total_desc(const void *a, const void *b) {
    const key_info_t *x = *(const key_info_t *const *)a;
    const key_info_t *y = *(const key_info_t *const *)b;
    return (x->total < y->total) - (x->total > y->total);
}

static double clip_dur(const layout_t *L, const wt_trace_event_t *e) {
    double b = e->ts > L->t0 ? e->ts : L->t0;
    double en = e->ts + e->dur < L->t1 ? e->ts + e->dur : L->t1;
    return en > b ? en - b : 0.0;
}

/* Pass 1: unique colour keys and their totals. */
static int assign_keys(const wt_trace_t *t, layout_t *L) {
    const wt_trace_event_t **order = malloc((t->count + 1) * sizeof *order);
    L->keys = calloc(t->count + 1, sizeof *L->keys);
    if (order == NULL || L->keys == NULL) {
        free(order);
        return -1;
    }
    for (size_t i = 0; i < t->count; i++) {
        order[i] = &t->events[i];
    }
    qsort(order, t->count, sizeof *order, cmp_key);
    for (size_t i = 0; i < t->count; i++) {
        if (i == 0 || cmp_key(&order[i - 1], &order[i]) != 0) {
            key_info_t *k = &L->keys[L->key_count];
            k->name = order[i]->name;
            k->len = key_len(order[i]->name);
            wt_svg_palette(L->key_count, k->colour);
            L->key_count++;
        }
        size_t idx = (size_t)(order[i] - t->events);
        L->key[idx] = L->key_count - 1;
        L->keys[L->key_count - 1].total += clip_dur(L, order[i]);
        L->keys[L->key_count - 1].count++;
    }
    free(order);
    return 0;
}

/* Pass 2: nesting depth per event, rows and busy time per lane. */
static void assign_depths(const wt_trace_t *t, layout_t *L) {
    double stack[MAX_DEPTH + 1];
    int sp = 0;
    size_t lane = (size_t)-1;
    for (size_t i = 0; i < t->count; i++) {
        const wt_trace_event_t *e = &t->events[i];
        size_t l = wt_trace_lane_of(t, e);
        if (l != lane) {
            lane = l;
            sp = 0;
        }
        /* Tiny tolerance: producers round ts and dur separately, so a child may appear to end a
         * fraction after its parent, and back-to-back spans may appear to overlap slightly. */
        while (sp > 0 && stack[sp - 1] <= e->ts + 1e-3) {
            sp--;
        }
        int d = sp < MAX_DEPTH ? sp : MAX_DEPTH - 1;
        L->depth[i] = d;
        if (sp < MAX_DEPTH) {
            stack[sp++] = e->ts + e->dur;
        }
        if (d + 1 > L->lane_rows[l] && clip_dur(L, e) > 0) {
            L->lane_rows[l] = d + 1;
        }
        if (d == 0) {
            L->lane_busy[l] += clip_dur(L, e);
        }
    }
}

static void format_time(char *buf, size_t n, double us) {
    double a = fabs(us);
    if (a >= 1e6) {
        snprintf(buf, n, "%.3g s", us / 1e6);
    } else if (a >= 1e3) {
        snprintf(buf, n, "%.4g ms", us / 1e3);
    } else {
        snprintf(buf, n, "%.4g µs", us);
    }
}

static void draw_axis(wt_svg_t *s, const layout_t *L, double bottom) {
    double span = L->t1 - L->t0;
    double step = wt_svg_nice_step(span, 10);
    char label[32];
    wt_svg_line(s, L->x0, L->top - 6, L->x1, L->top - 6, "#444444", 1, NULL);
    /* An integer tick counter: adding step to a large value could stall or drift. */
    for (int k = 0; k <= 20 && k * step <= span + step * 1e-9; k++) {
        double v = k * step;
        double x = L->x0 + (L->x1 - L->x0) * v / span;
        wt_svg_line(s, x, L->top - 10, x, bottom, "#e4e4e4", 1, NULL);
        format_time(label, sizeof label, v);
        wt_svg_text(s, x, L->top - 13, 10, WT_SVG_MIDDLE, "#444444", false, "%s", label);
    }
}

static void draw_lanes(wt_svg_t *s, const wt_trace_t *t, const layout_t *L) {
    double span = L->t1 - L->t0;
    for (size_t l = 0; l < t->lane_count; l++) {
        double y = L->lane_y[l];
        double h = L->lane_rows[l] * ROW_H;
        wt_svg_rect(s, L->x0, y, L->x1 - L->x0, h, l % 2 ? "#f7f7f7" : "#efefef", NULL);
        const wt_trace_lane_t *lane = &t->lanes[l];
        if (lane->name != NULL) {
            wt_svg_text(s, LABEL_W - 8, y + 13, 12, WT_SVG_END, "#222222", true, "%s", lane->name);
        } else {
            wt_svg_text(s, LABEL_W - 8, y + 13, 12, WT_SVG_END, "#222222", true, "thread %llu",
                        (unsigned long long)lane->tid);
        }
        wt_svg_text(s, LABEL_W - 8, y + 26, 10, WT_SVG_END, "#666666", false, "busy %.0f%%",
                    span > 0 ? 100.0 * L->lane_busy[l] / span : 0.0);
    }
}

/* The spans, drawn after the grid so the grid shows through the lanes but not the spans. */
static void draw_spans(wt_svg_t *s, const wt_trace_t *t, const layout_t *L) {
    double span = L->t1 - L->t0;
    char tip[640];
    char dur[32];
    for (size_t i = 0; i < t->count; i++) {
        const wt_trace_event_t *e = &t->events[i];
        if (clip_dur(L, e) <= 0 && !(e->dur == 0 && e->ts >= L->t0 && e->ts <= L->t1)) {
            continue;
        }
        size_t l = wt_trace_lane_of(t, e);
        double b = e->ts > L->t0 ? e->ts : L->t0;
        double x = L->x0 + (L->x1 - L->x0) * (b - L->t0) / span;
        double w = (L->x1 - L->x0) * clip_dur(L, e) / span;
        double y = L->lane_y[l] + L->depth[i] * ROW_H + 1;
        format_time(dur, sizeof dur, e->dur);
        snprintf(tip, sizeof tip, "%s — %s%s%s", e->name, dur, e->args[0] ? "\n" : "", e->args);
        /* Sub-pixel spans stay visible as hairlines rather than vanishing. */
        wt_svg_rect(s, x, y, w > 0.6 ? w : 0.6, ROW_H - 2, L->keys[L->key[i]].colour, tip);
        if (w > 60) {
            wt_svg_text(s, x + 3, y + 12, 10, WT_SVG_START, "#ffffff", false, "%.*s",
                        (int)((w - 6) / 6), e->name);
        }
    }
}

static int draw_legend(wt_svg_t *s, const layout_t *L, double y, unsigned max_entries,
                       double cols) {
    const key_info_t **order = malloc((L->key_count + 1) * sizeof *order);
    if (order == NULL) {
        return -1;
    }
    double all = 0;
    for (size_t i = 0; i < L->key_count; i++) {
        order[i] = &L->keys[i];
        all += L->keys[i].total;
    }
    qsort(order, L->key_count, sizeof *order, cmp_total_desc);
    wt_svg_text(s, 20, y, 12, WT_SVG_START, "#222222", true,
                "Systems by total time in the window (colour key):");
    size_t shown = L->key_count < max_entries ? L->key_count : max_entries;
    double other = 0;
    for (size_t i = shown; i < L->key_count; i++) {
        other += order[i]->total;
    }
    for (size_t i = 0; i < shown; i++) {
        double x = 20 + LEGEND_COL * (double)(i % (size_t)cols);
        double ly = y + 12 + 18 * (double)(i / (size_t)cols);
        char tot[32];
        format_time(tot, sizeof tot, order[i]->total);
        wt_svg_rect(s, x, ly, 12, 12, order[i]->colour, NULL);
        wt_svg_text(s, x + 17, ly + 10, 11, WT_SVG_START, "#222222", false,
                    "%.*s  %s (%.1f%%) ×%zu", (int)(order[i]->len < 26 ? order[i]->len : 26),
                    order[i]->name, tot, all > 0 ? 100.0 * order[i]->total / all : 0.0,
                    order[i]->count);
    }
    if (shown < L->key_count) {
        double ly = y + 12 + 18 * (double)((shown + (size_t)cols - 1) / (size_t)cols);
        char tot[32];
        format_time(tot, sizeof tot, other);
        wt_svg_text(s, 20, ly + 10, 11, WT_SVG_START, "#444444", false,
                    "... and %zu more systems, %s in total", L->key_count - shown, tot);
    }
    free(order);
    return 0;
}

int wt_svg_timeline(FILE *f, const wt_trace_t *t, const wt_timeline_desc_t *desc) {
    wt_timeline_desc_t d = desc != NULL ? *desc : (wt_timeline_desc_t){0};
    double width = d.width > 0 ? d.width : 1400;
    unsigned max_legend = d.max_legend ? d.max_legend : 40;
    layout_t L = {.x0 = LABEL_W, .x1 = width - 20, .top = 78};
    int rc = -1;
    L.lane_y = calloc(t->lane_count + 1, sizeof *L.lane_y);
    L.lane_rows = calloc(t->lane_count + 1, sizeof *L.lane_rows);
    L.lane_busy = calloc(t->lane_count + 1, sizeof *L.lane_busy);
    L.depth = calloc(t->count + 1, sizeof *L.depth);
    L.key = calloc(t->count + 1, sizeof *L.key);
    if (!L.lane_y || !L.lane_rows || !L.lane_busy || !L.depth || !L.key) {
        goto fail_free;
    }
    /* Window: the caller's, or the whole trace. */
    L.t0 = d.from_us;
    L.t1 = d.to_us;
    if (L.t0 == 0 && L.t1 == 0 && t->count > 0) {
        L.t0 = t->events[0].ts;
        for (size_t i = 0; i < t->count; i++) {
            L.t0 = fmin(L.t0, t->events[i].ts);
            L.t1 = fmax(L.t1, t->events[i].ts + t->events[i].dur);
        }
    }
    if (!(L.t1 > L.t0)) {
        L.t1 = L.t0 + 1; /* empty or instantaneous: any positive span draws correctly */
    }
    if (assign_keys(t, &L) != 0) {
        goto fail_free;
    }
    for (size_t l = 0; l < t->lane_count; l++) {
        L.lane_rows[l] = 2; /* room for the label and the busy line */
    }
    assign_depths(t, &L);
    double y = L.top;
    for (size_t l = 0; l < t->lane_count; l++) {
        L.lane_y[l] = y;
        y += L.lane_rows[l] * ROW_H + LANE_GAP;
    }
    double cols = floor((width - 40) / LEGEND_COL);
    cols = cols < 1 ? 1 : cols;
    size_t legend_n = (L.key_count < max_legend ? L.key_count : max_legend) + 1;
    double height = y + 40 + 18 * ceil((double)legend_n / cols) + 20;

    wt_svg_t s;
    char span[32];
    format_time(span, sizeof span, L.t1 - L.t0);
    wt_svg_begin(&s, f, width, height, d.title ? d.title : "weft trace timeline");
    wt_svg_text(&s, 20, 26, 18, WT_SVG_START, "#111111", true, "%s",
                d.title ? d.title : "weft trace timeline");
    if (d.subtitle != NULL) {
        wt_svg_text(&s, 20, 46, 12, WT_SVG_START, "#444444", false, "%s", d.subtitle);
    } else {
        wt_svg_text(&s, 20, 46, 12, WT_SVG_START, "#444444", false,
                    "%zu events on %zu lanes, %zu systems, window %s (%zu events skipped)",
                    t->count, t->lane_count, L.key_count, span, t->skipped);
    }
    if (t->count == 0) {
        wt_svg_text(&s, width / 2, L.top + 20, 14, WT_SVG_MIDDLE, "#aa0000", true,
                    "no complete events in this trace");
    }
    draw_lanes(&s, t, &L);
    draw_axis(&s, &L, y - LANE_GAP);
    draw_spans(&s, t, &L);
    if (draw_legend(&s, &L, y + 24, max_legend, cols) != 0) {
        goto fail_free;
    }
    rc = wt_svg_end(&s) ? 0 : -1;

fail_free:
    free(L.lane_y);
    free(L.lane_rows);
    free(L.lane_busy);
    free(L.depth);
    free(L.key);
    free(L.keys);
    return rc;
}
