/* test_cpp.cpp: the C++ layer (include/weft.hpp), suite `cpp`: owners destroy what they own,
 * type registration is once per world, lambda systems compute what hand-written C systems
 * compute (same world hash), and failures come back as codes with a logged message. */
#include <criterion/criterion.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "c_reference.h"
#include "weft.hpp"

/* Global-namespace types: their derived names are "Position", ... the names c_reference.c
 * registers, so a C++ world and a C world get the same ids in the same order. */
struct Position {
    float x, y, z;
};
struct Velocity {
    float x, y, z;
};
struct Spin {
    float rate;
};
struct Frozen {};

namespace {

uint64_t test_seed(const char *test) {
    const char *env = std::getenv("WT_SEED");
    uint64_t seed = (env && env[0]) ? std::strtoull(env, nullptr, 0)
                                    : (uint64_t)std::time(nullptr) * 0x9E3779B97F4A7C15ull;
    std::fprintf(stderr, "%s: seed %llu (replay with WT_SEED=%llu)\n", test,
                 (unsigned long long)seed, (unsigned long long)seed);
    return seed;
}

/* Counts bytes the world allocates and still holds. */
struct alloc_count {
    long long live = 0;
};
void *count_alloc(size_t size, size_t align, void *user) {
    void *p = std::aligned_alloc(align, (size + align - 1) / align * align);
    if (p) {
        static_cast<alloc_count *>(user)->live += (long long)size;
    }
    return p;
}
void count_free(void *p, size_t size, void *user) {
    if (p) {
        static_cast<alloc_count *>(user)->live -= (long long)size;
    }
    std::free(p);
}

/* Keeps the last failure reported through a logger. */
struct log_capture {
    int calls = 0;
    weft_result_t code = WEFT_OK;
    std::string msg;
};
void capture_fn(weft_log_level_t, weft_result_t code, const char *msg, const char *, int,
                void *user) {
    auto *c = static_cast<log_capture *>(user);
    c->calls++;
    c->code = code;
    c->msg = msg;
}

/* Counts destructions of the object a system lambda captures. */
struct tracked {
    int *destroyed;
    bool armed = true;
    explicit tracked(int *d) : destroyed(d) {}
    tracked(const tracked &o) = delete;
    tracked(tracked &&o) noexcept : destroyed(o.destroyed), armed(o.armed) { o.armed = false; }
    ~tracked() {
        if (armed) {
            (*destroyed)++;
        }
    }
};

weft_world_desc_t inline_desc() {
    weft_world_desc_t d{};
    d.worker_count = 1;
    d.execution = WEFT_EXECUTION_INLINE;
    return d;
}

} // namespace

Test(cpp, world_destructor_frees_world_and_system_storage) {
    alloc_count count;
    int destroyed = 0;
    {
        weft_world_desc_t d = inline_desc();
        d.allocator.alloc = count_alloc;
        d.allocator.free = count_free;
        d.allocator.user = &count;
        weft::world w = weft::world::create(&d);
        cr_assert(w, "create: %s", weft_result_name(w.result()));
        cr_assert_eq(w.result(), WEFT_OK);
        weft::entity e;
        cr_assert_eq(w.create_entity(&e), WEFT_OK);
        cr_assert_eq(w.set(e, Position{1, 2, 3}), WEFT_OK);
        tracked t(&destroyed);
        weft::system s = w.system("tracked").writes<Position>().each(
            [t = std::move(t)](Position &p) { p.x += t.armed ? 1.0f : 0.0f; });
        cr_assert(s, "register: %s", weft_result_name(s.result));
        cr_assert_eq(w.progress(0.0f), WEFT_OK);
        cr_assert_float_eq(w.get<Position>(e)->x, 2.0f, 0.0f);
        cr_assert(count.live > 0);
        cr_assert_eq(destroyed, 0, "the lambda lives as long as the world");
    }
    cr_assert_eq(count.live, 0, "%lld bytes still held after the world's owner went away",
                 count.live);
    cr_assert_eq(destroyed, 1, "the captured object was destroyed %d times", destroyed);
}

Test(cpp, moved_world_has_one_owner) {
    int destroyed = 0;
    weft_world_desc_t d = inline_desc();
    weft::world a = weft::world::create(&d);
    cr_assert(a);
    weft_world_t *raw = a.c_ptr();
    tracked t(&destroyed);
    cr_assert(a.system("s").writes<Position>().each([t = std::move(t)](Position &) {}));
    weft::world b = std::move(a);
    cr_assert(!a, "a moved-from world is empty");
    cr_assert_eq(a.c_ptr(), nullptr);
    cr_assert_eq(b.c_ptr(), raw);
    cr_assert_eq(b.lookup<Position>().id, weft_component_lookup(raw, "Position").id);
    weft::world c;
    c = std::move(b);
    cr_assert_eq(c.c_ptr(), raw);
    cr_assert_eq(destroyed, 0);
    c.reset();
    cr_assert(!c);
    cr_assert_eq(destroyed, 1);
    /* Destroying the moved-from owners is a no-op (ASan reports a double free otherwise). */
}

