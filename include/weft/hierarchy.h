/* weft/hierarchy.h: the scene hierarchy — local transforms, parent links with the parent's
 * inverse bind matrix, world matrices, and the update that computes them, run as a system.
 *
 * Model. A node is an entity added with weft_hier_add(). Each node has a local transform
 * (weft_transform_t), a parent link (weft_parent_link_t: parent entity, 0 for roots, and the
 * inverse of the parent's world matrix taken at attach time) and a world matrix:
 *
 *     root:  world = compose(local)
 *     child: world = parent_world * compose(local)                   (bind bitwise identity)
 *     child: world = parent_world * (inverse_bind * compose(local))  (any other bind)
 *
 * evaluated exactly in that order with weft_transform_matrix() and weft_mat4_mul() (no fused
 * multiply-add), so a caller can recompute any world matrix bit for bit. The identity case
 * is the common one (weft_hier_attach_ex with WEFT_HIER_KEEP_LOCAL, or a parent whose world
 * was the identity) and costs one multiply instead of two.
 *
 * Change tracking. An update recomputes only nodes whose local transform, parent or bind
 * changed since the previous update (weft_hier_local, add, attach, detach, the destroy that
 * detaches children, restore and load mark them) and their descendants; every other node
 * keeps its bits, which equal what a recomputation would give. A static hierarchy costs one
 * scan of a byte per node. weft_hier_invalidate() marks every node for a full update. The
 * store caches each node's local matrix with its bind folded in (64 bytes per node).
 *
 * World matrices are written only by the update (weft_hier_update() or the hierarchy system);
 * between updates they hold the values of the last one (a new node starts with
 * compose(local)). Attach binds to, and detach bakes from, those stored values.
 *
 * Order. Nodes live in an ordered store where every parent precedes all of its children, so
 * one forward pass computes every world matrix. This holds after every call returns, for any
 * call order (attach of a whole subtree under a later node moves that subtree behind it:
 * O(subtree), never O(whole hierarchy)); weft_hier_order() shows it. The level-parallel pass
 * regroups nodes by depth first (O(n), only after structural changes) and runs each wide
 * level as a weft_parallel_for; both passes give bit-identical results at every worker count.
 *
 * Components. The data lives in the hierarchy's own ordered store and is reached with
 * weft_hier_local / weft_hier_world / weft_hier_link. weft_hier_components() registers four
 * components: `node` (a tag every node carries, so queries can select nodes and destroying
 * the entity removes the node) and `local`, `world`, `link`, which are module-owned
 * (weft/module.h): their pools stay empty and the per-entity component calls reach the
 * store:
 *   - weft_component_get / _has on any of the three read the node's data (has: e is a node);
 *   - weft_component_set and weft_component_get_mut on `local` write the node's local
 *     transform and mark it changed, as weft_hier_local does; set on an entity that is not a
 *     node is WEFT_ESTATE (use weft_hier_add);
 *   - set / get_mut on `world` or `link` (WEFT_ESTATE; NULL for get_mut), and every call that
 *     would add or remove a row of the three (weft_component_add, _remove, _remove_ordered,
 *     the bulk calls, weft_cmd_add/_set/_remove) are refused with WEFT_ESTATE and a message
 *     naming the hierarchy call to use; nothing changes;
 *   - a query term or exclude on one of the three is WEFT_EINVAL (their pools hold no rows):
 *     iterate `node` and read the data with weft_component_get.
 * Systems name the three in their reads/writes declarations: a system that writes `local`
 * conflicts with the hierarchy system (which reads `local` and `link` and writes `world`),
 * so registered before it in its phase it runs before the update, and one that reads `world`
 * registered after it runs after it, at every worker count. `link` declares its entity
 * field (offset 0) like any entity reference.
 *
 * Thread: every function is main-thread only and must not run while a frame is in progress
 * (the editing calls return WEFT_ESTATE from a system in every build, and from a hook or
 * another thread in debug builds, weft/world.h; systems record attach and detach with
 * weft_hier_cmd_attach / weft_hier_cmd_detach), except the readers (get/has/parent/local/
 * world/link), which systems may call when they declared the matching access (local: read
 * or write, weft_hier_local only with write; world, link: read). */
