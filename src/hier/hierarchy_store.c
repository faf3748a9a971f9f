/* hierarchy_store.c: structural operations on the ordered hierarchy store — add, attach,
 * detach, remove, the subtree move that keeps parents before children, and the checker.
 *
 * DESIGN: see hierarchy_store.h. Every operation validates first and mutates second, so an
 * error leaves the store exactly as it was; capacity for a subtree move is reserved before
 * the first row moves. Lock order: none (single-threaded by contract). */
#include "hierarchy_store.h"

#include <stdlib.h>
#include <string.h>

#include "jobs/platform/alloc.h"
#include "jobs/platform/report.h"

#define MAP_PAGE_BITS WEFT__HMAP_PAGE_BITS
#define MAP_PAGE_SIZE (1u << MAP_PAGE_BITS)

/* ---- memory ------------------------------------------------------------- >>hstore_mem */

void *weft__hstore_alloc(const weft__hstore_t *s, size_t size) {
    return s->alloc.alloc(size, 64, s->alloc.user);
}

void weft__hstore_free(const weft__hstore_t *s, void *ptr, size_t size) {
    if (ptr != NULL) {
        s->alloc.free(ptr, size, s->alloc.user);
    }
}

void weft__hstore_init(weft__hstore_t *s, const weft_allocator_t *alloc, const weft_logger_t *log) {
    memset(s, 0, sizeof(*s));
    s->log = log;
    s->alloc = weft__allocator_resolved(alloc);
}

/* The local and world matrices share one block: lmat at its start, world matrix_stagger(cap)
 * bytes after lmat's end. Both are streamed in step by every pass (row r of each per row),
 * and two such streams a large power of two apart (what two separate power-of-two arrays
 * become when the allocator places them back to back: 2^26 + 4 KiB at 2^20 rows) were
 * measured up to 1.6x slower on the 2-vCPU VM (the floor's own loop over arrays placed so,
 * 1,000 chains of 1,000: 1.20-1.57x; with 32 KiB or more added to the distance, 0.99-1.02x).
 * The stagger is a quarter of one array, at most 512 KiB; it is never touched, so it costs
 * address space, not resident memory. */
static size_t matrix_stagger(uint32_t cap) {
    const size_t quarter = ((size_t)cap * sizeof(weft_mat4_t) / 4u) & ~(size_t)63; /* lines */
    return quarter < ((size_t)512u << 10) ? quarter : ((size_t)512u << 10);
}

static size_t matrices_bytes(uint32_t cap) {
    return 2u * (size_t)cap * sizeof(weft_mat4_t) + matrix_stagger(cap);
}

/* Free one row-array set of `cap` rows (any pointer may be NULL). */
void weft__hstore_free_rows(const weft__hstore_t *s, weft__hrows_t *rows, uint32_t cap) {
    weft__hstore_free(s, rows->ent, (size_t)cap * sizeof(*rows->ent));
    weft__hstore_free(s, rows->parent, (size_t)cap * sizeof(uint32_t));
    weft__hstore_free(s, rows->first_child, (size_t)cap * sizeof(uint32_t));
    weft__hstore_free(s, rows->next_sib, (size_t)cap * sizeof(uint32_t));
    weft__hstore_free(s, rows->prev_sib, (size_t)cap * sizeof(uint32_t));
    weft__hstore_free(s, rows->local, (size_t)cap * sizeof(*rows->local));
    weft__hstore_free(s, rows->link, (size_t)cap * sizeof(*rows->link));
    weft__hstore_free(s, rows->flags, (size_t)cap * sizeof(*rows->flags));
    weft__hstore_free(s, rows->lmat, matrices_bytes(cap)); /* world lies inside */
    weft__hstore_free(s, rows->scratch, (size_t)cap * sizeof(uint32_t));
    memset(rows, 0, sizeof(*rows));
}

/* Fault in a fresh array's pages in one sweep of its own. Filled row by row instead (the
 * rows appended after a growth, a rewrite's scatter), the arrays of a set take their pages
 * in turn, and a full pass streaming them was measured slower: on the 2-vCPU VM, bench
 * hierarchy medians over 10 alternated runs each (the matrices staggered as above) went from
 * 1.00 / 1.08 / 1.05 (hier_flat / _balanced / _deep_vs_floor) to 0.92 / 1.06 / 1.01 with the
 * four arrays a full pass streams touched whole first. The cost: resident memory for the
 * capacity not yet used (at most the rows in use, right after a doubling; heap_bytes counts
 * it already) and one write of those four arrays per growth or rewrite, which copy or scatter
 * every array anyway. */
