/* Overflow-checked size, stride, offset and byte-count arithmetic.  Every
 * constructor, view and allocation in libTH computes element counts and
 * address ranges through these, so that a hostile size or stride is an
 * error instead of a wrapped (undefined) int64 that points outside the
 * storage.  Internal. */
#ifndef TH_CHECKED_H
#define TH_CHECKED_H
#include <stdint.h>

/* 1 on overflow (then *r is the wrapped value), else 0. */
static inline int th__mul_ovf(int64_t a, int64_t b, int64_t *r) {
    return __builtin_mul_overflow(a, b, r);
}
static inline int th__add_ovf(int64_t a, int64_t b, int64_t *r) {
    return __builtin_add_overflow(a, b, r);
}
/* Two's-complement wrapping arithmetic (what PyTorch's int64 ops give),
 * through unsigned integers, where signed overflow would be undefined. */
static inline int64_t th__wrap_add(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a + (uint64_t)b);
}
static inline int64_t th__wrap_mul(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* Number of elements of `sizes` (each >= 0).  Sets a RuntimeError
 * ("numel: integer multiplication overflow", PyTorch's words) and returns
 * its status when the product does not fit in int64; a zero size anywhere
 * makes the count 0 whatever the others. */
int th__checked_numel(int ndim, const int64_t *sizes, int64_t *numel);
/* Element offsets [lo, hi] addressed by sizes/strides from `offset`
 * (hi < lo when the tensor is empty).  Returns 1, without setting an
 * error, if an offset does not fit in int64; else 0. */
int th__checked_extent(int ndim, const int64_t *sizes, const int64_t *strides,
                       int64_t offset, int64_t *lo, int64_t *hi);
/* Bytes of a fresh storage for sizes (contiguous when strides is NULL,
 * else strides >= 0) of `dtype`; PyTorch's "Storage size calculation
 * overflowed" RuntimeError when they do not fit in int64. */
int th__storage_nbytes(int ndim, const int64_t *sizes, const int64_t *strides,
                       int dtype, int64_t *nbytes);
/* Error unless sizes, strides and offset address only elements inside a
 * storage of `nbytes` bytes (`what` names the caller in the message). */
int th__check_in_storage(const char *what, int ndim, const int64_t *sizes,
                         const int64_t *strides, int64_t offset, int dtype,
                         int64_t nbytes);
/* stride * k for a view's new stride.  When the resulting dim has at most
 * one element the stride is never used to address memory, so a product
 * that does not fit wraps instead of failing (x[::2**62] stays valid). */
int th__view_stride(int64_t stride, int64_t k, int64_t size, int64_t *out);

#endif
