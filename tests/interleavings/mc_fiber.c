/* mc_fiber.c: fibers for the interleaving checker (see mc_fiber.h).
 *
 * DESIGN: on x86-64 a switch is a hand-written swap of the callee-saved registers and the
 * stack pointer (plus the SSE and x87 control words, which a callee must also preserve);
 * elsewhere it is ucontext's swapcontext, slower (it saves the signal mask with a system
 * call) but portable. Stacks are mmap'd once per fiber with a guard page below, and reused
 * by every execution. Under AddressSanitizer each switch is announced
 * (__sanitizer_start/finish_switch_fiber), a reused stack is unpoisoned before it runs
 * again (an abandoned run leaves its frames' redzones behind), and the stacks are leak
 * roots (what an abandoned fiber still points to is not a leak). Under ThreadSanitizer
 * each fiber is one of its fibers, kept from run to run, and every switch synchronises, as
 * the checker's turn-taking does. */
#define _GNU_SOURCE 1

#include "mc_fiber.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MC_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define MC_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(MC_ASAN)
#define MC_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(MC_TSAN)
#define MC_TSAN 1
#endif

#ifdef MC_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#endif
#ifdef MC_TSAN
#include <sanitizer/tsan_interface.h>
/* no function entry/exit hooks either (clang keeps them under no_sanitize) */
#if defined(__has_attribute) && __has_attribute(disable_sanitizer_instrumentation)
#define MC_NO_TSAN __attribute__((disable_sanitizer_instrumentation))
#else
#define MC_NO_TSAN __attribute__((no_sanitize("thread")))
#endif
#else
#define MC_NO_TSAN
#endif

#if defined(__x86_64__) && !defined(MC_FIBER_UCONTEXT)
#define MC_FIBER_ASM 1
#else
#include <ucontext.h>
#endif

#define STACK_SIZE (256u * 1024u)

/* ---- the switch itself --------------------------------------------------------------- */

#ifdef MC_FIBER_ASM
/* mc_fiber_swap(save, sp): push the callee-saved state, store the stack pointer to *save,
 * load `sp`, pop the state saved there, return into that fiber. mc_fiber_boot: where a
 * fresh fiber's first swap returns to; it calls fiber_main on an aligned stack. */
void mc_fiber_swap(void **save, void *sp);
void mc_fiber_boot(void);
__asm__(".text\n"
        ".globl mc_fiber_swap\n"
        ".hidden mc_fiber_swap\n"
        ".type mc_fiber_swap,@function\n"
        "mc_fiber_swap:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  subq $8, %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  addq $8, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size mc_fiber_swap,.-mc_fiber_swap\n"
        ".globl mc_fiber_boot\n"
        ".hidden mc_fiber_boot\n"
        ".type mc_fiber_boot,@function\n"
        "mc_fiber_boot:\n"
        "  andq $-16, %rsp\n"
        "  call mc_fiber_main\n"
        "  ud2\n"
        ".size mc_fiber_boot,.-mc_fiber_boot\n");
#endif

/* The fiber being started: mc_fiber_main runs its entry. */
static mc_fiber_t *starting;
static mc_tls_area_t tls[8];
static int ntls = -1;

/* The bottom of every fiber. The entry returns before the final switch, so the frames a
 * sanitizer tracks per fiber (ThreadSanitizer's shadow call stack) are all closed when the
 * fiber ends; this function and the switch are not instrumented, so a fiber kept from one
 * execution to the next does not collect the frames of its ends. */
MC_NO_TSAN void mc_fiber_main(void);
MC_NO_TSAN void mc_fiber_main(void) {
#ifdef MC_ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
    mc_fiber_t *self = starting;
    mc_fiber_exit(self, self->entry());
}

#ifndef MC_FIBER_ASM
static void boot_ucontext(void) { mc_fiber_main(); }
#endif

/* ---- thread-locals ------------------------------------------------------------------- */

static void tls_find(void) {
    if (ntls >= 0) {
        return;
    }
    ntls = mc_jobs_tls_areas(tls, (int)(sizeof tls / sizeof tls[0]));
    size_t total = 0;
    for (int i = 0; i < ntls; ++i) {
        total += tls[i].size;
    }
    if (total > MC_FIBER_TLS_BYTES) {
        fprintf(stderr, "mc_fiber: jobs/ has %zu bytes of thread-locals, more than %d\n", total,
                MC_FIBER_TLS_BYTES);
        abort();
    }
}

