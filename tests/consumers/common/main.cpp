/* A C++ consumer of weft: includes only the installed weft.hpp, builds a world of N entities
 * with components registered by type, runs a lambda system for a few frames and checks the
 * result; then sums [0, n) with weft::jobs. Built with -fno-exceptions -fno-rtti, as engines
 * often are. Built by ../subdir (add_subdirectory) and ../find_package (find_package after
 * install), which tools/check_consumers.sh runs for static and shared weft. */
#include <cinttypes>
#include <cstdio>

#include <weft.hpp>

struct Position {
    float x, y;
};
struct Velocity {
    float x, y;
};

int main() {
    weft::world w = weft::world::create();
    if (!w) {
        std::fprintf(stderr, "weft::world::create: %s (%s)\n", weft_result_name(w.result()),
                     weft_last_error());
        return 1;
    }
    const uint32_t n = 10000;
    for (uint32_t i = 0; i < n; i++) {
        weft::entity e;
        weft_result_t r = w.create_entity(&e);
        if (r == WEFT_OK) {
            r = w.set(e, Position{0.0f, (float)i});
        }
        if (r == WEFT_OK) {
            r = w.set(e, Velocity{1.0f, 2.0f});
        }
        if (r != WEFT_OK) {
            std::fprintf(stderr, "populate: %s (%s)\n", weft_result_name(r), weft_last_error());
            return 1;
        }
    }
    weft::system s = w.system("move").reads<Velocity>().writes<Position>().parallel().each(
        [](Position &p, const Velocity &v, const weft_system_ctx_t &ctx) {
            p.x += v.x * ctx.dt;
            p.y += v.y * ctx.dt;
        });
    if (!s) {
        std::fprintf(stderr, "system: %s (%s)\n", weft_result_name(s.result), weft_last_error());
        return 1;
    }
    for (int f = 0; f < 4; f++) {
        weft_result_t r = w.progress(0.5f);
        if (r != WEFT_OK) {
            std::fprintf(stderr, "progress: %s (%s)\n", weft_result_name(r), weft_last_error());
            return 1;
        }
    }
    weft_component_t pos = w.lookup<Position>();
    for (uint32_t row = 0; row < weft_component_rows(w.c_ptr(), pos); row++) {
        weft::entity e{weft_component_entity_at(w.c_ptr(), pos, row)};
        const Position *p = w.get<Position>(e);
        float want_y = (float)(e.index() - 1) + 4.0f;
        if (!p || p->x != 2.0f || p->y != want_y) {
            std::fprintf(stderr, "entity %u: position wrong\n", e.index());
            return 1;
        }
    }

    weft_jobs_desc_t jd{};
    jd.worker_count = 2;
    weft::jobs jobs = weft::jobs::create(&jd);
    if (!jobs) {
        std::fprintf(stderr, "weft::jobs::create: %s\n", weft_result_name(jobs.result()));
        return 1;
    }
    uint64_t per_worker[64] = {0};
    const uint64_t count = 1000000;
    weft_result_t r = jobs.parallel_for(count, 1024, [&](uint64_t b, uint64_t e, uint32_t wk) {
        for (uint64_t i = b; i < e; i++) {
            per_worker[wk] += i;
        }
    });
    uint64_t total = 0;
    for (uint64_t v : per_worker) {
        total += v;
    }
    if (r != WEFT_OK || total != count * (count - 1) / 2) {
        std::fprintf(stderr, "parallel_for: %s, sum %" PRIu64 "\n", weft_result_name(r), total);
        return 1;
    }
    std::printf("consumer_cpp ok: weft %s, %u entities moved, sum %" PRIu64 "\n", weft_version(), n,
                total);
    return 0;
}
