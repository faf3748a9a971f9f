/* internal_phase_cost.c: the measured-cost rule (src/sched/phase_cost.c) leaves the other
 * workers' wake-up latency out of a phase's dispatch cost D: samples taken right after the
 * workers slept (a game's frame after 16 ms of other work) do not keep a phase that splits
 * well on one thread, while a sample in which no other worker took part keeps its full D. */
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
