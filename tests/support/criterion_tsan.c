/* criterion_tsan.c: lets Criterion's test runner start under ThreadSanitizer. Linked into
 * every test executable of a WEFT_SANITIZER=thread build (see the top CMakeLists.txt).
 *
 * DESIGN: Criterion's sandbox (BoxFort, src/arena.c) maps its shared arena with MAP_FIXED at
 * 0x200000000000 + r * 16 MiB, where r = rand_r(&seed) & 0x3fffff. ThreadSanitizer refuses
 * fixed mappings outside its application ranges, so the runner almost always aborts with
 * "criterion: Could not initialize inheritable arena: Resource temporarily unavailable"
 * (a known, long-standing Criterion limitation). An executable's definition of rand_r interposes
 * on the C library's for libcriterion.so too, so this one answers calls made from
 * libcriterion with r in [0x358000, 0x368000): the bases 0x558000000000-0x568000000000 lie
 * inside ThreadSanitizer's application range for PIE binaries (0x550000000000-0x568000000000
 * in both the gcc 12 and the clang 14 runtime). BoxFort checks each candidate with msync and
 * asks again when it is taken, so successive answers walk the range. Every other caller
 * gets the C library's rand_r unchanged. */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int (*rand_r_fn)(unsigned int *seed);

static rand_r_fn libc_rand_r;  /* the next rand_r in lookup order; set before main */
static unsigned int next_slot; /* arena candidates handed out; the runner is single-threaded
                                   when it maps the arena, and each child is a fresh fork */

/* Resolved in a constructor so that no test thread ever writes it (ThreadSanitizer would
 * rightly report a lazy initialisation raced by two threads). */
__attribute__((constructor)) static void resolve_libc_rand_r(void) {
    void *sym = dlsym(RTLD_NEXT, "rand_r");
    memcpy(&libc_rand_r, &sym, sizeof libc_rand_r); /* ISO C has no object->function cast */
}

static int called_from_criterion(const void *caller) {
    Dl_info info;
    return dladdr(caller, &info) != 0 && info.dli_fname != NULL &&
           strstr(info.dli_fname, "libcriterion") != NULL;
}

int rand_r(unsigned int *seed) {
    if (called_from_criterion(__builtin_return_address(0))) {
        return (int)(0x358000u + next_slot++ % 0x10000u);
    }
    if (libc_rand_r == NULL) {
        abort(); /* cannot happen after the constructor; never return a fake random number */
    }
    return libc_rand_r(seed);
}
