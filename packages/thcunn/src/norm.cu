// layer_norm over rows (M, K) and group_norm over (N, G) groups of
// (C/G) * L contiguous elements.  Statistics: a thread per row (or
// group), two passes in double (mean, then squared deviations), kept in
// float64 temporaries for the element-wise passes, which run a thread per
// element in double.  Parameter gradients: layer_norm a thread per column
// looping over rows (no races), group_norm a thread per (sample, channel)
// adding atomically into float64 sums.  Long rows (or few of them, or
// many rows under few columns for layer_norm's parameters) would leave
// the GPU idle with a thread per row or column: there the same sums are
// composed of libTHC's reductions (which split long rows over many
// threads and accumulate in double) over float64 copies.  Checks and
// messages are libTHNN's (src/norm.c).
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

// contiguous copies (new references) of optional tensors; 0 or a status
int contig(const char *fn, const thc_tensor *t, thc_tensor **out) {
    *out = NULL;
    if (!t) return THC_OK;
    *out = thc_contiguous(t);
    return *out ? THC_OK : thcunn__thc_failed(fn);
}

thc_tensor *f64(const char *fn, int64_t n) {   // a float64 vector of n
    thc_tensor *t = thc_empty(1, &n, THC_FLOAT64);
    if (!t) thcunn__thc_failed(fn);
    return t;
}

// ---- layer_norm kernels --------------------------------------------------

// row m: two-pass mean and invstd, in double
template <typename T> struct LnStatsFn {
    double *mean, *invstd;
    T *save_mean, *save_invstd;
    const T *x;
    int64_t K;
    double eps;
    THCUNN_HD void operator()(int64_t m) const {
        const T *r = x + m * K;
        double s = 0, ss = 0;
        for (int64_t k = 0; k < K; k++) s += (double)r[k];
        const double mu = s / (double)K;
        for (int64_t k = 0; k < K; k++) {
            const double d = (double)r[k] - mu;
            ss += d * d;
        }
        const double is = 1.0 / sqrt(ss / (double)K + eps);
        mean[m] = mu;
        invstd[m] = is;
        save_mean[m] = (T)mu;
        save_invstd[m] = (T)is;
    }
};

// y = (x - mean) * invstd * w + b, element i = (m, k)
template <typename T> struct LnOutFn {
    T *y;
    const T *x, *w, *b;
    const double *mean, *invstd;
    int64_t K;
    THCUNN_HD void operator()(int64_t i) const {
        const int64_t m = i / K, k = i % K;
        double v = ((double)x[i] - mean[m]) * invstd[m];
        if (w) v *= (double)w[k];
        if (b) v += (double)b[k];
        y[i] = (T)v;
    }
};

// row m: sum(g * w) and sum(g * w * xhat)
template <typename T> struct LnGradRowFn {
    double *sg, *sgx;
    const T *g, *x, *w, *mean, *invstd;
    int64_t K;
    THCUNN_HD void operator()(int64_t m) const {
        const double mu = (double)mean[m], is = (double)invstd[m];
        double a = 0, c = 0;
        for (int64_t k = 0; k < K; k++) {
            const double gw = (double)g[m * K + k] * (w ? (double)w[k] : 1.0);
            a += gw;
            c += gw * ((double)x[m * K + k] - mu) * is;
        }
        sg[m] = a;
        sgx[m] = c;
    }
};

// gi = invstd * (g * w - sum(g w) / K - xhat * sum(g w xhat) / K)
template <typename T> struct LnGradInFn {
    T *gi;
    const T *g, *x, *w, *mean, *invstd;
    const double *sg, *sgx;
    int64_t K;
    THCUNN_HD void operator()(int64_t i) const {
        const int64_t m = i / K, k = i % K;
        const double is = (double)invstd[m];
        const double gw = (double)g[i] * (w ? (double)w[k] : 1.0);
        const double xh = ((double)x[i] - (double)mean[m]) * is;
        gi[i] = (T)(is * (gw - sg[m] / (double)K - xh * sgx[m] / (double)K));
    }
};

// column k: its sums over the rows (one thread owns a column: no races;
// adjacent threads read adjacent elements)
template <typename T> struct LnParamsFn {
    T *gw, *gb;
    const T *g, *x, *mean, *invstd;
    int64_t M, K;
    THCUNN_HD void operator()(int64_t k) const {
        double sw = 0, sb = 0;
        for (int64_t m = 0; m < M; m++) {
            const double gv = (double)g[m * K + k];
            sb += gv;
            sw += gv * ((double)x[m * K + k] - (double)mean[m]) * (double)invstd[m];
        }
        if (gw) gw[k] = (T)sw;
        if (gb) gb[k] = (T)sb;
    }
};

