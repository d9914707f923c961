// embedding and embedding_bag: rows of a (num, dim) table gathered by
// int64 indices (and, for bags, reduced by sum, mean or max).  The
// arguments are libTHNN's, and so are the error statuses and messages.
//
// Every int64 array that addresses memory (indices, offsets, offset2bag,
// max_indices) is checked on the device before anything is written: one
// kernel records, per array, the first bad position with an atomic max of
// (n - position), and one small stream-ordered read brings the result
// back, as libTHC's index_select does.  Only when something is bad are
// the offending values read (thc_get_int64) to word the message.
//
// Forward: a thread per output element (embedding) or per (bag, column)
// walking its bag in index order (embedding_bag: the same order and
// tie rule as libTHNN).  Backward: a thread per (index, column) adding
// atomically, since rows repeat.
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

const char *mode_name(int mode) {
    return mode == THCUNN_EMBEDDING_BAG_SUM ? "sum" : mode == THCUNN_EMBEDDING_BAG_MEAN ? "mean"
                                                                                      : "max";
}

int check_long_1d(const char *fn, const char *name, const thc_tensor *t) {
    char a[256];
    if (thcunn__check_device(fn, name, t)) return thcunn_last_status();
    if (t->dtype != THC_INT64)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected %s of scalar type Long but found %s",
                             fn, name, thcunn__type_name(t->dtype));
    if (t->ndim != 1)
        return thcunn__error(THC_ERR_VALUE, "%s: %s has to be a 1D Tensor, but got a tensor of "
                             "shape %s", fn, name, thcunn__shape_of(t, a));
    return THC_OK;
}

// ---- the device checks -------------------------------------------------
THCUNN_HD inline void atomic_max_i64(int64_t *p, int64_t v) {
#ifdef __CUDA_ARCH__
    atomicMax((long long *)p, (long long)v);
#else
    if (v > *p) *p = v;
#endif
}

enum { RANGE = 0, OFFSETS = 1 };

// One array to check: RANGE wants lo <= p[i] < hi; OFFSETS wants p[0] == 0
// and p[i - 1] <= p[i] <= hi (hi: the number of indices).
struct Check {
    const int64_t *p;
    int64_t n, lo, hi;
    int kind;
};

struct CheckFn {
    Check c[3];
    int nc;
    int64_t *worst;   // per check: max over bad positions of n - position (0: none)
    THCUNN_HD void operator()(int64_t i) const {
        for (int k = 0; k < nc; k++) {
            const Check &ck = c[k];
            if (i >= ck.n) continue;
            int64_t v = ck.p[i];
            bool bad = ck.kind == RANGE ? v < ck.lo || v >= ck.hi
                                        : (i == 0 ? v != 0 : v > ck.hi || v < ck.p[i - 1]);
            if (bad) atomic_max_i64(worst + k, ck.n - i);
        }
    }
};

// Runs up to three checks in one kernel; first[k]: the first bad position
// of check k, or -1.
int run_checks(const char *fn, const Check *checks, int nc, int64_t *first) {
    CheckFn f;
    int64_t n = 0, three = 3;
    f.nc = nc;
    for (int k = 0; k < 3; k++) {
        f.c[k] = k < nc ? checks[k] : Check{NULL, 0, 0, 0, RANGE};
        if (f.c[k].n > n) n = f.c[k].n;
        first[k] = -1;
    }
    if (n == 0) return THC_OK;
    thc_tensor *worst = thc_empty(1, &three, THC_INT64);
    int rc = worst && !thc_zero(worst) ? THC_OK : thcunn__from_thc();
    f.worst = worst ? data<int64_t>(worst) : NULL;
    if (!rc) rc = for_each(fn, n, f);
    int64_t h[3] = {0, 0, 0};
    if (!rc && thc_copy_to_host(h, worst)) rc = thcunn__from_thc();
    for (int k = 0; !rc && k < nc; k++) first[k] = h[k] ? f.c[k].n - h[k] : -1;
    thc_tensor_release(worst);
    return rc;
}

