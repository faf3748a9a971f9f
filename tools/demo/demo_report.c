/* tools/demo/demo_report.c: writes the demo's output files (see demo_report.h).
 *
 * DESIGN: report.json is written by hand with one escaping helper (no JSON library in the
 * tools); numbers use %.6g so the file stays readable. Anything simulated lives under the
 * "simulation" key, whose first field says it is simulated, so no reader can take it for a
 * measurement. The SVGs go through tools/svg*.c, the same code the tests check for
 * well-formedness. */
#include "demo_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "json_trace.h"
#include "svg_chart.h"
#include "svg_timeline.h"
#include "weft/system.h"

static void write_runs(FILE *f, const demo_report_t *r) {
    fprintf(f, "  \"runs\": [\n");
    for (uint32_t i = 0; i < r->run_count; i++) {
        const demo_run_t *x = &r->runs[i];
        fprintf(f,
                "    {\"workers\": %u, \"frame_ms_median\": %.6g, \"frame_ms_min\": %.6g, "
                "\"frame_ms_max\": %.6g, \"speedup\": %.6g, \"efficiency\": %.6g, "
                "\"hash\": \"0x%016llx\", \"build_s\": %.4g, \"idle_fraction\": %.4g, "
                "\"main_cpu_ms_median\": %.6g, \"main_off_cpu_ms_median\": %.6g, "
                "\"entities\": %u, \"particles\": %u, \"hierarchy_nodes\": %u, "
                "\"visible\": %llu, \"mean_speed\": %.6g}%s\n",
                x->workers, x->median_ms, x->min_ms, x->max_ms, x->speedup, x->efficiency,
                (unsigned long long)x->hash, x->build_s, x->idle_fraction, x->main_cpu_ms,
                x->main_off_ms, x->summary.entities, x->summary.particles, x->summary.hierarchy,
                (unsigned long long)x->summary.visible, x->summary.mean_speed,
                i + 1 < r->run_count ? "," : "");
    }
    fprintf(f, "  ],\n");
}

static void write_measured(FILE *f, const demo_model_t *m, const demo_report_t *r) {
    fprintf(f, "  \"measured\": {\n");
    fprintf(f, "    \"note\": \"from the traced frame at 1 worker unless stated\",\n");
    fprintf(f, "    \"frame_ms_1_worker\": %.6g,\n", m->t1_ms);
    fprintf(f, "    \"traced_frame_ms\": %.6g,\n", m->traced_ms);
    fprintf(f, "    \"job_work_ms\": %.6g,\n", m->one.job_work_ms);
    fprintf(f, "    \"apply_ms\": %.6g,\n", m->one.apply_ms);
    fprintf(f, "    \"frame_overhead_ms\": %.6g,\n", m->overhead_ms);
    fprintf(f, "    \"serial_fraction\": %.6g,\n", m->serial_fraction);
    fprintf(f,
            "    \"synchronisation_fraction\": {\"workers\": %u, \"value\": %.6g, "
            "\"meaning\": \"share of worker time inside the traced frame not spent in jobs "
            "(waiting at dependencies and barriers, imbalance)\"},\n",
            m->many.workers, m->many.idle_fraction);
    fprintf(f, "    \"karp_flatt_serial_fraction\": ");
    if (m->karp_flatt_workers >= 2) {
        fprintf(f, "{\"workers\": %u, \"value\": %.6g, \"from\": \"fastest frames\"},\n",
                m->karp_flatt_workers, m->karp_flatt);
    } else {
        fprintf(f, "null,\n");
    }
    fprintf(f, "    \"critical_path_ms\": %.6g,\n    \"critical_path\": [", m->critical_path_ms);
    for (uint32_t i = 0; i < m->path_len; i++) {
        fprintf(f, "%s", i ? ", " : "");
        wt_json_write_string(f, m->path[i]);
    }
    fprintf(f,
            "],\n    \"weft_critical_path\": {\"workers\": %u, \"total_ms\": %.6g, "
            "\"systems\": [",
            r->run_count ? r->runs[r->run_count - 1].workers : 0, r->weft_path_ms);
    for (uint32_t i = 0; i < r->weft_path_len; i++) {
        fprintf(f, "%s", i ? ", " : "");
        wt_json_write_string(f, r->weft_path[i]);
    }
    fprintf(f, "]},\n    \"systems\": [\n");
    for (uint32_t i = 0; i < m->system_count; i++) {
        const demo_system_cost_t *s = &m->systems[i];
        fprintf(f, "      {\"name\": ");
        wt_json_write_string(f, s->name);
        fprintf(f,
                ", \"phase\": %u, \"parallel\": %s, \"jobs\": %u, \"work_ms\": %.6g, "
                "\"median_job_ms\": %.6g, \"max_job_ms\": %.6g}%s\n",
                s->phase, s->parallel ? "true" : "false", s->jobs, s->work_ms, s->median_job_ms,
                s->max_job_ms, i + 1 < m->system_count ? "," : "");
    }
    fprintf(f, "    ]\n  },\n");
}

