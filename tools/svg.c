/* tools/svg.c: the SVG writer behind weft's charts (see svg.h).
 *
 * DESIGN: no DOM, no buffering beyond stdio: each call prints one element. Well-formedness rests
 * on two habits kept here and nowhere else: every caller-supplied string goes through
 * wt_svg_escape(), and every element is either self-closed or closed in the same call (groups are
 * counted and closed by wt_svg_end()). The tests check the output with an XML checker. */
#include "svg.h"

#include <math.h>
#include <stdarg.h>

static void out(wt_svg_t *s, const char *fmt, ...) WT_PRINTF(2, 3);

static void out(wt_svg_t *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(s->f, fmt, ap) < 0) {
        s->ok = false;
    }
    va_end(ap);
}

void wt_svg_escape(FILE *f, const char *text) {
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        switch (*c) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&apos;", f);
            break;
        default:
            if (*c >= 0x20 || *c == '\t' || *c == '\n') {
                fputc(*c, f);
            }
        }
    }
}

void wt_svg_begin(wt_svg_t *s, FILE *f, double width, double height, const char *title) {
    s->f = f;
    s->ok = true;
    s->depth = 0;
    out(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out(s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
        "viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\">\n",
        width, height, width, height);
    out(s, "<title>");
    wt_svg_escape(f, title != NULL ? title : "");
    out(s, "</title>\n");
    out(s, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", width,
        height);
}

bool wt_svg_end(wt_svg_t *s) {
    while (s->depth > 0) {
        wt_svg_group_end(s);
    }
    out(s, "</svg>\n");
    if (fflush(s->f) != 0 || ferror(s->f)) {
        s->ok = false;
    }
    return s->ok;
}

void wt_svg_rect(wt_svg_t *s, double x, double y, double w, double h, const char *fill,
                 const char *tooltip) {
    out(s, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x, y, w, h,
        fill);
    if (tooltip == NULL) {
        out(s, "/>\n");
        return;
    }
    out(s, "><title>");
    wt_svg_escape(s->f, tooltip);
    out(s, "</title></rect>\n");
}

void wt_svg_line(wt_svg_t *s, double x1, double y1, double x2, double y2, const char *stroke,
                 double width, const char *dash) {
    out(s,
        "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
        "stroke-width=\"%.2f\"",
        x1, y1, x2, y2, stroke, width);
    if (dash != NULL) {
        out(s, " stroke-dasharray=\"%s\"", dash);
    }
    out(s, "/>\n");
}

void wt_svg_polyline(wt_svg_t *s, const double *xy, size_t n, const char *stroke, double width,
                     const char *dash) {
    out(s, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.2f\"", stroke, width);
    if (dash != NULL) {
        out(s, " stroke-dasharray=\"%s\"", dash);
    }
    out(s, " points=\"");
    for (size_t i = 0; i < n; i++) {
        out(s, "%s%.2f,%.2f", i ? " " : "", xy[2 * i], xy[2 * i + 1]);
    }
    out(s, "\"/>\n");
}

void wt_svg_circle(wt_svg_t *s, double cx, double cy, double r, const char *fill,
                   const char *tooltip) {
    out(s, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"%s\"", cx, cy, r, fill);
    if (tooltip == NULL) {
        out(s, "/>\n");
        return;
    }
    out(s, "><title>");
    wt_svg_escape(s->f, tooltip);
    out(s, "</title></circle>\n");
}

void wt_svg_text(wt_svg_t *s, double x, double y, double size, wt_svg_anchor_t anchor,
                 const char *fill, bool weight_bold, const char *fmt, ...) {
    static const char *const anchors[] = {"start", "middle", "end"};
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    out(s, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" text-anchor=\"%s\" fill=\"%s\"%s>", x, y,
        size, anchors[anchor], fill, weight_bold ? " font-weight=\"bold\"" : "");
    wt_svg_escape(s->f, buf);
    out(s, "</text>\n");
}

void wt_svg_group_begin(wt_svg_t *s, const char *attrs) {
    out(s, "<g %s>\n", attrs != NULL ? attrs : "");
    s->depth++;
}

void wt_svg_group_end(wt_svg_t *s) {
    if (s->depth > 0) {
        out(s, "</g>\n");
        s->depth--;
    }
}

/* HSL → RGB for the palette; h in degrees, s and l in [0, 1]. */
static void hsl_to_hex(double h, double sat, double l, char hex[8]) {
    double c = (1.0 - fabs(2.0 * l - 1.0)) * sat;
    double hp = fmod(h, 360.0) / 60.0;
    double x = c * (1.0 - fabs(fmod(hp, 2.0) - 1.0));
    double r = 0, g = 0, b = 0;
    if (hp < 1) {
        r = c, g = x;
    } else if (hp < 2) {
        r = x, g = c;
    } else if (hp < 3) {
        g = c, b = x;
    } else if (hp < 4) {
        g = x, b = c;
    } else if (hp < 5) {
        r = x, b = c;
    } else {
        r = c, b = x;
    }
    double m = l - c / 2.0;
    snprintf(hex, 8, "#%02x%02x%02x", (unsigned)lround((r + m) * 255.0),
             (unsigned)lround((g + m) * 255.0), (unsigned)lround((b + m) * 255.0));
}

void wt_svg_palette(size_t i, char out_hex[8]) {
    /* The golden angle spreads successive hues evenly around the wheel; alternating lightness
     * separates the occasional near-equal hues a dozen steps apart. */
    double hue = fmod(20.0 + (double)i * 137.508, 360.0);
    double light = (i % 3 == 0) ? 0.55 : (i % 3 == 1) ? 0.45 : 0.62;
    hsl_to_hex(hue, 0.62, light, out_hex);
}

double wt_svg_nice_step(double span, int target) {
    if (!(span > 0) || target < 1) {
        return 1.0;
    }
    double raw = span / target;
    double mag = pow(10.0, floor(log10(raw)));
    double f = raw / mag;
    double nice = f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0;
    return nice * mag;
}
