/* tests/tools/test_sim.c: the schedule simulator (tools/sim) — hand-made frames whose answer
 * is known exactly (a chain, a fork, a flat fork-join with claim and notice costs, a job graph
 * with job, steal, wake and notice costs, an inline phase), malformed frames refused, and a
 * frame recorded from a real world's traces read back with its phases, modes, edges and
 * chunks. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim_record.h"
#include "weft.h"

TestSuite(sim, .timeout = 120);

/* A frame of one phase over `n` systems. */
static wt_sim_frame_t one_phase(const wt_sim_system_t *sys, uint32_t n, wt_sim_phase_t *ph,
                                wt_sim_mode_t mode) {
    *ph = (wt_sim_phase_t){.first = 0, .end = n, .mode = mode};
    return (wt_sim_frame_t){.systems = sys, .nsystems = n, .phases = ph, .nphases = 1};
}

static double sim(const wt_sim_frame_t *f, uint32_t workers) {
    wt_sim_result_t r;
    cr_assert(eq(int, wt_sim_run(f, workers, &r), 0), "%u workers", workers);
    return r.frame_ns;
}

/* A chain A (10) -> B (20) -> C (30), one chunk each. */
static void chain3(wt_sim_system_t sys[3]) {
    static const double d[3] = {10, 20, 30};
    static const uint32_t p1[] = {0}, p2[] = {1};
    sys[0] = (wt_sim_system_t){.nchunks = 1, .chunk_ns = &d[0]};
    sys[1] = (wt_sim_system_t){.nchunks = 1, .chunk_ns = &d[1], .pred = p1, .npred = 1};
    sys[2] = (wt_sim_system_t){.nchunks = 1, .chunk_ns = &d[2], .pred = p2, .npred = 1};
}

Test(sim, a_chain_takes_its_sum_at_every_worker_count) {
    wt_sim_system_t sys[3];
    chain3(sys);
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 3, &ph, WT_SIM_GRAPH);
    for (uint32_t w = 1; w <= 64; w *= 2) {
        cr_expect(eq(dbl, sim(&f, w), 60.0), "%u workers", w);
    }
}

Test(sim, a_fork_spreads_over_the_workers_it_has) {
    static const double a = 10, b = 20;
    static const uint32_t root[] = {0};
    wt_sim_system_t sys[4] = {{.nchunks = 1, .chunk_ns = &a}};
    for (int i = 1; i < 4; i++) {
        sys[i] = (wt_sim_system_t){.nchunks = 1, .chunk_ns = &b, .pred = root, .npred = 1};
    }
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 4, &ph, WT_SIM_GRAPH);
    cr_expect(eq(dbl, sim(&f, 1), 70.0));
    cr_expect(eq(dbl, sim(&f, 2), 50.0)); /* 10, then 2 + 1 of the three */
    cr_expect(eq(dbl, sim(&f, 3), 30.0));
    cr_expect(eq(dbl, sim(&f, 8), 30.0));
}

/* Flat: 4 chunks of 10, claim 1, the second worker notices after 2 (it spins: it was woken
 * for the frame's first phase long ago... within the spin window), apply 5, frame 3.
 * Worker 0: claims at 0 (runs 1-11), at 11 (12-22); worker 1: at 2 (3-13), at 13 (14-24). */
Test(sim, a_flat_phase_claims_chunk_by_chunk_with_its_costs) {
    static const double d[4] = {10, 10, 10, 10};
    wt_sim_system_t sys[1] = {{.nchunks = 4, .chunk_ns = d}};
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 1, &ph, WT_SIM_FLAT);
    ph.apply_ns = 5;
    f.costs = (wt_sim_costs_t){
        .claim_ns = 1, .notice_ns = 2, .wake_ns = 2, .frame_ns = 3, .spin_ns = 1e9};
    cr_expect(eq(dbl, sim(&f, 1), 48.0)); /* fused path: no claims */
    cr_expect(eq(dbl, sim(&f, 2), 32.0));
    wt_sim_result_t r;
    cr_assert(eq(int, wt_sim_run(&f, 2, &r), 0));
    cr_expect(eq(dbl, r.work_ns, 40.0));
    cr_expect(eq(dbl, r.apply_ns, 5.0));
    cr_expect(eq(u32, r.jobs, 4));
}

/* Graph: A (10) -> B (2 chunks of 10); job 1, steal 2, notice 3, wake 7, spin 100.
 * Worker 1 sleeps before the frame: woken at 0 it arrives at 7 and finds nothing (worker 0
 * took A at 0: ends 11). A's end publishes B's chunks on worker 0's deque; worker 1 spins
 * (11 - 7 < 100) and arrives at 14, steals the oldest chunk: 14 + 1 + 2 + 10 = 27; worker 0
 * pops the newest at 11: ends 22. Worker 0 notices the last counter at 27 + 3 = 30. */
Test(sim, a_job_graph_pays_job_steal_wake_and_notice_costs_where_the_runtime_does) {
    static const double a = 10, b[2] = {10, 10};
    static const uint32_t root[] = {0};
    wt_sim_system_t sys[2] = {{.nchunks = 1, .chunk_ns = &a},
                              {.nchunks = 2, .chunk_ns = b, .pred = root, .npred = 1}};
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 2, &ph, WT_SIM_GRAPH);
    f.costs =
        (wt_sim_costs_t){.job_ns = 1, .steal_ns = 2, .notice_ns = 3, .wake_ns = 7, .spin_ns = 100};
    cr_expect(eq(dbl, sim(&f, 1), 30.0)); /* fused: no job costs */
    wt_sim_result_t r;
    cr_assert(eq(int, wt_sim_run(&f, 2, &r), 0));
    cr_expect(eq(dbl, r.frame_ns, 30.0));
    cr_expect(eq(u32, r.steals, 1));
    cr_expect(eq(u32, r.jobs, 3));
    /* asleep for longer than the spin window, worker 1 pays the wake again */
    f.costs.spin_ns = 2;
    cr_expect(eq(dbl, sim(&f, 2), 11.0 + 7.0 + 3.0 + 10.0 + 3.0));
}

