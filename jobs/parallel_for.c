/* parallel_for.c: weft_parallel_for — split [0, count) into grain-sized chunks and run
 * them on the caller and on whichever workers join in.
 *
 * DESIGN: no job per chunk. The caller describes the loop in a slot of its own context
 * (`weft__pfor_t`, one per nesting level, jobs_impl.h) and hands out the chunks through an
 * atomic cursor that counts the claim units not yet claimed; a claim takes the top units of
 * what is left, so the batch that reaches unit 0 is the last. A participant claims a batch
 * with one CAS — half of a 1/workers share of what is left, at least one ("factoring",
 * Hummel, Schonberg and Flynn 1992): a dozen claims per loop instead of one per chunk, which
 * dominated small loops, and single chunks at the tail, so the threads finish within about a
 * chunk of each other. Half a share, not a whole one (OpenMP's guided schedule): the caller
 * starts first, and a whole share would commit half the loop to it before a sleeping worker
 * wakes up; with half, a late helper still gets its part. The caller's first batch (the top
 * units, with the loop's last, possibly short, chunk) is reserved by publishing the cursor
 * below it, so the caller starts on its chunks without a claim. A joiner's first claim, on
 * the other hand, takes a whole share rounded up: the caller is already running when it
 * arrives, and each claim saved is a round trip of the cursor's line (participate()).
 *
 * How other workers learn of the loop — three paths, because a fork-join between cores that
 * are awake is bounded by cache-line transfers, and every transfer counts:
 * - The offer (`ctx->offer`, one line per worker, jobs_impl.h): a worker's outermost loop
 *   reserves the next whole share below its first batch, rounded up, and describes it on
 *   its offer line with the loop's body, context, count and grain. Idle workers (and
 *   workers between two jobs, or waiting on a counter) poll the other workers' offer words
 *   first; one CAS on the word they have just read takes the share, and everything they need
 *   to run it is on that line. Measured on a 2-vCPU EPYC VM, a CAS right after the read that
 *   brought the line over adds about 10 ns, a CAS on a second line the caller wrote about
 *   140 ns (the line is fetched again): noticing the loop and claiming its first share are
 *   one transfer, where a claim on the slot's line after the board's was a second. The taker touches the slot only when it
 *   counts the share off. The caller takes the offer back with the same CAS after its
 *   first batch if nobody took it (no worker is polling, and one that comes later would
 *   find the share too big for what is left) and runs the share as its next batch.
 * - The loop board (`jobs->board`, one line): the caller writes its slot and generation
 *   there, after the offer, so a worker that sees the board word sees the offer too. Idle
 *   workers look at it after the offers and claim straight from the slot: one line to
 *   notice, one claim. It reaches the workers the offer does not (all but its taker, any
 *   worker once the offer was taken back, and the loops that make none: nested ones, whose
 *   fields could not stay put on the one offer line, and registered callers'). No job
 *   record, no deque, no store-load fence on the caller's path.
 * - A helper job, for workers that are asleep: published at once when the caller sees a
 *   sleeper (a relaxed peek at `sleepers`), otherwise after the caller's first batch, within
 *   the helper budget: an offer and board joiners count against it (a taken-back offer gives
 *   its unit back), so with 2 workers a joined loop publishes none, and with more the job
 *   reaches the workers the board did not (the board moved on to a newer loop, a worker fell
 *   asleep, or was busy). The job submission is a full publication (sleep.c), so no wake-up is lost either way; a stale peek only delays the helper by
 *   one batch. A helper (or a board joiner) that claimed something publishes one more
 *   helper if chunks remain and the budget (workers - 1) allows: helpers fan out one
 *   wake-up at a time, only as far as there is work.
 *
 * Completion counts chunks, not helpers: the slot's count `left` holds the claim units
 * not yet run, and the caller returns when it reaches zero. A helper that starts after the
 * last claim (or after the loop returned) touches nothing but the slot's atomics, which
 * live as long as the job system: the cursor carries the loop's generation in its high
 * 32 bits, so a late helper's claim fails and it leaves. So the caller never waits for a
 * worker that had nothing to do, and a loop the caller finishes alone costs a few stores, a
 * claim or two and, when it published a helper no worker stole, taking it back from its own
 * deque.
 *
 * Cache lines on the critical path of a fork-join between awake cores: the taker sees the
 * offer and takes it (1: the caller's store pulls the line away from the poller, whose next
 * read brings it back; about one `handoff_one_way` of bench/bench_jobs.c); at the end the
 * last participant counts its batch off (2: one line fetched for writing) and the caller,
 * which spins on `left`, sees it (3: fetched back). Board joiners and helpers add their
 * first claim, on the slot's line, as a transfer. Everything else a claimant touches — the
 * cursor, `left`, the helper budget and the loop's description — shares the slot's first
 * line (jobs_impl.h), so none of it adds a transfer: a participant counts each batch off
 * right after running it and, unless that was the loop's last count-off or its batch reached
 * unit 0, claims the next on the line it now holds; no claim that is bound to fail follows
 * the last batch. The caller's own claims stay on its line while the taker runs (the taker
 * does not touch the slot before its count-off); its one read of the taker's CAS, after its
 * first batch, is off the critical path.
 *
 * Why the plain fields are safe: the caller writes them before its release store of the
 * cursor; a claimant reads them only after a successful claim (acquire), and until it
 * counts that batch off `left` the loop cannot finish, so the caller cannot start the next
 * loop in that slot and rewrite them. Unclaimed units are counted in `left` too, so a claim
 * that succeeds after our count-off still finds the loop alive; a count-off can end the loop,
 * so after it only the cursor is read until the next claim succeeds. The offer's fields
 * likewise: written before the release store that opens it, read only by the taker whose
 * CAS on that word succeeded, and rewritten only by the owner's next outermost loop, which
 * starts after the taker counted the share off.
 *
 * Chunk k is [k * grain, min((k + 1) * grain, count)), so boundaries depend only on count
 * and grain. grain 0 picks count / (16 * workers) (at least 1). A claim unit is one chunk,
 * or 2^k consecutive ones when a loop has more than 2^32 - 1 chunks (the cursor's low
 * half counts units); only the caller's first batch holds the short last unit. Nested calls from inside jobs work the same way with the next slot (the
 * waiting thread runs other jobs, so nothing can deadlock); beyond WEFT__PFOR_SLOTS levels
 * the loop runs on the calling worker alone.
 *
 * Registered (non-worker) callers take part in their own loop like a worker caller, with
 * worker index UINT32_MAX (they have no worker slot, scratch or stats), and publish the
 * first helper at once (through the injection queue): the workers may all be busy or, with
 * one worker, the only worker may be a creating thread that is not running jobs at all, so
 * the caller must be able to finish the loop alone. A registered thread runs no jobs, so
 * it only ever runs ranges of loops it started (and of loops its ranges nest).
 *
 * Lock order: none taken here (submission and waiting take their own, see submit.c). */
