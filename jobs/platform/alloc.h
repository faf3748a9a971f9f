/* alloc.h: the allocator hook and its default pair, in one place (platform layer, private
 * to the build). The job system and the ECS both use it; WEFT_API because src/ calls it across
 * the library boundary when libweft and libweft_jobs are shared libraries.
 *
 * weft/base.h lets a caller set both hook functions or neither. The world, the scheduler's
 * buffers, archive buffers and the hierarchy store each keep a copy of a caller's hook, and
 * all of them fall back to the same default: aligned_alloc (size rounded up to the
 * alignment, as C11 asks) and free. World memory itself goes through weft__alloc (world.h),
 * which also counts bytes; these are for the holders that cannot count (worker threads,
 * buffers that outlive a world) or do not belong to a world.
 *
 * Thread: any (the hook is thread-safe by contract). */
#ifndef WEFT_PLATFORM_ALLOC_H
#define WEFT_PLATFORM_ALLOC_H

#include <stddef.h>

#include "weft/base.h"

/* The default pair (user is ignored). alloc returns NULL when out of memory. */
WEFT_API void *weft__default_alloc(size_t size, size_t align, void *user);
WEFT_API void weft__default_free(void *p, size_t size, void *user);

/* `a` when both its functions are set, else the default pair (a may be NULL). */
WEFT_API weft_allocator_t weft__allocator_resolved(const weft_allocator_t *a);

/* Allocate `size` bytes aligned to `align` through `a` (NULL or unset: the default pair);
 * NULL when out of memory. */
WEFT_API void *weft__hook_alloc(const weft_allocator_t *a, size_t size, size_t align);

/* Give back `p` (NULL is ignored) of the `size` it was allocated with through `a`. */
WEFT_API void weft__hook_free(const weft_allocator_t *a, void *p, size_t size);

#endif /* WEFT_PLATFORM_ALLOC_H */