/* Ready-list costs for the tests below: job 1, steal 2, notice 3, wake 7, spin 100, claim 1,
 * hand-out 4 (a set of work W is handed out when W / 2 > 4 at 2 workers). */
static const wt_sim_costs_t ready_costs = {.job_ns = 1,
                                           .steal_ns = 2,
                                           .notice_ns = 3,
                                           .wake_ns = 7,
                                           .spin_ns = 100,
                                           .claim_ns = 1,
                                           .handout_ns = 4};

/* Ready: a chain A (10) -> B (20) -> C (30) runs on worker 0 after one claim. The roots' 10
 * repay the hand-out, so worker 1 is woken (arrives at 7, takes the drain job at 10) but
 * finds nothing and leaves; B and C follow A on worker 0 with no claim: 1 + 60. */
Test(sim, a_ready_chain_runs_on_one_worker_after_one_claim) {
    wt_sim_system_t sys[3];
    chain3(sys);
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 3, &ph, WT_SIM_READY);
    f.costs = ready_costs;
    cr_expect(eq(dbl, sim(&f, 1), 60.0)); /* fused: no claims */
    cr_expect(eq(dbl, sim(&f, 2), 61.0));
    cr_expect(eq(dbl, sim(&f, 8), 61.0));
}

/* Ready: A (10) -> B (100), C (100). Worker 1, woken for the roots, leaves empty-handed at
 * 10. A ends at 11: B runs next on worker 0 (11-111); C is published, its 100 repay the
 * hand-out, worker 1 (idle 1 ns, within the spin window) notices at 14, takes the drain job
 * (job + steal) at 17, claims C: 18-118. Worker 0 finds nothing at 111 and waits; it notices
 * the last drain job end at 118 + 3. */
Test(sim, a_ready_fork_hands_the_released_set_to_a_spinning_worker) {
    static const double a = 10, b = 100;
    static const uint32_t root[] = {0};
    wt_sim_system_t sys[3] = {{.nchunks = 1, .chunk_ns = &a},
                              {.nchunks = 1, .chunk_ns = &b, .pred = root, .npred = 1},
                              {.nchunks = 1, .chunk_ns = &b, .pred = root, .npred = 1}};
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 3, &ph, WT_SIM_READY);
    f.costs = ready_costs;
    wt_sim_result_t r;
    cr_assert(eq(int, wt_sim_run(&f, 2, &r), 0));
    cr_expect(eq(dbl, r.frame_ns, 121.0));
    cr_expect(eq(u32, r.jobs, 3));
    cr_expect(eq(u32, r.steals, 2)); /* two drain jobs taken from worker 0's deque */
    /* a hand-out cost above every set's half keeps the whole phase on worker 0 */
    f.costs.handout_ns = 50;
    cr_expect(eq(dbl, sim(&f, 2), 1.0 + 210.0 + 1.0)); /* two claims */
}

/* Ready: roots R1 (10), R2 (10); R2 -> S (2 chunks of 50). Worker 0 claims R1 (1-11), worker 1
 * (woken: 7, drain job: 10) claims R2 (11-21). Worker 0 finds nothing at 11 and waits. R2's
 * end runs S's chunk 0 on worker 1 (21-71) and publishes chunk 1; no worker is idle, so the
 * waiting worker 0 takes the drain job (notice + job + steal: 27) and claims it: 28-78. */
Test(sim, a_waiting_caller_runs_a_drain_job_no_worker_took) {
    static const double r = 10, s2[2] = {50, 50};
    static const uint32_t after_r2[] = {1};
    wt_sim_system_t sys[3] = {{.nchunks = 1, .chunk_ns = &r},
                              {.nchunks = 1, .chunk_ns = &r},
                              {.nchunks = 2, .chunk_ns = s2, .pred = after_r2, .npred = 1}};
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 3, &ph, WT_SIM_READY);
    f.costs = ready_costs;
    cr_expect(eq(dbl, sim(&f, 2), 78.0));
    cr_expect(eq(dbl, sim(&f, 1), 120.0));
}

/* Ready: A (10) -> B (8 chunks of 10). A publisher hands out k drain jobs at once, the
 * largest k with k x handout < W x (P - 1) / P, at most the units published and the P -
 * active free places (src/sched/ready.c, recruit). The roots' 10 (1 unit) get one job:
 * worker 1 (asleep) arrives at 7, takes it at 10 and leaves empty-handed. Worker 0 runs A
 * (1-11), then B's chunk 0 (11-21) and publishes 7 chunks of 70.
 *  - 2 workers: one job (as the old one-per-set rule): worker 1 (spinning: 14, job 17) and
 *    worker 0 claim one chunk at a time: 18-28, 29-39, 40-50, 51-61 and 22-32, 33-43, 44-54;
 *    worker 0 notices the last drain end at 61 + 3 = 64.
 *  - 4 workers: k = 3 (P - active): worker 1 at 17 runs 18-28, 29-39; workers 2, 3 (woken:
 *    18, jobs 21) and worker 0 run 22-32, then 33-43 (workers 0, 2); 43 + 3 = 46.
 *  - 8 and 16 workers: k = 7 (the units): worker 1 runs 18-28, workers 0, 2-6 run 22-32,
 *    worker 7 finds nothing; 32 + 3 = 35. Drain jobs (steals): 1 + 7 (not 1 + 15 at 16).
 *  - hand-out 20 at 16 workers: the roots repay none (10 x 15/16 < 20) and B's 70 three
 *    (3 x 20 < 65.6 < 4 x 20): workers 1-3 (woken: 18, jobs 21) and worker 0 run 22-32 and
 *    33-43 (workers 0-2); 43 + 3 = 46, 3 drain jobs.
 * One job per set, whatever the worker count, made this 64 at every count. */