// element i of a (contiguous int64) device tensor, for a message
int64_t value_at(const thc_tensor *t, int64_t i) {
    int64_t v = 0;
    thc_get_int64(t, i, &v);
    return v;
}

int bad_index(const thc_tensor *ic, int64_t pos, int64_t num) {
    return thcunn__error(THC_ERR_INDEX, "embedding_bag: index %lld (at position %lld of indices) "
                         "is out of range for a table of %lld rows",
                         (long long)value_at(ic, pos), (long long)pos, (long long)num);
}

int bad_offset2bag(const char *fn, const thc_tensor *o2b, int64_t pos, int64_t B) {
    return thcunn__error(THC_ERR_INDEX, "%s: offset2bag[%lld] = %lld is out of range for %lld "
                         "bags", fn, (long long)pos, (long long)value_at(o2b, pos), (long long)B);
}

// ---- kernels -------------------------------------------------------------
template <typename T> struct GatherFn {
    T *out;
    const T *w;
    const int64_t *idx;
    int64_t D;
    THCUNN_HD void operator()(int64_t i) const {
        int64_t k = i / D, d = i - k * D;
        out[i] = w[idx[k] * D + d];
    }
};

template <typename T> struct ScatterAddFn {
    T *gw;
    const T *gy;
    const int64_t *idx;
    int64_t D, padding_idx;
    THCUNN_HD void operator()(int64_t i) const {
        int64_t k = i / D, d = i - k * D, row = idx[k];
        if (row != padding_idx) atomic_add(gw + row * D + d, gy[i]);
    }
};

// a thread per (bag, column); Dt = max(D, 1) so that a table of no
// columns still writes offset2bag and bag_size (column 0 does that)
template <typename T> struct BagForwardFn {
    T *out;
    int64_t *o2b, *bsz, *mi;
    const T *w, *pw;
    const int64_t *ip, *op;
    int64_t n, B, D, Dt, padding_idx;
    int mode;
    THCUNN_HD void operator()(int64_t t) const {
        int64_t b = t / Dt, d = t - b * Dt;
        int64_t start = op[b], end = b + 1 < B ? op[b + 1] : n;
        bool col = d < D, lead = d == 0;
        T acc = 0;
        int64_t count = 0, arg = -1;
        for (int64_t i = start; i < end; i++) {
            if (lead) o2b[i] = b;
            int64_t row = ip[i];
            if (row == padding_idx) continue;
            if (col) {
                T v = w[row * D + d];
                if (mi) {
                    // the first counted index wins ties; a NaN (v != v) sticks
                    if (count == 0 || v > acc || (v != v && acc == acc)) {
                        acc = v;
                        arg = row;
                    }
                } else {
                    acc += (pw ? pw[i] : T(1)) * v;
                }
            }
            count++;
        }
        if (lead) bsz[b] = count;
        if (!col) return;
        if (mode == THCUNN_EMBEDDING_BAG_MEAN && count > 0) acc /= (T)count;
        out[b * D + d] = acc;
        if (mi) mi[b * D + d] = arg;
    }
};

// sum / mean: a thread per (index, column)
template <typename T> struct BagBackwardFn {
    T *gw;
    const T *gy, *pw;
    const int64_t *ip, *o2b, *bsz;
    int64_t D, padding_idx;
    int mode;
    THCUNN_HD void operator()(int64_t t) const {
        int64_t i = t / D, d = t - i * D, b = o2b[i], row = ip[i];
        if (b < 0 || row == padding_idx) return;
        T sc = pw ? pw[i] : T(1);
        if (mode == THCUNN_EMBEDDING_BAG_MEAN) sc = bsz[b] > 0 ? sc / (T)bsz[b] : T(0);
        atomic_add(gw + row * D + d, sc * gy[b * D + d]);
    }
};

