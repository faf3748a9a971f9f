/* hierarchy.c: the public hierarchy API (weft/hierarchy.h) — binds the ordered store to a
 * world: entity liveness, the `node` tag and its remove hook, the world's allocator and job
 * system, and the update registered as a system.
 *
 * DESIGN: one struct weft_hier per world, created on first use and registered as the user
 * pointer of the hierarchy's module (weft/module.h, hierarchy_module.h), whose shutdown frees
 * it; every call finds it again by the module's name. The store's allocator forwards to weft__alloc so the world's
 * heap_bytes stays exact. Every structural call validates handles here (stale: ESTALE), then
 * lets the store validate the rest; the store changes nothing on error. Destroying a node's
 * entity by any route fires the `node` tag's on_remove hook, which takes the node out of the
 * store (children detached, baked); weft_hier_destroy() removes from the store first, so the
 * hook then finds nothing to do. Thread model: main thread outside frames for every mutation;
 * the system's run function is the only code that touches the store inside a frame, and it
 * moves no data (see weft__hstore_update), so declared readers may run beside it. */
#include "weft/hierarchy.h"

#include <string.h>

#include "hierarchy_module.h"
#include "hierarchy_store.h"
#include "src/core/world.h"

_Static_assert(sizeof(weft__hentity_t) == sizeof(weft_entity_t), "store entity = weft_entity_t");
_Static_assert(sizeof(weft__hlink_t) == sizeof(weft_parent_link_t), "store link = public link");
_Static_assert(offsetof(weft__hlink_t, inverse_bind) == offsetof(weft_parent_link_t, inverse_bind),
               "store link = public link");

struct weft_hier {
    weft__hstore_t store;       /* the ordered nodes and their data; other modules reach
                                   it through weft__hier_store() */
    weft_hier_components_t ids; /* registered component ids (valid when `registered`) */
    bool registered;            /* ids are filled */
    weft_hier_pass_t pass;      /* pass of the registered system (0: auto) */
    weft_hier_pass_t last;      /* pass used by the last update */
};

/* ---- module state -------------------------------------------------------- >>hier_state */

static void *store_alloc(size_t size, size_t align, void *user) {
    return weft__alloc(user, size, align);
}

static void store_free(void *ptr, size_t size, void *user) { weft__free(user, ptr, size); }

/* The world's hierarchy state: the user pointer of its module, NULL before first use. The
 * world keeps it (world->hier) while the module is registered: no lookup by name. */
static struct weft_hier *hier_get(const weft_world_t *world) { return world->hier; }

/* The module's shutdown: free the store and the state. */
static void hier_fini(weft_world_t *world, void *user) {
    struct weft_hier *h = user;
    if (world->hier == h) {
        world->hier = NULL;
    }
    weft__hstore_fini(&h->store);
    weft__free(world, h, sizeof(*h));
}

/* The world's hierarchy state into *out, created on first use (*created tells). Errors
 * (reported, nothing changed): WEFT_ENOMEM, or those of weft__world_add_module. */
static weft_result_t hier_state(weft_world_t *world, struct weft_hier **out, bool *created) {
    *created = false;
    *out = hier_get(world);
    if (*out != NULL) {
        return WEFT_OK;
    }
    struct weft_hier *h = weft__alloc(world, sizeof(*h), _Alignof(struct weft_hier));
    if (h == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "hierarchy: out of memory");
    }
    memset(h, 0, sizeof(*h));
    weft_module_desc_t desc = weft__hier_module_desc;
    desc.user = h;
    desc.shutdown = hier_fini;
    weft_result_t r = weft__world_add_module(world, &desc);
    if (r != WEFT_OK) {
        weft__free(world, h, sizeof(*h));
        return r;
    }
    world->hier = h;
    const weft_allocator_t alloc = {store_alloc, store_free, world};
    weft__hstore_init(&h->store, &alloc, world->log);
    *out = h;
    *created = true;
    return WEFT_OK;
}