static void write_number(FILE *f, double v) {
    if (isnan(v)) {
        fprintf(f, "null");
    } else {
        fprintf(f, "%.6g", v);
    }
}

static void write_simulation(FILE *f, const demo_model_t *m) {
    const wt_sim_costs_t *c = &m->sim_costs;
    fprintf(f, "  \"simulation\": {\n");
    fprintf(f, "    \"kind\": \"SIMULATED - the schedule simulator (tools/sim) replaying the "
               "traced frames, not a measurement\",\n");
    fprintf(f, "    \"model\": \"the runtime's policy (phases in order; flat parallel-for, "
               "ready list claimed in runs with drain jobs handed out per ready set, or job graph "
               "with own-deque LIFO and FIFO steals; inline phases as measured) on P workers; "
               "chunk durations from the 1-worker trace for P = 1 and the 2-worker trace "
               "for P >= 2; no memory-bandwidth limit beyond what 2 workers measured\",\n");
    fprintf(f,
            "    \"costs_ns\": {\"job\": %.6g, \"steal\": %.6g, \"notice\": %.6g, "
            "\"wake\": %.6g, \"spin\": %.6g, \"claim\": %.6g, \"handout\": %.6g, "
            "\"frame\": %.6g},\n",
            c->job_ns, c->steal_ns, c->notice_ns, c->wake_ns, c->spin_ns, c->claim_ns,
            c->handout_ns, c->frame_ns);
    fprintf(f, "    \"sim_error_p1\": ");
    write_number(f, m->sim_error_p1);
    fprintf(f, ",\n    \"sim_error_p2\": ");
    write_number(f, m->sim_error_p2);
    fprintf(f, ",\n    \"rule\": \"each traced pair (the j-th traced frame at 1 and at 2 workers) "
               "replayed on every P; frame_ms is the median over the pairs, speedup the median "
               "at 1 over the median at P, sim_error_p1/p2 the median at 1/2 over the measured "
               "median frame less one\",\n");
    fprintf(f, "    \"traced_pairs\": %u,\n    \"pairs\": [\n", m->sim_pairs);
    for (uint32_t j = 0; j < m->sim_pairs; j++) {
        fprintf(f, "      {\"traced_ms_p1\": ");
        write_number(f, m->sim_pair_traced_ms[j][0]);
        fprintf(f, ", \"traced_ms_p2\": ");
        write_number(f, m->sim_pair_traced_ms[j][1]);
        fprintf(f, ", \"sim_ms_p1\": ");
        write_number(f, m->sim_pair_ms[j][0]);
        fprintf(f, ", \"sim_ms_p2\": ");
        write_number(f, m->sim_pair_ms[j][1]);
        fprintf(f, ", \"sim_ms\": [");
        for (int i = 0; i < DEMO_SIM_POINTS; i++) { /* at 1, 2, 4, ... 64 workers */
            fprintf(f, "%s", i ? ", " : "");
            write_number(f, m->sim_pair_ms[j][i]);
        }
        fprintf(f, "]");
        fprintf(f, "}%s\n", j + 1 < m->sim_pairs ? "," : "");
    }
    fprintf(f, "    ],\n    \"points\": [\n");
    for (int i = 0; i < DEMO_SIM_POINTS; i++) {
        fprintf(f,
                "      {\"workers\": %.0f, \"frame_ms\": %.6g, \"speedup\": %.6g, "
                "\"efficiency\": %.6g}%s\n",
                m->sim_workers[i], m->sim_frame_ms[i], m->sim_speedup[i],
                m->sim_speedup[i] / m->sim_workers[i], i + 1 < DEMO_SIM_POINTS ? "," : "");
    }
    fprintf(f, "    ]\n  },\n");
}

int demo_write_report_json(const char *path, const demo_report_t *r) {
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "weft_demo: cannot write %s\n", path);
        return -1;
    }
    const demo_config_t *c = r->config;
    fprintf(f, "{\n  \"weft_demo\": 1,\n  \"weft_version\": ");
    wt_json_write_string(f, weft_version());
    fprintf(f, ",\n  \"hardware_threads\": %u,\n", r->hardware_threads);
    fprintf(f,
            "  \"config\": {\"mobiles\": %u, \"particles\": %u, \"carriers\": %u, "
            "\"emitters\": %u, \"seed\": %llu, \"frames\": %u, \"warmup\": %u, "
            "\"dt\": %.6g},\n",
            c->mobiles, c->particles, c->carriers, c->emitters, (unsigned long long)c->seed,
            r->frames, r->warmup, 1.0 / 60.0);
    fprintf(f, "  \"hash_identical\": %s,\n", r->hash_identical ? "true" : "false");
    write_runs(f, r);
    if (r->model != NULL) {
        write_measured(f, r->model, r);
        if (r->model->have_sim) {
            write_simulation(f, r->model);
        }
    }
    fprintf(f,
            "  \"files\": [\"report.json\", \"speedup.svg\", \"timeline.svg\", "
            "\"trace.json\", \"schedule.dot\"%s]\n}\n",
            r->schedule_svg ? ", \"schedule.svg\"" : "");
    if (fclose(f) != 0) {
        fprintf(stderr, "weft_demo: writing %s failed\n", path);
        return -1;
    }
    return 0;
}