static void touch_whole(void *p, size_t bytes) { memset(p, 0, bytes); }

/* Allocate one row-array set of `cap` rows: all or nothing. */
weft_result_t weft__hstore_alloc_rows(const weft__hstore_t *s, weft__hrows_t *rows, uint32_t cap) {
    memset(rows, 0, sizeof(*rows));
    rows->ent = weft__hstore_alloc(s, (size_t)cap * sizeof(*rows->ent));
    rows->parent = weft__hstore_alloc(s, (size_t)cap * sizeof(uint32_t));
    rows->first_child = weft__hstore_alloc(s, (size_t)cap * sizeof(uint32_t));
    rows->next_sib = weft__hstore_alloc(s, (size_t)cap * sizeof(uint32_t));
    rows->prev_sib = weft__hstore_alloc(s, (size_t)cap * sizeof(uint32_t));
    rows->local = weft__hstore_alloc(s, (size_t)cap * sizeof(*rows->local));
    rows->link = weft__hstore_alloc(s, (size_t)cap * sizeof(*rows->link));
    rows->flags = weft__hstore_alloc(s, (size_t)cap * sizeof(*rows->flags));
    rows->lmat = weft__hstore_alloc(s, matrices_bytes(cap));
    if (rows->lmat != NULL) {
        rows->world = (weft_mat4_t *)((unsigned char *)(rows->lmat + cap) + matrix_stagger(cap));
    }
    rows->scratch = weft__hstore_alloc(s, (size_t)cap * sizeof(uint32_t));
    if (!rows->ent || !rows->parent || !rows->first_child || !rows->next_sib || !rows->prev_sib ||
        !rows->local || !rows->link || !rows->world || !rows->flags || !rows->lmat ||
        !rows->scratch) {
        weft__hstore_free_rows(s, rows, cap);
        return WEFT_ENOMEM;
    }
    /* the arrays a full pass streams, in the order it reads them */
    touch_whole(rows->flags, (size_t)cap * sizeof(*rows->flags));
    touch_whole(rows->parent, (size_t)cap * sizeof(uint32_t));
    touch_whole(rows->lmat, (size_t)cap * sizeof(*rows->lmat));
    touch_whole(rows->world, (size_t)cap * sizeof(*rows->world));
    return WEFT_OK;
}

/* The logger a call reports to: its `log` argument, else the store's. */
static const weft_logger_t *log_of(const weft__hstore_t *s, const weft_logger_t *log) {
    return log != NULL ? log : s->log;
}

/* Make room for `need` rows, doubling; the arrays keep their rows. Failures go to `log`. */
static weft_result_t reserve(weft__hstore_t *s, uint64_t need, const weft_logger_t *log) {
    if (need <= s->capacity) {
        return WEFT_OK;
    }
    if (need > WEFT__HROW_NONE - 1) {
        return WEFT__FAIL(log, WEFT_ECAPACITY, "hierarchy: more than %u nodes",
                          WEFT__HROW_NONE - 1);
    }
    uint64_t cap = s->capacity ? (uint64_t)s->capacity * 2 : 256;
    while (cap < need) {
        cap *= 2;
    }
    if (cap > WEFT__HROW_NONE - 1) {
        cap = WEFT__HROW_NONE - 1;
    }
    weft__hrows_t rows;
    if (weft__hstore_alloc_rows(s, &rows, (uint32_t)cap) != WEFT_OK) {
        return WEFT__FAIL(log, WEFT_ENOMEM, "hierarchy: cannot grow to %llu nodes",
                          (unsigned long long)cap);
    }
    const size_t n = s->count;
    if (n > 0) { /* the first growth copies nothing (and the old arrays are NULL) */
        memcpy(rows.ent, s->rows.ent, n * sizeof(*rows.ent));
        memcpy(rows.parent, s->rows.parent, n * sizeof(uint32_t));
        memcpy(rows.first_child, s->rows.first_child, n * sizeof(uint32_t));
        memcpy(rows.next_sib, s->rows.next_sib, n * sizeof(uint32_t));
        memcpy(rows.prev_sib, s->rows.prev_sib, n * sizeof(uint32_t));
        memcpy(rows.local, s->rows.local, n * sizeof(*rows.local));
        memcpy(rows.link, s->rows.link, n * sizeof(*rows.link));
        memcpy(rows.world, s->rows.world, n * sizeof(*rows.world));
        memcpy(rows.flags, s->rows.flags, n * sizeof(*rows.flags));
        memcpy(rows.lmat, s->rows.lmat, n * sizeof(*rows.lmat));
    }
    weft__hstore_free_rows(s, &s->rows, s->capacity);
    s->rows = rows;
    s->capacity = (uint32_t)cap;
    return WEFT_OK;
}

