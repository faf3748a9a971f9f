/* bench_archive.c: the `archive` suite — snapshots, archive save and load of 1,000,000
 * entities with two 12-byte components, each against a raw copy of the same arrays.
 *
 * DESIGN
 * Baselines copy arrays of exactly the sizes weft moves, interleaved rep by rep with the
 * weft case in the same process:
 *   snapshot_vs_memcpy  capture (into a reused snapshot) vs memcpy of the entity table
 *                       (4 B/entity) and both pools' entity and data columns (16 B/row each)
 *                       into a reused buffer; restore (after the values changed, the rollback
 *                       case) vs the memcpy back. Target <= 2x.
 *   save_vs_fwrite      weft_archive_save through weft_file_writer into a file vs fwrite of
 *                       the handles (8 B/entity), the entity table (4 B/entity: an archive
 *                       carries every slot's generation) and both pools' columns into a
 *                       file in the same folder; each side timed from fopen to fclose, no
 *                       fsync.
 *                       Target <= 3x.
 *   load_vs_fread       weft_archive_load through weft_file_reader into an empty world vs
 *                       fread of the same arrays into freshly allocated blocks (both pay
 *                       first-touch page faults), fopen to fclose, then each side reads
 *                       what it loaded once (its first use; see sum_words); both files were
 *                       just written, so both reads come from the page cache. Target <= 3x.
 * The checksum's own throughput is reported beside memcpy's so its share is visible.
 * --quick shrinks the world to 100,000 entities. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS and mkdtemp under -std=c11 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "weft.h"

#define SUITE "archive"

typedef struct bench_world {
    weft_world_t *w;
    weft_component_t a, b;
} bench_world_t;

/* Blocks of 64 KiB and more come straight from mmap, for the world weft loads into and for
 * the raw "fread" alike, so every rep of load_vs_fread pays the first-touch page faults both
 * sides are meant to pay. Through malloc, glibc's dynamic mmap threshold and heap trimming decided
 * per run which side got warm memory back: the ratio swung 2.2x-3.0x between runs of one
 * binary, and a change of small-block sizes elsewhere moved it by 10%. */
#define BIG_BLOCK ((size_t)64 * 1024)

static void *block_alloc(size_t size) {
    if (size < BIG_BLOCK) {
        return malloc(size);
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p; /* page-aligned: enough for any weft alignment here */
}

static void block_free(void *p, size_t size) {
    if (p != NULL && size >= BIG_BLOCK) {
        munmap(p, size);
    } else {
        free(p);
    }
}

static void *hook_alloc(size_t size, size_t align, void *user) {
    (void)user;
    if (size >= BIG_BLOCK) {
        return block_alloc(size);
    }
    if (align < sizeof(void *)) {
        align = sizeof(void *);
    }
    return aligned_alloc(align, (size + align - 1) & ~(align - 1));
}

static void hook_free(void *p, size_t size, void *user) {
    (void)user;
    block_free(p, size);
}

/* fresh_blocks: big blocks from mmap (the load target); otherwise the default allocator. */
static bool make_world(bench_world_t *bw, bool fresh_blocks) {
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE};
    if (fresh_blocks) {
        d.allocator = (weft_allocator_t){.alloc = hook_alloc, .free = hook_free};
    }
    if (weft_world_create(&d, &bw->w) != WEFT_OK) {
        return false;
    }
    return weft_component_register(bw->w, &(weft_component_desc_t){.name = "A", .size = 12},
                                   &bw->a) == WEFT_OK &&
           weft_component_register(bw->w, &(weft_component_desc_t){.name = "B", .size = 12},
                                   &bw->b) == WEFT_OK;
}

static bool populate(bench_world_t *bw, uint32_t n) {
    weft_entity_t *es = malloc(sizeof *es * n);
    if (!es || weft_entity_create_n(bw->w, n, es) != WEFT_OK ||
        weft_component_reserve(bw->w, bw->a, n) != WEFT_OK ||
        weft_component_reserve(bw->w, bw->b, n) != WEFT_OK) {
        free(es);
        return false;
    }
    for (uint32_t i = 0; i < n; ++i) {
        float v[3] = {(float)i, 1.0f, 2.0f};
        if (weft_component_set(bw->w, es[i], bw->a, v) != WEFT_OK ||
            weft_component_set(bw->w, es[i], bw->b, v) != WEFT_OK) {
            free(es);
            return false;
        }
    }
    free(es);
    return true;
}