// max: a thread per (bag, column) sends its gradient to the winning row
template <typename T> struct BagMaxBackwardFn {
    T *gw;
    const T *gy;
    const int64_t *mi;
    int64_t D, padding_idx;
    THCUNN_HD void operator()(int64_t t) const {
        int64_t row = mi[t], d = t % D;
        if (row >= 0 && row != padding_idx) atomic_add(gw + row * D + d, gy[t]);
    }
};

// a thread per index: the dot product of its bag's gradient and its row
template <typename T> struct PerSampleFn {
    T *gp;
    const T *gy, *w;
    const int64_t *ip, *o2b;
    int64_t D, padding_idx;
    THCUNN_HD void operator()(int64_t i) const {
        double s = 0;
        int64_t b = o2b[i], row = ip[i];
        if (b >= 0 && row != padding_idx) {
            const T *g = gy + b * D, *wr = w + row * D;
            for (int64_t d = 0; d < D; d++) s += (double)g[d] * (double)wr[d];
        }
        gp[i] = (T)s;
    }
};

// contiguous copies of up to six inputs (NULL stays NULL), released together
struct Contig {
    thc_tensor *t[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    int n = 0;
    bool failed = false;
    thc_tensor *operator()(const thc_tensor *src) {
        if (!src || failed) return NULL;
        thc_tensor *c = thc_contiguous(src);
        if (!c) failed = true;
        return t[n++] = c;
    }
    ~Contig() {
        for (int i = 0; i < n; i++) thc_tensor_release(t[i]);
    }
};

// ---- embedding checks ---------------------------------------------------
int check_indices_dtype(const char *fn, const thc_tensor *indices) {
    if (thcunn__check_device(fn, "indices", indices)) return thcunn_last_status();
    if (indices->dtype != THC_INT64)
        return thcunn__error(THC_ERR_RUNTIME, "Expected tensor for argument #1 'indices' to have "
                             "scalar type Long; but got %s instead",
                             thcunn__type_name(indices->dtype));
    return THC_OK;
}

int check_embedding_rows(const char *fn, const thc_tensor *ic, int64_t num) {
    Check c{data<int64_t>(ic), thc_numel(ic), 0, num, RANGE};
    int64_t first[3];
    if (run_checks(fn, &c, 1, first)) return thcunn_last_status();
    if (first[0] >= 0)
        return thcunn__error(THC_ERR_INDEX, "index %lld is out of bounds for an embedding of "
                             "%lld rows", (long long)value_at(ic, first[0]), (long long)num);
    return THC_OK;
}

// weight-like (num, dim) float tensor, mode, 1-D int64 indices and
// per_sample_weights: libTHNN's check_common
int check_common(const char *fn, const thc_tensor *wl, const char *wname,
                 const thc_tensor *indices, const thc_tensor *psw, int mode) {
    char a[256], b[256];
    if (thcunn__check_float(fn, wname, wl)) return thcunn_last_status();
    if (wl->ndim != 2)
        return thcunn__error(THC_ERR_RUNTIME, "%s: %s must be 2-D, got %s", fn, wname,
                             thcunn__shape_of(wl, a));
    if (mode < THCUNN_EMBEDDING_BAG_SUM || mode > THCUNN_EMBEDDING_BAG_MAX)
        return thcunn__error(THC_ERR_VALUE, "%s: %d is not a valid mode (0 sum, 1 mean, 2 max)",
                             fn, mode);
    if (check_long_1d(fn, "indices", indices)) return thcunn_last_status();
    if (psw) {
        if (thcunn__check_device(fn, "per_sample_weights", psw)) return thcunn_last_status();
        if (mode != THCUNN_EMBEDDING_BAG_SUM)
            return thcunn__error(THC_ERR_VALUE, "embedding_bag: per_sample_weights is only "
                                 "supported for mode='sum' (got mode='%s')", mode_name(mode));
        if (psw->dtype != wl->dtype)
            return thcunn__error(THC_ERR_TYPE, "embedding_bag: expected per_sample_weights of "
                                 "scalar type %s but found %s", thcunn__type_name(wl->dtype),
                                 thcunn__type_name(psw->dtype));
        if (psw->ndim != 1 || psw->sizes[0] != indices->sizes[0])
            return thcunn__error(THC_ERR_VALUE, "embedding_bag: expected per_sample_weights %s "
                                 "to have the shape of indices %s",
                                 thcunn__shape_of(psw, a),
                                 thcunn__shape_of(indices, b));
    }
    return THC_OK;
}

int check_offset2bag(const char *fn, const thc_tensor *o2b, int64_t n) {
    char a[256];
    if (check_long_1d(fn, "offset2bag", o2b)) return thcunn_last_status();
    if (o2b->sizes[0] != n)
        return thcunn__error(THC_ERR_RUNTIME, "%s: offset2bag %s must have the shape of indices "
                             "[%lld]", fn, thcunn__shape_of(o2b, a),
                             (long long)n);
    return THC_OK;
}

}  // namespace

