/* layer_norm over the last `normalized_ndim` dims: rows (M, K), rows on
 * libTH's thread pool (columns in the parameter backward); double
 * accumulators.
 *
 * group_norm over (N, C, *): channels split into G groups of C/G, each
 * (sample, group) normalized over its C/G * L elements, then the
 * per-channel affine.  On libTH's thread pool: (sample, group) rows in
 * the forward and the input backward, channels in the parameter backward;
 * sums in double (vectorized as `omp simd` reductions), elementwise passes in
 * the tensor's type with per-channel coefficients. */
#include <math.h>

#include "thnn_internal.h"

/* ---- layer_norm ---- */
static int ln_geometry(const char *fn, const th_tensor *input, int nd,
                    const th_tensor *weight, int64_t *M, int64_t *K) {
    char a[256], b[256];
    int rc = thnn__check_float(fn, "input", input);
    if (rc) return rc;
    if (nd < 1 || nd > input->ndim)
        return thnn__error(TH_ERR_RUNTIME, "%s: normalized_ndim %d is out of "
                           "range for input of shape %s", fn, nd, thnn__shape(input, a));
    *K = 1;
    for (int i = input->ndim - nd; i < input->ndim; i++) *K *= input->sizes[i];
    *M = *K ? th_numel(input) / *K : 0;
    if (weight) {
        int ok = weight->ndim == nd && weight->dtype == input->dtype;
        for (int i = 0; ok && i < nd; i++)
            ok = weight->sizes[i] == input->sizes[input->ndim - nd + i];
        if (!ok)
            return thnn__error(TH_ERR_RUNTIME, "Given normalized_shape of %d dims, "
                               "expected weight/bias of matching shape and dtype, "
                               "but got %s for input %s", nd,
                               thnn__shape(weight, a), thnn__shape(input, b));
    }
    return TH_OK;
}

/* one call's data pointers and settings, for the range functions */
typedef struct ln_ctx {
    void *out, *out2; /* output, grad_input, or grad_weight and grad_bias */
    void *save_mean, *save_invstd;
    const void *x, *gy, *w, *b, *mean, *invstd;
    double eps;
    int64_t M, K;
} ln_ctx;

/* columns per block of the parameter backward: it walks the rows in order
 * (contiguous reads) with one accumulator per column of the block */
#define LN_COLS 256

/* one instance per dtype; statistics and sums in double */
#define DEFINE_LN(T)                                                            \
THNN_VEC_CLONES static void ln_fwd_##T(int64_t m0, int64_t m1, void *ctx) {                     \
    const ln_ctx *c = ctx;                                                      \
    const int64_t K = c->K;                                                     \
    const T *w = c->w, *b = c->b;                                               \
    for (int64_t m = m0; m < m1; m++) {                                         \
        const T *x = (const T *)c->x + m * K;                                   \
        T *y = (T *)c->out + m * K;                                             \
        double s = 0, ss = 0;                                                   \
        _Pragma("omp simd reduction(+ : s)")                                    \
        for (int64_t k = 0; k < K; k++) s += (double)x[k];                      \
        const double mean = s / (double)K;                                      \
        _Pragma("omp simd reduction(+ : ss)")                                   \
        for (int64_t k = 0; k < K; k++) {                                       \
            const double d = (double)x[k] - mean;                               \
            ss += d * d;                                                        \
        }                                                                       \
        const double invstd = 1.0 / sqrt(ss / (double)K + c->eps);              \
        ((T *)c->save_mean)[m] = (T)mean;                                       \
        ((T *)c->save_invstd)[m] = (T)invstd;                                   \
        if (w && b)                                                             \
            for (int64_t k = 0; k < K; k++)                                     \
                y[k] = (T)(((double)x[k] - mean) * invstd * (double)w[k] + (double)b[k]); \
        else if (w)                                                             \
            for (int64_t k = 0; k < K; k++)                                     \
                y[k] = (T)(((double)x[k] - mean) * invstd * (double)w[k]);      \
        else if (b)                                                             \
            for (int64_t k = 0; k < K; k++)                                     \
                y[k] = (T)(((double)x[k] - mean) * invstd + (double)b[k]);      \
        else                                                                    \
            for (int64_t k = 0; k < K; k++)                                     \
                y[k] = (T)(((double)x[k] - mean) * invstd);                     \
    }                                                                           \
}                                                                               \
                                                                                \
