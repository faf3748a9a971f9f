/* archive_format.h: the on-disk layout of weft archives and the helpers shared by the
 * writer, the reader and the tests (private; not installed).
 *
 * DESIGN
 * An archive is a 32-byte file header followed by `section_count` sections. Every integer
 * is little-endian. A section is a 32-byte section header, `size` payload bytes, and an
 * 8-byte trailer holding the checksum of the payload; the trailer comes after the payload so
 * the writer can stream a section while hashing it, in one pass over the data.
 *
 *   file header    magic[8] "WEFTARC\x1a", u32 format_version, u32 flags (0),
 *                  u32 section_count, u32 component_count, u64 header_check
 *   section header u32 tag, u32 zero, u64 size, u64 count, u64 header_check
 *   payload        `size` bytes
 *   trailer        u64 payload checksum
 *
 * header_check is the hash of the header's bytes before it, so a bit flip in a size field is
 * caught before the size is used.
 *
 * Sections, in order:
 *   ENTS (count = n entities): n x u64 original handles, all distinct and non-zero. The
 *        position of a handle is its archive-local id (0 .. n-1).
 *   SLOT (count = the saved world's entity-table high-water mark S; format 2 and later): the
 *        state of every slot, so a keep_ids load keeps every stale handle of the saved world
 *        stale. u64 free count F, then S x u32 slot states, then F x u32 free-list indices
 *        (bottom first, the next slot recycled last), padded to 8. A state holds the slot's
 *        generation in bits 0-15 (for a dead slot: the generation its next entity gets) and
 *        WEFT__ARC_SLOT_RETIRED for a slot retired at its last generation; other bits are 0.
 *        Slot 0 is 0; an archived entity's slot holds its generation; every other slot is
 *        either retired (generation 65535) or listed exactly once in the free list. Live
 *        entities left out of a partial save are written as if destroyed at save time.
 *   COMP (count = rows), one per component: a descriptor
 *          u32 name_len, u32 size, u32 align, u32 schema_version, u32 field_count, u32 zero,
 *          name bytes padded to 8, field_count x u32 field offsets padded to 8,
 *        then rows x u32 local ids (distinct, in pool row order) padded to 8, then rows x size
 *        data padded to 8 (zeros).
 *        Entity fields inside the data hold the original u64 handles (0 = null).
 *        A resource (weft/resource.h; format 2, whole-world saves) is a COMP section whose
 *        descriptor's last u32 is WEFT__ARC_COMP_RESOURCE, count 1, no entity fields and no
 *        owner column: the descriptor, the name, then the value padded to 8.
 *   MODL (count = the module's items; format 3 and later), zero or more, last, at most
 *        WEFT__ARC_MODULES_MAX, names distinct: one registered module's data (weft/module.h):
 *          u32 name_len, u32 module archive version, u64 byte count B,
 *          name bytes padded to 8, then B bytes written by the module, padded to 8.
 *        The loader hands the B bytes and the version to the module of that name.
 *   HIER (count = nodes; formats 1 and 2 only), optional, last: the hierarchy module's data
 *        before modules had sections of their own. Read as the MODL section of module
 *        WEFT__ARC_HIER_MODULE, version 1, whose bytes are exactly this payload.
 * Nothing follows the last section; trailing bytes are an error. */
#ifndef WEFT_ARCHIVE_FORMAT_H
#define WEFT_ARCHIVE_FORMAT_H

#include <stdint.h>
#include <string.h>

#include "weft/base.h"

#define WEFT__ARC_MAGIC "WEFTARC\x1a"
#define WEFT__ARC_FORMAT_VERSION 3u   /* written; 1 (no SLOT) and 2 (HIER, no MODL) are read */
#define WEFT__ARC_FORMAT_OLDEST 1u    /* oldest format read */
#define WEFT__ARC_FILE_HEADER 32u     /* bytes */
#define WEFT__ARC_SECTION_HEADER 32u  /* bytes */
#define WEFT__ARC_TRAILER 8u          /* bytes */
#define WEFT__ARC_COMP_DESC 24u       /* fixed part of a COMP descriptor, bytes */
#define WEFT__ARC_NAME_MAX 255u       /* longest component name accepted */
#define WEFT__ARC_FIELDS_MAX 64u      /* most entity fields per component accepted */
#define WEFT__ARC_SIZE_MAX (1u << 20) /* largest component size accepted, bytes */