// input (M, K) for the last nd dims; weight/bias (optional) of those dims
int ln_geometry(const char *fn, const thc_tensor *input, int nd, const thc_tensor *weight,
                const char *wname, int64_t *M, int64_t *K) {
    char a[256], b[256];
    if (thcunn__check_float(fn, "input", input)) return thcunn_last_status();
    if (nd < 1 || nd > input->ndim)
        return thcunn__error(THC_ERR_RUNTIME, "%s: normalized_ndim %d is out of range for input "
                             "of shape %s", fn, nd, thcunn__shape_of(input, a));
    *K = 1;
    for (int i = input->ndim - nd; i < input->ndim; i++) *K *= input->sizes[i];
    *M = *K ? thcunn__numel(input) / *K : 0;
    if (weight) {
        if (thcunn__check_tensor(fn, wname, weight, 0)) return thcunn_last_status();
        int ok = weight->ndim == nd && weight->dtype == input->dtype;
        for (int i = 0; ok && i < nd; i++)
            ok = weight->sizes[i] == input->sizes[input->ndim - nd + i];
        if (!ok)
            return thcunn__error(THC_ERR_RUNTIME, "Given normalized_shape of %d dims, expected "
                                 "weight/bias of matching shape and dtype, but got %s for input "
                                 "%s", nd, thcunn__shape_of(weight, a),
                                 thcunn__shape_of(input, b));
    }
    return THC_OK;
}

int ln_check_grad(const char *fn, const thc_tensor *gy, const thc_tensor *x,
                  const thc_tensor *mean, const thc_tensor *invstd, int64_t M) {
    char a[256], b[256];
    if (thcunn__check_float(fn, "grad_output", gy)) return thcunn_last_status();
    int ok = gy->ndim == x->ndim && gy->dtype == x->dtype;
    for (int i = 0; ok && i < x->ndim; i++) ok = gy->sizes[i] == x->sizes[i];
    if (!ok)
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output %s does not match input %s", fn,
                             thcunn__shape_of(gy, a), thcunn__shape_of(x, b));
    if (!mean || !invstd)
        return thcunn__error(THC_ERR_VALUE, "%s: save_mean and save_invstd are needed", fn);
    if (thcunn__check_vec(fn, "save_mean", mean, M, x->dtype)) return thcunn_last_status();
    return thcunn__check_vec(fn, "save_invstd", invstd, M, x->dtype);
}

// ---- group_norm kernels --------------------------------------------------

struct GnGeom {
    int64_t N, C, G, D, L;   // D = C / G channels per group, L spatial
};

// group r (sample r / G): its D * L elements are contiguous
template <typename T> struct GnStatsFn {
    double *mean, *rstd;
    T *save_mean, *save_rstd;
    const T *x;
    int64_t len;
    double eps;
    THCUNN_HD void operator()(int64_t r) const {
        const T *p = x + r * len;
        double s = 0, ss = 0;
        for (int64_t k = 0; k < len; k++) s += (double)p[k];
        const double mu = len ? s / (double)len : 0.0;
        for (int64_t k = 0; k < len; k++) {
            const double d = (double)p[k] - mu;
            ss += d * d;
        }
        const double rs = 1.0 / sqrt((len ? ss / (double)len : 0.0) + eps);
        mean[r] = mu;
        rstd[r] = rs;
        save_mean[r] = (T)mu;
        save_rstd[r] = (T)rs;
    }
};

// y = (x - mean[r]) * rstd[r] * w[c] + b[c]
template <typename T> struct GnOutFn {
    T *y;
    const T *x, *w, *b;
    const double *mean, *rstd;
    GnGeom g;
    THCUNN_HD void operator()(int64_t i) const {
        const int64_t nc = i / g.L, c = nc % g.C, r = nc / g.D;   // r = n * G + c / D
        double v = ((double)x[i] - mean[r]) * rstd[r];
        if (w) v *= (double)w[c];
        if (b) v += (double)b[c];
        y[i] = (T)v;
    }
};

// group r: mean(u) and mean(u * xhat) with u = grad_output * weight
template <typename T> struct GnGradRowFn {
    double *mu, *mux;
    const T *gy, *x, *w, *mean, *rstd;
    GnGeom g;
    THCUNN_HD void operator()(int64_t r) const {
        const int64_t c0 = (r % g.G) * g.D, len = g.D * g.L;
        const double mn = (double)mean[r], rs = (double)rstd[r];
        double su = 0, sux = 0;
        for (int64_t j = 0; j < g.D; j++) {
            const int64_t o = r * len + j * g.L;
            double sg = 0, sgd = 0;
            for (int64_t i = 0; i < g.L; i++) {
                const double gv = (double)gy[o + i];
                sg += gv;
                sgd += gv * ((double)x[o + i] - mn);
            }
            const double wc = w ? (double)w[c0 + j] : 1.0;
            su += wc * sg;
            sux += wc * sgd;
        }
        mu[r] = len ? su / (double)len : 0.0;
        mux[r] = len ? sux * rs / (double)len : 0.0;
    }
};

// gi = rstd * (u - mean(u) - xhat * mean(u * xhat))
template <typename T> struct GnGradInFn {
    T *gi;
    const T *gy, *x, *w, *mean, *rstd;
    const double *mu, *mux;
    GnGeom g;
    THCUNN_HD void operator()(int64_t i) const {
        const int64_t nc = i / g.L, c = nc % g.C, r = nc / g.D;
        const double rs = (double)rstd[r];
        const double u = (double)gy[i] * (w ? (double)w[c] : 1.0);
        const double xh = ((double)x[i] - (double)mean[r]) * rs;
        gi[i] = (T)(rs * (u - mu[r] - xh * mux[r]));
    }
};