#ifndef WEFT_HIERARCHY_H
#define WEFT_HIERARCHY_H

#include "weft/command.h"
#include "weft/component.h"
#include "weft/entity.h"
#include "weft/math.h"
#include "weft/system.h"
#include "weft/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- data --------------------------------------------------------------- >>hier_data */

/* A node's parent link. */
typedef struct weft_parent_link {
    weft_entity_t parent;     /* parent entity; 0 for a root */
    weft_mat4_t inverse_bind; /* inverse of the parent's world matrix when attached; the
                                 identity for a root */
} weft_parent_link_t;

WEFT_STATIC_ASSERT(sizeof(weft_parent_link_t) == 72, "parent link: entity + mat4, no padding");

/* The hierarchy's component ids in a world. */
typedef struct weft_hier_components {
    weft_component_t node;  /* "weft.hier_node": tag carried by every node */
    weft_component_t local; /* "weft.local_transform": weft_transform_t (store-backed) */
    weft_component_t world; /* "weft.world_matrix": weft_mat4_t (store-backed) */
    weft_component_t link;  /* "weft.parent_link": weft_parent_link_t (store-backed) */
} weft_hier_components_t;

/* Register (or find) the hierarchy's components and fill *out. Called implicitly by every
 * function below that needs them. All or nothing: on failure (reported through the world's
 * logger) no component is registered and the world is unchanged.
 * Errors: WEFT_ENOMEM, WEFT_ECAPACITY (too many components or world modules), those of
 * weft_component_register (WEFT_ECONFLICT: a component of one of these names exists with
 * another layout). Thread: main, outside frames. */
WEFT_API weft_result_t weft_hier_components(weft_world_t *world, weft_hier_components_t *out);

/* ---- nodes -------------------------------------------------------------- >>hier_nodes */

/* Make the live entity `e` a root node with local transform *local (NULL: identity) and
 * world matrix compose(local); it gets the `node` tag.
 * Errors: WEFT_ESTALE (e not alive), WEFT_EEXIST (already a node; logged at
 * WEFT_LOG_DEBUG only), WEFT_ENOMEM (nothing
 * changed). Thread: main. */
WEFT_API weft_result_t weft_hier_add(weft_world_t *world, weft_entity_t e,
                                     const weft_transform_t *local);

/* True when e is a live node. Thread: main, or a system that declared `local` access. */
WEFT_API bool weft_hier_has(const weft_world_t *world, weft_entity_t e);

/* Attach `child` (with its whole subtree) under `parent`. The link stores the inverse of the
 * parent's current world matrix; a child that already had a parent first gets its current
 * world matrix baked into its local transform, so re-parenting does not move it in the world
 * (up to rounding). Order is kept for any call order.
 * Errors (nothing changes): WEFT_ESTALE (a handle is not alive), WEFT_ENOENT (not a node),
 * WEFT_ECYCLE (parent is the child itself or one of its descendants), WEFT_EINVAL (the
 * parent's world matrix is singular), WEFT_ENOMEM. Cost: O(1) when the parent precedes the
 * child in the order, else O(size of the child's subtree); plus O(depth of parent) for the
 * cycle check when the child has children. Thread: main, outside frames. */
WEFT_API weft_result_t weft_hier_attach(weft_world_t *world, weft_entity_t child,
                                        weft_entity_t parent);

/* What attach keeps of the child. */
typedef enum weft_hier_attach_mode {
    WEFT_HIER_KEEP_WORLD = 0, /* weft_hier_attach: bake, bind to the parent's inverse world;
                                 the child does not move in the world */
    WEFT_HIER_KEEP_LOCAL = 1, /* the local transform stays as it is and composes under the
                                 parent (identity bind, one multiply per update): the child
                                 moves with its new parent */
} weft_hier_attach_mode_t;

