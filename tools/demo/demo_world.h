/* tools/demo/demo_world.h: the scaling demo's simulation — a world of a million moving entities
 * and about fifteen systems of different sizes and conflicts — shared by the demo program
 * (weft_demo) and the benchmark suite `demo` (bench/bench_demo.c).
 *
 * The simulation: mobiles move and wrap around a 1024 x 1024 field; steering turns them by
 * health and crowding; a 64 x 64 neighbour grid is binned, counted in per-chunk partials and
 * merged; crowding is read back from the grid; a state machine drives health; emitters spawn
 * particles through command buffers and particles despawn when their lifetime runs out; 5% of
 * the mobiles carry a hierarchy of mounts (two children, each with a child) whose transforms
 * spin and are updated by weft's hierarchy system; bounds, culling and statistics close the
 * frame. Every result depends only on the entity data and the frame number, so the world after
 * N frames is the same for every worker count (demo_world_hash says so, bit for bit). */
#ifndef WEFT_DEMO_WORLD_H
#define WEFT_DEMO_WORLD_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/system.h"
#include "weft/world.h"

typedef struct demo_config {
    uint32_t mobiles;   /* 0: 1,000,000 moving entities */
    uint32_t particles; /* 0: mobiles / 5, the steady particle population */
    uint32_t
        carriers; /* 0: mobiles / 20 mobiles carry mounts (each: 2 children, 2 grandchildren) */
    uint32_t emitters; /* 0: 1000 mobiles emit particles */
    uint32_t workers;  /* 0: hardware threads; the world's worker count (main thread included) */
    uint64_t seed;     /* 0: 1; the same seed builds the same world */
} demo_config_t;

/* One registered system, for the report's model. */
typedef struct demo_system_info {
    weft_system_t id; /* the handle */
    const char *name; /* the registered name (static storage) */
    uint32_t phase;   /* phase it runs in */
    bool parallel;    /* one job per chunk (true) or one job per frame */
} demo_system_info_t;

/* Frame statistics the `stats_reduce` system publishes (deterministic). */
typedef struct demo_summary {
    uint64_t moving;    /* entities with Velocity that the stats system saw */
    uint64_t visible;   /* of those, visible to the camera */
    uint64_t near;      /* of those, near the camera */
    double mean_speed;  /* average speed of the moving entities */
    uint32_t entities;  /* live entities in the world */
    uint32_t particles; /* live particles */
    uint32_t hierarchy; /* hierarchy nodes */
} demo_summary_t;

typedef struct demo_world demo_world_t; /* opaque */

/* Build the world: components, ~1.4 million entities (at the defaults), the hierarchy,
 * the systems. Deterministic for a given config. Errors: any weft error (message in
 * weft_last_error()); nothing is left behind. Thread: the calling thread becomes the world's
 * main thread. */
weft_result_t demo_world_create(const demo_config_t *cfg, demo_world_t **out);

/* Free everything. NULL is ignored. */
void demo_world_destroy(demo_world_t *d);

/* The underlying world (for tracing, schedule output, statistics). */
weft_world_t *demo_world_weft(demo_world_t *d);

/* The resolved configuration. */
const demo_config_t *demo_world_config(const demo_world_t *d);

/* Run one frame (fixed dt = 1/60 s). Errors: those of weft_world_progress. */
weft_result_t demo_world_frame(demo_world_t *d);

/* Hash of the whole simulation state: weft_world_hash(), which covers the hierarchy's nodes
 * (local transforms, links, world matrices) through its module part. Equal for equal states,
 * whatever the worker count. */
uint64_t demo_world_hash(demo_world_t *d);

/* The systems in registration order; *count receives their number. */
const demo_system_info_t *demo_world_systems(const demo_world_t *d, uint32_t *count);

/* The latest published statistics. */
void demo_world_summary(demo_world_t *d, demo_summary_t *out);

#endif /* WEFT_DEMO_WORLD_H */
