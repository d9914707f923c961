/* Overflow-checked size, stride, offset and byte-count arithmetic for
 * libTHC's constructors, views and allocations, so that a hostile size or
 * stride is an error instead of a wrapped int64 that points outside the
 * storage.  libTHC does not link libTH, whose helpers are internal: these
 * mirror libTH's rules and PyTorch's error wording (libTH's
 * src/checked.h).  Internal. */
#ifndef THC_CHECKED_H
#define THC_CHECKED_H
#include <stdint.h>

/* 1 on overflow (then *r is the wrapped value), else 0. */
static inline int thc__mul_ovf(int64_t a, int64_t b, int64_t *r) {
    return __builtin_mul_overflow(a, b, r);
}
static inline int thc__add_ovf(int64_t a, int64_t b, int64_t *r) {
    return __builtin_add_overflow(a, b, r);
}
/* Two's-complement wrapping product, through unsigned integers, where
 * signed overflow would be undefined. */
static inline int64_t thc__wrap_mul(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* Number of elements of `sizes` (each >= 0); PyTorch's "numel: integer
 * multiplication overflow" RuntimeError when it does not fit in int64 (a
 * zero size anywhere makes it 0 whatever the others). */
int thc__checked_numel(int ndim, const int64_t *sizes, int64_t *numel);
/* Element offsets [lo, hi] addressed from `offset` (hi < lo when empty).
 * Returns 1, without setting an error, when an offset does not fit. */
int thc__checked_extent(int ndim, const int64_t *sizes, const int64_t *strides,
                        int64_t offset, int64_t *lo, int64_t *hi);
/* Bytes of a fresh storage for sizes (contiguous when strides is NULL, else
 * strides >= 0); "Storage size calculation overflowed" when too many. */
int thc__storage_nbytes(int ndim, const int64_t *sizes, const int64_t *strides,
                        int dtype, int64_t *nbytes);
/* Error unless sizes, strides and offset address only elements inside a
 * storage of `nbytes` bytes (`what` names the caller). */
int thc__check_in_storage(const char *what, int ndim, const int64_t *sizes,
                          const int64_t *strides, int64_t offset, int dtype,
                          int64_t nbytes);
/* stride * k for a view's new stride; a dim of at most one element never
 * uses its stride, so there the product wraps instead of failing. */
int thc__view_stride(int64_t stride, int64_t k, int64_t size, int64_t *out);

#endif
