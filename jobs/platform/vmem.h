/* vmem.h: a thin wrapper over the OS virtual-memory calls — reserve address space, commit
 * and release it (private to the build; jobs/ holds all platform code).
 *
 * Reserved memory is inaccessible until committed. Committed memory reads as zero. The ECS
 * uses this for tables that must never move (the entity generation table), so readers on
 * other threads can index them without locks while the owner grows them. */
#ifndef WEFT_PLATFORM_VMEM_H
#define WEFT_PLATFORM_VMEM_H

#include <stdbool.h>
#include <stddef.h>

#include "weft/base.h"

/* WEFT_API on each: src/ calls them across the library boundary when both are shared
 * libraries (libweft.so -> libweft_jobs.so); they are still not in any installed header. */

/* The OS page size in bytes (a power of two). Thread: any. */
WEFT_API size_t weft__vmem_page_size(void);

/* Reserve `size` bytes of address space (rounded up to pages), inaccessible and not backed by
 * memory. Returns NULL on failure. Thread: any. */
WEFT_API void *weft__vmem_reserve(size_t size);

/* Make [ptr, ptr + size) readable and writable (zero-filled on first touch). ptr and size must
 * be page multiples inside a reservation. Returns false on failure (nothing changes).
 * Thread: any; concurrent readers of already-committed pages are unaffected. */
WEFT_API bool weft__vmem_commit(void *ptr, size_t size);

/* Back [ptr, ptr + size) with zeroed pages now, in one call, instead of one page fault per
 * page on first touch (MADV_POPULATE_WRITE, Linux 5.14+). A hint for a range the caller is
 * about to fill: it changes no contents and cannot fail (an OS without the call, or a refusal,
 * leaves the pages to fault in as before). ptr and size must be page multiples inside a
 * committed range or any other writable private mapping (the whole pages of a heap block: a
 * page it shares with other blocks keeps their contents). Thread: any. */
WEFT_API void weft__vmem_populate(void *ptr, size_t size);

/* Give back a whole reservation made by weft__vmem_reserve (same size). NULL is ignored. */
WEFT_API void weft__vmem_release(void *ptr, size_t size);

#endif /* WEFT_PLATFORM_VMEM_H */
