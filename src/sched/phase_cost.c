/* phase_cost.c: the measured-cost rule that decides where a phase runs (see phase_cost.h). */
#include "phase_cost.h"

/* Sample one frame in this many: two clock reads per chunk cost ~50 ns, which a frame of
 * 64 one-row systems (~1.5 µs) would feel every frame, but not one frame in 16. */
#define SAMPLE_EVERY 16u
/* Re-measure the dispatch cost of an inline phase at least every this many sampled frames
 * (one frame in 128), and sooner, every ceil(D / gain) sampled frames, when the gain threads
 * would bring comes close to D: a phase of real work pinned to one thread by samples taken
 * while the other cores were busy recovers within a few sampled frames, while a phase far
 * too small to share pays one threaded run per 128 frames. */
#define PROBE_EVERY 8u

/* A probe costs about D - gain beyond running the phase inline (when D is right: the usual
 * case), and the frame after it pays the workers' start-of-frame wake. Probes are spaced so
 * that D - gain stays under 1/PROBE_SHARE of the phase's inline work between two probes:
 * at least PROBE_SHARE x (D - gain) / (W x SAMPLE_EVERY) sampled frames apart. A phase far too
 * small to share (750 systems of no work on a 2-vCPU VM: ~20 us inline, ~200 us handed out)
 * probed every 128 frames spent ~1.4 us, 7%, of its mean frame on probes; spaced, it is
 * probed every 608 frames. One whose gain comes close to D is probed as soon as before. At
 * most PROBE_MAX sampled frames apart (1024 frames), so D still follows the machine. */
#define PROBE_SHARE 64.0
#define PROBE_MAX 64u

/* Dispatch samples needed before a phase may run inline: one sample taken while the other
 * workers were pre-empted would otherwise pin a big phase to one thread until a probe. */
#define TRUST_AFTER 2u

static float blend(float old, double sample) { return (float)(old + (sample - old) * 0.25); }

bool weft__cost_sample_frame(uint64_t frame) { return frame % SAMPLE_EVERY == 0; }

void weft__cost_begin_system(weft__sys_cost_t *c, uint32_t rows) {
    rows = rows == UINT32_MAX ? 1u : rows; /* no terms: one call of unknown size */
    /* stores only a changed value: the line stays clean in the cache of the worker that
     * ran the system (system.h) */
    if (c->rows != rows) {
        c->rows = rows;
    }
    if (weft_atomic_load_relaxed(&c->sampled) != 0u) {
        weft_atomic_store_relaxed(&c->sampled, 0u);
    }
}

void weft__cost_estimate(const weft__sys_cost_t *c, double *work, bool *all_known) {
    if (c->rows == 0) {
        return; /* nothing to do this frame */
    }
    if (c->known) {
        *work += (double)c->rows * c->ns_per_row;
    } else {
        *all_known = false;
    }
}

double weft__cost_dispatch(const weft__phase_cost_t *ph) {
    if (ph->nsamples < TRUST_AFTER) {
        return 0;
    }
    uint32_t kept =
        ph->nsamples < WEFT__COST_DISPATCH_SAMPLES ? ph->nsamples : WEFT__COST_DISPATCH_SAMPLES;
    float d = ph->dispatch[0];
    for (uint32_t i = 1; i < kept; i++) {
        d = ph->dispatch[i] < d ? ph->dispatch[i] : d;
    }
    return d;
}

bool weft__cost_run_inline(weft__phase_cost_t *ph, double work, bool all_known, uint32_t workers,
                           bool sample_frame, bool *sample) {
    if (!all_known || ph->nsamples < TRUST_AFTER) {
        *sample = true;
        ph->threaded_last = true;
        return false;
    }
    double d = weft__cost_dispatch(ph);
    double gain = work * (double)(workers - 1u) / (double)workers; /* what threads would save */
    bool run_inline = gain <= d;
    if (run_inline && sample_frame) {
        /* Probe (run threaded once, to measure D again) sooner the closer the gain comes to D:
         * there a wrong D costs the most and a probe the least. */
        double every = gain > 0 ? (double)d / gain : (double)PROBE_EVERY;
        every = every < PROBE_EVERY ? every : PROBE_EVERY;
        double spaced = work > 0 ? PROBE_SHARE * (d - gain) / (work * SAMPLE_EVERY) : PROBE_MAX;
        every = every > spaced ? every : spaced;
        if (++ph->inline_runs >= (every < PROBE_MAX ? every : PROBE_MAX)) {
            ph->inline_runs = 0;
            run_inline = false;
        }
    }
    *sample = sample_frame;
    ph->threaded_last = !run_inline;
    return run_inline;
}

/* Interference (a cold first frame, pre-emption, a shared core) only ever makes a sample
 * slower, so a lower sample is taken at once and a higher one blended in. */
static void take_sample(weft__sys_cost_t *c, double per_row) {
    c->ns_per_row =
        !c->known || per_row < c->ns_per_row ? (float)per_row : blend(c->ns_per_row, per_row);
    c->known = true;
}

void weft__cost_scale_system(weft__sys_cost_t *c, double factor) {
    if (c->rows != 0 && c->known) {
        take_sample(c, c->ns_per_row * factor);
    }
}

double weft__cost_fold_system(weft__sys_cost_t *c) {
    if (c->rows == 0) {
        return 0;
    }
    uint64_t ns = weft_atomic_load_relaxed(&c->sampled);
    take_sample(c, (double)ns / c->rows);
    return (double)ns;
}

void weft__cost_fold_phase(weft__phase_cost_t *ph, double work_ns, uint64_t wall_ns,
                           uint64_t join_ns, uint32_t workers) {
    ph->inline_runs = 0;
    if (ph->threaded_runs++ == 0) {
        return; /* the first threaded run pays cold caches, page faults, sleeping workers */
    }
    double d = (double)wall_ns - work_ns / workers;
    if (join_ns != UINT64_MAX) { /* the others' wake-up latency (phase_cost.h) */
        d -= (double)join_ns * (double)(workers - 1u) / (double)workers;
    }
    ph->dispatch[ph->nsamples++ % WEFT__COST_DISPATCH_SAMPLES] = d > 0 ? (float)d : 0.0f;
}