void weft__hstore_fini(weft__hstore_t *s) {
    weft__hstore_free_rows(s, &s->rows, s->capacity);
    for (uint32_t p = 0; p < s->map.page_count; p++) {
        weft__hstore_free(s, s->map.pages[p], MAP_PAGE_SIZE * sizeof(uint32_t));
    }
    weft__hstore_free(s, s->map.pages, s->map.page_count * sizeof(uint32_t *));
    weft__hstore_free(s, s->removed, (size_t)s->removed_capacity * sizeof(*s->removed));
    weft__hstore_free(s, s->level_start, (size_t)s->level_capacity * sizeof(uint32_t));
    weft__hstore_free(s, s->index_rows, (size_t)s->index_capacity * sizeof(uint32_t));
    weft__hstore_free(s, s->block_lo, (size_t)s->block_capacity * sizeof(uint32_t));
    weft__hstore_free(s, s->block_hi, (size_t)s->block_capacity * sizeof(uint32_t));
    weft__hstore_free(s, s->index_start, (size_t)s->index_start_capacity * sizeof(uint32_t));
    weft__hstore_free(s, s->mark, (size_t)s->mark_words * sizeof(uint64_t));
    weft__hstore_free(s, s->kids, (size_t)s->kids_words * sizeof(uint64_t));
    weft__hstore_free(s, s->spans, (size_t)s->span_capacity * sizeof(*s->spans));
    const weft_allocator_t alloc = s->alloc;
    weft__hstore_init(s, &alloc, s->log);
}

/* ---- entity map --------------------------------------------------------- >>hstore_map */

static uint32_t entity_index(weft__hentity_t e) { return (uint32_t)(e & 0xffffffffu); }

uint32_t weft__hstore_row(const weft__hstore_t *s, weft__hentity_t e) {
    const uint32_t idx = entity_index(e);
    const uint32_t page = idx >> MAP_PAGE_BITS;
    if (e == 0 || page >= s->map.page_count || s->map.pages[page] == NULL) {
        return WEFT__HROW_NONE;
    }
    const uint32_t row = s->map.pages[page][idx & (MAP_PAGE_SIZE - 1)];
    /* The stored row must still hold this very handle: a stale generation is not a node. */
    if (row == WEFT__HROW_NONE || s->rows.ent[row] != e) {
        return WEFT__HROW_NONE;
    }
    return row;
}

/* Ensure the page for e exists (the only map operation that can fail). */
static weft_result_t map_reserve(weft__hstore_t *s, weft__hentity_t e) {
    const uint32_t page = entity_index(e) >> MAP_PAGE_BITS;
    if (page >= s->map.page_count) {
        uint32_t n = s->map.page_count ? s->map.page_count : 4;
        while (n <= page) {
            n *= 2;
        }
        uint32_t **pages = weft__hstore_alloc(s, n * sizeof(uint32_t *));
        if (pages == NULL) {
            return WEFT_ENOMEM;
        }
        for (uint32_t i = 0; i < n; i++) {
            pages[i] = i < s->map.page_count ? s->map.pages[i] : NULL;
        }
        weft__hstore_free(s, s->map.pages, s->map.page_count * sizeof(uint32_t *));
        s->map.pages = pages;
        s->map.page_count = n;
    }
    if (s->map.pages[page] == NULL) {
        uint32_t *p = weft__hstore_alloc(s, MAP_PAGE_SIZE * sizeof(uint32_t));
        if (p == NULL) {
            return WEFT_ENOMEM;
        }
        memset(p, 0xff, MAP_PAGE_SIZE * sizeof(uint32_t)); /* all WEFT__HROW_NONE */
        s->map.pages[page] = p;
    }
    return WEFT_OK;
}

/* Point e's map entry at row (its page exists because e was added). */
void weft__hstore_map_set(weft__hstore_t *s, weft__hentity_t e, uint32_t row) {
    const uint32_t idx = entity_index(e);
    s->map.pages[idx >> MAP_PAGE_BITS][idx & (MAP_PAGE_SIZE - 1)] = row;
}

