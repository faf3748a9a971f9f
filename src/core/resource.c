/* resource.c: resources (weft/resource.h) — world-wide values registered like components.
 *
 * DESIGN
 * A resource is a registration record (weft__component_t) whose `resource` field holds its
 * value; its pool is never used. Taking an id from the components' id space is what lets the
 * scheduler order systems on resources with the access sets and conflict checks it already
 * has, and lets the debug access checks name it. weft__component() hides resources from every
 * per-entity path; weft__component_any() sees them (access declarations, hash, snapshots,
 * archives, names in messages). */
#include "weft/resource.h"

#include <string.h>

#include "access.h"
#include "world.h"

/* The natural alignment of `size` (up to 16), as for components. */
static size_t natural_align(size_t size) {
    size_t a = 1;
    while (a < 16u && size % (a * 2u) == 0) {
        a *= 2u;
    }
    return a;
}

static weft__component_t *resource_of(const weft_world_t *world, weft_component_t r) {
    weft__component_t *comp = weft__component_any(world, r.id);
    return comp && comp->resource ? comp : NULL;
}

weft_result_t weft_resource_register(weft_world_t *world, const weft_resource_desc_t *desc,
                                     weft_component_t *out) {
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(out != NULL && desc != NULL && desc->_canary == 0, world->log, WEFT_EINVAL,
                   "weft_resource_register: desc or out is NULL, or desc not zero-initialised");
    out->id = 0;
    WEFT__CONTRACT(desc->name && desc->name[0] && strlen(desc->name) <= WEFT_COMPONENT_NAME_MAX,
                   world->log, WEFT_EINVAL, "weft_resource_register: name must be 1..%u bytes",
                   WEFT_COMPONENT_NAME_MAX);
    size_t align = desc->align ? desc->align : natural_align(desc->size);
    WEFT__CONTRACT(desc->size > 0 && desc->size <= UINT32_MAX / 2u && (align & (align - 1u)) == 0 &&
                       align <= WEFT_COMPONENT_MAX_ALIGN && desc->size % align == 0,
                   world->log, WEFT_EINVAL,
                   "weft_resource_register: '%s': size %zu / align %zu (size > 0, a multiple of "
                   "a power-of-two align <= %u)",
                   desc->name, desc->size, align, WEFT_COMPONENT_MAX_ALIGN);
    weft_component_t known = weft_component_lookup(world, desc->name);
    if (known.id != 0) {
        const weft__component_t *k = weft__component_any(world, known.id);
        if (!k->resource || k->pool.size != desc->size || k->pool.align != align) {
            return WEFT__FAIL(
                world->log, WEFT_ECONFLICT,
                "weft_resource_register: '%s' is already registered as %s", desc->name,
                k->resource ? "a resource of another size or alignment" : "a component");
        }
        *out = known;
        return WEFT_OK;
    }
    /* The registration itself is a component's (id, name, hooks none); then the value. */
    weft_component_t id;
    weft_component_desc_t cd = {.name = desc->name, .size = desc->size, .align = align};
    unsigned char *value = weft__alloc(world, desc->size, align);
    if (value == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_resource_register: out of memory");
    }
    weft_result_t r = weft_component_register(world, &cd, &id);
    if (r != WEFT_OK) {
        weft__free(world, value, desc->size);
        return r;
    }
    if (desc->initial) {
        memcpy(value, desc->initial, desc->size);
    } else {
        memset(value, 0, desc->size);
    }
    world->components[id.id]->resource = value;
    *out = id;
    return WEFT_OK;
}

const void *weft_resource_get(const weft_world_t *world, weft_component_t r) {
    WEFT__NONNULL(world, NULL);
    WEFT__ACCESS(world, r.id, WEFT__ACCESS_READ);
    const weft__component_t *comp = resource_of(world, r);
    return comp ? comp->resource : NULL;
}

void *weft_resource_get_mut(weft_world_t *world, weft_component_t r) {
    WEFT__NONNULL(world, NULL);
    WEFT__ACCESS(world, r.id, WEFT__ACCESS_WRITE);
    const weft__component_t *comp = resource_of(world, r);
    return comp ? comp->resource : NULL;
}

weft_result_t weft_resource_set(weft_world_t *world, weft_component_t r, const void *value) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__CONTRACT(value != NULL, world->log, WEFT_EINVAL, "weft_resource_set: value is NULL");
    weft_result_t a = weft__access_test(world, r.id, WEFT__ACCESS_WRITE);
    if (a != WEFT_OK) {
        return a;
    }
    weft__component_t *comp = resource_of(world, r);
    if (!comp) {
        return WEFT__FAIL(world->log, WEFT_EINVAL, "weft_resource_set: id %u is not a resource",
                          r.id);
    }
    memcpy(comp->resource, value, comp->pool.size);
    return WEFT_OK;
}

bool weft_resource_is(const weft_world_t *world, weft_component_t r) {
    WEFT__NONNULL(world, false);
    return resource_of(world, r) != NULL;
}
