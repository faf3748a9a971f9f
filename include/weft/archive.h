/* weft/archive.h: saving a world (or part of it) to a versioned, checksummed binary archive
 * and loading it back with entity ids remapped; hardened against hostile input.
 *
 * Format (details in src/io/archive_format.h): magic "WEFTARC\x1a", a format version, then
 * sections (entities, one per component, one per registered module with data — weft/module.h,
 * the hierarchy's included) each with its size, an 8-byte header check and a 64-bit checksum
 * of its payload. Little-endian; self-describing: every component section
 * carries the component's name, size, alignment, schema version and entity-field offsets.
 * Component data is stored as raw bytes, so an archive moves between little-endian hosts.
 *
 * Loading is all-or-nothing: the whole archive is parsed, validated and staged before the
 * world changes; on any error the world is exactly as before (weft_world_hash() unchanged)
 * and nothing leaks. No allocation is larger than the input can justify.
 *
 * Thread: save/load/inspect take the world from the main thread, between frames (never
 * inside weft_world_progress). The I/O helpers have no thread affinity. */
#ifndef WEFT_ARCHIVE_H
#define WEFT_ARCHIVE_H

#include <stdio.h>

#include "weft/base.h"
#include "weft/entity.h"
#include "weft/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- I/O callbacks ------------------------------------------------------ >>io */

/* Sink for archive bytes. `write` must take all `size` bytes or return an error
 * (WEFT_EIO, WEFT_ENOMEM); the saver stops at the first error and reports it, with the
 * byte offset, through the world's logger, so a writer only has to return the code. */
typedef struct weft_writer {
    weft_result_t (*write)(const void *data, size_t size, void *user); /* required */
    void *user;                                                        /* passed back unchanged */
} weft_writer_t;

/* Source of archive bytes. `read` stores up to `size` bytes into dst and their number in
 * *got; *got == 0 means end of input. Returning an error aborts the load with that code,
 * which the loader reports through the world's logger.
 * `remaining` (optional) tells how many bytes are left when that is cheap to know (a file's
 * size, a buffer's length): the load then allocates its input buffer once instead of
 * doubling it, which saves a copy and the page faults of the buffers it outgrows. It is only
 * a hint: the load still reads until `read` reports the end, and never allocates past the
 * load's max_bytes because of it. Return false when unknown. */
typedef struct weft_reader {
    weft_result_t (*read)(void *dst, size_t size, size_t *got, void *user); /* required */
    void *user;                                     /* passed back unchanged */
    bool (*remaining)(uint64_t *bytes, void *user); /* NULL: unknown */
} weft_reader_t;

/* A growable memory buffer used as a writer. Zero-initialise it (optionally set
 * `allocator`); the bytes written are data[0 .. size). The caller owns it and frees it with
 * weft_membuf_free(). Not thread-safe: one writer at a time. */
typedef struct weft_membuf {
    unsigned char *data;        /* the bytes; NULL while empty */
    size_t size;                /* bytes written */
    size_t capacity;            /* bytes allocated */
    weft_allocator_t allocator; /* 0: malloc/free */
} weft_membuf_t;

/* A writer appending to `buf` (which must outlive the writer). Like the other callbacks
 * below, its failures (WEFT_ENOMEM here) return the code and leave the message to the save
 * or load using it, which reports through its world's logger. */
WEFT_API weft_writer_t weft_membuf_writer(weft_membuf_t *buf);
/* Ensure capacity for `capacity` bytes. Errors (reported to the default logger: no world
 * is involved): WEFT_ENOMEM (buf unchanged). */
WEFT_API weft_result_t weft_membuf_reserve(weft_membuf_t *buf, size_t capacity);
/* Free the bytes and reset to empty (the allocator is kept). NULL is ignored. */
WEFT_API void weft_membuf_free(weft_membuf_t *buf);