/* ---- rows and links ----------------------------------------------------- >>hstore_rows */

/* A hole: a dead root with identity data, harmless to compute. */
static void make_hole(weft__hstore_t *s, uint32_t r) {
    weft__hrows_t *w = &s->rows;
    w->ent[r] = 0;
    w->parent[r] = w->first_child[r] = w->next_sib[r] = w->prev_sib[r] = WEFT__HROW_NONE;
    w->local[r] = weft_transform_identity();
    w->link[r].parent = 0;
    w->link[r].inverse_bind = weft_mat4_identity();
    w->flags[r] = WEFT__HFLAG_PLAIN;
    s->holes++;
}

static void copy_row(weft__hrows_t *w, uint32_t from, uint32_t to) {
    w->ent[to] = w->ent[from];
    w->parent[to] = w->parent[from];
    w->first_child[to] = w->first_child[from];
    w->next_sib[to] = w->next_sib[from];
    w->prev_sib[to] = w->prev_sib[from];
    w->local[to] = w->local[from];
    w->link[to] = w->link[from];
    w->world[to] = w->world[from];
    w->flags[to] = w->flags[from];
    w->lmat[to] = w->lmat[from];
}

/* PLAIN when the inverse bind is bitwise the identity: the update then skips its multiply. */
static uint8_t plain_flag(const weft_mat4_t *inverse_bind) {
    const weft_mat4_t id = weft_mat4_identity();
    return memcmp(inverse_bind, &id, sizeof(id)) == 0 ? WEFT__HFLAG_PLAIN : 0;
}

void weft__hstore_set_data(weft__hstore_t *s, uint32_t r, const weft_transform_t *local,
                           const weft_mat4_t *inverse_bind, const weft_mat4_t *world) {
    weft__hrows_t *w = &s->rows;
    w->local[r] = *local;
    w->link[r].inverse_bind = *inverse_bind;
    w->world[r] = *world;
    w->flags[r] = (uint8_t)(plain_flag(inverse_bind) | WEFT__HFLAG_CHANGED);
}

void weft__hstore_touch_all(weft__hstore_t *s) { s->touched_all = true; }

void weft__hstore_mark_all(weft__hstore_t *s) {
    uint8_t *f = s->rows.flags;
    if (s->holes == 0) { /* no entity to look at, eight rows per word */
        uint32_t r = 0;
        for (; r + 8 <= s->count; r += 8) {
            uint64_t v;
            memcpy(&v, f + r, sizeof(v));
            v |= 0x0101010101010101ull * WEFT__HFLAG_DIRTY;
            memcpy(f + r, &v, sizeof(v));
        }
        for (; r < s->count; r++) {
            f[r] |= WEFT__HFLAG_DIRTY;
        }
        return;
    }
    for (uint32_t r = 0; r < s->count; r++) {
        if (s->rows.ent[r] != 0) {
            f[r] |= WEFT__HFLAG_DIRTY;
        }
    }
}

/* Remove r from its parent's child list; r becomes a root (its link is left to the caller). */
static void unlink_child(weft__hrows_t *w, uint32_t r) {
    const uint32_t p = w->parent[r];
    const uint32_t prev = w->prev_sib[r];
    const uint32_t next = w->next_sib[r];
    if (prev != WEFT__HROW_NONE) {
        w->next_sib[prev] = next;
    } else {
        w->first_child[p] = next;
    }
    if (next != WEFT__HROW_NONE) {
        w->prev_sib[next] = prev;
    }
    w->parent[r] = w->next_sib[r] = w->prev_sib[r] = WEFT__HROW_NONE;
}

/* Push r at the head of p's child list. */
static void link_child(weft__hrows_t *w, uint32_t p, uint32_t r) {
    const uint32_t head = w->first_child[p];
    w->parent[r] = p;
    w->prev_sib[r] = WEFT__HROW_NONE;
    w->next_sib[r] = head;
    if (head != WEFT__HROW_NONE) {
        w->prev_sib[head] = r;
    }
    w->first_child[p] = r;
}