#include "jobs_impl.h"

/* Who is taking part in a loop: its caller, a helper job, a worker that joined from the loop
 * board, or one that took the caller's offer. */
typedef enum role { ROLE_CALLER, ROLE_HELPER, ROLE_BOARD, ROLE_OFFER } role_t;

/* What a participant needs of a loop to run its chunks, copied once it holds a claim: from the
 * caller's arguments, the slot (after a claim) or the offer line (after taking it). */
typedef struct loop {
    weft_range_fn_t fn;
    void *ctx;
    uint64_t count, grain;
    uint32_t shift; /* a claim unit is 1 << shift chunks */
    uint64_t tag;   /* range-trace tag (0: untraced) */
} loop_t;

/* The slot's trace tag, read only when tracing (it is on the slot's second line). */
static uint64_t slot_tag(const weft_jobs_t *jobs, const weft__pfor_t *pf) {
    return jobs->range_trace.loop_begin ? pf->trace_tag : 0u;
}

/* Range c of a traced loop, timed for the range trace. */
static void run_traced(weft__ctx_t *ctx, const loop_t *lp, uint64_t c, uint64_t begin,
                       uint64_t stop) {
    const weft_range_trace_t *rt = &ctx->jobs->range_trace;
    uint64_t t0 = weft__time_ns();
    lp->fn(lp->ctx, begin, stop, ctx->index);
    rt->range(rt->user, lp->tag, c, ctx->index, t0, weft__time_ns());
}