THNN_VEC_CLONES static void ln_bwd_input_##T(int64_t m0, int64_t m1, void *ctx) {               \
    const ln_ctx *c = ctx;                                                      \
    const int64_t K = c->K;                                                     \
    const T *w = c->w;                                                          \
    for (int64_t m = m0; m < m1; m++) {                                         \
        const T *x = (const T *)c->x + m * K, *gy = (const T *)c->gy + m * K;   \
        T *gx = (T *)c->out + m * K;                                            \
        const double mean = (double)((const T *)c->mean)[m];                    \
        const double invstd = (double)((const T *)c->invstd)[m];                \
        double sg = 0, sgx = 0;                                                 \
        _Pragma("omp simd reduction(+ : sg, sgx)")                              \
        for (int64_t k = 0; k < K; k++) {                                       \
            const double g = (double)gy[k] * (w ? (double)w[k] : 1.0);          \
            sg += g;                                                            \
            sgx += g * ((double)x[k] - mean) * invstd;                          \
        }                                                                       \
        const double a = sg / (double)K, bx = sgx / (double)K;                  \
        for (int64_t k = 0; k < K; k++) {                                       \
            const double g = (double)gy[k] * (w ? (double)w[k] : 1.0);          \
            const double xh = ((double)x[k] - mean) * invstd;                   \
            gx[k] = (T)(invstd * (g - a - xh * bx));                            \
        }                                                                       \
    }                                                                           \
}                                                                               \
                                                                                \
THNN_VEC_CLONES static void ln_bwd_params_##T(int64_t k0, int64_t k1, void *ctx) {              \
    const ln_ctx *c = ctx;                                                      \
    const int64_t M = c->M, K = c->K;                                           \
    const T *mean = c->mean, *invstd = c->invstd;                               \
    double sw[LN_COLS], sb[LN_COLS];                                            \
    for (int64_t j0 = k0; j0 < k1; j0 += LN_COLS) {                             \
        const int64_t n = k1 - j0 < LN_COLS ? k1 - j0 : LN_COLS;                \
        for (int64_t j = 0; j < n; j++) sw[j] = sb[j] = 0;                      \
        for (int64_t m = 0; m < M; m++) {                                       \
            const T *x = (const T *)c->x + m * K + j0;                          \
            const T *gy = (const T *)c->gy + m * K + j0;                        \
            const double mu = (double)mean[m], is = (double)invstd[m];          \
            for (int64_t j = 0; j < n; j++) {                                   \
                sb[j] += (double)gy[j];                                         \
                sw[j] += (double)gy[j] * ((double)x[j] - mu) * is;              \
            }                                                                   \
        }                                                                       \
        if (c->out)                                                             \
            for (int64_t j = 0; j < n; j++) ((T *)c->out)[j0 + j] = (T)sw[j];   \
        if (c->out2)                                                            \
            for (int64_t j = 0; j < n; j++) ((T *)c->out2)[j0 + j] = (T)sb[j];  \
    }                                                                           \
}
DEFINE_LN(float)
DEFINE_LN(double)

static void *data_or_null(const th_tensor *t) { return t ? thnn__data(t) : NULL; }

