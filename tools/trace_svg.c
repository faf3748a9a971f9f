/* tools/trace_svg.c: weft_trace_svg — render a Chrome trace JSON file (as written by weft's
 * tracer, or any Trace Event producer) as an SVG timeline: workers as lanes, one colour per
 * system, a time axis and a legend.
 *
 *   weft_trace_svg [options] trace.json [out.svg]
 *     -o FILE        output file ("-" or no output argument: standard output)
 *     --title TEXT   chart title
 *     --width PX     image width (default 1400)
 *     --from US      window start, in the trace's microseconds (with --to)
 *     --to US        window end
 *
 * Exit status: 0 on success, 1 if the input cannot be read or is not a trace, 2 on bad usage. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_trace.h"
#include "svg_timeline.h"

static void usage(FILE *f) {
    fputs("usage: weft_trace_svg [-o out.svg] [--title TEXT] [--width PX] [--from US --to US] "
          "trace.json [out.svg]\n",
          f);
}

static int parse_double(const char *s, double *out) {
    char *end = NULL;
    *out = strtod(s, &end);
    return (end != s && *end == '\0' && fabs(*out) < 1e15) ? 0 : -1;
}

int main(int argc, char **argv) {
    const char *in = NULL;
    const char *out = NULL;
    wt_timeline_desc_t desc = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "-o") == 0 && has_value) {
            out = argv[++i];
        } else if (strcmp(a, "--title") == 0 && has_value) {
            desc.title = argv[++i];
        } else if (strcmp(a, "--width") == 0 && has_value) {
            if (parse_double(argv[++i], &desc.width) != 0 || desc.width < 200) {
                fprintf(stderr, "weft_trace_svg: --width wants a number >= 200\n");
                return 2;
            }
        } else if ((strcmp(a, "--from") == 0 || strcmp(a, "--to") == 0) && has_value) {
            double *dst = a[2] == 'f' ? &desc.from_us : &desc.to_us;
            if (parse_double(argv[++i], dst) != 0) {
                fprintf(stderr, "weft_trace_svg: %s wants a number of microseconds\n", a);
                return 2;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "weft_trace_svg: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (in == NULL) {
            in = a;
        } else if (out == NULL) {
            out = a;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (in == NULL) {
        usage(stderr);
        return 2;
    }
    if ((desc.from_us != 0 || desc.to_us != 0) && !(desc.to_us > desc.from_us)) {
        fprintf(stderr, "weft_trace_svg: --to must be greater than --from\n");
        return 2;
    }

    char err[256];
    size_t len = 0;
    char *text = wt_json_read_file(in, &len, err, sizeof err);
    if (text == NULL) {
        fprintf(stderr, "weft_trace_svg: %s\n", err);
        return 1;
    }
    wt_trace_t trace;
    int rc = wt_trace_load(text, len, &trace, err, sizeof err);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "weft_trace_svg: %s: %s\n", in, err);
        return 1;
    }
    FILE *f = (out == NULL || strcmp(out, "-") == 0) ? stdout : fopen(out, "w");
    if (f == NULL) {
        fprintf(stderr, "weft_trace_svg: cannot write '%s'\n", out);
        wt_trace_free(&trace);
        return 1;
    }
    rc = wt_svg_timeline(f, &trace, &desc);
    if (f != stdout && fclose(f) != 0) {
        rc = -1;
    }
    if (rc != 0) {
        fprintf(stderr, "weft_trace_svg: writing the SVG failed\n");
    } else if (f != stdout) {
        fprintf(stderr, "weft_trace_svg: %zu events on %zu lanes -> %s\n", trace.count,
                trace.lane_count, out);
    }
    wt_trace_free(&trace);
    return rc == 0 ? 0 : 1;
}
