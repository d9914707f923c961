/* group_norm over (N, C, *): channels split into G groups of C/G, each
 * (sample, group) normalized over its C/G * L elements, then the
 * per-channel affine.  On libTH's thread pool: (sample, group) rows in
 * the forward and the input backward, channels in the parameter backward;
 * sums in double (vectorized as `omp simd` reductions), elementwise passes in
 * the tensor's type with per-channel coefficients. */
#include <math.h>

#include "thnn_internal.h"

typedef struct gn_geom {
    int64_t N, C, G, D, L; /* D = C / G channels per group, L spatial */
} gn_geom;

static int geometry(const char *fn, const th_tensor *input, int64_t num_groups,
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

/* one call's data pointers and geometry */
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

static int check_grad(const char *fn, const th_tensor *gy, const th_tensor *x) {
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
    gn_geom g = {0};  /* set by geometry(); zeroed for the compiler's flow analysis */
    int rc;
    if ((rc = geometry(fn, input, num_groups, &g))) return rc;
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
    gn_geom g = {0};  /* set by geometry(); zeroed for the compiler's flow analysis */
    int rc;
    if ((rc = geometry(fn, input, num_groups, &g))) return rc;
    const int dt = input->dtype;
    if ((rc = check_grad(fn, grad_output, input))) return rc;
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
    gn_geom g = {0};  /* set by geometry(); zeroed for the compiler's flow analysis */
    int rc;
    if ((rc = geometry(fn, input, num_groups, &g))) return rc;
    const int dt = input->dtype;
    if ((rc = check_grad(fn, grad_output, input))) return rc;
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