/* Raw arrays of the sizes weft moves. */
typedef struct raw {
    uint32_t *table;    /* [n] entity table */
    uint64_t *handles;  /* [n] handles, as an archive writes them */
    uint32_t *dense[2]; /* [n] entity columns */
    float *data[2];     /* [3n] data columns */
} raw_t;

static size_t raw_snapshot_bytes(uint32_t n) { return (size_t)n * (4u + 2u * 16u); }

static void raw_copy_out(const raw_t *r, unsigned char *dst, uint32_t n) {
    memcpy(dst, r->table, (size_t)n * 4u);
    dst += (size_t)n * 4u;
    for (int k = 0; k < 2; ++k) {
        memcpy(dst, r->dense[k], (size_t)n * 4u);
        dst += (size_t)n * 4u;
        memcpy(dst, r->data[k], (size_t)n * 12u);
        dst += (size_t)n * 12u;
    }
}

static void raw_copy_in(raw_t *r, const unsigned char *src, uint32_t n) {
    memcpy(r->table, src, (size_t)n * 4u);
    src += (size_t)n * 4u;
    for (int k = 0; k < 2; ++k) {
        memcpy(r->dense[k], src, (size_t)n * 4u);
        src += (size_t)n * 4u;
        memcpy(r->data[k], src, (size_t)n * 12u);
        src += (size_t)n * 12u;
    }
}

/* The raw "fwrite": the arrays an archive holds (handles, the entity table with its
 * generations, then each pool's entity and data columns), written with fwrite to `f`.
 * Returns false when a write fails. */
static bool raw_fwrite(const raw_t *r, FILE *f, uint32_t n) {
    bool ok = fwrite(r->handles, 8u, n, f) == n && fwrite(r->table, 4u, n, f) == n;
    for (int k = 0; k < 2; ++k) {
        ok = ok && fwrite(r->dense[k], 4u, n, f) == n;
        ok = ok && fwrite(r->data[k], 12u, n, f) == n;
    }
    return ok;
}

/* The raw "fread": the same arrays read back with fread into freshly allocated blocks
 * (returned in *out for the caller to free after the timing). */
static bool raw_fread(raw_t *out, FILE *f, uint32_t n) {
    memset(out, 0, sizeof *out);
    out->handles = block_alloc((size_t)n * 8u);
    out->table = block_alloc((size_t)n * 4u);
    bool ok = out->handles && out->table && fread(out->handles, 8u, n, f) == n &&
              fread(out->table, 4u, n, f) == n;
    for (int k = 0; k < 2 && ok; ++k) {
        out->dense[k] = block_alloc((size_t)n * 4u);
        out->data[k] = block_alloc((size_t)n * 12u);
        ok = out->dense[k] && out->data[k] && fread(out->dense[k], 4u, n, f) == n &&
             fread(out->data[k], 12u, n, f) == n;
    }
    return ok;
}

/* The first use of loaded data: every byte read once (a sum of 8-byte words). Both load
 * sides end with it, so both touch from user space the memory they loaded: on a VM with
 * shadow page tables the first user access to a page the kernel filled (fread's copy) costs
 * about as much as a page fault (~55 ms for 40 MB here, against 2.4 ms once warm), and a
 * raw side that never looked at its arrays would skip a cost any real use pays. */
static uint64_t sum_words(const void *p, size_t bytes) {
    const unsigned char *b = p;
    uint64_t s = 0;
    for (size_t i = 0; i + 8u <= bytes; i += 8u) {
        uint64_t w;
        memcpy(&w, b + i, 8u);
        s += w;
    }
    return s;
}

static uint64_t raw_first_use(const raw_t *r, uint32_t n) {
    uint64_t s = sum_words(r->handles, (size_t)n * 8u);
    for (int k = 0; k < 2; ++k) {
        s += sum_words(r->dense[k], (size_t)n * 4u) + sum_words(r->data[k], (size_t)n * 12u);
    }
    return s;
}

