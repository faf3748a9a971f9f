/* tools/svg_chart.h: the speedup chart (speedup against workers, with the ideal line) that the
 * demo writes as speedup.svg. Measured points are drawn solid; an optional projection (e.g. the
 * Amdahl/critical-path model for core counts this machine does not have) is drawn dashed and
 * labelled as a projection, so the two can never be mistaken for each other. */
#ifndef WEFT_TOOLS_SVG_CHART_H
#define WEFT_TOOLS_SVG_CHART_H

#include <stddef.h>
#include <stdio.h>

typedef struct wt_speedup_chart {
    const char *title;          /* NULL: "weft speedup" */
    const char *subtitle;       /* NULL: none */
    const double *workers;      /* measured: worker counts (ascending) */
    const double *speedup;      /* measured: speedup over the 1-worker run */
    size_t count;               /* number of measured points */
    const double *proj_workers; /* projection: worker counts, or NULL */
    const double *proj_speedup; /* projection: speedup, or NULL */
    size_t proj_count;          /* number of projected points; 0: no projection */
    const char *proj_label;     /* NULL: "projection (model, not measured)" */
    double hardware_threads;    /* > 0: a vertical marker "hardware threads" at this x */
    double width;               /* 0: 720 px */
    double height;              /* 0: 480 px */
} wt_speedup_chart_t;

/* Write the chart to f. The x axis (workers) and y axis (speedup) are linear while the largest
 * worker count is at most 8, and log2 above that, so 1..64 cores stay readable. Returns 0, or -1
 * on a write failure or if count is 0. */
int wt_svg_speedup_chart(FILE *f, const wt_speedup_chart_t *c);

#endif /* WEFT_TOOLS_SVG_CHART_H */