/* A reader over caller-owned bytes, which must outlive it. `m` is the reader's state. */
typedef struct weft_memreader {
    const unsigned char *data; /* the bytes */
    size_t size;               /* their number */
    size_t pos;                /* bytes consumed */
} weft_memreader_t;
WEFT_API weft_reader_t weft_memreader(weft_memreader_t *m, const void *data, size_t size);

/* stdio adapters. The caller opens (in binary mode) and closes `file`. The reader's
 * `remaining` measures a seekable file (fseek/ftell, position restored); a pipe reads as
 * unknown. */
WEFT_API weft_writer_t weft_file_writer(FILE *file);
WEFT_API weft_reader_t weft_file_reader(FILE *file);

/* ---- save -------------------------------------------------------------- >>save */

typedef struct weft_archive_save_desc {
    const weft_entity_t *entities; /* NULL: the whole world (every alive entity) */
    size_t entity_count;           /* length of entities; ignored when entities is NULL */
    bool with_descendants;         /* false: just `entities`; true: plus all their
                                      hierarchy descendants (weft/hierarchy.h) */
    uint32_t _canary;              /* must stay 0 */
} weft_archive_save_desc_t;

/* Write the chosen entities and all their components to `writer`. `desc` may be NULL
 * (whole world). Archive entity order: for the whole world, ascending entity index; else
 * `entities` in the given order (duplicates dropped), then descendants, each parent before
 * its children. Entity fields referring to entities outside the archive are written as they
 * are; the loader applies the external-reference rule (weft_archive_load_desc_t).
 * Errors: WEFT_EINVAL (bad desc), WEFT_ESTALE (a listed entity is not alive),
 * WEFT_ENOMEM, or the writer's error. On error the writer may have received a partial
 * archive (which the loader rejects); the world is never changed.
 * Thread: main, between frames. */
WEFT_API weft_result_t weft_archive_save(weft_world_t *world, const weft_archive_save_desc_t *desc,
                                         const weft_writer_t *writer);

/* ---- load -------------------------------------------------------------- >>load */

/* Converts one component value saved with an older schema into the current layout.
 * `old_data` holds `old_size` bytes as archived (entity fields still hold archived ids);
 * write the current layout to `new_data` (zeroed, registered size and alignment), keeping
 * entity ids at the current registration's entity-field offsets: remapping runs after the
 * upgrade. Return WEFT_OK, or an error code (e.g. WEFT_ECORRUPT) to fail the whole load. */
typedef weft_result_t (*weft_archive_upgrade_fn_t)(const void *old_data, size_t old_size,
                                                   void *new_data, void *user);

/* An upgrade hook, passed to the loader in weft_archive_load_desc_t.upgrades: archived
 * values of `component` saved with schema version `from_schema` are converted by `fn`
 * instead of failing the load. Hooks are given per load (not stored in the world) so a
 * tool can load old archives without changing the world's registrations. */
typedef struct weft_archive_upgrade {
    const char *component;        /* required: the registered component's name */
    uint32_t from_schema;         /* the archived schema version this hook converts */
    uint32_t from_size;           /* 0: any archived size; else only this size */
    weft_archive_upgrade_fn_t fn; /* required */
    void *user;                   /* passed back unchanged */
} weft_archive_upgrade_t;