/* Undo hier_state's creation (the state is still empty): take the module back. */
static void hier_state_drop(weft_world_t *world) {
    struct weft_hier *h = hier_get(world);
    weft__world_drop_module(world, WEFT__HIER_MODULE_NAME);
    if (h != NULL) {
        hier_fini(world, h); /* clears world->hier */
    }
}

/* Undo the component registrations made since `before` components existed. Only the
 * caller registered in between (main thread, outside hooks), and a record registered
 * moments ago has no instance (a failed weft_component_add leaves at most reserved pool
 * space, freed here), belongs to no group and (no MULTI flag here) has no side storage, so
 * freeing it puts the world back as it was. A signature interned by that failed add may
 * stay cached: it is a set of ids, and no entity has it. */
static void unregister_since(weft_world_t *world, uint32_t before) {
    while (world->component_count > before) {
        const uint32_t id = world->component_count;
        weft__pool_fini(world, &world->components[id]->pool);
        weft__free(world, world->components[id], sizeof(*world->components[id]));
        world->components[id] = NULL;
        world->component_count = id - 1u;
    }
}

/* The store for read-only calls: NULL when nothing was ever added. */
static const weft__hstore_t *store_of(const weft_world_t *world) {
    const struct weft_hier *h = hier_get(world); /* one module lookup, not two */
    return h != NULL ? &h->store : NULL;
}

/* on_remove of the `node` tag: the entity is being destroyed (or the tag removed). */
static void node_removed(weft_world_t *world, weft_entity_t e, weft_component_t c, void *ptr,
                         void *user) {
    (void)c;
    (void)ptr;
    (void)user;
    struct weft_hier *h = hier_get(world);
    if (h != NULL && weft__hstore_row(&h->store, e) != WEFT__HROW_NONE) {
        (void)weft__hstore_remove(&h->store, e, false, NULL, NULL, world->log);
    }
}

/* ---- the components as the world sees them ------------------------------ >>hier_owned */

/* `local`, `world` and `link` are module-owned (weft/module.h): their pools stay empty and
 * the per-entity component calls reach the store through these callbacks. */

static uint32_t owned_row(const weft_world_t *world, weft_entity_t e) {
    const struct weft_hier *h = hier_get(world);
    return h != NULL ? weft__hstore_row(&h->store, e) : WEFT__HROW_NONE;
}

static const void *owned_local(const weft_world_t *world, void *user, weft_entity_t e) {
    (void)user;
    return weft_hier_local_read(world, e);
}

static const void *owned_world(const weft_world_t *world, void *user, weft_entity_t e) {
    (void)user;
    return weft_hier_world(world, e);
}

static const void *owned_link(const weft_world_t *world, void *user, weft_entity_t e) {
    (void)user;
    return weft_hier_link(world, e);
}

/* get_mut on `local`: weft_hier_local (marks the node changed). */
static void *owned_local_mut(weft_world_t *world, void *user, weft_entity_t e) {
    (void)user;
    return weft_hier_local(world, e);
}

/* set on `local`: a node's local transform, marked changed; an entity that is not a node is
 * refused (a node is made by weft_hier_add, which also places it in the order). */
static weft_result_t owned_local_set(weft_world_t *world, void *user, weft_entity_t e,
                                     const void *value) {
    (void)user;
    if (owned_row(world, e) == WEFT__HROW_NONE) {
        return WEFT__FAIL(world->log, WEFT_ESTATE,
                          "weft_component_set: entity 0x%llx is not a hierarchy node; make it "
                          "one with weft_hier_add(world, e, &local)",
                          (unsigned long long)e);
    }
    memcpy(weft_hier_local(world, e), value, sizeof(weft_transform_t));
    return WEFT_OK;
}

/* The row views of the three (weft/module.h): the store's rows as they stand, holes
 * included, its entity map as the lookup table; `local` rows handed out for writing get
 * the node's changed bits, as weft_hier_local sets them. */
