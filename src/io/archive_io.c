/* archive_io.c: the reader/writer callbacks weft ships (growable memory buffer, fixed memory
 * span, stdio FILE *) and the input slurper that bounds every allocation by the bytes that
 * actually arrived.
 *
 * DESIGN
 * The loader parses from memory (archive_load.c), so a streaming reader is first drained
 * into a buffer. The buffer grows by doubling only as bytes arrive, never by a size the input
 * claims, so hostile input cannot make the loader allocate more than about twice its own
 * length; desc.max_bytes caps it outright. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "archive_internal.h"
#include "jobs/platform/report.h"

/* ---- callback failures ------------------------------------------------ >>io_detail */

/* What the last built-in callback failure on this thread was about (see weft__io_report).
 * The callbacks cannot report it themselves: they are not given the world whose logger the
 * message belongs to. */
static _Thread_local char io_detail[160];

void weft__io_clear(void) { io_detail[0] = '\0'; }

/* Leave `fmt` as this thread's callback detail and return `code`. */
static weft_result_t io_fail(weft_result_t code, const char *fmt, ...) WEFT_PRINTF(2, 3);
static weft_result_t io_fail(weft_result_t code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(io_detail, sizeof io_detail, fmt, ap);
    va_end(ap);
    return code;
}

weft_result_t weft__io_report(const weft_logger_t *log, weft_result_t code, const char *what,
                              uint64_t at) {
    weft_result_t r =
        WEFT__FAIL(log, code, "%s failed after %llu bytes: %s", what, (unsigned long long)at,
                   io_detail[0] ? io_detail : weft_result_str(code));
    weft__io_clear();
    return r;
}

/* ---- growable memory writer ------------------------------------------- >>membuf */

/* Move `b` into a new block of exactly `cap` >= b->size bytes. By hand because the
 * allocator hook has no realloc. Errors: WEFT_ENOMEM (b unchanged, nothing reported). */
static weft_result_t membuf_regrow(weft_membuf_t *b, size_t cap) {
    unsigned char *p = weft__hook_alloc(&b->allocator, cap, 16);
    if (!p) {
        return WEFT_ENOMEM;
    }
    if (b->size) {
        memcpy(p, b->data, b->size);
    }
    weft__hook_free(&b->allocator, b->data, b->capacity);
    b->data = p;
    b->capacity = cap;
    return WEFT_OK;
}

/* Grow `b` to hold at least `need` bytes (doubling). On failure the detail is left for the
 * caller to report. Errors: WEFT_ENOMEM (b unchanged). */
static weft_result_t membuf_reserve(weft_membuf_t *b, size_t need) {
    if (need <= b->capacity) {
        return WEFT_OK;
    }
    size_t cap = b->capacity ? b->capacity : 4096u;
    while (cap < need) {
        if (cap > SIZE_MAX / 2u) {
            return io_fail(WEFT_ENOMEM, "weft_membuf: %zu bytes is too large", need);
        }
        cap *= 2u;
    }
    if (membuf_regrow(b, cap) != WEFT_OK) {
        return io_fail(WEFT_ENOMEM, "weft_membuf: cannot allocate %zu bytes", cap);
    }
    return WEFT_OK;
}

weft_result_t weft_membuf_reserve(weft_membuf_t *buf, size_t capacity) {
    /* A direct call: no world is involved, so the default (NULL) logger is the right one. */
    WEFT__CONTRACT(buf != NULL, NULL, WEFT_EINVAL, "weft_membuf_reserve: buf is NULL");
    weft__io_clear();
    weft_result_t r = membuf_reserve(buf, capacity);
    if (r != WEFT_OK) {
        r = WEFT__FAIL(NULL, r, "%s", io_detail);
        weft__io_clear();
    }
    return r;
}

static weft_result_t membuf_write(const void *data, size_t size, void *user) {
    weft_membuf_t *b = user;
    if (size > SIZE_MAX - b->size) {
        return io_fail(WEFT_ENOMEM, "weft_membuf: size overflow");
    }
    weft_result_t r = membuf_reserve(b, b->size + size);
    if (r != WEFT_OK) {
        return r;
    }
    memcpy(b->data + b->size, data, size);
    b->size += size;
    return WEFT_OK;
}

weft_writer_t weft_membuf_writer(weft_membuf_t *buf) {
    return (weft_writer_t){.write = membuf_write, .user = buf};
}

void weft_membuf_free(weft_membuf_t *buf) {
    if (!buf) {
        return;
    }
    weft__hook_free(&buf->allocator, buf->data, buf->capacity);
    buf->data = NULL;
    buf->size = 0;
    buf->capacity = 0;
}

/* ---- fixed memory reader ---------------------------------------------- >>memreader */