/* Claim the next batch of units of loop `gen` from the top of what is left; returns how many
 * (0: none left, or the slot has moved on to a newer loop) and the first in *first. A batch
 * is `left / divisor` units, at least one, or with `whole` a whole share rounded up
 * (`ceil(left / divisor)`). `remote`: the cursor line is probably in another core's cache (a
 * board joiner's first claim); read it with an RMW, which fetches it for writing in one
 * transfer instead of a read and then an upgrade. */
static uint32_t claim(weft__pfor_t *pf, uint32_t gen, uint32_t divisor, bool whole, uint32_t *first,
                      bool remote) {
    /* acquire pairs with the caller's release store of the cursor (continued by every
     * claim's RMW): the fields of loop `gen` are visible */
    uint64_t cur = remote ? weft_atomic_fetch_add_acq_rel(&pf->cursor, 0u)
                          : weft_atomic_load_acquire(&pf->cursor);
    for (;;) {
        uint32_t left = (uint32_t)cur;
        if ((uint32_t)(cur >> 32) != gen || left == 0) {
            return 0;
        }
        uint32_t take = left / divisor + (whole && left % divisor != 0);
        take = take ? take : 1u;
        /* acq_rel: acquire as above; release keeps the release sequence going */
        if (weft_atomic_cas_weak_acq_rel(&pf->cursor, &cur, cur - take)) {
            *first = left - take;
            return take;
        }
    }
}

/* Run chunks [c, end) of loop `lp`: the caller of this function holds a claim on them. */
static void run_chunks(weft__ctx_t *ctx, const loop_t *lp, uint64_t c, uint64_t end) {
    weft__tally(&ctx->ranges_run, end - c);
    for (; c < end; ++c) {
        uint64_t begin = c * lp->grain;
        uint64_t stop = lp->count - begin > lp->grain ? begin + lp->grain : lp->count;
        if (lp->tag) {
            run_traced(ctx, lp, c, begin, stop);
        } else {
            lp->fn(lp->ctx, begin, stop, ctx->index);
        }
    }
}

/* Take one unit of the helper budget; false when it is spent. */
static bool take_budget(weft__pfor_t *pf) {
    uint32_t b = weft_atomic_load_relaxed(&pf->helpers);
    /* relaxed: the budget only bounds how many helper jobs are published */
    while (b != 0 && !weft_atomic_cas_weak_relaxed(&pf->helpers, &b, b - 1u)) {
    }
    return b != 0;
}

/* Publish one more helper if work is left for it and the budget allows. Called while
 * holding a claim, so the slot still holds our loop. */
static void spawn_helper(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__pfor_t *pf, uint32_t gen) {
    if ((uint32_t)weft_atomic_load_relaxed(&pf->cursor) <= 1u) {
        return; /* at most one unit left: whoever is here will take it */
    }
    if (!take_budget(pf)) {
        return;
    }
    /* A failure (out of memory, shutdown) only means fewer helpers: the units that are
     * left are claimed by the threads already taking part. */
    (void)weft__submit_internal(jobs, ctx, weft__pfor_helper, pf, gen, "parallel_for");
}

/* Claim, run and count off batches until none are left; true if it ran any. Each batch is
 * counted off `left` as soon as it has run, before the next claim, on the same line: the
 * count-off fetches the line and the claim finds it there. A count-off that brings `left` to
 * zero ends the loop (nothing can be left to claim), and a batch that reached unit 0 was the
 * last one, so in neither case does it make a claim that is bound to fail: that claim is a
 * cache miss on the cursor, and this thread is usually the one the loop's caller is waiting
 * for. After a count-off the loop may have finished, so only the cursor is touched until
 * the next claim succeeds.
 *
 * A joiner's (board or helper) first claim takes a whole 1/workers share of what is left,
 * rounded up; every later claim half of one (factoring, see the top of the file). The caller
 * is already running its first batch when a joiner arrives, so the joiner's fair part of the
 * rest is at least a whole share, and each claim it does not need to make saves the line's
 * transfer there and back. */
