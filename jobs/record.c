/* record.c: the 64-byte records (jobs, gates, gate nodes) come from per-context slabs, so
 * the submit path never calls the allocator hook in the steady state.
 *
 * DESIGN: each context (jobs_impl.h) owns the slabs it allocated and a private freelist. A
 * record remembers its owner. Freeing from the owner's thread pushes onto the private
 * list; freeing from another thread pushes onto the owner's `free_remote` list with a
 * lock-free CAS push, and the owner takes that whole list with one exchange when its
 * private list runs dry (mimalloc's local/thread-free split). Pushes never pop single
 * elements, so there is no ABA problem. Memory per context is bounded by the peak number
 * of records it had outstanding. Slabs are freed only when the job system is destroyed.
 *
 * Slab layout: WEFT__SLAB_RECORDS records; the first is a header linking the context's
 * slabs (`next`), the rest are handed out.
 *
 * Lock order: no locks. */
#include "jobs_impl.h"

#include <string.h>

static bool slab_new(weft_jobs_t *jobs, weft__ctx_t *ctx) {
    size_t size = (size_t)WEFT__SLAB_RECORDS * sizeof(weft__rec_t);
    weft__rec_t *slab = jobs->alloc.alloc(size, WEFT_CACHE_LINE, jobs->alloc.user);
    if (!slab) {
        return false;
    }
    memset(slab, 0, size);
    slab[0].next = ctx->slabs;
    ctx->slabs = slab;
    for (uint32_t i = WEFT__SLAB_RECORDS - 1; i >= 1; --i) {
        slab[i].owner = ctx;
        slab[i].next = ctx->free_local;
        ctx->free_local = &slab[i];
    }
    return true;
}

/* The private freelist is empty (weft__rec_alloc in jobs_impl.h pops it inline). */
weft__rec_t *weft__rec_alloc_slow(weft_jobs_t *jobs, weft__ctx_t *ctx) {
    /* pairs with the release CAS in weft__rec_free(): the records' last uses by other
     * threads happen before we hand them out again */
    weft__rec_t *r = weft_atomic_exchange_acquire(&ctx->free_remote, NULL);
    if (!r) {
        if (!slab_new(jobs, ctx)) {
            return NULL;
        }
        r = ctx->free_local;
    }
    ctx->free_local = r->next;
    r->next = NULL;
    return r;
}

void weft__rec_free(weft__ctx_t *ctx, weft__rec_t *r) {
    weft__ctx_t *owner = r->owner;
#if WEFT_DEBUG >= 2
    /* Make use-after-free visible: a freed record reads as garbage, not as a job. */
    weft__ctx_t *keep = owner;
    memset(r, 0xDD, sizeof *r);
    r->owner = keep;
#endif
    if (owner == ctx) {
        r->next = ctx->free_local;
        ctx->free_local = r;
        return;
    }
    void *head = weft_atomic_load_relaxed(&owner->free_remote);
    do {
        r->next = head;
        /* release pairs with the acquire exchange in weft__rec_alloc() */
    } while (!weft_atomic_cas_weak_release(&owner->free_remote, &head, (void *)r));
}

void weft__rec_fini_ctx(weft_jobs_t *jobs, weft__ctx_t *ctx) {
    size_t size = (size_t)WEFT__SLAB_RECORDS * sizeof(weft__rec_t);
    while (ctx->slabs) {
        weft__rec_t *next = ctx->slabs->next;
        jobs->alloc.free(ctx->slabs, size, jobs->alloc.user);
        ctx->slabs = next;
    }
    ctx->free_local = NULL;
    weft_atomic_store_relaxed(&ctx->free_remote, NULL);
}
