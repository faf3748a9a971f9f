/* weft.hpp: a header-only C++17 layer over the C API (weft.h), for engines written in C++.
 *
 * What it adds, and what it costs:
 * - RAII owners, weft::world and weft::jobs: move-only, the destructor destroys. No
 *   exceptions anywhere (engines build with -fno-exceptions): creation is a static create()
 *   returning an object that tests false on failure and keeps the weft_result_t.
 * - Components registered by type: world.component<Position>() registers Position once per
 *   world (size and alignment from the type, name given or derived from the type) and
 *   returns the same id every time after.
 * - Systems as lambdas over typed terms:
 *       world.system("move").reads<Velocity>().writes<Position>().each(
 *           [](Position &p, const Velocity &v) { p.x += v.x; });
 *   compiles to a plain weft_system_fn_t: one function template instance per lambda type,
 *   which walks the chunk's batches and calls the lambda per entity through typed column
 *   pointers, the same loop hand-written C over weft_iter_t runs (no std::function, no
 *   virtual call; the one indirect call is the scheduler's call of the system function per
 *   chunk). The lambda is moved into storage owned by the weft::world and freed after the
 *   world is destroyed.
 * - weft::entity, a thin struct around weft_entity_t.
 * Everything else is the C API: c_ptr() hands out the C handle, and every C call stays valid.
 *
 * Errors: every call that can fail returns a weft_result_t (or an object carrying one) with
 * the C API's documented codes; the C API reports the message through the world's or job
 * system's logger (weft_last_error() on the calling thread). The few failures detected here
 * (out of memory for a system's lambda, too many before/after names) go to the logger given
 * to weft::world::create, else to stderr when WEFT_DEBUG >= 1, and leave the world unchanged.
 *
 * Thread: as the C calls each wrapper makes (weft/world.h, docs/architecture.md section 3):
 * a weft::world is used from its main thread, except the calls marked "jobs". */
#ifndef WEFT_HPP
#define WEFT_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "weft.hpp needs C++17 or later (C code includes weft.h)"
#endif

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include "weft.h"

namespace weft {

/* ---- entity ------------------------------------------------------------------ >>entity */

/* A thin entity handle: exactly a weft_entity_t (0 is null). Plain data; copy freely. */
struct entity {
    weft_entity_t id = WEFT_ENTITY_NULL;

    constexpr entity() noexcept = default;
    constexpr explicit entity(weft_entity_t e) noexcept : id(e) {}
    constexpr explicit operator bool() const noexcept { return id != WEFT_ENTITY_NULL; }
    constexpr uint32_t index() const noexcept { return static_cast<uint32_t>(id & 0xFFFFFFFFu); }
    constexpr uint32_t generation() const noexcept { return static_cast<uint32_t>(id >> 32); }
    friend constexpr bool operator==(entity a, entity b) noexcept { return a.id == b.id; }
    friend constexpr bool operator!=(entity a, entity b) noexcept { return a.id != b.id; }
};
static_assert(sizeof(entity) == sizeof(weft_entity_t), "weft::entity is a bare handle");

/* A registered component of type T: its id and the registration's result. Tests false when
 * the registration failed (id is then {0}). */
template <class T> struct component {
    weft_component_t id = {0};
    weft_result_t result = WEFT_EINVAL;

    explicit operator bool() const noexcept { return result == WEFT_OK; }
};

/* A registered system: its handle and the registration's result. Tests false on failure. */
struct system {
    weft_system_t id = {0};
    weft_result_t result = WEFT_EINVAL;

