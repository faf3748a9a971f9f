/* test_join_cache.c: the query join cache's protocol (src/core/join_cache.c) under the
 * checker. Two iterators of one query open the cache for the same key and go for the same
 * window: one claims and fills it, the other reads it once ready or probes for itself. Then
 * the world "changes" (a new layout count) and two more iterators open it again: the window
 * must be stale for the new key until refilled, and a ready window must hold the new rows. */
#include "../../src/core/join_cache.h"

#include "mc.h"
#include "mc_platform.h"
#include "mc_test.h"

typedef struct jc {
    weft_atomic_ptr slot;
    weft__join_key_t key;
    uint32_t value; /* the rows this key's window must hold */
} jc_t;

static jc_t jc_state;

/* One iterator's visit of window 0. */
static void jc_iterator(void *p) {
    jc_t *s = p;
    weft__join_cache_t *cache = NULL;
    uint64_t epoch = weft__join_cache_open(&mc_allocator, &s->slot, &s->key, &cache);
    if (epoch == 0) {
        return; /* busy or out of memory: it probes without the cache */
    }
    uint32_t *rows = weft__join_window_rows(cache, 0, 0);
    if (weft__join_window_ready(cache, 0, epoch)) {
        mc_plain_read(rows, "window rows");
        mc_check(rows[0] == s->value, "a ready window holds its key's rows");
    } else if (weft__join_window_claim(cache, 0, epoch)) {
        rows[0] = s->value;
        mc_plain_write(rows, "window rows");
        weft__join_window_publish(cache, 0, epoch);
    }
}

static void jc_round(jc_t *s) {
    int a = mc_thread_start(jc_iterator, s);
    int b = mc_thread_start(jc_iterator, s);
    mc_thread_join(a);
    mc_thread_join(b);
}

static void jc_main(void *arg) {
    (void)arg;
    jc_t *s = &jc_state;
    weft_atomic_init(&s->slot, NULL);
    s->key = (weft__join_key_t){
        .drive = &jc_state, .includes = 1, .windows = 1, .count = 1, .layout = {7}};
    s->value = 42;
    jc_round(s);
    /* A structural change between frames: no iterator runs, the layout count moves on. */
    s->key.layout[0] = 8;
    s->value = 43;
    jc_round(s);
    weft__join_cache_free(&mc_allocator, &s->slot);
}

static mc_result_t jc_run(const char *name, const char *weaken, const char *plant) {
    return mc_test_run(name, jc_main, NULL, 2, weaken, plant);
}

Test(join_cache, two_iterators_fill_and_read_a_window_across_a_rekey) {
    mc_result_t r = jc_run("join cache: fill, read, re-key", NULL, NULL);
    mc_assert_clean(r);
    cr_assert_gt(r.executions, 10u);
}

Test(join_cache, a_relaxed_publish_is_caught) {
    mc_result_t r =
        jc_run("join cache: relaxed publish", "weft__join_window_publish:store_release", NULL);
    mc_assert_caught(r, "a window read before its rows were written");
}

Test(join_cache, a_relaxed_window_check_is_caught) {
    mc_result_t r =
        jc_run("join cache: relaxed ready", "weft__join_window_ready:load_acquire", NULL);
    mc_assert_caught(r, "a window read without its publication");
}

Test(join_cache, a_rekey_that_keeps_the_epoch_is_caught) {
    mc_result_t r = jc_run("join cache: epoch kept", NULL, "join_cache_epoch_kept");
    cr_assert(r.failed, "the checker missed a window of the old key read as the new one's");
    cr_assert(strstr(r.message, "holds its key's rows") != NULL, "%s", r.message);
}
