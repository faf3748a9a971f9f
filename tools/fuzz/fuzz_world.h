/* fuzz_world.h: the component set shared by the archive fuzz target and the corpus
 * generator (and mirrored by tests/archive/archive_fixture.h), so seed archives load. */
#ifndef WEFT_FUZZ_WORLD_H
#define WEFT_FUZZ_WORLD_H

#include "weft.h"
#include "weft/hierarchy.h"

enum { FZ_POS, FZ_VEL, FZ_REF, FZ_TAG, FZ_PAIR, FZ_COUNT };

/* Create an inline world with Position, Velocity (12 bytes), Ref (entity field at 0), Tag
 * (no data), Pair (entity fields at 8 and 16, schema 3), a 16-byte resource Settings, the
 * hierarchy's components and a
 * Position+Velocity group, reporting through `logger` (NULL: the default).
 * Returns NULL on failure. */
static inline weft_world_t *fz_world(weft_component_t c[FZ_COUNT], const weft_logger_t *logger) {
    weft_world_t *w;
    weft_world_desc_t desc = {.execution = WEFT_EXECUTION_INLINE, .entity_limit = 1u << 20};
    if (logger) {
        desc.logger = *logger;
    }
    if (weft_world_create(&desc, &w) != WEFT_OK) {
        return NULL;
    }
    const weft_component_desc_t descs[FZ_COUNT] = {
        {.name = "Position", .size = 12},
        {.name = "Velocity", .size = 12},
        {.name = "Ref", .size = 16, .entity_field_count = 1, .entity_fields = {0}},
        {.name = "Tag"},
        {.name = "Pair",
         .size = 24,
         .entity_field_count = 2,
         .entity_fields = {8, 16},
         .version = 3},
    };
    for (int i = 0; i < FZ_COUNT; ++i) {
        if (weft_component_register(w, &descs[i], &c[i]) != WEFT_OK) {
            weft_world_destroy(w);
            return NULL;
        }
    }
    weft_component_t settings; /* a resource: whole-world archives carry a resource section */
    uint64_t init[2] = {0x5e771465u, 3};
    weft_resource_desc_t rd = {.name = "Settings", .size = sizeof init, .initial = init};
    if (weft_resource_register(w, &rd, &settings) != WEFT_OK) {
        weft_world_destroy(w);
        return NULL;
    }
    weft_group_t g;
    if (weft_hier_components(w, NULL) != WEFT_OK ||
        weft_group_create(w, &(weft_group_desc_t){.components = {c[FZ_POS], c[FZ_VEL]}}, &g) !=
            WEFT_OK) {
        weft_world_destroy(w);
        return NULL;
    }
    return w;
}

#endif /* WEFT_FUZZ_WORLD_H */
