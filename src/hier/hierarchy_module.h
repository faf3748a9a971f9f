/* hierarchy_module.h: the hierarchy's module callbacks (weft/module.h; private to src/hier).
 *
 * DESIGN: the hierarchy's nodes live in its own store, outside the pools, so the world
 * reaches them only through the public module interface: hierarchy.c registers
 * weft__hier_module_desc (with its state as `user` and its shutdown) when it creates the
 * world's hierarchy state. The world hash, snapshots and archives call these callbacks and
 * know nothing of the hierarchy. */
#ifndef WEFT_SRC_HIERARCHY_MODULE_H
#define WEFT_SRC_HIERARCHY_MODULE_H

#include "src/core/world.h"
#include "weft/module.h"

#define WEFT__HIER_MODULE_NAME "weft.hierarchy" /* the module's name (hash part, sections) */
#define WEFT__HIER_NODE_TAG "weft.hier_node"    /* the tag every node carries */

/* The hierarchy's callbacks: hash (every node in entity order), snapshot capture and restore
 * (every node in update order, rebuilt aside and swapped in at commit) and archive save and
 * load (nodes parents first, inserted at prepare, values written at commit). `user` is the
 * world's struct weft_hier; hierarchy.c sets it and `shutdown`. */
extern const weft_module_desc_t weft__hier_module_desc;

#endif /* WEFT_SRC_HIERARCHY_MODULE_H */