Test(cpp, same_type_registers_once_per_world) {
    weft_world_desc_t d = inline_desc();
    weft::world w = weft::world::create(&d);
    cr_assert(w);
    weft::component<Position> p1 = w.component<Position>();
    weft::component<Velocity> v = w.component<Velocity>();
    weft::component<Position> p2 = w.component<Position>("ignored after the first call");
    cr_assert(p1 && p2 && v);
    cr_assert_eq(p1.id.id, p2.id.id);
    cr_assert_neq(p1.id.id, v.id.id);
    cr_assert_eq(weft_component_type_count(w.c_ptr()), 2u);
    /* Size, alignment and the derived name come from the type. */
    weft_component_desc_t desc;
    cr_assert_eq(weft_component_describe(w.c_ptr(), p1.id, &desc), WEFT_OK);
    cr_assert_str_eq(desc.name, "Position");
    cr_assert_eq(desc.size, sizeof(Position));
    cr_assert_eq(desc.align, alignof(Position));
    /* An empty type is a tag. */
    weft::component<Frozen> f = w.component<Frozen>();
    cr_assert(f);
    cr_assert_eq(weft_component_describe(w.c_ptr(), f.id, &desc), WEFT_OK);
    cr_assert_eq(desc.size, 0u);
    /* Another world keeps its own table: there Velocity comes first. */
    weft::world w2 = weft::world::create(&d);
    cr_assert_eq(w2.component<Velocity>().id.id, 1u);
    cr_assert_eq(w2.component<Position>().id.id, 2u);
    cr_assert_eq(w.component<Position>().id.id, p1.id.id);
}

/* The same populated world twice: C systems on one, weft.hpp lambdas on the other. */
Test(cpp, lambda_systems_match_c_systems_world_hash) {
    uint64_t seed = test_seed("cpp::lambda_systems_match_c_systems_world_hash");
    const uint32_t n = 10000;
    const int frames = 4;

    weft_world_t *cw = nullptr;
    cr_assert_eq(weft_world_create(nullptr, &cw), WEFT_OK);
    ref_ids_t cids;
    cr_assert_eq(ref_register_components(cw, &cids), WEFT_OK);
    cr_assert_eq(ref_populate(cw, &cids, n, seed), WEFT_OK);
    cr_assert_eq(ref_register_systems(cw, &cids), WEFT_OK);

    weft::world w = weft::world::create();
    cr_assert(w);
    ref_ids_t ids;
    ids.pos = w.component<Position>().id;
    ids.vel = w.component<Velocity>().id;
    ids.spin = w.component<Spin>().id;
    ids.frozen = w.component<Frozen>().id;
    cr_assert_eq(ids.pos.id, cids.pos.id);
    cr_assert_eq(ids.frozen.id, cids.frozen.id);
    cr_assert_eq(ref_populate(w.c_ptr(), &ids, n, seed), WEFT_OK);
    cr_assert_eq(w.hash(), weft_world_hash(cw), "populated worlds differ");

    /* Parameter order differs from the term order on purpose. */
    cr_assert(
        w.system("spin").writes<Velocity>().reads<Spin>().each([](const Spin &s, Velocity &v) {
            v.x = v.x * 0.5f + s.rate;
            v.y -= s.rate;
        }));
    cr_assert(w.system("move")
                  .writes<Position>()
                  .reads<Velocity>()
                  .without<Frozen>()
                  .parallel(true, 1000)
                  .each([](Position &p, const Velocity &v, const weft_system_ctx_t &ctx) {
                      p.x += v.x * ctx.dt;
                      p.y += v.y * ctx.dt;
                      p.z += v.z * ctx.dt;
                  }));
    uint64_t before = w.hash();
    for (int f = 0; f < frames; f++) {
        cr_assert_eq(weft_world_progress(cw, 0.016f), WEFT_OK);
        cr_assert_eq(w.progress(0.016f), WEFT_OK);
        cr_assert_eq(w.hash(), weft_world_hash(cw), "frame %d: the C++ world differs from C", f);
    }
    cr_assert_neq(w.hash(), before, "the systems changed nothing");
    weft_world_destroy(cw);
}

Test(cpp, each_passes_entities_and_run_gives_typed_chunks) {
    weft_world_desc_t d = inline_desc();
    weft::world w = weft::world::create(&d);
    cr_assert(w);
    const uint32_t n = 300;
    weft::entity es[n];
    for (uint32_t i = 0; i < n; i++) {
        cr_assert_eq(w.create_entity(&es[i]), WEFT_OK);
        cr_assert_eq(w.set(es[i], Spin{(float)i}), WEFT_OK);
        cr_assert_eq(w.set(es[i], Position{0, 0, 0}), WEFT_OK);
    }
    /* each() with an entity parameter: the entity's index lands in Position.x. */
    cr_assert(w.system("index").writes<Position>().each(
        [](weft::entity e, Position &p) { p.x = (float)e.index(); }));
    /* run(): per chunk, contiguous columns through the typed iterator. */
    cr_assert(
        w.system("chunks").reads<Spin>().writes<Position>().parallel(true, 64).after("index").run(
            [](auto &it, const weft_system_ctx_t &ctx) {
                while (it.next()) {
                    const Spin *s = it.template column<Spin>();
                    Position *p = it.template column<Position>();
                    for (uint32_t i = 0; i < it.count(); i++) {
                        const Spin *si = s ? &s[i] : it.template get<Spin>(i);
                        Position *pi = p ? &p[i] : it.template get<Position>(i);
                        pi->y = si->rate * 2.0f;
                        pi->z = (float)ctx.chunk;
                    }
                }
            }));
    cr_assert_eq(w.progress(0.0f), WEFT_OK);
    for (uint32_t i = 0; i < n; i++) {
        const Position *p = w.get<Position>(es[i]);
        cr_assert(p);
        cr_assert_float_eq(p->x, (float)es[i].index(), 0.0f);
        cr_assert_float_eq(p->y, 2.0f * (float)i, 0.0f);
        cr_assert_float_eq(p->z, (float)(i / 64), 0.0f, "entity %u: chunk %f", i, (double)p->z);
    }
}

