// Searching, counting and order statistics: unique, searchsorted,
// bincount, histc, median and mode, with libTH's semantics.  They compose
// libTHC's own calls (the stable sort, cumsum, reductions) with small
// kernels: unique marks where sorted runs start and numbers them with a
// cumsum; median and mode read each sorted row; bincount and histc add
// into their bins with atomics.  Data-dependent sizes (unique's count,
// bincount's largest value, histc's data range) cost one small read back.
#include <float.h>

#include "ops.cuh"

using namespace thc;

namespace {

void release_all(std::initializer_list<thc_tensor *> ts) {
    for (thc_tensor *t : ts) thc_tensor_release(t);
}

// the dtype the kernels compute in: 16-bit floats as float32
int compute_dtype(int dtype) { return thc__is_half(dtype) ? THC_FLOAT32 : dtype; }

// ---- unique ---------------------------------------------------------------------
// 1 where a sorted run starts (NaN never equals NaN: each is its own run)
template <typename T> struct RunStartFn {
    const T *sv;
    int64_t *flags;
    THC_HD void operator()(int64_t k) const { flags[k] = k == 0 || !(sv[k] == sv[k - 1]); }
};

// each run's value and start, each position's run (runs numbered by the
// cumsum of the flags, from 1)
template <typename T> struct RunWriteFn {
    const T *sv;
    const int64_t *si, *flags, *run;
    T *uv;
    int64_t *starts, *inv;
    THC_HD void operator()(int64_t k) const {
        int64_t g = run[k] - 1;
        if (flags[k]) {
            uv[g] = sv[k];
            starts[g] = k;
        }
        if (inv) inv[si[k]] = g;
    }
};

struct RunCountFn {
    const int64_t *starts;
    int64_t *counts;
    int64_t groups, n;
    THC_HD void operator()(int64_t g) const {
        counts[g] = (g + 1 < groups ? starts[g + 1] : n) - starts[g];
    }
};

// ---- searchsorted ---------------------------------------------------------------
template <typename T> struct SearchFn {
    const T *seq, *vals;   // contiguous, one dtype
    int64_t *out;
    int64_t L, M;          // row length of seq; values per row
    int one_row, right;
    THC_HD void operator()(int64_t k) const {
        const T *bd = seq + (one_row ? 0 : k / M) * L;
        T v = vals[k];
        int64_t lo = 0, hi = L;
        while (lo < hi) {   // PyTorch's comparisons, so NaNs land where they do there
            int64_t mid = lo + ((hi - lo) >> 1);
            bool go_right = right ? !(bd[mid] > v) : !(bd[mid] >= v);
            if (go_right) lo = mid + 1;
            else hi = mid;
        }
        out[k] = lo;
    }
};

// ---- bincount and histc ---------------------------------------------------------
template <typename T> struct BincountFn {
    const int64_t *x;
    const T *w;   // NULL: count
    T *bins;
    THC_HD void operator()(int64_t i) const { atomic_add(bins + x[i], w ? w[i] : T(1)); }
};

// PyTorch's binning in the input's precision: values outside [lo, hi] and
// NaNs are skipped, hi falls in the last bin
template <typename T> struct HistcFn {
    const T *x;
    T *h;
    int64_t bins;
    T lo, hi;
    THC_HD void operator()(int64_t i) const {
        T e = x[i];
        if (!(e >= lo && e <= hi)) return;
        T f = (e - lo) * (T)bins / (hi - lo);
        int64_t pos = f < (T)bins ? (int64_t)f : bins - 1;
        atomic_add(h + pos, T(1));
    }
};

// ---- median and mode over sorted rows --------------------------------------------
// rows of the sorted (outer, L, inner) values; one result per row
template <typename T> struct RowPickFn {
    const T *sv;
    const int64_t *si;
    T *ov;
    int64_t *oi;
    int64_t L, inner;
    int mode;
    THC_HD void operator()(int64_t r) const {
        int64_t base = (r / inner) * L * inner + r % inner;
        int64_t pos = 0, best_idx = 0;
        if (!mode) {
            // the lower median; NaN (sorted last) propagates: the first NaN of
            // the row, which the stable sort keeps first among the NaNs
            pos = (L - 1) / 2;
            T last = sv[base + (L - 1) * inner];
            if (last != last) {
                int64_t lo = 0, hi = L - 1;
                while (lo < hi) {
                    int64_t mid = lo + ((hi - lo) >> 1);
                    T m = sv[base + mid * inner];
                    if (m != m) hi = mid;
                    else lo = mid + 1;
                }
                pos = lo;
            }
            best_idx = si[base + pos * inner];
        } else {
            // the most frequent value, the smallest on ties; its index is the
            // last occurrence in the row (the stable sort keeps runs in order)
            int64_t best = 0, run = 0;
            for (int64_t k = 0; k < L; k++) {
                run++;
                bool ends = k == L - 1 || !(sv[base + k * inner] == sv[base + (k + 1) * inner]);
                if (ends) {
                    if (run > best) {
                        best = run;
                        pos = k;
                    }
                    run = 0;
                }
            }
            best_idx = si[base + pos * inner];
            for (int64_t k = pos - best + 1; k < pos; k++) {
                int64_t j = si[base + k * inner];
                if (j > best_idx) best_idx = j;
            }
        }
        ov[r] = sv[base + pos * inner];
        oi[r] = best_idx;
    }
};

int pick_along(const char *what, const thc_tensor *a, int dim, int keepdim, int mode,
               thc_tensor **values, thc_tensor **indices) {
    if (thc__check_device(what, "the input", a)) return thc_last_status();
    if (!values || !indices) return thc__error(THC_ERR_VALUE, "%s: NULL result pointer", what);
    if ((dim = thc__wrap_dim(dim, a->ndim)) < 0) return thc_last_status();
    int64_t L = a->ndim ? a->sizes[dim] : 1, inner = 1, sizes[THC_MAX_DIMS];
    if (L == 0)
        return thc__error(THC_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.",
                          what, dim);
    for (int d = 0; d < a->ndim; d++) {
        sizes[d] = d == dim ? 1 : a->sizes[d];
        if (d > dim) inner *= a->sizes[d];
    }
    int ct = compute_dtype(a->dtype);
    thc_tensor *x = thc__cast(a, ct), *sv = NULL, *si = NULL;
    int rc = x ? thc_sort(x, dim, 0, 1, &sv, &si) : thc_last_status();
    thc_tensor *v = rc ? NULL : thc_empty(a->ndim, sizes, ct);
    thc_tensor *ix = v ? thc_empty(a->ndim, sizes, THC_INT64) : NULL;
    if (!rc && !ix) rc = thc_last_status();
    int64_t rows = ix ? thc_numel(ix) : 0;
    if (!rc && rows > 0) switch (ct) {
        THC_CASES_COMPUTE(rc = for_each(what, rows,
                                        RowPickFn<scalar_t>{(const scalar_t *)thc__ptr(sv),
                                                            (const int64_t *)thc__ptr(si),
                                                            (scalar_t *)thc__ptr(v),
                                                            (int64_t *)thc__ptr(ix), L, inner,
                                                            mode},
                                        thc__stream()))
    }
    release_all({x, sv, si});
    if (!rc && ct != a->dtype) {   // back to float16 / bfloat16 (exact)
        thc_tensor *h = thc_to_dtype(v, a->dtype);
        thc_tensor_release(v);
        v = h;
        if (!h) rc = thc_last_status();
    }
    if (!rc && !keepdim && a->ndim > 0) {
        thc_tensor *qv = thc_squeeze(v, dim), *qi = qv ? thc_squeeze(ix, dim) : NULL;
        release_all({v, ix});
        v = qv;
        ix = qi;
        if (!qi) rc = thc_last_status();
    }
    if (rc) {
        release_all({v, ix});
        return rc;
    }
    *values = v;
    *indices = ix;
    return THC_OK;
}

}  // namespace