static bool participate(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__pfor_t *pf, uint32_t gen,
                        role_t role, loop_t *lp, uint32_t first, uint32_t n) {
    uint32_t workers = jobs->worker_count;
    if (n == 0) { /* no batch in hand (a caller's or taker's is): claim one */
        n = role == ROLE_CALLER ? claim(pf, gen, 2u * workers, false, &first, false)
                                : claim(pf, gen, workers, true, &first, role == ROLE_BOARD);
        if (n == 0) {
            return false;
        }
        if (role != ROLE_CALLER) {
            /* the claim acquired the loop, whose fields cannot change before we count it off */
            *lp =
                (loop_t){pf->fn, pf->ctx, pf->count, pf->grain, pf->unit_shift, slot_tag(jobs, pf)};
        }
    }
    if (role == ROLE_BOARD) {
        (void)take_budget(pf); /* counted as a helper, so the caller does not publish one */
    }
    if (role == ROLE_BOARD || role == ROLE_HELPER) {
        spawn_helper(jobs, ctx, pf, gen);
    }
    uint32_t shift = lp->shift;
    do {
        if (WEFT__PLANT("pfor_count_off_before_run")) {
            /* the interleaving checker's plant: the batch counted off before it has run */
            bool done = weft__counter_finish_n(jobs, ctx, &pf->left, n);
            run_chunks(ctx, lp, (uint64_t)first << shift, (uint64_t)(first + n) << shift);
            if (done || first == 0) {
                return true;
            }
            continue;
        }
        /* never the loop's top unit (the caller's first batch), so every unit is whole */
        run_chunks(ctx, lp, (uint64_t)first << shift, (uint64_t)(first + n) << shift);
        if (weft__counter_finish_n(jobs, ctx, &pf->left, n) || first == 0) {
            return true;
        }
    } while ((n = claim(pf, gen, 2u * workers, false, &first, false)) != 0);
    return true;
}

/* The board word of slot `pf` at generation `gen` (jobs_impl.h). */
static uint64_t board_word(const weft_jobs_t *jobs, const weft__ctx_t *owner,
                           const weft__pfor_t *pf, uint32_t gen) {
    uint64_t slot = (uint64_t)(owner - jobs->ctx) * WEFT__PFOR_SLOTS + (uint64_t)(pf - owner->pfor);
    return (uint64_t)gen << 32 | (slot + 1u);
}

bool weft__pfor_join_board(weft_jobs_t *jobs, weft__ctx_t *ctx) {
    uint64_t word = weft_atomic_load_relaxed(&jobs->board);
    if (word == ctx->board_seen) {
        return false;
    }
    ctx->board_seen = word;
    if ((uint32_t)word == 0) {
        return false; /* no loop yet: a taker marked its offer's loop seen before the board */
    }
    uint64_t slot = (uint32_t)word - 1u;
    weft__pfor_t *pf = &jobs->ctx[slot / WEFT__PFOR_SLOTS].pfor[slot % WEFT__PFOR_SLOTS];
    /* claim() checks the generation against the cursor it acquires, so a loop that has
     * finished (or a newer one in the slot) yields nothing, as for a late helper */
    loop_t lp;
    return participate(jobs, ctx, pf, (uint32_t)(word >> 32), ROLE_BOARD, &lp, 0, 0);
}

