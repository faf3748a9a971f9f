/* internal_fixture.h: helpers of the scheduler's internal test suites (they read and set the
 * scheduler's private state, src/sched/system.h). */
#ifndef WEFT_TESTS_SCHED_INTERNAL_FIXTURE_H
#define WEFT_TESTS_SCHED_INTERNAL_FIXTURE_H

#include "sched_fixture.h"
#include "src/sched/system.h"

/* Hand every phase of w out on the next frame: its dispatch cost D set to 0 (every kept
 * sample), so the rule hands it out whatever this machine's timings. */
static inline void zero_dispatch(weft_world_t *w) {
    struct weft_sched *s = weft__sched_peek(w);
    for (uint32_t ph = 0; s && s->phase_cost && ph < s->graph.nphases; ph++) {
        weft__phase_cost_t *pc = &s->phase_cost[ph];
        for (uint32_t i = 0; i < WEFT__COST_DISPATCH_SAMPLES; i++) {
            pc->dispatch[i] = 0.0f;
        }
        pc->nsamples = pc->nsamples > 4u ? pc->nsamples : 4u;
    }
}

#endif /* WEFT_TESTS_SCHED_INTERNAL_FIXTURE_H */
