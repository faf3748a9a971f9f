/* wt_sanitizer.h: which sanitizer a test is built under (tests only). */
#ifndef WEFT_TESTS_WT_SANITIZER_H
#define WEFT_TESTS_WT_SANITIZER_H

/* WT_TSAN: 1 under ThreadSanitizer (gcc's macro or clang's feature test), else 0. */
#if defined(__SANITIZE_THREAD__)
#define WT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WT_TSAN 1
#endif
#endif
#ifndef WT_TSAN
#define WT_TSAN 0
#endif

#endif /* WEFT_TESTS_WT_SANITIZER_H */