extern "C" THC_API int thc_unique(const thc_tensor *a, int sorted, thc_tensor **values,
                                  thc_tensor **inverse, thc_tensor **counts) {
    (void)sorted;   // the result is always sorted, as libTH's
    if (thc__check_device("unique", "the input", a)) return thc_last_status();
    if (!values) return thc__error(THC_ERR_VALUE, "unique: NULL result pointer");
    int ct = compute_dtype(a->dtype);
    int64_t n = thc_numel(a), groups = 0;
    thc_tensor *x = thc__cast(a, ct), *flat = x ? thc_reshape(x, 1, &n) : NULL;
    thc_tensor *sv = NULL, *si = NULL, *flags = NULL, *run = NULL, *uv = NULL, *starts = NULL;
    thc_tensor *inv = NULL, *cnt = NULL;
    int rc = flat ? THC_OK : thc_last_status();
    if (!rc && n > 0) {
        rc = thc_sort(flat, 0, 0, 1, &sv, &si);
        flags = rc ? NULL : thc_empty(1, &n, THC_INT64);
        if (!rc && !flags) rc = thc_last_status();
        if (!rc) switch (ct) {
            THC_CASES_COMPUTE(rc = for_each("unique", n,
                                            RunStartFn<scalar_t>{(const scalar_t *)thc__ptr(sv),
                                                                 (int64_t *)thc__ptr(flags)},
                                            thc__stream()))
        }
        run = rc ? NULL : thc_cumsum(flags, 0, THC_INT64);
        if (!rc && !run) rc = thc_last_status();
        if (!rc) rc = thc_get_int64(run, n - 1, &groups);   // the one read back
    }
    if (!rc) {
        uv = thc_empty(1, &groups, ct);
        starts = uv ? thc_empty(1, &groups, THC_INT64) : NULL;
        inv = starts && inverse ? thc_empty(a->ndim, a->sizes, THC_INT64) : NULL;
        cnt = starts && counts ? thc_empty(1, &groups, THC_INT64) : NULL;
        if (!starts || (inverse && !inv) || (counts && !cnt)) rc = thc_last_status();
    }
    if (!rc && n > 0) {
        switch (ct) {
            THC_CASES_COMPUTE(rc = for_each("unique", n,
                                            RunWriteFn<scalar_t>{
                                                (const scalar_t *)thc__ptr(sv),
                                                (const int64_t *)thc__ptr(si),
                                                (const int64_t *)thc__ptr(flags),
                                                (const int64_t *)thc__ptr(run),
                                                (scalar_t *)thc__ptr(uv),
                                                (int64_t *)thc__ptr(starts),
                                                inv ? (int64_t *)thc__ptr(inv) : NULL},
                                            thc__stream()))
        }
        if (!rc && cnt)
            rc = for_each("unique", groups,
                          RunCountFn{(const int64_t *)thc__ptr(starts), (int64_t *)thc__ptr(cnt),
                                     groups, n},
                          thc__stream());
    }
    release_all({x, flat, sv, si, flags, run, starts});
    if (!rc && ct != a->dtype) {   // back to float16 / bfloat16 (exact)
        thc_tensor *h = thc_to_dtype(uv, a->dtype);
        thc_tensor_release(uv);
        uv = h;
        if (!h) rc = thc_last_status();
    }
    if (rc) {
        release_all({uv, inv, cnt});
        return rc;
    }
    *values = uv;
    if (inverse) *inverse = inv;
    if (counts) *counts = cnt;
    return THC_OK;
}