int demo_write_speedup_svg(const char *path, const demo_report_t *r) {
    double w[64];
    double s[64];
    uint32_t n = r->run_count < 64 ? r->run_count : 64;
    for (uint32_t i = 0; i < n; i++) {
        w[i] = r->runs[i].workers;
        s[i] = r->runs[i].speedup;
    }
    bool sim = r->model && r->model->have_sim;
    char subtitle[256];
    snprintf(subtitle, sizeof subtitle,
             "%u mobiles + %u particles + %u hierarchy nodes, %u systems; median of %u frames; "
             "%u hardware threads",
             r->config->mobiles, r->config->particles, r->config->carriers * 5,
             r->model ? r->model->system_count : 0, r->frames, r->hardware_threads);
    wt_speedup_chart_t chart = {
        .title = "weft demo: frame speedup against workers",
        .subtitle = subtitle,
        .workers = w,
        .speedup = s,
        .count = n,
        .proj_workers = sim ? r->model->sim_workers : NULL,
        .proj_speedup = sim ? r->model->sim_speedup : NULL,
        .proj_count = sim ? DEMO_SIM_POINTS : 0,
        .proj_label = "SIMULATED 1-64 workers (tools/sim, not measured)",
        .hardware_threads = r->hardware_threads,
    };
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "weft_demo: cannot write %s\n", path);
        return -1;
    }
    int rc = wt_svg_speedup_chart(f, &chart);
    if (fclose(f) != 0 || rc != 0) {
        fprintf(stderr, "weft_demo: writing %s failed\n", path);
        return -1;
    }
    return 0;
}

int demo_write_timeline_svg(const char *trace_path, const char *svg_path, const char *title) {
    char err[256];
    size_t len = 0;
    char *text = wt_json_read_file(trace_path, &len, err, sizeof err);
    if (text == NULL) {
        fprintf(stderr, "weft_demo: %s\n", err);
        return -1;
    }
    wt_trace_t trace;
    int rc = wt_trace_load(text, len, &trace, err, sizeof err);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "weft_demo: %s: %s\n", trace_path, err);
        return -1;
    }
    FILE *f = fopen(svg_path, "w");
    if (f == NULL) {
        fprintf(stderr, "weft_demo: cannot write %s\n", svg_path);
        wt_trace_free(&trace);
        return -1;
    }
    rc = wt_svg_timeline(f, &trace, &(wt_timeline_desc_t){.title = title});
    if (fclose(f) != 0) {
        rc = -1;
    }
    wt_trace_free(&trace);
    if (rc != 0) {
        fprintf(stderr, "weft_demo: writing %s failed\n", svg_path);
    }
    return rc;
}

int demo_write_schedule(weft_world_t *world, const char *dir, bool *svg_written) {
    *svg_written = false;
    size_t n = 0, written = 0;
    char *dot = weft_schedule_dot(world, NULL, 0, &n) == WEFT_OK ? malloc(n + 1) : NULL;
    if (dot == NULL || weft_schedule_dot(world, dot, n + 1, &written) != WEFT_OK || written != n) {
        fprintf(stderr, "weft_demo: schedule DOT unavailable: %s\n", weft_last_error());
        free(dot);
        return -1;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/schedule.dot", dir);
    FILE *f = fopen(path, "w");
    int rc = (f != NULL && fwrite(dot, 1, n, f) == n) ? 0 : -1;
    if (f != NULL && fclose(f) != 0) {
        rc = -1;
    }
    free(dot);
    if (rc != 0) {
        fprintf(stderr, "weft_demo: cannot write %s\n", path);
        return -1;
    }
    /* Graphviz is optional: render only when `dot` is on the PATH. The directory is quoted for
     * the shell, so a name containing a quote is not rendered rather than misquoted. */
    if (strchr(dir, '\'') == NULL && system("command -v dot >/dev/null 2>&1") == 0) {
        char cmd[2300];
        snprintf(cmd, sizeof cmd, "dot -Tsvg '%s/schedule.dot' -o '%s/schedule.svg'", dir, dir);
        *svg_written = system(cmd) == 0;
        if (!*svg_written) {
            fprintf(stderr, "weft_demo: dot failed; schedule.svg not written\n");
        }
    }
    return 0;
}
