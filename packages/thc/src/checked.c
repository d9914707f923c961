/* Overflow-checked size arithmetic (checked.h, libTH's rules). */
#include <stdio.h>

#include "checked.h"
#include "thc_internal.h"

int thc__checked_numel(int ndim, const int64_t *sizes, int64_t *numel) {
    int64_t n = 1;
    int overflow = 0;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) {
            *numel = 0;
            return THC_OK;
        }
        if (!overflow && thc__mul_ovf(n, sizes[i], &n)) overflow = 1;
    }
    if (overflow) {
        char b[256];
        return thc__error(THC_ERR_RUNTIME,
                         "numel: integer multiplication overflow (sizes %s)",
                         thc__shape_str(ndim, sizes, b));
    }
    *numel = n;
    return THC_OK;
}

int thc__checked_extent(int ndim, const int64_t *sizes, const int64_t *strides,
                       int64_t offset, int64_t *lo, int64_t *hi) {
    int64_t l = offset, h = offset;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) {
            *lo = offset;
            *hi = offset - 1; /* offset >= 0 is checked by the callers */
            return THC_OK;
        }
    }
    for (int i = 0; i < ndim; i++) {
        int64_t span;
        if (sizes[i] == 1) continue; /* its stride addresses nothing */
        if (thc__mul_ovf(sizes[i] - 1, strides[i], &span) ||
            (span > 0 ? thc__add_ovf(h, span, &h) : thc__add_ovf(l, span, &l)))
            return 1; /* the callers word the error */
    }
    *lo = l;
    *hi = h;
    return THC_OK;
}

/* PyTorch's words for a storage whose byte count does not fit */
static int storage_overflow(int ndim, const int64_t *sizes,
                            const int64_t *strides) {
    char b1[256], b2[256];
    if (!strides)
        return thc__error(THC_ERR_RUNTIME, "Storage size calculation "
                         "overflowed with sizes=%s",
                         thc__shape_str(ndim, sizes, b1));
    return thc__error(THC_ERR_RUNTIME, "Storage size calculation overflowed "
                     "with sizes=%s and strides=%s",
                     thc__shape_str(ndim, sizes, b1),
                     thc__shape_str(ndim, strides, b2));
}

int thc__storage_nbytes(int ndim, const int64_t *sizes, const int64_t *strides,
                       int dtype, int64_t *nbytes) {
    int64_t n = 1, lo = 0, hi = -1, item = thc_dtype_itemsize(dtype);
    if (!strides) {
        for (int i = 0; i < ndim && n != 0; i++)
            if (sizes[i] == 0) n = 0;
        for (int i = 0; i < ndim && n != 0; i++)
            if (thc__mul_ovf(n, sizes[i], &n))
                return storage_overflow(ndim, sizes, NULL);
    } else {
        if (thc__checked_extent(ndim, sizes, strides, 0, &lo, &hi) ||
            thc__add_ovf(hi, 1, &n))
            return storage_overflow(ndim, sizes, strides);
    }
    if (thc__mul_ovf(n, item, nbytes))
        return storage_overflow(ndim, sizes, strides);
    return THC_OK;
}

int thc__check_in_storage(const char *what, int ndim, const int64_t *sizes,
                         const int64_t *strides, int64_t offset, int dtype,
                         int64_t nbytes) {
    char b1[256], b2[256], need[64];
    if (offset < 0)
        return thc__error(THC_ERR_RUNTIME, "%s: Tensor: invalid storage offset "
                         "%lld", what, (long long)offset);
    int64_t lo = 0, hi = -1, end, item = thc_dtype_itemsize(dtype);
    int wraps = thc__checked_extent(ndim, sizes, strides, offset, &lo, &hi);
    if (!wraps && hi < lo) return THC_OK; /* no element: nothing addressed */
    wraps = wraps || thc__add_ovf(hi, 1, &end) || thc__mul_ovf(end, item, &end);
    if (!wraps && lo >= 0 && end <= nbytes) return THC_OK;
    if (wraps) return storage_overflow(ndim, sizes, strides);
    if (lo < 0)
        snprintf(need, sizeof need, "that starts at element %lld",
                 (long long)lo);
    else
        snprintf(need, sizeof need, "of %lld", (long long)end);
    return thc__error(THC_ERR_RUNTIME,
                     "%s: sizes %s, strides %s, storage offset %lld, and "
                     "itemsize %lld requiring a storage size %s are out of "
                     "bounds for storage of size %lld", what,
                     thc__shape_str(ndim, sizes, b1),
                     thc__shape_str(ndim, strides, b2), (long long)offset,
                     (long long)item, need, (long long)nbytes);
}

int thc__view_stride(int64_t stride, int64_t k, int64_t size, int64_t *out) {
    if (!thc__mul_ovf(stride, k, out)) return THC_OK;
    if (size <= 1) {
        *out = thc__wrap_mul(stride, k);
        return THC_OK;
    }
    return thc__error(THC_ERR_RUNTIME, "view stride %lld * %lld overflows "
                     "int64", (long long)stride, (long long)k);
}