extern "C" THC_API thc_tensor *thc_searchsorted(const thc_tensor *seq, const thc_tensor *v,
                                                int right, int out_int32) {
    if (thc__check_device("searchsorted", "the boundaries", seq) ||
        thc__check_device("searchsorted", "the input", v))
        return NULL;
    char b1[256], b2[256];
    if (seq->ndim == 0)
        return (thc_tensor *)thc__error_null(
            THC_ERR_RUNTIME, "torch.searchsorted(): boundaries tensor should have positive "
            "dimension, but got 0 dimension");
    bool matched = seq->ndim == 1;
    if (!matched && v->ndim == seq->ndim) {
        matched = true;
        for (int d = 0; d < seq->ndim - 1; d++) matched = matched && seq->sizes[d] == v->sizes[d];
    }
    if (!matched)
        return (thc_tensor *)thc__error_null(
            THC_ERR_RUNTIME, "torch.searchsorted(): boundaries tensor should be 1 dimension or "
            "the first N-1 dimensions of boundaries tensor and input value tensor must match, "
            "but we got boundaries tensor %s and input value tensor %s",
            thc__shape_str(seq->ndim, seq->sizes, b1), thc__shape_str(v->ndim, v->sizes, b2));
    int ct = compute_dtype(thc_promote_types(seq->dtype, v->dtype));
    thc_tensor *s1 = thc__cast(seq, ct), *sc = s1 ? thc_contiguous(s1) : NULL;
    thc_tensor *v1 = sc ? thc__cast(v, ct) : NULL, *vc = v1 ? thc_contiguous(v1) : NULL;
    thc_tensor *r = vc ? thc_empty(v->ndim, v->sizes, THC_INT64) : NULL;
    int rc = r ? THC_OK : thc_last_status();
    int64_t n = r ? thc_numel(r) : 0;
    if (!rc && n > 0) switch (ct) {
        THC_CASES_COMPUTE(rc = for_each("searchsorted", n,
                                        SearchFn<scalar_t>{(const scalar_t *)thc__ptr(sc),
                                                           (const scalar_t *)thc__ptr(vc),
                                                           (int64_t *)thc__ptr(r),
                                                           seq->sizes[seq->ndim - 1],
                                                           v->ndim ? v->sizes[v->ndim - 1] : 1,
                                                           seq->ndim == 1, right},
                                        thc__stream()))
    }
    release_all({s1, sc, v1, vc});
    if (!rc && out_int32) {
        thc_tensor *r32 = thc_to_dtype(r, THC_INT32);
        thc_tensor_release(r);
        r = r32;
        if (!r32) rc = thc_last_status();
    }
    if (rc) {
        thc_tensor_release(r);
        return NULL;
    }
    return r;
}

