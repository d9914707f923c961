/* batch_norm over (N, C, *): per-channel statistics, OpenMP over channels.
 * Computed with double accumulators for both dtypes. */
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
    int64_t N, C, L;
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
    #pragma omp parallel for schedule(dynamic, 1) if(N * C * L > THNN_GRAIN)
    for (int64_t c = 0; c < C; c++) {
        double mean, invstd;
        if (training) {
            double s = 0, ss = 0;
            for (int64_t n = 0; n < N; n++)
                for (int64_t i = 0; i < L; i++) s += ld(x, (n * C + c) * L + i);
            mean = s / (double)(N * L);
            for (int64_t n = 0; n < N; n++)
                for (int64_t i = 0; i < L; i++) {
                    double d = ld(x, (n * C + c) * L + i) - mean;
                    ss += d * d;
                }
            double var = ss / (double)(N * L);
            invstd = 1.0 / sqrt(var + eps);
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
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < L; i++) {
                int64_t k = (n * C + c) * L + i;
                st(output, k, (ld(x, k) - mean) * scale + shift);
            }
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
    int64_t N, C, L;
    int rc;
    if ((rc = geometry(fn, input, &N, &C, &L))) return rc;
    if ((rc = check_grad(fn, grad_output, input, save_mean, save_invstd, C))) return rc;
    if ((rc = thnn__check_vec(fn, "weight", weight, C, input->dtype))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, input))) return rc;
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    th_tensor *w = weight ? thnn__contig(weight) : NULL;
    th_tensor *m = thnn__contig(save_mean), *is = thnn__contig(save_invstd);
    if (!x || !gy || (weight && !w) || !m || !is) { rc = thnn_last_status(); goto done; }
    #pragma omp parallel for schedule(dynamic, 1) if(N * C * L > THNN_GRAIN)
    for (int64_t c = 0; c < C; c++) {
        const double mean = ld(m, c), invstd = ld(is, c), wc = w ? ld(w, c) : 1.0;
        double sg = 0, sgx = 0;
        if (training)
            for (int64_t n = 0; n < N; n++)
                for (int64_t i = 0; i < L; i++) {
                    int64_t k = (n * C + c) * L + i;
                    double g = ld(gy, k);
                    sg += g;
                    sgx += g * (ld(x, k) - mean) * invstd;
                }
        const double cnt = (double)(N * L);
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < L; i++) {
                int64_t k = (n * C + c) * L + i;
                double g = ld(gy, k);
                if (training) {
                    double xh = (ld(x, k) - mean) * invstd;
                    g = g - sg / cnt - xh * sgx / cnt;
                }
                st(grad_input, k, g * wc * invstd);
            }
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
    int64_t N, C, L;
    int rc;
    if ((rc = geometry(fn, input, &N, &C, &L))) return rc;
    if ((rc = check_grad(fn, grad_output, input, save_mean, save_invstd, C))) return rc;
    if (grad_weight && (rc = thnn__check_out(fn, "grad_weight", grad_weight, 1, &C, input->dtype))) return rc;
    if (grad_bias && (rc = thnn__check_out(fn, "grad_bias", grad_bias, 1, &C, input->dtype))) return rc;
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    th_tensor *m = thnn__contig(save_mean), *is = thnn__contig(save_invstd);
    if (!x || !gy || !m || !is) { rc = thnn_last_status(); goto done; }
    #pragma omp parallel for schedule(dynamic, 1) if(N * C * L > THNN_GRAIN)
    for (int64_t c = 0; c < C; c++) {
        const double mean = ld(m, c), invstd = ld(is, c);
        double sg = 0, sgx = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < L; i++) {
                int64_t k = (n * C + c) * L + i;
                double g = ld(gy, k);
                sg += g;
                sgx += g * (ld(x, k) - mean) * invstd;
            }
        if (grad_weight) st(grad_weight, c, sgx);
        if (grad_bias) st(grad_bias, c, sg);
    }
done:
    thnn__release(x); thnn__release(gy); thnn__release(m); thnn__release(is);
    return rc;
}