// (sample n, channel c): its share of grad_weight[c] and grad_bias[c],
// added atomically (the samples of a channel run in parallel); the sums'
// type is a template parameter so that nvcc resolves the device-only
// atomic_add at instantiation, for the device
template <typename T, typename Acc = double> struct GnParamsFn {
    Acc *sw, *sb;
    const T *gy, *x, *mean, *rstd;
    GnGeom g;
    THCUNN_HD void operator()(int64_t nc) const {
        const int64_t c = nc % g.C, r = (nc / g.C) * g.G + c / g.D, o = nc * g.L;
        const double mn = (double)mean[r];
        double sg = 0, sgd = 0;
        for (int64_t i = 0; i < g.L; i++) {
            const double gv = (double)gy[o + i];
            sg += gv;
            sgd += gv * ((double)x[o + i] - mn);
        }
        if (sw) atomic_add(sw + c, (Acc)(sgd * (double)rstd[r]));
        if (sb) atomic_add(sb + c, (Acc)sg);
    }
};

int gn_geometry(const char *fn, const thc_tensor *input, int64_t num_groups, GnGeom *g) {
    char a[256];
    if (thcunn__check_float(fn, "input", input)) return thcunn_last_status();
    if (input->ndim < 2)
        return thcunn__error(THC_ERR_RUNTIME, "%s: Expected at least 2 dimensions for input "
                             "tensor but received %d (input of shape %s)", fn, input->ndim,
                             thcunn__shape_of(input, a));
    g->N = input->sizes[0];
    g->C = input->sizes[1];
    g->G = num_groups;
    g->L = 1;
    if (num_groups < 1)
        return thcunn__error(THC_ERR_VALUE, "%s: num_groups must be positive, got %lld", fn,
                             (long long)num_groups);
    if (g->C % num_groups)
        return thcunn__error(THC_ERR_RUNTIME, "Expected number of channels in input to be "
                             "divisible by num_groups, but got input of shape %s and "
                             "num_groups=%lld", thcunn__shape_of(input, a), (long long)num_groups);
    g->D = g->C / num_groups;
    for (int i = 2; i < input->ndim; i++) g->L *= input->sizes[i];
    return THC_OK;
}

int gn_check_stats(const char *fn, const thc_tensor *mean, const thc_tensor *rstd,
                   const GnGeom *g, int dtype) {
    const int64_t s[2] = {g->N, g->G};
    if (thcunn__check_out(fn, "save_mean", mean, 2, s, dtype)) return thcunn_last_status();
    return thcunn__check_out(fn, "save_rstd", rstd, 2, s, dtype);
}

int gn_check_grad(const char *fn, const thc_tensor *gy, const thc_tensor *x) {
    char a[256], b[256];
    if (thcunn__check_float(fn, "grad_output", gy)) return thcunn_last_status();
    int ok = gy->ndim == x->ndim && gy->dtype == x->dtype;
    for (int i = 0; ok && i < x->ndim; i++) ok = gy->sizes[i] == x->sizes[i];
    if (!ok)
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output %s (%s) does not match input %s "
                             "(%s)", fn, thcunn__shape_of(gy, a), thcunn__type_name(gy->dtype),
                             thcunn__shape_of(x, b),
                             thcunn__type_name(x->dtype));
    return THC_OK;
}


// ---- composed paths: libTHC's reductions instead of a thread per row -------

// rows of 1024 and more, or of 128 and more when there are at most 512
bool long_rows(int64_t rows, int64_t len) {
    return rows > 0 && (len >= 1024 || (len >= 128 && rows <= 512));
}

// layer_norm's parameter sums over M rows of K columns: more than 32 rows
// for each of fewer than 65536 column threads
bool many_rows(int64_t M, int64_t K) { return K > 0 && M > 32 && K < 65536; }

// a float64 copy of contiguous t seen with these sizes (a new tensor)
thc_tensor *f64_copy(const char *fn, const thc_tensor *t, int nd, const int64_t *sizes) {
    thc_tensor *v = thc_view(t, nd, sizes);
    thc_tensor *d = v ? thc_empty(nd, sizes, THC_FLOAT64) : NULL;
    if (d && thc_copy(d, v)) {
        thc_tensor_release(d);
        d = NULL;
    }
    thc_tensor_release(v);
    if (!d) thcunn__thc_failed(fn);
    return d;
}

// a view of contiguous t; NULL with the error set
thc_tensor *view(const char *fn, const thc_tensor *t, int nd, const int64_t *sizes) {
    thc_tensor *v = thc_view(t, nd, sizes);
    if (!v) thcunn__thc_failed(fn);
    return v;
}

// the sum of a float64 tensor over dims (a new float64 tensor)
thc_tensor *sum(const char *fn, const thc_tensor *t, int ndims, const int *dims) {
    thc_tensor *s = thc_reduce(THC_RED_SUM, t, ndims, dims, 0, -1);
    if (!s) thcunn__thc_failed(fn);
    return s;
}

// t op= a (broadcast), in place; 0 or a status
int inplace(const char *fn, int op, thc_tensor *t, const thc_tensor *a) {
    return thc_binary_out(op, t, t, a) ? thcunn__thc_failed(fn) : THC_OK;
}