/* weft_hier_attach with a chosen mode. KEEP_LOCAL takes no inverse, so it never fails with
 * WEFT_EINVAL for a singular parent; a re-parented child keeps its local transform.
 * Errors: those of weft_hier_attach, and WEFT_EINVAL for a bad mode (nothing changes).
 * Thread: main, outside frames. */
WEFT_API weft_result_t weft_hier_attach_ex(weft_world_t *world, weft_entity_t child,
                                           weft_entity_t parent, weft_hier_attach_mode_t mode);

/* Detach `child` from its parent: its current world matrix is baked into its local transform
 * (weft_transform_from_matrix: exact up to rounding for translation-rotation-scale, shear is
 * lost), its link is reset, and it stays in place in the order, now a root. Detaching a root
 * does nothing. Errors: WEFT_ESTALE, WEFT_ENOENT (not a node). O(1). Thread: main. */
WEFT_API weft_result_t weft_hier_detach(weft_world_t *world, weft_entity_t child);

/* Record, from a system, attaching (or re-parenting) `child` under `parent` with `mode`; it
 * is applied as weft_hier_attach_ex at the phase's apply, in the deterministic command order
 * (weft/command.h). A direct structural hierarchy call from inside a system returns
 * WEFT_ESTATE in every build. At apply, a stale or non-node handle, a cycle or a singular
 * parent skip the command (reported as the direct call reports them); running out of memory
 * fails the apply as a failed command does, with the hierarchy unchanged.
 * Errors (nothing recorded): WEFT_EINVAL (NULL cmd, bad mode, a placeholder handle: they are
 * not resolved here, attach created entities in a later frame), and those of weft_cmd_call.
 * Thread: the system's job, with its own buffer. */
WEFT_API weft_result_t weft_hier_cmd_attach(weft_cmd_t *cmd, weft_entity_t child,
                                            weft_entity_t parent, weft_hier_attach_mode_t mode);

/* Record detaching `child` (applied as weft_hier_detach; see weft_hier_cmd_attach). */
WEFT_API weft_result_t weft_hier_cmd_detach(weft_cmd_t *cmd, weft_entity_t child);

typedef enum weft_hier_destroy {
    WEFT_HIER_DESTROY_DETACH = 0,  /* default: children are detached (baked), then e goes */
    WEFT_HIER_DESTROY_SUBTREE = 1, /* e and all its descendants are destroyed */
} weft_hier_destroy_t;

/* Destroy the node entity `e` (weft_entity_destroy) after taking it out of the hierarchy as
 * `mode` says. Subtree entities are destroyed parents first. Destroying a node's entity with
 * plain weft_entity_destroy() also works and behaves as WEFT_HIER_DESTROY_DETACH.
 * Errors: WEFT_ESTALE, WEFT_ENOENT (not a node), WEFT_EINVAL (bad mode), WEFT_ENOMEM
 * (nothing changed). Thread: main, outside frames. */
WEFT_API weft_result_t weft_hier_destroy(weft_world_t *world, weft_entity_t e,
                                         weft_hier_destroy_t mode);

/* ---- reading ------------------------------------------------------------ >>hier_read */

/* e's parent, or 0 for roots, non-nodes and stale handles. */
WEFT_API weft_entity_t weft_hier_parent(const weft_world_t *world, weft_entity_t e);

/* Number of ancestors of e (0 for roots and non-nodes). O(depth). */
WEFT_API uint32_t weft_hier_depth(const weft_world_t *world, weft_entity_t e);

/* Number of nodes. */
WEFT_API uint32_t weft_hier_count(const weft_world_t *world);

/* Copy up to `cap` node entities in update order (every parent before all its children)
 * into out; returns the node count. Thread: main. */
WEFT_API uint32_t weft_hier_order(const weft_world_t *world, weft_entity_t *out, uint32_t cap);

/* e's local transform, writable (changes take effect at the next update); NULL when e is
 * not a node. Valid until the next structural hierarchy call (add/attach/destroy/update).
 * Marks e changed, so the next update recomputes its subtree: systems call it only with
 * `local` declared as a write (use weft_hier_local_read to read). */
WEFT_API weft_transform_t *weft_hier_local(weft_world_t *world, weft_entity_t e);