#define WEFT__ARC_TAG(a, b, c, d) \
    ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define WEFT__ARC_TAG_ENTS WEFT__ARC_TAG('E', 'N', 'T', 'S')
#define WEFT__ARC_TAG_COMP WEFT__ARC_TAG('C', 'O', 'M', 'P')
#define WEFT__ARC_TAG_HIER WEFT__ARC_TAG('H', 'I', 'E', 'R')
#define WEFT__ARC_TAG_MODL WEFT__ARC_TAG('M', 'O', 'D', 'L')
#define WEFT__ARC_TAG_SLOT WEFT__ARC_TAG('S', 'L', 'O', 'T')
#define WEFT__ARC_SLOT_RETIRED 0x10000u        /* SLOT state flag: never reused */
#define WEFT__ARC_COMP_RESOURCE 1u             /* COMP descriptor flag: a resource's value */
#define WEFT__ARC_MODULE_DESC 16u              /* fixed part of a MODL section, bytes */
#define WEFT__ARC_MODULES_MAX 8u               /* MODL sections accepted (WEFT_MODULE_MAX) */
#define WEFT__ARC_HIER_MODULE "weft.hierarchy" /* the module a format-2 HIER section feeds */

/* Component data is copied as raw bytes, so archives are only portable between
 * little-endian hosts; the library refuses to build elsewhere rather than write files
 * that would silently differ. */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "weft archives require a little-endian host"
#endif
#endif

/* ---- little-endian helpers --------------------------------------------- >>le */

static inline uint32_t weft__le32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline uint64_t weft__le64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void weft__put32(unsigned char *p, uint32_t v) { memcpy(p, &v, sizeof v); }
static inline void weft__put64(unsigned char *p, uint64_t v) { memcpy(p, &v, sizeof v); }

/* Round up to a multiple of 8 (the alignment of every block inside a section). */
static inline uint64_t weft__pad8(uint64_t n) { return (n + 7u) & ~(uint64_t)7u; }

/* ---- checksum ---------------------------------------------------------- >>hash */

/* Streaming 64-bit checksum (archive_hash.c): four independent multiply-rotate lanes over
 * 32-byte stripes, so it runs near memory bandwidth; every single-bit change of the input
 * changes the result. Not cryptographic: it catches accidents, the parser catches malice. */
typedef struct weft__hash {
    uint64_t lane[4];       /* running lane states */
    unsigned char tail[32]; /* bytes not yet forming a full stripe */
    uint32_t tail_len;      /* bytes in tail */
    uint64_t total;         /* bytes hashed so far */
} weft__hash_t;

void weft__hash_init(weft__hash_t *h);
void weft__hash_update(weft__hash_t *h, const void *data, size_t size);
uint64_t weft__hash_final(const weft__hash_t *h);
/* One-shot convenience. */
uint64_t weft__hash64(const void *data, size_t size);

/* ---- bounded cursor ---------------------------------------------------- >>cursor */

/* A read cursor over bytes that are already in memory. Every take checks the request
 * against what remains, so a count read from the input can never make the parser read or
 * allocate beyond what the input itself holds. */
typedef struct weft__cursor {
    const unsigned char *p; /* next unread byte */
    uint64_t left;          /* bytes remaining */
} weft__cursor_t;

/* Take `n` bytes; NULL (cursor unchanged) when fewer remain. */
static inline const unsigned char *weft__take(weft__cursor_t *c, uint64_t n) {
    if (n > c->left) {
        return NULL;
    }
    const unsigned char *p = c->p;
    c->p += n;
    c->left -= n;
    return p;
}

#endif /* WEFT_ARCHIVE_FORMAT_H */
