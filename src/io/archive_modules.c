/* archive_modules.c: the modules' part in archives (weft/module.h) — their sections on save,
 * their staged load, and the contexts both hand to the modules.
 *
 * DESIGN
 * A module's data travels as a MODL section of its own (archive_format.h) under its name and
 * archive version; nothing here knows what a module stores. Save: partial saves first let
 * every module add entities (archive_mark: the hierarchy adds descendants), then each module
 * declares its byte count (the section header carries it, the writer never seeks back) and
 * streams its bytes. Load: after the pools are staged, every registered module prepares its
 * part (or an empty one when the archive holds none: it may still have to check the archive,
 * as the hierarchy checks that no node tag lacks its node); a section of a module the world
 * lacks is skipped with skip_unknown and WEFT_EMISMATCH otherwise. The commit runs after the
 * rows and signatures are in; a failed prepare aborts those prepared before it. */
#include <string.h>

#include "archive_internal.h"
#include "archive_load.h"
#include "archive_secw.h"
#include "src/core/entity.h"
#include "src/core/world.h"
#include "weft/module.h"

/* ---- save ------------------------------------------------------------------- >>save */

uint32_t weft_module_save_local(const weft_module_save_t *ctx, weft_entity_t e) {
    WEFT__NONNULL(ctx, 0);
    uint32_t slot;
    const uint32_t idx = weft_entity_index(e);
    if (idx >= ctx->slots || !weft__entity_slot(ctx->world, e, &slot)) {
        return 0;
    }
    return ctx->local[idx];
}

weft_result_t weft_module_save_include(weft_module_save_t *ctx, weft_entity_t e) {
    WEFT__CONTRACT(ctx != NULL, NULL, WEFT_EINVAL, "weft_module_save_include: ctx is NULL");
    WEFT__CONTRACT(ctx->marking, ctx->world->log, WEFT_ESTATE,
                   "weft_module_save_include: only inside a module's archive_mark");
    uint32_t slot;
    const uint32_t idx = weft_entity_index(e);
    if (idx >= ctx->slots || !weft__entity_slot(ctx->world, e, &slot)) {
        return WEFT__FAIL(ctx->world->log, WEFT_ESTALE,
                          "weft_module_save_include: 0x%llx is not alive", (unsigned long long)e);
    }
    ctx->local[idx] = 1u;
    return WEFT_OK;
}

void weft_module_save_put(weft_module_save_t *ctx, const void *p, size_t n) {
    WEFT__NONNULL(ctx, );
    if (ctx->w == NULL || n > ctx->w->left) { /* outside archive_save, or past the size */
        ctx->written += n;                    /* the mismatch fails the save */
        return;
    }
    weft__secw_put(ctx->w, p, n);
    ctx->written += n;
}

weft_result_t weft__save_mark_modules(weft_world_t *world, uint32_t *local, uint32_t slots) {
    weft_module_save_t ctx = {.world = world, .local = local, .slots = slots, .marking = true};
    for (uint32_t m = 0; m < world->module_part_count; ++m) {
        const weft__module_t *mod = &world->modules[m];
        if (mod->desc.archive_mark != NULL) {
            weft_result_t r = mod->desc.archive_mark(world, mod->desc.user, &ctx);
            if (r != WEFT_OK) {
                return r;
            }
        }
    }
    return WEFT_OK;
}

uint32_t weft__save_module_sizes(weft_world_t *world, uint32_t *local, uint32_t slots,
                                 uint64_t *sizes, uint64_t *items) {
    weft_module_save_t ctx = {.world = world, .local = local, .slots = slots};
    uint32_t n = 0;
    for (uint32_t m = 0; m < world->module_part_count; ++m) {
        const weft__module_t *mod = &world->modules[m];
        sizes[m] = items[m] = 0;
        if (mod->desc.archive_size != NULL && mod->desc.archive_save != NULL) {
            sizes[m] = mod->desc.archive_size(world, mod->desc.user, &ctx, &items[m]);
        }
        n += sizes[m] != 0;
    }
    return n;
}

weft_result_t weft__save_write_modules(weft_world_t *world, weft__secw_t *w, uint32_t *local,
                                       uint32_t slots, const uint64_t *sizes,
                                       const uint64_t *items) {
    for (uint32_t m = 0; m < world->module_part_count && w->error == WEFT_OK; ++m) {
        const weft__module_t *mod = &world->modules[m];
        if (sizes[m] == 0) {
            continue;
        }
        const uint32_t name_len = (uint32_t)strlen(mod->name);
        unsigned char d[WEFT__ARC_MODULE_DESC];
        weft__put32(d, name_len);
        weft__put32(d + 4, mod->desc.archive_version);
        weft__put64(d + 8, sizes[m]);
        const uint64_t total = sizeof d + weft__pad8(name_len) + weft__pad8(sizes[m]);
        weft__secw_begin(w, WEFT__ARC_TAG_MODL, total, items[m]);
        weft__secw_put(w, d, sizeof d);
        weft__secw_put(w, mod->name, name_len);
        weft__secw_zeros(w, (size_t)(weft__pad8(name_len) - name_len));
        weft_module_save_t ctx = {.world = world, .local = local, .slots = slots, .w = w};
        weft_result_t r = mod->desc.archive_save(world, mod->desc.user, &ctx);
        const uint64_t pad = weft__pad8(sizes[m]) - sizes[m];
        while (w->left > pad) { /* keep the section well-formed; the save fails below */
            weft__secw_zeros(w, (size_t)(w->left - pad < 8u ? w->left - pad : 8u));
        }
        weft__secw_zeros(w, (size_t)pad);
        weft__secw_end(w);
        if (r == WEFT_OK && ctx.written != sizes[m]) {
            r = WEFT__FAIL(world->log, WEFT_EINVAL,
                           "weft_archive_save: module '%s' wrote %llu bytes but declared %llu",
                           mod->name, (unsigned long long)ctx.written,
                           (unsigned long long)sizes[m]);
        }
        if (r != WEFT_OK) {
            return r;
        }
    }
    return WEFT_OK;
}