Test(cpp, errors_come_back_as_codes_with_a_message) {
    log_capture log;
    weft_world_desc_t d = inline_desc();
    d.logger.fn = capture_fn;
    d.logger.user = &log;

    /* A bad desc: no world, the code, and the object tests false. */
    weft_world_desc_t bad = d;
    bad._canary = 1;
    weft::world none = weft::world::create(&bad);
    cr_assert(!none);
    cr_assert_eq(none.result(), WEFT_EINVAL);

    weft::world w = weft::world::create(&d);
    cr_assert(w);
    /* Same name, other layout: the C API's WEFT_ECONFLICT, nothing registered. */
    cr_assert(w.component<Position>());
    weft::component<Spin> s = w.component<Spin>("Position");
    cr_assert(!s);
    cr_assert_eq(s.result, WEFT_ECONFLICT);
    cr_assert_eq(log.code, WEFT_ECONFLICT);
    cr_assert_eq(w.lookup<Spin>().id, 0u, "a failed registration is not cached");
    cr_assert_eq(weft_component_type_count(w.c_ptr()), 1u);

    /* A duplicate system name: WEFT_EEXIST, and the rejected lambda's storage is freed
     * (ASan reports the leak otherwise). */
    int destroyed = 0;
    cr_assert(w.system("move").writes<Position>().each([](Position &) {}));
    tracked t(&destroyed);
    weft::system dup = w.system("move").writes<Position>().each([t = std::move(t)](Position &) {});
    cr_assert(!dup);
    cr_assert_eq(dup.result, WEFT_EEXIST);
    cr_assert_eq(log.code, WEFT_EEXIST);
    cr_assert_eq(destroyed, 1, "the rejected body was not freed");
    cr_assert_eq(weft_system_count(w.c_ptr()), 1u);

    /* Too many ordering names: detected here, reported through the world's logger. */
    int calls = log.calls;
    auto b = w.system("ordered").writes<Position>();
    for (int i = 0; i < WEFT_SYSTEM_MAX_ORDER + 1; i++) {
        b.after("move");
    }
    weft::system o = b.each([](Position &) {});
    cr_assert_eq(o.result, WEFT_EINVAL);
    cr_assert_eq(log.calls, calls + 1);
    cr_assert(log.msg.find("before/after") != std::string::npos, "message: %s", log.msg.c_str());
    cr_assert_eq(weft_system_count(w.c_ptr()), 1u);

    /* Mutating through a stale handle. */
    weft::entity e;
    cr_assert_eq(w.create_entity(&e), WEFT_OK);
    cr_assert_eq(w.destroy(e), WEFT_OK);
    cr_assert_eq(w.set(e, Position{}), WEFT_ESTALE);
    cr_assert_eq(w.destroy(e), WEFT_ESTALE);
    cr_assert(!w.alive(e));
    cr_assert_eq(w.get<Position>(e), nullptr);

    /* An empty (moved-from) world refuses calls with a code instead of crashing. */
    weft::world moved = std::move(w);
    cr_assert_eq(w.create_entity(&e), WEFT_EINVAL);
    cr_assert_eq(w.progress(0.0f), WEFT_EINVAL);
    cr_assert_eq(w.component<Velocity>().result, WEFT_EINVAL);
}

Test(cpp, jobs_owner_runs_parallel_for) {
    weft_jobs_desc_t d{};
    d.worker_count = 2;
    weft::jobs j = weft::jobs::create(&d);
    cr_assert(j, "create: %s", weft_result_name(j.result()));
    uint64_t per_worker[64] = {0};
    const uint64_t n = 100000;
    cr_assert_eq(j.parallel_for(n, 1000,
                                [&](uint64_t b, uint64_t e, uint32_t worker) {
                                    for (uint64_t i = b; i < e; i++) {
                                        per_worker[worker] += i;
                                    }
                                }),
                 WEFT_OK);
    uint64_t total = 0;
    for (uint64_t v : per_worker) {
        total += v;
    }
    cr_assert_eq(total, n * (n - 1) / 2);
    weft::jobs k = std::move(j);
    cr_assert(!j);
    cr_assert(k);
}
