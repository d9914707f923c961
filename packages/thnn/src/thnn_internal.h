/* Helpers shared by libTHNN's kernels (not part of the public API). */
#ifndef THNN_INTERNAL_H
#define THNN_INTERNAL_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "thnn.h"

#if TH_ABI_VERSION_MAJOR != 1 || TH_ABI_VERSION_MINOR < 2
#error "libTHNN needs libTH's C ABI 1.2 or later (th_parallel_for)"
#endif

#define THNN_API __attribute__((visibility("default")))
/* Loops run on libTH's thread pool (th_parallel_for), and only when they
 * have at least this much work in all: smaller ones stay serial. */
#define THNN_GRAIN 32768

/* th_parallel_for's grain for items of `cost` work each: it runs serially
 * below two grains, so a loop goes parallel from THNN_GRAIN work on, in
 * ranges of at least half that */
static inline int64_t thnn__grain(int64_t cost) {
    if (cost < 1) cost = 1;
    return cost >= THNN_GRAIN / 2 ? 1 : (THNN_GRAIN / 2 + cost - 1) / cost;
}

/* Hot row functions get AVX-512 and AVX2 copies next to the baseline
 * (SSE2) one, picked once at load time by the CPU (GCC on x86-64 Linux).
 * All do the same IEEE operations (ISO C mode: no FMA contraction); only
 * the order of `omp simd` reductions follows the vector width. */
#ifdef THNN_VEC_CLONES
/* set by the build (-DTHNN_VEC_CLONES= turns the copies off) */
#elif defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define THNN_VEC_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define THNN_VEC_CLONES
#endif

/* Sum over items [0, n) of fn's per-range sums, the same on any number of
 * threads: [0, n) is cut into blocks whose size depends only on n and
 * `cost` (the work per item), fn sums each block, and the blocks' sums are
 * added in order.  fn may also write per-item results. */
typedef double (*thnn_sum_fn)(int64_t begin, int64_t end, void *ctx);
double thnn__parallel_sum(int64_t n, int64_t cost, thnn_sum_fn fn, void *ctx);

int thnn__error(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* copies libTH's last error into ours, prefixed by `where` */
int thnn__from_th(const char *where);
const char *thnn__shape(const th_tensor *t, char *buf);
const char *thnn__dtype_name(int dtype);

/* input must be float32/float64 */
int thnn__check_float(const char *fn, const char *name, const th_tensor *t);
/* t must have dtype `dtype` */
int thnn__check_dtype(const char *fn, const char *name, const th_tensor *t,
                      int dtype);
/* out must be contiguous with this shape and dtype */
int thnn__check_out(const char *fn, const char *name, const th_tensor *out,
                    int ndim, const int64_t *sizes, int dtype);
/* same, shape copied from another tensor */
int thnn__check_like(const char *fn, const char *name, const th_tensor *out,
                     const th_tensor *like);
/* t is NULL or a 1-d tensor of n elements of dtype */
int thnn__check_vec(const char *fn, const char *name, const th_tensor *t,
                    int64_t n, int dtype);
/* new contiguous reference (NULL on error, with our error set) */
th_tensor *thnn__contig(const th_tensor *t);
void thnn__release(th_tensor *t); /* NULL-safe */
/* a view of t's storage with the given shape and element offset */
th_tensor *thnn__view(const th_tensor *t, int64_t offset, int ndim,
                      const int64_t *sizes, const int64_t *strides);

/* Overflow-checked int64 size arithmetic (kernel extents, paddings, output
 * sizes): 1 when the result does not fit, which the kernels report as
 * an error instead of computing with a wrapped (undefined) value. */
static inline int thnn__mul_ovf(int64_t a, int64_t b, int64_t *r) {
    return __builtin_mul_overflow(a, b, r);
}
static inline int thnn__add_ovf(int64_t a, int64_t b, int64_t *r) {
    return __builtin_add_overflow(a, b, r);
}
/* a * b for work estimates (OpenMP `if` clauses), saturating at INT64_MAX:
 * a kernel's size may be huge while its output is small */
static inline int64_t thnn__work(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
/* RuntimeError "<fn>: <what> overflows int64"; returns its status */
int thnn__size_overflow(const char *fn, const char *what);

static inline void *thnn__data(const th_tensor *t) {
    return (char *)t->storage->data + t->offset * th_dtype_itemsize(t->dtype);
}
#endif
