/* tools/svg.h: a minimal SVG writer shared by weft's charts (timeline, speedup chart).
 *
 * Writes straight to a FILE; every piece of caller text is XML-escaped, so any system name or
 * title yields a well-formed document. Coordinates are in pixels, printed with two decimals.
 * Errors (a failed write) are sticky and reported by wt_svg_end(). */
#ifndef WEFT_TOOLS_SVG_H
#define WEFT_TOOLS_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#if defined(__GNUC__) || defined(__clang__)
#define WT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define WT_PRINTF(a, b)
#endif

typedef struct wt_svg {
    FILE *f;   /* destination; not owned */
    bool ok;   /* false once any write failed */
    int depth; /* open <g> groups, closed by wt_svg_end() */
} wt_svg_t;

/* Text anchors for wt_svg_text(). */
typedef enum wt_svg_anchor { WT_SVG_START = 0, WT_SVG_MIDDLE, WT_SVG_END } wt_svg_anchor_t;

/* Start a document of width x height pixels on a white background with a <title>. */
void wt_svg_begin(wt_svg_t *s, FILE *f, double width, double height, const char *title);

/* Finish the document (closes open groups). Returns true if every write succeeded. */
bool wt_svg_end(wt_svg_t *s);

/* Write `text` with &, <, >, " and ' escaped; control characters other than tab/newline are
 * dropped (XML 1.0 forbids them). */
void wt_svg_escape(FILE *f, const char *text);

/* A filled rectangle; `tooltip` (may be NULL) becomes a nested <title> shown on hover. */
void wt_svg_rect(wt_svg_t *s, double x, double y, double w, double h, const char *fill,
                 const char *tooltip);

/* A straight line. `dash` is a stroke-dasharray such as "6 4", or NULL for solid. */
void wt_svg_line(wt_svg_t *s, double x1, double y1, double x2, double y2, const char *stroke,
                 double width, const char *dash);

/* A polyline through n points (xy holds x0, y0, x1, y1, ...). */
void wt_svg_polyline(wt_svg_t *s, const double *xy, size_t n, const char *stroke, double width,
                     const char *dash);

/* A filled circle with an optional tooltip. */
void wt_svg_circle(wt_svg_t *s, double cx, double cy, double r, const char *fill,
                   const char *tooltip);

/* printf-style text, escaped; size in px. `weight_bold` selects bold. */
void wt_svg_text(wt_svg_t *s, double x, double y, double size, wt_svg_anchor_t anchor,
                 const char *fill, bool weight_bold, const char *fmt, ...) WT_PRINTF(8, 9);

/* Open/close a <g> group (e.g. to carry a class or a transform); `attrs` is written verbatim
 * and must be well-formed attribute text (callers pass literals only). */
void wt_svg_group_begin(wt_svg_t *s, const char *attrs);
void wt_svg_group_end(wt_svg_t *s);

/* The i-th of n distinct colours as "#rrggbb" (golden-angle hue steps, fixed saturation and
 * lightness, so neighbours differ and the mapping depends only on i). out must hold 8 bytes. */
void wt_svg_palette(size_t i, char out[8]);

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving about `target` ticks over span. */
double wt_svg_nice_step(double span, int target);

#endif /* WEFT_TOOLS_SVG_H */