Test(sim, a_released_set_gets_as_many_participants_as_its_work_and_units_repay) {
    static const double a = 10, b[8] = {10, 10, 10, 10, 10, 10, 10, 10};
    static const uint32_t root[] = {0};
    wt_sim_system_t sys[2] = {{.nchunks = 1, .chunk_ns = &a},
                              {.nchunks = 8, .chunk_ns = b, .pred = root, .npred = 1}};
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 2, &ph, WT_SIM_READY);
    f.costs = ready_costs;
    static const uint32_t workers[] = {2, 4, 8, 16};
    static const double frame[] = {64, 46, 35, 35};
    static const uint32_t drains[] = {2, 4, 8, 8};
    cr_expect(eq(dbl, sim(&f, 1), 90.0));
    for (uint32_t i = 0; i < 4; i++) {
        wt_sim_result_t r;
        cr_assert(eq(int, wt_sim_run(&f, workers[i], &r), 0));
        cr_expect(eq(dbl, r.frame_ns, frame[i]), "%u workers", workers[i]);
        cr_expect(eq(u32, r.steals, drains[i]), "%u workers", workers[i]);
    }
    f.costs.handout_ns = 20;
    wt_sim_result_t r;
    cr_assert(eq(int, wt_sim_run(&f, 16, &r), 0));
    cr_expect(eq(dbl, r.frame_ns, 46.0));
    cr_expect(eq(u32, r.steals, 3));
}

/* Ready, no costs: A (10) -> B (4 chunks of 100), C (36 chunks of 1). At 2 workers A's end
 * runs B's chunk 0 on worker 0 (10-110) and publishes B's 3 others and C's 36. A claim may
 * take a quarter of what is published (9), but at most ceil(4 / 2) = 2 of B's chunks in a
 * row (the runtime's weft__ready_take): worker 1 runs B1, B2 (10-210), worker 0 B3 then C
 * (110-218) and both share the rest of C, ending at 228. Taking the 9 (B1-B3 and C0-C5 on
 * worker 1, 10-316) would leave B's chunks in a row on one worker: 316. */
Test(sim, a_claim_takes_at_most_a_1_pth_share_of_one_systems_units_in_a_row) {
    static const double a = 10, b[4] = {100, 100, 100, 100};
    static double c[36];
    for (int i = 0; i < 36; i++) {
        c[i] = 1;
    }
    static const uint32_t root[] = {0};
    wt_sim_system_t sys[3] = {{.nchunks = 1, .chunk_ns = &a},
                              {.nchunks = 4, .chunk_ns = b, .pred = root, .npred = 1},
                              {.nchunks = 36, .chunk_ns = c, .pred = root, .npred = 1}};
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 3, &ph, WT_SIM_READY);
    cr_expect(eq(dbl, sim(&f, 1), 446.0));
    cr_expect(eq(dbl, sim(&f, 2), 228.0));
}

/* Bound: phase 0 (ready) A (10) -> B (5, 7, 3) and C (12) -> D (4): longest path
 * 10 + max(7, 12) + 4 = 26 (B's chunks at once; in a row they would make 29); phase 1 (inline) E (1, 2), F (3): its whole work, 6. Serial: the
 * applies 6 + 1 and frame_ns 2. No worker count simulates below path + serial. */
Test(sim, the_bound_is_the_longest_path_of_longest_chunks_plus_the_serial_part) {
    static const double a = 10, b[3] = {5, 7, 3}, c = 12, d = 4, e[2] = {1, 2}, f3 = 3;
    static const uint32_t after_a[] = {0}, after_bc[] = {1, 2};
    wt_sim_system_t sys[6] = {
        {.nchunks = 1, .chunk_ns = &a},
        {.nchunks = 3, .chunk_ns = b, .pred = after_a, .npred = 1},
        {.nchunks = 1, .chunk_ns = &c, .pred = after_a, .npred = 1},
        {.nchunks = 1, .chunk_ns = &d, .pred = after_bc, .npred = 2},
        {.phase = 1, .nchunks = 2, .chunk_ns = e},
        {.phase = 1, .nchunks = 1, .chunk_ns = &f3},
    };
    wt_sim_phase_t ph[2] = {{.first = 0, .end = 4, .apply_ns = 6, .mode = WT_SIM_READY},
                            {.first = 4, .end = 6, .apply_ns = 1, .mode = WT_SIM_INLINE}};
    wt_sim_frame_t f = {.systems = sys, .nsystems = 6, .phases = ph, .nphases = 2};
    f.costs = ready_costs;
    f.costs.frame_ns = 2;
    wt_sim_bound_t bd;
    cr_assert(eq(int, wt_sim_bound(&f, &bd), 0));
    cr_expect(eq(dbl, bd.path_ns, 32.0));
    cr_expect(eq(dbl, bd.serial_ns, 9.0));
    for (uint32_t w = 1; w <= 64; w *= 2) {
        cr_expect(ge(dbl, sim(&f, w), 41.0), "%u workers", w);
    }
    /* a phase range out of order is refused */
    ph[1].first = 5;
    cr_expect(eq(int, wt_sim_bound(&f, &bd), -1));
}

