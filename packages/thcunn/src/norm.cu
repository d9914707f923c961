// layer_norm over rows (M, K) and group_norm over (N, G) groups of
// (C/G) * L contiguous elements.  Statistics: a thread per row (or
// group), two passes in double (mean, then squared deviations), kept in
// float64 temporaries for the element-wise passes, which run a thread per
// element in double.  Parameter gradients: layer_norm a thread per column
// looping over rows (no races), group_norm a thread per (sample, channel)
// adding atomically into float64 sums.  Checks and messages are
// libTHNN's (src/layernorm.c, src/groupnorm.c).
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
            rc = for_each(fn, M,
                          LnStatsFn<scalar_t>{data<double>(t[3]), data<double>(t[4]),
                                              data<scalar_t>(save_mean),
                                              data<scalar_t>(save_invstd), data<scalar_t>(t[0]),
                                              K, eps});
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
            rc = for_each(fn, M, LnGradRowFn<scalar_t>{data<double>(t[5]), data<double>(t[6]),
                                                       gy, x, w, mn, is, K});
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
    if (!rc)
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
            rc = for_each(fn, rows,
                          GnStatsFn<scalar_t>{data<double>(t[3]), data<double>(t[4]),
                                              data<scalar_t>(save_mean), data<scalar_t>(save_rstd),
                                              data<scalar_t>(t[0]), g.D * g.L, eps});
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
            rc = for_each(fn, rows, GnGradRowFn<scalar_t>{data<double>(t[5]), data<double>(t[6]),
                                                          gy, x, w, mn, rs, g});
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