THNN_API int thnn_layer_norm_forward(th_tensor *output, th_tensor *save_mean,
                                     th_tensor *save_invstd,
                                     const th_tensor *input,
                                     const th_tensor *weight,
                                     const th_tensor *bias,
                                     int normalized_ndim, double eps) {
    static const char fn[] = "layer_norm";
    int64_t M, K;
    int rc;
    if ((rc = ln_geometry(fn, input, normalized_ndim, weight, &M, &K))) return rc;
    if ((rc = ln_geometry(fn, input, normalized_ndim, bias, &M, &K))) return rc;
    if ((rc = thnn__check_like(fn, "output", output, input))) return rc;
    if ((rc = thnn__check_out(fn, "save_mean", save_mean, 1, &M, input->dtype))) return rc;
    if ((rc = thnn__check_out(fn, "save_invstd", save_invstd, 1, &M, input->dtype))) return rc;
    th_tensor *x = thnn__contig(input);
    th_tensor *w = weight ? thnn__contig(weight) : NULL, *b = bias ? thnn__contig(bias) : NULL;
    if (!x || (weight && !w) || (bias && !b)) { rc = thnn_last_status(); goto done; }
    ln_ctx c = {.out = thnn__data(output), .save_mean = thnn__data(save_mean),
                .save_invstd = thnn__data(save_invstd), .x = thnn__data(x),
                .w = data_or_null(w), .b = data_or_null(b), .eps = eps, .K = K};
    th_parallel_for(M, thnn__grain(K), x->dtype == TH_FLOAT32 ? ln_fwd_float : ln_fwd_double, &c);
done:
    thnn__release(x); thnn__release(w); thnn__release(b);
    return rc;
}

static int ln_check_grad(const char *fn, const th_tensor *gy, const th_tensor *x,
                      const th_tensor *mean, const th_tensor *invstd, int64_t M) {
    char a[256], b[256];
    int rc = thnn__check_float(fn, "grad_output", gy);
    if (rc) return rc;
    int ok = gy->ndim == x->ndim && gy->dtype == x->dtype;
    for (int i = 0; ok && i < x->ndim; i++) ok = gy->sizes[i] == x->sizes[i];
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s does not match input %s",
                           fn, thnn__shape(gy, a), thnn__shape(x, b));
    if (!mean || !invstd)
        return thnn__error(TH_ERR_VALUE, "%s: save_mean and save_invstd are needed", fn);
    if ((rc = thnn__check_vec(fn, "save_mean", mean, M, x->dtype))) return rc;
    return thnn__check_vec(fn, "save_invstd", invstd, M, x->dtype);
}

THNN_API int thnn_layer_norm_backward_input(th_tensor *grad_input,
                                            const th_tensor *grad_output,
                                            const th_tensor *input,
                                            const th_tensor *weight,
                                            const th_tensor *save_mean,
                                            const th_tensor *save_invstd,
                                            int normalized_ndim) {
    static const char fn[] = "layer_norm_backward_input";
    int64_t M, K;
    int rc;
    if ((rc = ln_geometry(fn, input, normalized_ndim, weight, &M, &K))) return rc;
    if ((rc = ln_check_grad(fn, grad_output, input, save_mean, save_invstd, M))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, input))) return rc;
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    th_tensor *w = weight ? thnn__contig(weight) : NULL;
    th_tensor *mt = thnn__contig(save_mean), *it = thnn__contig(save_invstd);
    if (!x || !gy || (weight && !w) || !mt || !it) { rc = thnn_last_status(); goto done; }
    ln_ctx c = {.out = thnn__data(grad_input), .x = thnn__data(x), .gy = thnn__data(gy),
                .w = data_or_null(w), .mean = thnn__data(mt), .invstd = thnn__data(it), .K = K};
    th_parallel_for(M, thnn__grain(K),
                    x->dtype == TH_FLOAT32 ? ln_bwd_input_float : ln_bwd_input_double, &c);
done:
    thnn__release(x); thnn__release(gy); thnn__release(w);
    thnn__release(mt); thnn__release(it);
    return rc;
}

