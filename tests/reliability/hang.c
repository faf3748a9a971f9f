/* hang.c: a program that hangs on purpose, for tools/check_watchdog.sh.
 *
 * Four weft workers each run a job that blocks forever reading a pipe nobody writes to, and
 * the main thread waits on their counter: a genuine hang with several threads inside weft.
 * The watchdog (tests/support/watchdog.h), armed for argv[1] seconds (default 2), must print
 * every thread's stack and abort. "criterion" as argv[1] instead is handled by hang_criterion.c. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "watchdog.h"
#include "weft/jobs.h"

static int never[2]; /* a pipe whose write end is never written */

static void block_forever(void *arg, const weft_job_ctx_t *ctx) {
    (void)arg;
    (void)ctx;
    char c;
    while (read(never[0], &c, 1) != 0) {
    }
}

int main(int argc, char **argv) {
    unsigned seconds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 2u;
    if (pipe(never) != 0) {
        return 2;
    }
    weft_jobs_t *jobs = NULL;
    weft_jobs_desc_t d = {.worker_count = 4};
    if (weft_jobs_create(&d, &jobs) != WEFT_OK) {
        fprintf(stderr, "hang: weft_jobs_create: %s\n", weft_last_error());
        return 2;
    }
    weft_job_desc_t jd[4];
    for (int i = 0; i < 4; i++) {
        jd[i] = (weft_job_desc_t){.fn = block_forever, .name = "block_forever"};
    }
    static weft_counter_t done;
    if (weft_job_submit(jobs, jd, 4, &done) != WEFT_OK) {
        return 2;
    }
    wt_watchdog_arm(seconds, "hang");
    fprintf(stderr, "hang: %u workers blocked; waiting for the watchdog (%u s)\n",
            weft_jobs_worker_count(jobs), seconds);
    (void)weft_counter_wait(jobs, &done); /* never returns */
    fprintf(stderr, "hang: the wait returned: the helper is broken\n");
    return 3;
}