static void owned_view(const weft__hstore_t *s, weft_module_view_t *out, void *data) {
    *out = (weft_module_view_t){0};
    if (s != NULL) {
        *out = (weft_module_view_t){.count = s->count,
                                    .holes = s->holes != 0,
                                    .entities = s->rows.ent,
                                    .data = data,
                                    .map = (const uint32_t *const *)s->map.pages,
                                    .map_pages = s->map.page_count,
                                    .map_shift = WEFT__HMAP_PAGE_BITS};
    }
}

static void owned_local_view(const weft_world_t *world, void *user, weft_module_view_t *out) {
    (void)user;
    const weft__hstore_t *s = store_of(world);
    owned_view(s, out, s != NULL ? s->rows.local : NULL);
    out->marks = s != NULL ? s->rows.flags : NULL;
    out->mark_bits = WEFT__HFLAG_CHANGED;
}

static void owned_world_view(const weft_world_t *world, void *user, weft_module_view_t *out) {
    (void)user;
    const weft__hstore_t *s = store_of(world);
    owned_view(s, out, s != NULL ? s->rows.world : NULL);
}

static void owned_link_view(const weft_world_t *world, void *user, weft_module_view_t *out) {
    (void)user;
    const weft__hstore_t *s = store_of(world);
    owned_view(s, out, s != NULL ? s->rows.link : NULL);
}

/* Hand the three data components to the hierarchy module. All or nothing. */
static weft_result_t own_components(weft_world_t *world, const weft_hier_components_t *ids) {
    const weft_module_component_desc_t descs[3] = {
        {.get = owned_local,
         .get_mut = owned_local_mut,
         .set = owned_local_set,
         .view = owned_local_view,
         .refuse = "hierarchy nodes are added with weft_hier_add and removed with "
                   "weft_hier_destroy"},
        {.get = owned_world,
         .view = owned_world_view,
         .refuse = "world matrices are written only by the hierarchy update (weft_hier_update "
                   "or its system); write `local` instead"},
        {.get = owned_link,
         .view = owned_link_view,
         .refuse = "parent links change only through weft_hier_attach / weft_hier_detach "
                   "(weft_hier_cmd_attach / _detach from systems)"},
    };
    const weft_component_t cs[3] = {ids->local, ids->world, ids->link};
    for (uint32_t i = 0; i < 3; i++) {
        const weft_result_t r = weft_module_own_component(world, cs[i], &descs[i]);
        if (r != WEFT_OK) {
            while (i-- > 0) { /* take back the ones owned here */
                memset(&world->components[cs[i].id]->owned, 0,
                       sizeof(world->components[cs[i].id]->owned));
            }
            return r;
        }
    }
    return WEFT_OK;
}

/* Take back own_components (components that survive a rollback must not stay owned). */
static void disown_components(weft_world_t *world, const weft_hier_components_t *ids) {
    const weft_component_t cs[3] = {ids->local, ids->world, ids->link};
    for (uint32_t i = 0; i < 3; i++) {
        weft__component_t *comp = weft__component(world, cs[i].id);
        if (comp != NULL) {
            memset(&comp->owned, 0, sizeof(comp->owned));
        }
    }
}

/* What a call that set the hierarchy up (state and components) takes back when it fails
 * later, so that the failed call leaves the world as it found it. */
typedef struct setup_undo {
    uint32_t before; /* components registered before the call */
    bool created;    /* the call created the hierarchy state */
    bool registered; /* the call registered the hierarchy's components */
} setup_undo_t;

/* Take back what the call recorded in *u did (nothing when it found everything set up). */
static void setup_rollback(weft_world_t *world, const setup_undo_t *u) {
    if (u->registered) {
        disown_components(world, &hier_get(world)->ids);
        hier_get(world)->registered = false;
    }
    unregister_since(world, u->before); /* a no-op when the call registered nothing */
    if (u->created) {
        hier_state_drop(world);
    }
}

/* weft_hier_components, recording in *u what it did for a caller that may fail later.
 * All or nothing by itself: on its own failure, it takes back what it did. */
