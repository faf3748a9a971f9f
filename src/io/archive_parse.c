/* archive_parse.c: stage 1 of loading — turn untrusted bytes into a validated weft__arc_t
 * without touching any world.
 *
 * DESIGN
 * Everything here assumes the input is hostile. The input is walked with a bounded cursor:
 * a count read from the input is first compared with the bytes left (divided by the bytes
 * each counted item occupies), and only then multiplied, so no product can overflow and no
 * read can pass the end. Header checks guard the size fields before they are trusted, the
 * payload checksum guards the rest (unless the caller skips it, as the fuzzer does: the
 * structural checks alone must keep the parser safe). The one allocation, the section table,
 * is bounded by the input: every section occupies at least 72 bytes of it. Error messages
 * name the section and the byte offset so a corrupt file can be diagnosed; they go to the
 * `log` every function here takes: the target world's logger (NULL only for inspect). */
#include <string.h>

#include "archive_internal.h"
#include "jobs/platform/report.h"
#include "weft/module.h"

#define SECTION_MIN (WEFT__ARC_SECTION_HEADER + WEFT__ARC_TRAILER)

/* Where the cursor is, as an offset from the start of the input, for messages. */
static uint64_t offset_of(const weft__cursor_t *c, const unsigned char *base) {
    return (uint64_t)(c->p - base);
}

/* One section as framed in the input: tag, count, payload. */
typedef struct section {
    uint32_t tag;
    uint64_t count;
    weft__cursor_t payload; /* exactly the payload bytes */
    uint64_t at;            /* offset of the section header, for messages */
} section_t;

static weft_result_t read_section(const weft_logger_t *log, weft__cursor_t *c,
                                  const unsigned char *base, uint32_t index, bool verify,
                                  section_t *s) {
    memset(s, 0, sizeof *s);
    s->at = offset_of(c, base);
    const unsigned char *h = weft__take(c, WEFT__ARC_SECTION_HEADER);
    if (!h) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive truncated: section %u header at offset %llu is missing", index,
                          (unsigned long long)s->at);
    }
    if (weft__hash64(h, 24) != weft__le64(h + 24)) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: section %u header at offset %llu fails its check",
                          index, (unsigned long long)s->at);
    }
    /* The header check comes first: a flipped size must not be trusted even for the bounds
     * test below, or a corrupt file would report a misleading "truncated". */
    s->tag = weft__le32(h);
    s->count = weft__le64(h + 16);
    uint64_t size = weft__le64(h + 8);
    if (weft__le32(h + 4) != 0 || size % 8u != 0) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: section %u at offset %llu has a malformed header",
                          index, (unsigned long long)s->at);
    }
    if (c->left < WEFT__ARC_TRAILER || size > c->left - WEFT__ARC_TRAILER) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive truncated: section %u at offset %llu declares %llu bytes, only "
                          "%llu remain",
                          index, (unsigned long long)s->at, (unsigned long long)size,
                          (unsigned long long)(c->left >= 8u ? c->left - 8u : 0u));
    }
    /* The payload is hashed in place: the loader never copies input it might reject. */
    s->payload.p = weft__take(c, size);
    s->payload.left = size;
    const unsigned char *trailer = weft__take(c, WEFT__ARC_TRAILER);
    if (verify && weft__hash64(s->payload.p, (size_t)size) != weft__le64(trailer)) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: section %u at offset %llu fails its checksum", index,
                          (unsigned long long)s->at);
    }
    return WEFT_OK;
}

