/* archive_ids.c: entity ids for a load (fresh ids through the remap table, or the archived
 * ids kept), plus the commit steps that follow the rows in: group alignment and hooks.
 *
 * DESIGN
 * Fresh ids are handed out by weft_entity_create_n at commit time; stage 2 predicts them —
 * the free list popped from its top, then new slots from the high-water mark, generation 0 —
 * because the pools' sparse pages for the new indices must be allocated before the commit.
 * The commit asserts the prediction in debug builds.
 * Kept ids bypass the allocator of ids: every archived slot must be free (a dead slot, or
 * one past the high-water mark) and its generation is set to the archived one. The other
 * slots take the archive's slot table (format 2): a dead slot keeps the later of the two
 * generations and stays retired if either world retired it, so no handle that was stale in
 * the saved world or in this one comes back to life, except the archived entities' own
 * handles, which is what keep_ids asks for. A format-1 archive has no slot table: the slots
 * skipped between the old and new high-water marks become free at generation 0, and their
 * number is bounded (4 per archived entity, or 65536) so a hostile id near the table limit
 * cannot make the world commit gigabytes. Because the free list changes shape, stage 2
 * builds the complete new list in a fresh array and the commit swaps it in. */
#include <string.h>

#include "archive_load.h"
#include "src/core/entity.h"
#include "src/core/group.h"

#define GAP_MIN 65536u /* new free slots a keep_ids load may always create */

/* ---- fresh ids ------------------------------------------------------------ >>fresh */

weft_result_t weft__load_stage_fresh_ids(weft__stage_t *st) {
    weft_world_t *world = st->world;
    uint64_t n = st->arc.entity_count;
    weft_result_t r = weft_entity_reserve(world, (uint32_t)n);
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t fc = world->free_count;
    uint32_t next = weft_atomic_load_relaxed(&world->slot_count);
    for (uint64_t k = 0; k < n; ++k) {
        if (k < fc) {
            uint32_t idx = world->free_list[fc - 1u - k];
            uint32_t gen = weft__slot_gen(weft__entity_slot_raw(world, idx));
            st->handles[k] = weft_entity_make(idx, gen);
        } else {
            st->handles[k] = weft_entity_make(next++, 0);
        }
    }
    return WEFT_OK;
}

void weft__load_commit_fresh_ids(weft__stage_t *st) {
    uint64_t n = st->arc.entity_count;
    /* The remap table doubles as the output: create_n writes the very handles predicted. */
#if WEFT_DEBUG >= 2
    uint64_t first = n ? st->handles[0] : 0, last = n ? st->handles[n - 1u] : 0;
#endif
    weft_result_t r = weft_entity_create_n(st->world, (uint32_t)n, st->handles);
    (void)r;
    weft_assert_internal(r == WEFT_OK);
#if WEFT_DEBUG >= 2
    weft_assert_internal(n == 0 || (st->handles[0] == first && st->handles[n - 1u] == last));
#endif
}

/* ---- kept ids ------------------------------------------------------------- >>kept */

/* True when index idx is among the archived entities (they are sorted by index). */
static bool archived(const weft__stage_t *st, uint32_t idx) {
    uint64_t lo = 0, hi = st->arc.entity_count;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2u;
        uint32_t mi = weft_entity_index(weft__le64(st->arc.ents + mid * 8u));
        if (mi == idx) {
            return true;
        }
        if (mi < idx) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return false;
}

/* Commit table pages for every slot up to `high` and allocate the new free list (`cap`
 * entries). Errors: WEFT_ECAPACITY, WEFT_ENOMEM. */
static weft_result_t stage_free_alloc(weft__stage_t *st, uint64_t cap, uint64_t high) {
    weft_world_t *world = st->world;
    uint32_t slots = weft_atomic_load_relaxed(&world->slot_count);
    weft_result_t r = weft_entity_reserve(world, (uint32_t)(world->free_count + (high - slots)));
    if (r != WEFT_OK) {
        return r;
    }
    st->new_free_cap = (uint32_t)(cap ? cap : 1u);
    st->new_free =
        weft__alloc(world, (size_t)st->new_free_cap * sizeof(uint32_t), _Alignof(uint32_t));
    if (!st->new_free) {
        st->new_free_cap = 0;
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_archive_load: out of memory");
    }
    st->new_slot_count = (uint32_t)high;
    return WEFT_OK;
}

/* Format 1 (no slot table): the slots skipped between the old and new high-water marks
 * become free slots at generation 0. */