/* e's local transform, read only (marks nothing); NULL when e is not a node. Validity as
 * above. Thread: main, or a system that declared `local` access (read or write). */
WEFT_API const weft_transform_t *weft_hier_local_read(const weft_world_t *world, weft_entity_t e);

/* e's world matrix as of the last update; NULL when e is not a node. Validity as above. */
WEFT_API const weft_mat4_t *weft_hier_world(const weft_world_t *world, weft_entity_t e);

/* e's parent link; NULL when e is not a node. Validity as above. */
WEFT_API const weft_parent_link_t *weft_hier_link(const weft_world_t *world, weft_entity_t e);

/* ---- update ------------------------------------------------------------- >>hier_update */

typedef enum weft_hier_pass {
    WEFT_HIER_PASS_AUTO = 0,       /* default: LEVELS when some level holds >= 8192 nodes and
                                      the hierarchy >= 65536, else SEQUENTIAL; the choice
                                      depends on the shape only, never on the worker count */
    WEFT_HIER_PASS_SEQUENTIAL = 1, /* one forward pass on the calling thread */
    WEFT_HIER_PASS_LEVELS = 2,     /* level by level; levels of >= 8192 nodes are split into
                                      ranges of 4096 over the world's job system. When no
                                      level is that wide, nothing would be split and the
                                      SEQUENTIAL pass runs instead, without regrouping the
                                      nodes by depth (that order only slows a forward walk;
                                      weft_hier_stats reports SEQUENTIAL) */
} weft_hier_pass_t;

/* Mark every node's world matrix for recomputation, so that the next update recomputes all
 * of them (a full update). Each node's local matrix (bind folded in) is cached and
 * recomposed only when its local transform, parent or bind changed, so a full update is one
 * multiply per child node. O(1) (the update does the walk). Thread: main, outside frames. */
WEFT_API void weft_hier_invalidate(weft_world_t *world);

/* Bring every world matrix up to date now: nodes changed since the last update and their
 * descendants are recomputed (see "Change tracking"), the others kept. Results are
 * bit-identical for every pass and worker count. Errors: WEFT_EINVAL (bad pass),
 * WEFT_ENOMEM (LEVELS could not regroup; nothing computed). Thread: main, outside frames (inside a frame, the system does this). */
WEFT_API weft_result_t weft_hier_update(weft_world_t *world, weft_hier_pass_t pass);

typedef struct weft_hier_system_desc {
    const char *name;      /* NULL: "weft.hierarchy" */
    uint32_t phase;        /* 0: the first phase */
    weft_hier_pass_t pass; /* 0: automatic */
    uint32_t _canary;      /* must stay 0 */
} weft_hier_system_desc_t;

/* Register the hierarchy update as a system reading `local` and `link` and writing `world`
 * (no iteration terms: one job per frame, which itself may fan out level by level). Systems
 * that touch none of those run beside it. `desc` may be NULL. Errors: those of
 * weft_system_register. Thread: main, outside frames. */
WEFT_API weft_result_t weft_hier_register_system(weft_world_t *world,
                                                 const weft_hier_system_desc_t *desc,
                                                 weft_system_t *out);

/* ---- statistics ---------------------------------------------------------- >>hier_stats */

typedef struct weft_hier_stats {
    uint32_t nodes;        /* live nodes */
    uint32_t rows;         /* rows in the store (nodes + holes left by moves and removals) */
    uint32_t levels;       /* depth levels of the last regrouping (0 if none is current) */
    bool levels_current;   /* the level grouping is valid (a LEVELS pass that splits levels
                              would not regroup first) */
    uint64_t moved_rows;   /* rows moved by attaches that had to move a subtree */
    uint64_t regroups;     /* level regroupings done */
    weft_hier_pass_t last; /* pass used by the last update (0: none yet) */
    uint32_t recomputed;   /* nodes the last update recomputed (0: nothing had changed) */
} weft_hier_stats_t;

/* Fill *out. Thread: main. */
WEFT_API void weft_hier_stats(const weft_world_t *world, weft_hier_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_HIERARCHY_H */