/* Turn child r into a root: bake its (last computed) world matrix into its local transform. */
static void bake_and_unlink(weft__hrows_t *w, uint32_t r) {
    w->local[r] = weft_transform_from_matrix(&w->world[r]);
    unlink_child(w, r);
    w->link[r].parent = 0;
    w->link[r].inverse_bind = weft_mat4_identity();
    w->flags[r] = WEFT__HFLAG_PLAIN | WEFT__HFLAG_CHANGED;
}

uint32_t weft__hstore_depth(const weft__hstore_t *s, uint32_t r) {
    uint32_t d = 0;
    for (r = s->rows.parent[r]; r != WEFT__HROW_NONE; r = s->rows.parent[r]) {
        d++;
    }
    return d;
}

bool weft__hstore_is_ancestor(const weft__hstore_t *s, uint32_t a, uint32_t r) {
    /* Parents sit at lower rows (ORDER), so nothing below row a can have a as ancestor and
     * the walk stops as soon as it passes below a. */
    for (; r != WEFT__HROW_NONE && r >= a; r = s->rows.parent[r]) {
        if (r == a) {
            return true;
        }
    }
    return false;
}

/* Nodes in r's subtree (r included); uses scratch as the DFS stack. */
static uint32_t subtree_size(const weft__hstore_t *s, uint32_t r) {
    const weft__hrows_t *w = &s->rows;
    uint32_t *stack = w->scratch;
    uint32_t top = 0, n = 0;
    stack[top++] = r;
    while (top > 0) {
        const uint32_t x = stack[--top];
        n++;
        for (uint32_t c = w->first_child[x]; c != WEFT__HROW_NONE; c = w->next_sib[c]) {
            stack[top++] = c;
        }
    }
    return n;
}

/* Move the subtree of root r (already unlinked) to rows [count, count + size), breadth-first,
 * so each parent again precedes its children; the old rows become holes. Capacity must be
 * reserved. Returns r's new row. O(subtree). */
static uint32_t move_subtree_to_end(weft__hstore_t *s, uint32_t r) {
    weft__hrows_t *w = &s->rows;
    uint32_t *old = w->scratch; /* old[i - base]: the row that new row i came from */
    const uint32_t base = s->count;
    uint32_t end = base;

    copy_row(w, r, end);
    old[end - base] = r;
    weft__hstore_map_set(s, w->ent[end], end);
    end++;
    for (uint32_t i = base; i < end; i++) {
        /* Row i was copied verbatim: its first_child still names an old row, and the old
         * sibling chain is intact because old rows are only cleared at the very end. */
        uint32_t c = w->first_child[i];
        uint32_t prev = WEFT__HROW_NONE;
        if (c != WEFT__HROW_NONE) {
            w->first_child[i] = end;
        }
        for (; c != WEFT__HROW_NONE; c = w->next_sib[c]) {
            const uint32_t k = end++;
            copy_row(w, c, k);
            old[k - base] = c;
            weft__hstore_map_set(s, w->ent[k], k);
            w->parent[k] = i;
            w->prev_sib[k] = prev;
            if (prev != WEFT__HROW_NONE) {
                w->next_sib[prev] = k;
            }
            prev = k;
        }
        if (prev != WEFT__HROW_NONE) {
            w->next_sib[prev] = WEFT__HROW_NONE;
        }
    }
    for (uint32_t i = 0; i < end - base; i++) {
        make_hole(s, old[i]);
    }
    s->moved_rows += end - base;
    s->count = end;
    return base;
}

/* Drop holes once they exceed a quarter of the rows. Failing to compact is harmless. */
static void maybe_compact(weft__hstore_t *s) {
    if (s->holes > 64 && s->holes > s->count / 4) {
        (void)weft__hstore_compact(s);
    }
}

