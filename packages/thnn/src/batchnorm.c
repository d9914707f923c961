/* batch_norm over (N, C, *): per-channel statistics, channels on libTH's
 * thread pool.
 * Sums use double accumulators for both dtypes; the per-element passes run
 * in the tensor's own type (typed loops the compiler vectorises: reading
 * every element through a dtype switch made training ResNet-sized batches
 * 5-7x slower than PyTorch). */
#include <math.h>

#include "thnn_internal.h"

/* element (n, c, i) of a contiguous (N, C, L) tensor as double */
static inline double ld(const th_tensor *t, int64_t k) {
    return t->dtype == TH_FLOAT32 ? (double)((const float *)thnn__data(t))[k]
                                  : ((const double *)thnn__data(t))[k];
}
static inline void st(th_tensor *t, int64_t k, double v) {
    if (t->dtype == TH_FLOAT32) ((float *)thnn__data(t))[k] = (float)v;
    else ((double *)thnn__data(t))[k] = v;
}

/* per-channel loops over the N rows of L contiguous elements of channel c */
#define DEFINE_BN_LOOPS(T)                                                    \
    /* mean and sum of squared deviations (two passes, for accuracy) */      \
    static void bn_stats_##T(const T *x, int64_t N, int64_t C, int64_t L,     \
                             int64_t c, double *mean, double *m2) {           \
        double s = 0, ss = 0;                                                 \
        for (int64_t n = 0; n < N; n++) {                                     \
            const T *p = x + (n * C + c) * L;                                 \
            for (int64_t i = 0; i < L; i++) s += p[i];                        \
        }                                                                     \
        const double m = s / (double)(N * L);                                 \
        for (int64_t n = 0; n < N; n++) {                                     \
            const T *p = x + (n * C + c) * L;                                 \
            for (int64_t i = 0; i < L; i++) {                                 \
                const double d = (double)p[i] - m;                            \
                ss += d * d;                                                  \
            }                                                                 \
        }                                                                     \
        *mean = m;                                                            \
        *m2 = ss;                                                             \
    }                                                                         \
    /* y = x * a + b */                                                       \
    static void bn_affine_##T(T *y, const T *x, int64_t N, int64_t C,         \
                              int64_t L, int64_t c, double a, double b) {     \
        const T ta = (T)a, tb = (T)b;                                         \
        for (int64_t n = 0; n < N; n++) {                                     \
            const T *p = x + (n * C + c) * L;                                 \
            T *q = y + (n * C + c) * L;                                       \
            for (int64_t i = 0; i < L; i++) q[i] = p[i] * ta + tb;            \
        }                                                                     \
    }                                                                         \
    /* sum of g and of g * (x - mean) */                                      \
    static void bn_grad_sums_##T(const T *g, const T *x, int64_t N,           \
                                 int64_t C, int64_t L, int64_t c,             \
                                 double mean, double *sg, double *sgx) {      \
        double a = 0, b = 0;                                                  \
        for (int64_t n = 0; n < N; n++) {                                     \
            const T *gp = g + (n * C + c) * L, *xp = x + (n * C + c) * L;     \
            for (int64_t i = 0; i < L; i++) {                                 \
                a += gp[i];                                                   \
                b += (double)gp[i] * ((double)xp[i] - mean);                  \
            }                                                                 \
        }                                                                     \
        *sg = a;                                                              \
        *sgx = b;                                                             \
    }                                                                         \
    /* gin = ((g - mg) - (x - mean) * proj) * k */                            \
    static void bn_grad_input_##T(T *gin, const T *g, const T *x, int64_t N,  \
                                  int64_t C, int64_t L, int64_t c,            \
                                  double mean, double mg, double proj,        \
                                  double k) {                                 \
        const T tm = (T)mean, tmg = (T)mg, tp = (T)proj, tk = (T)k;           \
        for (int64_t n = 0; n < N; n++) {                                     \
            const T *gp = g + (n * C + c) * L, *xp = x + (n * C + c) * L;     \
            T *q = gin + (n * C + c) * L;                                     \
            for (int64_t i = 0; i < L; i++)                                   \
                q[i] = ((gp[i] - tmg) - (xp[i] - tm) * tp) * tk;              \
        }                                                                     \
    }