static void tls_save(mc_fiber_t *f) {
    unsigned char *o = f->tls;
    for (int i = 0; i < ntls; ++i) {
        memcpy(o, tls[i].p, tls[i].size);
        o += tls[i].size;
    }
}

static void tls_load(const mc_fiber_t *f) {
    const unsigned char *o = f->tls;
    for (int i = 0; i < ntls; ++i) {
        memcpy(tls[i].p, o, tls[i].size);
        o += tls[i].size;
    }
}

/* ---- fibers -------------------------------------------------------------------------- */

void mc_fiber_init_main(mc_fiber_t *f) {
    memset(f, 0, sizeof *f);
    tls_find();
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        void *lo;
        size_t size;
        if (pthread_attr_getstack(&a, &lo, &size) == 0) {
            f->stack = lo;
            f->stack_size = size;
        }
        pthread_attr_destroy(&a);
    }
#ifdef MC_TSAN
    f->tsan = __tsan_get_current_fiber();
#endif
}

static void alloc_stack(mc_fiber_t *f) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *m =
        mmap(NULL, STACK_SIZE + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m, page, PROT_NONE) != 0) {
        perror("mc_fiber: stack");
        abort();
    }
    f->stack = m + page;
    f->stack_size = STACK_SIZE;
#ifdef MC_ASAN
    __lsan_register_root_region(f->stack, f->stack_size);
#endif
}

#ifndef MC_FIBER_ASM
static ucontext_t *uctx(mc_fiber_t *f) {
    /* the ucontext lives at the top of the fiber's own stack; the main fiber's in a static */
    static ucontext_t main_ctx;
    return f->stack && f->entry ? (ucontext_t *)(f->stack + f->stack_size) - 1 : &main_ctx;
}
#endif

void mc_fiber_prepare(mc_fiber_t *f, mc_fiber_t *(*entry)(void)) {
    tls_find();
    if (!f->stack) {
        alloc_stack(f);
    }
    f->entry = entry;
    memset(f->tls, 0, sizeof f->tls);
#ifdef MC_ASAN
    __asan_unpoison_memory_region(f->stack, f->stack_size);
#endif
#ifdef MC_TSAN
    if (!f->tsan) {
        f->tsan = __tsan_create_fiber(0); /* kept: creating one costs about 1 ms */
    }
#endif
#ifdef MC_FIBER_ASM
    /* the frame mc_fiber_swap pops: control words, r15..r12, rbx, rbp = 0 (the end of the
     * frame chain), and the address it returns to */
    uint64_t *sp = (uint64_t *)(f->stack + f->stack_size);
    *--sp = 0; /* alignment slot */
    *--sp = (uint64_t)(uintptr_t)mc_fiber_boot;
    for (int i = 0; i < 6; ++i) {
        *--sp = 0;
    }
    uint32_t ctl[2];
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(ctl[0]), "=m"(ctl[1]));
    *--sp = (uint64_t)ctl[0] | (uint64_t)(ctl[1] & 0xffffu) << 32;
    f->sp = sp;
#else
    ucontext_t *u = uctx(f);
    if (getcontext(u) != 0) {
        abort();
    }
    u->uc_stack.ss_sp = f->stack;
    u->uc_stack.ss_size = (size_t)((char *)u - f->stack) & ~(size_t)15;
    u->uc_link = NULL;
    makecontext(u, boot_ucontext, 0);
#endif
}

MC_NO_TSAN static void do_switch(mc_fiber_t *from, mc_fiber_t *to, bool exiting) {
#ifdef MC_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(exiting ? NULL : &fake, to->stack, to->stack_size);
#else
    (void)exiting;
#endif
    tls_save(from);
    tls_load(to);
    starting = to;
#ifdef MC_TSAN
    __tsan_switch_to_fiber(to->tsan, 0);
#endif
#ifdef MC_FIBER_ASM
    mc_fiber_swap(&from->sp, to->sp);
#else
    if (swapcontext(uctx(from), uctx(to)) != 0) {
        abort();
    }
#endif
#ifdef MC_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

void mc_fiber_switch(mc_fiber_t *from, mc_fiber_t *to) { do_switch(from, to, false); }

MC_NO_TSAN _Noreturn void mc_fiber_exit(mc_fiber_t *from, mc_fiber_t *to) {
    do_switch(from, to, true);
    abort(); /* nothing resumes an exited fiber */
}
