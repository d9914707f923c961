/* layer_norm over the last `normalized_ndim` dims: rows (M, K), rows on
 * libTH's thread pool (columns in the parameter backward); double
 * accumulators. */
#include <math.h>

#include "thnn_internal.h"

static inline double ld(const th_tensor *t, int64_t k) {
    return t->dtype == TH_FLOAT32 ? (double)((const float *)thnn__data(t))[k]
                                  : ((const double *)thnn__data(t))[k];
}
static inline void st(th_tensor *t, int64_t k, double v) {
    if (t->dtype == TH_FLOAT32) ((float *)thnn__data(t))[k] = (float)v;
    else ((double *)thnn__data(t))[k] = v;
}

static int geometry(const char *fn, const th_tensor *input, int nd,
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

/* one call's tensors and settings, for the range functions */
typedef struct ln_ctx {
    th_tensor *out, *out2; /* output, grad_input, or grad_weight and grad_bias */
    th_tensor *save_mean, *save_invstd;
    const th_tensor *x, *gy, *w, *b, *mean, *invstd;
    double eps;
    int64_t M, K;
} ln_ctx;

static void ln_fwd_range(int64_t m0, int64_t m1, void *ctx) {
    const ln_ctx *c = ctx;
    const int64_t K = c->K;
    for (int64_t m = m0; m < m1; m++) {
        double s = 0, ss = 0;
        for (int64_t k = 0; k < K; k++) s += ld(c->x, m * K + k);
        const double mean = s / (double)K;
        for (int64_t k = 0; k < K; k++) {
            double d = ld(c->x, m * K + k) - mean;
            ss += d * d;
        }
        const double invstd = 1.0 / sqrt(ss / (double)K + c->eps);
        st(c->save_mean, m, mean);
        st(c->save_invstd, m, invstd);
        for (int64_t k = 0; k < K; k++) {
            double v = (ld(c->x, m * K + k) - mean) * invstd;
            if (c->w) v *= ld(c->w, k);
            if (c->b) v += ld(c->b, k);
            st(c->out, m * K + k, v);
        }
    }
}

static void ln_bwd_input_range(int64_t m0, int64_t m1, void *ctx) {
    const ln_ctx *c = ctx;
    const int64_t K = c->K;
    for (int64_t m = m0; m < m1; m++) {
        const double mean = ld(c->mean, m), invstd = ld(c->invstd, m);
        double sg = 0, sgx = 0;
        for (int64_t k = 0; k < K; k++) {
            double g = ld(c->gy, m * K + k) * (c->w ? ld(c->w, k) : 1.0);
            sg += g;
            sgx += g * (ld(c->x, m * K + k) - mean) * invstd;
        }
        for (int64_t k = 0; k < K; k++) {
            double g = ld(c->gy, m * K + k) * (c->w ? ld(c->w, k) : 1.0);
            double xh = (ld(c->x, m * K + k) - mean) * invstd;
            st(c->out, m * K + k, invstd * (g - sg / (double)K - xh * sgx / (double)K));
        }
    }
}

static void ln_bwd_params_range(int64_t k0, int64_t k1, void *ctx) {
    const ln_ctx *c = ctx;
    const int64_t M = c->M, K = c->K;
    for (int64_t k = k0; k < k1; k++) {
        double sw = 0, sb = 0;
        for (int64_t m = 0; m < M; m++) {
            double g = ld(c->gy, m * K + k);
            sb += g;
            sw += g * (ld(c->x, m * K + k) - ld(c->mean, m)) * ld(c->invstd, m);
        }
        if (c->out) st(c->out, k, sw);
        if (c->out2) st(c->out2, k, sb);
    }
}

THNN_API int thnn_layer_norm_forward(th_tensor *output, th_tensor *save_mean,
                                     th_tensor *save_invstd,
                                     const th_tensor *input,
                                     const th_tensor *weight,
                                     const th_tensor *bias,
                                     int normalized_ndim, double eps) {
    static const char fn[] = "layer_norm";
    int64_t M, K;
    int rc;
    if ((rc = geometry(fn, input, normalized_ndim, weight, &M, &K))) return rc;
    if ((rc = geometry(fn, input, normalized_ndim, bias, &M, &K))) return rc;
    if ((rc = thnn__check_like(fn, "output", output, input))) return rc;
    if ((rc = thnn__check_out(fn, "save_mean", save_mean, 1, &M, input->dtype))) return rc;
    if ((rc = thnn__check_out(fn, "save_invstd", save_invstd, 1, &M, input->dtype))) return rc;
    th_tensor *x = thnn__contig(input);
    th_tensor *w = weight ? thnn__contig(weight) : NULL, *b = bias ? thnn__contig(bias) : NULL;
    if (!x || (weight && !w) || (bias && !b)) { rc = thnn_last_status(); goto done; }
    ln_ctx c = {.out = output, .save_mean = save_mean, .save_invstd = save_invstd,
                .x = x, .w = w, .b = b, .eps = eps, .K = K};
    th_parallel_for(M, thnn__grain(K), ln_fwd_range, &c);
done:
    thnn__release(x); thnn__release(w); thnn__release(b);
    return rc;
}

static int check_grad(const char *fn, const th_tensor *gy, const th_tensor *x,
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
    if ((rc = geometry(fn, input, normalized_ndim, weight, &M, &K))) return rc;
    if ((rc = check_grad(fn, grad_output, input, save_mean, save_invstd, M))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, input))) return rc;
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    th_tensor *w = weight ? thnn__contig(weight) : NULL;
    th_tensor *mt = thnn__contig(save_mean), *it = thnn__contig(save_invstd);
    if (!x || !gy || (weight && !w) || !mt || !it) { rc = thnn_last_status(); goto done; }
    ln_ctx c = {.out = grad_input, .x = x, .gy = gy, .w = w, .mean = mt, .invstd = it,
                .K = K};
    th_parallel_for(M, thnn__grain(K), ln_bwd_input_range, &c);
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
    if ((rc = geometry(fn, input, normalized_ndim, grad_weight, &M, &K))) return rc;
    if ((rc = geometry(fn, input, normalized_ndim, grad_bias, &M, &K))) return rc;
    if ((rc = check_grad(fn, grad_output, input, save_mean, save_invstd, M))) return rc;
    if (grad_weight && !th_is_contiguous(grad_weight))
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_weight must be contiguous", fn);
    if (grad_bias && !th_is_contiguous(grad_bias))
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_bias must be contiguous", fn);
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    th_tensor *mt = thnn__contig(save_mean), *it = thnn__contig(save_invstd);
    if (!x || !gy || !mt || !it) { rc = thnn_last_status(); goto done; }
    ln_ctx c = {.out = grad_weight, .out2 = grad_bias, .x = x, .gy = gy, .mean = mt,
                .invstd = it, .M = M, .K = K};
    th_parallel_for(K, thnn__grain(M), ln_bwd_params_range, &c);
done:
    thnn__release(x); thnn__release(gy); thnn__release(mt); thnn__release(it);
    return rc;
}