bool weft__pfor_take_offer(weft_jobs_t *jobs, weft__ctx_t *ctx) {
    for (uint32_t w = 0; w < jobs->worker_count; ++w) {
        weft__ctx_t *owner = &jobs->ctx[w];
        weft__offer_t *o = &owner->offer;
        uint64_t word = weft_atomic_load_relaxed(&o->word);
        if (w == ctx->index || (uint32_t)word != WEFT__OFFER_OPEN) {
            continue;
        }
        /* acq_rel: acquire pairs with the owner's release store of the open word (the fields
         * and everything the owner wrote before the loop are visible); the CAS is on the line
         * the load above just fetched, so it costs no further transfer. A failure means
         * another worker took it or its owner took it back. */
        if (weft_atomic_cas_strong_acq_rel(&o->word, &word,
                                           (word & ~UINT64_C(0xffffffff)) | WEFT__OFFER_TAKEN)) {
            /* Ours now: the loop cannot finish before we count the share off, and only the
             * owner's next outermost loop rewrites the fields, so they are stable. */
            uint32_t gen = (uint32_t)(word >> 32);
            weft__pfor_t *pf = &owner->pfor[0]; /* offers come from outermost loops only */
            loop_t lp = {o->fn, o->ctx, o->count, o->grain, o->unit_shift, slot_tag(jobs, pf)};
            uint32_t first = o->first, n = o->n;
            /* the loop is on the board too: no need to join it there again */
            ctx->board_seen = board_word(jobs, owner, pf, gen);
            if (o->budget != 0) {
                spawn_helper(jobs, ctx, pf, gen); /* more workers to reach: fan out */
            }
            (void)participate(jobs, ctx, pf, gen, ROLE_OFFER, &lp, first, n);
            return true;
        }
    }
    return false;
}

bool weft_jobs_help_loop(weft_jobs_t *jobs, uint32_t worker) {
    if (!jobs || worker >= jobs->worker_count) {
        return false;
    }
    weft__ctx_t *ctx = &jobs->ctx[worker];
    /* The board only, not the offers: one load per call whatever the worker count (polling
     * the offers reads one line per worker), and every loop is on the board, offered or
     * not; an offered share stays with its caller or a taker. */
    return weft__board_changed(jobs, ctx) && weft__pfor_join_board(jobs, ctx);
}

/* The helper job: arg is the slot, the tag the loop's generation. */
void weft__pfor_helper(void *arg, const weft_job_ctx_t *jctx) {
    weft__pfor_t *pf = arg;
    weft_jobs_t *jobs = jctx->jobs;
    weft__ctx_t *ctx = &jobs->ctx[jctx->worker];
    loop_t lp;
    if (!participate(jobs, ctx, pf, jctx->tag, ROLE_HELPER, &lp, 0, 0) && ctx->frames &&
        !ctx->frames->prev) {
        /* A top-level helper that came too late: its worker need not poll eagerly for the
         * next one (worker_main, sleep.c). Nested in another job, the outer job counts. */
        ctx->idle_job = true;
    }
}

/* After the caller's own claims: take its helper back if no worker stole it (it would find
 * nothing to do). The record is ours once take() returns it, so reading it is safe; a
 * different job on top of the deque (one the body submitted) is run instead. */
static void reclaim_helper(weft_jobs_t *jobs, weft__ctx_t *me, const weft__pfor_t *pf,
                           uint32_t gen) {
    weft__deque_t *dq = &me->dq[WEFT_PRIORITY_NORMAL];
    weft__rec_t *job = weft__deque_owner_empty(dq) ? NULL : weft__deque_take(dq);
    if (!job) {
        return;
    }
    if (job->fn == weft__pfor_helper && job->arg == (const void *)pf && job->u.tag == gen) {
        weft__discard_job(me, job);
    } else {
        weft__run_job(jobs, me, job);
    }
}

/* a / b rounded up; b > 0. */
static inline uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* Offer units [first, first + n) of the caller's outermost loop `gen` on its offer line. */
static void post_offer(weft__ctx_t *me, const loop_t *lp, uint32_t gen, uint32_t first, uint32_t n,
                       uint32_t budget) {
    weft__offer_t *o = &me->offer;
    /* The previous offer is closed or taken, and its loop has finished: no taker reads the
     * fields any more (a taker reads them only after its CAS succeeds, before it counts the
     * share off, and the loop waited for that). */
    o->fn = lp->fn;
    o->ctx = lp->ctx;
    o->count = lp->count;
    o->grain = lp->grain;
    o->unit_shift = lp->shift;
    o->first = first;
    o->n = n;
    o->budget = budget;
    /* release pairs with the taker's CAS: the fields, the slot and the loop's inputs */
    weft_atomic_store_release(&o->word, (uint64_t)gen << 32 | WEFT__OFFER_OPEN);
}

/* After the first batch: close the offer of loop `gen` if it is still open; true when it was
 * (its share is the caller's to run), false when a worker took it. */
