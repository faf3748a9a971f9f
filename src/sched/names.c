/* names.c: the name index of registration (see names.h). */
#include "names.h"

#include <string.h>

#include "jobs/platform/report.h"
#include "schedule.h"

/* FNV-1a: names are short; the table is sized to stay at most half full. */
static uint32_t name_hash(const char *name) {
    uint32_t h = 2166136261u;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        h = (h ^ *c) * 16777619u;
    }
    return h;
}

/* The table position holding `name`, or the empty one where it would go. */
static uint32_t probe(const weft__names_t *names, const char *name) {
    uint32_t mask = names->table_cap - 1, at = name_hash(name) & mask;
    while (names->table[at] && strcmp(names->slots[names->table[at] - 1].name, name) != 0) {
        at = (at + 1) & mask;
    }
    return at;
}

static weft__name_slot_t *find_slot(const weft__names_t *names, const char *name) {
    if (names->table_cap == 0) {
        return NULL;
    }
    uint32_t t = names->table[probe(names, name)];
    return t ? &names->slots[t - 1] : NULL;
}

/* The `kind` list of a slot wherever it lives. */
static uint32_t *entries(weft__name_slot_t *slot, weft__name_kind_t kind) {
    return slot->cap[kind] ? slot->list[kind] : &slot->one[kind];
}

/* Room for one more slot: the slot array and a table at most half full after the insert. */
static weft_result_t grow(weft__names_t *names, const weft_allocator_t *alloc) {
    if (names->nslots == names->slots_cap) {
        uint32_t cap = names->slots_cap ? names->slots_cap * 2 : 64;
        weft__name_slot_t *s = weft__sched_alloc(alloc, cap * sizeof *s);
        if (!s) {
            return WEFT_ENOMEM;
        }
        /* half is copied now, the rest filled by the next registrations: back it at once */
        weft__sched_populate(s, cap * sizeof *s);
        if (names->nslots) {
            memcpy(s, names->slots, names->nslots * sizeof *s);
        }
        weft__sched_free(alloc, names->slots, names->slots_cap * sizeof *names->slots);
        names->slots = s;
        names->slots_cap = cap;
    }
    if (2 * ((size_t)names->nslots + 1) > names->table_cap) {
        uint32_t cap = names->table_cap ? names->table_cap * 2 : 128;
        uint32_t *t = weft__sched_alloc(alloc, cap * sizeof *t);
        if (!t) {
            return WEFT_ENOMEM;
        }
        weft__sched_populate(t, cap * sizeof *t);
        memset(t, 0, cap * sizeof *t);
        weft__sched_free(alloc, names->table, names->table_cap * sizeof *names->table);
        names->table = t;
        names->table_cap = cap;
        for (uint32_t i = 0; i < names->nslots; i++) {
            names->table[probe(names, names->slots[i].name)] = i + 1;
        }
    }
    return WEFT_OK;
}

weft_result_t weft__names_add(weft__names_t *names, const weft_allocator_t *alloc,
                              const weft_logger_t *log, const char *name, weft__name_kind_t kind,
                              uint32_t idx) {
    weft__name_slot_t *slot = find_slot(names, name);
    if (!slot) {
        if (grow(names, alloc) != WEFT_OK) {
            return WEFT__FAIL(log, WEFT_ENOMEM, "system names: out of memory");
        }
        slot = &names->slots[names->nslots];
        memset(slot, 0, sizeof *slot);
        size_t len = strlen(name);
        memcpy(slot->name, name, len < WEFT_SYSTEM_NAME_MAX ? len : WEFT_SYSTEM_NAME_MAX);
        names->table[probe(names, slot->name)] = ++names->nslots;
    }
    if (slot->count[kind] == 0 && slot->cap[kind] == 0) {
        slot->one[kind] = idx;
        slot->count[kind] = 1;
        return WEFT_OK;
    }
    if (slot->count[kind] >= slot->cap[kind]) {
        uint32_t cap = slot->cap[kind] ? slot->cap[kind] * 2 : 4;
        uint32_t *l = weft__sched_alloc(alloc, cap * sizeof *l);
        if (!l) {
            return WEFT__FAIL(log, WEFT_ENOMEM, "system names: out of memory");
        }
        memcpy(l, entries(slot, kind), slot->count[kind] * sizeof *l);
        if (slot->cap[kind]) {
            weft__sched_free(alloc, slot->list[kind], slot->cap[kind] * sizeof *l);
        }
        slot->list[kind] = l;
        slot->cap[kind] = cap;
    }
    slot->list[kind][slot->count[kind]++] = idx;
    return WEFT_OK;
}

void weft__names_drop(weft__names_t *names, const char *name, weft__name_kind_t kind,
                      uint32_t idx) {
    weft__name_slot_t *slot = find_slot(names, name);
    if (slot && slot->count[kind] && entries(slot, kind)[slot->count[kind] - 1] == idx) {
        slot->count[kind]--;
    }
}

const uint32_t *weft__names_find(const weft__names_t *names, const char *name,
                                 weft__name_kind_t kind, uint32_t *count) {
    weft__name_slot_t *slot = find_slot(names, name);
    *count = slot ? slot->count[kind] : 0;
    return slot ? entries(slot, kind) : NULL;
}

void weft__names_fini(weft__names_t *names, const weft_allocator_t *alloc) {
    for (uint32_t i = 0; i < names->nslots; i++) {
        for (int k = 0; k < WEFT__NAME_KINDS; k++) {
            weft__sched_free(alloc, names->slots[i].list[k],
                             names->slots[i].cap[k] * sizeof(uint32_t));
        }
    }
    weft__sched_free(alloc, names->slots, names->slots_cap * sizeof *names->slots);
    weft__sched_free(alloc, names->table, names->table_cap * sizeof *names->table);
    memset(names, 0, sizeof *names);
}
