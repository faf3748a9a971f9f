/* A consumer of weft: creates a job system, sums [0, n) with a parallel-for, checks the sum.
 * This one file is built three ways by tools/check_consumers.sh (../subdir: add_subdirectory,
 * ../find_package: find_package after install, ../pkgconfig: pkg-config); it only uses the
 * installed public headers. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <weft.h>

enum { MAX_WORKERS = 8 };

/* One partial sum per worker: each slot is written only by its own worker, and the
 * parallel-for's return makes every slot visible to the caller. */
typedef struct sums {
    uint64_t per_worker[MAX_WORKERS];
} sums_t;

static void add_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    sums_t *s = ctx;
    for (uint64_t i = begin; i < end; i++) {
        s->per_worker[worker] += i;
    }
}

int main(void) {
    const uint64_t n = 1000000;
    if (strcmp(weft_version(), WEFT_VERSION_STRING) != 0) {
        fprintf(stderr, "header says weft %s, library says %s\n", WEFT_VERSION_STRING,
                weft_version());
        return 1;
    }
    weft_jobs_t *jobs = NULL;
    weft_result_t r = weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 2}, &jobs);
    if (r != WEFT_OK) {
        fprintf(stderr, "weft_jobs_create: %s (%s)\n", weft_result_name(r), weft_last_error());
        return 1;
    }
    sums_t sums = {{0}};
    r = weft_parallel_for(jobs, n, 1024, add_range, &sums);
    uint32_t workers = weft_jobs_worker_count(jobs);
    weft_jobs_destroy(jobs);
    if (r != WEFT_OK) {
        fprintf(stderr, "weft_parallel_for: %s (%s)\n", weft_result_name(r), weft_last_error());
        return 1;
    }
    uint64_t total = 0;
    for (int i = 0; i < MAX_WORKERS; i++) {
        total += sums.per_worker[i];
    }
    if (total != n * (n - 1) / 2) {
        fprintf(stderr, "wrong sum %" PRIu64 ", want %" PRIu64 "\n", total, n * (n - 1) / 2);
        return 1;
    }
    printf("consumer ok: weft %s, %u workers, sum %" PRIu64 "\n", weft_version(), workers, total);
    return 0;
}
