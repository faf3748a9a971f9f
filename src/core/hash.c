/* hash.c: weft_world_hash — a stable digest of the world's observable data.
 *
 * DESIGN
 * The digest covers exactly what a user can observe and nothing that depends on history or
 * addresses: the entity table (slot count, each slot's generation and liveness, the free list
 * in stack order) and, for each component in id order, its row count, entity indices and data
 * bytes in row order (for a resource, its value), then each registered module's data through
 * its hash callback (the hierarchy's nodes; weft/module.h). Signature ids, capacities and sparse pages are left out (they depend on
 * the order things happened, not on the state). The mixing function is our own: 64-bit words
 * folded with a multiply-xorshift (like the finaliser of splitmix64), tails byte by byte, so
 * the result is identical on every little-endian 64-bit build and fast on large pools. */
#include <string.h>

#include "entity.h"
#include "world.h"

typedef struct hasher {
    uint64_t h; /* running state */
} hasher_t;

static void mix_u64(hasher_t *s, uint64_t v) {
    uint64_t x = s->h ^ (v + 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    s->h = x ^ (x >> 31);
}

static void mix_bytes(hasher_t *s, const unsigned char *p, size_t n) {
    size_t i = 0;
    for (; i + 8u <= n; i += 8u) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        mix_u64(s, w);
    }
    uint64_t tail = 0;
    for (size_t k = 0; i < n; i++, k++) {
        tail |= (uint64_t)p[i] << (8u * k);
    }
    mix_u64(s, tail ^ ((uint64_t)n << 56));
}

/* The entity table: slot count, each slot's generation and liveness, the free list. */
static void mix_entities(hasher_t *s, const weft_world_t *world) {
    uint32_t slots = weft_atomic_load_acquire(&((weft_world_t *)world)->slot_count);
    mix_u64(s, slots);
    for (uint32_t i = 1; i < slots; i++) {
        uint32_t slot = weft__entity_slot_raw(world, i);
        bool dead = weft__slot_sig(slot) == WEFT__SIG_DEAD;
        mix_u64(s, ((uint64_t)dead << 32) | weft__slot_gen(slot));
    }
    mix_u64(s, world->free_count);
    mix_bytes(s, (const unsigned char *)world->free_list,
              (size_t)world->free_count * sizeof(uint32_t));
}

/* One component: row count, size, entity indices and data in row order (a resource: its
 * value). */
static void mix_component(hasher_t *s, const weft__component_t *comp) {
    const weft__pool_t *pool = &comp->pool;
    mix_u64(s, ((uint64_t)pool->count << 32) | pool->size);
    mix_bytes(s, (const unsigned char *)pool->dense, (size_t)pool->count * sizeof(uint32_t));
    if (comp->resource) { /* a resource: its value (resource.c) */
        mix_bytes(s, comp->resource, pool->size);
    }
    if (pool->size) {
        mix_bytes(s, pool->data, (size_t)pool->count * pool->size);
    }
}

uint64_t weft_hash_mix(uint64_t h, const void *p, size_t n) {
    hasher_t s = {.h = h};
    mix_bytes(&s, p, n);
    return s.h;
}

/* ---- breakdown ------------------------------------------------------------ >>hash_parts */

/* Each part starts from the same seed, so a part's digest depends on that part alone. */
#define PART_SEED 0x77656674u

static void put_part(weft_hash_part_t *out, uint32_t cap, uint32_t *n, weft_hash_part_kind_t kind,
                     uint32_t id, const char *name, uint64_t hash) {
    if (*n < cap) {
        out[*n] = (weft_hash_part_t){kind, id, name, hash};
    }
    (*n)++;
}