static bool take_back(weft__ctx_t *me, weft__pfor_t *pf, uint32_t gen) {
    uint64_t open = (uint64_t)gen << 32 | WEFT__OFFER_OPEN;
    /* The CAS decides between us and a taker; nothing is read through it. */
    if (!weft_atomic_cas_strong_acq_rel(&me->offer.word, &open,
                                        (uint64_t)gen << 32 | WEFT__OFFER_CLOSED)) {
        return false;
    }
    /* the taker's helper unit is back (relaxed, as take_budget) */
    weft_atomic_fetch_add_relaxed(&pf->helpers, 1u);
    return true;
}

/* Everything on the calling thread, in order (inline mode, one worker, one chunk, or
 * nested too deep); a registered caller's ranges see worker UINT32_MAX. */
static void run_serial(weft__ctx_t *me, weft_range_fn_t fn, void *ctx, uint64_t count,
                       uint64_t grain, uint64_t tag) {
    uint32_t worker = me->index;
    weft__tally(&me->ranges_run, ceil_div(count, grain));
    loop_t lp = {fn, ctx, count, grain, 0, tag};
    for (uint64_t begin = 0; begin < count; begin += grain) {
        uint64_t end = count - begin > grain ? begin + grain : count;
        if (tag) {
            run_traced(me, &lp, begin / grain, begin, end);
        } else {
            fn(ctx, begin, end, worker);
        }
    }
}