static weft_result_t stage_new_free_gaps(weft__stage_t *st, uint64_t reused) {
    weft_world_t *world = st->world;
    uint64_t n = st->arc.entity_count;
    uint32_t slots = weft_atomic_load_relaxed(&world->slot_count);
    uint64_t high = slots;
    for (uint64_t k = 0; k < n; ++k) {
        uint64_t idx = weft_entity_index(st->handles[k]);
        high = idx + 1u > high ? idx + 1u : high;
    }
    uint64_t fresh_archived = n - reused;
    uint64_t gap = high - slots - fresh_archived; /* skipped slots: become free */
    if (gap > GAP_MIN && gap > 4u * n) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY,
                          "weft_archive_load: keep_ids would create %llu unused slots for %llu "
                          "entities",
                          (unsigned long long)gap, (unsigned long long)n);
    }
    weft_result_t r = stage_free_alloc(st, (uint64_t)world->free_count - reused + gap, high);
    if (r != WEFT_OK) {
        return r;
    }
    /* Old entries minus the reused slots keep their order; skipped slots go on top, lowest
     * index last so it is recycled first. */
    uint32_t m = 0;
    for (uint32_t i = 0; i < world->free_count; ++i) {
        if (!archived(st, world->free_list[i])) {
            st->new_free[m++] = world->free_list[i];
        }
    }
    for (uint64_t idx = high; idx-- > slots;) {
        if (!archived(st, (uint32_t)idx)) {
            st->new_free[m++] = (uint32_t)idx;
        }
    }
    weft_assert_internal(m == (uint64_t)world->free_count - reused + gap);
    st->new_free_count = m;
    return WEFT_OK;
}

/* The archived slot state of index idx (WEFT__ARC_SLOT_RETIRED flag, generation). */
static uint32_t arc_slot(const weft__stage_t *st, uint32_t idx) {
    return weft__le32(st->arc.slots + 4u * (uint64_t)idx);
}

static bool arc_retired(const weft__stage_t *st, uint32_t idx) {
    return idx < st->arc.slot_count && (arc_slot(st, idx) & WEFT__ARC_SLOT_RETIRED) != 0;
}

/* Format 2: the archive's slot table is merged in. The world's free slots keep their place
 * on the free list (minus the reused ones and those the archive retired); the archive's free
 * slots beyond the world's table follow in the archive's order, so a load into a fresh world
 * recreates the saved world's allocator exactly. The commit raises generations (below). The
 * new slots are bounded by the input (4 bytes of SLOT each), so no gap limit applies. */
static weft_result_t stage_new_free_slots(weft__stage_t *st) {
    weft_world_t *world = st->world;
    uint32_t slots = weft_atomic_load_relaxed(&world->slot_count);
    uint64_t a_slots = st->arc.slot_count;
    if (a_slots > world->desc.entity_limit) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY,
                          "weft_archive_load: keep_ids: the archive's %llu entity slots exceed "
                          "entity_limit %u",
                          (unsigned long long)a_slots, world->desc.entity_limit);
    }
    uint64_t keep = 0, added = 0;
    for (uint32_t i = 0; i < world->free_count; ++i) {
        uint32_t idx = world->free_list[i];
        keep += !archived(st, idx) && !arc_retired(st, idx);
    }
    for (uint64_t j = 0; j < st->arc.free_count; ++j) {
        added += weft__le32(st->arc.free + 4u * j) >= slots;
    }
    uint64_t high = a_slots > slots ? a_slots : slots;
    weft_result_t r = stage_free_alloc(st, keep + added, high);
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < world->free_count; ++i) {
        uint32_t idx = world->free_list[i];
        if (!archived(st, idx) && !arc_retired(st, idx)) {
            st->new_free[m++] = idx;
        }
    }
    for (uint64_t j = 0; j < st->arc.free_count; ++j) {
        uint32_t idx = weft__le32(st->arc.free + 4u * j);
        if (idx >= slots) {
            st->new_free[m++] = idx;
        }
    }
    weft_assert_internal(m == keep + added);
    st->new_free_count = m;
    return WEFT_OK;
}