/* ---- load ------------------------------------------------------------------- >>load */

uint64_t weft_module_load_count(const weft_module_load_t *ctx) {
    WEFT__NONNULL(ctx, 0);
    return ctx->st->arc.entity_count;
}

weft_entity_t weft_module_load_entity(const weft_module_load_t *ctx, uint64_t local) {
    WEFT__NONNULL(ctx, 0);
    return local < ctx->st->arc.entity_count ? ctx->st->handles[local] : 0;
}

bool weft_module_load_component(const weft_module_load_t *ctx, const char *name, uint64_t *rows,
                                const void **locals) {
    WEFT__NONNULL(ctx, false);
    WEFT__NONNULL(name, false);
    const weft__stage_t *st = ctx->st;
    const size_t len = strlen(name);
    for (uint32_t i = 0; i < st->arc.comp_count; ++i) {
        const weft__arc_comp_t *ac = &st->arc.comps[i];
        if (st->comps[i].comp != NULL && ac->name_len == len && memcmp(ac->name, name, len) == 0) {
            *rows = ac->rows;
            *locals = ac->ids;
            return true;
        }
    }
    *rows = 0;
    *locals = NULL;
    return false;
}

uint64_t weft__arc_module_items(const weft__arc_t *arc, const char *name) {
    const size_t len = strlen(name);
    for (uint32_t k = 0; k < arc->module_count; ++k) {
        if (arc->modules[k].name_len == len && memcmp(arc->modules[k].name, name, len) == 0) {
            return arc->modules[k].items;
        }
    }
    return 0;
}

/* The archive's section for the module called `name`, or NULL. */
static const weft__arc_module_t *arc_part(const weft__arc_t *arc, const char *name) {
    const size_t len = strlen(name);
    for (uint32_t k = 0; k < arc->module_count; ++k) {
        if (arc->modules[k].name_len == len && memcmp(arc->modules[k].name, name, len) == 0) {
            return &arc->modules[k];
        }
    }
    return NULL;
}

static void abort_modules(weft__stage_t *st, uint32_t n) {
    weft_world_t *world = st->world;
    for (uint32_t m = 0; m < n; ++m) {
        const weft__module_t *mod = &world->modules[m];
        if (mod->desc.archive_abort != NULL && st->module_prepared[m]) {
            mod->desc.archive_abort(world, mod->desc.user, st->module_staged[m]);
        }
        st->module_prepared[m] = false;
    }
}

weft_result_t weft__load_stage_modules(weft__stage_t *st) {
    weft_world_t *world = st->world;
    for (uint32_t k = 0; k < st->arc.module_count; ++k) {
        const weft__arc_module_t *part = &st->arc.modules[k];
        bool found = false;
        for (uint32_t m = 0; m < world->module_part_count && !found; ++m) {
            found = strlen(world->modules[m].name) == part->name_len &&
                    memcmp(world->modules[m].name, part->name, part->name_len) == 0 &&
                    world->modules[m].desc.archive_prepare != NULL;
        }
        if (!found && !st->desc.skip_unknown) {
            return WEFT__FAIL(world->log, WEFT_EMISMATCH,
                              "weft_archive_load: the archive holds data of module '%.*s', which "
                              "this world has not registered (the hierarchy registers with "
                              "weft_hier_components()); or load with skip_unknown",
                              (int)part->name_len, part->name);
        }
    }
    st->module_ctx.st = st;
    for (uint32_t m = 0; m < world->module_part_count; ++m) {
        const weft__module_t *mod = &world->modules[m];
        st->module_staged[m] = NULL;
        if (mod->desc.archive_prepare == NULL) {
            continue;
        }
        const weft__arc_module_t *part = arc_part(&st->arc, mod->name);
        weft_result_t r = mod->desc.archive_prepare(
            world, mod->desc.user, &st->module_ctx, part ? part->data : NULL,
            part ? (size_t)part->size : 0, part ? part->version : mod->desc.archive_version,
            &st->module_staged[m]);
        if (r != WEFT_OK) {
            abort_modules(st, m);
            return r;
        }
        st->module_prepared[m] = true;
    }
    return WEFT_OK;
}

void weft__load_commit_modules(weft__stage_t *st) {
    weft_world_t *world = st->world;
    for (uint32_t m = 0; m < world->module_part_count; ++m) {
        const weft__module_t *mod = &world->modules[m];
        if (st->module_prepared[m] && mod->desc.archive_commit != NULL) {
            mod->desc.archive_commit(world, mod->desc.user, &st->module_ctx, st->module_staged[m]);
        }
        st->module_prepared[m] = false;
    }
}