Test(sim, an_inline_phase_runs_on_the_calling_thread_whatever_the_worker_count) {
    static const double d[3] = {5, 6, 7};
    wt_sim_system_t sys[3] = {{.nchunks = 3, .chunk_ns = d}};
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 1, &ph, WT_SIM_INLINE);
    cr_expect(eq(dbl, sim(&f, 16), 18.0));
}

Test(sim, phases_run_one_after_the_other_with_their_applies) {
    static const double d[2] = {10, 10};
    wt_sim_system_t sys[2] = {{.phase = 0, .nchunks = 2, .chunk_ns = d},
                              {.phase = 1, .nchunks = 2, .chunk_ns = d}};
    wt_sim_phase_t ph[2] = {{.first = 0, .end = 1, .apply_ns = 4, .mode = WT_SIM_FLAT},
                            {.first = 1, .end = 2, .apply_ns = 6, .mode = WT_SIM_FLAT}};
    wt_sim_frame_t f = {.systems = sys, .nsystems = 2, .phases = ph, .nphases = 2};
    cr_expect(eq(dbl, sim(&f, 1), 50.0));
    cr_expect(eq(dbl, sim(&f, 2), 30.0));
}

Test(sim, malformed_frames_are_refused) {
    static const double d = 1;
    static const uint32_t self[] = {0}, later[] = {1};
    wt_sim_system_t sys[2] = {{.nchunks = 1, .chunk_ns = &d}, {.nchunks = 1, .chunk_ns = &d}};
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 2, &ph, WT_SIM_GRAPH);
    wt_sim_result_t r;
    cr_expect(eq(int, wt_sim_run(&f, 2, &r), 0));
    cr_expect(eq(int, wt_sim_run(&f, 0, &r), -1), "no workers");
    cr_expect(eq(int, wt_sim_run(&f, WT_SIM_MAX_WORKERS + 1, &r), -1));
    sys[0].pred = self; /* a system waiting for itself */
    sys[0].npred = 1;
    cr_expect(eq(int, wt_sim_run(&f, 2, &r), -1));
    sys[0].pred = later; /* or for a later one */
    cr_expect(eq(int, wt_sim_run(&f, 2, &r), -1));
    sys[0].npred = 0;
    ph.end = 1; /* a system outside every phase */
    cr_expect(eq(int, wt_sim_run(&f, 2, &r), -1));
    ph.end = 2;
    static const double negative = -1;
    sys[1].chunk_ns = &negative;
    cr_expect(eq(int, wt_sim_run(&f, 2, &r), -1));
}

/* ---- nested parallel-fors and placed applies --------------------------------------------- */

/* One system, one chunk of 100 whose parallel-for of 8 pieces of 10 took 80 of it; a job
 * graph (one job) with claim 1, notice and wake 2, no job or steal cost.
 * P = 2: worker 0 runs the 20 of its own, then the loop at 20: its first batch, the top
 * 8 / (2 x 2) = 2 pieces (20-40); worker 1 (told of the job at 0, so looking at 2) joins at
 * 22 and claims a whole share, ceil(6 / 2) = 3 (23-53); worker 0 claims 1 (41-51), again 1
 * (52-62), worker 1 the last (54-64), and worker 0 notices it end: 66.
 * P = 4: first batch 1 piece (20-30); workers 1, 2 and 3 join at 22: 2 (23-43), 2 (23-43),
 * 1 (23-33); worker 0 takes one (31-41), worker 3 the last (34-44); the loop ends at 46. */
static const double loop_pieces[8] = {10, 10, 10, 10, 10, 10, 10, 10};
static const double loop_chunk = 100;
static const wt_sim_loop_t loop_of_chunk = {
    .chunk = 0, .npieces = 8, .piece_ns = loop_pieces, .span_ns = 80};

Test(sim, a_nested_loop_is_claimed_as_the_runtimes_parallel_for_claims_it) {
    wt_sim_system_t sys[1] = {
        {.nchunks = 1, .chunk_ns = &loop_chunk, .loops = &loop_of_chunk, .nloops = 1}};
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 1, &ph, WT_SIM_GRAPH);
    f.costs = (wt_sim_costs_t){.claim_ns = 1, .notice_ns = 2, .wake_ns = 2, .spin_ns = 1e9};
    cr_expect(eq(dbl, sim(&f, 1), 100.0), "one worker: the chunk as measured");
    cr_expect(eq(dbl, sim(&f, 2), 66.0));
    cr_expect(eq(dbl, sim(&f, 4), 46.0));
    wt_sim_result_t r;
    cr_assert(eq(int, wt_sim_run(&f, 4, &r), 0));
    cr_expect(eq(dbl, r.work_ns, 100.0), "the chunk's own 20 and the 8 pieces");
    wt_sim_bound_t b;
    cr_assert(eq(int, wt_sim_bound(&f, &b), 0));
    cr_expect(eq(dbl, b.path_ns, 30.0), "its own 20, then the longest piece");
    /* a loop of a chunk the system does not have is refused */
    wt_sim_loop_t bad = loop_of_chunk;
    bad.chunk = 1;
    sys[0].loops = &bad;
    cr_expect(eq(int, wt_sim_run(&f, 2, &r), -1));
}

