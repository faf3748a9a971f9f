/* archive_load.h: the load stage shared by archive_load.c (matching, pools, commit) and
 * archive_ids.c (entity ids, groups, hooks) and archive_modules.c (modules) — private to the
 * build.
 * See archive_internal.h for the three stages. */
#ifndef WEFT_ARCHIVE_LOAD_H
#define WEFT_ARCHIVE_LOAD_H

#include "archive_internal.h"
#include "src/core/world.h"

/* What stage 2 decided for one COMP section. */
typedef struct weft__stage_comp {
    weft__component_t *comp;          /* target component; NULL: section skipped (and for a
                                         resource section, which sets `resource` instead) */
    weft__component_t *resource;      /* target resource of a resource section, else NULL */
    const weft_archive_upgrade_t *up; /* NULL: the archived layout is the registered one */
    unsigned char *converted;         /* upgraded values [rows * registered size], owned */
    size_t converted_bytes;           /* size of converted */
} weft__stage_comp_t;

struct weft__stage;
/* The load context handed to modules (weft/module.h). */
struct weft_module_load {
    const struct weft__stage *st;
};

typedef struct weft__stage {
    weft_world_t *world;                  /* the target */
    weft_archive_load_desc_t desc;        /* resolved copy of the caller's desc */
    weft__arc_t arc;                      /* stage 1 result */
    weft__stage_comp_t *comps;            /* [arc.comp_count], owned */
    uint64_t *handles;                    /* [n] remap table: new handle of each archived entity */
    uint32_t *sig;                        /* [n] new signature id of each archived entity */
    uint32_t *new_free;                   /* keep_ids: the free list after the commit, owned */
    uint32_t new_free_count;              /* entries in new_free */
    uint32_t new_free_cap;                /* capacity of new_free */
    uint32_t new_slot_count;              /* keep_ids: the table high-water mark after the commit */
    weft_module_load_t module_ctx;        /* what the modules see of this load */
    void *module_staged[WEFT_MODULE_MAX]; /* each module's prepared load, by module index */
    bool module_prepared[WEFT_MODULE_MAX]; /* prepared and neither committed nor aborted */
} weft__stage_t;

/* Fresh ids: predict the handles weft_entity_create_n will hand out and reserve the table.
 * Errors: WEFT_ECAPACITY, WEFT_ENOMEM. */
weft_result_t weft__load_stage_fresh_ids(weft__stage_t *st);
/* Kept ids: check every archived id is free, plan the new free list and table size.
 * Errors: WEFT_EEXIST, WEFT_ECORRUPT (bad generation), WEFT_ECAPACITY, WEFT_ENOMEM. */
weft_result_t weft__load_stage_kept_ids(weft__stage_t *st);
void weft__load_commit_fresh_ids(weft__stage_t *st);
void weft__load_commit_kept_ids(weft__stage_t *st);

/* Restore group alignment for every new entity (after rows and signatures are in). */
void weft__load_commit_groups(weft__stage_t *st);
/* Fire on_add for every loaded component value, sections in archive order. */
void weft__load_fire_hooks(weft__stage_t *st);

/* Modules (archive_modules.c): every registered module prepares its part (the last stage:
 * on failure the ones prepared are aborted); the commit runs after rows and signatures. */
weft_result_t weft__load_stage_modules(weft__stage_t *st);
void weft__load_commit_modules(weft__stage_t *st);

#endif /* WEFT_ARCHIVE_LOAD_H */
