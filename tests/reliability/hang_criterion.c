/* hang_criterion.c: a Criterion test that hangs on purpose (tools/check_watchdog.sh). Its
 * `.timeout` makes Criterion send SIGPROF; watchdog.c (linked in) must print every thread's
 * stack before the test dies, and Criterion must still report the timeout. Never run by ctest. */
#include <criterion/criterion.h>
#include <unistd.h>

#include "weft/jobs.h"

static int never[2];

static void block_forever(void *arg, const weft_job_ctx_t *ctx) {
    (void)arg;
    (void)ctx;
    char c;
    while (read(never[0], &c, 1) != 0) {
    }
}

Test(watchdog_demo, a_deadlocked_test_times_out_with_stacks, .timeout = 2) {
    cr_assert(pipe(never) == 0);
    weft_jobs_t *jobs = NULL;
    cr_assert(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 3}, &jobs) == WEFT_OK);
    weft_job_desc_t jd[3];
    for (int i = 0; i < 3; i++) {
        jd[i] = (weft_job_desc_t){.fn = block_forever, .name = "block_forever"};
    }
    static weft_counter_t done;
    cr_assert(weft_job_submit(jobs, jd, 3, &done) == WEFT_OK);
    (void)weft_counter_wait(jobs, &done);
}
