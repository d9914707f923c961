/* Helpers shared by libTHNN's kernels (not part of the public API). */
#ifndef THNN_INTERNAL_H
#define THNN_INTERNAL_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "thnn.h"

#define THNN_API __attribute__((visibility("default")))
/* parallelize a loop only when it has at least this much work */
#define THNN_GRAIN 32768

/* every OpenMP region names its thread count: libTH's (th_set_num_threads),
   the same from any calling thread (OpenMP's own default is per thread, so
   a kernel called from a thread that never set it would use every core) */
static inline int thnn__threads(void) { return th_get_num_threads(); }

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
