/* gen_corpus.c: writes the archive fuzz seed corpus (tools/fuzz/corpus/archive/).
 *
 * Usage: weft_gen_corpus <dir>. Files named ok_* are valid archives for the fuzz world
 * (fuzz_world.h); files named bad_* must be rejected. Some bad_* files are damaged and then
 * "resealed" — their header checks and checksums recomputed — so they exercise the
 * structural checks behind the checksums (counts larger than the input, duplicate or
 * out-of-range entity ids, a future format version). tests/archive replays the directory.
 * Uses the private archive_format.h for the checksum; it is a developer tool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_world.h"
#include "src/io/archive_format.h"

typedef struct blob {
    unsigned char *p;
    size_t n;
} blob_t;

static void die(const char *what) {
    fprintf(stderr, "gen_corpus: %s: %s\n", what, weft_last_error());
    exit(1);
}

static void put(const char *dir, const char *name, const unsigned char *p, size_t n) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        die(path);
    }
}

/* Recompute the file header check and every section's header check and payload checksum,
 * trusting the (possibly damaged) sizes as far as the bytes go. */
static void reseal(unsigned char *p, size_t n) {
    if (n < WEFT__ARC_FILE_HEADER) {
        return;
    }
    weft__put64(p + 24, weft__hash64(p, 24));
    size_t at = WEFT__ARC_FILE_HEADER;
    while (n - at >= WEFT__ARC_SECTION_HEADER) {
        unsigned char *h = p + at;
        uint64_t size = weft__le64(h + 8);
        weft__put64(h + 24, weft__hash64(h, 24));
        at += WEFT__ARC_SECTION_HEADER;
        if (size > n - at || n - at - size < WEFT__ARC_TRAILER) {
            return;
        }
        weft__put64(p + at + size, weft__hash64(p + at, (size_t)size));
        at += (size_t)size + WEFT__ARC_TRAILER;
    }
}

/* A world of n entities with every component kind and references between them. */
static blob_t make_archive(uint32_t n, uint32_t seed, bool partial) {
    weft_component_t c[FZ_COUNT];
    weft_world_t *w = fz_world(c, NULL);
    if (!w) {
        die("world");
    }
    weft_entity_t *es = calloc(n + 1u, sizeof *es);
    if (weft_entity_create_n(w, n, es) != WEFT_OK) {
        die("create");
    }
    uint32_t s = seed;
    for (uint32_t i = 0; i < n; ++i) {
        s = s * 1103515245u + 12345u;
        float v[3] = {(float)i, (float)s, 0.5f};
        if (s & 0x100) {
            weft_component_set(w, es[i], c[FZ_POS], v);
        }
        if (s & 0x200) {
            weft_component_set(w, es[i], c[FZ_VEL], v);
        }
        if (s & 0x400) {
            uint64_t ref[2] = {es[(s >> 16) % n], i};
            weft_component_set(w, es[i], c[FZ_REF], ref);
        }
        if (s & 0x800) {
            weft_component_add(w, es[i], c[FZ_TAG], NULL);
        }
        if (s & 0x1000) {
            uint64_t pair[3] = {s, es[(s >> 20) % n], es[i]};
            weft_component_set(w, es[i], c[FZ_PAIR], pair);
        }
    }
    /* A small hierarchy over the first 8 entities, including the counter-example
     * attach(E4,E3); attach(E2,E1); attach(E3,E2), which moves a subtree. */
    static const uint32_t links[][2] = {{4, 3}, {2, 1}, {3, 2}, {5, 0}, {6, 5}, {7, 1}, {1, 0}};
    for (uint32_t i = 0; n >= 8u && i < 8u; ++i) {
        weft_transform_t t = weft_transform_identity();
        t.position.x = (float)i;
        if (weft_hier_add(w, es[i], &t) != WEFT_OK) {
            die("hier_add");
        }
    }
    for (size_t k = 0; n >= 8u && k < sizeof links / sizeof links[0]; ++k) {
        if (weft_hier_attach(w, es[links[k][0]], es[links[k][1]]) != WEFT_OK) {
            die("hier_attach");
        }
    }
    if (weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) != WEFT_OK) {
        die("hier_update");
    }
    if (n > 9) {
        weft_entity_destroy(w, es[n / 2]);
    }
    weft_membuf_t buf = {0};
    weft_writer_t wr = weft_membuf_writer(&buf);
    weft_archive_save_desc_t d = {
        .entities = es + 2, .entity_count = n / 3, .with_descendants = true};
    if (weft_archive_save(w, partial ? &d : NULL, &wr) != WEFT_OK) {
        die("save");
    }
    free(es);
    weft_world_destroy(w);
    return (blob_t){buf.data, buf.size};
}

