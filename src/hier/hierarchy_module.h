/* hierarchy_module.h: the hierarchy's part in world-wide operations (private to src/hier).
 *
 * DESIGN: the hierarchy's nodes live in its own store, outside the pools, so the world
 * reaches them through a module part (weft__module_t, src/core/world.h) that hierarchy.c
 * registers when it creates the world's hierarchy state: the world hash and snapshots call
 * it and know nothing of the hierarchy. */
#ifndef WEFT_SRC_HIERARCHY_MODULE_H
#define WEFT_SRC_HIERARCHY_MODULE_H

#include "src/core/world.h"

/* The hierarchy's module part: hash (every node in entity order) and snapshot capture and
 * restore (every node in update order, rebuilt aside and swapped in at commit). */
extern const weft__module_t weft__hier_module;

#endif /* WEFT_SRC_HIERARCHY_MODULE_H */