// mean[r] = sum[r] / len, in place (mean holds the sums)
struct MeanFn {
    double *mean;
    int64_t len;
    THCUNN_HD void operator()(int64_t r) const { mean[r] = mean[r] / (double)len; }
};

// invstd from the summed squared deviations, as LnStatsFn / GnStatsFn
template <typename T> struct InvstdFn {
    double *invstd;
    T *save_mean, *save_invstd;
    const double *mean, *ss;
    int64_t len;
    double eps;
    THCUNN_HD void operator()(int64_t r) const {
        const double is = 1.0 / sqrt(ss[r] / (double)len + eps);
        invstd[r] = is;
        save_mean[r] = (T)mean[r];
        save_invstd[r] = (T)is;
    }
};

// statistics of R contiguous rows of len (> 0) elements of x: mean, then
// the squared deviations from it, both summed by libTHC in double over a
// float64 copy; mean and invstd (float64, R) and their saved copies
template <typename T>
int row_stats(const char *fn, thc_tensor *mean, thc_tensor *invstd, thc_tensor *save_mean,
              thc_tensor *save_invstd, const thc_tensor *x, int64_t R, int64_t len, double eps) {
    const int64_t shape[2] = {R, len}, col[2] = {R, 1};
    const int one = 1;
    thc_tensor *xd = f64_copy(fn, x, 2, shape), *s = NULL, *mv = NULL, *ss = NULL;
    int rc = xd && (s = sum(fn, xd, 1, &one)) ? THC_OK : thcunn_last_status();
    if (!rc && thc_copy(mean, s)) rc = thcunn__thc_failed(fn);
    if (!rc) rc = for_each(fn, R, MeanFn{data<double>(mean), len});
    if (!rc && !(mv = view(fn, mean, 2, col))) rc = thcunn_last_status();
    if (!rc) rc = inplace(fn, THC_SUB, xd, mv);
    if (!rc && thc_unary_out(THC_SQUARE, xd, xd)) rc = thcunn__thc_failed(fn);
    if (!rc && !(ss = sum(fn, xd, 1, &one))) rc = thcunn_last_status();
    if (!rc)
        rc = for_each(fn, R, InvstdFn<T>{data<double>(invstd), data<T>(save_mean),
                                         data<T>(save_invstd), data<double>(mean),
                                         data<double>(ss), len, eps});
    thc_tensor *tmp[] = {xd, s, mv, ss};
    thcunn__release_all(tmp, 4);
    return rc;
}

// xhat = (x - mean) * invstd over a float64 copy of x seen as `shape`,
// mean and invstd (float64 or the input's dtype) seen as `stat`; times u
// when given (a new float64 tensor; NULL with the error set)
thc_tensor *xhat(const char *fn, const thc_tensor *x, const thc_tensor *mean,
                 const thc_tensor *invstd, int nd, const int64_t *shape, const int64_t *stat,
                 const thc_tensor *u) {
    thc_tensor *v = f64_copy(fn, x, nd, shape);
    thc_tensor *mv = v ? view(fn, mean, nd, stat) : NULL;
    thc_tensor *iv = mv && invstd ? view(fn, invstd, nd, stat) : NULL;
    int rc = mv && (iv || !invstd) ? inplace(fn, THC_SUB, v, mv) : thcunn_last_status();
    if (!rc && iv) rc = inplace(fn, THC_MUL, v, iv);
    if (!rc && u) rc = inplace(fn, THC_MUL, v, u);
    thc_tensor_release(mv);
    thc_tensor_release(iv);
    if (rc) {
        thc_tensor_release(v);
        return NULL;
    }
    return v;
}

// group norm's mean(u) and mean(u * xhat) from the sums of u and of
// u * (x - mean), as GnGradRowFn
template <typename T> struct GnGradFinishFn {
    double *mu, *mux;
    const double *su, *sux;
    const T *rstd;
    int64_t len;
    THCUNN_HD void operator()(int64_t r) const {
        mu[r] = su[r] / (double)len;
        mux[r] = sux[r] * (double)rstd[r] / (double)len;
    }
};


// layer norm's row sums sg = sum(g * w), sgx = sum(g * w * xhat) (float64,
// M) over (M, K) rows, as LnGradRowFn
int ln_grad_rows(const char *fn, thc_tensor *sg, thc_tensor *sgx, const thc_tensor *gy,
                 const thc_tensor *x, const thc_tensor *w, const thc_tensor *mean,
                 const thc_tensor *invstd, int64_t M, int64_t K) {
    const int64_t shape[2] = {M, K}, stat[2] = {M, 1};
    const int one = 1;
    thc_tensor *u = f64_copy(fn, gy, 2, shape), *wv = NULL, *s = NULL, *v = NULL, *s2 = NULL;
    int rc = u ? THC_OK : thcunn_last_status();
    if (!rc && w) rc = (wv = view(fn, w, 1, &K)) ? inplace(fn, THC_MUL, u, wv)
                                                 : thcunn_last_status();
    if (!rc && !(s = sum(fn, u, 1, &one))) rc = thcunn_last_status();
    if (!rc && thc_copy(sg, s)) rc = thcunn__thc_failed(fn);
    if (!rc && !(v = xhat(fn, x, mean, invstd, 2, shape, stat, u))) rc = thcunn_last_status();
    if (!rc && !(s2 = sum(fn, v, 1, &one))) rc = thcunn_last_status();
    if (!rc && thc_copy(sgx, s2)) rc = thcunn__thc_failed(fn);
    thc_tensor *tmp[] = {u, wv, s, v, s2};
    thcunn__release_all(tmp, 5);
    return rc;
}