    explicit operator bool() const noexcept { return result == WEFT_OK; }
};

class world;

namespace detail {

/* A process-wide small index per component type: the key of each world's type -> id table. */
inline uint32_t next_type_index() noexcept {
    static std::atomic<uint32_t> next{0};
    return next.fetch_add(1, std::memory_order_relaxed);
}
template <class T> uint32_t type_index() noexcept {
    static const uint32_t index = next_type_index();
    return index;
}

/* The derived name of T: the compiler's spelling of the type ("Position", "game::Velocity").
 * Kept whole up to 127 bytes, so a name over WEFT_COMPONENT_NAME_MAX reaches
 * weft_component_register and is refused there (WEFT_EINVAL) instead of being cut short and
 * colliding with another type's name. */
struct type_name_buf {
    char s[128];
};
inline type_name_buf parse_type_name(const char *pretty) noexcept {
    type_name_buf b{};
    const char *p = std::strstr(pretty, "T = ");
    if (!p) {
        return b;
    }
    p += 4;
    size_t n = 0;
    while (p[n] != '\0' && p[n] != ']' && p[n] != ';' && n + 1 < sizeof b.s) {
        n++;
    }
    std::memcpy(b.s, p, n);
    return b;
}
template <class T> const char *type_name() noexcept {
#if defined(__GNUC__) || defined(__clang__)
    static const type_name_buf name = parse_type_name(__PRETTY_FUNCTION__);
    return name.s;
#else
    return ""; /* no derived names: weft_component_register refuses "" (give a name) */
#endif
}

/* Storage a world owns for its systems: a list of type-erased nodes, freed after the C world
 * is destroyed (systems hold pointers into them until then). */
struct owned {
    owned *next = nullptr;
    void (*destroy)(owned *) = nullptr;
};
template <class Fn> struct holder : owned {
    Fn fn;
    explicit holder(Fn &&f) : fn(std::move(f)) { destroy = &destroy_fn; }
    static void destroy_fn(owned *o) { delete static_cast<holder *>(o); }
};

/* One array of a world's type -> id table, kept until the world goes. */
struct id_table : owned {
    weft_component_t *ids = nullptr;
    id_table() { destroy = &destroy_fn; }
    static void destroy_fn(owned *o) {
        auto *t = static_cast<id_table *>(o);
        delete[] t->ids;
        delete t;
    }
};

/* Report a failure found by this header: the world's logger, else stderr in debug builds. */
inline void report(const weft_logger_t &log, weft_result_t code, const char *msg) noexcept {
    if (log.fn) {
        log.fn(WEFT_LOG_ERROR, code, msg, __FILE__, __LINE__, log.user);
        return;
    }
#if WEFT_DEBUG >= 1
    std::fprintf(stderr, "weft: %s: %s\n", weft_result_name(code), msg);
#endif
}

/* ---- typed terms ---- */

template <class T, weft_access_t A> struct term {
    using type = T;
    static constexpr weft_access_t access = A;
};

template <class... Ts> struct type_list {};

/* Index of the term whose type is U in Terms..., or -1. */
template <class U, class... Terms> struct term_index;
template <class U> struct term_index<U> {
    static constexpr int value = -1;
    static constexpr bool writes = false;
};
template <class U, class First, class... Rest> struct term_index<U, First, Rest...> {
    static constexpr bool here = std::is_same_v<U, typename First::type>;
    static constexpr int rest = term_index<U, Rest...>::value;
    static constexpr int value = here ? 0 : (rest < 0 ? -1 : rest + 1);
    static constexpr bool writes =
        here ? First::access == WEFT_ACCESS_WRITE : term_index<U, Rest...>::writes;
};

/* The parameter list of a callable: a function, function pointer, or a class with one
 * non-template operator() (a lambda without auto parameters). */
template <class Sig> struct sig_args;
template <class R, class... A> struct sig_args<R(A...)> { using type = type_list<A...>; };
template <class R, class... A> struct sig_args<R(A...) noexcept> : sig_args<R(A...)> {};
template <class R, class... A> struct sig_args<R (*)(A...)> : sig_args<R(A...)> {};
template <class R, class... A> struct sig_args<R (*)(A...) noexcept> : sig_args<R(A...)> {};
template <class C, class R, class... A> struct sig_args<R (C::*)(A...)> : sig_args<R(A...)> {};
template <class C, class R, class... A>
struct sig_args<R (C::*)(A...) const> : sig_args<R(A...)> {};
template <class C, class R, class... A>
struct sig_args<R (C::*)(A...) noexcept> : sig_args<R(A...)> {};
template <class C, class R, class... A>
struct sig_args<R (C::*)(A...) const noexcept> : sig_args<R(A...)> {};
template <class F, class = void> struct callable_args : sig_args<F> {};
template <class F>
struct callable_args<F, std::void_t<decltype(&F::operator())>>
    : sig_args<decltype(&F::operator())> {};

template <class T> using bare = std::remove_cv_t<std::remove_reference_t<T>>;

/* How each() feeds one parameter P of the callable, given the system's terms. A term
 * parameter is `T &` (a written term), `const T &` or `T` (any term); `weft::entity` gives
 * the entity; `const weft_system_ctx_t &` the system context. column() runs once per batch,
 * at() once per entity: at() on a contiguous column is p[i], the loop hand-written C runs. */
template <class P, class... Terms> struct param {
    using U = bare<P>;
    static constexpr bool is_entity = std::is_same_v<U, entity>;
    static constexpr bool is_ctx = std::is_same_v<U, weft_system_ctx_t>;
    static constexpr bool is_term = !is_entity && !is_ctx;
    static constexpr int index = term_index<U, Terms...>::value;
    /* Zero-size tags are registered with size 0: no stride, and their pointer is a dummy. */
    static constexpr bool is_tag = std::is_empty_v<U>;
    static_assert(!is_term || index >= 0,
                  "each(): a parameter's type is not one of the system's reads<>/writes<> terms");
    static_assert(!is_term || std::is_const_v<std::remove_reference_t<P>> ||
                      !std::is_lvalue_reference_v<P> || term_index<U, Terms...>::writes,
                  "each(): a non-const reference parameter needs a writes<> term");
    static_assert(!is_ctx || std::is_const_v<std::remove_reference_t<P>>,
                  "each(): take the system context as const weft_system_ctx_t &");
    static constexpr size_t term = index < 0 ? 0 : static_cast<size_t>(index);

    /* True when this parameter can use the batch's contiguous column. */
    static bool contiguous(const weft_iter_t *it) noexcept {
        if constexpr (is_term && !is_tag) {
            return it->columns[term] != nullptr;
        } else {
            (void)it;
            return true;
        }
    }
    static auto column(const weft_iter_t *it) noexcept {
        if constexpr (is_term) {
            return static_cast<U *>(it->columns[term]);
        } else {
            (void)it;
            return nullptr;
        }
    }
    template <class Col>
    static decltype(auto) at(Col col, uint32_t i, const weft_iter_t *it,
                             const weft_system_ctx_t *ctx) noexcept {
        if constexpr (is_entity) {
            (void)col;
            (void)ctx;
            return entity{weft_iter_entity(it, i)};
        } else if constexpr (is_ctx) {
            (void)col;
            (void)i;
            (void)it;
            return static_cast<const weft_system_ctx_t &>(*ctx);
        } else if constexpr (is_tag) {
            (void)col;
            (void)ctx;
            return static_cast<U &>(*static_cast<U *>(weft_iter_get(it, term, i)));
        } else {
            (void)it;
            (void)ctx;
            return static_cast<U &>(col[i]);
        }
    }
    static decltype(auto) slow(uint32_t i, const weft_iter_t *it,
                               const weft_system_ctx_t *ctx) noexcept {
        if constexpr (is_term) {
            (void)ctx;
            return static_cast<U &>(*static_cast<U *>(weft_iter_get(it, term, i)));
        } else {
            return at(nullptr, i, it, ctx);
        }
    }
};

/* The system function each() compiles to: batches of the chunk, then entities. */
template <class Fn, class Terms, class Params> struct each_fn;
template <class Fn, class... Terms, class... Ps>
struct each_fn<Fn, type_list<Terms...>, type_list<Ps...>> {
    template <size_t... I>
    static void batch(Fn &f, const weft_iter_t *it, const weft_system_ctx_t *ctx,
                      std::index_sequence<I...>) {
        const uint32_t n = it->rows;
        if ((param<Ps, Terms...>::contiguous(it) && ...)) {
            /* Column pointers are loaded once per batch, like locals in a C body. */
            const auto cols = std::make_tuple(param<Ps, Terms...>::column(it)...);
            for (uint32_t i = 0; i < n; i++) {
                f(param<Ps, Terms...>::at(std::get<I>(cols), i, it, ctx)...);
            }
        } else {
            for (uint32_t i = 0; i < n; i++) {
                f(param<Ps, Terms...>::slow(i, it, ctx)...);
            }
        }
    }
    static void run(weft_iter_t *it, const weft_system_ctx_t *ctx) {
        Fn &f = *static_cast<Fn *>(ctx->user);
        while (weft_iter_next(it)) {
            batch(f, it, ctx, std::index_sequence_for<Ps...>{});
        }
    }
};

} // namespace detail

/* ---- typed iterator (the per-chunk form) ------------------------------------- >>iter */

/* The iterator handed to a run() body: the chunk's batches with typed access to the terms.
 * column<T>() is the batch's contiguous data of term T, or nullptr (then use get<T>(i));
 * written terms give T *, read terms const T *. Valid only during the body's call. */
template <class... Terms> class iter {
  public:
    explicit iter(weft_iter_t *it) noexcept : it_(it) {}

    /* Advance to the next batch; false when the chunk is done. */
    bool next() noexcept { return weft_iter_next(it_); }
    /* Entities in the current batch. */
    uint32_t count() const noexcept { return it_->rows; }
    /* Entity i of the batch. */
    weft::entity entity(uint32_t i) const noexcept {
        return weft::entity{weft_iter_entity(it_, i)};
    }

    template <class T> static constexpr int index_of = detail::term_index<T, Terms...>::value;
    template <class T> static constexpr bool writes = detail::term_index<T, Terms...>::writes;
    template <class T> using ptr = std::conditional_t<writes<T>, T *, const T *>;

    template <class T> ptr<T> column() const noexcept {
        static_assert(index_of<T> >= 0, "column<T>(): T is not a term of the system");
        return static_cast<ptr<T>>(it_->columns[index_of<T>]);
    }
    template <class T> ptr<T> get(uint32_t i) const noexcept {
        static_assert(index_of<T> >= 0, "get<T>(): T is not a term of the system");
        return static_cast<ptr<T>>(weft_iter_get(it_, static_cast<uint32_t>(index_of<T>), i));
    }
    weft_iter_t *c_ptr() const noexcept { return it_; }

  private:
    weft_iter_t *it_;
};

namespace detail {
template <class Fn, class... Terms> struct run_fn {
    static void run(weft_iter_t *it, const weft_system_ctx_t *ctx) {
        iter<Terms...> typed(it);
        (*static_cast<Fn *>(ctx->user))(typed, *ctx);
    }
};
} // namespace detail

template <class... Terms> class system_builder;

/* ---- world ------------------------------------------------------------------- >>world */

/* Owns a weft_world_t and the storage of the systems registered through it. Move-only;
 * the destructor destroys the world (weft_world_destroy), then frees that storage. */
class world {
  public:
    world() noexcept = default;
    world(const world &) = delete;
    world &operator=(const world &) = delete;
    world(world &&o) noexcept { take(o); }
    world &operator=(world &&o) noexcept {
        if (this != &o) {
            reset();
            take(o);
        }
        return *this;
    }
    ~world() { reset(); }