static uint64_t weft_first_use(const bench_world_t *bw) {
    uint64_t s = 0;
    const weft_component_t cs[2] = {bw->a, bw->b};
    for (int k = 0; k < 2; ++k) {
        const void *p = weft_component_row(bw->w, cs[k], 0);
        if (p) {
            s += sum_words(p, (size_t)weft_component_rows(bw->w, cs[k]) * 12u);
        }
    }
    return s;
}

static void raw_fread_free(raw_t *r, uint32_t n) {
    block_free(r->handles, (size_t)n * 8u);
    block_free(r->table, (size_t)n * 4u);
    for (int k = 0; k < 2; ++k) {
        block_free(r->dense[k], (size_t)n * 4u);
        block_free(r->data[k], (size_t)n * 12u);
    }
}

static bool raw_init(raw_t *r, uint32_t n) {
    r->table = malloc((size_t)n * 4u);
    r->handles = malloc((size_t)n * 8u);
    bool ok = r->table && r->handles;
    for (int k = 0; k < 2; ++k) {
        r->dense[k] = malloc((size_t)n * 4u);
        r->data[k] = malloc((size_t)n * 12u);
        ok = ok && r->dense[k] && r->data[k];
    }
    if (!ok) {
        return false;
    }
    for (uint32_t i = 0; i < n; ++i) {
        r->table[i] = i;
        r->handles[i] = i + 1u;
        for (int k = 0; k < 2; ++k) {
            r->dense[k][i] = i + 1u;
            r->data[k][3u * i] = (float)i;
            r->data[k][3u * i + 1u] = 1.0f;
            r->data[k][3u * i + 2u] = 2.0f;
        }
    }
    return true;
}

static void raw_fini(raw_t *r) {
    free(r->table);
    free(r->handles);
    for (int k = 0; k < 2; ++k) {
        free(r->dense[k]);
        free(r->data[k]);
    }
}

static void report_pair(wb_ctx_t *ctx, const char *name, double weft_ns, double raw_ns,
                        double target) {
    wb_report(ctx, SUITE, name, "weft", 1, weft_ns / 1e6, "ms", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, name, "raw", 1, raw_ns / 1e6, "ms", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, name, "ratio", 1, weft_ns / raw_ns, "x", WB_AT_MOST, target);
}

/* Touch every value of pool `c` so a restore has something to undo. */
static void touch_values(bench_world_t *bw, weft_component_t c) {
    uint32_t n = weft_component_rows(bw->w, c);
    float *p = weft_component_row_mut(bw->w, c, 0);
    for (uint32_t i = 0; p && i < n; ++i) {
        p[3u * i] += 1.0f;
    }
}

static void bench_snapshot(wb_ctx_t *ctx, bench_world_t *bw, raw_t *raw, uint32_t n, int reps) {
    weft_snapshot_t *snap;
    unsigned char *buf = malloc(raw_snapshot_bytes(n));
    double *tc = malloc(sizeof(double) * (size_t)reps * 4u);
    if (!buf || !tc || weft_snapshot_create(bw->w, &snap) != WEFT_OK) {
        wb_note(ctx, SUITE, "snapshot: setup failed (%s)", weft_last_error());
        free(buf);
        free(tc);
        return;
    }
    double *rc = tc + reps, *tr = tc + 2 * reps, *rr = tc + 3 * reps;
    /* Warm-up: the snapshot block and the raw buffer are allocated and touched once. */
    weft_snapshot_capture(bw->w, snap);
    raw_copy_out(raw, buf, n);
    for (int r = 0; r < reps; ++r) {
        double t0 = wb_now_ns();
        weft_result_t res = weft_snapshot_capture(bw->w, snap);
        double t1 = wb_now_ns();
        raw_copy_out(raw, buf, n);
        double t2 = wb_now_ns();
        touch_values(bw, bw->a);
        touch_values(bw, bw->b);
        double t3 = wb_now_ns();
        res |= weft_snapshot_restore(bw->w, snap);
        double t4 = wb_now_ns();
        raw_copy_in(raw, buf, n);
        double t5 = wb_now_ns();
        if (res != WEFT_OK) {
            wb_note(ctx, SUITE, "snapshot failed: %s", weft_last_error());
        }
        tc[r] = t1 - t0;
        rc[r] = t2 - t1;
        tr[r] = t4 - t3;
        rr[r] = t5 - t4;
    }
    report_pair(ctx, "snapshot_capture_vs_memcpy", wb_median(tc, reps), wb_median(rc, reps), 2.0);
    report_pair(ctx, "snapshot_restore_vs_memcpy", wb_median(tr, reps), wb_median(rr, reps), 2.0);
    wb_report(ctx, SUITE, "snapshot_bytes", "weft", 1, (double)weft_snapshot_size(snap), "B",
              WB_NO_TARGET, 0);
    weft_snapshot_destroy(snap);
    free(buf);
    free(tc);
}