THNN_API int thnn_layer_norm_backward_params(th_tensor *grad_weight,
                                             th_tensor *grad_bias,
                                             const th_tensor *grad_output,
                                             const th_tensor *input,
                                             const th_tensor *save_mean,
                                             const th_tensor *save_invstd,
                                             int normalized_ndim) {
    static const char fn[] = "layer_norm_backward_params";
    int64_t M, K;
    int rc;
    if ((rc = ln_geometry(fn, input, normalized_ndim, grad_weight, &M, &K))) return rc;
    if ((rc = ln_geometry(fn, input, normalized_ndim, grad_bias, &M, &K))) return rc;
    if ((rc = ln_check_grad(fn, grad_output, input, save_mean, save_invstd, M))) return rc;
    if (grad_weight && !th_is_contiguous(grad_weight))
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_weight must be contiguous", fn);
    if (grad_bias && !th_is_contiguous(grad_bias))
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_bias must be contiguous", fn);
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    th_tensor *mt = thnn__contig(save_mean), *it = thnn__contig(save_invstd);
    if (!x || !gy || !mt || !it) { rc = thnn_last_status(); goto done; }
    ln_ctx c = {.out = data_or_null(grad_weight), .out2 = data_or_null(grad_bias),
                .x = thnn__data(x), .gy = thnn__data(gy), .mean = thnn__data(mt),
                .invstd = thnn__data(it), .M = M, .K = K};
    th_parallel_for(K, thnn__grain(M),
                    x->dtype == TH_FLOAT32 ? ln_bwd_params_float : ln_bwd_params_double, &c);
done:
    thnn__release(x); thnn__release(gy); thnn__release(mt); thnn__release(it);
    return rc;
}

/* ---- group_norm ---- */
typedef struct gn_geom {
    int64_t N, C, G, D, L; /* D = C / G channels per group, L spatial */
} gn_geom;

static int gn_geometry(const char *fn, const th_tensor *input, int64_t num_groups,
                    gn_geom *g) {
    char a[256];
    int rc = thnn__check_float(fn, "input", input);
    if (rc) return rc;
    if (input->ndim < 2)
        return thnn__error(TH_ERR_RUNTIME, "%s: Expected at least 2 dimensions for "
                           "input tensor but received %d (input of shape %s)", fn,
                           input->ndim, thnn__shape(input, a));
    g->N = input->sizes[0]; g->C = input->sizes[1]; g->G = num_groups; g->L = 1;
    if (num_groups < 1)
        return thnn__error(TH_ERR_VALUE, "%s: num_groups must be positive, got %lld",
                           fn, (long long)num_groups);
    if (g->C % num_groups)
        return thnn__error(TH_ERR_RUNTIME, "Expected number of channels in input to "
                           "be divisible by num_groups, but got input of shape %s "
                           "and num_groups=%lld", thnn__shape(input, a),
                           (long long)num_groups);
    g->D = g->C / num_groups;
    for (int i = 2; i < input->ndim; i++) g->L *= input->sizes[i];
    return TH_OK;
}

/* one call's data pointers and gn_geometry */
typedef struct gn_ctx {
    void *out, *out2;      /* output, grad_input, or grad_weight and grad_bias */
    void *mean, *rstd;     /* written by the forward, read by the backward */
    const void *x, *gy, *w, *b;
    const gn_geom *g;
    double eps;
} gn_ctx;