static weft_result_t parse_entities(const weft_logger_t *log, const section_t *s,
                                    weft__arc_t *arc) {
    if (s->tag != WEFT__ARC_TAG_ENTS) {
        return WEFT__FAIL(log, WEFT_ECORRUPT, "archive corrupt: first section is not ENTS");
    }
    if (s->count > s->payload.left / 8u || s->count * 8u != s->payload.left ||
        s->count > UINT32_MAX) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: ENTS declares %llu entities in %llu bytes",
                          (unsigned long long)s->count, (unsigned long long)s->payload.left);
    }
    arc->entity_count = s->count;
    arc->ents = s->payload.p;
    /* Strictly ascending indices: distinct handles, and binary search for field remapping. */
    uint64_t prev = 0;
    for (uint64_t i = 0; i < s->count; ++i) {
        uint64_t e = weft__le64(arc->ents + i * 8u);
        uint64_t index = e & 0xffffffffu;
        if (index == 0 || (i > 0 && index <= prev)) {
            return WEFT__FAIL(log, WEFT_ECORRUPT,
                              "archive corrupt: entity %llu (0x%llx) is null, repeated or out of "
                              "order",
                              (unsigned long long)i, (unsigned long long)e);
        }
        prev = index;
    }
    return WEFT_OK;
}

/* The slot table (format 2): every state well-formed, archived slots carry their entity's
 * generation, and the free list names every other non-retired slot exactly once. A bitmap of
 * S bits (S <= payload / 4) catches repeats; it is the parser's only allocation besides the
 * section table, and bounded by the input like it. */
static weft_result_t parse_slots(const weft_logger_t *log, const section_t *s,
                                 const weft_allocator_t *alloc, weft__arc_t *arc) {
    if (s->tag != WEFT__ARC_TAG_SLOT) {
        return WEFT__FAIL(log, WEFT_ECORRUPT, "archive corrupt: second section is not SLOT");
    }
    weft__cursor_t c = s->payload;
    const unsigned char *fc = weft__take(&c, 8);
    uint64_t slots = s->count, nfree = fc ? weft__le64(fc) : 0;
    if (!fc || slots == 0 || slots > UINT32_MAX || slots > c.left / 4u ||
        nfree > (c.left - 4u * slots) / 4u || weft__pad8(4u * (slots + nfree)) != c.left) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: SLOT declares %llu slots and %llu free in %llu bytes",
                          (unsigned long long)slots, (unsigned long long)nfree,
                          (unsigned long long)s->payload.left);
    }
    const unsigned char *states = c.p, *free = c.p + 4u * slots;
    uint64_t k = 0, retired = 0;
    for (uint64_t i = 0; i < slots; ++i) {
        uint32_t st = weft__le32(states + 4u * i), gen = st & 0xFFFFu;
        bool is_retired = (st & WEFT__ARC_SLOT_RETIRED) != 0;
        bool is_archived = k < arc->entity_count && weft__le32(arc->ents + 8u * k) == i;
        uint64_t e = is_archived ? weft__le64(arc->ents + 8u * k++) : 0;
        bool bad = (st & ~(0xFFFFu | WEFT__ARC_SLOT_RETIRED)) != 0 || (i == 0 && st != 0) ||
                   (is_retired && (gen != 0xFFFFu || is_archived)) ||
                   (is_archived && (e >> 32) != gen);
        if (bad) {
            return WEFT__FAIL(log, WEFT_ECORRUPT,
                              "archive corrupt: SLOT state 0x%x of slot %llu does not match the "
                              "archive",
                              st, (unsigned long long)i);
        }
        retired += is_retired;
    }
    if (k != arc->entity_count || nfree + k + retired + 1u != slots) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: SLOT's %llu slots hold %llu of %llu entities, %llu "
                          "retired and %llu free",
                          (unsigned long long)slots, (unsigned long long)k,
                          (unsigned long long)arc->entity_count, (unsigned long long)retired,
                          (unsigned long long)nfree);
    }
    /* Archived slots are marked first, so a free entry naming one counts as a repeat. */
    size_t words = (size_t)(slots + 63u) / 64u;
    uint64_t *seen = weft__hook_alloc(alloc, words * 8u, 8);
    if (!seen) {
        return WEFT__FAIL(log, WEFT_ENOMEM, "weft_archive: cannot allocate %zu bytes", words * 8u);
    }
    memset(seen, 0, words * 8u);
    for (uint64_t a = 0; a < arc->entity_count; ++a) {
        uint32_t idx = weft__le32(arc->ents + 8u * a);
        seen[idx / 64u] |= (uint64_t)1 << (idx % 64u);
    }
    weft_result_t r = WEFT_OK;
    for (uint64_t j = 0; j < nfree && r == WEFT_OK; ++j) {
        uint32_t idx = weft__le32(free + 4u * j);
        if (idx != 0 && idx < slots &&
            (weft__le32(states + 4u * idx) & WEFT__ARC_SLOT_RETIRED) == 0 &&
            (seen[idx / 64u] >> (idx % 64u) & 1u) == 0) {
            seen[idx / 64u] |= (uint64_t)1 << (idx % 64u);
        } else {
            r = WEFT__FAIL(log, WEFT_ECORRUPT,
                           "archive corrupt: SLOT free entry %llu (slot %u) is out of range, "
                           "repeated, retired or an archived entity",
                           (unsigned long long)j, idx);
        }
    }
    weft__hook_free(alloc, seen, words * 8u);
    if (r == WEFT_OK) {
        arc->slot_count = slots;
        arc->slots = states;
        arc->free_count = nfree;
        arc->free = free;
    }
    return r;
}

