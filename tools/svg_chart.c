/* tools/svg_chart.c: speedup-against-workers chart (see svg_chart.h).
 *
 * DESIGN: one mapping function per axis (linear or log2, chosen by the largest worker count)
 * turns data into pixels; everything else — grid, ideal line, series, legend — is drawn through
 * it, so switching scales cannot leave one element on the old scale. The ideal line is drawn as
 * a polyline over many points so it stays correct under either scale. */
#include "svg_chart.h"

#include <math.h>

#include "svg.h"

#define MEASURED_COLOUR "#1f5fbf"
#define PROJECTION_COLOUR "#e07b00"
#define IDEAL_COLOUR "#888888"

typedef struct axes {
    bool log_scale;                  /* log2 on both axes */
    double xlo, xhi;                 /* data range on x (workers) */
    double ylo, yhi;                 /* data range on y (speedup) */
    double left, right, top, bottom; /* plot area, px */
} axes_t;

static double map(double v, double lo, double hi, double p0, double p1, bool log_scale) {
    if (log_scale) {
        v = log2(v > 1e-9 ? v : 1e-9);
        lo = log2(lo);
        hi = log2(hi);
    }
    return p0 + (p1 - p0) * (v - lo) / (hi - lo);
}

static double px(const axes_t *a, double x) {
    return map(x, a->xlo, a->xhi, a->left, a->right, a->log_scale);
}

static double py(const axes_t *a, double y) {
    return map(y, a->ylo, a->yhi, a->bottom, a->top, a->log_scale);
}

static void draw_grid(wt_svg_t *s, const axes_t *a) {
    /* Ticks: integers (linear) or powers of two (log); y ticks from a nice step when linear. */
    double xstep = a->log_scale ? 2.0 : fmax(1.0, wt_svg_nice_step(a->xhi - a->xlo, 8));
    for (double x = 1; x <= a->xhi + 1e-9; x = a->log_scale ? x * xstep : x + xstep) {
        wt_svg_line(s, px(a, x), a->top, px(a, x), a->bottom, "#e6e6e6", 1, NULL);
        wt_svg_text(s, px(a, x), a->bottom + 16, 11, WT_SVG_MIDDLE, "#333333", false, "%g", x);
    }
    double ystep = a->log_scale ? 2.0 : wt_svg_nice_step(a->yhi - a->ylo, 6);
    double y0 = a->log_scale ? pow(2.0, ceil(log2(a->ylo))) : 0.0;
    for (double y = y0; y <= a->yhi + 1e-9; y = a->log_scale ? y * ystep : y + ystep) {
        wt_svg_line(s, a->left, py(a, y), a->right, py(a, y), "#e6e6e6", 1, NULL);
        wt_svg_text(s, a->left - 6, py(a, y) + 4, 11, WT_SVG_END, "#333333", false, "%g×", y);
    }
    wt_svg_line(s, a->left, a->bottom, a->right, a->bottom, "#333333", 1.2, NULL);
    wt_svg_line(s, a->left, a->top, a->left, a->bottom, "#333333", 1.2, NULL);
    wt_svg_text(s, (a->left + a->right) / 2, a->bottom + 36, 12, WT_SVG_MIDDLE, "#222222", true,
                "workers%s", a->log_scale ? " (log scale)" : "");
    wt_svg_text(s, a->left - 44, a->top - 12, 12, WT_SVG_START, "#222222", true,
                "speedup over 1 worker%s", a->log_scale ? " (log scale)" : "");
}

static void draw_series(wt_svg_t *s, const axes_t *a, const double *xs, const double *ys, size_t n,
                        const char *colour, const char *dash, const char *what) {
    double pts[2 * 64];
    size_t m = n < 64 ? n : 64;
    for (size_t i = 0; i < m; i++) {
        pts[2 * i] = px(a, xs[i]);
        pts[2 * i + 1] = py(a, ys[i]);
    }
    if (m > 1) {
        wt_svg_polyline(s, pts, m, colour, 2.5, dash);
    }
    char tip[128];
    for (size_t i = 0; i < m; i++) {
        snprintf(tip, sizeof tip, "%s: %g workers, %.2f× (efficiency %.0f%%)", what, xs[i], ys[i],
                 100.0 * ys[i] / xs[i]);
        wt_svg_circle(s, pts[2 * i], pts[2 * i + 1], dash ? 3.0 : 4.5, colour, tip);
        if (dash == NULL || m <= 8) {
            /* Measured labels sit below the line, projected ones above: they never collide. */
            double dy = dash == NULL ? 17 : -8;
            wt_svg_text(s, pts[2 * i] + 7, pts[2 * i + 1] + dy, 11, WT_SVG_START, colour, true,
                        "%.2f×", ys[i]);
        }
    }
}

