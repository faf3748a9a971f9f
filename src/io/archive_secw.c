/* archive_secw.c: the section writer — frames archive sections (header, payload, checksum
 * trailer) and streams them to a weft_writer_t in one pass over the source data.
 *
 * DESIGN
 * A section's header carries its payload size, which the caller computes up front; its
 * checksum goes in a trailer, so the payload is hashed while it streams and no byte is read
 * twice from main memory. Small pieces (descriptors, padding, converted ids) gather in a
 * 64 KiB staging block, hashed and written when it fills. Large pieces (the dense component
 * arrays) bypass the block: they are hashed and handed to the writer in 64 KiB slices
 * straight from the pool, so each slice is still in cache when the writer copies it.
 * Errors are sticky: the first writer error is reported through the saved world's logger
 * when it happens, after it every call is a no-op and weft__secw_finish() returns that
 * error, which keeps the callers free of checks. */
#include <string.h>

#include "archive_internal.h"
#include "archive_secw.h"
#include "jobs/platform/report.h"

weft_result_t weft__secw_init(weft__secw_t *w, const weft_writer_t *writer,
                              const weft_allocator_t *alloc, const weft_logger_t *log) {
    memset(w, 0, sizeof *w);
    w->writer = writer;
    w->log = log;
    w->alloc = *alloc;
    weft__io_clear();
    w->block = weft__hook_alloc(alloc, WEFT__SECW_BLOCK, 64);
    if (!w->block) {
        return WEFT__FAIL(log, WEFT_ENOMEM, "weft_archive_save: cannot allocate %u bytes",
                          WEFT__SECW_BLOCK);
    }
    return WEFT_OK;
}

/* Hand `n` bytes to the writer (no hashing here). */
static void emit(weft__secw_t *w, const void *p, size_t n) {
    if (w->error != WEFT_OK || n == 0) {
        return;
    }
    weft_result_t r = w->writer->write(p, n, w->writer->user);
    if (r != WEFT_OK) {
        w->error = weft__io_report(w->log, r, "weft_archive_save: the writer", w->written);
    } else {
        w->written += n;
    }
}

static void flush_block(weft__secw_t *w) {
    emit(w, w->block, w->used);
    w->used = 0;
}

/* Raw bytes outside any payload (file header, section framing). */
static void put_raw(weft__secw_t *w, const void *p, size_t n) {
    if (n > WEFT__SECW_BLOCK - w->used) {
        flush_block(w);
    }
    memcpy(w->block + w->used, p, n);
    w->used += n;
}

void weft__secw_file_header(weft__secw_t *w, uint32_t comp_count, uint32_t module_count) {
    unsigned char h[WEFT__ARC_FILE_HEADER] = {0};
    memcpy(h, WEFT__ARC_MAGIC, 8);
    weft__put32(h + 8, WEFT__ARC_FORMAT_VERSION);
    weft__put32(h + 12, 0);
    weft__put32(h + 16, comp_count + module_count + 2u); /* + ENTS, SLOT */
    weft__put32(h + 20, comp_count);
    weft__put64(h + 24, weft__hash64(h, 24));
    put_raw(w, h, sizeof h);
}

void weft__secw_begin(weft__secw_t *w, uint32_t tag, uint64_t size, uint64_t count) {
    weft_assert_internal(w->left == 0 && size % 8u == 0);
    unsigned char h[WEFT__ARC_SECTION_HEADER] = {0};
    weft__put32(h, tag);
    weft__put64(h + 8, size);
    weft__put64(h + 16, count);
    weft__put64(h + 24, weft__hash64(h, 24));
    put_raw(w, h, sizeof h);
    weft__hash_init(&w->hash);
    w->left = size;
}

void weft__secw_put(weft__secw_t *w, const void *data, size_t n) {
    weft_assert_internal(n <= w->left);
    w->left -= n;
    const unsigned char *p = data;
    if (n <= WEFT__SECW_BLOCK - w->used) {
        weft__hash_update(&w->hash, p, n);
        memcpy(w->block + w->used, p, n);
        w->used += n;
        return;
    }
    /* Large piece: stream it from the source, one cache-sized slice at a time. */
    flush_block(w);
    while (n > 0) {
        size_t k = n < WEFT__SECW_BLOCK ? n : WEFT__SECW_BLOCK;
        weft__hash_update(&w->hash, p, k);
        emit(w, p, k);
        p += k;
        n -= k;
    }
}

void weft__secw_zeros(weft__secw_t *w, size_t n) {
    static const unsigned char zeros[8] = {0};
    weft_assert_internal(n <= sizeof zeros);
    weft__secw_put(w, zeros, n);
}

unsigned char *weft__secw_space(weft__secw_t *w, size_t *n) {
    /* Never hand out a sliver: callers convert whole items (ids) into the space. */
    if (WEFT__SECW_BLOCK - w->used < 256u) {
        flush_block(w);
    }
    *n = WEFT__SECW_BLOCK - w->used;
    return w->block + w->used;
}

void weft__secw_commit(weft__secw_t *w, size_t n) {
    weft_assert_internal(n <= w->left && n <= WEFT__SECW_BLOCK - w->used);
    weft__hash_update(&w->hash, w->block + w->used, n);
    w->used += n;
    w->left -= n;
}

void weft__secw_end(weft__secw_t *w) {
    weft_assert_internal(w->left == 0);
    unsigned char t[WEFT__ARC_TRAILER];
    weft__put64(t, weft__hash_final(&w->hash));
    put_raw(w, t, sizeof t);
}

weft_result_t weft__secw_finish(weft__secw_t *w) {
    flush_block(w);
    weft__hook_free(&w->alloc, w->block, WEFT__SECW_BLOCK);
    w->block = NULL;
    return w->error;
}