/* The fixed descriptor of a COMP section: name, layout and entity-field offsets. */
static weft_result_t parse_comp_desc(const weft_logger_t *log, weft__cursor_t *c, uint32_t index,
                                     weft__arc_comp_t *cp) {
    const unsigned char *d = weft__take(c, WEFT__ARC_COMP_DESC);
    if (!d) {
        return WEFT__FAIL(log, WEFT_ECORRUPT, "archive corrupt: component section %u is too short",
                          index);
    }
    /* Every field is bounded before use: the name by WEFT__ARC_NAME_MAX, the value size by
     * WEFT__ARC_SIZE_MAX (so rows * size below cannot overflow 64 bits), alignment to a power
     * of two the registration could have, entity fields to offsets inside the value. */
    cp->name_len = weft__le32(d);
    cp->size = weft__le32(d + 4);
    cp->align = weft__le32(d + 8);
    cp->schema = weft__le32(d + 12);
    cp->field_count = weft__le32(d + 16);
    uint32_t flags = weft__le32(d + 20);
    cp->resource = flags == WEFT__ARC_COMP_RESOURCE;
    if (cp->name_len == 0 || cp->name_len > WEFT__ARC_NAME_MAX || (flags != 0 && !cp->resource)) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: component section %u has a bad name length %u", index,
                          cp->name_len);
    }
    if (cp->size > WEFT__ARC_SIZE_MAX || cp->align == 0 || (cp->align & (cp->align - 1u)) != 0 ||
        cp->align > 4096u || cp->size % cp->align != 0) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: component section %u has size %u / align %u", index,
                          cp->size, cp->align);
    }
    if (cp->field_count > WEFT__ARC_FIELDS_MAX) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: component section %u declares %u entity fields", index,
                          cp->field_count);
    }
    const unsigned char *name = weft__take(c, weft__pad8(cp->name_len));
    const unsigned char *fields = name ? weft__take(c, weft__pad8(cp->field_count * 4ull)) : NULL;
    if (!fields) {
        return WEFT__FAIL(log, WEFT_ECORRUPT, "archive corrupt: component section %u is truncated",
                          index);
    }
    /* Names are compared as C strings with registered names: an embedded NUL would let two
     * different archived names match the same component. */
    if (memchr(name, 0, cp->name_len) != NULL) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: component section %u name contains NUL", index);
    }
    cp->name = (const char *)name;
    cp->fields = fields;
    for (uint32_t f = 0; f < cp->field_count; ++f) {
        uint32_t off = weft__le32(fields + 4u * f);
        if (cp->size < 8u || off > cp->size - 8u) {
            return WEFT__FAIL(log, WEFT_ECORRUPT,
                              "archive corrupt: component '%.*s' entity field at %u is outside "
                              "its %u bytes",
                              (int)cp->name_len, cp->name, off, cp->size);
        }
    }
    return WEFT_OK;
}

