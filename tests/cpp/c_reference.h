/* c_reference.h: the C half of the cpp suite: component layouts and hand-written C systems
 * (c_reference.c, compiled as C) that the weft.hpp systems of test_cpp.cpp must match. */
#ifndef WEFT_TEST_CPP_C_REFERENCE_H
#define WEFT_TEST_CPP_C_REFERENCE_H

#include <stdint.h>

#include "weft.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ref_position {
    float x, y, z;
} ref_position_t;

typedef struct ref_velocity {
    float x, y, z;
} ref_velocity_t;

typedef struct ref_spin {
    float rate;
} ref_spin_t;

/* Component ids of one reference world, registered by ref_register_components under the
 * names the C++ side gives its types. */
typedef struct ref_ids {
    weft_component_t pos, vel, spin, frozen;
} ref_ids_t;

/* Registers "Position", "Velocity", "Spin" and the tag "Frozen". */
weft_result_t ref_register_components(weft_world_t *w, ref_ids_t *ids);

/* Populates n entities from `seed`: every one has Position and Velocity, about a third have
 * Spin (added in shuffled order, so its rows do not line up with the others) and about a
 * tenth are Frozen. Same seed, same world. */
weft_result_t ref_populate(weft_world_t *w, const ref_ids_t *ids, uint32_t n, uint64_t seed);

/* Registers the C systems: "spin" (writes Velocity, reads Spin: v.x = v.x * 0.5 + rate,
 * v.y -= rate) then "move" (parallel, chunks of 1000, writes Position, reads Velocity,
 * excludes Frozen: p += v * dt). */
weft_result_t ref_register_systems(weft_world_t *w, const ref_ids_t *ids);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_TEST_CPP_C_REFERENCE_H */
