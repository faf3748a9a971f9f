/* iter_cpp.h: the core/iter_cpp_vs_c case, shared by its C half (iter_cpp_vs_c.c: the world,
 * the hand-written C system, the timing) and its C++ half (iter_cpp_vs_c.cpp: the same
 * system through include/weft.hpp). */
#ifndef WEFT_BENCH_ITER_CPP_H
#define WEFT_BENCH_ITER_CPP_H

#include <stdint.h>

#include "weft.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wb_pos {
    float x, y, z;
} wb_pos_t;

typedef struct wb_vel {
    float x, y, z;
} wb_vel_t;

#define WB_ITER_DT 0.016f /* both systems use this constant step */

/* The world both halves build: inline execution (one thread), no allocator hook. */
weft_world_desc_t wb_iter_world_desc(void);

/* n entities with Position and Velocity, values from the index. Returns WEFT_OK or the
 * first failure. */
weft_result_t wb_iter_populate(weft_world_t *w, weft_component_t pos, weft_component_t vel,
                               uint32_t n);

/* The C++ half: a world built by weft::world (components by type, the same n entities) with
 * the move system as a weft.hpp lambda. Returns NULL on failure (message on stderr). */
typedef struct wb_cpp_world wb_cpp_world_t;
wb_cpp_world_t *wb_cpp_world_create(uint32_t n);
weft_world_t *wb_cpp_world_c(wb_cpp_world_t *w);
void wb_cpp_world_destroy(wb_cpp_world_t *w);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_BENCH_ITER_CPP_H */
