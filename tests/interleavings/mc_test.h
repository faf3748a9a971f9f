/* mc_test.h: how the interleaving suites run a scenario and state what they expect
 * (Criterion tests only). */
#ifndef WEFT_TESTS_MC_TEST_H
#define WEFT_TESTS_MC_TEST_H

#include <criterion/criterion.h>

#include "mc.h"

/* Explore `fn(arg)` with one stale read and a history of 3 (the scenarios' settings). */
static inline mc_result_t mc_test_run(const char *name, mc_fn_t fn, void *arg, int preemptions,
                                      const char *weaken, const char *plant) {
    mc_options_t o = {.name = name,
                      .preemptions = preemptions,
                      .stale_reads = 1,
                      .history = 3,
                      .weaken = weaken,
                      .plant = plant};
    return mc_explore(&o, fn, arg);
}

/* Every execution within the bounds ran and none failed. */
#define mc_assert_clean(r)                         \
    do {                                           \
        cr_assert(!(r).failed, "%s", (r).message); \
        cr_assert((r).exhaustive);                 \
    } while (0)

/* A planted variant: the plant took effect and the checker failed an execution. */
#define mc_assert_caught(r, what)                               \
    do {                                                        \
        cr_assert((r).weakened > 0, "the plant did not apply"); \
        cr_assert((r).failed, "the checker missed %s", what);   \
    } while (0)

#endif /* WEFT_TESTS_MC_TEST_H */