static weft_result_t setup(weft_world_t *world, weft_hier_components_t *out, setup_undo_t *u) {
    *u = (setup_undo_t){.before = world->component_count};
    struct weft_hier *h;
    weft_result_t r = hier_state(world, &h, &u->created);
    if (r != WEFT_OK) {
        return r;
    }
    if (!h->registered) {
        /* On a failure, the components registered here and the state created here are
         * taken back (each failure was reported by its callee). */
        weft_hier_components_t ids;
        r = weft_component_register(
            world, &(weft_component_desc_t){.name = "weft.hier_node", .on_remove = node_removed},
            &ids.node);
        if (r == WEFT_OK) {
            r = weft_component_register(
                world,
                &(weft_component_desc_t){.name = "weft.local_transform",
                                         .size = sizeof(weft_transform_t),
                                         .align = _Alignof(weft_transform_t)},
                &ids.local);
        }
        if (r == WEFT_OK) {
            r = weft_component_register(world,
                                        &(weft_component_desc_t){.name = "weft.world_matrix",
                                                                 .size = sizeof(weft_mat4_t),
                                                                 .align = _Alignof(weft_mat4_t)},
                                        &ids.world);
        }
        if (r == WEFT_OK) {
            r = weft_component_register(
                world,
                &(weft_component_desc_t){.name = "weft.parent_link",
                                         .size = sizeof(weft_parent_link_t),
                                         .align = _Alignof(weft_parent_link_t),
                                         .entity_field_count = 1,
                                         .entity_fields = {offsetof(weft_parent_link_t, parent)}},
                &ids.link);
        }
        if (r == WEFT_OK) {
            r = own_components(world, &ids); /* all or nothing */
        }
        if (r != WEFT_OK) {
            setup_rollback(world, u); /* u->registered is still false */
            return r;
        }
        h->ids = ids;
        h->registered = true;
        u->registered = true;
    }
    if (out != NULL) {
        *out = h->ids;
    }
    return WEFT_OK;
}

weft_result_t weft_hier_components(weft_world_t *world, weft_hier_components_t *out) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    setup_undo_t u;
    return setup(world, out, &u);
}

/* ---- structure ----------------------------------------------------------- >>hier_structure */

/* Structural hierarchy calls from a system body would race with the hierarchy system and
 * with readers; systems record them instead (weft_hier_cmd_attach/_detach). Checked in every
 * build through the scheduler's in_systems flag (src/core/world.h); debug builds also catch
 * other threads and hooks in WEFT__MAIN_CALL. */
#define HIER_NOT_IN_SYSTEM(world, fn)                                            \
    do {                                                                         \
        if ((world)->in_systems) {                                               \
            return WEFT__FAIL((world)->log, WEFT_ESTATE,                         \
                              "%s: called from inside a system; record it with " \
                              "weft_hier_cmd_attach / weft_hier_cmd_detach",     \
                              fn);                                               \
        }                                                                        \
    } while (0)

static weft_result_t check_alive(const weft_world_t *world, weft_entity_t e, const char *fn) {
    if (!weft_entity_is_alive(world, e)) {
        return WEFT__FAIL(world->log, WEFT_ESTALE, "%s: entity 0x%llx is null or stale", fn,
                          (unsigned long long)e);
    }
    return WEFT_OK;
}

weft_result_t weft_hier_add(weft_world_t *world, weft_entity_t e, const weft_transform_t *local) {
    WEFT__MAIN_CALL(world);
    HIER_NOT_IN_SYSTEM(world, "weft_hier_add");
    weft_result_t r = check_alive(world, e, "weft_hier_add");
    if (r != WEFT_OK) {
        return r;
    }
    weft_hier_components_t ids;
    setup_undo_t undo;
    if ((r = setup(world, &ids, &undo)) != WEFT_OK) {
        return r;
    }
    struct weft_hier *h = hier_get(world);
    if (weft__hstore_row(&h->store, e) != WEFT__HROW_NONE) {
        return WEFT__NOTE(world->log, WEFT_EEXIST, "weft_hier_add: entity 0x%llx is already a node",
                          (unsigned long long)e);
    }
    const weft_transform_t identity = weft_transform_identity();
    r = weft__hstore_add(&h->store, e, local != NULL ? local : &identity);
    if (r == WEFT_OK) {
        /* The tag second: if it fails (leaving e as it was), the node is taken back out. */
        r = weft_component_add(world, e, ids.node, NULL);
        if (r != WEFT_OK) {
            (void)weft__hstore_remove(&h->store, e, false, NULL, NULL, NULL);
        }
    }
    if (r != WEFT_OK) { /* a first add that fails also takes back the set-up it did */
        setup_rollback(world, &undo);
    }
    return r;
}