DEFINE_BN_LOOPS(float)
DEFINE_BN_LOOPS(double)

static void bn_stats(const th_tensor *x, int64_t N, int64_t C, int64_t L,
                     int64_t c, double *mean, double *m2) {
    if (x->dtype == TH_FLOAT32) bn_stats_float(thnn__data(x), N, C, L, c, mean, m2);
    else bn_stats_double(thnn__data(x), N, C, L, c, mean, m2);
}

static void bn_grad_sums(const th_tensor *g, const th_tensor *x, int64_t N,
                         int64_t C, int64_t L, int64_t c, double mean,
                         double *sg, double *sgx) {
    if (x->dtype == TH_FLOAT32)
        bn_grad_sums_float(thnn__data(g), thnn__data(x), N, C, L, c, mean, sg, sgx);
    else
        bn_grad_sums_double(thnn__data(g), thnn__data(x), N, C, L, c, mean, sg, sgx);
}

/* one call's tensors and settings, for the per-channel range functions */
typedef struct bn_ctx {
    th_tensor *out, *out2; /* output, or grad_input, or grad_weight and grad_bias */
    th_tensor *save_mean, *save_invstd, *running_mean, *running_var;
    const th_tensor *x, *gy, *w, *b, *mean, *invstd;
    int training;
    double momentum, eps;
    int64_t N, C, L;
} bn_ctx;

/* a channel per range above THNN_GRAIN elements in all, else serial */
static int64_t bn_grain(int64_t N, int64_t C, int64_t L) {
    return N * C * L > THNN_GRAIN ? 1 : C;
}

static void bn_fwd_range(int64_t c0, int64_t c1, void *ctx) {
    const bn_ctx *k = ctx;
    const int64_t N = k->N, C = k->C, L = k->L;
    for (int64_t c = c0; c < c1; c++) {
        double mean, invstd;
        if (k->training) {
            double ss;
            bn_stats(k->x, N, C, L, c, &mean, &ss);
            invstd = 1.0 / sqrt(ss / (double)(N * L) + k->eps);
            if (k->running_mean)
                st(k->running_mean, c, (1 - k->momentum) * ld(k->running_mean, c) +
                   k->momentum * mean);
            if (k->running_var)
                st(k->running_var, c, (1 - k->momentum) * ld(k->running_var, c) +
                   k->momentum * ss / (double)(N * L - 1));
        } else {
            mean = ld(k->running_mean, c);
            invstd = 1.0 / sqrt(ld(k->running_var, c) + k->eps);
        }
        st(k->save_mean, c, mean);
        st(k->save_invstd, c, invstd);
        const double scale = (k->w ? ld(k->w, c) : 1.0) * invstd;
        const double shift = (k->b ? ld(k->b, c) : 0.0) - mean * scale;
        if (k->x->dtype == TH_FLOAT32)
            bn_affine_float(thnn__data(k->out), thnn__data(k->x), N, C, L, c, scale, shift);
        else
            bn_affine_double(thnn__data(k->out), thnn__data(k->x), N, C, L, c, scale, shift);
    }
}

static void bn_bwd_input_range(int64_t c0, int64_t c1, void *ctx) {
    const bn_ctx *k = ctx;
    const int64_t N = k->N, C = k->C, L = k->L;
    const double cnt = (double)(N * L);
    for (int64_t c = c0; c < c1; c++) {
        const double mean = ld(k->mean, c), invstd = ld(k->invstd, c);
        const double wc = k->w ? ld(k->w, c) : 1.0;
        double sg = 0, sgx = 0;
        if (k->training) bn_grad_sums(k->gy, k->x, N, C, L, c, mean, &sg, &sgx);
        /* training: gin = (g - mean(g) - (x - mean) * invstd^2 * mean(g * (x - mean)))
                           * w * invstd; eval: gin = g * w * invstd */
        const double mg = sg / cnt, proj = invstd * invstd * sgx / cnt;
        if (k->x->dtype == TH_FLOAT32)
            bn_grad_input_float(thnn__data(k->out), thnn__data(k->gy), thnn__data(k->x),
                                N, C, L, c, mean, mg, proj, wc * invstd);
        else
            bn_grad_input_double(thnn__data(k->out), thnn__data(k->gy), thnn__data(k->x),
                                 N, C, L, c, mean, mg, proj, wc * invstd);
    }
}