static weft_result_t parse_comp(const weft_logger_t *log, const section_t *s, uint32_t index,
                                weft__arc_t *arc, weft__arc_comp_t *cp) {
    if (s->tag != WEFT__ARC_TAG_COMP) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: section %u at offset %llu is not a component", index,
                          (unsigned long long)s->at);
    }
    weft__cursor_t c = s->payload;
    weft_result_t r = parse_comp_desc(log, &c, index, cp);
    if (r != WEFT_OK) {
        return r;
    }
    if (cp->resource) { /* one value, no owners */
        cp->rows = 0;
        cp->ids = NULL;
        cp->data = weft__take(&c, weft__pad8(cp->size));
        if (s->count != 1 || cp->field_count != 0 || cp->size == 0 || !cp->data || c.left != 0) {
            return WEFT__FAIL(log, WEFT_ECORRUPT,
                              "archive corrupt: resource '%.*s' section is malformed",
                              (int)cp->name_len, cp->name);
        }
        return WEFT_OK;
    }
    /* rows x (4 id bytes + size data bytes) must fill the rest exactly (ids padded to 8). */
    uint64_t rows = s->count;
    uint64_t per_row = 4u + (uint64_t)cp->size; /* padding is at most 14 more bytes */
    if (rows > c.left / per_row) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: component '%.*s' declares %llu rows in %llu bytes",
                          (int)cp->name_len, cp->name, (unsigned long long)rows,
                          (unsigned long long)c.left);
    }
    cp->rows = rows;
    cp->ids = weft__take(&c, weft__pad8(rows * 4u));
    cp->data = cp->ids ? weft__take(&c, weft__pad8(rows * cp->size)) : NULL;
    if (!cp->data || c.left != 0) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: component '%.*s' section length does not match its "
                          "%llu rows",
                          (int)cp->name_len, cp->name, (unsigned long long)rows);
    }
    /* Range only here; an entity listed twice is caught while staging (it needs a table). */
    for (uint64_t i = 0; i < rows; ++i) {
        uint32_t id = weft__le32(cp->ids + 4u * i);
        if (id >= arc->entity_count) {
            return WEFT__FAIL(log, WEFT_ECORRUPT,
                              "archive corrupt: component '%.*s' row %llu refers to entity %u "
                              "of %llu",
                              (int)cp->name_len, cp->name, (unsigned long long)i, id,
                              (unsigned long long)arc->entity_count);
        }
    }
    arc->row_count += rows;
    return WEFT_OK;
}

/* A format-2 HIER section: the hierarchy module's data before modules had sections of their
 * own, read as that module's part, version 1 (its records are exactly the payload). */
static weft_result_t parse_hier(const weft_logger_t *log, const section_t *s, weft__arc_t *arc) {
    if (s->tag != WEFT__ARC_TAG_HIER) {
        return WEFT__FAIL(log, WEFT_ECORRUPT, "archive corrupt: last section is not HIER");
    }
    arc->modules[0] = (weft__arc_module_t){.name = WEFT__ARC_HIER_MODULE,
                                           .name_len = sizeof WEFT__ARC_HIER_MODULE - 1u,
                                           .version = 1,
                                           .items = s->count,
                                           .data = s->payload.p,
                                           .size = s->payload.left};
    arc->module_count = 1;
    return WEFT_OK;
}

/* A MODL section (format 3): a module's name, version and bytes; names distinct. */
static weft_result_t parse_module(const weft_logger_t *log, const section_t *s, weft__arc_t *arc) {
    if (s->tag != WEFT__ARC_TAG_MODL) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: a section after the components is not MODL");
    }
    weft__cursor_t c = s->payload;
    const unsigned char *d = weft__take(&c, WEFT__ARC_MODULE_DESC);
    if (d == NULL) {
        return WEFT__FAIL(log, WEFT_ECORRUPT, "archive corrupt: module section too short");
    }
    weft__arc_module_t m = {.name_len = weft__le32(d),
                            .version = weft__le32(d + 4),
                            .size = weft__le64(d + 8),
                            .items = s->count};
    if (m.name_len == 0 || m.name_len > WEFT_MODULE_NAME_MAX) {
        return WEFT__FAIL(log, WEFT_ECORRUPT, "archive corrupt: module name length %u", m.name_len);
    }
    m.name = (const char *)weft__take(&c, weft__pad8(m.name_len));
    m.data = m.name != NULL && m.size <= c.left ? weft__take(&c, weft__pad8(m.size)) : NULL;
    if (m.data == NULL || c.left != 0) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: module section length does not match its %llu bytes",
                          (unsigned long long)m.size);
    }
    for (uint32_t k = 0; k < arc->module_count; ++k) {
        if (arc->modules[k].name_len == m.name_len &&
            memcmp(arc->modules[k].name, m.name, m.name_len) == 0) {
            return WEFT__FAIL(log, WEFT_ECORRUPT, "archive corrupt: module '%.*s' appears twice",
                              (int)m.name_len, m.name);
        }
    }
    arc->modules[arc->module_count++] = m;
    return WEFT_OK;
}