/* Ready, ready_costs: roots H (100: its own 20, then a loop of 8 pieces of 10, span 80) and
 * X (30). Worker 1 is woken for the roots' drain job (7), takes it (10) and claims X (11-41);
 * worker 0 claims H (1), runs its own part (1-21), opens the loop with nobody idle and takes
 * its first batch, the top 8 / 4 = 2 pieces (21-41), then claims one at a time (41-52).
 * Worker 1 finds nothing published at 41 and, before it would sleep, looks at the loop: it
 * joins at 44 and its first claim takes ceil(5 / 2) = 3 pieces (44-75); worker 0 takes the
 * last two (52-63, 63-74), waits, notices worker 1's last batch end at 75 + 3: 78. Without
 * the late joiner worker 0 would run all 8 pieces: 21 + 20 + 6 x 11 = 107. */
/* H of the ready-loop tests: 100, its own 20, then a loop of 8 pieces of 10 (span 80). */
static const double h_ns = 100, h_pieces[8] = {10, 10, 10, 10, 10, 10, 10, 10};
static const wt_sim_loop_t h_loop = {.chunk = 0, .npieces = 8, .piece_ns = h_pieces, .span_ns = 80};

/* One ready phase over sys[n] with ready_costs: p1 at 1 worker; at 2, frame, work and jobs. */
static void expect_ready(const wt_sim_system_t *sys, uint32_t n, double p1, double frame,
                         double work, uint32_t jobs) {
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, n, &ph, WT_SIM_READY);
    f.costs = ready_costs;
    cr_expect(eq(dbl, sim(&f, 1), p1));
    wt_sim_result_t r;
    cr_assert(eq(int, wt_sim_run(&f, 2, &r), 0));
    cr_expect(eq(dbl, r.frame_ns, frame));
    cr_expect(eq(dbl, r.work_ns, work), "the own part, the pieces and the other systems");
    cr_expect(eq(u32, r.jobs, jobs));
}

Test(sim, a_worker_that_runs_out_of_units_joins_a_running_loop) {
    static const double x = 30;
    const wt_sim_system_t sys[2] = {
        {.nchunks = 1, .chunk_ns = &h_ns, .loops = &h_loop, .nloops = 1},
        {.nchunks = 1, .chunk_ns = &x}};
    expect_ready(sys, 2, 130.0, 78.0, 130.0, 2);
}

/* Ready, ready_costs: roots H (100: its own 20, then a loop of 8 pieces of 10, span 80) and
 * X (3 chunks of 30); H -> S (50). Worker 1 is woken for the roots' drain job (7), takes it
 * (10) and claims X0 (11-41); worker 0 claims H (1), runs its own part (1-21) and the loop's
 * first batch, the top 2 pieces (21-41), then one piece (42-52). Worker 1, between claims at
 * 41, helps the open loop before X1 (the runtime's drain asks weft_jobs_help_loop): it joins
 * at 44 and its first claim takes ceil(5 / 2) = 3 pieces (45-75); worker 0 takes the last two
 * (53-63, 64-74) and notices worker 1's last batch end at 78. S follows H on worker 0
 * (78-128); worker 1 claims X1 (76-106) and X2 (107-137); worker 0 notices the last drain
 * job end at 140. A participant that claimed X1 at 41 instead (42-72, then X2 73-103) left
 * the loop to its caller (6 x 11 more: 107) and S to after it: 157. */
Test(sim, a_participant_helps_an_open_loop_before_its_next_claim) {
    static const double x[3] = {30, 30, 30}, s50 = 50;
    static const uint32_t after_h[] = {0};
    const wt_sim_system_t sys[3] = {
        {.nchunks = 1, .chunk_ns = &h_ns, .loops = &h_loop, .nloops = 1},
        {.nchunks = 3, .chunk_ns = x},
        {.nchunks = 1, .chunk_ns = &s50, .pred = after_h, .npred = 1}};
    expect_ready(sys, 3, 240.0, 140.0, 240.0, 5);
}

/* One inline system of 10, then an apply of 100 whose placed part took 80: a walk of 30,
 * 60 of replay over 2 lanes, 20 of it the main thread's after the walk (so a job lane
 * replayed lead = (60 - 2 x 20) / 1 = 20 during the walk). Job 1, steal 1, wake 2.
 * P = 1: 10 + 100. P = 2: 10 + the serial 20, then the walk 30-60; lane 0 on worker 1 from
 * 34 (wake, job, steal) replays 40 (ends 74); worker 0 replays its 20 (60-80): 80.
 * P = 4: the main lane gets (60 - 3 x 20) / 4 = 0, three job lanes 20 each from 34, each
 * held to the walk's end at 60; worker 0 notices the last: 62. */