    /* Create a world (desc may be NULL for defaults; see weft_world_create). Test the result
     * with `if (!w)`; result() gives the code. Errors: WEFT_EINVAL, WEFT_ENOMEM.
     * Thread: any; the calling thread becomes the world's main thread. */
    static world create(const weft_world_desc_t *desc = nullptr) noexcept {
        world w;
        w.result_ = weft_world_create(desc, &w.w_);
        if (desc) {
            w.log_ = desc->logger;
        }
        return w;
    }

    explicit operator bool() const noexcept { return w_ != nullptr; }
    /* The result of create() (WEFT_OK for a live world; WEFT_EINVAL for an empty one). */
    weft_result_t result() const noexcept { return result_; }
    /* The C world, for any C call; NULL for an empty world. Owned by this object. */
    weft_world_t *c_ptr() const noexcept { return w_; }

    /* Destroy the world now (as the destructor). Thread: main. */
    void reset() noexcept {
        weft_world_destroy(w_);
        w_ = nullptr;
        result_ = WEFT_EINVAL;
        while (owned_) {
            detail::owned *next = owned_->next;
            owned_->destroy(owned_);
            owned_ = next;
        }
        ids_ = nullptr; /* its storage was on the owned list */
        ids_cap_ = 0;
    }

    /* ---- components ---- */

