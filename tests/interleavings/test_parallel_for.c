/* test_parallel_for.c: weft_parallel_for's claims and helper reclaim (jobs/parallel_for.c)
 * under the interleaving checker, on a real two-worker job system.
 *
 * Scenario: worker 0 runs two loops back to back, of 4 and 2 one-item ranges; worker 1 is
 * idle. Each loop offers its next share on worker 0's offer line (2 of the 3 ranges below
 * the caller's first, then 1 of 1), so worker 1 may take the offer while worker 0 takes it
 * back after its first batch, take it too late (the offer closed, or the first loop done and
 * the second offered), or join through the loop board or a helper job instead. After a
 * taken offer of the 4-range loop, both participants count off a batch and claim the next
 * from the cursor. Each range reads an input the caller wrote before the loop and writes its
 * output; every range must run exactly once and the caller must see every output when the
 * call returns. */
#include "jobs_scn.h"
#include "mc_test.h"

#define L1 4
#define L2 2

typedef struct pf_scn {
    weft_jobs_t *jobs;
    int loop;
    uint32_t in[L1], out[2][L1];
    uint32_t runs[2][L1][2]; /* per loop, item and worker: how often it ran */
} pf_scn_t;

static pf_scn_t ps;

static void body(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    pf_scn_t *s = ctx;
    int loop = s->loop; /* written by the caller before the loop */
    mc_check(worker < 2u, "worker %u", worker);
    for (uint64_t i = begin; i < end; ++i) {
        mc_plain_read(&s->in[i], "loop input");
        s->out[loop][i] = s->in[i] * 10u + (uint32_t)loop;
        mc_plain_write(&s->out[loop][i], "loop output");
        s->runs[loop][i][worker]++;
    }
}

static void pf_main(void *arg) {
    (void)arg;
    pf_scn_t *s = &ps;
    memset(s->runs, 0, sizeof s->runs);
    s->jobs = scn_jobs_create(2, 200); /* worker 1 spins, polling the board */
    for (int loop = 0; loop < 2; ++loop) {
        int n = loop == 0 ? L1 : L2;
        s->loop = loop;
        for (int i = 0; i < n; ++i) {
            s->in[i] = (uint32_t)(i + 1 + loop);
            mc_plain_write(&s->in[i], "loop input");
        }
        mc_check(weft_parallel_for(s->jobs, (uint64_t)n, 1, body, s) == WEFT_OK, "pfor");
        for (int i = 0; i < n; ++i) {
            mc_plain_read(&s->out[loop][i], "loop output");
            mc_check(s->out[loop][i] == s->in[i] * 10u + (uint32_t)loop, "output %d", i);
            uint32_t r = s->runs[loop][i][0] + s->runs[loop][i][1];
            mc_check(r == 1u, "loop %d item %d ran %u times", loop, i, r);
        }
    }
    weft_jobs_destroy(s->jobs);
}

/* The planted variants run at pre-emption bound 1, where each is caught; the clean scenario
 * at 2 (13,721 executions). */
static mc_result_t run(const char *name, const char *weaken, const char *plant) {
    return mc_test_run(name, pf_main, NULL, 1, weaken, plant);
}

Test(parallel_for, claims_and_late_helpers_run_each_range_once) {
    mc_result_t r = mc_test_run("parallel_for: two loops, offer, board joiner and late helper",
                                pf_main, NULL, 2, NULL, NULL);
    mc_assert_clean(r);
}

/* Planted: every acquire of a claim made relaxed (the first load or RMW of the cursor and
 * the CAS that takes the batch): a participant no longer acquires the caller's release of
 * the loop, so it runs ranges without seeing their inputs. */
Test(parallel_for, planted_relaxed_claim_is_caught) {
    mc_result_t r = run("parallel_for planted: claim relaxed",
                        "claim:load_acquire|claim:fetch_add_acq_rel|claim:cas_weak_acq_rel", NULL);
    mc_assert_caught(r, "the weakened claim");
}

/* Planted: the worker's CAS that takes an offer made relaxed. The offer line is the taker's
 * only contact with the loop before it runs the offered share, so without the acquire it
 * runs ranges without seeing their inputs (or the offer's fields). */
Test(parallel_for, planted_relaxed_offer_take_is_caught) {
    mc_result_t r = run("parallel_for planted: offer taken relaxed",
                        "weft__pfor_take_offer:cas_strong_acq_rel", NULL);
    mc_assert_caught(r, "the weakened take");
}

/* Planted: the owner's store that opens its offer made relaxed: the taker's acquire then
 * pairs with nothing, the same missing edge seen from the publishing side. */
Test(parallel_for, planted_relaxed_offer_publication_is_caught) {
    mc_result_t r =
        run("parallel_for planted: offer published relaxed", "post_offer:store_release", NULL);
    mc_assert_caught(r, "the weakened publication");
}

/* Planted: the count-down of the loop's `left` counter made relaxed. It is a participant's
 * last touch of the loop, and the caller's wait acquires it: relaxed, a helper's or board
 * joiner's outputs are no longer published to the caller when the call returns. */
Test(parallel_for, planted_relaxed_count_down_of_the_loop_is_caught) {
    mc_result_t r = run("parallel_for planted: loop count-down relaxed",
                        "weft__counter_finish_n:fetch_sub_acq_rel", NULL);
    mc_assert_caught(r, "the weakened count-down");
}

/* Planted: a participant counts its batch off before running it (the count-off and the next
 * claim share a line, so merging them into one step before the run is the tempting mistake).
 * The caller can then see zero and return while the batch is still running. */
Test(parallel_for, planted_count_off_before_run_is_caught) {
    mc_result_t r =
        run("parallel_for planted: count-off before run", NULL, "pfor_count_off_before_run");
    mc_assert_caught(r, "the early count-off");
}