weft_result_t weft_world_hash_parts(const weft_world_t *world, weft_hash_part_t *out, uint32_t cap,
                                    uint32_t *count) {
    WEFT__CONTRACT(world != NULL && count != NULL && (out != NULL || cap == 0), NULL, WEFT_EINVAL,
                   "weft_world_hash_parts: NULL world or count, or NULL out");
    uint32_t n = 0;
    hasher_t s = {.h = PART_SEED};
    mix_entities(&s, world);
    put_part(out, cap, &n, WEFT_HASH_PART_ENTITIES, 0, "entities", s.h);
    for (uint32_t c = 1; c <= world->component_count; c++) {
        s.h = PART_SEED;
        mix_component(&s, world->components[c]);
        put_part(out, cap, &n, WEFT_HASH_PART_COMPONENT, c, world->components[c]->name, s.h);
    }
    for (uint32_t m = 0; m < world->module_part_count; m++) {
        const weft__module_t *mod = &world->modules[m];
        if (mod->desc.hash != NULL) {
            put_part(out, cap, &n, WEFT_HASH_PART_MODULE, m, mod->name,
                     mod->desc.hash(world, mod->desc.user, PART_SEED));
        }
    }
    *count = n;
    return WEFT_OK;
}

weft_result_t weft_hash_log_record(const weft_world_t *world, weft_hash_log_t *log) {
    WEFT__CONTRACT(world != NULL && log != NULL && log->parts != NULL && log->counts != NULL &&
                       log->frames != 0,
                   NULL, WEFT_EINVAL, "weft_hash_log_record: NULL world, log or log arrays");
    const uint64_t slot = log->recorded % log->frames;
    weft_result_t r = weft_world_hash_parts(world, log->parts + slot * log->parts_per_frame,
                                            log->parts_per_frame, &log->counts[slot]);
    if (r == WEFT_OK) {
        log->recorded++;
    }
    return r;
}

/* The first differing part of frame f in both logs (UINT32_MAX: none). */
static uint32_t frame_diff(const weft_hash_log_t *a, const weft_hash_log_t *b, uint64_t f) {
    const weft_hash_part_t *pa = a->parts + (f % a->frames) * a->parts_per_frame;
    const weft_hash_part_t *pb = b->parts + (f % b->frames) * b->parts_per_frame;
    const uint32_t na = a->counts[f % a->frames], nb = b->counts[f % b->frames];
    const uint32_t ka = na < a->parts_per_frame ? na : a->parts_per_frame;
    const uint32_t kb = nb < b->parts_per_frame ? nb : b->parts_per_frame;
    const uint32_t k = ka < kb ? ka : kb;
    for (uint32_t i = 0; i < k; i++) {
        if (pa[i].kind != pb[i].kind || pa[i].id != pb[i].id || pa[i].hash != pb[i].hash) {
            return i;
        }
    }
    return na != nb ? k : UINT32_MAX;
}

bool weft_hash_log_diverged(const weft_hash_log_t *a, const weft_hash_log_t *b, uint64_t *frame,
                            uint32_t *part) {
    WEFT__NONNULL(a, false);
    WEFT__NONNULL(b, false);
    const uint64_t end = a->recorded < b->recorded ? a->recorded : b->recorded;
    const uint64_t keep = a->frames < b->frames ? a->frames : b->frames;
    for (uint64_t f = end > keep ? end - keep : 0; f < end; f++) {
        const uint32_t i = frame_diff(a, b, f);
        if (i != UINT32_MAX) {
            if (frame) {
                *frame = f;
            }
            if (part) {
                *part = i;
            }
            return true;
        }
    }
    return false;
}

uint64_t weft_world_hash(const weft_world_t *world) {
    WEFT__NONNULL(world, 0);
    hasher_t s = {.h = 0x77656674u}; /* "weft" */
    mix_entities(&s, world);
    mix_u64(&s, world->component_count);
    for (uint32_t c = 1; c <= world->component_count; c++) {
        mix_component(&s, world->components[c]);
    }
    /* Modules whose data lives outside the pools (weft/module.h). */
    for (uint32_t m = 0; m < world->module_part_count; m++) {
        const weft__module_t *mod = &world->modules[m];
        if (mod->desc.hash != NULL) {
            mix_bytes(&s, (const unsigned char *)mod->name, strlen(mod->name));
            s.h = mod->desc.hash(world, mod->desc.user, s.h);
        }
    }
    return s.h;
}