// ---- embedding --------------------------------------------------------------
extern "C" THCUNN_API int thcunn_embedding_forward(thc_tensor *output, const thc_tensor *weight,
                                                   const thc_tensor *indices) {
    static const char fn[] = "embedding";
    char a[256];
    if (thcunn__check_runtime(fn) || thcunn__check_float(fn, "weight", weight))
        return thcunn_last_status();
    if (weight->ndim != 2)
        return thcunn__error(THC_ERR_RUNTIME, "'weight' must be 2-D, got %s",
                             thcunn__shape_of(weight, a));
    if (check_indices_dtype(fn, indices)) return thcunn_last_status();
    if (indices->ndim + 1 > THC_MAX_DIMS)
        return thcunn__error(THC_ERR_RUNTIME, "%s: too many index dims", fn);
    int64_t os[THC_MAX_DIMS];
    for (int i = 0; i < indices->ndim; i++) os[i] = indices->sizes[i];
    const int64_t num = weight->sizes[0], D = weight->sizes[1];
    os[indices->ndim] = D;
    if (thcunn__check_out(fn, "output", output, indices->ndim + 1, os, weight->dtype))
        return thcunn_last_status();
    Contig c;
    thc_tensor *ic = c(indices), *w = c(weight);
    if (c.failed) return thcunn__from_thc();
    int rc = check_embedding_rows(fn, ic, num);
    if (!rc)
        THCUNN_FLOATING(w->dtype, rc = for_each(fn, thc_numel(ic) * D,
                                                GatherFn<scalar_t>{data<scalar_t>(output),
                                                                   data<scalar_t>(w),
                                                                   data<int64_t>(ic), D}))
    return rc;
}

extern "C" THCUNN_API int thcunn_embedding_backward_params(thc_tensor *grad_weight,
                                                           const thc_tensor *grad_output,
                                                           const thc_tensor *indices,
                                                           int64_t padding_idx) {
    static const char fn[] = "embedding_backward_params";
    char a[256];
    if (thcunn__check_runtime(fn) || thcunn__check_float(fn, "grad_weight", grad_weight))
        return thcunn_last_status();
    if (!thc_is_contiguous(grad_weight))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_weight must be contiguous", fn);
    if (grad_weight->ndim != 2)
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_weight must be 2-D, got %s", fn,
                             thcunn__shape_of(grad_weight, a));
    if (check_indices_dtype(fn, indices)) return thcunn_last_status();
    const int64_t num = grad_weight->sizes[0], D = grad_weight->sizes[1];
    const int64_t n = thc_numel(indices);
    Contig c;
    thc_tensor *ic = c(indices);
    if (c.failed) return thcunn__from_thc();
    if (check_embedding_rows(fn, ic, num) || thcunn__check_float(fn, "grad_output", grad_output))
        return thcunn_last_status();
    if (thc_numel(grad_output) != n * D || grad_output->dtype != grad_weight->dtype)
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output %s does not match indices and "
                             "grad_weight", fn,
                             thcunn__shape_of(grad_output, a));
    thc_tensor *gy = c(grad_output);
    if (c.failed || thc_zero(grad_weight)) return thcunn__from_thc();
    int rc = THC_OK;
    THCUNN_FLOATING(gy->dtype, rc = for_each(fn, n * D,
                                             ScatterAddFn<scalar_t>{data<scalar_t>(grad_weight),
                                                                    data<scalar_t>(gy),
                                                                    data<int64_t>(ic), D,
                                                                    padding_idx}))
    return rc;
}

