/* mc_jobs_tls.c: jobs/worker.c and jobs/platform/report.c for the model-checked build, and
 * the addresses of their thread-locals, which mc_fiber.c keeps apart per modelled thread.
 *
 * DESIGN: the thread-locals are `static` in their files, so this file compiles those files
 * (in place of compiling them on their own; tests/CMakeLists.txt) to name them. Every
 * _Thread_local in jobs/ must be listed here: tests/CMakeLists.txt counts them and refuses
 * to configure when the count differs from MC_JOBS_TLS_COUNT. */
#include "jobs/platform/report.c"
#include "jobs/worker.c"

#include "mc_fiber.h"

#define MC_JOBS_TLS_COUNT 3

int mc_jobs_tls_areas(mc_tls_area_t *out, int cap) {
    const mc_tls_area_t all[MC_JOBS_TLS_COUNT] = {
        {bindings, sizeof bindings},
        {&last_binding, sizeof last_binding},
        {last_error, sizeof last_error},
    };
    int n = cap < MC_JOBS_TLS_COUNT ? cap : MC_JOBS_TLS_COUNT;
    memcpy(out, all, (size_t)n * sizeof *out);
    return n;
}
