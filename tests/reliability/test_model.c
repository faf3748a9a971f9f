/* test_model.c: model-based stress — random sequences of public operations (entities,
 * components, groups, hierarchy, command buffers via frames on 1 to 8 workers, save/load,
 * snapshot/restore) checked against a reference model after every step (model.c).
 *
 * The run is split into sequences of WT_MODEL_SEQ operations (default 25,000), each on a
 * fresh world with its own worker count (1 + seed % 8) and seed (base seed + sequence number).
 * WT_MODEL_OPS sets the total (default 100,000; the "stress" executable defaults to
 * 1,000,000). On a failure the sequence is shrunk by delta debugging and the short
 * reproduction is printed as an op list, with the seed and worker count to replay it. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "model.h"
#include "weft_test.h"

#ifndef WT_MODEL_OPS_DEFAULT
#define WT_MODEL_OPS_DEFAULT 100000
#endif

TestSuite(reliability_model, .timeout = 3000);

Test(reliability_model, random_operations_match_the_reference_model_on_1_to_8_workers) {
    wt_watchdog_arm(2900, "model-based stress");
    uint64_t total = wt_env_u64("WT_MODEL_OPS", WT_MODEL_OPS_DEFAULT);
    uint64_t seq = wt_env_u64("WT_MODEL_SEQ", 25000);
    uint64_t seed = wt_seed("model");
    op_t *ops = malloc(seq * sizeof *ops);
    cr_assert(ops != NULL);
    const char *replay = getenv("WT_MODEL_REPLAY");
    if (replay != NULL && replay[0] != '\0') {
        /* Replay a printed reproduction on WT_MODEL_WORKERS workers (default 3). */
        size_t n = model_read(replay, ops, (size_t)seq);
        uint32_t workers = (uint32_t)wt_env_u64("WT_MODEL_WORKERS", 3);
        model_result_t res;
        model_run(ops, n, workers, &res);
        free(ops);
        cr_assert(res.ok, "replay of %zu operations from %s on %u workers failed at step %zu: %s",
                  n, replay, workers, res.failed_step, res.msg);
        return;
    }
    uint64_t done = 0, frames = 0, checks = 0, sequences = 0;
    for (uint64_t s = 0; done < total; s++) {
        size_t n = (size_t)(total - done < seq ? total - done : seq);
        uint64_t sseed = seed + s;
        uint32_t workers = (uint32_t)(1 + sseed % 8);
        model_generate(ops, n, sseed);
        model_result_t res;
        model_run(ops, n, workers, &res);
        if (!res.ok) {
            fprintf(stderr, "model: sequence %llu (seed %llu, %u workers) failed at step %zu: %s\n",
                    (unsigned long long)s, (unsigned long long)sseed, workers, res.failed_step,
                    res.msg);
            size_t m = model_shrink(ops, n, workers, (double)wt_env_u64("WT_SHRINK_SECONDS", 120));
            model_result_t again;
            model_run(ops, m, workers, &again);
            fprintf(stderr,
                    "model: shrunk to %zu operations (%u workers); last failure: %s\n"
                    "model: replay: save the lines below to a file and run with "
                    "WT_MODEL_REPLAY=<file> WT_MODEL_WORKERS=%u (WT_MODEL_TRACE=1 prints "
                    "each step)\n",
                    m, workers, again.ok ? "(passes now: flaky?)" : again.msg, workers);
            model_print(ops, m);
            free(ops);
            cr_fatal("model-based stress failed (seed %llu, %u workers): %s",
                     (unsigned long long)sseed, workers, res.msg);
        }
        done += n;
        frames += res.frames;
        checks += res.checks;
        sequences++;
    }
    free(ops);
    fprintf(stderr,
            "model: %llu operations in %llu sequences (1-8 workers), %llu frames, %llu "
            "full model comparisons: all matched\n",
            (unsigned long long)done, (unsigned long long)sequences, (unsigned long long)frames,
            (unsigned long long)checks);
    wt_watchdog_disarm();
}