/* One timed stdio round: fopen, the body, fclose (both sides pay the open and the final
 * flush). Returns ns, or NAN when anything failed. */
typedef enum io_side { SAVE_WEFT, SAVE_RAW, LOAD_WEFT, LOAD_RAW } io_side_t;

static double timed_io(io_side_t side, const char *path, bench_world_t *src, bench_world_t *dst,
                       const raw_t *raw, raw_t *got, uint32_t n) {
    bool save = side == SAVE_WEFT || side == SAVE_RAW;
    double t0 = wb_now_ns();
    FILE *f = fopen(path, save ? "wb" : "rb");
    if (!f) {
        return NAN;
    }
    bool ok;
    if (side == SAVE_WEFT) {
        weft_writer_t wr = weft_file_writer(f);
        ok = weft_archive_save(src->w, NULL, &wr) == WEFT_OK;
    } else if (side == SAVE_RAW) {
        ok = raw_fwrite(raw, f, n);
    } else if (side == LOAD_WEFT) {
        weft_reader_t rd = weft_file_reader(f);
        ok = weft_archive_load(dst->w, &rd, NULL, NULL) == WEFT_OK;
    } else {
        ok = raw_fread(got, f, n);
    }
    ok = fclose(f) == 0 && ok;
    if (ok && !save) { /* the first use of what was loaded, on both sides */
        uint64_t sum = side == LOAD_WEFT ? weft_first_use(dst) : raw_first_use(got, n);
        wb_sink(&sum);
    }
    double t1 = wb_now_ns();
    return ok ? t1 - t0 : NAN;
}

static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    long size = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        size = ftell(f);
    }
    if (f) {
        fclose(f);
    }
    return size;
}

static void bench_save_load(wb_ctx_t *ctx, bench_world_t *bw, raw_t *raw, uint32_t n, int reps) {
    const char *tmp = getenv("TMPDIR");
    char dir[512], weft_path[600], raw_path[600];
    snprintf(dir, sizeof dir, "%s/weft_bench_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        wb_note(ctx, SUITE, "save/load: cannot create a folder under %s", tmp ? tmp : "/tmp");
        return;
    }
    snprintf(weft_path, sizeof weft_path, "%s/world.weft", dir);
    snprintf(raw_path, sizeof raw_path, "%s/arrays.raw", dir);
    wb_describe(ctx, SUITE, "save_vs_fwrite", "weft",
                "fopen, weft_archive_save through weft_file_writer (fwrite), fclose: a file in "
                "a fresh folder under $TMPDIR (default /tmp); no fsync");
    wb_describe(ctx, SUITE, "save_vs_fwrite", "raw",
                "fopen, fwrite of the handles (8 B/entity), the entity table (4 B/entity) and "
                "both pools' entity and data columns, fclose: a file in the same folder; no "
                "fsync");
    wb_describe(ctx, SUITE, "load_vs_fread", "weft",
                "fopen, weft_archive_load through weft_file_reader (fread) into an empty world, "
                "fclose, then one read of both pools' data (first use); the file was just "
                "written (page cache)");
    wb_describe(ctx, SUITE, "load_vs_fread", "raw",
                "fopen, fread of the same arrays into freshly mmap'd blocks, fclose, then one "
                "read of every array (first use)");
    wb_describe(ctx, SUITE, "save_vs_fwrite", "ratio", "median weft ms / median raw ms");
    wb_describe(ctx, SUITE, "load_vs_fread", "ratio", "median weft ms / median raw ms");
    double *t = malloc(sizeof(double) * (size_t)reps * 4u);
    if (!t) {
        wb_note(ctx, SUITE, "save/load: out of memory");
        rmdir(dir);
        return;
    }
    double *ts = t, *rs = t + reps, *tl = t + 2 * reps, *rl = t + 3 * reps;
    bool failed = false;
    for (int r = -1; r < reps && !failed; ++r) { /* r == -1: warm-up, not recorded */
        bench_world_t dst;
        raw_t got;
        if (!make_world(&dst, true)) {
            failed = true;
            break;
        }
        double s_w = timed_io(SAVE_WEFT, weft_path, bw, NULL, raw, NULL, n);
        double s_r = timed_io(SAVE_RAW, raw_path, bw, NULL, raw, NULL, n);
        double l_w = timed_io(LOAD_WEFT, weft_path, NULL, &dst, raw, NULL, n);
        double l_r = timed_io(LOAD_RAW, raw_path, NULL, NULL, raw, &got, n);
        raw_fread_free(&got, n);
        if (weft_component_rows(dst.w, dst.a) != n) {
            l_w = NAN; /* the load must have produced the world */
        }
        weft_world_destroy(dst.w);
        if (isnan(s_w) || isnan(s_r) || isnan(l_w) || isnan(l_r)) {
            wb_note(ctx, SUITE, "save/load failed: %s", weft_last_error());
            failed = true;
        } else if (r >= 0) {
            ts[r] = s_w;
            rs[r] = s_r;
            tl[r] = l_w;
            rl[r] = l_r;
        }
    }
    if (!failed) {
        wb_note(ctx, SUITE, "files: weft %ld bytes, raw %ld bytes, in %s", file_size(weft_path),
                file_size(raw_path), dir);
        report_pair(ctx, "save_vs_fwrite", wb_median(ts, reps), wb_median(rs, reps), 3.0);
        report_pair(ctx, "load_vs_fread", wb_median(tl, reps), wb_median(rl, reps), 3.0);
    }
    remove(weft_path);
    remove(raw_path);
    rmdir(dir);
    free(t);
}