typedef struct weft_archive_load_desc {
    bool keep_ids;               /* false: every archived entity gets a fresh id (a per-load remap
                            table), so loading twice gives two disjoint copies; true: ids are
                            kept as archived and must all be free in the world, else
                            WEFT_EEXIST. The archive's slot table (format 2) comes along: each
                            dead slot keeps the later generation of the two worlds and a slot
                            retired in either stays retired, so no handle stale in the saved
                            world or in this one comes back, except the archived entities'
                            own (which is what keep_ids asks for); into an empty world the
                            next handles created are those the saved world would have
                            created. Slots this world holds live entities in are left alone.
                            A format-1 archive carries no slot table: slots it skips become
                            free at generation 0. */
    bool keep_external;          /* references to entities NOT in the archive: false: with remapping
                            they become 0 (null); true: kept verbatim. With keep_ids they are
                            always kept verbatim. */
    bool skip_unknown;           /* false: a component the world has not registered fails the load
                            with WEFT_EMISMATCH; true: its section is validated and ignored */
    bool skip_checksums;         /* false: verify every checksum (WEFT_ECORRUPT on mismatch); true:
                            only for fuzzing and salvage, structure is still fully checked */
    weft_entity_t *out_entities; /* NULL: not reported; else receives, in archive order, the
                                    handle each archived entity got in the world */
    size_t out_capacity;         /* entries in out_entities; fewer than the archive's
                                    entities is WEFT_ECAPACITY (before any change) */
    size_t max_bytes;            /* 0: 1 GiB; weft_archive_load() refuses longer input */
    const weft_archive_upgrade_t *upgrades; /* NULL: none; caller-owned, read during the call */
    uint32_t upgrade_count;                 /* entries in upgrades */
    uint32_t _canary;                       /* must stay 0 */
} weft_archive_load_desc_t;

/* What an archive holds, filled by inspect and load. */
typedef struct weft_archive_info {
    uint32_t format_version;  /* archive format version (3 is written; 1 to 3 are read) */
    uint32_t component_count; /* component sections */
    uint64_t entity_count;    /* archived entities */
    uint64_t rows;            /* component values (rows) over all sections */
    uint64_t hierarchy_nodes; /* hierarchy nodes recorded (weft/hierarchy.h: the count of
                                 its module section) */
    uint64_t byte_size;       /* archive length in bytes */
} weft_archive_info_t;

/* Load an archive into `world`, reading `reader` to its end. `desc` may be NULL (defaults);
 * `info` may be NULL. Components are matched by name; a different size or schema version
 * or alignment, or different entity-field offsets, is WEFT_EMISMATCH, and a different
 * schema version is WEFT_EVERSION, unless desc.upgrades holds a hook for that component and
 * archived version (then sizes may differ; the hook's output is remapped).
 * Entity arrays and every entity field declared at registration are remapped. Each module
 * section goes to the registered module of that name (weft/module.h); hierarchy links are
 * loaded as data and the hierarchy order is rebuilt, so it is valid after load. A module
 * section the world has no module for is WEFT_EMISMATCH, or skipped with skip_unknown.
 * Errors: WEFT_EINVAL (bad desc), WEFT_ECORRUPT (truncated, bit-flipped or inconsistent
 * input), WEFT_EVERSION (magic/format version), WEFT_EMISMATCH (unknown component, size,
 * alignment or schema), WEFT_EEXIST (keep_ids and an id is in use or a retired slot, see
 * weft/entity.h), WEFT_ECAPACITY (max_bytes, out_capacity, entity capacity), WEFT_ENOMEM, or
 * the reader's error.
 * On error the world is unchanged. Thread: main, between frames. */
WEFT_API weft_result_t weft_archive_load(weft_world_t *world, const weft_reader_t *reader,
                                         const weft_archive_load_desc_t *desc,
                                         weft_archive_info_t *info);

/* weft_archive_load() from bytes already in memory (no copy of the input is made; `data`
 * must stay valid during the call). */
WEFT_API weft_result_t weft_archive_load_memory(weft_world_t *world, const void *data, size_t size,
                                                const weft_archive_load_desc_t *desc,
                                                weft_archive_info_t *info);

/* Validate an archive without a world: magic, version, every section's structure and
 * checksum. Fills `info` (may be NULL). Errors as for load (except world-dependent ones).
 * Thread: any. */
WEFT_API weft_result_t weft_archive_inspect(const void *data, size_t size,
                                            weft_archive_info_t *info);

/* The 64-bit checksum archives use for every section (a four-lane multiply-rotate hash, not
 * cryptographic), for tools and benchmarks that want to measure or reproduce it.
 * Thread: any. */
WEFT_API uint64_t weft_archive_checksum(const void *data, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_ARCHIVE_H */
