/* libTH's C test programs: the harness installed with libTH (th_check.h),
 * and same() for checking a tensor's shape and values. */
#ifndef TH_TESTS_CHECK_H
#define TH_TESTS_CHECK_H
#include "th.h"
#include "th_check.h"

/* the real dtypes (float32 .. bool) come before complex64 and complex128 */
#define TH_NUM_REAL_DTYPES (TH_BOOL + 1)

/* 1 if t has the given shape and values (NaN matches NaN). */
static inline int same(const th_tensor *t, int ndim, const int64_t *sizes,
                       const double *vals) {
    if (!t || t->ndim != ndim) return 0;
    for (int i = 0; i < ndim; i++)
        if (t->sizes[i] != sizes[i]) return 0;
    int64_t n = th_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (th_get_double(t, i, &v) != TH_OK) return 0;
        if (isnan(vals[i]) ? !isnan(v) : v != vals[i]) {
            fprintf(stderr, "  element %lld: got %g, want %g\n", (long long)i,
                    v, vals[i]);
            return 0;
        }
    }
    return 1;
}
#endif