/* The level holding row r (levels_valid only): binary search in level_start. */
static uint32_t level_of(const weft__hstore_t *s, uint32_t r) {
    uint32_t lo = 0, hi = s->level_count; /* level_start[lo] <= r < level_start[hi] */
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (s->level_start[mid] <= r) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* ---- operations --------------------------------------------------------- >>hstore_ops */

weft_result_t weft__hstore_add(weft__hstore_t *s, weft__hentity_t e,
                               const weft_transform_t *local) {
    if (weft__hstore_row(s, e) != WEFT__HROW_NONE) {
        return WEFT__FAIL(s->log, WEFT_EEXIST, "hierarchy: entity 0x%llx is already a node",
                          (unsigned long long)e);
    }
    weft_result_t r = reserve(s, (uint64_t)s->count + 1, s->log);
    if (r != WEFT_OK) {
        return r;
    }
    if (map_reserve(s, e) != WEFT_OK) {
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "hierarchy: out of memory adding a node");
    }
    weft__hrows_t *w = &s->rows;
    const uint32_t row = s->count++;
    w->ent[row] = e;
    w->parent[row] = w->first_child[row] = w->next_sib[row] = w->prev_sib[row] = WEFT__HROW_NONE;
    w->local[row] = *local;
    w->link[row].parent = 0;
    w->link[row].inverse_bind = weft_mat4_identity();
    w->world[row] = weft_transform_matrix(local);
    w->flags[row] = WEFT__HFLAG_PLAIN | WEFT__HFLAG_CHANGED;
    weft__hstore_map_set(s, e, row);
    s->live++;
    s->index_valid = false;
    s->blocks_valid = false;
    s->spans_state = 0;
    s->auto_known = false;
    s->levels_valid = false; /* the new row lies beyond the last level */
    return WEFT_OK;
}

weft_result_t weft__hstore_attach(weft__hstore_t *s, weft__hentity_t child, weft__hentity_t parent,
                                  const weft_logger_t *log) {
    return weft__hstore_attach_mode(s, child, parent, WEFT__HATTACH_KEEP_WORLD, log);
}

weft_result_t weft__hstore_attach_mode(weft__hstore_t *s, weft__hentity_t child,
                                       weft__hentity_t parent, weft__hattach_t mode,
                                       const weft_logger_t *log) {
    log = log_of(s, log);
    uint32_t rc = weft__hstore_row(s, child);
    const uint32_t rp = weft__hstore_row(s, parent);
    if (rc == WEFT__HROW_NONE || rp == WEFT__HROW_NONE) {
        return WEFT__FAIL(log, WEFT_ENOENT, "weft_hier_attach: %s 0x%llx is not a hierarchy node",
                          rc == WEFT__HROW_NONE ? "child" : "parent",
                          (unsigned long long)(rc == WEFT__HROW_NONE ? child : parent));
    }
    weft__hrows_t *w = &s->rows;
    if (rc == rp ||
        (w->first_child[rc] != WEFT__HROW_NONE && weft__hstore_is_ancestor(s, rc, rp))) {
        return WEFT__FAIL(log, WEFT_ECYCLE,
                          "weft_hier_attach: parent 0x%llx is the child 0x%llx or one of its "
                          "descendants",
                          (unsigned long long)parent, (unsigned long long)child);
    }
    weft_mat4_t inverse_bind = weft_mat4_identity();
    const bool keep_world = mode == WEFT__HATTACH_KEEP_WORLD;
    if (keep_world && !weft_mat4_inverse(&w->world[rp], &inverse_bind)) {
        return WEFT__FAIL(log, WEFT_EINVAL,
                          "weft_hier_attach: the world matrix of parent 0x%llx is singular",
                          (unsigned long long)parent);
    }
    const bool move = rp > rc;
    if (move) {
        weft_result_t r = reserve(s, (uint64_t)s->count + subtree_size(s, rc), log);
        if (r != WEFT_OK) {
            return r;
        }
        w = &s->rows; /* reserve may have replaced the arrays */
    }

    /* Checks are done: from here on nothing fails. Keeping the world, a re-parented child
     * keeps its place: its current world is baked into local, then bound to the new parent.
     * Keeping the local, it is only unlinked: its local now composes under the new parent. */
    s->index_valid = false;
    s->blocks_valid = false;
    s->spans_state = 0;
    s->auto_known = false;
    if (w->parent[rc] != WEFT__HROW_NONE) {
        if (keep_world) {
            bake_and_unlink(w, rc);
        } else {
            unlink_child(w, rc);
        }
    }
    if (move) {
        rc = move_subtree_to_end(s, rc);
        s->levels_valid = false;
    } else if (s->levels_valid && level_of(s, rp) >= level_of(s, rc)) {
        s->levels_valid = false;
    }
    link_child(w, rp, rc);
    if (rp < s->kids_rows) { /* the only way a row covered by the bitset gains a child */
        s->kids[rp / 64u] |= 1ull << (rp % 64u);
    }
    w->link[rc].parent = parent;
    w->link[rc].inverse_bind = inverse_bind;
    w->flags[rc] = (uint8_t)(plain_flag(&inverse_bind) | WEFT__HFLAG_CHANGED);
    if (move) {
        maybe_compact(s);
    }
    return WEFT_OK;
}

