/* internal_phase_cost.c: the measured-cost rule (src/sched/phase_cost.c) leaves the other
 * workers' wake-up latency out of a phase's dispatch cost D: samples taken right after the
 * workers slept (a game's frame after 16 ms of other work) do not keep a phase that splits
 * well on one thread, while a sample in which no other worker took part keeps its full D.
 * An inline phase is probed (run threaded to re-measure D) rarely when a probe would waste
 * much next to its work, as soon as before when its gain comes close to D. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "src/sched/phase_cost.h"

TestSuite(phase_cost_rule, .timeout = 30);

/* Fold `n` threaded samples of a phase with work W (ns), wall time and join delay, then ask
 * where the next sampled frame runs it. */
static bool inline_after(double work, uint64_t wall, uint64_t join, int n) {
    weft__phase_cost_t ph = {0};
    for (int i = 0; i < n; i++) {
        weft__cost_fold_phase(&ph, work, wall, join, 2);
    }
    bool sample = false;
    return weft__cost_run_inline(&ph, work, true, 2, false, &sample);
}

Test(phase_cost_rule, a_late_joining_worker_does_not_count_as_dispatch_cost) {
    /* 1 ms of work at 2 workers took 1 ms of wall time because the other worker woke
     * 0.9 ms in: without the wake-up it would have taken ~0.5 ms, so the phase stays threaded. */
    cr_assert(not(inline_after(1e6, 1000000, 900000, 4)));
}

Test(phase_cost_rule, a_phase_no_other_worker_joined_keeps_its_full_dispatch_cost) {
    /* Nobody joined: handing the phase out bought nothing, so it goes to the calling thread. */
    cr_assert(inline_after(1e6, 1000000, UINT64_MAX, 4));
}

Test(phase_cost_rule, dispatch_overhead_beyond_the_join_still_counts) {
    /* 10 us of work taking 60 us threaded with the other worker joining at once: the 55 us
     * of overhead keep this small phase on the calling thread. */
    cr_assert(inline_after(10000, 60000, 1000, 4));
}

/* An inline phase timed as a whole scales its systems' estimates: a faster phase lowers them
 * at once, a slower one is blended in (as a per-chunk sample would be); unknown systems and
 * systems without rows this frame keep theirs. */
Test(phase_cost_rule, a_phase_timed_as_a_whole_scales_its_systems_estimates) {
    weft__sys_cost_t a = {0}, idle = {0}, unknown = {0};
    weft__cost_begin_system(&a, 10);
    weft_atomic_store_relaxed(&a.sampled, 1000u);
    weft__cost_fold_system(&a); /* 100 ns per row */
    weft__cost_begin_system(&idle, 10);
    weft_atomic_store_relaxed(&idle.sampled, 1000u);
    weft__cost_fold_system(&idle);
    weft__cost_begin_system(&idle, 0);
    weft__cost_begin_system(&unknown, 10);
    weft__cost_scale_system(&a, 0.5);
    weft__cost_scale_system(&idle, 0.5);
    weft__cost_scale_system(&unknown, 0.5);
    cr_assert(eq(flt, a.ns_per_row, 50.0f));
    cr_assert(eq(flt, idle.ns_per_row, 100.0f));
    cr_assert(not(unknown.known));
    weft__cost_scale_system(&a, 3.0); /* 150 blended in with weight 1/4 */
    cr_assert(eq(flt, a.ns_per_row, 75.0f));
}

/* Sampled frames until an inline phase with trusted D (ns) and work W (ns) at 2 workers is
 * probed (run threaded to re-measure D), or limit + 1 if it is not within limit. */
static int frames_to_probe(float d, double work, int limit) {
    weft__phase_cost_t ph = {0};
    for (uint32_t i = 0; i < WEFT__COST_DISPATCH_SAMPLES; i++) {
        ph.dispatch[i] = d;
    }
    ph.nsamples = WEFT__COST_DISPATCH_SAMPLES;
    ph.threaded_runs = 5;
    for (int k = 1; k <= limit; k++) {
        bool sample = false;
        if (!weft__cost_run_inline(&ph, work, true, 2, true, &sample)) {
            return k;
        }
    }
    return limit + 1;
}

Test(phase_cost_rule, a_phase_far_too_cheap_to_share_is_probed_rarely) {
    /* 750 systems of no work: 20 us inline, 200 us handed out. A probe wastes ~190 us; spaced
     * so that stays under 1/64 of the inline work between probes: 64 x 190 / (20 x 16) = 38
     * sampled frames (608 frames), not every 8th sampled frame. */
    int k = frames_to_probe(200000.0f, 20000.0, 100);
    cr_assert(ge(int, k, 38), "probed after %d sampled frames", k);
    cr_assert(le(int, k, 39), "probed after %d sampled frames", k);
    /* no rows at all: the longest spacing, 64 sampled frames */
    cr_assert(eq(int, frames_to_probe(200000.0f, 0.0, 100), 64));
}

Test(phase_cost_rule, a_phase_close_to_paying_is_probed_as_soon_as_before) {
    /* gain 0.45 D: every ceil(D / gain) = 3rd sampled frame (the spacing bound, 64 x 0.55 D /
     * (0.9 D x 16) = 2.4, is below it); gain 0.75 D: every 2nd */
    cr_assert(eq(int, frames_to_probe(100000.0f, 90000.0, 100), 3));
    cr_assert(eq(int, frames_to_probe(100000.0f, 150000.0, 100), 2));
}
