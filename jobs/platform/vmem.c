/* vmem.c: POSIX implementation of the address-space wrapper (mmap/mprotect/munmap).
 *
 * Reservation maps PROT_NONE with MAP_NORESERVE, so a large reservation costs neither memory
 * nor swap accounting; commit flips protection to read/write, and the kernel backs pages with
 * zeroed memory on first touch. */
#if !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE under -std=c11 */
#endif

#include "vmem.h"

#include "atomic.h"

#include <sys/mman.h>
#include <unistd.h>

/* The page size never changes while the process runs; callers ask on every bulk create, so it
 * is read from the system once (any thread may be first: relaxed, every thread stores the same
 * value). */
size_t weft__vmem_page_size(void) {
    static weft_atomic_size cached;
    size_t page = weft_atomic_load_relaxed(&cached);
    if (page == 0) {
        long p = sysconf(_SC_PAGESIZE);
        page = p > 0 ? (size_t)p : 4096u;
        weft_atomic_store_relaxed(&cached, page);
    }
    return page;
}

static size_t round_pages(size_t size) {
    size_t page = weft__vmem_page_size();
    return (size + page - 1) & ~(page - 1);
}

void *weft__vmem_reserve(size_t size) {
    if (size == 0) {
        return NULL;
    }
    void *p = mmap(NULL, round_pages(size), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

bool weft__vmem_commit(void *ptr, size_t size) {
    if (size == 0) {
        return true;
    }
    return mprotect(ptr, size, PROT_READ | PROT_WRITE) == 0;
}

void weft__vmem_populate(void *ptr, size_t size) {
#if defined(MADV_POPULATE_WRITE)
    if (size != 0) {
        (void)madvise(ptr, size, MADV_POPULATE_WRITE);
    }
#else
    (void)ptr;
    (void)size;
#endif
}

void weft__vmem_release(void *ptr, size_t size) {
    if (ptr != NULL) {
        (void)munmap(ptr, round_pages(size));
    }
}