bool weft_hier_has(const weft_world_t *world, weft_entity_t e) {
    WEFT__NONNULL(world, false);
    const weft__hstore_t *s = store_of(world);
    return s != NULL && weft__hstore_row(s, e) != WEFT__HROW_NONE;
}

weft_result_t weft_hier_attach(weft_world_t *world, weft_entity_t child, weft_entity_t parent) {
    return weft_hier_attach_ex(world, child, parent, WEFT_HIER_KEEP_WORLD);
}

weft_result_t weft_hier_attach_ex(weft_world_t *world, weft_entity_t child, weft_entity_t parent,
                                  weft_hier_attach_mode_t mode) {
    WEFT__MAIN_CALL(world);
    HIER_NOT_IN_SYSTEM(world, "weft_hier_attach_ex");
    if (mode != WEFT_HIER_KEEP_WORLD && mode != WEFT_HIER_KEEP_LOCAL) {
        return WEFT__FAIL(world->log, WEFT_EINVAL, "weft_hier_attach: bad mode %d", (int)mode);
    }
    weft_result_t r = check_alive(world, child, "weft_hier_attach");
    if (r == WEFT_OK) {
        r = check_alive(world, parent, "weft_hier_attach");
    }
    if (r != WEFT_OK) {
        return r;
    }
    if (hier_get(world) == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOENT, "weft_hier_attach: no hierarchy nodes yet");
    }
    return weft__hstore_attach_mode(&hier_get(world)->store, child, parent,
                                    mode == WEFT_HIER_KEEP_LOCAL ? WEFT__HATTACH_KEEP_LOCAL
                                                                 : WEFT__HATTACH_KEEP_WORLD,
                                    world->log);
}

weft_result_t weft_hier_detach(weft_world_t *world, weft_entity_t child) {
    WEFT__MAIN_CALL(world);
    HIER_NOT_IN_SYSTEM(world, "weft_hier_detach");
    weft_result_t r = check_alive(world, child, "weft_hier_detach");
    if (r != WEFT_OK) {
        return r;
    }
    if (hier_get(world) == NULL) {
        return WEFT__NOTE(world->log, WEFT_ENOENT, "weft_hier_detach: 0x%llx is not a node",
                          (unsigned long long)child);
    }
    return weft__hstore_detach(&hier_get(world)->store, child, world->log);
}

weft_result_t weft_hier_destroy(weft_world_t *world, weft_entity_t e, weft_hier_destroy_t mode) {
    WEFT__MAIN_CALL(world);
    HIER_NOT_IN_SYSTEM(world, "weft_hier_destroy");
    weft_result_t r = check_alive(world, e, "weft_hier_destroy");
    if (r != WEFT_OK) {
        return r;
    }
    if (mode != WEFT_HIER_DESTROY_DETACH && mode != WEFT_HIER_DESTROY_SUBTREE) {
        return WEFT__FAIL(world->log, WEFT_EINVAL, "weft_hier_destroy: bad mode %d", (int)mode);
    }
    if (!weft_hier_has(world, e)) {
        return WEFT__NOTE(world->log, WEFT_ENOENT, "weft_hier_destroy: 0x%llx is not a node",
                          (unsigned long long)e);
    }
    /* Both modes go through entity destruction, whose `node` hook takes each node out of
     * the store (children detached and baked). weft_entity_destroy(_n) fail only before
     * destroying anything, so an error leaves world and hierarchy unchanged. For a subtree,
     * parents are destroyed first: each child is baked on its parent's removal and then
     * destroyed itself, which costs one decomposition per node and keeps a single path. */
    if (mode == WEFT_HIER_DESTROY_DETACH) {
        return weft_entity_destroy(world, e);
    }
    const weft__hentity_t *list = NULL;
    uint32_t n = 0;
    r = weft__hstore_subtree(&hier_get(world)->store, e, &list, &n, world->log);
    if (r != WEFT_OK) {
        return r;
    }
    return weft_entity_destroy_n(world, list, n);
}