// dst (contiguous, K elements in any shape) = src (K); 0 or a status
int copy_flat(const char *fn, thc_tensor *dst, const thc_tensor *src, int64_t K) {
    thc_tensor *dv = view(fn, dst, 1, &K), *sv = dv ? view(fn, src, 1, &K) : NULL;
    int rc = sv ? (thc_copy(dv, sv) ? thcunn__thc_failed(fn) : THC_OK) : thcunn_last_status();
    thc_tensor_release(dv);
    thc_tensor_release(sv);
    return rc;
}

// layer norm's grad_weight = sum over rows of g * xhat, grad_bias = sum
// of g, as LnParamsFn (either may be NULL)
int ln_params(const char *fn, thc_tensor *gw, thc_tensor *gb, const thc_tensor *gy,
              const thc_tensor *x, const thc_tensor *mean, const thc_tensor *invstd, int64_t M,
              int64_t K) {
    const int64_t shape[2] = {M, K}, stat[2] = {M, 1};
    const int zero = 0;
    thc_tensor *gv = view(fn, gy, 2, shape), *sb = NULL, *v = NULL, *sw = NULL;
    int rc = gv ? THC_OK : thcunn_last_status();
    if (!rc && gb)   // libTHC sums in double, rounds once
        rc = (sb = thc_reduce(THC_RED_SUM, gv, 1, &zero, 0, -1)) ? copy_flat(fn, gb, sb, K)
                                                                 : thcunn__thc_failed(fn);
    if (!rc && gw) {
        if ((v = xhat(fn, x, mean, invstd, 2, shape, stat, gv)) && (sw = sum(fn, v, 1, &zero)))
            rc = copy_flat(fn, gw, sw, K);
        else
            rc = thcunn_last_status();
    }
    thc_tensor *tmp[] = {gv, sb, v, sw};
    thcunn__release_all(tmp, 4);
    return rc;
}

// group norm's mu and mux (float64, N * G) as GnGradRowFn: u = gy * w
// summed over each group, then u * (x - mean)
template <typename T>
int gn_grad_rows(const char *fn, thc_tensor *mu, thc_tensor *mux, const thc_tensor *gy,
                 const thc_tensor *x, const thc_tensor *w, const thc_tensor *mean,
                 const thc_tensor *rstd, const GnGeom &g) {
    const int64_t shape[4] = {g.N, g.G, g.D, g.L}, stat[4] = {g.N, g.G, 1, 1},
                  wshape[3] = {g.G, g.D, 1};
    const int dims[2] = {2, 3};
    thc_tensor *u = f64_copy(fn, gy, 4, shape), *wv = NULL, *su = NULL, *v = NULL, *sux = NULL;
    int rc = u ? THC_OK : thcunn_last_status();
    if (!rc && w) rc = (wv = view(fn, w, 3, wshape)) ? inplace(fn, THC_MUL, u, wv)
                                                     : thcunn_last_status();
    if (!rc && !(su = sum(fn, u, 2, dims))) rc = thcunn_last_status();
    if (!rc && !(v = xhat(fn, x, mean, NULL, 4, shape, stat, u))) rc = thcunn_last_status();
    if (!rc && !(sux = sum(fn, v, 2, dims))) rc = thcunn_last_status();
    if (!rc)
        rc = for_each(fn, g.N * g.G,
                      GnGradFinishFn<T>{data<double>(mu), data<double>(mux), data<double>(su),
                                        data<double>(sux), data<T>(rstd), g.D * g.L});
    thc_tensor *tmp[] = {u, wv, su, v, sux};
    thcunn__release_all(tmp, 5);
    return rc;
}

// group norm's grad_weight = sum over samples and positions of gy * xhat,
// grad_bias = sum of gy (either may be NULL)
int gn_params(const char *fn, thc_tensor *gw, thc_tensor *gb, const thc_tensor *gy,
              const thc_tensor *x, const thc_tensor *mean, const thc_tensor *rstd,
              const GnGeom &g) {
    const int64_t shape[4] = {g.N, g.G, g.D, g.L}, stat[4] = {g.N, g.G, 1, 1},
                  cshape[3] = {g.N, g.C, g.L};
    const int bdims[2] = {0, 2}, wdims[2] = {0, 3};
    thc_tensor *gv = NULL, *sb = NULL, *g4 = NULL, *v = NULL, *sw = NULL;
    int rc = THC_OK;
    if (gb) {
        if ((gv = view(fn, gy, 3, cshape)) && (sb = thc_reduce(THC_RED_SUM, gv, 2, bdims, 0, -1)))
            rc = copy_flat(fn, gb, sb, g.C);
        else
            rc = gv ? thcunn__thc_failed(fn) : thcunn_last_status();
    }
    if (!rc && gw) {
        if ((g4 = view(fn, gy, 4, shape)) &&
            (v = xhat(fn, x, mean, rstd, 4, shape, stat, g4)) && (sw = sum(fn, v, 2, wdims)))
            rc = copy_flat(fn, gw, sw, g.C);
        else
            rc = thcunn_last_status();
    }
    thc_tensor *tmp[] = {gv, sb, g4, v, sw};
    thcunn__release_all(tmp, 5);
    return rc;
}

}  // namespace