    /* Register T (once per world; later calls return the cached id without a call into
     * weft). Size and alignment come from T; an empty T is a tag (size 0). `name` (copied)
     * defaults to T's spelling by the compiler; it only matters on the first call. The same
     * name registered from C with the same size and alignment is the same component.
     * Errors: as weft_component_register (WEFT_EINVAL for a derived name over
     * WEFT_COMPONENT_NAME_MAX bytes: pass a name), WEFT_ENOMEM. Thread: main. */
    template <class T> weft::component<T> component(const char *name = nullptr) noexcept {
        static_assert(std::is_same_v<T, std::remove_cv_t<T>> && !std::is_reference_v<T>,
                      "component<T>: T is a plain object type");
        static_assert(std::is_trivially_copyable_v<T>,
                      "component<T>: weft copies components bytewise (rows move, set copies, "
                      "archives and snapshots store bytes), so T must be trivially copyable");
        static_assert(alignof(T) <= WEFT_COMPONENT_MAX_ALIGN, "component<T>: alignment too large");
        weft::component<T> c;
        if (!w_) {
            c.result = empty("weft::world::component");
            return c;
        }
        c.id = lookup<T>();
        if (c.id.id != 0) {
            c.result = WEFT_OK;
            return c;
        }
        uint32_t key = detail::type_index<T>();
        if (key >= ids_cap_ && !grow_ids(key)) {
            c.result = WEFT_ENOMEM;
            detail::report(log_, c.result, "weft::world::component: out of memory (type table)");
            return c;
        }
        weft_component_desc_t d{};
        d.name = name ? name : detail::type_name<T>();
        d.size = std::is_empty_v<T> ? 0 : sizeof(T);
        d.align = std::is_empty_v<T> ? 0 : alignof(T);
        c.result = weft_component_register(w_, &d, &c.id);
        if (c.result == WEFT_OK) {
            ids_[key] = c.id;
        }
        return c;
    }