static weft_result_t memreader_read(void *dst, size_t size, size_t *got, void *user) {
    weft_memreader_t *m = user;
    size_t left = m->size - m->pos;
    size_t n = size < left ? size : left;
    if (n) {
        memcpy(dst, m->data + m->pos, n);
    }
    m->pos += n;
    *got = n;
    return WEFT_OK;
}

static bool memreader_remaining(uint64_t *bytes, void *user) {
    const weft_memreader_t *m = user;
    *bytes = m->size - m->pos;
    return true;
}

weft_reader_t weft_memreader(weft_memreader_t *m, const void *data, size_t size) {
    m->data = data;
    m->size = data ? size : 0;
    m->pos = 0;
    return (weft_reader_t){.read = memreader_read, .user = m, .remaining = memreader_remaining};
}

/* ---- stdio ------------------------------------------------------------- >>file */

static weft_result_t file_write(const void *data, size_t size, void *user) {
    if (size && fwrite(data, 1, size, (FILE *)user) != size) {
        return io_fail(WEFT_EIO, "weft_file_writer: fwrite of %zu bytes failed", size);
    }
    return WEFT_OK;
}

static weft_result_t file_read(void *dst, size_t size, size_t *got, void *user) {
    FILE *f = user;
    *got = fread(dst, 1, size, f);
    if (*got < size && ferror(f)) {
        return io_fail(WEFT_EIO, "weft_file_reader: fread of %zu bytes failed", size);
    }
    return WEFT_OK;
}

weft_writer_t weft_file_writer(FILE *file) {
    return (weft_writer_t){.write = file_write, .user = file};
}

/* Bytes from the current position to the end of a seekable file; the position is restored. */
static bool file_remaining(uint64_t *bytes, void *user) {
    FILE *f = user;
    long pos = ftell(f);
    if (pos < 0 || fseek(f, 0, SEEK_END) != 0) {
        return false;
    }
    long end = ftell(f);
    if (fseek(f, pos, SEEK_SET) != 0 || end < pos) {
        return false; /* the reads that follow will report a broken stream */
    }
    *bytes = (uint64_t)(end - pos);
    return true;
}

weft_reader_t weft_file_reader(FILE *file) {
    return (weft_reader_t){.read = file_read, .user = file, .remaining = file_remaining};
}

/* ---- slurp -------------------------------------------------------------- >>slurp */

weft_result_t weft__archive_slurp(const weft_reader_t *reader, const weft_allocator_t *alloc,
                                  size_t max_bytes, const weft_logger_t *log, weft_membuf_t *out) {
    *out = (weft_membuf_t){.allocator = *alloc};
    weft__io_clear();
    /* Room for one byte past the limit tells "exactly max_bytes" from "too much". */
    size_t limit = max_bytes < SIZE_MAX ? max_bytes + 1u : max_bytes;
    weft_result_t r = WEFT_OK;
    /* Known size: one buffer of size + 1 bytes (the extra byte lets the final read see the
     * end without a regrow); capped by the limit, so a wrong hint costs at most a regrow. */
    uint64_t hint = 0;
    size_t first = 64u * 1024u;
    if (reader->remaining && reader->remaining(&hint, reader->user)) {
        first = hint < (uint64_t)limit ? (size_t)hint + 1u : limit;
    }
    for (;;) {
        if (out->size == out->capacity) {
            if (out->size >= limit) {
                goto fail_too_large;
            }
            size_t want = out->capacity ? out->capacity * 2u : first;
            if (want > limit || want < out->capacity) {
                want = limit;
            }
            if (membuf_regrow(out, want) != WEFT_OK) {
                r = WEFT__FAIL(log, WEFT_ENOMEM, "weft_archive_load: cannot allocate %zu bytes",
                               want);
                goto fail_free_buffer;
            }
        }
        size_t got = 0;
        r = reader->read(out->data + out->size, out->capacity - out->size, &got, reader->user);
        if (r != WEFT_OK) {
            r = weft__io_report(log, r, "weft_archive_load: the reader", out->size);
            goto fail_free_buffer;
        }
        if (got == 0) {
            break;
        }
        if (got > out->capacity - out->size) {
            r = WEFT__FAIL(log, WEFT_EIO,
                           "weft_archive_load: the reader returned %zu bytes, %zu were asked for",
                           got, out->capacity - out->size);
            goto fail_free_buffer;
        }
        out->size += got;
    }
    if (out->size > max_bytes) {
        goto fail_too_large;
    }
    return WEFT_OK;

fail_too_large:
    r = WEFT__FAIL(log, WEFT_ECAPACITY, "weft_archive_load: input exceeds max_bytes (%zu)",
                   max_bytes);
fail_free_buffer:
    weft_membuf_free(out);
    return r;
}
