/* tools/demo/demo_report.h: the demo's output files — report.json, speedup.svg, timeline.svg
 * (rendered from trace.json by the tools' own renderer), schedule.dot and schedule.svg. */
#ifndef WEFT_DEMO_REPORT_H
#define WEFT_DEMO_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "demo_model.h"
#include "demo_world.h"

/* One worker count's measurements. */
typedef struct demo_run {
    uint32_t workers;       /* worker count (main thread included) */
    double median_ms;       /* median frame time */
    double min_ms;          /* fastest frame */
    double max_ms;          /* slowest frame */
    double speedup;         /* median at 1 worker / this median */
    double efficiency;      /* speedup / workers */
    uint64_t hash;          /* demo_world_hash after every frame ran */
    double build_s;         /* seconds to build the world */
    demo_summary_t summary; /* statistics after the last frame */
    double idle_fraction;   /* traced frame: share of worker time not spent in jobs */
    double main_cpu_ms;     /* median CPU time of the main thread per timed frame */
    double main_off_ms;     /* median of (frame time - main thread CPU) per frame: at 1
                               worker, time the main thread was runnable but off a core */
} demo_run_t;

/* What the report records about the run as a whole. */
typedef struct demo_report {
    const demo_config_t *config; /* the resolved world config */
    uint32_t frames;             /* timed frames per worker count */
    uint32_t warmup;             /* untimed frames first */
    uint32_t hardware_threads;   /* this machine */
    const demo_run_t *runs;      /* one per worker count, ascending */
    uint32_t run_count;          /* entries in runs */
    bool hash_identical;         /* every run ended with the same hash */
    const demo_model_t *model;   /* structure and simulation (NULL if not built) */
    const char *weft_path[32];   /* weft_schedule_critical_path() at the largest count */
    uint32_t weft_path_len;      /* entries in weft_path */
    double weft_path_ms;         /* its summed span */
    bool schedule_svg;           /* schedule.svg was written */
} demo_report_t;

/* Write report.json. Returns 0, or -1 (message on stderr). */
int demo_write_report_json(const char *path, const demo_report_t *r);

/* Write speedup.svg: measured speedups, the ideal line and the simulated ones (dashed,
 * labelled).
 * Returns 0 or -1. */
int demo_write_speedup_svg(const char *path, const demo_report_t *r);

/* Render the Chrome trace at trace_path as timeline.svg with the tools' renderer.
 * Returns 0 or -1 (message on stderr). */
int demo_write_timeline_svg(const char *trace_path, const char *svg_path, const char *title);

/* Write schedule.dot (weft_schedule_dot) into dir and, when Graphviz's `dot` is on the PATH,
 * schedule.svg. *svg_written tells which. Returns 0 or -1. */
int demo_write_schedule(weft_world_t *world, const char *dir, bool *svg_written);

#endif /* WEFT_DEMO_REPORT_H */
