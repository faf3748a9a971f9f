/* signature.c: interning of component sets and the transition cache (see signature.h).
 *
 * DESIGN
 * Two open-addressing tables, both power-of-two sized and kept at most half full:
 * - sig_table maps a set's hash to (signature id + 1); collisions compare the id lists;
 * - edges maps (signature, component, direction) to the target signature.
 * Every allocation happens before any table is modified, so a failure leaves all tables as
 * they were (a set that got interned but whose edge could not be cached is harmless: it is
 * found again by hash next time). */
#include "signature.h"

#include <string.h>

/* ---- hashing ------------------------------------------------------------------ >>hash */

static uint64_t hash_ids(const uint32_t *ids, uint32_t n) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (uint32_t i = 0; i < n; i++) {
        h ^= ids[i];
        h *= 0x100000001b3ull;
    }
    return h ^ n;
}

/* ---- growth helpers -------------------------------------------------------- >>grow */

/* Grow an array of `elem`-byte items from *cap to at least `need` items. */
static weft_result_t grow_array(weft_world_t *world, void **arr, uint32_t *cap, uint32_t used,
                                uint32_t need, size_t elem) {
    if (need <= *cap) {
        return WEFT_OK;
    }
    uint32_t ncap = *cap ? *cap * 2u : 16u;
    while (ncap < need) {
        ncap *= 2u;
    }
    void *p = weft__alloc(world, (size_t)ncap * elem, 8);
    if (p == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "component sets: out of memory");
    }
    if (used) {
        memcpy(p, *arr, (size_t)used * elem);
    }
    weft__free(world, *arr, (size_t)*cap * elem);
    *arr = p;
    *cap = ncap;
    return WEFT_OK;
}

/* Rebuild sig_table at `cap` slots. */
static weft_result_t rehash_sigs(weft_world_t *world, uint32_t cap) {
    uint32_t *t = weft__alloc(world, (size_t)cap * sizeof(uint32_t), _Alignof(uint32_t));
    if (t == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "component sets: out of memory");
    }
    memset(t, 0, (size_t)cap * sizeof(uint32_t));
    for (uint32_t s = 0; s < world->sig_count; s++) {
        uint32_t i = (uint32_t)world->sigs[s].hash & (cap - 1u);
        while (t[i] != 0) {
            i = (i + 1u) & (cap - 1u);
        }
        t[i] = s + 1u;
    }
    weft__free(world, world->sig_table, (size_t)world->sig_table_cap * sizeof(uint32_t));
    world->sig_table = t;
    world->sig_table_cap = cap;
    return WEFT_OK;
}

static weft_result_t rehash_edges(weft_world_t *world, uint32_t cap) {
    uint64_t *t = weft__alloc(world, (size_t)cap * sizeof(uint64_t), _Alignof(uint64_t));
    if (t == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "component sets: out of memory");
    }
    memset(t, 0, (size_t)cap * sizeof(uint64_t));
    for (uint32_t j = 0; j < world->edge_cap; j++) {
        uint64_t e = world->edges[j];
        if (e == 0) {
            continue;
        }
        uint32_t i = weft__sig_edge_hash(e >> 16, cap);
        while (t[i] != 0) {
            i = (i + 1u) & (cap - 1u);
        }
        t[i] = e;
    }
    weft__free(world, world->edges, (size_t)world->edge_cap * sizeof(uint64_t));
    world->edges = t;
    world->edge_cap = cap;
    return WEFT_OK;
}

/* ---- interning -------------------------------------------------------------- >>intern */

/* Find the id of set ids[0..n) (sorted), or UINT32_MAX. */
static uint32_t find_sig(const weft_world_t *world, const uint32_t *ids, uint32_t n, uint64_t h) {
    if (world->sig_table_cap == 0) {
        return UINT32_MAX;
    }
    uint32_t i = (uint32_t)h & (world->sig_table_cap - 1u);
    for (; world->sig_table[i] != 0; i = (i + 1u) & (world->sig_table_cap - 1u)) {
        const weft__sig_t *s = &world->sigs[world->sig_table[i] - 1u];
        if (s->hash == h && s->count == n &&
            memcmp(world->sig_ids + s->first, ids, (size_t)n * sizeof *ids) == 0) {
            return world->sig_table[i] - 1u;
        }
    }
    return UINT32_MAX;
}