weft_result_t weft__hstore_detach(weft__hstore_t *s, weft__hentity_t e, const weft_logger_t *log) {
    const uint32_t r = weft__hstore_row(s, e);
    if (r == WEFT__HROW_NONE) {
        return WEFT__FAIL(log_of(s, log), WEFT_ENOENT,
                          "weft_hier_detach: 0x%llx is not a hierarchy node",
                          (unsigned long long)e);
    }
    /* A root in place keeps ORDER and the level cut (it simply reads no parent). */
    if (s->rows.parent[r] != WEFT__HROW_NONE) {
        bake_and_unlink(&s->rows, r);
        s->index_valid = false;
        s->blocks_valid = false;
        s->spans_state = 0;
        s->auto_known = false;
    }
    return WEFT_OK;
}

/* Grow the removed-entities buffer to n entries. */
static weft_result_t reserve_removed(weft__hstore_t *s, uint32_t n) {
    if (n <= s->removed_capacity) {
        return WEFT_OK;
    }
    uint32_t cap = s->removed_capacity ? s->removed_capacity : 64;
    while (cap < n) {
        cap = cap > UINT32_MAX / 2 ? n : cap * 2;
    }
    weft__hentity_t *p = weft__hstore_alloc(s, (size_t)cap * sizeof(*p));
    if (p == NULL) {
        return WEFT_ENOMEM;
    }
    weft__hstore_free(s, s->removed, (size_t)s->removed_capacity * sizeof(*s->removed));
    s->removed = p;
    s->removed_capacity = cap;
    return WEFT_OK;
}

/* Breadth-first over the subtree of row r, parents first: rows into scratch, entities into
 * `removed` (reserved by the caller). Returns the node count. */
static uint32_t collect_subtree(weft__hstore_t *s, uint32_t r) {
    const weft__hrows_t *w = &s->rows;
    uint32_t *queue = w->scratch;
    uint32_t head = 0, tail = 0;
    queue[tail++] = r;
    while (head < tail) {
        const uint32_t x = queue[head++];
        for (uint32_t c = w->first_child[x]; c != WEFT__HROW_NONE; c = w->next_sib[c]) {
            queue[tail++] = c;
        }
    }
    for (uint32_t i = 0; i < tail; i++) {
        s->removed[i] = w->ent[queue[i]];
    }
    return tail;
}

/* The checks shared by subtree listing and removal, done before anything changes: e's row
 * into *row, and (when `list`) room in `removed` for its whole subtree. `what` names the
 * operation in the failure message, reported to log_of(s, log). */
static weft_result_t prepare_subtree_call(weft__hstore_t *s, weft__hentity_t e, bool list,
                                          const char *what, const weft_logger_t *log,
                                          uint32_t *row) {
    *row = weft__hstore_row(s, e);
    if (*row == WEFT__HROW_NONE) {
        return WEFT__FAIL(log_of(s, log), WEFT_ENOENT, "hierarchy: %s 0x%llx: not a hierarchy node",
                          what, (unsigned long long)e);
    }
    if (list && reserve_removed(s, subtree_size(s, *row)) != WEFT_OK) {
        return WEFT__FAIL(log_of(s, log), WEFT_ENOMEM, "hierarchy: %s 0x%llx: out of memory", what,
                          (unsigned long long)e);
    }
    return WEFT_OK;
}

weft_result_t weft__hstore_subtree(weft__hstore_t *s, weft__hentity_t e,
                                   const weft__hentity_t **out, uint32_t *count,
                                   const weft_logger_t *log) {
    uint32_t r;
    weft_result_t res = prepare_subtree_call(s, e, true, "listing the subtree of", log, &r);
    if (res != WEFT_OK) {
        return res;
    }
    *count = collect_subtree(s, r);
    *out = s->removed;
    return WEFT_OK;
}