weft_result_t weft__load_stage_kept_ids(weft__stage_t *st) {
    weft_world_t *world = st->world;
    uint64_t n = st->arc.entity_count;
    uint32_t slots = weft_atomic_load_relaxed(&world->slot_count);
    uint64_t reused = 0;
    for (uint64_t k = 0; k < n; ++k) {
        uint64_t e = weft__le64(st->arc.ents + k * 8u);
        uint32_t idx = weft_entity_index(e);
        if (weft_entity_generation(e) > WEFT__GEN_MASK) {
            return WEFT__FAIL(world->log, WEFT_ECORRUPT,
                              "archive corrupt: entity 0x%llx has a generation beyond %u bits",
                              (unsigned long long)e, WEFT_ENTITY_GENERATION_BITS);
        }
        if (idx < slots) {
            if (weft__slot_sig(weft__entity_slot_raw(world, idx)) != WEFT__SIG_DEAD) {
                return WEFT__FAIL(world->log, WEFT_EEXIST,
                                  "weft_archive_load: keep_ids: entity index %u is in use "
                                  "(archived 0x%llx)",
                                  idx, (unsigned long long)e);
            }
            reused++;
        } else if (idx >= world->desc.entity_limit) {
            return WEFT__FAIL(world->log, WEFT_ECAPACITY,
                              "weft_archive_load: keep_ids: entity index %u is beyond "
                              "entity_limit %u",
                              idx, world->desc.entity_limit);
        }
        st->handles[k] = e;
    }
    /* Every dead slot the archive takes must be a free one: a slot retired at its last
     * generation (entity.c) is on no free list and must never name an entity again. */
    uint64_t reused_free = 0;
    for (uint32_t i = 0; i < world->free_count; ++i) {
        reused_free += archived(st, world->free_list[i]);
    }
    if (reused_free != reused) {
        return WEFT__FAIL(world->log, WEFT_EEXIST,
                          "weft_archive_load: keep_ids: %llu archived entity indices are retired "
                          "slots of this world (destroyed at their last generation)",
                          (unsigned long long)(reused - reused_free));
    }
    return st->arc.slot_count ? stage_new_free_slots(st) : stage_new_free_gaps(st, reused);
}

void weft__load_commit_kept_ids(weft__stage_t *st) {
    weft_world_t *world = st->world;
    uint32_t slots = weft_atomic_load_relaxed(&world->slot_count);
    /* New slots: the archive's state, or free at generation 0 (format 1). */
    for (uint32_t idx = slots; idx < st->new_slot_count; ++idx) {
        uint32_t gen = idx < st->arc.slot_count ? arc_slot(st, idx) & WEFT__GEN_MASK : 0u;
        weft_atomic_store_relaxed(&world->slots[idx], weft__slot_make(gen, WEFT__SIG_DEAD));
    }
    /* The world's dead slots that the archive knows: the later of the two generations, so a
     * handle stale in either world stays stale (a retired slot stays at 65535). */
    uint64_t common = st->arc.slot_count < slots ? st->arc.slot_count : slots;
    for (uint32_t idx = 1; idx < common; ++idx) {
        uint32_t s = weft__entity_slot_raw(world, idx);
        uint32_t ga = arc_slot(st, idx) & WEFT__GEN_MASK;
        if (weft__slot_sig(s) == WEFT__SIG_DEAD && ga > weft__slot_gen(s)) {
            weft_atomic_store_relaxed(&world->slots[idx], weft__slot_make(ga, WEFT__SIG_DEAD));
        }
    }
    for (uint64_t k = 0; k < st->arc.entity_count; ++k) {
        uint64_t e = st->handles[k];
        weft_atomic_store_relaxed(&world->slots[weft_entity_index(e)],
                                  weft__slot_make(weft_entity_generation(e), 0));
    }
    /* pairs with the acquire in weft__entity_slot(): the new slots are initialised */
    weft_atomic_store_release(&world->slot_count, st->new_slot_count);
    weft__free(world, world->free_list, (size_t)world->free_cap * sizeof(uint32_t));
    world->free_list = st->new_free;
    world->free_count = st->new_free_count;
    world->free_cap = st->new_free_cap;
    world->live += (uint32_t)st->arc.entity_count;
    st->new_free = NULL; /* now owned by the world */
    st->new_free_cap = 0;
}

/* ---- groups and hooks ------------------------------------------------------ >>after */

void weft__load_commit_groups(weft__stage_t *st) {
    bool touched[WEFT__MAX_GROUPS] = {false};
    for (uint32_t i = 0; i < st->arc.comp_count; ++i) {
        if (st->comps[i].comp && st->comps[i].comp->pool.group != 0) {
            touched[st->comps[i].comp->pool.group] = true;
        }
    }
    for (uint32_t g = 1; g <= st->world->group_count; ++g) {
        if (!touched[g]) {
            continue;
        }
        for (uint64_t k = 0; k < st->arc.entity_count; ++k) {
            weft__group_on_add(st->world, g, weft_entity_index(st->handles[k]));
        }
        weft_assert_expensive(weft__group_check(st->world, g));
    }
}

void weft__load_fire_hooks(weft__stage_t *st) {
    weft_world_t *world = st->world;
    for (uint32_t i = 0; i < st->arc.comp_count; ++i) {
        weft__component_t *c = st->comps[i].comp;
        if (!c || !c->on_add) {
            continue;
        }
        const weft__arc_comp_t *ac = &st->arc.comps[i];
        for (uint64_t k = 0; k < ac->rows; ++k) {
            weft_entity_t e = st->handles[weft__le32(ac->ids + 4u * k)];
            uint32_t row = weft__pool_row(&c->pool, weft_entity_index(e));
            world->hook_depth++;
            c->on_add(world, e, (weft_component_t){c->pool.id}, weft__pool_at(&c->pool, row),
                      c->hook_user);
            world->hook_depth--;
        }
    }
}
