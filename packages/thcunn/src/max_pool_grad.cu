// The max poolings' backward: a scatter along the saved indices with
// atomic adds (windows may share a maximum), after a check of every index
// on the device.  Rules, checks and messages are libTHNN's
// (src/max_pool_grad.c).
#include "max_pool_grad.h"

using namespace thcunn;

namespace {

// ---- checks with libTHNN's wording (plus "on a device") ----------------

int check_dtype(const char *fn, const char *name, const thc_tensor *t, int dtype) {
    if (thcunn__check_device(fn, name, t)) return thcunn_last_status();
    if (t->dtype != dtype)
        return thcunn__error(THC_ERR_TYPE, "%s: expected scalar type %s but found %s for %s", fn,
                             thcunn__type_name(dtype), thcunn__type_name(t->dtype), name);
    return THC_OK;
}

// ---- the max backwards: scatter along the indices -------------------------
#ifdef __CUDACC__
__device__ inline void atomic_min_i64(int64_t *p, int64_t v) {
    atomicMin((long long *)p, (long long)v);
}
#else
inline void atomic_min_i64(int64_t *p, int64_t v) {
    if (v < *p) *p = v;
}
#endif

// *first = the smallest position whose index is neither -1 nor in the
// plane (a template only so that nvcc compiles its host side lazily)
template <typename I> struct BadIndexFn {
    const I *ind;
    int64_t in_plane;
    I *first;
    THCUNN_HD void operator()(int64_t i) const {
        I k = ind[i];
        if (k < -1 || k >= in_plane) atomic_min_i64(first, i);
    }
};

template <typename T> struct ScatterFn {
    T *gin;
    const T *gout;
    const int64_t *ind;
    int64_t in_plane, out_plane;
    THCUNN_HD void operator()(int64_t i) const {
        int64_t k = ind[i];
        if (k >= 0 && k < in_plane) atomic_add(gin + (i / out_plane) * in_plane + k, gout[i]);
    }
};

}  // namespace

// libTHNN's thnn__max_pool_backward (see max_pool_grad.h)
int thcunn::max_pool_backward(const char *fn, thc_tensor *grad_input, const thc_tensor *grad_output,
                      const thc_tensor *indices, int spatial) {
    char a[256], b[256], c[256];
    if (thcunn__check_runtime(fn) || thcunn__check_float(fn, "grad_input", grad_input) ||
        thcunn__check_like(fn, "grad_input", grad_input, grad_input) ||
        thcunn__check_float(fn, "grad_output", grad_output) ||
        check_dtype(fn, "indices", indices, THC_INT64))
        return thcunn_last_status();
    if (grad_output->dtype != grad_input->dtype)
        return thcunn__error(THC_ERR_TYPE, "%s: grad_output type (%s) and grad_input type (%s) "
                             "should be the same", fn, thcunn__type_name(grad_output->dtype),
                             thcunn__type_name(grad_input->dtype));
    const int d = grad_input->ndim, lead = d - spatial;
    int ok = (lead == 1 || lead == 2) && grad_output->ndim == d && indices->ndim == d;
    for (int i = 0; ok && i < d; i++)
        ok = grad_output->sizes[i] == indices->sizes[i] &&
             (i >= lead || grad_output->sizes[i] == grad_input->sizes[i]);
    if (!ok)
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output %s and indices %s do not match "
                             "grad_input %s (%dD or %dD, same leading dims)", fn,
                             thcunn__shape_of(grad_output, a), thcunn__shape_of(indices, b),
                             thcunn__shape_of(grad_input, c),
                             spatial + 1, spatial + 2);
    int64_t planes = 1, in_plane = 1, out_plane = 1;
    for (int i = 0; i < d; i++) {
        if (i < lead) {
            planes *= grad_input->sizes[i];
        } else {
            in_plane *= grad_input->sizes[i];
            out_plane *= grad_output->sizes[i];
        }
    }
    const int64_t n = planes * out_plane, one = 1;
    thc_tensor *go = thcunn__contig(grad_output), *ind = go ? thcunn__contig(indices) : NULL;
    thc_tensor *first = ind && n > 0 ? thc_empty(1, &one, THC_INT64) : NULL;
    int rc = !ind ? thcunn_last_status() : n > 0 && !first ? thcunn__from_thc() : THC_OK;
    if (!rc && n > 0) {
        // the first bad position, found on the device and read back (the one
        // host synchronisation: nothing may be written when an index is bad)
        int64_t pos = n, bad = 0;
        if (thc_copy_from_host(first, &pos)) rc = thcunn__from_thc();
        if (!rc)
            rc = for_each(fn, n, BadIndexFn<int64_t>{data<int64_t>(ind), in_plane,
                                                     data<int64_t>(first)});
        if (!rc && thc_copy_to_host(&pos, first)) rc = thcunn__from_thc();
        if (!rc && pos < n) {
            rc = thc_get_int64(ind, pos, &bad)
                     ? thcunn__from_thc()
                     : thcunn__error(THC_ERR_INDEX, "%s: index %lld out of range for an input "
                                     "plane of %lld elements", fn, (long long)bad,
                                     (long long)in_plane);
        }
    }
    if (!rc && thc_zero(grad_input)) rc = thcunn__from_thc();
    if (!rc && n > 0)
        THCUNN_FLOATING(go->dtype, rc = for_each(fn, n,
                                                 ScatterFn<scalar_t>{data<scalar_t>(grad_input),
                                                                     data<scalar_t>(go),
                                                                     data<int64_t>(ind),
                                                                     in_plane, out_plane}))
    thc_tensor_release(go);
    thc_tensor_release(ind);
    thc_tensor_release(first);
    return rc;
}