Test(sim, a_placed_apply_replays_its_lanes_beside_the_walk) {
    static const double d = 10;
    wt_sim_system_t sys[1] = {{.nchunks = 1, .chunk_ns = &d}};
    wt_sim_phase_t ph;
    wt_sim_frame_t f = one_phase(sys, 1, &ph, WT_SIM_INLINE);
    ph.apply_ns = 100;
    ph.placed_ns = 80;
    ph.walk_ns = 30;
    ph.replay_ns = 60;
    ph.lanes = 2;
    ph.main_lane_ns = 20;
    f.costs =
        (wt_sim_costs_t){.job_ns = 1, .steal_ns = 1, .notice_ns = 2, .wake_ns = 2, .spin_ns = 1e9};
    cr_expect(eq(dbl, sim(&f, 1), 110.0));
    cr_expect(eq(dbl, sim(&f, 2), 80.0), "the recorded split, replayed");
    cr_expect(eq(dbl, sim(&f, 4), 62.0));
    wt_sim_result_t r;
    cr_assert(eq(int, wt_sim_run(&f, 4, &r), 0));
    cr_expect(eq(dbl, r.apply_ns, 100.0), "the applies' measured sum");
    wt_sim_bound_t b;
    cr_assert(eq(int, wt_sim_bound(&f, &b), 0));
    cr_expect(eq(dbl, b.serial_ns, 50.0), "the apply's serial 20 and its walk");
    f.apply_measured = true; /* the lanes ignored: the apply replays as measured */
    cr_expect(eq(dbl, sim(&f, 4), 110.0));
    cr_assert(eq(int, wt_sim_bound(&f, &b), 0));
    cr_expect(eq(dbl, b.serial_ns, 100.0));
    f.apply_measured = false;
    /* job lanes recorded starting 50 after the walk (no worker took them at once): lane 0
     * from 30 + 50, ends 120; worker 0 notices it: 122 */
    ph.lane_delay_ns = 50;
    cr_expect(eq(dbl, sim(&f, 2), 122.0));
    ph.lane_delay_ns = 0;
    ph.lanes = 0; /* a placed apply without lanes is malformed */
    cr_expect(eq(int, wt_sim_run(&f, 2, &r), -1));
}

/* ---- a frame recorded from a world ---------------------------------------------------- */

static void touch(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            float *x = weft_iter_get(it, 0, i);
            *x += 1.0f;
        }
    }
}

/* Phase 0: two independent systems over A and B (flat); phase 1: C writes A, D reads A
 * after it (a ready list with one edge; a job graph when `pin_d` makes D main_thread). 1000
 * entities with A and B, chunks of 256 rows. */
static weft_world_t *recorded_world(uint32_t workers, weft_system_t *ids, bool pin_d) {
    weft_world_t *w = NULL;
    cr_assert(
        eq(int, weft_world_create(&(weft_world_desc_t){.worker_count = workers}, &w), WEFT_OK));
    weft_component_t a, b;
    cr_assert(eq(int,
                 weft_component_register(w, &(weft_component_desc_t){.name = "A", .size = 4}, &a),
                 WEFT_OK));
    cr_assert(eq(int,
                 weft_component_register(w, &(weft_component_desc_t){.name = "B", .size = 4}, &b),
                 WEFT_OK));
    for (int i = 0; i < 1000; i++) {
        weft_entity_t e;
        float v = 0;
        cr_assert(eq(int, weft_entity_create(w, &e), WEFT_OK));
        cr_assert(eq(int, weft_component_set(w, e, a, &v), WEFT_OK));
        cr_assert(eq(int, weft_component_set(w, e, b, &v), WEFT_OK));
    }
    const struct {
        const char *name;
        weft_component_t c;
        weft_access_t access;
        uint32_t phase;
    } defs[4] = {{"pa", a, WEFT_ACCESS_WRITE, 0},
                 {"pb", b, WEFT_ACCESS_WRITE, 0},
                 {"c", a, WEFT_ACCESS_WRITE, 1},
                 {"d", a, WEFT_ACCESS_READ, 1}};
    for (int i = 0; i < 4; i++) {
        weft_system_desc_t d = {.name = defs[i].name,
                                .fn = touch,
                                .terms = {{.component = defs[i].c, .access = defs[i].access}},
                                .phase = defs[i].phase,
                                .parallel = true,
                                .chunk_size = 256,
                                .main_thread = pin_d && i == 3};
        cr_assert(eq(int, weft_system_register(w, &d, &ids[i]), WEFT_OK), "%s", weft_last_error());
    }
    return w;
}

static wt_sim_trace_t traced(weft_world_t *w, uint32_t workers, weft_trace_event_t *ev,
                             uint32_t cap) {
    cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK)); /* plans, warms */
    cr_assert(eq(int, weft_trace_enable(w, NULL), WEFT_OK));
    cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK));
    uint32_t n = weft_trace_events(w, ev, cap);
    cr_assert(le(u32, n, cap));
    weft_trace_disable(w);
    return (wt_sim_trace_t){ev, n, workers, 1e9}; /* a wall time longer than any build takes */
}

Test(sim, a_recorded_frame_has_the_schedules_phases_edges_and_chunks) {
    static weft_trace_event_t ev1[256], ev2[256];
    weft_system_t ids[4];
    weft_world_t *w1 = recorded_world(1, ids, false), *w2 = recorded_world(2, ids, false);
    wt_sim_trace_t one = traced(w1, 1, ev1, 256), many = traced(w2, 2, ev2, 256);
    wt_sim_costs_t costs = {.job_ns = 1};
    wt_sim_record_t rec;
    cr_assert(eq(int, wt_sim_record_build(&rec, w1, &one, &many, &costs), 0));
    cr_assert(eq(u32, rec.one.nsystems, 4));
    cr_assert(eq(u32, rec.one.nphases, 2));
    cr_expect(eq(u32, rec.one.phases[0].first, 0));
    cr_expect(eq(u32, rec.one.phases[0].end, 2));
    cr_expect(eq(int, rec.one.phases[0].mode, WT_SIM_FLAT));
    cr_expect(eq(int, rec.one.phases[1].mode, WT_SIM_READY));
    for (uint32_t i = 0; i < 4; i++) {
        cr_expect(eq(u32, rec.one.systems[i].nchunks, 4), "system %u: 1000 rows / 256", i);
        cr_expect(eq(u32, rec.one.systems[i].phase, i / 2));
        cr_expect(eq(u32, rec.many.systems[i].nchunks, 4));
    }
    cr_assert(eq(u32, rec.one.systems[3].npred, 1));
    cr_expect(eq(u32, rec.one.systems[3].pred[0], 2), "d waits for c");
    cr_expect(eq(u32, rec.one.systems[2].npred, 0));
    cr_expect(eq(dbl, rec.one.costs.job_ns, 1.0));
    /* the 1-worker replay is the traced frame: its jobs, applies and the rest (frame_ns) */
    wt_sim_result_t r;
    cr_assert(eq(int, wt_sim_run(&rec.one, 1, &r), 0));
    cr_expect(fabs(r.frame_ns - 1e9) < 1e-3, "%.6f", r.frame_ns);
    cr_assert(eq(int, wt_sim_run(&rec.many, 4, &r), 0));
    cr_expect(eq(u32, r.jobs, 16));
    wt_sim_record_free(&rec);
    /* a trace that does not come from this schedule is refused */
    ev1[0].system = 999;
    cr_expect(eq(int, wt_sim_record_build(&rec, w1, &one, &many, &costs), -1));
    weft_world_destroy(w1);
    weft_world_destroy(w2);
}