extern "C" THC_API thc_tensor *thc_bincount(const thc_tensor *a, const thc_tensor *weights,
                                            int64_t minlength) {
    if (thc__check_device("bincount", "the input", a) ||
        (weights && thc__check_device("bincount", "weights", weights)))
        return NULL;
    if (!thc_dtype_is_integral(a->dtype))
        return (thc_tensor *)thc__error_null(THC_ERR_TYPE, "bincount: expected an integral "
                                             "input tensor, but got %s",
                                             thc_dtype_name(a->dtype));
    if (minlength < 0)
        return (thc_tensor *)thc__error_null(THC_ERR_RUNTIME, "minlength should be >= 0");
    if (a->ndim != 1)
        return (thc_tensor *)thc__error_null(THC_ERR_RUNTIME, "bincount only supports 1-d "
                                             "non-negative integral inputs.");
    if (weights && (weights->ndim != 1 || weights->sizes[0] != a->sizes[0]))
        return (thc_tensor *)thc__error_null(THC_ERR_RUNTIME, "weights should be 1-d and have "
                                             "the same length as input");
    int64_t n = a->sizes[0], hi = -1;
    thc_tensor *x1 = thc__cast(a, THC_INT64), *x = x1 ? thc_contiguous(x1) : NULL;
    int rc = x ? THC_OK : thc_last_status();
    if (!rc && n > 0) {   // the range, read back: negatives are an error, the largest sizes
        thc_tensor *lo_t = thc_reduce(THC_RED_AMIN, x, 0, NULL, 0, -1);
        thc_tensor *hi_t = lo_t ? thc_reduce(THC_RED_AMAX, x, 0, NULL, 0, -1) : NULL;
        int64_t lo = 0;
        rc = hi_t ? thc_get_int64(lo_t, 0, &lo) : thc_last_status();
        if (!rc) rc = thc_get_int64(hi_t, 0, &hi);
        release_all({lo_t, hi_t});
        if (!rc && lo < 0)
            rc = thc__error(THC_ERR_RUNTIME, "bincount only supports 1-d non-negative integral "
                            "inputs.");
    }
    int64_t nbins = THC_MAX(minlength, hi + 1);
    // PyTorch: float32 weights give float32, other weights float64; an
    // empty input gives int64 zeros whatever the weights
    int rdt = !weights || n == 0 ? THC_INT64
              : weights->dtype == THC_FLOAT32 ? THC_FLOAT32 : THC_FLOAT64;
    thc_tensor *w1 = !rc && rdt != THC_INT64 ? thc__cast(weights, rdt) : NULL;
    thc_tensor *w = w1 ? thc_contiguous(w1) : NULL;
    if (!rc && rdt != THC_INT64 && !w) rc = thc_last_status();
    thc_tensor *r = rc ? NULL : thc_empty(1, &nbins, rdt);
    if (!rc && !r) rc = thc_last_status();
    if (!rc) rc = thc_zero(r);
    if (!rc && n > 0) {
        const int64_t *xp = (const int64_t *)thc__ptr(x);
        if (rdt == THC_INT64)
            rc = for_each("bincount", n,
                          BincountFn<int64_t>{xp, NULL, (int64_t *)thc__ptr(r)}, thc__stream());
        else if (rdt == THC_FLOAT32)
            rc = for_each("bincount", n,
                          BincountFn<float>{xp, (const float *)thc__ptr(w), (float *)thc__ptr(r)},
                          thc__stream());
        else
            rc = for_each("bincount", n,
                          BincountFn<double>{xp, (const double *)thc__ptr(w),
                                             (double *)thc__ptr(r)},
                          thc__stream());
    }
    release_all({x1, x, w1, w});
    if (rc) {
        thc_tensor_release(r);
        return NULL;
    }
    return r;
}

