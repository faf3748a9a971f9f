/* tools/svg_timeline.h: renders a loaded trace as an SVG timeline — one lane per worker thread,
 * one colour per system, nested spans stacked inside their lane, a time axis and a legend with
 * each system's total time. Used by weft_trace_svg and by the demo for its timeline.svg.
 *
 * Colour key: an event's name up to its first '[' or '#' (so "movement[12]" and "movement#3"
 * share movement's colour); colours are assigned in name order, so the same set of systems gets
 * the same colours in every trace. */
#ifndef WEFT_TOOLS_SVG_TIMELINE_H
#define WEFT_TOOLS_SVG_TIMELINE_H

#include <stdio.h>

#include "json_trace.h"

typedef struct wt_timeline_desc {
    const char *title;    /* NULL: "weft trace timeline" */
    const char *subtitle; /* NULL: a summary (events, lanes, span, busy time) */
    double width;         /* 0: 1400 px */
    double from_us;       /* with to_us: window start in the trace's clock; both 0: whole trace */
    double to_us;         /* window end; both 0: whole trace */
    unsigned max_legend;  /* 0: 40 legend entries; the rest are summed into "other" */
} wt_timeline_desc_t;

/* Write the timeline of `t` to f. NULL desc means defaults. A trace without events still yields
 * a valid SVG that says so. Returns 0, or -1 on a write or allocation failure. */
int wt_svg_timeline(FILE *f, const wt_trace_t *t, const wt_timeline_desc_t *desc);

#endif /* WEFT_TOOLS_SVG_TIMELINE_H */