/* ---- commands ------------------------------------------------------------ >>hier_cmd */

enum { HIER_CMD_ATTACH = 1, HIER_CMD_DETACH = 2 };

/* A hierarchy command as recorded (weft_cmd_call's data). */
typedef struct hier_cmd {
    weft_entity_t child;
    weft_entity_t parent; /* attach only */
    uint32_t op;          /* HIER_CMD_* */
    uint32_t mode;        /* weft_hier_attach_mode_t, attach only */
} hier_cmd_t;

/* Apply one recorded command as the direct call. The lenient apply rules hold: a target that
 * is stale or not a node, a cycle or a singular parent (each reported by the call) skip the
 * command; only running out of memory or capacity is the apply's failure. */
static weft_result_t hier_cmd_apply(weft_world_t *world, const void *data, uint32_t size) {
    hier_cmd_t c;
    if (size != sizeof(c)) {
        return WEFT_OK; /* not ours: cannot happen, recorded by the functions below */
    }
    memcpy(&c, data, sizeof(c));
    const weft_result_t r =
        c.op == HIER_CMD_ATTACH
            ? weft_hier_attach_ex(world, c.child, c.parent, (weft_hier_attach_mode_t)c.mode)
            : weft_hier_detach(world, c.child);
    return r == WEFT_ENOMEM || r == WEFT_ECAPACITY ? r : WEFT_OK;
}

weft_result_t weft_hier_cmd_attach(weft_cmd_t *cmd, weft_entity_t child, weft_entity_t parent,
                                   weft_hier_attach_mode_t mode) {
    WEFT__NONNULL(cmd, WEFT_EINVAL);
    if (mode != WEFT_HIER_KEEP_WORLD && mode != WEFT_HIER_KEEP_LOCAL) {
        return WEFT__FAIL(NULL, WEFT_EINVAL, "weft_hier_cmd_attach: bad mode %d", (int)mode);
    }
    if (weft_cmd_is_placeholder(child) || weft_cmd_is_placeholder(parent)) {
        return WEFT__FAIL(NULL, WEFT_EINVAL,
                          "weft_hier_cmd_attach: placeholders are not resolved in hierarchy "
                          "commands; attach a created entity in a later frame");
    }
    const hier_cmd_t c = {child, parent, HIER_CMD_ATTACH, (uint32_t)mode};
    return weft_cmd_call(cmd, hier_cmd_apply, &c, sizeof(c));
}

weft_result_t weft_hier_cmd_detach(weft_cmd_t *cmd, weft_entity_t child) {
    WEFT__NONNULL(cmd, WEFT_EINVAL);
    if (weft_cmd_is_placeholder(child)) {
        return WEFT__FAIL(NULL, WEFT_EINVAL,
                          "weft_hier_cmd_detach: placeholders are not resolved in hierarchy "
                          "commands");
    }
    const hier_cmd_t c = {child, 0, HIER_CMD_DETACH, 0};
    return weft_cmd_call(cmd, hier_cmd_apply, &c, sizeof(c));
}

/* ---- reading ------------------------------------------------------------- >>hier_read */

weft_entity_t weft_hier_parent(const weft_world_t *world, weft_entity_t e) {
    WEFT__NONNULL(world, WEFT_ENTITY_NULL);
    const weft__hstore_t *s = store_of(world);
    const uint32_t r = s != NULL ? weft__hstore_row(s, e) : WEFT__HROW_NONE;
    return r == WEFT__HROW_NONE ? WEFT_ENTITY_NULL : s->rows.link[r].parent;
}