#define DEFINE_GROUP_NORM(T)                                                   \
    static void gn_fwd_##T(int64_t r0, int64_t r1, void *ctx) {                \
        const gn_ctx *k = ctx;                                                 \
        T *y = k->out, *save_mean = k->mean, *save_rstd = k->rstd;             \
        const T *x = k->x, *w = k->w, *b = k->b;                               \
        const gn_geom *g = k->g;                                               \
        const double eps = k->eps;                                             \
        const int64_t len = g->D * g->L;                                       \
        for (int64_t r = r0; r < r1; r++) {                                    \
            /* the group's elements are contiguous: channels c0.. of sample r/G */ \
            const T *xr = x + r * len;                                         \
            const int64_t c0 = (r % g->G) * g->D;                              \
            double s = 0, ss = 0;                                              \
            _Pragma("omp simd reduction(+:s)")                                 \
            for (int64_t k = 0; k < len; k++) s += (double)xr[k];              \
            const double mean = len ? s / (double)len : 0.0;                   \
            _Pragma("omp simd reduction(+:ss)")                                \
            for (int64_t k = 0; k < len; k++) {                                \
                const double d = (double)xr[k] - mean;                         \
                ss += d * d;                                                   \
            }                                                                  \
            const double rstd = 1.0 / sqrt((len ? ss / (double)len : 0.0) + eps); \
            save_mean[r] = (T)mean;                                            \
            save_rstd[r] = (T)rstd;                                            \
            for (int64_t j = 0; j < g->D; j++) {                               \
                const double scale = (w ? (double)w[c0 + j] : 1.0) * rstd;     \
                const T a = (T)scale;                                          \
                const T c = (T)((b ? (double)b[c0 + j] : 0.0) - mean * scale); \
                const T *xc = xr + j * g->L;                                   \
                T *yc = y + r * len + j * g->L;                                \
                for (int64_t i = 0; i < g->L; i++) yc[i] = xc[i] * a + c;      \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    /* with u = grad_output * weight and xh the normalized input,             \
     * grad_input = rstd * (u - mean(u) - xh * mean(u * xh)), which per       \
     * channel is A * grad_output + B * x + C */                               \
    static void gn_bwd_input_##T(int64_t r0, int64_t r1, void *ctx) {          \
        const gn_ctx *k = ctx;                                                 \
        T *gx = k->out;                                                        \
        const T *gy = k->gy, *x = k->x, *w = k->w;                             \
        const T *save_mean = k->mean, *save_rstd = k->rstd;                    \
        const gn_geom *g = k->g;                                               \
        const int64_t len = g->D * g->L;                                       \
        for (int64_t r = r0; r < r1; r++) {                                    \
            const int64_t c0 = (r % g->G) * g->D;                              \
            const double mean = save_mean[r], rstd = save_rstd[r];             \
            double su = 0, sux = 0;                                            \
            for (int64_t j = 0; j < g->D; j++) {                               \
                const T *xc = x + r * len + j * g->L, *gc = gy + r * len + j * g->L; \
                double sg = 0, sgx = 0;                                        \
                _Pragma("omp simd reduction(+:sg, sgx)")                       \
                for (int64_t i = 0; i < g->L; i++) {                           \
                    sg += (double)gc[i];                                       \
                    sgx += (double)gc[i] * (double)xc[i];                      \
                }                                                              \
                const double wc = w ? (double)w[c0 + j] : 1.0;                 \
                su += wc * sg;                                                 \
                sux += wc * (sgx - mean * sg);                                 \
            }                                                                  \
            const double mu = su / (double)len, mux = sux * rstd / (double)len; \
            const double B = -rstd * rstd * mux, C = rstd * (rstd * mean * mux - mu); \
            for (int64_t j = 0; j < g->D; j++) {                               \
                const T a = (T)(rstd * (w ? (double)w[c0 + j] : 1.0));         \
                const T bb = (T)B, cc = (T)C;                                  \
                const int64_t o = r * len + j * g->L;                          \
                for (int64_t i = 0; i < g->L; i++)                             \
                    gx[o + i] = a * gy[o + i] + bb * x[o + i] + cc;            \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    /* grad_weight[c] = sum_n rstd_n (sum_i gy x - mean_n sum_i gy) */         \
    static void gn_bwd_params_##T(int64_t c0, int64_t c1, void *ctx) {         \
        const gn_ctx *k = ctx;                                                 \
        T *gw = k->out, *gb = k->out2;                                         \
        const T *gy = k->gy, *x = k->x;                                        \
        const T *save_mean = k->mean, *save_rstd = k->rstd;                    \
        const gn_geom *g = k->g;                                               \
        for (int64_t c = c0; c < c1; c++) {                                    \
            double sw = 0, sb = 0;                                             \
            for (int64_t n = 0; n < g->N; n++) {                               \
                const int64_t r = n * g->G + c / g->D, o = (n * g->C + c) * g->L; \
                double sg = 0, sgx = 0;                                        \
                _Pragma("omp simd reduction(+:sg, sgx)")                       \
                for (int64_t i = 0; i < g->L; i++) {                           \
                    sg += (double)gy[o + i];                                   \
                    sgx += (double)gy[o + i] * (double)x[o + i];               \
                }                                                              \
                sb += sg;                                                      \
                sw += (double)save_rstd[r] * (sgx - (double)save_mean[r] * sg); \
            }                                                                  \
            if (gw) gw[c] = (T)sw;                                             \
            if (gb) gb[c] = (T)sb;                                             \
        }                                                                      \
    }
DEFINE_GROUP_NORM(float)
DEFINE_GROUP_NORM(double)

/* data pointer of an optional tensor */
#define DATA_OR_NULL(t) ((t) ? thnn__data(t) : NULL)

/* save_mean / save_rstd: (N, G) of the input's dtype */
static int check_stats(const char *fn, const th_tensor *mean, const th_tensor *rstd,
                       const gn_geom *g, int dtype) {
    const int64_t s[2] = {g->N, g->G};
    int rc;
    if ((rc = thnn__check_out(fn, "save_mean", mean, 2, s, dtype))) return rc;
    return thnn__check_out(fn, "save_rstd", rstd, 2, s, dtype);
}

static int gn_check_grad(const char *fn, const th_tensor *gy, const th_tensor *x) {
    char a[256], b[256];
    int rc = thnn__check_float(fn, "grad_output", gy);
    if (rc) return rc;
    int ok = gy->ndim == x->ndim && gy->dtype == x->dtype;
    for (int i = 0; ok && i < x->ndim; i++) ok = gy->sizes[i] == x->sizes[i];
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s (%s) does not match "
                           "input %s (%s)", fn, thnn__shape(gy, a),
                           thnn__dtype_name(gy->dtype), thnn__shape(x, b),
                           thnn__dtype_name(x->dtype));
    return TH_OK;
}

THNN_API int thnn_group_norm_forward(th_tensor *output, th_tensor *save_mean,
                                     th_tensor *save_rstd, const th_tensor *input,
                                     const th_tensor *weight, const th_tensor *bias,
                                     int64_t num_groups, double eps) {
    static const char fn[] = "group_norm";
    gn_geom g = {0};  /* set by gn_geometry(); zeroed for the compiler's flow analysis */
    int rc;
    if ((rc = gn_geometry(fn, input, num_groups, &g))) return rc;
    const int dt = input->dtype;
    if ((rc = thnn__check_like(fn, "output", output, input))) return rc;
    if ((rc = check_stats(fn, save_mean, save_rstd, &g, dt))) return rc;
    if ((rc = thnn__check_vec(fn, "weight", weight, g.C, dt))) return rc;
    if ((rc = thnn__check_vec(fn, "bias", bias, g.C, dt))) return rc;
    th_tensor *x = thnn__contig(input);
    th_tensor *w = weight ? thnn__contig(weight) : NULL, *b = bias ? thnn__contig(bias) : NULL;
    if (!x || (weight && !w) || (bias && !b)) { rc = thnn_last_status(); goto done; }
    gn_ctx k = {.out = thnn__data(output), .mean = thnn__data(save_mean),
                .rstd = thnn__data(save_rstd), .x = thnn__data(x), .w = DATA_OR_NULL(w),
                .b = DATA_OR_NULL(b), .g = &g, .eps = eps};
    th_parallel_for(g.N * g.G, thnn__grain(g.D * g.L),
                    dt == TH_FLOAT32 ? gn_fwd_float : gn_fwd_double, &k);
done:
    thnn__release(x); thnn__release(w); thnn__release(b);
    return rc;
}

THNN_API int thnn_group_norm_backward_input(th_tensor *grad_input,
                                            const th_tensor *grad_output,
                                            const th_tensor *input,
                                            const th_tensor *weight,
                                            const th_tensor *save_mean,
                                            const th_tensor *save_rstd,
                                            int64_t num_groups) {
    static const char fn[] = "group_norm_backward_input";
    gn_geom g = {0};  /* set by gn_geometry(); zeroed for the compiler's flow analysis */
    int rc;
    if ((rc = gn_geometry(fn, input, num_groups, &g))) return rc;
    const int dt = input->dtype;
    if ((rc = gn_check_grad(fn, grad_output, input))) return rc;
    if ((rc = thnn__check_vec(fn, "weight", weight, g.C, dt))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, input))) return rc;
    if (!save_mean || !save_rstd)
        return thnn__error(TH_ERR_VALUE, "%s: save_mean and save_rstd are needed", fn);
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    th_tensor *w = weight ? thnn__contig(weight) : NULL;
    th_tensor *mt = thnn__contig(save_mean), *rt = thnn__contig(save_rstd);
    if (!x || !gy || (weight && !w) || !mt || !rt) { rc = thnn_last_status(); goto done; }
    if ((rc = check_stats(fn, mt, rt, &g, dt))) goto done;
    gn_ctx k = {.out = thnn__data(grad_input), .mean = thnn__data(mt), .rstd = thnn__data(rt),
                .x = thnn__data(x), .gy = thnn__data(gy), .w = DATA_OR_NULL(w), .g = &g};
    th_parallel_for(g.N * g.G, thnn__grain(g.D * g.L),
                    dt == TH_FLOAT32 ? gn_bwd_input_float : gn_bwd_input_double, &k);
done:
    thnn__release(x); thnn__release(gy); thnn__release(w);
    thnn__release(mt); thnn__release(rt);
    return rc;
}

