/* signature.h: interned component sets ("signatures") and their transition cache (private).
 *
 * DESIGN
 * Every live entity's slot names its signature: the sorted set of component ids it has. Sets
 * are interned once (world->sigs, ids back to back in world->sig_ids) and never freed, so an
 * id stays valid for the world's life; id 0 is the empty set. Adding or removing one component
 * steps from one set to another; the step is cached in an open-addressing table keyed by
 * (signature, component, direction), so after warm-up add/remove pay one probe. Destroy reads
 * the entity's set to remove exactly the components it has. Ids fit 16 bits (the slot's
 * budget): beyond WEFT__SIG_MAX distinct sets, adds return WEFT_ECAPACITY. */
#ifndef WEFT_SRC_SIGNATURE_H
#define WEFT_SRC_SIGNATURE_H

#include "world.h"

/* Intern the empty set as id 0. Errors: WEFT_ENOMEM. */
weft_result_t weft__sig_init(weft_world_t *world);

/* Free every table. */
void weft__sig_fini(weft_world_t *world);

/* Slow path of weft__sig_step: compute, intern and cache the step. */
weft_result_t weft__sig_step_slow(weft_world_t *world, uint32_t sig, uint32_t c, bool remove,
                                  uint32_t *out);

/* An edge's key: signature (16 bits), component (17 bits), direction. An edge entry is
 * key << 16 | target signature (never 0: components are >= 1). */
#define WEFT__SIG_EDGE_COMPONENT_BITS 17u
WEFT_STATIC_ASSERT(WEFT__SIG_MAX < (1u << 16), "edge entries hold a 16-bit target");
WEFT_STATIC_ASSERT(WEFT_MAX_COMPONENTS <= (1u << WEFT__SIG_EDGE_COMPONENT_BITS),
                   "edge keys hold a component id");

static inline uint64_t weft__sig_edge_key(uint32_t sig, uint32_t c, bool remove) {
    return ((uint64_t)sig << (WEFT__SIG_EDGE_COMPONENT_BITS + 1u)) | ((uint64_t)c << 1) |
           (remove ? 1u : 0u);
}

static inline uint32_t weft__sig_edge_hash(uint64_t key, uint32_t cap) {
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1u);
}

/* The cached step of weft__sig_step only: true and *out when the edge is cached, false when
 * it is not (nothing changes, so threads may call it while nobody changes the world). */
static inline bool weft__sig_step_find(const weft_world_t *world, uint32_t sig, uint32_t c,
                                       bool remove, uint32_t *out) {
    uint64_t key = weft__sig_edge_key(sig, c, remove);
    if (world->edge_cap) {
        uint32_t i = weft__sig_edge_hash(key, world->edge_cap);
        for (;;) {
            uint64_t e = world->edges[i];
            if (e == 0) {
                break;
            }
            if ((e >> 16) == key) {
                *out = (uint32_t)e & 0xFFFFu;
                return true;
            }
            i = (i + 1u) & (world->edge_cap - 1u);
        }
    }
    return false;
}

/* The signature reached from `sig` by adding (remove = false) or removing component c; c must
 * be absent (add) or present (remove). Errors: WEFT_ENOMEM, WEFT_ECAPACITY (nothing the
 * caller can observe changes). */
static inline weft_result_t weft__sig_step(weft_world_t *world, uint32_t sig, uint32_t c,
                                           bool remove, uint32_t *out) {
    return weft__sig_step_find(world, sig, c, remove, out)
               ? WEFT_OK
               : weft__sig_step_slow(world, sig, c, remove, out);
}

/* The component ids of signature `sig`, sorted ascending; *count receives their number. */
/* Whether id c is among ids[0..n), ascending (a binary search). */
static inline bool weft__ids_have(const uint32_t *ids, uint32_t n, uint32_t c) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (ids[mid] < c) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo < n && ids[lo] == c;
}

static inline const uint32_t *weft__sig_ids(const weft_world_t *world, uint32_t sig,
                                            uint32_t *count) {
    *count = world->sigs[sig].count;
    return world->sig_ids + world->sigs[sig].first;
}

#endif /* WEFT_SRC_SIGNATURE_H */