/* Intern set ids[0..n); *out receives its id. All allocation happens before any change. */
static weft_result_t intern(weft_world_t *world, const uint32_t *ids, uint32_t n, uint32_t *out) {
    uint64_t h = hash_ids(ids, n);
    uint32_t found = find_sig(world, ids, n, h);
    if (found != UINT32_MAX) {
        *out = found;
        return WEFT_OK;
    }
    if (world->sig_count > WEFT__SIG_MAX) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY,
                          "weft_component_add: more than %u distinct component sets",
                          WEFT__SIG_MAX + 1u);
    }
    weft_result_t r = grow_array(world, (void **)&world->sigs, &world->sig_cap, world->sig_count,
                                 world->sig_count + 1u, sizeof(weft__sig_t));
    if (r == WEFT_OK) {
        r = grow_array(world, (void **)&world->sig_ids, &world->sig_ids_cap, world->sig_ids_len,
                       world->sig_ids_len + n, sizeof(uint32_t));
    }
    if (r == WEFT_OK && (world->sig_count + 1u) * 2u > world->sig_table_cap) {
        r = rehash_sigs(world, world->sig_table_cap ? world->sig_table_cap * 2u : 64u);
    }
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t id = world->sig_count++;
    world->sigs[id] = (weft__sig_t){.first = world->sig_ids_len, .count = n, .hash = h};
    if (n) {
        memcpy(world->sig_ids + world->sig_ids_len, ids, (size_t)n * sizeof *ids);
    }
    world->sig_ids_len += n;
    uint32_t i = (uint32_t)h & (world->sig_table_cap - 1u);
    while (world->sig_table[i] != 0) {
        i = (i + 1u) & (world->sig_table_cap - 1u);
    }
    world->sig_table[i] = id + 1u;
    *out = id;
    return WEFT_OK;
}

weft_result_t weft__sig_init(weft_world_t *world) {
    /* sig_ids is never NULL, so weft__sig_ids() can offset into it even for the empty set */
    weft_result_t r =
        grow_array(world, (void **)&world->sig_ids, &world->sig_ids_cap, 0, 64, sizeof(uint32_t));
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t id;
    return intern(world, NULL, 0, &id);
}

void weft__sig_fini(weft_world_t *world) {
    weft__free(world, world->sigs, (size_t)world->sig_cap * sizeof(weft__sig_t));
    weft__free(world, world->sig_ids, (size_t)world->sig_ids_cap * sizeof(uint32_t));
    weft__free(world, world->sig_table, (size_t)world->sig_table_cap * sizeof(uint32_t));
    weft__free(world, world->edges, (size_t)world->edge_cap * sizeof(uint64_t));
    world->sigs = NULL;
    world->sig_ids = NULL;
    world->sig_table = NULL;
    world->edges = NULL;
}

/* ---- transitions ------------------------------------------------------------ >>step */

static weft_result_t step_into(weft_world_t *world, uint32_t sig, uint32_t c, bool remove,
                               const uint32_t *cur, uint32_t n, uint32_t *ids, uint32_t *out);

weft_result_t weft__sig_step_slow(weft_world_t *world, uint32_t sig, uint32_t c, bool remove,
                                  uint32_t *out) {
    uint32_t n;
    const uint32_t *cur = weft__sig_ids(world, sig, &n);
    /* The new set: on the stack for up to 256 components (every entity of most worlds). */
    uint32_t stack_ids[256];
    uint32_t *ids = stack_ids;
    size_t heap_bytes = 0;
    if (n + 1u > 256u) {
        heap_bytes = ((size_t)n + 1u) * sizeof *ids;
        ids = weft__alloc(world, heap_bytes, _Alignof(uint32_t));
        if (ids == NULL) {
            return WEFT__FAIL(world->log, WEFT_ENOMEM, "component set of %u: out of memory",
                              n + 1u);
        }
    }
    weft_result_t r = step_into(world, sig, c, remove, cur, n, ids, out);
    if (heap_bytes != 0) {
        weft__free(world, ids, heap_bytes);
    }
    return r;
}

/* weft__sig_step_slow with room for n + 1 ids in `ids`. */
static weft_result_t step_into(weft_world_t *world, uint32_t sig, uint32_t c, bool remove,
                               const uint32_t *cur, uint32_t n, uint32_t *ids, uint32_t *out) {
    uint32_t m = 0;
    bool placed = false;
    for (uint32_t i = 0; i < n; i++) {
        if (cur[i] == c) {
            weft_assert_internal(remove);
            continue; /* dropped (remove) */
        }
        if (!remove && !placed && cur[i] > c) {
            ids[m++] = c;
            placed = true;
        }
        ids[m++] = cur[i];
    }
    if (!remove && !placed) {
        ids[m++] = c;
    }
    /* Room in the edge cache first, so nothing below can fail after interning. */
    if ((world->edge_count + 1u) * 2u > world->edge_cap) {
        weft_result_t r = rehash_edges(world, world->edge_cap ? world->edge_cap * 2u : 256u);
        if (r != WEFT_OK) {
            return r;
        }
    }
    uint32_t target = 0;
    weft_result_t r = intern(world, ids, m, &target);
    if (r != WEFT_OK) {
        return r;
    }
    uint64_t key = weft__sig_edge_key(sig, c, remove);
    uint32_t i = weft__sig_edge_hash(key, world->edge_cap);
    while (world->edges[i] != 0) {
        i = (i + 1u) & (world->edge_cap - 1u);
    }
    world->edges[i] = (key << 16) | target;
    world->edge_count++;
    *out = target;
    return WEFT_OK;
}