// ---- layer_norm ------------------------------------------------------------

extern "C" THCUNN_API int thcunn_layer_norm_forward(thc_tensor *output, thc_tensor *save_mean,
                                                    thc_tensor *save_invstd,
                                                    const thc_tensor *input,
                                                    const thc_tensor *weight,
                                                    const thc_tensor *bias,
                                                    int normalized_ndim, double eps) {
    static const char fn[] = "layer_norm";
    int64_t M = 0, K = 0;
    if (thcunn__check_runtime(fn) ||
        ln_geometry(fn, input, normalized_ndim, weight, "weight", &M, &K) ||
        ln_geometry(fn, input, normalized_ndim, bias, "bias", &M, &K) ||
        thcunn__check_like(fn, "output", output, input) ||
        thcunn__check_out(fn, "save_mean", save_mean, 1, &M, input->dtype) ||
        thcunn__check_out(fn, "save_invstd", save_invstd, 1, &M, input->dtype))
        return thcunn_last_status();
    thc_tensor *t[5] = {NULL, NULL, NULL, NULL, NULL};   // x, w, b, mean, invstd
    int rc = contig(fn, input, &t[0]);
    if (!rc) rc = contig(fn, weight, &t[1]);
    if (!rc) rc = contig(fn, bias, &t[2]);
    if (!rc && !((t[3] = f64(fn, M)) && (t[4] = f64(fn, M)))) rc = thcunn_last_status();
    if (!rc)
        THCUNN_FLOATING(input->dtype, {
            if (long_rows(M, K))
                rc = row_stats<scalar_t>(fn, t[3], t[4], save_mean, save_invstd, t[0], M, K, eps);
            else
                rc = for_each(fn, M,
                              LnStatsFn<scalar_t>{data<double>(t[3]), data<double>(t[4]),
                                                  data<scalar_t>(save_mean),
                                                  data<scalar_t>(save_invstd),
                                                  data<scalar_t>(t[0]), K, eps});
            if (!rc)
                rc = for_each(fn, M * K,
                              LnOutFn<scalar_t>{data<scalar_t>(output), data<scalar_t>(t[0]),
                                                cdata<scalar_t>(t[1]), cdata<scalar_t>(t[2]),
                                                data<double>(t[3]), data<double>(t[4]), K});
        })
    thcunn__release_all(t, 5);
    return rc;
}

extern "C" THCUNN_API int thcunn_layer_norm_backward_input(thc_tensor *grad_input,
                                                           const thc_tensor *grad_output,
                                                           const thc_tensor *input,
                                                           const thc_tensor *weight,
                                                           const thc_tensor *save_mean,
                                                           const thc_tensor *save_invstd,
                                                           int normalized_ndim) {
    static const char fn[] = "layer_norm_backward_input";
    int64_t M = 0, K = 0;
    if (thcunn__check_runtime(fn) ||
        ln_geometry(fn, input, normalized_ndim, weight, "weight", &M, &K) ||
        ln_check_grad(fn, grad_output, input, save_mean, save_invstd, M) ||
        thcunn__check_like(fn, "grad_input", grad_input, input))
        return thcunn_last_status();
    thc_tensor *t[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};   // x gy w mean invstd sg sgx
    int rc = contig(fn, input, &t[0]);
    if (!rc) rc = contig(fn, grad_output, &t[1]);
    if (!rc) rc = contig(fn, weight, &t[2]);
    if (!rc) rc = contig(fn, save_mean, &t[3]);
    if (!rc) rc = contig(fn, save_invstd, &t[4]);
    if (!rc && !((t[5] = f64(fn, M)) && (t[6] = f64(fn, M)))) rc = thcunn_last_status();
    if (!rc)
        THCUNN_FLOATING(input->dtype, {
            const scalar_t *x = data<scalar_t>(t[0]), *gy = data<scalar_t>(t[1]),
                           *w = cdata<scalar_t>(t[2]), *mn = data<scalar_t>(t[3]),
                           *is = data<scalar_t>(t[4]);
            if (long_rows(M, K))
                rc = ln_grad_rows(fn, t[5], t[6], t[1], t[0], t[2], t[3], t[4], M, K);
            else
                rc = for_each(fn, M,
                              LnGradRowFn<scalar_t>{data<double>(t[5]), data<double>(t[6]), gy,
                                                    x, w, mn, is, K});
            if (!rc)
                rc = for_each(fn, M * K,
                              LnGradInFn<scalar_t>{data<scalar_t>(grad_input), gy, x, w, mn, is,
                                                   data<double>(t[5]), data<double>(t[6]), K});
        })
    thcunn__release_all(t, 7);
    return rc;
}

