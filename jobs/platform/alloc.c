/* alloc.c: the allocator hook's default pair and the helpers that apply it (see alloc.h). */
#include "alloc.h"

#include <stdlib.h>

void *weft__default_alloc(size_t size, size_t align, void *user) {
    (void)user;
    if (align < sizeof(void *)) {
        align = sizeof(void *);
    }
    /* aligned_alloc wants size to be a multiple of align */
    size_t rounded = (size + align - 1) & ~(align - 1);
    return aligned_alloc(align, rounded ? rounded : align);
}

void weft__default_free(void *p, size_t size, void *user) {
    (void)size;
    (void)user;
    free(p);
}

weft_allocator_t weft__allocator_resolved(const weft_allocator_t *a) {
    if (a != NULL && a->alloc != NULL && a->free != NULL) {
        return *a;
    }
    return (weft_allocator_t){.alloc = weft__default_alloc, .free = weft__default_free};
}

void *weft__hook_alloc(const weft_allocator_t *a, size_t size, size_t align) {
    if (a != NULL && a->alloc != NULL && a->free != NULL) {
        return a->alloc(size, align, a->user);
    }
    return weft__default_alloc(size, align, NULL);
}

void weft__hook_free(const weft_allocator_t *a, void *p, size_t size) {
    if (p == NULL) {
        return;
    }
    if (a != NULL && a->alloc != NULL && a->free != NULL) {
        a->free(p, size, a->user);
    } else {
        free(p);
    }
}