/* A system of one chunk that runs two parallel-fors of 8 ranges each. */
static void loop_body(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)ctx, (void)begin, (void)end, (void)worker;
}

static void two_loops(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    weft_jobs_t *jobs = weft_world_jobs(ctx->world);
    cr_assert(jobs != NULL);
    for (int k = 0; k < 2; k++) {
        cr_assert(eq(int, weft_parallel_for(jobs, 64, 8, loop_body, NULL), WEFT_OK));
    }
}

static weft_world_t *looping_world(uint32_t workers, weft_system_t *id) {
    weft_world_t *w = NULL;
    cr_assert(
        eq(int, weft_world_create(&(weft_world_desc_t){.worker_count = workers}, &w), WEFT_OK));
    weft_system_desc_t d = {.name = "loops", .fn = two_loops};
    cr_assert(eq(int, weft_system_register(w, &d, id), WEFT_OK), "%s", weft_last_error());
    return w;
}

Test(sim, the_pieces_of_a_loop_inside_a_system_are_traced_and_recorded_as_its_loops) {
    static weft_trace_event_t ev1[64], ev2[64];
    weft_system_t id;
    weft_world_t *w1 = looping_world(1, &id), *w2 = looping_world(2, &id);
    wt_sim_trace_t one = traced(w1, 1, ev1, 64), many = traced(w2, 2, ev2, 64);
    uint32_t seen[2] = {0, 0}; /* per loop: a bit per range */
    for (uint32_t i = 0; i < many.count; i++) {
        const weft_trace_event_t *e = &ev2[i];
        if (e->kind == WEFT_TRACE_PIECE) {
            cr_expect(eq(u32, e->system, id.id));
            cr_expect(eq(u32, e->chunk, 0));
            cr_assert(lt(u32, e->loop, 2));
            cr_assert(lt(u32, e->detail, 8));
            seen[e->loop] |= 1u << e->detail;
        }
    }
    cr_expect(eq(u32, seen[0], 0xffu), "every range of the first loop, once");
    cr_expect(eq(u32, seen[1], 0xffu));
    wt_sim_costs_t costs = {.job_ns = 1};
    wt_sim_record_t rec;
    cr_assert(eq(int, wt_sim_record_build(&rec, w1, &one, &many, &costs), 0));
    const wt_sim_frame_t *fr[2] = {&rec.one, &rec.many};
    for (int k = 0; k < 2; k++) {
        cr_assert(eq(u32, fr[k]->nsystems, 1));
        const wt_sim_system_t *s = &fr[k]->systems[0];
        cr_assert(eq(u32, s->nloops, 2), "%s trace", k ? "2-worker" : "1-worker");
        double spans = 0;
        for (uint32_t l = 0; l < 2; l++) {
            cr_expect(eq(u32, s->loops[l].npieces, 8));
            cr_expect(eq(u32, s->loops[l].chunk, 0));
            spans += s->loops[l].span_ns;
        }
        cr_expect(le(dbl, spans, s->chunk_ns[0]), "the loops ran inside the chunk");
    }
    wt_sim_record_free(&rec);
    weft_world_destroy(w1);
    weft_world_destroy(w2);
}

/* A system that gives 600 entities a component through its command buffer: the apply has
 * more than enough operations to be placed, and the first placed-eligible apply is. */
static weft_component_t churn_c;

static void churn(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            cr_assert(eq(int, weft_cmd_add(ctx->cmd, it->entities[i], churn_c), WEFT_OK));
        }
    }
}

static weft_world_t *churning_world(uint32_t workers) {
    weft_world_t *w = NULL;
    cr_assert(
        eq(int, weft_world_create(&(weft_world_desc_t){.worker_count = workers}, &w), WEFT_OK));
    weft_component_t a;
    cr_assert(eq(int,
                 weft_component_register(w, &(weft_component_desc_t){.name = "A", .size = 4}, &a),
                 WEFT_OK));
    cr_assert(eq(
        int, weft_component_register(w, &(weft_component_desc_t){.name = "C", .size = 4}, &churn_c),
        WEFT_OK));
    for (int i = 0; i < 600; i++) {
        weft_entity_t e;
        float v = 0;
        cr_assert(eq(int, weft_entity_create(w, &e), WEFT_OK));
        cr_assert(eq(int, weft_component_set(w, e, a, &v), WEFT_OK));
    }
    weft_system_desc_t d = {
        .name = "churn", .fn = churn, .terms = {{.component = a, .access = WEFT_ACCESS_READ}}};
    weft_system_t id;
    cr_assert(eq(int, weft_system_register(w, &d, &id), WEFT_OK), "%s", weft_last_error());
    return w;
}