static void bn_bwd_params_range(int64_t c0, int64_t c1, void *ctx) {
    const bn_ctx *k = ctx;
    for (int64_t c = c0; c < c1; c++) {
        const double mean = ld(k->mean, c), invstd = ld(k->invstd, c);
        double sg, sgx;
        bn_grad_sums(k->gy, k->x, k->N, k->C, k->L, c, mean, &sg, &sgx);
        if (k->out) st(k->out, c, sgx * invstd);
        if (k->out2) st(k->out2, c, sg);
    }
}

static int geometry(const char *fn, const th_tensor *input, int64_t *N,
                    int64_t *C, int64_t *L) {
    char a[256];
    int rc = thnn__check_float(fn, "input", input);
    if (rc) return rc;
    if (input->ndim < 2)
        return thnn__error(TH_ERR_VALUE, "%s: expected 2D or more input (got %dD "
                           "input of shape %s)", fn, input->ndim, thnn__shape(input, a));
    *N = input->sizes[0]; *C = input->sizes[1]; *L = 1;
    for (int i = 2; i < input->ndim; i++) *L *= input->sizes[i];
    return TH_OK;
}

THNN_API int thnn_batch_norm_forward(th_tensor *output, th_tensor *save_mean,
                                     th_tensor *save_invstd,
                                     th_tensor *running_mean,
                                     th_tensor *running_var,
                                     const th_tensor *input,
                                     const th_tensor *weight,
                                     const th_tensor *bias, int training,
                                     double momentum, double eps) {
    static const char fn[] = "batch_norm";
    int64_t N = 0, C = 0, L = 0;
    int rc;
    if ((rc = geometry(fn, input, &N, &C, &L))) return rc;
    const int dt = input->dtype;
    if ((rc = thnn__check_like(fn, "output", output, input))) return rc;
    if ((rc = thnn__check_out(fn, "save_mean", save_mean, 1, &C, dt))) return rc;
    if ((rc = thnn__check_out(fn, "save_invstd", save_invstd, 1, &C, dt))) return rc;
    if ((rc = thnn__check_vec(fn, "weight", weight, C, dt))) return rc;
    if ((rc = thnn__check_vec(fn, "bias", bias, C, dt))) return rc;
    if (running_mean && (rc = thnn__check_out(fn, "running_mean", running_mean, 1, &C, dt))) return rc;
    if (running_var && (rc = thnn__check_out(fn, "running_var", running_var, 1, &C, dt))) return rc;
    if (!training && (!running_mean || !running_var))
        return thnn__error(TH_ERR_RUNTIME, "%s: running_mean and running_var must "
                           "be given in evaluation mode", fn);
    if (training && N * L <= 1)
        return thnn__error(TH_ERR_VALUE, "Expected more than 1 value per channel "
                           "when training, got input size %lld", (long long)(N * L));
    th_tensor *x = thnn__contig(input);
    th_tensor *w = weight ? thnn__contig(weight) : NULL, *b = bias ? thnn__contig(bias) : NULL;
    if (!x || (weight && !w) || (bias && !b)) { rc = thnn_last_status(); goto done; }
    bn_ctx k = {.out = output, .save_mean = save_mean, .save_invstd = save_invstd,
                .running_mean = running_mean, .running_var = running_var, .x = x,
                .w = w, .b = b, .training = training, .momentum = momentum, .eps = eps,
                .N = N, .C = C, .L = L};
    th_parallel_for(C, bn_grain(N, C, L), bn_fwd_range, &k);
done:
    thnn__release(x); thnn__release(w); thnn__release(b);
    return rc;
}