uint32_t weft_hier_depth(const weft_world_t *world, weft_entity_t e) {
    WEFT__NONNULL(world, 0);
    const weft__hstore_t *s = store_of(world);
    const uint32_t r = s != NULL ? weft__hstore_row(s, e) : WEFT__HROW_NONE;
    return r == WEFT__HROW_NONE ? 0 : weft__hstore_depth(s, r);
}

uint32_t weft_hier_count(const weft_world_t *world) {
    WEFT__NONNULL(world, 0);
    const weft__hstore_t *s = store_of(world);
    return s != NULL ? s->live : 0;
}

uint32_t weft_hier_order(const weft_world_t *world, weft_entity_t *out, uint32_t cap) {
    WEFT__NONNULL(world, 0);
    const weft__hstore_t *s = store_of(world);
    if (s == NULL) {
        return 0;
    }
    uint32_t n = 0;
    for (uint32_t r = 0; r < s->count; r++) {
        if (s->rows.ent[r] == 0) {
            continue;
        }
        if (n < cap) {
            out[n] = s->rows.ent[r];
        }
        n++;
    }
    return n;
}

weft_transform_t *weft_hier_local(weft_world_t *world, weft_entity_t e) {
    WEFT__NONNULL(world, NULL);
    weft__hstore_t *s = hier_get(world) != NULL ? &hier_get(world)->store : NULL;
    const uint32_t r = s != NULL ? weft__hstore_row(s, e) : WEFT__HROW_NONE;
    if (r == WEFT__HROW_NONE) {
        return NULL;
    }
    /* A writable pointer counts as a change: the next update recomputes the subtree. Only
     * this row's byte is written, so chunks of one system touching other nodes do not race. */
    s->rows.flags[r] |= WEFT__HFLAG_CHANGED;
    return &s->rows.local[r];
}

const weft_transform_t *weft_hier_local_read(const weft_world_t *world, weft_entity_t e) {
    WEFT__NONNULL(world, NULL);
    const weft__hstore_t *s = store_of(world);
    const uint32_t r = s != NULL ? weft__hstore_row(s, e) : WEFT__HROW_NONE;
    return r == WEFT__HROW_NONE ? NULL : &s->rows.local[r];
}

void weft_hier_invalidate(weft_world_t *world) {
    WEFT__NONNULL(world, );
    if (world->in_systems) {
        (void)WEFT__FAIL(world->log, WEFT_ESTATE,
                         "weft_hier_invalidate: called from inside a system; ignored");
        return;
    }
    if (hier_get(world) != NULL) {
        weft__hstore_touch_all(&hier_get(world)->store);
    }
}

const weft_mat4_t *weft_hier_world(const weft_world_t *world, weft_entity_t e) {
    WEFT__NONNULL(world, NULL);
    const weft__hstore_t *s = store_of(world);
    const uint32_t r = s != NULL ? weft__hstore_row(s, e) : WEFT__HROW_NONE;
    return r == WEFT__HROW_NONE ? NULL : &s->rows.world[r];
}

const weft_parent_link_t *weft_hier_link(const weft_world_t *world, weft_entity_t e) {
    WEFT__NONNULL(world, NULL);
    const weft__hstore_t *s = store_of(world);
    const uint32_t r = s != NULL ? weft__hstore_row(s, e) : WEFT__HROW_NONE;
    /* Same layout (static asserts above): the store's link is the public one. */
    return r == WEFT__HROW_NONE ? NULL : (const weft_parent_link_t *)(const void *)&s->rows.link[r];
}

void weft_hier_stats(const weft_world_t *world, weft_hier_stats_t *out) {
    WEFT__NONNULL(world, );
    memset(out, 0, sizeof(*out));
    const weft__hstore_t *s = store_of(world);
    if (s == NULL) {
        return;
    }
    out->nodes = s->live;
    out->rows = s->count;
    out->levels = s->levels_valid ? s->level_count : 0;
    out->levels_current = s->levels_valid;
    out->moved_rows = s->moved_rows;
    out->regroups = s->sorts;
    out->recomputed = s->recomputed;
    out->last = hier_get(world)->last;
}