    /* T's id if T was registered through this object, else {0}. Never registers.
     * Thread: main (or jobs, while no registration runs). */
    template <class T> weft_component_t lookup() const noexcept {
        uint32_t key = detail::type_index<T>();
        return key < ids_cap_ ? ids_[key] : weft_component_t{0};
    }

    /* ---- entities ---- */

    /* Create an entity into *out. Errors: as weft_entity_create. Thread: main. */
    weft_result_t create_entity(entity *out) noexcept {
        if (out) {
            out->id = WEFT_ENTITY_NULL;
        }
        if (!w_) {
            return empty("weft::world::create_entity");
        }
        weft_entity_t e = WEFT_ENTITY_NULL;
        weft_result_t r = weft_entity_create(w_, &e);
        if (out) {
            out->id = e;
        }
        return r;
    }
    /* Errors: as weft_entity_destroy. Thread: main. */
    weft_result_t destroy(entity e) noexcept {
        return w_ ? weft_entity_destroy(w_, e.id) : empty("weft::world::destroy");
    }
    /* Thread: any. */
    bool alive(entity e) const noexcept { return w_ && weft_entity_is_alive(w_, e.id); }
    /* Thread: main (or jobs). */
    uint32_t entity_count() const noexcept { return w_ ? weft_entity_count(w_) : 0u; }

    /* Copy `value` into e's T, adding it first (registers T if needed). Errors: as
     * component() and weft_component_set. Thread: main. */
    template <class T> weft_result_t set(entity e, const T &value) noexcept {
        weft::component<T> c = component<T>();
        if (!c) {
            return c.result;
        }
        return weft_component_set(w_, e.id, c.id, &value);
    }
    /* Add T zero-initialised (registers T if needed). Errors: as weft_component_add. */
    template <class T> weft_result_t add(entity e) noexcept {
        weft::component<T> c = component<T>();
        if (!c) {
            return c.result;
        }
        return weft_component_add(w_, e.id, c.id, nullptr);
    }
    /* Errors: as weft_component_remove (WEFT_EINVAL when T was never registered here). */
    template <class T> weft_result_t remove(entity e) noexcept {
        return w_ ? weft_component_remove(w_, e.id, lookup<T>()) : empty("weft::world::remove");
    }
    /* e's T, or nullptr (stale e, no T, T not registered). Thread: main, or jobs with
     * declared access (weft_component_get / _get_mut). */
    template <class T> const T *get(entity e) const noexcept {
        return w_ ? static_cast<const T *>(weft_component_get(w_, e.id, lookup<T>())) : nullptr;
    }
    template <class T> T *get_mut(entity e) noexcept {
        return w_ ? static_cast<T *>(weft_component_get_mut(w_, e.id, lookup<T>())) : nullptr;
    }
    template <class T> bool has(entity e) const noexcept {
        return w_ && weft_component_has(w_, e.id, lookup<T>());
    }

