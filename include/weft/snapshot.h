/* weft/snapshot.h: in-memory snapshots of a whole world — capture now, restore later
 * (rollback, pipelining, tests).
 *
 * A snapshot holds a copy of the entity table (generations, liveness, the free list) and of
 * every component pool's rows (entity column and data, in row order), plus each group's
 * aligned-row count. Restoring puts exactly that back, so weft_world_hash() after a restore
 * equals the hash at capture. Captures reuse the snapshot's memory, so capturing every frame
 * allocates only when the world has grown.
 *
 * Resources (weft/resource.h) are captured and restored with their values.
 *
 * Rules: restore needs the same groups as at capture (WEFT_ESTATE otherwise); components
 * registered after the capture are emptied by a restore (their registration stays), and
 * resources registered after it keep their value. Hooks do
 * not fire on restore: it is a rewind, not a sequence of adds and removes. Hierarchy nodes
 * (weft/hierarchy.h) are captured with their order, local transforms, links and world
 * matrices, and restored exactly (the hierarchy's statistics and level grouping restart).
 *
 * Thread: main thread, between frames (never inside weft_world_progress); a world with a
 * registered, running schedule may be captured and restored between any two frames. */
#ifndef WEFT_SNAPSHOT_H
#define WEFT_SNAPSHOT_H

#include "weft/base.h"
#include "weft/world.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_snapshot weft_snapshot_t; /* opaque */

/* Create an empty snapshot bound to `world`; its memory comes from the world's allocator, so
 * destroy it before the world. Errors: WEFT_EINVAL, WEFT_ENOMEM. Thread: main. */
WEFT_API weft_result_t weft_snapshot_create(weft_world_t *world, weft_snapshot_t **out);

/* Free the snapshot. NULL is ignored. Thread: main. */
WEFT_API void weft_snapshot_destroy(weft_snapshot_t *snap);

/* Copy the world's current state into `snap`, replacing what it held. The world is not
 * changed. Errors: WEFT_EINVAL (snap of another world), WEFT_ENOMEM (snap keeps its previous
 * contents). Thread: main, between frames. */
WEFT_API weft_result_t weft_snapshot_capture(weft_world_t *world, weft_snapshot_t *snap);

/* Put the state held by `snap` back into the world. All-or-nothing: on error the world is
 * unchanged. Cost: copies of the captured arrays; pools whose entity column did not change
 * since the capture copy only their data. Errors: WEFT_EINVAL (another world's snapshot),
 * WEFT_ESTATE (nothing captured yet, groups changed since), WEFT_ENOMEM.
 * Thread: main, between frames. */
WEFT_API weft_result_t weft_snapshot_restore(weft_world_t *world, const weft_snapshot_t *snap);

/* Bytes of captured state the snapshot holds (0 before the first capture). */
WEFT_API size_t weft_snapshot_size(const weft_snapshot_t *snap);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_SNAPSHOT_H */
