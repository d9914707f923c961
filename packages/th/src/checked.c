/* Overflow-checked size arithmetic (checked.h). */
#include <stdio.h>

#include "th_internal.h"

int th__checked_numel(int ndim, const int64_t *sizes, int64_t *numel) {
    int64_t n = 1;
    int overflow = 0;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) {
            *numel = 0;
            return TH_OK;
        }
        if (!overflow && th__mul_ovf(n, sizes[i], &n)) overflow = 1;
    }
    if (overflow) {
        char b[256];
        return th__error(TH_ERR_RUNTIME,
                         "numel: integer multiplication overflow (sizes %s)",
                         th__shape_str(ndim, sizes, b));
    }
    *numel = n;
    return TH_OK;
}
TH_EXPORT_AS(th_checked_numel, th__checked_numel);

int th__checked_extent(int ndim, const int64_t *sizes, const int64_t *strides,
                       int64_t offset, int64_t *lo, int64_t *hi) {
    int64_t l = offset, h = offset;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) {
            *lo = offset;
            *hi = offset - 1; /* offset >= 0 is checked by the callers */
            return TH_OK;
        }
    }
    for (int i = 0; i < ndim; i++) {
        int64_t span;
        if (sizes[i] == 1) continue; /* its stride addresses nothing */
        if (th__mul_ovf(sizes[i] - 1, strides[i], &span) ||
            (span > 0 ? th__add_ovf(h, span, &h) : th__add_ovf(l, span, &l)))
            return 1; /* the callers word the error */
    }
    *lo = l;
    *hi = h;
    return TH_OK;
}

/* PyTorch's words for a storage whose byte count does not fit */
static int storage_overflow(int ndim, const int64_t *sizes,
                            const int64_t *strides) {
    char b1[256], b2[256];
    if (!strides)
        return th__error(TH_ERR_RUNTIME, "Storage size calculation "
                         "overflowed with sizes=%s",
                         th__shape_str(ndim, sizes, b1));
    return th__error(TH_ERR_RUNTIME, "Storage size calculation overflowed "
                     "with sizes=%s and strides=%s",
                     th__shape_str(ndim, sizes, b1),
                     th__shape_str(ndim, strides, b2));
}

int th__storage_nbytes(int ndim, const int64_t *sizes, const int64_t *strides,
                       int dtype, int64_t *nbytes) {
    int64_t n = 1, lo = 0, hi = -1, item = th_dtype_itemsize(dtype);
    if (!strides) {
        for (int i = 0; i < ndim && n != 0; i++)
            if (sizes[i] == 0) n = 0;
        for (int i = 0; i < ndim && n != 0; i++)
            if (th__mul_ovf(n, sizes[i], &n))
                return storage_overflow(ndim, sizes, NULL);
    } else {
        if (th__checked_extent(ndim, sizes, strides, 0, &lo, &hi) ||
            th__add_ovf(hi, 1, &n))
            return storage_overflow(ndim, sizes, strides);
    }
    if (th__mul_ovf(n, item, nbytes))
        return storage_overflow(ndim, sizes, strides);
    return TH_OK;
}
TH_EXPORT_AS(th_storage_nbytes, th__storage_nbytes);

int th__check_in_storage(const char *what, int ndim, const int64_t *sizes,
                         const int64_t *strides, int64_t offset, int dtype,
                         int64_t nbytes) {
    char b1[256], b2[256], need[64];
    if (offset < 0)
        return th__error(TH_ERR_RUNTIME, "%s: Tensor: invalid storage offset "
                         "%lld", what, (long long)offset);
    int64_t lo = 0, hi = -1, end, item = th_dtype_itemsize(dtype);
    int wraps = th__checked_extent(ndim, sizes, strides, offset, &lo, &hi);
    if (!wraps && hi < lo) return TH_OK; /* no element: nothing addressed */
    wraps = wraps || th__add_ovf(hi, 1, &end) || th__mul_ovf(end, item, &end);
    if (!wraps && lo >= 0 && end <= nbytes) return TH_OK;
    if (wraps) return storage_overflow(ndim, sizes, strides);
    if (lo < 0)
        snprintf(need, sizeof need, "that starts at element %lld",
                 (long long)lo);
    else
        snprintf(need, sizeof need, "of %lld", (long long)end);
    return th__error(TH_ERR_RUNTIME,
                     "%s: sizes %s, strides %s, storage offset %lld, and "
                     "itemsize %lld requiring a storage size %s are out of "
                     "bounds for storage of size %lld", what,
                     th__shape_str(ndim, sizes, b1),
                     th__shape_str(ndim, strides, b2), (long long)offset,
                     (long long)item, need, (long long)nbytes);
}
TH_EXPORT_AS(th_check_in_storage, th__check_in_storage);

int th__view_stride(int64_t stride, int64_t k, int64_t size, int64_t *out) {
    if (!th__mul_ovf(stride, k, out)) return TH_OK;
    if (size <= 1) {
        *out = th__wrap_mul(stride, k);
        return TH_OK;
    }
    return th__error(TH_ERR_RUNTIME, "view stride %lld * %lld overflows "
                     "int64", (long long)stride, (long long)k);
}
TH_EXPORT_AS(th_view_stride, th__view_stride);