static blob_t copy(blob_t b) {
    blob_t c = {malloc(b.n), b.n};
    memcpy(c.p, b.p, b.n);
    return c;
}

/* Offset of the payload of the section whose header is at `at`, and of the next header. */
static size_t payload_at(size_t at) { return at + WEFT__ARC_SECTION_HEADER; }
static size_t next_section(blob_t b, size_t at) {
    return payload_at(at) + (size_t)weft__le64(b.p + at + 8) + WEFT__ARC_TRAILER;
}

/* Offset of the SLOT section's payload (after ENTS). */
static size_t slot_payload(blob_t b) { return payload_at(next_section(b, WEFT__ARC_FILE_HEADER)); }

/* Offset of the first COMP section's payload (after ENTS and SLOT). */
static size_t first_comp_payload(blob_t b) {
    return payload_at(next_section(b, next_section(b, WEFT__ARC_FILE_HEADER)));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    blob_t small = make_archive(12, 1, false);
    put(dir, "ok_small.warc", small.p, small.n);
    blob_t refs = make_archive(60, 2, false);
    put(dir, "ok_refs.warc", refs.p, refs.n);
    blob_t empty = make_archive(0, 3, false);
    put(dir, "ok_empty.warc", empty.p, empty.n);
    blob_t part = make_archive(30, 4, true);
    put(dir, "ok_partial.warc", part.p, part.n);

    put(dir, "bad_truncated.warc", small.p, small.n / 2);
    blob_t b = copy(small);
    b.p[b.n - 20] ^= 0x10;
    put(dir, "bad_bitflip.warc", b.p, b.n);
    b = copy(small);
    b.p[0] = 'X';
    put(dir, "bad_magic.warc", b.p, b.n);
    b = copy(small);
    weft__put32(b.p + 8, WEFT__ARC_FORMAT_VERSION + 1u);
    reseal(b.p, b.n);
    put(dir, "bad_version_resealed.warc", b.p, b.n);
    b = copy(small);
    weft__put64(b.p + WEFT__ARC_FILE_HEADER + 16, 1u << 30); /* ENTS count >> input */
    reseal(b.p, b.n);
    put(dir, "bad_entity_count_resealed.warc", b.p, b.n);
    b = copy(small);
    weft__put32(b.p + 20, 100000u); /* component sections >> input */
    weft__put32(b.p + 16, 100001u);
    reseal(b.p, b.n);
    put(dir, "bad_section_count_resealed.warc", b.p, b.n);
    b = copy(refs);
    size_t at = first_comp_payload(b);
    size_t name = (size_t)weft__pad8(weft__le32(b.p + at));
    size_t fields = (size_t)weft__pad8(4u * (uint64_t)weft__le32(b.p + at + 16));
    size_t ids = at + WEFT__ARC_COMP_DESC + name + fields;
    memcpy(b.p + ids + 4, b.p + ids, 4); /* the same entity twice in one section */
    reseal(b.p, b.n);
    put(dir, "bad_duplicate_id_resealed.warc", b.p, b.n);
    b = copy(refs);
    weft__put32(b.p + ids, 0xFFFFFFF0u); /* entity id out of range */
    reseal(b.p, b.n);
    put(dir, "bad_id_range_resealed.warc", b.p, b.n);
    b = copy(refs);
    memcpy(b.p + at + WEFT__ARC_COMP_DESC, "Unknown!", 8 < name ? 8 : name);
    reseal(b.p, b.n);
    put(dir, "bad_unknown_component_resealed.warc", b.p, b.n);
    b = copy(refs);
    weft__put32(b.p + at + 4, 13u); /* size differs from the registration */
    reseal(b.p, b.n);
    put(dir, "bad_size_resealed.warc", b.p, b.n);
    b = copy(refs);
    weft__put32(b.p + slot_payload(b) + 8u, 1u); /* slot 0 claims a generation */
    reseal(b.p, b.n);
    put(dir, "bad_slot_resealed.warc", b.p, b.n);
    printf("corpus written to %s\n", dir);
    return 0;
}