extern "C" THCUNN_API int thcunn_layer_norm_backward_params(thc_tensor *grad_weight,
                                                            thc_tensor *grad_bias,
                                                            const thc_tensor *grad_output,
                                                            const thc_tensor *input,
                                                            const thc_tensor *save_mean,
                                                            const thc_tensor *save_invstd,
                                                            int normalized_ndim) {
    static const char fn[] = "layer_norm_backward_params";
    int64_t M = 0, K = 0;
    if (thcunn__check_runtime(fn) ||
        ln_geometry(fn, input, normalized_ndim, grad_weight, "grad_weight", &M, &K) ||
        ln_geometry(fn, input, normalized_ndim, grad_bias, "grad_bias", &M, &K) ||
        ln_check_grad(fn, grad_output, input, save_mean, save_invstd, M))
        return thcunn_last_status();
    if (grad_weight && !thc_is_contiguous(grad_weight))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_weight must be contiguous", fn);
    if (grad_bias && !thc_is_contiguous(grad_bias))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_bias must be contiguous", fn);
    if (!grad_weight && !grad_bias) return THC_OK;
    thc_tensor *t[4] = {NULL, NULL, NULL, NULL};   // x gy mean invstd
    int rc = contig(fn, input, &t[0]);
    if (!rc) rc = contig(fn, grad_output, &t[1]);
    if (!rc) rc = contig(fn, save_mean, &t[2]);
    if (!rc) rc = contig(fn, save_invstd, &t[3]);
    if (!rc && many_rows(M, K))
        rc = ln_params(fn, grad_weight, grad_bias, t[1], t[0], t[2], t[3], M, K);
    else if (!rc)
        THCUNN_FLOATING(input->dtype,
                        rc = for_each(fn, K,
                                      LnParamsFn<scalar_t>{
                                          grad_weight ? data<scalar_t>(grad_weight) : NULL,
                                          grad_bias ? data<scalar_t>(grad_bias) : NULL,
                                          data<scalar_t>(t[1]), data<scalar_t>(t[0]),
                                          data<scalar_t>(t[2]), data<scalar_t>(t[3]), M, K}))
    thcunn__release_all(t, 4);
    return rc;
}

// ---- group_norm ------------------------------------------------------------

extern "C" THCUNN_API int thcunn_group_norm_forward(thc_tensor *output, thc_tensor *save_mean,
                                                    thc_tensor *save_rstd,
                                                    const thc_tensor *input,
                                                    const thc_tensor *weight,
                                                    const thc_tensor *bias, int64_t num_groups,
                                                    double eps) {
    static const char fn[] = "group_norm";
    GnGeom g = {0, 0, 0, 0, 0};
    if (thcunn__check_runtime(fn) || gn_geometry(fn, input, num_groups, &g) ||
        thcunn__check_like(fn, "output", output, input) ||
        gn_check_stats(fn, save_mean, save_rstd, &g, input->dtype) ||
        thcunn__check_vec(fn, "weight", weight, g.C, input->dtype) ||
        thcunn__check_vec(fn, "bias", bias, g.C, input->dtype))
        return thcunn_last_status();
    const int64_t rows = g.N * g.G;
    thc_tensor *t[5] = {NULL, NULL, NULL, NULL, NULL};   // x w b mean rstd
    int rc = contig(fn, input, &t[0]);
    if (!rc) rc = contig(fn, weight, &t[1]);
    if (!rc) rc = contig(fn, bias, &t[2]);
    if (!rc && !((t[3] = f64(fn, rows)) && (t[4] = f64(fn, rows)))) rc = thcunn_last_status();
    if (!rc)
        THCUNN_FLOATING(input->dtype, {
            if (long_rows(rows, g.D * g.L))
                rc = row_stats<scalar_t>(fn, t[3], t[4], save_mean, save_rstd, t[0], rows,
                                         g.D * g.L, eps);
            else
                rc = for_each(fn, rows,
                              GnStatsFn<scalar_t>{data<double>(t[3]), data<double>(t[4]),
                                                  data<scalar_t>(save_mean),
                                                  data<scalar_t>(save_rstd), data<scalar_t>(t[0]),
                                                  g.D * g.L, eps});
            if (!rc)
                rc = for_each(fn, thcunn__numel(input),
                              GnOutFn<scalar_t>{data<scalar_t>(output), data<scalar_t>(t[0]),
                                                cdata<scalar_t>(t[1]), cdata<scalar_t>(t[2]),
                                                data<double>(t[3]), data<double>(t[4]), g});
        })
    thcunn__release_all(t, 5);
    return rc;
}