weft_result_t weft__hstore_remove(weft__hstore_t *s, weft__hentity_t e, bool subtree,
                                  const weft__hentity_t **removed, uint32_t *removed_count,
                                  const weft_logger_t *log) {
    uint32_t r;
    weft_result_t res = prepare_subtree_call(
        s, e, subtree, subtree ? "removing the subtree of" : "removing", log, &r);
    if (res != WEFT_OK) {
        return res;
    }
    weft__hrows_t *w = &s->rows;

    s->index_valid = false;

    s->blocks_valid = false;
    s->spans_state = 0;
    s->auto_known = false;
    if (w->parent[r] != WEFT__HROW_NONE) {
        unlink_child(w, r);
    }
    uint32_t n = 1;
    if (!subtree) {
        while (w->first_child[r] != WEFT__HROW_NONE) {
            bake_and_unlink(w, w->first_child[r]);
        }
        weft__hstore_map_set(s, e, WEFT__HROW_NONE);
        make_hole(s, r);
    } else {
        /* The rows are read (into scratch and `removed`) before any becomes a hole. */
        n = collect_subtree(s, r);
        for (uint32_t i = 0; i < n; i++) {
            weft__hstore_map_set(s, s->removed[i], WEFT__HROW_NONE);
            make_hole(s, w->scratch[i]);
        }
    }
    s->live -= n;
    if (removed != NULL) {
        *removed = subtree ? s->removed : NULL;
    }
    if (removed_count != NULL) {
        *removed_count = subtree ? n : 0;
    }
    maybe_compact(s);
    return WEFT_OK;
}

/* ---- hash --------------------------------------------------------------- >>hstore_hash */

uint64_t weft__hstore_hash(const weft__hstore_t *s, uint64_t h,
                           uint64_t (*mix)(uint64_t h, const void *p, size_t n)) {
    const weft__hrows_t *w = &s->rows;
    const uint64_t live = s->live;
    h = mix(h, &live, sizeof(live));
    for (uint32_t page = 0; page < s->map.page_count; page++) {
        const uint32_t *entries = s->map.pages[page];
        for (uint32_t i = 0; entries != NULL && i < MAP_PAGE_SIZE; i++) {
            const uint32_t r = entries[i];
            if (r == WEFT__HROW_NONE) {
                continue;
            }
            unsigned char
                rec[8 + sizeof(weft__hlink_t) + sizeof(weft_transform_t) + sizeof(weft_mat4_t)];
            memcpy(rec, &w->ent[r], 8);
            memcpy(rec + 8, &w->link[r], sizeof(weft__hlink_t));
            memcpy(rec + 8 + sizeof(weft__hlink_t), &w->local[r], sizeof(weft_transform_t));
            memcpy(rec + 8 + sizeof(weft__hlink_t) + sizeof(weft_transform_t), &w->world[r],
                   sizeof(weft_mat4_t));
            h = mix(h, rec, sizeof(rec));
        }
    }
    return h;
}

/* ---- checker ------------------------------------------------------------ >>hstore_check */

const char *weft__hstore_check(const weft__hstore_t *s) {
    const weft__hrows_t *w = &s->rows;
    uint32_t live = 0, holes = 0;
    for (uint32_t r = 0; r < s->count; r++) {
        if (w->ent[r] == 0) {
            holes++;
            if (w->parent[r] != WEFT__HROW_NONE || w->first_child[r] != WEFT__HROW_NONE) {
                return "a hole has links";
            }
            continue;
        }
        live++;
        if (weft__hstore_row(s, w->ent[r]) != r) {
            return "the entity map does not point at the node's row";
        }
        const uint32_t p = w->parent[r];
        if (p != WEFT__HROW_NONE) {
            if (p >= r) {
                return "ORDER: a parent does not precede its child";
            }
            if (w->ent[p] == 0) {
                return "a node's parent is a hole";
            }
            if (w->link[r].parent != w->ent[p]) {
                return "a parent link names another entity than the parent row";
            }
        } else if (w->link[r].parent != 0) {
            return "a root has a parent link";
        }
        uint32_t prev = WEFT__HROW_NONE;
        for (uint32_t c = w->first_child[r]; c != WEFT__HROW_NONE; c = w->next_sib[c]) {
            if (c >= s->count || w->parent[c] != r) {
                return "a child list holds a node of another parent";
            }
            if (w->prev_sib[c] != prev) {
                return "a sibling back link is wrong";
            }
            prev = c;
        }
        if (s->levels_valid && p != WEFT__HROW_NONE && level_of(s, p) >= level_of(s, r)) {
            return "LEVELS: a parent is not in an earlier level";
        }
    }
    if (live != s->live || holes != s->holes) {
        return "live or hole counters are wrong";
    }
    if (s->levels_valid &&
        (s->level_count == 0 ? s->count != 0 : s->level_start[s->level_count] != s->count)) {
        return "LEVELS: the levels do not cover every row";
    }
    return NULL;
}