// ---- embedding_bag ------------------------------------------------------------
extern "C" THCUNN_API int thcunn_embedding_bag_forward(
    thc_tensor *output, thc_tensor *offset2bag, thc_tensor *bag_size, thc_tensor *max_indices,
    const thc_tensor *weight, const thc_tensor *indices, const thc_tensor *offsets,
    const thc_tensor *per_sample_weights, int mode, int include_last_offset,
    int64_t padding_idx) {
    static const char fn[] = "embedding_bag";
    if (thcunn__check_runtime(fn) ||
        check_common(fn, weight, "weight", indices, per_sample_weights, mode) ||
        check_long_1d(fn, "offsets", offsets))
        return thcunn_last_status();
    const int64_t num = weight->sizes[0], D = weight->sizes[1], n = indices->sizes[0];
    const int64_t nofs = offsets->sizes[0];
    if (include_last_offset && nofs < 1)
        return thcunn__error(THC_ERR_VALUE, "embedding_bag: include_last_offset needs at least "
                             "one offset, but offsets is empty");
    const int64_t B = include_last_offset ? nofs - 1 : nofs;
    const int64_t os[2] = {B, D};
    const bool is_max = mode == THCUNN_EMBEDDING_BAG_MAX;
    if (thcunn__check_out(fn, "output", output, 2, os, weight->dtype) ||
        thcunn__check_out(fn, "offset2bag", offset2bag, 1, &n, THC_INT64) ||
        thcunn__check_out(fn, "bag_size", bag_size, 1, &B, THC_INT64) ||
        (is_max && thcunn__check_out(fn, "max_indices", max_indices, 2, os, THC_INT64)))
        return thcunn_last_status();
    Contig c;
    thc_tensor *ic = c(indices), *oc = c(offsets), *w = c(weight);
    thc_tensor *pw = c(per_sample_weights);
    if (c.failed) return thcunn__from_thc();
    Check checks[2] = {{data<int64_t>(ic), n, 0, num, RANGE},
                       {data<int64_t>(oc), nofs, 0, n, OFFSETS}};
    int64_t first[3];
    if (run_checks(fn, checks, 2, first)) return thcunn_last_status();
    if (first[0] >= 0) return bad_index(ic, first[0], num);
    if (first[1] == 0)
        return thcunn__error(THC_ERR_VALUE, "embedding_bag: offsets[0] has to be 0, i.e., the "
                             "first sequence in the mini-batch has to start from position 0. "
                             "However, got %lld", (long long)value_at(oc, 0));
    if (first[1] > 0) {
        int64_t b = first[1], v = value_at(oc, b), prev = value_at(oc, b - 1);
        if (v > n)
            return thcunn__error(THC_ERR_VALUE, "embedding_bag: offsets[%lld] = %lld is greater "
                                 "than the length of indices (%lld)", (long long)b,
                                 (long long)v, (long long)n);
        return thcunn__error(THC_ERR_VALUE, "embedding_bag: offsets must be non-decreasing, but "
                             "offsets[%lld] = %lld < offsets[%lld] = %lld", (long long)b,
                             (long long)v, (long long)(b - 1), (long long)prev);
    }
    // the bags cover every index when there is one; -1 stays when there is none
    if (thc_fill_double(offset2bag, -1)) return thcunn__from_thc();
    const int64_t Dt = D > 0 ? D : 1;
    int rc = THC_OK;
    THCUNN_FLOATING(w->dtype,
                    rc = for_each(fn, B * Dt,
                                  BagForwardFn<scalar_t>{
                                      data<scalar_t>(output), data<int64_t>(offset2bag),
                                      data<int64_t>(bag_size),
                                      is_max ? data<int64_t>(max_indices) : NULL,
                                      data<scalar_t>(w), pw ? data<scalar_t>(pw) : NULL,
                                      data<int64_t>(ic), data<int64_t>(oc), n, B, D, Dt,
                                      padding_idx, mode}))
    return rc;
}