extern "C" THCUNN_API int thcunn_group_norm_backward_input(thc_tensor *grad_input,
                                                           const thc_tensor *grad_output,
                                                           const thc_tensor *input,
                                                           const thc_tensor *weight,
                                                           const thc_tensor *save_mean,
                                                           const thc_tensor *save_rstd,
                                                           int64_t num_groups) {
    static const char fn[] = "group_norm_backward_input";
    GnGeom g = {0, 0, 0, 0, 0};
    if (thcunn__check_runtime(fn) || gn_geometry(fn, input, num_groups, &g) ||
        gn_check_grad(fn, grad_output, input) ||
        thcunn__check_vec(fn, "weight", weight, g.C, input->dtype) ||
        thcunn__check_like(fn, "grad_input", grad_input, input))
        return thcunn_last_status();
    if (!save_mean || !save_rstd)
        return thcunn__error(THC_ERR_VALUE, "%s: save_mean and save_rstd are needed", fn);
    const int64_t rows = g.N * g.G;
    thc_tensor *t[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};   // x gy w mean rstd mu mux
    int rc = contig(fn, input, &t[0]);
    if (!rc) rc = contig(fn, grad_output, &t[1]);
    if (!rc) rc = contig(fn, weight, &t[2]);
    if (!rc) rc = contig(fn, save_mean, &t[3]);
    if (!rc) rc = contig(fn, save_rstd, &t[4]);
    if (!rc) rc = gn_check_stats(fn, t[3], t[4], &g, input->dtype);
    if (!rc && !((t[5] = f64(fn, rows)) && (t[6] = f64(fn, rows)))) rc = thcunn_last_status();
    if (!rc)
        THCUNN_FLOATING(input->dtype, {
            const scalar_t *x = data<scalar_t>(t[0]), *gy = data<scalar_t>(t[1]),
                           *w = cdata<scalar_t>(t[2]), *mn = data<scalar_t>(t[3]),
                           *rs = data<scalar_t>(t[4]);
            if (long_rows(rows, g.D * g.L))
                rc = gn_grad_rows<scalar_t>(fn, t[5], t[6], t[1], t[0], t[2], t[3], t[4], g);
            else
                rc = for_each(fn, rows,
                              GnGradRowFn<scalar_t>{data<double>(t[5]), data<double>(t[6]), gy, x,
                                                    w, mn, rs, g});
            if (!rc)
                rc = for_each(fn, thcunn__numel(input),
                              GnGradInFn<scalar_t>{data<scalar_t>(grad_input), gy, x, w, mn, rs,
                                                   data<double>(t[5]), data<double>(t[6]), g});
        })
    thcunn__release_all(t, 7);
    return rc;
}

extern "C" THCUNN_API int thcunn_group_norm_backward_params(thc_tensor *grad_weight,
                                                            thc_tensor *grad_bias,
                                                            const thc_tensor *grad_output,
                                                            const thc_tensor *input,
                                                            const thc_tensor *save_mean,
                                                            const thc_tensor *save_rstd,
                                                            int64_t num_groups) {
    static const char fn[] = "group_norm_backward_params";
    GnGeom g = {0, 0, 0, 0, 0};
    if (thcunn__check_runtime(fn) || gn_geometry(fn, input, num_groups, &g) ||
        gn_check_grad(fn, grad_output, input) ||
        (grad_weight &&
         thcunn__check_out(fn, "grad_weight", grad_weight, 1, &g.C, input->dtype)) ||
        (grad_bias && thcunn__check_out(fn, "grad_bias", grad_bias, 1, &g.C, input->dtype)))
        return thcunn_last_status();
    if (!save_mean || !save_rstd)
        return thcunn__error(THC_ERR_VALUE, "%s: save_mean and save_rstd are needed", fn);
    thc_tensor *t[6] = {NULL, NULL, NULL, NULL, NULL, NULL};   // x gy mean rstd sw sb
    int rc = contig(fn, input, &t[0]);
    if (!rc) rc = contig(fn, grad_output, &t[1]);
    if (!rc) rc = contig(fn, save_mean, &t[2]);
    if (!rc) rc = contig(fn, save_rstd, &t[3]);
    if (!rc) rc = gn_check_stats(fn, t[2], t[3], &g, input->dtype);
    if (!rc && long_rows(g.N * g.C, g.L)) {   // deterministic sums by libTHC
        rc = gn_params(fn, grad_weight, grad_bias, t[1], t[0], t[2], t[3], g);
        thcunn__release_all(t, 6);
        return rc;
    }
    // float64 sums, zeroed: the samples of a channel add into them
    if (!rc && grad_weight &&
        (!(t[4] = f64(fn, g.C)) || (thc_zero(t[4]) && thcunn__thc_failed(fn))))
        rc = thcunn_last_status();
    if (!rc && grad_bias && (!(t[5] = f64(fn, g.C)) || (thc_zero(t[5]) && thcunn__thc_failed(fn))))
        rc = thcunn_last_status();
    if (!rc)
        THCUNN_FLOATING(input->dtype,
                        rc = for_each(fn, g.N * g.C,
                                      GnParamsFn<scalar_t>{
                                          t[4] ? data<double>(t[4]) : NULL,
                                          t[5] ? data<double>(t[5]) : NULL, data<scalar_t>(t[1]),
                                          data<scalar_t>(t[0]), data<scalar_t>(t[2]),
                                          data<scalar_t>(t[3]), g}))
    if (!rc && ((grad_weight && thc_copy(grad_weight, t[4])) ||
                (grad_bias && thc_copy(grad_bias, t[5]))))
        rc = thcunn__thc_failed(fn);
    thcunn__release_all(t, 6);
    return rc;
}
