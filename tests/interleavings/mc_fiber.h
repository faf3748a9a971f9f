/* mc_fiber.h: the interleaving checker's modelled threads as fibers on one OS thread
 * (tests only).
 *
 * DESIGN: the checker runs exactly one modelled thread at a time, so they need not be OS
 * threads: each is a fiber with its own stack (allocated once, reused by every execution)
 * and a switch is a few register moves instead of a hand-over between OS threads. What an
 * OS thread would give a modelled thread that a fiber does not is its own thread-local
 * storage: the thread-locals of jobs/ (mc_jobs_tls.c lists them) are copied out of and
 * into each fiber's save area at every switch, so every modelled thread starts with them
 * zeroed and keeps its own. Sanitizers are told about every switch (AddressSanitizer's
 * fiber annotations, ThreadSanitizer's fibers), so both stay correct.
 *
 * Threads: one OS thread drives a set of fibers (the one that calls mc_fiber_init_main);
 * nothing here is thread-safe. */
#ifndef WEFT_TESTS_MC_FIBER_H
#define WEFT_TESTS_MC_FIBER_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes of thread-local state a fiber keeps of its own (mc_jobs_tls.c checks the sum). */
#define MC_FIBER_TLS_BYTES 1024

typedef struct mc_fiber {
    void *sp;          /* saved stack pointer while not running (registers on its stack) */
    char *stack;       /* lowest usable byte; NULL for the OS thread's own stack */
    size_t stack_size; /* usable bytes */
    void *tsan;        /* ThreadSanitizer's fiber, or NULL */
    struct mc_fiber *(*entry)(void);
    unsigned char tls[MC_FIBER_TLS_BYTES]; /* the thread-locals while not running */
} mc_fiber_t;

/* The calling OS thread's own context (its stack, its thread-locals), to switch back to. */
void mc_fiber_init_main(mc_fiber_t *f);

/* (Re)start `f` at `entry()` on its own stack, with zeroed thread-locals; it runs at the
 * next switch to it. When `entry` returns a fiber, `f` ends and that fiber resumes (an entry
 * may also leave with mc_fiber_exit). `f` must not be the running fiber; a fiber abandoned in
 * the middle of its run may be restarted. */
void mc_fiber_prepare(mc_fiber_t *f, mc_fiber_t *(*entry)(void));

/* Suspend the running fiber `from` and resume `to`; returns when something switches back. */
void mc_fiber_switch(mc_fiber_t *from, mc_fiber_t *to);

/* Leave the running fiber `from` for good (until prepared again) and resume `to`. */
_Noreturn void mc_fiber_exit(mc_fiber_t *from, mc_fiber_t *to);

/* The thread-locals of jobs/ (mc_jobs_tls.c): `n` areas, each at its address on the
 * calling OS thread. */
typedef struct mc_tls_area {
    void *p;
    size_t size;
} mc_tls_area_t;
int mc_jobs_tls_areas(mc_tls_area_t *out, int cap);

#endif /* WEFT_TESTS_MC_FIBER_H */
