/* archive_hash.c: the streaming 64-bit checksum that guards every archive section.
 *
 * DESIGN
 * The checksum must cost little next to copying the data it guards (the archive benchmark
 * allows save/load at most 3x a raw copy), so a table-driven CRC32 (about 1 byte/cycle with
 * slicing-by-8) is too slow. Instead four independent lanes each absorb one 8-byte word
 * per 32-byte stripe with `lane = rotl(lane + word * P2, 31) * P1` (the well-known round of
 * the xxHash family); the lanes carry no dependency on each other, so a core retires them in
 * parallel and the loop runs near memory bandwidth. Each round is a bijection of the word
 * for a fixed lane state, so flipping any single bit of the input changes that lane and,
 * through the final mixing, the result. The function is seedless and deterministic across
 * hosts of the same byte order. It detects accidents; the parser is what defends against
 * deliberate corruption, since an attacker can recompute any unkeyed checksum. */
#include <string.h>

#include "archive_format.h"
#include "weft/archive.h"

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static inline uint64_t rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64u - r)); }

static inline uint64_t lane_round(uint64_t lane, uint64_t word) {
    lane += word * P2;
    lane = rotl64(lane, 31);
    return lane * P1;
}

/* Fold a finished lane into the running result. */
static inline uint64_t merge_lane(uint64_t h, uint64_t lane) {
    h ^= lane_round(0, lane);
    return h * P1 + P4;
}

void weft__hash_init(weft__hash_t *h) {
    memset(h, 0, sizeof *h);
    h->lane[0] = P1 + P2;
    h->lane[1] = P2;
    h->lane[2] = 0;
    h->lane[3] = 0 - P1;
}

/* Absorb whole stripes from `p`; returns the number of bytes consumed (a multiple of 32).
 * Kept separate so the hot loop holds the lanes in registers. */
static size_t absorb_stripes(uint64_t lane[4], const unsigned char *p, size_t size) {
    uint64_t a = lane[0], b = lane[1], c = lane[2], d = lane[3];
    size_t done = 0;
    for (; size - done >= 32u; done += 32u) {
        a = lane_round(a, weft__le64(p + done));
        b = lane_round(b, weft__le64(p + done + 8));
        c = lane_round(c, weft__le64(p + done + 16));
        d = lane_round(d, weft__le64(p + done + 24));
    }
    lane[0] = a;
    lane[1] = b;
    lane[2] = c;
    lane[3] = d;
    return done;
}

void weft__hash_update(weft__hash_t *h, const void *data, size_t size) {
    const unsigned char *p = data;
    h->total += size;
    if (h->tail_len) {
        size_t want = 32u - h->tail_len;
        size_t n = size < want ? size : want;
        memcpy(h->tail + h->tail_len, p, n);
        h->tail_len += (uint32_t)n;
        p += n;
        size -= n;
        if (h->tail_len < 32u) {
            return;
        }
        absorb_stripes(h->lane, h->tail, 32u);
        h->tail_len = 0;
    }
    size_t done = absorb_stripes(h->lane, p, size);
    if (size > done) {
        memcpy(h->tail, p + done, size - done);
        h->tail_len = (uint32_t)(size - done);
    }
}

uint64_t weft__hash_final(const weft__hash_t *h) {
    uint64_t r = rotl64(h->lane[0], 1) + rotl64(h->lane[1], 7) + rotl64(h->lane[2], 12) +
                 rotl64(h->lane[3], 18);
    for (unsigned i = 0; i < 4u; ++i) {
        r = merge_lane(r, h->lane[i]);
    }
    r += h->total;

    /* The tail (< 32 bytes): 8-byte words, then one 4-byte word, then single bytes. */
    const unsigned char *t = h->tail;
    uint32_t n = h->tail_len;
    for (; n >= 8u; n -= 8u, t += 8) {
        r ^= lane_round(0, weft__le64(t));
        r = rotl64(r, 27) * P1 + P4;
    }
    if (n >= 4u) {
        r ^= (uint64_t)weft__le32(t) * P1;
        r = rotl64(r, 23) * P2 + P3;
        n -= 4u;
        t += 4;
    }
    for (; n > 0u; --n, ++t) {
        r ^= (uint64_t)*t * P5;
        r = rotl64(r, 11) * P1;
    }

    /* Final avalanche so nearby inputs give unrelated results. */
    r ^= r >> 33;
    r *= P2;
    r ^= r >> 29;
    r *= P3;
    r ^= r >> 32;
    return r;
}

uint64_t weft__hash64(const void *data, size_t size) {
    weft__hash_t h;
    weft__hash_init(&h);
    weft__hash_update(&h, data, size);
    return weft__hash_final(&h);
}

uint64_t weft_archive_checksum(const void *data, size_t size) { return weft__hash64(data, size); }