    /* ---- systems and frames ---- */

    /* Start describing a system named `name` (copied at registration; the pointer must stay
     * valid until then). Finish with each() or run(). Thread: main, outside a frame. */
    system_builder<> system(const char *name) noexcept;

    /* One frame (weft_world_progress). Errors: as weft_world_progress. Thread: main. */
    weft_result_t progress(float dt) noexcept { return weft_world_progress(w_, dt); }
    /* weft_world_hash. Thread: main, or any while no structural change runs. */
    uint64_t hash() const noexcept { return w_ ? weft_world_hash(w_) : 0u; }
    /* The world's job system (owned by the world), NULL on failure. Thread: main first. */
    weft_jobs_t *jobs() noexcept { return w_ ? weft_world_jobs(w_) : nullptr; }

  private:
    template <class...> friend class system_builder;

    void take(world &o) noexcept {
        w_ = std::exchange(o.w_, nullptr);
        result_ = std::exchange(o.result_, WEFT_EINVAL);
        log_ = std::exchange(o.log_, weft_logger_t{});
        owned_ = std::exchange(o.owned_, nullptr);
        ids_ = std::exchange(o.ids_, nullptr);
        ids_cap_ = std::exchange(o.ids_cap_, 0u);
    }
    /* The table grows into a new array; the old one stays allocated (on the owned list)
     * until the world goes, so a lookup<T>() running in a job never reads freed memory. */
    bool grow_ids(uint32_t key) noexcept {
        uint32_t cap = ids_cap_ ? ids_cap_ : 16u;
        while (cap <= key) {
            cap *= 2u;
        }
        auto *table = new (std::nothrow) detail::id_table;
        weft_component_t *ids = new (std::nothrow) weft_component_t[cap]();
        if (!table || !ids) {
            delete table;
            delete[] ids;
            return false;
        }
        for (uint32_t i = 0; i < ids_cap_; i++) {
            ids[i] = ids_[i];
        }
        table->ids = ids;
        adopt(table);
        ids_ = ids;
        ids_cap_ = cap;
        return true;
    }
    /* A call on an empty world (not created, moved from or reset): WEFT_EINVAL. */
    weft_result_t empty(const char *fn) const noexcept {
        char msg[128];
        std::snprintf(msg, sizeof msg, "%s: the world is empty (not created, moved from or reset)",
                      fn);
        detail::report(log_, WEFT_EINVAL, msg);
        return WEFT_EINVAL;
    }
    void adopt(detail::owned *o) noexcept {
        o->next = owned_;
        owned_ = o;
    }