/* The archive's size and its checksum's throughput beside memcpy's, in memory. */
static void bench_checksum(wb_ctx_t *ctx, bench_world_t *bw, int reps) {
    weft_membuf_t out = {0};
    weft_writer_t wr = weft_membuf_writer(&out);
    double *t = malloc(sizeof(double) * (size_t)reps * 2u);
    unsigned char *scratch = NULL;
    if (!t || weft_archive_save(bw->w, NULL, &wr) != WEFT_OK || !(scratch = malloc(out.size))) {
        wb_note(ctx, SUITE, "checksum: setup failed (%s)", weft_last_error());
        goto done;
    }
    double *th = t, *tm = t + reps;
    for (int r = 0; r < reps; ++r) {
        double t0 = wb_now_ns();
        uint64_t h = weft_archive_checksum(out.data, out.size);
        double t1 = wb_now_ns();
        memcpy(scratch, out.data, out.size);
        double t2 = wb_now_ns();
        wb_sink(&h);
        wb_sink(scratch);
        th[r] = t1 - t0;
        tm[r] = t2 - t1;
    }
    double bytes = (double)out.size;
    wb_report(ctx, SUITE, "archive_bytes", "weft", 1, bytes, "B", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "checksum_throughput", "weft", 1, bytes / wb_median(th, reps), "GB/s",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "checksum_throughput", "memcpy", 1, bytes / wb_median(tm, reps), "GB/s",
              WB_NO_TARGET, 0);
done:
    free(scratch);
    free(t);
    weft_membuf_free(&out);
}

void wb_suite_archive(wb_ctx_t *ctx) {
    uint32_t n = wb_quick(ctx) ? 100000u : 1000000u;
    int reps = wb_reps(ctx);
    bench_world_t bw;
    raw_t raw;
    if (!make_world(&bw, false) || !populate(&bw, n) || !raw_init(&raw, n)) {
        wb_note(ctx, SUITE, "setup failed (%s)", weft_last_error());
        return;
    }
    wb_note(ctx, SUITE, "%u entities, components A and B of 12 bytes, %d reps", n, reps);
    bench_snapshot(ctx, &bw, &raw, n, reps);
    bench_save_load(ctx, &bw, &raw, n, reps);
    bench_checksum(ctx, &bw, reps);
    raw_fini(&raw);
    weft_world_destroy(bw.w);
}