extern "C" THCUNN_API int thcunn_embedding_bag_backward_params(
    thc_tensor *grad_weight, const thc_tensor *grad_output, const thc_tensor *indices,
    const thc_tensor *offset2bag, const thc_tensor *bag_size, const thc_tensor *max_indices,
    const thc_tensor *per_sample_weights, int mode, int64_t padding_idx) {
    static const char fn[] = "embedding_bag_backward_params";
    char a[256];
    if (thcunn__check_runtime(fn) ||
        check_common(fn, grad_weight, "grad_weight", indices, per_sample_weights, mode))
        return thcunn_last_status();
    if (!thc_is_contiguous(grad_weight))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_weight must be contiguous", fn);
    const int64_t num = grad_weight->sizes[0], D = grad_weight->sizes[1];
    const int64_t n = indices->sizes[0];
    if (check_long_1d(fn, "offset2bag", offset2bag) || check_long_1d(fn, "bag_size", bag_size) ||
        check_offset2bag(fn, offset2bag, n))
        return thcunn_last_status();
    const int64_t B = bag_size->sizes[0];
    if (thcunn__check_float(fn, "grad_output", grad_output)) return thcunn_last_status();
    if (grad_output->ndim != 2 || grad_output->sizes[0] != B || grad_output->sizes[1] != D ||
        grad_output->dtype != grad_weight->dtype)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected grad_output of shape [%lld, %lld] and "
                             "scalar type %s but got %s (%s)", fn, (long long)B, (long long)D,
                             thcunn__type_name(grad_weight->dtype),
                             thcunn__shape_of(grad_output, a),
                             thcunn__type_name(grad_output->dtype));
    const bool is_max = mode == THCUNN_EMBEDDING_BAG_MAX;
    if (is_max) {
        if (!max_indices)
            return thcunn__error(THC_ERR_VALUE, "%s: mode 'max' needs max_indices", fn);
        if (thcunn__check_device(fn, "max_indices", max_indices)) return thcunn_last_status();
        if (max_indices->dtype != THC_INT64 || max_indices->ndim != 2 ||
            max_indices->sizes[0] != B || max_indices->sizes[1] != D)
            return thcunn__error(THC_ERR_RUNTIME, "%s: expected max_indices of shape [%lld, %lld] "
                                 "and scalar type Long but got %s (%s)", fn, (long long)B,
                                 (long long)D,
                                 thcunn__shape_of(max_indices, a),
                                 thcunn__type_name(max_indices->dtype));
    }
    Contig c;
    thc_tensor *gy = c(grad_output), *ic = c(indices), *o2b = c(offset2bag);
    thc_tensor *bsz = c(bag_size), *mi = is_max ? c(max_indices) : NULL;
    thc_tensor *pw = c(per_sample_weights);
    if (c.failed) return thcunn__from_thc();
    // everything that addresses grad_weight or grad_output, before writing
    Check checks[3] = {{data<int64_t>(ic), n, 0, num, RANGE},
                       {data<int64_t>(o2b), n, -1, B, RANGE},
                       {mi ? data<int64_t>(mi) : NULL, mi ? B * D : 0, -1, num, RANGE}};
    int64_t first[3];
    if (run_checks(fn, checks, 3, first)) return thcunn_last_status();
    if (first[0] >= 0) return bad_index(ic, first[0], num);
    if (first[1] >= 0) return bad_offset2bag(fn, o2b, first[1], B);
    if (first[2] >= 0)
        return thcunn__error(THC_ERR_INDEX, "%s: max_indices holds row %lld, out of range for a "
                             "table of %lld rows", fn, (long long)value_at(mi, first[2]),
                             (long long)num);
    if (thc_zero(grad_weight)) return thcunn__from_thc();
    int rc = THC_OK;
    if (is_max)
        THCUNN_FLOATING(gy->dtype,
                        rc = for_each(fn, B * D,
                                      BagMaxBackwardFn<scalar_t>{data<scalar_t>(grad_weight),
                                                                 data<scalar_t>(gy),
                                                                 data<int64_t>(mi), D,
                                                                 padding_idx}))
    else
        THCUNN_FLOATING(gy->dtype,
                        rc = for_each(fn, n * D,
                                      BagBackwardFn<scalar_t>{
                                          data<scalar_t>(grad_weight), data<scalar_t>(gy),
                                          pw ? data<scalar_t>(pw) : NULL, data<int64_t>(ic),
                                          data<int64_t>(o2b), data<int64_t>(bsz), D,
                                          padding_idx, mode}))
    return rc;
}

