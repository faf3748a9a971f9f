/* query_view.h: queries over module-owned components through their row views (private to
 * the build; the view is weft_module_view_t, weft/module.h).
 *
 * DESIGN
 * A module-owned component keeps its data in the module's store (the hierarchy's ordered
 * rows), not in its pool. When the module offers a row view, a query may name it as a term:
 * the planner treats the view like a pool (its rows may drive, or each entity is looked up in
 * its entity -> row table), and the iterator hands out batches whose columns point into the
 * module's arrays. Such a query (one with a view term) takes its own iteration path, here:
 * every batch is a resolved block of up to WEFT__ITER_BLOCK driving rows (a column where a
 * term's rows run in step), holes of the driving view skipped when the view says it may have
 * some. Queries without view terms never reach this file and pay one bit test per batch.
 * A write term on a view hands out writable rows exactly as get_mut does: each row handed
 * out gets the view's mark bits (for the hierarchy's `local`: the node changed). */
#ifndef WEFT_SRC_QUERY_VIEW_H
#define WEFT_SRC_QUERY_VIEW_H

#include "query.h"
#include "weft/module.h"

struct weft_world;
struct weft__component;

/* The row view of `comp` into *out: false (out untouched) when comp is no module-owned
 * component or its module offers no view. Thread: any, while no structural change runs. */
bool weft__view_of(const struct weft_world *world, const struct weft__component *comp,
                   weft_module_view_t *out);

/* The creation checks of a query naming module-owned components (desc already checked
 * otherwise): every such term has a view, is an AND term without a change filter, and is
 * written only when the module takes writes (get_mut); such a query has no filter, no
 * OPTIONAL/OR term, no multi-instance term and no owned exclude. *viewed gets bit t for each
 * view term (0: an ordinary query). Errors: WEFT_EINVAL, reported, naming the rule. */
weft_result_t weft__view_check(const struct weft_world *world, const weft_query_desc_t *d,
                               uint32_t nterms, uint32_t nexcl, uint32_t *viewed);

/* Plan a view query (viewed != 0): the cheapest driver among its pools and views by the
 * planner's cost (weft/query.h), views counting every row, holes included; desc.drive
 * forces one. */
void weft__view_plan(const struct weft_world *world, const weft_query_desc_t *d, uint32_t nterms,
                     weft__query_plan_t *p);

/* Set up `it` (its chunk range, world, query, term count and view flag already set by
 * weft__query_iter_planned) for a view query under plan p; write terms mark or stamp their
 * rows at `tick` in change slot `slot`. */
void weft__view_iter(const struct weft_world *world, const weft_query_desc_t *d, uint32_t nterms,
                     uint32_t nexcl, const weft__query_plan_t *p, uint32_t tick, uint32_t slot,
                     weft_iter_t *it);

/* weft_iter_next for an iterator set up by weft__view_iter. */
bool weft__view_next(weft_iter_t *it);

#endif /* WEFT_SRC_QUERY_VIEW_H */
