/* fault_alloc.c: the counting, leak-tracking, fault-injecting allocator of fault_alloc.h.
 *
 * Every block is laid out as [padding | header (32 bytes)] [user bytes], with the header
 * ending exactly where the user bytes start, so the user pointer keeps the requested
 * alignment. The header records the requested size and alignment and a magic word that is
 * flipped on free, which is how a second free or a free with the wrong size is noticed. */
#include "fault_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC_LIVE 0x5746415f4c495645ull  /* "WFA_LIVE" */
#define MAGIC_FREED 0x5746415f44454144ull /* "WFA_DEAD" */
#define HEADER_SIZE 32u

typedef struct block_header {
    uint64_t magic;  /* MAGIC_LIVE while allocated */
    uint64_t size;   /* requested size */
    uint64_t align;  /* effective alignment (>= HEADER_SIZE, a power of two) */
    uint64_t serial; /* 1-based allocation number since the last reset (for messages) */
} block_header_t;

_Static_assert(sizeof(block_header_t) == HEADER_SIZE, "header must be 32 bytes");

void wt_fault_init(wt_fault_alloc_t *fa) { memset(fa, 0, sizeof *fa); }

void wt_fault_arm(wt_fault_alloc_t *fa, uint64_t k, uint64_t n) {
    fa->calls = 0;
    fa->failures = 0;
    fa->fail_at = k;
    fa->fail_count = n ? n : 1;
    fa->fail_one_in = 0;
}

uint64_t wt_fault_calls(const wt_fault_alloc_t *fa) { return fa->calls; }
uint64_t wt_fault_failures(const wt_fault_alloc_t *fa) { return fa->failures; }
int64_t wt_fault_live_bytes(const wt_fault_alloc_t *fa) { return fa->live_bytes; }
int64_t wt_fault_live_blocks(const wt_fault_alloc_t *fa) { return fa->live_blocks; }
uint64_t wt_fault_bad_frees(const wt_fault_alloc_t *fa) { return fa->bad_frees; }

void wt_fault_arm_random(wt_fault_alloc_t *fa, uint32_t one_in, uint64_t seed) {
    fa->calls = 0;
    fa->failures = 0;
    fa->fail_at = 0;
    fa->fail_one_in = one_in;
    fa->fail_seed = seed;
}

/* True when allocation number n (1-based) is one the caller asked to fail. */
static bool should_fail(const wt_fault_alloc_t *fa, uint64_t n) {
    if (fa->fail_one_in != 0) {
        uint64_t z = (n ^ fa->fail_seed) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
        if ((z ^ (z >> 29)) % fa->fail_one_in == 0) {
            return true;
        }
    }
    if (fa->fail_at == 0 || n < fa->fail_at) {
        return false;
    }
    if (fa->fail_count == UINT64_MAX) {
        return true;
    }
    return n - fa->fail_at < fa->fail_count;
}

static void *fault_alloc(size_t size, size_t align, void *user) {
    wt_fault_alloc_t *fa = user;
    uint64_t n = ++fa->calls; /* atomic increment: each caller gets its own number */
    if (should_fail(fa, n)) {
        ++fa->failures;
        return NULL;
    }
    if (align == 0 || (align & (align - 1)) != 0) {
        fprintf(stderr, "fault_alloc: alignment %zu is not a power of two\n", align);
        abort();
    }
    size_t a = align < HEADER_SIZE ? HEADER_SIZE : align;
    size_t body = (size + a - 1) & ~(a - 1);
    if (body == 0) {
        body = a;
    }
    unsigned char *base = aligned_alloc(a, a + body);
    if (base == NULL) {
        return NULL;
    }
    unsigned char *p = base + a;
    block_header_t h = {.magic = MAGIC_LIVE, .size = size, .align = a, .serial = n};
    memcpy(p - HEADER_SIZE, &h, sizeof h);
    ++fa->live_blocks;
    fa->live_bytes += (int64_t)size;
    int64_t live = fa->live_bytes;
    int64_t peak = fa->peak_bytes;
    /* Peak is advisory: a race with a concurrent allocation or free may misreport it slightly. */
    if (live > peak) {
        fa->peak_bytes = live;
    }
    return p;
}

static void fault_free(void *ptr, size_t size, void *user) {
    wt_fault_alloc_t *fa = user;
    if (ptr == NULL) {
        return;
    }
    unsigned char *p = ptr;
    block_header_t h;
    memcpy(&h, p - HEADER_SIZE, sizeof h);
    if (h.magic != MAGIC_LIVE) {
        ++fa->bad_frees;
        if (!fa->quiet) {
            fprintf(stderr, "fault_alloc: free of %p (%zu bytes): %s\n", ptr, size,
                    h.magic == MAGIC_FREED ? "already freed" : "not allocated here");
        }
        return; /* leaking is safer than freeing a pointer we do not own */
    }
    if (h.size != size) {
        ++fa->bad_frees;
        if (!fa->quiet) {
            fprintf(stderr,
                    "fault_alloc: free of %p with size %zu, but allocation #%llu asked for %llu\n",
                    ptr, size, (unsigned long long)h.serial, (unsigned long long)h.size);
        }
    }
    h.magic = MAGIC_FREED;
    memcpy(p - HEADER_SIZE, &h, sizeof h);
    ++fa->frees;
    --fa->live_blocks;
    fa->live_bytes -= (int64_t)h.size;
    free(p - h.align);
}

weft_allocator_t wt_fault_allocator(wt_fault_alloc_t *fa) {
    return (weft_allocator_t){.alloc = fault_alloc, .free = fault_free, .user = fa};
}