/* ---- update -------------------------------------------------------------- >>hier_update */

/* Resolve AUTO by shape, run the pass. `regroup`: data may move (main thread only). */
static weft_result_t run_update(weft_world_t *world, weft_hier_pass_t pass, bool regroup) {
    struct weft_hier *h = hier_get(world);
    if (h == NULL) {
        return WEFT_OK;
    }
    weft__hpass_t p = pass == WEFT_HIER_PASS_AUTO
                          ? weft__hstore_auto_pass(&h->store)
                          : weft__hstore_pass_for(&h->store, pass == WEFT_HIER_PASS_LEVELS
                                                                 ? WEFT__HPASS_LEVELS
                                                                 : WEFT__HPASS_SEQUENTIAL);
    weft_jobs_t *jobs = NULL;
    if (p == WEFT__HPASS_LEVELS) {
        jobs = weft_world_jobs(world); /* NULL (creation failed): levels run inline */
    }
    weft_result_t r = weft__hstore_update(&h->store, p, regroup, jobs);
    if (r == WEFT_OK) {
        h->last = p == WEFT__HPASS_LEVELS ? WEFT_HIER_PASS_LEVELS : WEFT_HIER_PASS_SEQUENTIAL;
    }
    return r;
}

weft_result_t weft_hier_update(weft_world_t *world, weft_hier_pass_t pass) {
    WEFT__MAIN_CALL(world);
    HIER_NOT_IN_SYSTEM(world, "weft_hier_update");
    if (pass != WEFT_HIER_PASS_AUTO && pass != WEFT_HIER_PASS_SEQUENTIAL &&
        pass != WEFT_HIER_PASS_LEVELS) {
        return WEFT__FAIL(world->log, WEFT_EINVAL, "weft_hier_update: bad pass %d", (int)pass);
    }
    return run_update(world, pass, true);
}

/* The system body: one job per frame, no iteration terms. Data must not move here (other
 * systems may read local transforms and links beside it), hence regroup = false; a failed
 * level index falls back to the sequential pass, which needs no memory. */
static void hier_system(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    weft_world_t *world = ctx->world;
    if (hier_get(world) == NULL) {
        return;
    }
    if (run_update(world, hier_get(world)->pass, false) != WEFT_OK) {
        (void)run_update(world, WEFT_HIER_PASS_SEQUENTIAL, false);
    }
}

weft_result_t weft_hier_register_system(weft_world_t *world, const weft_hier_system_desc_t *desc,
                                        weft_system_t *out) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    const weft_hier_system_desc_t d = desc != NULL ? *desc : (weft_hier_system_desc_t){0};
    WEFT__CONTRACT(d._canary == 0, world->log, WEFT_EINVAL,
                   "weft_hier_register_system: desc._canary must be 0");
    if (d.pass != WEFT_HIER_PASS_AUTO && d.pass != WEFT_HIER_PASS_SEQUENTIAL &&
        d.pass != WEFT_HIER_PASS_LEVELS) {
        return WEFT__FAIL(world->log, WEFT_EINVAL, "weft_hier_register_system: bad pass %d",
                          (int)d.pass);
    }
    weft_hier_components_t ids;
    setup_undo_t undo;
    weft_result_t r = setup(world, &ids, &undo);
    if (r != WEFT_OK) {
        return r;
    }
    r = weft_system_register(world,
                             &(weft_system_desc_t){
                                 .name = d.name != NULL ? d.name : "weft.hierarchy",
                                 .fn = hier_system,
                                 .reads = {ids.local, ids.link},
                                 .writes = {ids.world},
                                 .phase = d.phase,
                             },
                             out);
    if (r == WEFT_OK) {
        hier_get(world)->pass = d.pass;
    } else {
        setup_rollback(world, &undo); /* the system names no component when it failed */
    }
    return r;
}

/* The store inside the world's hierarchy slot, for archive_hier.c and hierarchy_module.c. */
weft__hstore_t *weft__hier_store(struct weft_hier *h) { return &h->store; }
