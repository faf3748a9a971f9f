/* tools/demo/demo_internal.h: the demo's component layouts, the world record and the system
 * functions, shared by demo_world.c (setup) and demo_systems.c (the frame's work).
 *
 * Every component struct is free of padding (checked below): weft_world_hash() hashes data
 * bytes, so padding holding stale bytes would make equal states hash differently. */
#ifndef WEFT_DEMO_INTERNAL_H
#define WEFT_DEMO_INTERNAL_H

#include <assert.h>
#include <stdint.h>

#include "demo_world.h"
#include "weft/component.h"
#include "weft/hierarchy.h"
#include "weft/math.h"

#define DEMO_FIELD 1024.0f                 /* the field is [0, DEMO_FIELD)^2 in x and z */
#define DEMO_GRID 64                       /* neighbour grid cells per side */
#define DEMO_CELLS (DEMO_GRID * DEMO_GRID) /* cells in the grid */
#define DEMO_CELL_SIZE (DEMO_FIELD / DEMO_GRID)
#define DEMO_MAX_GRID_CHUNKS 64    /* per-chunk partial histograms */
#define DEMO_MAX_STATS_CHUNKS 1024 /* per-chunk partial statistics */
#define DEMO_DT (1.0f / 60.0f)     /* fixed frame step, seconds */
#define DEMO_PARTICLE_LIFE 1.5f    /* mean particle lifetime, seconds */
#define DEMO_MAX_SYSTEMS 24

enum demo_state { DEMO_WANDER = 0, DEMO_FLEE = 1, DEMO_REST = 2, DEMO_REGROUP = 3 };

typedef struct demo_bounds {
    float min[3]; /* axis-aligned box, world units */
    float max[3];
} demo_bounds_t;

typedef struct demo_state_c {
    uint32_t state; /* enum demo_state */
    float timer;    /* seconds left in a timed state */
} demo_state_c_t;

typedef struct demo_emitter {
    float accum;  /* fractional particles owed */
    uint32_t rng; /* the emitter's own random stream (xorshift32) */
} demo_emitter_t;

typedef struct demo_mount {
    float spin;   /* radians per second about the local y axis */
    float radius; /* bounding radius */
    float offset; /* distance from the parent along local x */
    uint32_t pad; /* explicit, always 0: keeps the struct free of implicit padding */
} demo_mount_t;

typedef struct demo_grid_partials {
    uint32_t counts[DEMO_MAX_GRID_CHUNKS][DEMO_CELLS]; /* row k: histogram of grid_count chunk k */
} demo_grid_partials_t;

typedef struct demo_density {
    uint32_t counts[DEMO_CELLS]; /* entities per cell this frame */
} demo_density_t;

typedef struct demo_stats_partial {
    uint64_t moving;  /* entities seen */
    uint64_t visible; /* visible ones */
    uint64_t near;    /* near ones */
    double speed_sum; /* sum of speeds */
} demo_stats_partial_t;

typedef struct demo_stats_partials {
    demo_stats_partial_t chunk[DEMO_MAX_STATS_CHUNKS]; /* slot k: stats chunk k */
} demo_stats_partials_t;

static_assert(sizeof(demo_bounds_t) == 24, "no padding");
static_assert(sizeof(demo_state_c_t) == 8, "no padding");
static_assert(sizeof(demo_emitter_t) == 8, "no padding");
static_assert(sizeof(demo_mount_t) == 16, "no padding");
static_assert(sizeof(demo_stats_partial_t) == 32, "no padding");

typedef struct demo_components {
    weft_component_t position;       /* weft_vec3_t */
    weft_component_t velocity;       /* weft_vec3_t, units per second */
    weft_component_t radius;         /* float */
    weft_component_t bounds;         /* demo_bounds_t */
    weft_component_t visible;        /* uint32_t: bit 0 visible, bit 1 near */
    weft_component_t cell;           /* uint32_t grid cell */
    weft_component_t crowding;       /* float, 1 = average density */
    weft_component_t health;         /* float, 0..100 */
    weft_component_t state;          /* demo_state_c_t */
    weft_component_t lifetime;       /* float seconds left */
    weft_component_t emitter;        /* demo_emitter_t */
    weft_component_t carrier;        /* tag: a hierarchy root that follows its mobile */
    weft_component_t mount;          /* demo_mount_t: a hierarchy child */
    weft_component_t particle;       /* tag */
    weft_component_t grid_partials;  /* singleton demo_grid_partials_t */
    weft_component_t density;        /* singleton demo_density_t */
    weft_component_t stats_partials; /* singleton demo_stats_partials_t */
    weft_component_t stats;          /* singleton demo_stats_partial_t (the totals) */
    weft_hier_components_t hier;     /* the hierarchy's components */
} demo_components_t;

struct demo_world {
    weft_world_t *world;                          /* owned */
    demo_config_t cfg;                            /* resolved */
    demo_components_t c;                          /* component ids */
    weft_entity_t singleton;                      /* holds the singleton components */
    uint32_t frame;                               /* frames run; main thread writes it
                                                       between frames, systems read it */
    float spawn_rate;                             /* particles per emitter per second */
    uint32_t grid_chunk_rows;                     /* chunk size of grid_count */
    uint32_t stats_chunk_rows;                    /* chunk size of stats */
    demo_system_info_t systems[DEMO_MAX_SYSTEMS]; /* registration order */
    uint32_t system_count;                        /* entries used */
};

/* A deterministic value in [0, 1) from two integers (an entity index and a frame, say). */
static inline float demo_rand01(uint32_t a, uint32_t b) {
    uint64_t x = ((uint64_t)a << 32 | b) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (float)(x >> 40) * (1.0f / 16777216.0f);
}

/* Register every system of the demo into d->systems (demo_systems.c). */
weft_result_t demo_register_systems(demo_world_t *d);

/* Bounds of a sphere. */
static inline demo_bounds_t demo_sphere_bounds(weft_vec3_t p, float r) {
    return (demo_bounds_t){{p.x - r, p.y - r, p.z - r}, {p.x + r, p.y + r, p.z + r}};
}

#endif /* WEFT_DEMO_INTERNAL_H */