weft_result_t weft_parallel_for(weft_jobs_t *jobs, uint64_t count, uint64_t grain,
                                weft_range_fn_t fn, void *ctx) {
    WEFT__CONTRACT(jobs != NULL, NULL, WEFT_EINVAL, "weft_parallel_for: jobs is NULL");
    const weft_logger_t *log = &jobs->desc.logger;
    WEFT__CONTRACT(fn != NULL, log, WEFT_EINVAL, "weft_parallel_for: fn is NULL");
    weft__ctx_t *me = weft__ctx_current(jobs);
    WEFT__CONTRACT(me != NULL, log, WEFT_EINVAL,
                   "weft_parallel_for: the calling thread is neither a worker nor registered "
                   "(weft_jobs_register_thread)");
    uint32_t workers = jobs->worker_count;
    if (grain == 0) {
        uint64_t target = (uint64_t)workers * 16u;
        grain = ceil_div(count, target);
        grain = grain ? grain : 1u;
    }
    if (!me->is_worker) {
        weft__external_enter(jobs); /* destroy waits while we are inside */
        me->pfor_calls += 1;        /* its ranges may not unregister the thread */
    }
    weft_result_t r = weft__check_phase(jobs, me, "weft_parallel_for");
    uint64_t nchunks = ceil_div(count, grain);
    if (r != WEFT_OK || count == 0) {
        goto out;
    }
    const weft_range_trace_t *rt = &jobs->range_trace;
    uint64_t tag = rt->loop_begin ? rt->loop_begin(rt->user, me->index) : 0u;
    if (jobs->is_inline || workers == 1 || nchunks == 1 || me->pfor_depth >= WEFT__PFOR_SLOTS) {
        run_serial(me, fn, ctx, count, grain, tag);
        goto out;
    }
    weft__pfor_t *pf = &me->pfor[me->pfor_depth++];
    uint32_t gen = ++pf->gen;
    /* A claim unit is 1 << shift chunks, so that the units fit the cursor's low half. */
    uint32_t shift = 0;
    while (ceil_div(nchunks, UINT64_C(1) << shift) > UINT32_MAX) {
        shift += 1;
    }
    /* the usual case, shift 0, needs no run-time division */
    uint32_t units = (uint32_t)(shift == 0 ? nchunks : ceil_div(nchunks, UINT64_C(1) << shift));
    pf->fn = fn;
    pf->ctx = ctx;
    pf->count = count;
    pf->grain = grain;
    pf->unit_shift = shift;
    pf->trace_tag = tag;
    uint32_t budget = me->is_worker ? workers - 1u : workers;
    /* A helper job now only if some worker sleeps (it must be woken; a relaxed peek, a
     * stale zero is caught by the check after the first batch) or the caller is a
     * registered thread (its loop is not on any worker's way between jobs). Spinning
     * workers see the offer or the board; a busy one sees them when its job ends. */
    bool pushed = !me->is_worker || weft_atomic_load_relaxed(&jobs->sleep.sleepers) != 0;
    budget = budget < units ? budget : units;
    budget -= pushed ? 1u : 0u;
    /* The caller's first batch, the top units, is claimed by publishing the cursor below
     * it: no claim on a line an idle worker may have been reading. */
    uint32_t take0 = units / (2u * workers);
    take0 = take0 ? take0 : 1u;
    /* The offer: a worker's outermost loop hands the next whole share, below its first
     * batch, to the first idle worker that takes it; the cursor starts below the share.
     * Deeper loops do not offer (the line holds one offer, and its fields must stay put
     * while the outer loop's share runs), nor does a loop with no budget left for a helper
     * (a sleeper was seen and gets the job) or one the first batch covers. */
    loop_t lp = {fn, ctx, count, grain, shift, tag};
    bool offered = me->is_worker && me->pfor_depth == 1u && budget != 0 && take0 < units;
    uint32_t share = offered ? (uint32_t)ceil_div(units - take0, workers) : 0u;
    uint32_t below = units - take0 - share; /* units left to claim from the cursor */
    budget -= offered ? 1u : 0u;
    weft_atomic_store_relaxed(&pf->helpers, budget);
    /* `left` is zero and unreferenced here: the previous loop in this slot waited for it,
     * and late helpers never touch it. Every claimant acquires the cursor stored below, so
     * its subtraction comes after this. */
    weft__counter_set(&pf->left, units);
    /* release pairs with claim()'s acquire: the fields above are visible to claimants */
    weft_atomic_store_release(&pf->cursor, (uint64_t)gen << 32 | below);
    if (offered) {
        post_offer(me, &lp, gen, below, share, budget);
    }
    /* After the offer: a worker that sees the board word sees the offer too. The board
     * reaches the workers the offer does not: all but its taker, and any worker once the
     * offer has been taken back. */
    weft_atomic_store_relaxed(&jobs->board, board_word(jobs, me, pf, gen));
    if (pushed) {
        /* A failure only means no helper: the caller runs every chunk itself. */
        (void)weft__submit_internal(jobs, me, weft__pfor_helper, pf, gen, "parallel_for");
    }
    /* the top batch holds the loop's last chunk, which may be short of a whole unit */
    run_chunks(me, &lp, (uint64_t)(units - take0) << shift, nchunks);
    /* An offer nobody took within the first batch is taken back: no worker is polling, and
     * one arriving later would find the share too big for what is left. The owner runs it
     * as its next batch, and its helper budget pays for a job instead. */
    bool mine = offered && take_back(me, pf, gen);
    if (!pushed) {
        /* After the first batch: a helper job for the workers the board did not reach, if
         * the budget (which board joiners count against) allows. The submission is a full
         * publication, so a sleeper is woken. */
        spawn_helper(jobs, me, pf, gen);
    }
    if (!weft__counter_finish_n(jobs, me, &pf->left, take0) && take0 < units) {
        (void)participate(jobs, me, pf, gen, ROLE_CALLER, &lp, mine ? below : 0u,
                          mine ? share : 0u);
    }
    if (me->is_worker) {
        reclaim_helper(jobs, me, pf, gen); /* a registered caller's helper is in the queue */
    }
    /* Every unit is claimed now; the rest are running on workers that claimed them. */
    weft__counter_wait_loop(jobs, me, &pf->left);
    me->pfor_depth -= 1;
out:
    if (!me->is_worker) {
        me->pfor_calls -= 1;
        weft__external_leave(jobs);
    }
    return r;
}

weft_result_t weft_jobs_set_range_trace(weft_jobs_t *jobs, const weft_range_trace_t *trace) {
    WEFT__CONTRACT(jobs != NULL, NULL, WEFT_EINVAL, "weft_jobs_set_range_trace: jobs is NULL");
    jobs->range_trace =
        trace && trace->loop_begin && trace->range ? *trace : (weft_range_trace_t){0};
    return WEFT_OK;
}