static void draw_legend(wt_svg_t *s, const axes_t *a, const wt_speedup_chart_t *c) {
    double x = a->left + 14;
    double y = a->top + 14;
    wt_svg_rect(s, x - 6, y - 8, 290, c->proj_count ? 64 : 46, "#ffffff", NULL);
    wt_svg_line(s, x, y, x + 26, y, IDEAL_COLOUR, 1.5, "6 4");
    wt_svg_text(s, x + 32, y + 4, 11, WT_SVG_START, "#333333", false, "ideal (speedup = workers)");
    wt_svg_line(s, x, y + 18, x + 26, y + 18, MEASURED_COLOUR, 2.5, NULL);
    wt_svg_text(s, x + 32, y + 22, 11, WT_SVG_START, "#333333", false, "measured on this machine");
    if (c->proj_count > 0) {
        wt_svg_line(s, x, y + 36, x + 26, y + 36, PROJECTION_COLOUR, 2.5, "7 5");
        wt_svg_text(s, x + 32, y + 40, 11, WT_SVG_START, "#333333", false, "%s",
                    c->proj_label ? c->proj_label : "projection (model, not measured)");
    }
}

int wt_svg_speedup_chart(FILE *f, const wt_speedup_chart_t *c) {
    if (c->count == 0) {
        return -1;
    }
    double w = c->width > 0 ? c->width : 720;
    double h = c->height > 0 ? c->height : 480;
    double xmax = 1;
    double ymax = 1;
    double ymin = 1;
    for (size_t i = 0; i < c->count; i++) {
        xmax = fmax(xmax, c->workers[i]);
        ymax = fmax(ymax, c->speedup[i]);
        ymin = fmin(ymin, c->speedup[i]);
    }
    for (size_t i = 0; i < c->proj_count; i++) {
        xmax = fmax(xmax, c->proj_workers[i]);
        ymax = fmax(ymax, c->proj_speedup[i]);
        ymin = fmin(ymin, c->proj_speedup[i]);
    }
    axes_t a = {.log_scale = xmax > 8, .left = 70, .right = w - 60, .top = 80, .bottom = h - 60};
    ymax = fmax(ymax, xmax); /* the ideal line must fit */
    if (a.log_scale) {
        a.xlo = 1;
        a.xhi = xmax;
        a.ylo = fmin(1.0, ymin) / 1.25;
        a.yhi = ymax * 1.25;
    } else {
        a.xlo = 0.75;
        a.xhi = xmax + 0.25;
        a.ylo = 0;
        a.yhi = ymax * 1.12;
    }

    wt_svg_t s;
    const char *title = c->title ? c->title : "weft speedup";
    wt_svg_begin(&s, f, w, h, title);
    wt_svg_text(&s, 20, 26, 18, WT_SVG_START, "#111111", true, "%s", title);
    if (c->subtitle != NULL) {
        wt_svg_text(&s, 20, 46, 12, WT_SVG_START, "#444444", false, "%s", c->subtitle);
    }
    draw_grid(&s, &a);
    double ideal[2 * 33];
    for (int i = 0; i <= 32; i++) {
        double x = a.log_scale ? a.xlo * pow(a.xhi / a.xlo, i / 32.0) : 1 + (xmax - 1) * i / 32.0;
        ideal[2 * i] = px(&a, x);
        ideal[2 * i + 1] = py(&a, x);
    }
    wt_svg_polyline(&s, ideal, 33, IDEAL_COLOUR, 1.5, "6 4");
    if (c->hardware_threads > 0 && c->hardware_threads <= xmax) {
        double x = px(&a, c->hardware_threads);
        wt_svg_line(&s, x, a.top, x, a.bottom, "#aa3333", 1, "2 3");
        wt_svg_text(&s, x + 4, a.bottom - 8, 10, WT_SVG_START, "#aa3333", false,
                    "hardware threads (%g)", c->hardware_threads);
    }
    if (c->proj_count > 0) {
        draw_series(&s, &a, c->proj_workers, c->proj_speedup, c->proj_count, PROJECTION_COLOUR,
                    "7 5", "projection");
    }
    draw_series(&s, &a, c->workers, c->speedup, c->count, MEASURED_COLOUR, NULL, "measured");
    draw_legend(&s, &a, c);
    return wt_svg_end(&s) ? 0 : -1;
}