extern "C" THC_API thc_tensor *thc_histc(const thc_tensor *a, int64_t bins, double min,
                                         double max) {
    if (thc__check_device("histc", "the input", a)) return NULL;
    if (!thc_dtype_is_floating(a->dtype))
        return (thc_tensor *)thc__error_null(THC_ERR_TYPE, "torch.histc: expected a floating "
                                             "point input tensor, but got %s",
                                             thc_dtype_name(a->dtype));
    if (bins <= 0)
        return (thc_tensor *)thc__error_null(THC_ERR_RUNTIME, "torch.histc(): bins must be > 0, "
                                             "but got %lld for dimension 0", (long long)bins);
    int ct = compute_dtype(a->dtype);
    thc_tensor *x1 = thc__cast(a, ct), *x = x1 ? thc_contiguous(x1) : NULL;
    int rc = x ? THC_OK : thc_last_status();
    int64_t n = thc_numel(a);
    double lo = min, hi = max;
    if (!rc && lo == hi && n > 0) {   // the data's range (read back); a NaN makes it NaN
        thc_tensor *lo_t = thc_reduce(THC_RED_AMIN, x, 0, NULL, 0, -1);
        thc_tensor *hi_t = lo_t ? thc_reduce(THC_RED_AMAX, x, 0, NULL, 0, -1) : NULL;
        rc = hi_t ? thc_get_double(lo_t, 0, &lo) : thc_last_status();
        if (!rc) rc = thc_get_double(hi_t, 0, &hi);
        release_all({lo_t, hi_t});
        if (lo != lo || hi != hi) lo = hi = NAN;
    }
    if (!rc && lo == hi) {
        lo -= 1;
        hi += 1;
    }
    if (!rc && (!isfinite(lo) || !isfinite(hi)))
        rc = thc__error(THC_ERR_RUNTIME, "torch.histc: range of [%g, %g] is not finite", lo, hi);
    if (!rc && lo > hi) rc = thc__error(THC_ERR_RUNTIME, "torch.histc: max must be larger than min");
    if (!rc && a->dtype == THC_FLOAT16) {   // PyTorch's bin edges are in that dtype
        lo = thc__half_to_float(thc__float_to_half((float)lo));
        hi = thc__half_to_float(thc__float_to_half((float)hi));
    } else if (!rc && a->dtype == THC_BFLOAT16) {
        lo = thc__bf16_to_float(thc__float_to_bf16((float)lo));
        hi = thc__bf16_to_float(thc__float_to_bf16((float)hi));
    }
    thc_tensor *h = rc ? NULL : thc_empty(1, &bins, ct);
    if (!rc && !h) rc = thc_last_status();
    if (!rc) rc = thc_zero(h);
    if (!rc && n > 0) {
        if (ct == THC_FLOAT64)
            rc = for_each("histc", n,
                          HistcFn<double>{(const double *)thc__ptr(x), (double *)thc__ptr(h), bins,
                                          lo, hi},
                          thc__stream());
        else
            rc = for_each("histc", n,
                          HistcFn<float>{(const float *)thc__ptr(x), (float *)thc__ptr(h), bins,
                                         (float)lo, (float)hi},
                          thc__stream());
    }
    release_all({x1, x});
    if (!rc && ct != a->dtype) {
        thc_tensor *r = thc_to_dtype(h, a->dtype);
        thc_tensor_release(h);
        h = r;
        if (!r) rc = thc_last_status();
    }
    if (rc) {
        thc_tensor_release(h);
        return NULL;
    }
    return h;
}

extern "C" THC_API int thc_median_dim(const thc_tensor *a, int dim, int keepdim,
                                      thc_tensor **values, thc_tensor **indices) {
    return pick_along("median", a, dim, keepdim, 0, values, indices);
}

extern "C" THC_API thc_tensor *thc_median(const thc_tensor *a) {
    if (thc__check_device("median", "the input", a)) return NULL;
    int64_t n = thc_numel(a);
    if (n == 0 && thc_dtype_is_floating(a->dtype)) {   // PyTorch: NaN
        thc_tensor *r = thc_empty(0, NULL, a->dtype);
        if (r && thc_fill_double(r, NAN)) {
            thc_tensor_release(r);
            return NULL;
        }
        return r;
    }
    thc_tensor *flat = thc_reshape(a, 1, &n), *v = NULL, *ix = NULL;
    if (!flat) return NULL;
    int rc = pick_along("median", flat, 0, 0, 0, &v, &ix);
    thc_tensor_release(flat);
    thc_tensor_release(ix);
    return rc ? NULL : v;
}

extern "C" THC_API int thc_mode(const thc_tensor *a, int dim, int keepdim, thc_tensor **values,
                                thc_tensor **indices) {
    return pick_along("mode", a, dim, keepdim, 1, values, indices);
}