static int check_grad(const char *fn, const th_tensor *gout, const th_tensor *input,
                      const th_tensor *mean, const th_tensor *invstd, int64_t C) {
    char a[256], b[256];
    int rc = thnn__check_float(fn, "grad_output", gout);
    if (rc) return rc;
    int ok = gout->ndim == input->ndim && gout->dtype == input->dtype;
    for (int i = 0; ok && i < input->ndim; i++) ok = gout->sizes[i] == input->sizes[i];
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s does not match input %s",
                           fn, thnn__shape(gout, a), thnn__shape(input, b));
    if (!mean || !invstd)
        return thnn__error(TH_ERR_VALUE, "%s: save_mean and save_invstd are needed", fn);
    if ((rc = thnn__check_vec(fn, "save_mean", mean, C, input->dtype))) return rc;
    return thnn__check_vec(fn, "save_invstd", invstd, C, input->dtype);
}

THNN_API int thnn_batch_norm_backward_input(th_tensor *grad_input,
                                            const th_tensor *grad_output,
                                            const th_tensor *input,
                                            const th_tensor *weight,
                                            const th_tensor *save_mean,
                                            const th_tensor *save_invstd,
                                            int training) {
    static const char fn[] = "batch_norm_backward_input";
    int64_t N = 0, C = 0, L = 0;
    int rc;
    if ((rc = geometry(fn, input, &N, &C, &L))) return rc;
    if ((rc = check_grad(fn, grad_output, input, save_mean, save_invstd, C))) return rc;
    if ((rc = thnn__check_vec(fn, "weight", weight, C, input->dtype))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, input))) return rc;
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    th_tensor *w = weight ? thnn__contig(weight) : NULL;
    th_tensor *m = thnn__contig(save_mean), *is = thnn__contig(save_invstd);
    if (!x || !gy || (weight && !w) || !m || !is) { rc = thnn_last_status(); goto done; }
    bn_ctx k = {.out = grad_input, .x = x, .gy = gy, .w = w, .mean = m, .invstd = is,
                .training = training, .N = N, .C = C, .L = L};
    th_parallel_for(C, bn_grain(N, C, L), bn_bwd_input_range, &k);
done:
    thnn__release(x); thnn__release(gy); thnn__release(w);
    thnn__release(m); thnn__release(is);
    return rc;
}

THNN_API int thnn_batch_norm_backward_params(th_tensor *grad_weight,
                                             th_tensor *grad_bias,
                                             const th_tensor *grad_output,
                                             const th_tensor *input,
                                             const th_tensor *save_mean,
                                             const th_tensor *save_invstd) {
    static const char fn[] = "batch_norm_backward_params";
    int64_t N = 0, C = 0, L = 0;
    int rc;
    if ((rc = geometry(fn, input, &N, &C, &L))) return rc;
    if ((rc = check_grad(fn, grad_output, input, save_mean, save_invstd, C))) return rc;
    if (grad_weight && (rc = thnn__check_out(fn, "grad_weight", grad_weight, 1, &C, input->dtype))) return rc;
    if (grad_bias && (rc = thnn__check_out(fn, "grad_bias", grad_bias, 1, &C, input->dtype))) return rc;
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    th_tensor *m = thnn__contig(save_mean), *is = thnn__contig(save_invstd);
    if (!x || !gy || !m || !is) { rc = thnn_last_status(); goto done; }
    bn_ctx k = {.out = grad_weight, .out2 = grad_bias, .x = x, .gy = gy, .mean = m,
                .invstd = is, .N = N, .C = C, .L = L};
    th_parallel_for(C, bn_grain(N, C, L), bn_bwd_params_range, &k);
done:
    thnn__release(x); thnn__release(gy); thnn__release(m); thnn__release(is);
    return rc;
}