static weft_result_t parse_file_header(const weft_logger_t *log, weft__cursor_t *c,
                                       uint32_t *version_out, uint32_t *comp_count,
                                       uint32_t *module_count) {
    /* Magic first (a different file type is EVERSION, not "corrupt"), then the header check,
     * then the version: a bit flip in the version field is corruption, not a future file. */
    const unsigned char *h = weft__take(c, WEFT__ARC_FILE_HEADER);
    if (!h || memcmp(h, WEFT__ARC_MAGIC, 8) != 0) {
        return WEFT__FAIL(log, WEFT_EVERSION, "not a weft archive (bad magic)");
    }
    uint32_t version = weft__le32(h + 8);
    if (weft__hash64(h, 24) != weft__le64(h + 24)) {
        return WEFT__FAIL(log, WEFT_ECORRUPT, "archive corrupt: file header fails its check");
    }
    if (version < WEFT__ARC_FORMAT_OLDEST || version > WEFT__ARC_FORMAT_VERSION) {
        return WEFT__FAIL(log, WEFT_EVERSION,
                          "archive format version %u is not supported (this build reads %u to %u)",
                          version, WEFT__ARC_FORMAT_OLDEST, WEFT__ARC_FORMAT_VERSION);
    }
    if (weft__le32(h + 12) != 0) {
        return WEFT__FAIL(log, WEFT_EVERSION, "archive uses unknown feature flags 0x%x",
                          weft__le32(h + 12));
    }
    /* ENTS, SLOT from format 2 on, the COMP sections, then an optional HIER (formats 1, 2)
     * or up to WEFT__ARC_MODULES_MAX MODL sections (format 3). */
    uint32_t fixed = version >= 2u ? 2u : 1u;
    uint32_t sections = weft__le32(h + 16);
    *version_out = version;
    *comp_count = weft__le32(h + 20);
    const uint32_t most = version >= 3u ? WEFT__ARC_MODULES_MAX : 1u;
    if (sections < fixed || sections - fixed < *comp_count ||
        sections - fixed - *comp_count > most) {
        return WEFT__FAIL(log, WEFT_ECORRUPT, "archive corrupt: %u sections for %u components",
                          sections, *comp_count);
    }
    *module_count = sections - fixed - *comp_count;
    /* Bound the section table by the input before allocating it. */
    if (*comp_count > c->left / (SECTION_MIN + WEFT__ARC_COMP_DESC + 8u)) {
        return WEFT__FAIL(log, WEFT_ECORRUPT,
                          "archive corrupt: %u component sections cannot fit in %llu bytes",
                          *comp_count, (unsigned long long)c->left);
    }
    return WEFT_OK;
}