extern "C" THCUNN_API int thcunn_embedding_bag_backward_per_sample_weights(
    thc_tensor *grad_per_sample_weights, const thc_tensor *grad_output, const thc_tensor *weight,
    const thc_tensor *indices, const thc_tensor *offset2bag, int mode, int64_t padding_idx) {
    static const char fn[] = "embedding_bag_backward_per_sample_weights";
    char a[256];
    if (thcunn__check_runtime(fn) || check_common(fn, weight, "weight", indices, NULL, mode))
        return thcunn_last_status();
    if (mode != THCUNN_EMBEDDING_BAG_SUM)
        return thcunn__error(THC_ERR_VALUE, "embedding_bag_backward: per_sample_weights only "
                             "supported for mode='sum' (got mode='%s')", mode_name(mode));
    const int64_t num = weight->sizes[0], D = weight->sizes[1], n = indices->sizes[0];
    if (thcunn__check_out(fn, "grad_per_sample_weights", grad_per_sample_weights, 1, &n,
                  weight->dtype) ||
        check_offset2bag(fn, offset2bag, n) || thcunn__check_float(fn, "grad_output", grad_output))
        return thcunn_last_status();
    if (grad_output->ndim != 2 || grad_output->sizes[1] != D ||
        grad_output->dtype != weight->dtype)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected grad_output of shape [bags, %lld] "
                             "and scalar type %s but got %s (%s)", fn, (long long)D,
                             thcunn__type_name(weight->dtype),
                             thcunn__shape_of(grad_output, a),
                             thcunn__type_name(grad_output->dtype));
    const int64_t B = grad_output->sizes[0];
    Contig c;
    thc_tensor *gy = c(grad_output), *w = c(weight), *ic = c(indices), *o2b = c(offset2bag);
    if (c.failed) return thcunn__from_thc();
    Check checks[2] = {{data<int64_t>(ic), n, 0, num, RANGE},
                       {data<int64_t>(o2b), n, -1, B, RANGE}};
    int64_t first[3];
    if (run_checks(fn, checks, 2, first)) return thcunn_last_status();
    if (first[0] >= 0) return bad_index(ic, first[0], num);
    if (first[1] >= 0) return bad_offset2bag(fn, o2b, first[1], B);
    int rc = THC_OK;
    THCUNN_FLOATING(w->dtype,
                    rc = for_each(fn, n,
                                  PerSampleFn<scalar_t>{data<scalar_t>(grad_per_sample_weights),
                                                        data<scalar_t>(gy), data<scalar_t>(w),
                                                        data<int64_t>(ic), data<int64_t>(o2b),
                                                        D, padding_idx}))
    return rc;
}