Test(sim, a_placed_apply_is_traced_as_its_walk_and_lanes_and_recorded) {
    static weft_trace_event_t ev1[64], ev2[64];
    weft_world_t *w1 = churning_world(1), *w2 = churning_world(2);
    wt_sim_trace_t t[2];
    weft_world_t *ws[2] = {w1, w2};
    weft_trace_event_t *evs[2] = {ev1, ev2};
    for (int k = 0; k < 2; k++) { /* the first frame: the first placed-eligible apply */
        cr_assert(eq(int, weft_trace_enable(ws[k], NULL), WEFT_OK));
        cr_assert(eq(int, weft_world_progress(ws[k], 0.016f), WEFT_OK));
        uint32_t n = weft_trace_events(ws[k], evs[k], 64);
        cr_assert(le(u32, n, 64));
        weft_trace_disable(ws[k]);
        t[k] = (wt_sim_trace_t){evs[k], n, k + 1u, 1e9};
    }
    uint32_t walks = 0, lanes = 0;
    for (uint32_t i = 0; i < t[1].count; i++) {
        walks += ev2[i].kind == WEFT_TRACE_APPLY_WALK;
        if (ev2[i].kind == WEFT_TRACE_APPLY_LANE) {
            lanes++;
            cr_expect(le(u64, ev2[i].detail, ev2[i].end_ns - ev2[i].begin_ns),
                      "a lane replays within its span");
        }
    }
    cr_expect(eq(u32, walks, 1), "one walk, on the main thread");
    cr_expect(eq(u32, lanes, 2), "a job lane and the main thread's");
    for (uint32_t i = 0; i < t[0].count; i++) {
        cr_expect(eq(u32, ev1[i].kind, WEFT_TRACE_JOB), "one worker applies serially");
    }
    wt_sim_costs_t costs = {.job_ns = 1};
    wt_sim_record_t rec;
    cr_assert(eq(int, wt_sim_record_build(&rec, w1, &t[0], &t[1], &costs), 0));
    /* read, but not replayed unless asked (sim_record.c says why) */
    const wt_sim_phase_t *ph = &rec.many.phases[0];
    cr_expect(eq(u32, ph->lanes, 2));
    cr_expect(gt(dbl, ph->walk_ns, 0.0));
    cr_expect(le(dbl, ph->main_lane_ns, ph->replay_ns));
    cr_expect(gt(dbl, ph->placed_ns, 0.0));
    cr_expect(le(dbl, ph->placed_ns, ph->apply_ns));
    cr_expect(rec.many.apply_measured && rec.one.apply_measured);
    wt_sim_result_t r;
    cr_assert(eq(int, wt_sim_run(&rec.one, 1, &r), 0));
    cr_expect(fabs(r.frame_ns - 1e9) < 1e-3, "%.6f", r.frame_ns);
    cr_expect(eq(int, wt_sim_run(&rec.many, 16, &r), 0));
    wt_sim_record_free(&rec);
    weft_world_destroy(w1);
    weft_world_destroy(w2);
}

Test(sim, a_phase_holding_a_main_thread_system_is_recorded_as_a_job_graph) {
    static weft_trace_event_t ev1[256], ev2[256];
    weft_system_t ids[4];
    weft_world_t *w1 = recorded_world(1, ids, true), *w2 = recorded_world(2, ids, true);
    cr_expect(weft_system_is_main_thread(w1, ids[3]));
    cr_expect(not(weft_system_is_main_thread(w1, ids[2])));
    cr_expect(not(weft_system_is_main_thread(w1, (weft_system_t){0})));
    wt_sim_trace_t one = traced(w1, 1, ev1, 256), many = traced(w2, 2, ev2, 256);
    wt_sim_costs_t costs = {.job_ns = 1};
    wt_sim_record_t rec;
    cr_assert(eq(int, wt_sim_record_build(&rec, w1, &one, &many, &costs), 0));
    cr_expect(eq(int, rec.one.phases[0].mode, WT_SIM_FLAT));
    cr_expect(eq(int, rec.one.phases[1].mode, WT_SIM_GRAPH));
    wt_sim_record_free(&rec);
    weft_world_destroy(w1);
    weft_world_destroy(w2);
}

/* wt_sim_calibrate_runs: the costs are measured, the hand-out cost is derived from the
 * per-cost medians (not taken from one run), and a run count outside
 * 1..WT_SIM_CALIBRATE_MAX_RUNS is refused. Few samples per run: this checks the rule, not the
 * machine. */
Test(sim, calibration_over_runs_keeps_each_costs_median_and_derives_the_hand_out) {
    wt_sim_costs_t c;
    cr_expect(eq(int, wt_sim_calibrate_runs(&c, 5, 0), -1));
    cr_expect(eq(int, wt_sim_calibrate_runs(&c, 5, WT_SIM_CALIBRATE_MAX_RUNS + 1), -1));
    cr_assert(eq(int, wt_sim_calibrate_runs(&c, 5, 3), 0));
    cr_expect(c.job_ns > 0 && c.claim_ns > 0 && c.wake_ns > 0 && c.spin_ns > 0);
    cr_expect(eq(dbl, c.handout_ns, c.job_ns + c.steal_ns + c.notice_ns));
}