weft_result_t weft__arc_parse(const void *data, size_t size, bool verify_checksums,
                              const weft_allocator_t *alloc, const weft_logger_t *log,
                              weft__arc_t *out) {
    memset(out, 0, sizeof *out);
    out->alloc = *alloc;
    if (!data && size) {
        return WEFT__FAIL(log, WEFT_EINVAL, "weft_archive: data is NULL");
    }
    const unsigned char *base = data;
    weft__cursor_t c = {.p = base, .left = size};
    uint32_t ncomp = 0, version = 0;
    uint32_t nmod = 0;
    weft_result_t r = parse_file_header(log, &c, &version, &ncomp, &nmod);
    if (r != WEFT_OK) {
        return r;
    }
    out->format_version = version;
    out->byte_size = size;

    section_t s;
    r = read_section(log, &c, base, 0, verify_checksums, &s);
    if (r == WEFT_OK) {
        r = parse_entities(log, &s, out);
    }
    uint32_t first_comp = 1u; /* section index of the first COMP */
    if (r == WEFT_OK && version >= 2u) {
        first_comp = 2u;
        r = read_section(log, &c, base, 1u, verify_checksums, &s);
        if (r == WEFT_OK) {
            r = parse_slots(log, &s, alloc, out);
        }
    }
    if (r != WEFT_OK) {
        goto fail_reset;
    }
    if (ncomp) {
        out->comps = weft__hook_alloc(alloc, sizeof(weft__arc_comp_t) * ncomp, 16);
        if (!out->comps) {
            r = WEFT__FAIL(log, WEFT_ENOMEM, "weft_archive: cannot allocate %u section entries",
                           ncomp);
            goto fail_reset;
        }
        out->comp_count = ncomp;
    }
    for (uint32_t i = 0; i < ncomp; ++i) {
        r = read_section(log, &c, base, first_comp + i, verify_checksums, &s);
        if (r == WEFT_OK) {
            r = parse_comp(log, &s, first_comp + i, out, &out->comps[i]);
        }
        if (r != WEFT_OK) {
            goto fail_free_comps;
        }
    }
    for (uint32_t k = 0; k < nmod; ++k) {
        r = read_section(log, &c, base, first_comp + ncomp + k, verify_checksums, &s);
        if (r == WEFT_OK) {
            r = version >= 3u ? parse_module(log, &s, out) : parse_hier(log, &s, out);
        }
        if (r != WEFT_OK) {
            goto fail_free_comps;
        }
    }
    if (c.left != 0) {
        r = WEFT__FAIL(log, WEFT_ECORRUPT, "archive corrupt: %llu trailing bytes after offset %llu",
                       (unsigned long long)c.left, (unsigned long long)offset_of(&c, base));
        goto fail_free_comps;
    }
    return WEFT_OK;

fail_free_comps:
    weft__arc_free(out);
fail_reset:
    memset(out, 0, sizeof *out);
    return r;
}

void weft__arc_free(weft__arc_t *arc) {
    weft__hook_free(&arc->alloc, arc->comps, sizeof(weft__arc_comp_t) * arc->comp_count);
    arc->comps = NULL;
    arc->comp_count = 0;
}

/* Entity fields hold archived handles; the archived handles are sorted by index, so the
 * lookup is a binary search on the index followed by a full compare (a stale generation of
 * an archived index is an outside reference, not that entity). */
uint64_t weft__arc_find(const weft__arc_t *arc, uint64_t handle) {
    uint64_t index = handle & 0xffffffffu;
    uint64_t lo = 0, hi = arc->entity_count;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2u;
        uint64_t e = weft__le64(arc->ents + mid * 8u);
        uint64_t mi = e & 0xffffffffu;
        if (mi == index) {
            return e == handle ? mid : UINT64_MAX;
        }
        if (mi < index) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return UINT64_MAX;
}

weft_result_t weft_archive_inspect(const void *data, size_t size, weft_archive_info_t *info) {
    weft__arc_t arc;
    /* No world here: failures go to the default logger (stderr in debug builds). */
    weft_result_t r = weft__arc_parse(data, size, true, &(weft_allocator_t){0}, NULL, &arc);
    if (r != WEFT_OK) {
        return r;
    }
    if (info) {
        *info = (weft_archive_info_t){.format_version = arc.format_version,
                                      .component_count = arc.comp_count,
                                      .entity_count = arc.entity_count,
                                      .rows = arc.row_count,
                                      .hierarchy_nodes =
                                          weft__arc_module_items(&arc, WEFT__ARC_HIER_MODULE),
                                      .byte_size = arc.byte_size};
    }
    weft__arc_free(&arc);
    return WEFT_OK;
}
