/* internal_cmd_way.c: the measured choice between the serial and the split way of an apply
 * step (weft__cmd_way_choose / weft__cmd_way_fold, src/sched/command_place.c) keeps the
 * faster way through one slow sample (a thread descheduled mid-apply on a shared machine),
 * follows a lasting change within a few samples, and takes a lower sample at once. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "src/sched/command.h"

TestSuite(cmd_way_choice, .timeout = 30);

/* A way whose split apply costs 1000 ns per unit and serial one 1500, both measured. */
static weft__cmd_way_t measured(void) {
    weft__cmd_way_t way = {0};
    cr_assert(weft__cmd_way_choose(&way)); /* nothing known: the split way first */
    weft__cmd_way_fold(&way, true, 1000, 1);
    cr_assert(not(weft__cmd_way_choose(&way))); /* then the serial one */
    weft__cmd_way_fold(&way, false, 1500, 1);
    return way;
}

/* Choices in a row that take the split way, up to `n`. */
static int split_run(weft__cmd_way_t *way, int n) {
    int k = 0;
    while (k < n && weft__cmd_way_choose(way)) {
        k++;
    }
    return k;
}

Test(cmd_way_choice, one_slow_sample_does_not_flip_the_choice) {
    weft__cmd_way_t way = measured();
    cr_assert(weft__cmd_way_choose(&way));
    /* the demo's placed apply with its lane's worker preempted: 4x the usual */
    weft__cmd_way_fold(&way, true, 4000, 1);
    cr_assert(le(flt, way.split_ns, 1250.0f));
    /* the split way stays the choice until the next probe of the serial one */
    cr_assert(eq(int, split_run(&way, WEFT__CMD_PLACE_PROBE_EVERY),
                 (int)WEFT__CMD_PLACE_PROBE_EVERY - 2));
}

Test(cmd_way_choice, a_lasting_slowdown_flips_it_within_a_few_samples) {
    weft__cmd_way_t way = measured();
    int samples = 0;
    while (weft__cmd_way_choose(&way) && samples < 16) {
        weft__cmd_way_fold(&way, true, 4000, 1); /* every split run is now 4x slower */
        samples++;
    }
    cr_assert(ge(int, samples, 2));
    cr_assert(le(int, samples, 3));
}

Test(cmd_way_choice, a_lower_sample_replaces_the_estimate) {
    weft__cmd_way_t way = measured();
    weft__cmd_way_fold(&way, false, 600, 1);
    cr_assert(eq(flt, way.serial_ns, 600.0f));
    cr_assert(not(weft__cmd_way_choose(&way)));
}
