/* iter_cpp_vs_c.cpp: the C++ half of core/iter_cpp_vs_c: position += velocity * dt written
 * with include/weft.hpp, over the world the C half builds (iter_cpp.h). */
#include <cstdio>
#include <new>

#include "iter_cpp.h"
#include "weft.hpp"

struct wb_cpp_world {
    weft::world w;
};

extern "C" wb_cpp_world_t *wb_cpp_world_create(uint32_t n) {
    auto *cw = new (std::nothrow) wb_cpp_world;
    if (!cw) {
        return nullptr;
    }
    weft_world_desc_t d = wb_iter_world_desc();
    cw->w = weft::world::create(&d);
    weft::component<wb_pos_t> pos = cw->w.component<wb_pos_t>("Position");
    weft::component<wb_vel_t> vel = cw->w.component<wb_vel_t>("Velocity");
    weft_result_t r = !cw->w ? cw->w.result() : !pos ? pos.result : vel.result;
    if (r == WEFT_OK) {
        r = wb_iter_populate(cw->w.c_ptr(), pos.id, vel.id, n);
    }
    if (r == WEFT_OK) {
        r = cw->w.system("move")
                .writes<wb_pos_t>()
                .reads<wb_vel_t>()
                .parallel()
                .each([](wb_pos_t &p, const wb_vel_t &v) {
                    p.x += v.x * WB_ITER_DT;
                    p.y += v.y * WB_ITER_DT;
                    p.z += v.z * WB_ITER_DT;
                })
                .result;
    }
    if (r != WEFT_OK) {
        std::fprintf(stderr, "bench core: C++ world: %s (%s)\n", weft_result_name(r),
                     weft_last_error());
        delete cw;
        return nullptr;
    }
    return cw;
}

extern "C" weft_world_t *wb_cpp_world_c(wb_cpp_world_t *w) { return w->w.c_ptr(); }

extern "C" void wb_cpp_world_destroy(wb_cpp_world_t *w) { delete w; }
