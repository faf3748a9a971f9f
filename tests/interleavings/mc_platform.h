/* mc_platform.h: the checker's side of jobs/platform/thread.h (mc_platform.c) and the
 * allocator scenarios hand to the job system, which tells the checker about freed memory. */
#ifndef WEFT_TESTS_MC_PLATFORM_H
#define WEFT_TESTS_MC_PLATFORM_H

#include <stddef.h>

#include "weft/base.h"

void mc_mutex_init(void *m);
void mc_mutex_lock(void *m);
void mc_mutex_unlock(void *m);
void mc_cond_wait(void *c, void *m);
void mc_cond_signal(void *c);
void mc_cond_broadcast(void *c);

/* An allocator that tells the checker: freed memory is retired (any atomic access to it
 * fails the execution). Its memory comes from an arena that mc_arena_reset() empties
 * (mc.c, before each execution) and never hands out twice in between, so the same
 * choices give the same addresses. */
extern const weft_allocator_t mc_allocator;
void mc_arena_reset(void);

#endif /* WEFT_TESTS_MC_PLATFORM_H */