THNN_API int thnn_group_norm_backward_params(th_tensor *grad_weight,
                                             th_tensor *grad_bias,
                                             const th_tensor *grad_output,
                                             const th_tensor *input,
                                             const th_tensor *save_mean,
                                             const th_tensor *save_rstd,
                                             int64_t num_groups) {
    static const char fn[] = "group_norm_backward_params";
    gn_geom g = {0};  /* set by gn_geometry(); zeroed for the compiler's flow analysis */
    int rc;
    if ((rc = gn_geometry(fn, input, num_groups, &g))) return rc;
    const int dt = input->dtype;
    if ((rc = gn_check_grad(fn, grad_output, input))) return rc;
    if (grad_weight && (rc = thnn__check_out(fn, "grad_weight", grad_weight, 1, &g.C, dt))) return rc;
    if (grad_bias && (rc = thnn__check_out(fn, "grad_bias", grad_bias, 1, &g.C, dt))) return rc;
    if (!save_mean || !save_rstd)
        return thnn__error(TH_ERR_VALUE, "%s: save_mean and save_rstd are needed", fn);
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    th_tensor *mt = thnn__contig(save_mean), *rt = thnn__contig(save_rstd);
    if (!x || !gy || !mt || !rt) { rc = thnn_last_status(); goto done; }
    if ((rc = check_stats(fn, mt, rt, &g, dt))) goto done;
    gn_ctx k = {.out = DATA_OR_NULL(grad_weight), .out2 = DATA_OR_NULL(grad_bias),
                .mean = thnn__data(mt), .rstd = thnn__data(rt), .x = thnn__data(x),
                .gy = thnn__data(gy), .g = &g};
    th_parallel_for(g.C, thnn__grain(g.N * g.L),
                    dt == TH_FLOAT32 ? gn_bwd_params_float : gn_bwd_params_double, &k);
done:
    thnn__release(x); thnn__release(gy); thnn__release(mt); thnn__release(rt);
    return rc;
}