    weft_world_t *w_ = nullptr;
    weft_result_t result_ = WEFT_EINVAL;
    weft_logger_t log_{};
    detail::owned *owned_ = nullptr;
    weft_component_t *ids_ = nullptr; /* by detail::type_index<T>() */
    uint32_t ids_cap_ = 0;
};

/* ---- system builder ---------------------------------------------------------- >>system */

/* Describes one system; each call returns the builder (with more terms for reads/writes).
 * Components named by reads/writes/without/lookups are registered on the way (main thread).
 * The first failure is kept and returned by each()/run(), which then register nothing. */
template <class... Terms> class system_builder {
    static_assert(sizeof...(Terms) <= WEFT_QUERY_MAX_TERMS,
                  "a system has at most WEFT_QUERY_MAX_TERMS (16) terms");

  public:
    system_builder(world *w, const char *name) noexcept : w_(w) { desc_.name = name; }

    /* Iterated terms, read-only (each() takes them as const T & or T). */
    template <class... T> system_builder<Terms..., detail::term<T, WEFT_ACCESS_READ>...> reads() {
        return append<detail::term<T, WEFT_ACCESS_READ>...>();
    }
    /* Iterated terms, written (each() takes them as T &). */
    template <class... T> system_builder<Terms..., detail::term<T, WEFT_ACCESS_WRITE>...> writes() {
        return append<detail::term<T, WEFT_ACCESS_WRITE>...>();
    }
    /* Owners of any of T... are skipped (desc.exclude). */
    template <class... T> system_builder &without() {
        (add_list<T>(desc_.exclude, WEFT_QUERY_MAX_EXCLUDES), ...);
        return *this;
    }
    /* Components only looked up (desc.reads / desc.writes). */
    template <class... T> system_builder &looks_up() {
        (add_list<T>(desc_.reads, WEFT_SYSTEM_MAX_LOOKUPS), ...);
        return *this;
    }
    template <class... T> system_builder &looks_up_mut() {
        (add_list<T>(desc_.writes, WEFT_SYSTEM_MAX_LOOKUPS), ...);
        return *this;
    }
    system_builder &phase(uint32_t p) noexcept {
        desc_.phase = p;
        return *this;
    }
    /* One job per chunk of `chunk_size` rows (0: WEFT_SYSTEM_CHUNK_DEFAULT). */
    system_builder &parallel(bool on = true, uint32_t chunk_size = 0) noexcept {
        desc_.parallel = on;
        desc_.chunk_size = chunk_size;
        return *this;
    }
    system_builder &main_thread(bool on = true) noexcept {
        desc_.main_thread = on;
        return *this;
    }
    /* Names of systems this one precedes / follows (at most WEFT_SYSTEM_MAX_ORDER each; the
     * strings must stay valid until registration). */
    system_builder &before(const char *name) noexcept { return order(desc_.before, name); }
    system_builder &after(const char *name) noexcept { return order(desc_.after, name); }
    /* The C desc being built, for anything not covered here (fn and user are set by
     * each()/run() and must not be changed). */
    weft_system_desc_t &desc() noexcept { return desc_; }

    /* Register the system with body `f`, called once per matching entity with one argument
     * per parameter: a term as `T &` (written), `const T &` or `T`; `weft::entity`; or
     * `const weft_system_ctx_t &`, in any order. `f` (a function or a lambda without auto
     * parameters) is moved into storage owned by the weft::world. Runs on worker threads
     * (see weft_system_fn_t); the chunks of a parallel system call the one `f` concurrently,
     * so `f` must not modify its captures. Errors: the builder's first failure, weft_system_register's
     * errors, WEFT_ENOMEM (storage for f); on error nothing is registered. Thread: main. */
    template <class F> weft::system each(F &&f) {
        static_assert(sizeof...(Terms) > 0, "each(): declare terms with reads<>/writes<>");
        using Fn = std::decay_t<F>;
        using Params = typename detail::callable_args<Fn>::type;
        return finish<Fn>(std::forward<F>(f),
                          &detail::each_fn<Fn, detail::type_list<Terms...>, Params>::run);
    }

    /* Register the system with a per-chunk body f(weft::iter<Terms...> &it,
     * const weft_system_ctx_t &ctx) (a generic lambda `[](auto &it, const auto &ctx)` works),
     * called once per chunk: loop `while (it.next())` over batches. A system without terms
     * is called once per frame with no batches. Errors and ownership: as each(). */
    template <class F> weft::system run(F &&f) {
        using Fn = std::decay_t<F>;
        return finish<Fn>(std::forward<F>(f), &detail::run_fn<Fn, Terms...>::run);
    }

    using iter_type = iter<Terms...>;

  private:
    template <class...> friend class system_builder;

    template <class... New> system_builder<Terms..., New...> append() {
        system_builder<Terms..., New...> next(w_, desc_.name);
        next.desc_ = desc_;
        next.error_ = error_;
        uint32_t t = static_cast<uint32_t>(sizeof...(Terms));
        (next.add_term(t++, New::access, next.template id<typename New::type>()), ...);
        return next;
    }
    void add_term(uint32_t t, weft_access_t access, weft_component_t c) noexcept {
        desc_.terms[t].component = c;
        desc_.terms[t].access = access;
    }
    template <class T> weft_component_t id() noexcept {
        weft::component<T> c = w_->template component<T>();
        if (!c && error_ == WEFT_OK) {
            error_ = c.result;
        }
        return c.id;
    }
    template <class T> void add_list(weft_component_t *list, uint32_t cap) {
        weft_component_t c = id<T>();
        for (uint32_t i = 0; i < cap; i++) {
            if (list[i].id == 0) {
                list[i] = c;
                return;
            }
        }
        fail(WEFT_EINVAL, "weft::system_builder: too many components in without<>/looks_up<>");
    }
    system_builder &order(const char **list, const char *name) noexcept {
        for (uint32_t i = 0; i < WEFT_SYSTEM_MAX_ORDER; i++) {
            if (!list[i]) {
                list[i] = name;
                return *this;
            }
        }
        fail(WEFT_EINVAL, "weft::system_builder: more than WEFT_SYSTEM_MAX_ORDER before/after");
        return *this;
    }
    void fail(weft_result_t code, const char *msg) noexcept {
        if (error_ == WEFT_OK) {
            error_ = code;
            detail::report(w_->log_, code, msg);
        }
    }
    template <class Fn, class F> weft::system finish(F &&f, weft_system_fn_t fn) {
        weft::system s;
        if (error_ != WEFT_OK) {
            s.result = error_;
            return s;
        }
        auto *h = new (std::nothrow) detail::holder<Fn>(Fn(std::forward<F>(f)));
        if (!h) {
            s.result = WEFT_ENOMEM;
            detail::report(w_->log_, s.result, "weft::system_builder: out of memory (body)");
            return s;
        }
        weft_system_desc_t d = desc_;
        d.fn = fn;
        d.user = &h->fn;
        s.result = weft_system_register(w_->c_ptr(), &d, &s.id);
        if (s.result != WEFT_OK) {
            delete h;
            return s;
        }
        w_->adopt(h);
        return s;
    }

    world *w_;
    weft_system_desc_t desc_{};
    weft_result_t error_ = WEFT_OK;
};

inline system_builder<> world::system(const char *name) noexcept {
    return system_builder<>(this, name);
}

/* ---- jobs -------------------------------------------------------------------- >>jobs */

/* Owns a standalone job system (weft_jobs_create); move-only, the destructor destroys it.
 * A world's own job system is world::jobs() and is not wrapped here. */
class jobs {
  public:
    jobs() noexcept = default;
    jobs(const jobs &) = delete;
    jobs &operator=(const jobs &) = delete;
    jobs(jobs &&o) noexcept
        : j_(std::exchange(o.j_, nullptr)), result_(std::exchange(o.result_, WEFT_EINVAL)) {}
    jobs &operator=(jobs &&o) noexcept {
        if (this != &o) {
            reset();
            j_ = std::exchange(o.j_, nullptr);
            result_ = std::exchange(o.result_, WEFT_EINVAL);
        }
        return *this;
    }
    ~jobs() { reset(); }

