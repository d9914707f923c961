/* batch_norm over (N, C, *): per-channel statistics, OpenMP over channels.
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
    #pragma omp parallel for num_threads(thnn__threads()) schedule(dynamic, 1) if(N * C * L > THNN_GRAIN)
    for (int64_t c = 0; c < C; c++) {
        double mean, invstd;
        if (training) {
            double ss;
            bn_stats(x, N, C, L, c, &mean, &ss);
            invstd = 1.0 / sqrt(ss / (double)(N * L) + eps);
            if (running_mean)
                st(running_mean, c, (1 - momentum) * ld(running_mean, c) + momentum * mean);
            if (running_var)
                st(running_var, c, (1 - momentum) * ld(running_var, c) +
                   momentum * ss / (double)(N * L - 1));
        } else {
            mean = ld(running_mean, c);
            invstd = 1.0 / sqrt(ld(running_var, c) + eps);
        }
        st(save_mean, c, mean);
        st(save_invstd, c, invstd);
        const double scale = (w ? ld(w, c) : 1.0) * invstd, shift = b ? ld(b, c) : 0.0;
        if (dt == TH_FLOAT32)
            bn_affine_float(thnn__data(output), thnn__data(x), N, C, L, c, scale,
                            shift - mean * scale);
        else
            bn_affine_double(thnn__data(output), thnn__data(x), N, C, L, c, scale,
                             shift - mean * scale);
    }
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
    #pragma omp parallel for num_threads(thnn__threads()) schedule(dynamic, 1) if(N * C * L > THNN_GRAIN)
    for (int64_t c = 0; c < C; c++) {
        const double mean = ld(m, c), invstd = ld(is, c), wc = w ? ld(w, c) : 1.0;
        const double cnt = (double)(N * L);
        double sg = 0, sgx = 0;
        if (training) bn_grad_sums(gy, x, N, C, L, c, mean, &sg, &sgx);
        /* training: gin = (g - mean(g) - (x - mean) * invstd^2 * mean(g * (x - mean)))
                           * w * invstd; eval: gin = g * w * invstd */
        const double mg = sg / cnt, proj = invstd * invstd * sgx / cnt;
        if (x->dtype == TH_FLOAT32)
            bn_grad_input_float(thnn__data(grad_input), thnn__data(gy), thnn__data(x), N, C,
                                L, c, mean, mg, proj, wc * invstd);
        else
            bn_grad_input_double(thnn__data(grad_input), thnn__data(gy), thnn__data(x), N,
                                 C, L, c, mean, mg, proj, wc * invstd);
    }
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
    #pragma omp parallel for num_threads(thnn__threads()) schedule(dynamic, 1) if(N * C * L > THNN_GRAIN)
    for (int64_t c = 0; c < C; c++) {
        const double mean = ld(m, c), invstd = ld(is, c);
        double sg, sgx;
        bn_grad_sums(gy, x, N, C, L, c, mean, &sg, &sgx);
        if (grad_weight) st(grad_weight, c, sgx * invstd);
        if (grad_bias) st(grad_bias, c, sg);
    }
done:
    thnn__release(x); thnn__release(gy); thnn__release(m); thnn__release(is);
    return rc;
}
