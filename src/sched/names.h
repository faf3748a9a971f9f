/* names.h: which systems a name refers to, so registration resolves names without walking
 * every earlier system (private to the build).
 *
 * DESIGN
 * A hash table from a name to three lists of registration indices: the systems the name
 * designates (its own name or one of its sets, WEFT__NAME_MEMBER), the systems that list it in
 * `before` (WEFT__NAME_BEFORE) and in `after` (WEFT__NAME_AFTER). Lists only grow, in
 * registration order, and may hold entries that no longer hold (an unregistered system clears
 * its names): callers check each entry against the system record. Thread: main. */
#ifndef WEFT_SRC_NAMES_H
#define WEFT_SRC_NAMES_H

#include "weft/system.h"

typedef enum weft__name_kind {
    WEFT__NAME_MEMBER = 0, /* the system's name or one of its sets */
    WEFT__NAME_BEFORE = 1, /* a name in the system's before list */
    WEFT__NAME_AFTER = 2,  /* a name in the system's after list */
    WEFT__NAME_KINDS = 3,
} weft__name_kind_t;

typedef struct weft__name_slot {
    char name[WEFT_SYSTEM_NAME_MAX + 1]; /* NUL-terminated */
    uint32_t *list[WEFT__NAME_KINDS];    /* registration indices, ascending (NULL while the
                                             list fits in `one`) */
    uint32_t one[WEFT__NAME_KINDS];      /* a list of one entry (most names): no allocation */
    uint32_t count[WEFT__NAME_KINDS];    /* entries of each list */
    uint32_t cap[WEFT__NAME_KINDS];      /* capacity of each list allocated (0: `one`) */
} weft__name_slot_t;

typedef struct weft__names {
    uint32_t *table;          /* [table_cap] slot index + 1, 0: empty (open addressing) */
    uint32_t table_cap;       /* power of two, or 0 */
    weft__name_slot_t *slots; /* [nslots] distinct names */
    uint32_t nslots;          /* names known */
    uint32_t slots_cap;       /* capacity of slots */
} weft__names_t;

/* Append registration index `idx` to the `kind` list of `name` (1..WEFT_SYSTEM_NAME_MAX
 * bytes). Errors: WEFT_ENOMEM (reported through `log`; nothing changed). */
weft_result_t weft__names_add(weft__names_t *names, const weft_allocator_t *alloc,
                              const weft_logger_t *log, const char *name, weft__name_kind_t kind,
                              uint32_t idx);

/* Undo the last weft__names_add of (name, kind, idx) if it is that list's last entry. */
void weft__names_drop(weft__names_t *names, const char *name, weft__name_kind_t kind, uint32_t idx);

/* The `kind` list of `name`, *count entries (NULL and 0 for an unknown name). The pointer
 * stays valid until the next weft__names_add. */
const uint32_t *weft__names_find(const weft__names_t *names, const char *name,
                                 weft__name_kind_t kind, uint32_t *count);

/* Free everything (zeroes *names). */
void weft__names_fini(weft__names_t *names, const weft_allocator_t *alloc);

#endif /* WEFT_SRC_NAMES_H */