    /* Create a job system (desc may be NULL). Errors: as weft_jobs_create. Thread: any; the
     * calling thread becomes worker 0 and must be the one that destroys it. */
    static jobs create(const weft_jobs_desc_t *desc = nullptr) noexcept {
        jobs j;
        j.result_ = weft_jobs_create(desc, &j.j_);
        return j;
    }
    explicit operator bool() const noexcept { return j_ != nullptr; }
    weft_result_t result() const noexcept { return result_; }
    weft_jobs_t *c_ptr() const noexcept { return j_; }
    /* Destroy now (as the destructor). Thread: the creating thread, outside any job. */
    void reset() noexcept {
        weft_jobs_destroy(j_);
        j_ = nullptr;
        result_ = WEFT_EINVAL;
    }
    uint32_t worker_count() const noexcept { return weft_jobs_worker_count(j_); }

    /* weft_parallel_for with a callable f(uint64_t begin, uint64_t end, uint32_t worker),
     * called once per range (one indirect call per range, none per element). `f` is used
     * by reference during the call only, concurrently from several workers. Errors: as weft_parallel_for. Thread: as
     * weft_parallel_for. */
    template <class F> weft_result_t parallel_for(uint64_t count, uint64_t grain, F &&f) {
        using Fn = std::remove_reference_t<F>;
        return weft_parallel_for(
            j_, count, grain,
            [](void *ctx, uint64_t b, uint64_t e, uint32_t w) {
                (*static_cast<Fn *>(ctx))(b, e, w);
            },
            const_cast<void *>(static_cast<const void *>(&f)));
    }

  private:
    weft_jobs_t *j_ = nullptr;
    weft_result_t result_ = WEFT_EINVAL;
};

} // namespace weft

#endif /* WEFT_HPP */
