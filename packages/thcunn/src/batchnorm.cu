// batch_norm over (N, C, *): per-channel statistics through libTHC's
// reductions (float64 accumulation), the normalisation and the input
// gradient in kernels of their own.
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

// y = (x - mean[c]) * invstd[c] * w[c] + b[c] over (N, C, S)
template <typename T> struct NormFn {
    T *y;
    const T *x, *mean, *invstd, *w, *b;
    int64_t C, S;
    THCUNN_HD void operator()(int64_t i) const {
        int64_t c = (i / S) % C;
        T v = (x[i] - mean[c]) * invstd[c];
        y[i] = v * (w ? w[c] : T(1)) + (b ? b[c] : T(0));
    }
};

// training: gi = w * invstd * (g - sum_g / M - xhat * sum_gxhat / M);
// eval: gi = g * w * invstd
template <typename T> struct GradFn {
    T *gi;
    const T *g, *x, *mean, *invstd, *w, *sum_g, *sum_gx;
    int64_t C, S;
    double M;
    int training;
    THCUNN_HD void operator()(int64_t i) const {
        int64_t c = (i / S) % C;
        T scale = invstd[c] * (w ? w[c] : T(1));
        if (!training) {
            gi[i] = g[i] * scale;
            return;
        }
        T xhat = (x[i] - mean[c]) * invstd[c];
        gi[i] = scale * (g[i] - (T)(sum_g[c] / M) - xhat * (T)(sum_gx[c] / M));
    }
};

thc_tensor *number(double v) {
    thc_tensor *s = thc_scalar_double(v, THC_FLOAT64);
    if (s) s->flags = THC_TENSOR_WRAPPED_NUMBER;
    return s;
}

// (N, C, S) contiguous view of a contiguous copy of input
thc_tensor *as_ncs(const thc_tensor *input, int64_t *C, int64_t *S) {
    *C = input->sizes[1];
    *S = 1;
    for (int d = 2; d < input->ndim; d++) *S *= input->sizes[d];
    int64_t shape[3] = {input->sizes[0], *C, *S};
    thc_tensor *x = thc_contiguous(input);
    thc_tensor *v = x ? thc_view(x, 3, shape) : NULL;
    thc_tensor_release(x);
    return v;
}

thc_tensor *channel_view(const thc_tensor *t, int64_t C) {   // (C) as (1, C, 1)
    int64_t shape[3] = {1, C, 1};
    return thc_view(t, 3, shape);
}

// per-channel sums over dims 0 and 2, as float64
thc_tensor *channel_sum(const thc_tensor *t) {
    int dims[2] = {0, 2};
    return thc_reduce(THC_RED_SUM, t, 2, dims, 0, THC_FLOAT64);
}

int check_channel(const char *what, const char *arg, const thc_tensor *t, int64_t C, int dtype) {
    if (!t) return THC_OK;
    if (thcunn__check_tensor(what, arg, t, 1) || t->ndim != 1 || t->sizes[0] != C ||
        t->dtype != dtype)
        return thcunn__error(THC_ERR_RUNTIME, "%s: %s should be a %s vector of %lld channels",
                             what, arg, thc_dtype_name(dtype), (long long)C);
    return THC_OK;
}

int check_input(const char *what, const thc_tensor *input) {
    if (thcunn__check_tensor(what, "input", input, 1)) return thcunn_last_status();
    if (input->ndim < 2)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected an input of 2 or more dims (N, C, "
                             "*), got %d", what, input->ndim);
    return THC_OK;
}

}  // namespace

extern "C" THCUNN_API int thcunn_batch_norm_forward(thc_tensor *output, thc_tensor *save_mean,
                                                    thc_tensor *save_invstd,
                                                    thc_tensor *running_mean,
                                                    thc_tensor *running_var,
                                                    const thc_tensor *input,
                                                    const thc_tensor *weight,
                                                    const thc_tensor *bias, int training,
                                                    double momentum, double eps) {
    const char *what = "batch_norm_forward";
    if (thcunn__check_runtime(what) || check_input(what, input)) return thcunn_last_status();
    int64_t C = input->sizes[1], S = 1, dt = input->dtype;
    if (thcunn__check_output(what, "output", output, input->ndim, input->sizes, dt) ||
        thcunn__check_output(what, "save_mean", save_mean, 1, &C, dt) ||
        thcunn__check_output(what, "save_invstd", save_invstd, 1, &C, dt) ||
        check_channel(what, "weight", weight, C, dt) || check_channel(what, "bias", bias, C, dt) ||
        check_channel(what, "running_mean", running_mean, C, dt) ||
        check_channel(what, "running_var", running_var, C, dt))
        return thcunn_last_status();
    if (!training && (!running_mean || !running_var))
        return thcunn__error(THC_ERR_RUNTIME, "%s: running_mean and running_var must be given "
                             "in evaluation mode", what);
    int64_t M = input->sizes[0];
    for (int d = 2; d < input->ndim; d++) M *= input->sizes[d];
    if (training && M <= 1)
        return thcunn__error(THC_ERR_VALUE, "Expected more than 1 value per channel when "
                             "training, got input size %lld", (long long)M);
    thc_tensor *x = as_ncs(input, &C, &S);
    thc_tensor *mean = NULL, *var = NULL, *veps = NULL, *invstd = NULL, *e = NULL;
    int rc = x ? THC_OK : thcunn__from_thc();
    int dims[2] = {0, 2};
    if (!rc) {
        if (training) {   // the batch's mean and biased variance
            mean = thc_reduce(THC_RED_MEAN, x, 2, dims, 0, -1);
            var = mean ? thc_var(x, 2, dims, 0.0, 0, 0) : NULL;
        } else {
            mean = thc_clone(running_mean);
            var = mean ? thc_clone(running_var) : NULL;
        }
        e = number(eps);
        veps = var && e ? thc_binary(THC_ADD, var, e) : NULL;
        invstd = veps ? thc_unary(THC_RSQRT, veps) : NULL;
        if (!invstd || thc_copy(save_mean, mean) || thc_copy(save_invstd, invstd))
            rc = thcunn__from_thc();
    }
    if (!rc)
        THCUNN_FLOATING(dt, rc = for_each(what, thcunn__numel(x),
                                          NormFn<scalar_t>{data<scalar_t>(output),
                                                           data<scalar_t>(x),
                                                           data<scalar_t>(save_mean),
                                                           data<scalar_t>(save_invstd),
                                                           weight ? data<scalar_t>(weight) : NULL,
                                                           bias ? data<scalar_t>(bias) : NULL, C,
                                                           S}))
    if (!rc && training && running_mean && running_var) {
        // running = (1 - momentum) * running + momentum * batch statistic
        // (the variance unbiased: times M / (M - 1))
        thc_tensor *keep = number(1.0 - momentum), *mom = number(momentum),
                   *unb = number(momentum * (double)M / (double)(M - 1));
        thc_tensor *rm = keep ? thc_binary(THC_MUL, running_mean, keep) : NULL;
        thc_tensor *rv = rm ? thc_binary(THC_MUL, running_var, keep) : NULL;
        if (!rv || !mom || !unb || thc_add_scaled_out(running_mean, rm, mean, mom) ||
            thc_add_scaled_out(running_var, rv, var, unb))
            rc = thcunn__from_thc();
        thc_tensor *tmp[] = {keep, mom, unb, rm, rv};
        for (thc_tensor *p : tmp) thc_tensor_release(p);
    }
    thc_tensor *all[] = {x, mean, var, veps, invstd, e};
    for (thc_tensor *p : all) thc_tensor_release(p);
    return rc;
}

extern "C" THCUNN_API int thcunn_batch_norm_backward_input(thc_tensor *grad_input,
                                                           const thc_tensor *grad_output,
                                                           const thc_tensor *input,
                                                           const thc_tensor *weight,
                                                           const thc_tensor *save_mean,
                                                           const thc_tensor *save_invstd,
                                                           int training) {
    const char *what = "batch_norm_backward_input";
    if (thcunn__check_runtime(what) || check_input(what, input)) return thcunn_last_status();
    int64_t C = input->sizes[1], S = 1, dt = input->dtype;
    if (thcunn__check_output(what, "grad_input", grad_input, input->ndim, input->sizes, dt) ||
        thcunn__check_tensor(what, "grad_output", grad_output, 1) ||
        check_channel(what, "weight", weight, C, dt) ||
        check_channel(what, "save_mean", save_mean, C, dt) ||
        check_channel(what, "save_invstd", save_invstd, C, dt) || !save_mean || !save_invstd)
        return thcunn_last_status() ? thcunn_last_status()
                                    : thcunn__error(THC_ERR_VALUE, "%s: the saved statistics "
                                                    "are required", what);
    if (thcunn__numel(grad_output) != thcunn__numel(input))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output must match the input", what);
    thc_tensor *x = as_ncs(input, &C, &S), *g = x ? as_ncs(grad_output, &C, &S) : NULL;
    thc_tensor *sum_g = NULL, *sum_gx = NULL, *mv = NULL, *d = NULL, *gd = NULL, *sgd = NULL,
               *iv = NULL;
    int rc = g ? THC_OK : thcunn__from_thc();
    int64_t M = thcunn__numel(x) / (C ? C : 1);
    if (!rc && training) {
        // sum(g) and sum(g * xhat) = invstd * sum(g * (x - mean)), per channel
        sum_g = channel_sum(g);
        mv = sum_g ? channel_view(save_mean, C) : NULL;
        d = mv ? thc_binary(THC_SUB, x, mv) : NULL;
        gd = d ? thc_binary(THC_MUL, g, d) : NULL;
        sgd = gd ? channel_sum(gd) : NULL;
        iv = sgd ? thc_to_dtype(save_invstd, THC_FLOAT64) : NULL;
        sum_gx = iv ? thc_binary(THC_MUL, sgd, iv) : NULL;
        thc_tensor *sg2 = sum_gx ? thc_to_dtype(sum_g, dt) : NULL, *sx2 =
                              sg2 ? thc_to_dtype(sum_gx, dt) : NULL;
        thc_tensor_release(sum_g);
        thc_tensor_release(sum_gx);
        sum_g = sg2;
        sum_gx = sx2;
        if (!sum_gx) rc = thcunn__from_thc();
    }
    if (!rc)
        THCUNN_FLOATING(dt, rc = for_each(what, thcunn__numel(x),
                                          GradFn<scalar_t>{
                                              data<scalar_t>(grad_input), data<scalar_t>(g),
                                              data<scalar_t>(x), data<scalar_t>(save_mean),
                                              data<scalar_t>(save_invstd),
                                              weight ? data<scalar_t>(weight) : NULL,
                                              training ? data<scalar_t>(sum_g) : NULL,
                                              training ? data<scalar_t>(sum_gx) : NULL, C, S,
                                              (double)M, training}))
    thc_tensor *all[] = {x, g, sum_g, sum_gx, mv, d, gd, sgd, iv};
    for (thc_tensor *p : all) thc_tensor_release(p);
    return rc;
}

extern "C" THCUNN_API int thcunn_batch_norm_backward_params(thc_tensor *grad_weight,
                                                            thc_tensor *grad_bias,
                                                            const thc_tensor *grad_output,
                                                            const thc_tensor *input,
                                                            const thc_tensor *save_mean,
                                                            const thc_tensor *save_invstd) {
    const char *what = "batch_norm_backward_params";
    if (thcunn__check_runtime(what) || check_input(what, input)) return thcunn_last_status();
    int64_t C = input->sizes[1], S = 1, dt = input->dtype;
    if ((grad_weight && thcunn__check_output(what, "grad_weight", grad_weight, 1, &C, dt)) ||
        (grad_bias && thcunn__check_output(what, "grad_bias", grad_bias, 1, &C, dt)) ||
        check_channel(what, "save_mean", save_mean, C, dt) ||
        check_channel(what, "save_invstd", save_invstd, C, dt) ||
        thcunn__check_tensor(what, "grad_output", grad_output, 1))
        return thcunn_last_status();
    if (thcunn__numel(grad_output) != thcunn__numel(input))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output must match the input", what);
    thc_tensor *x = as_ncs(input, &C, &S), *g = x ? as_ncs(grad_output, &C, &S) : NULL;
    int rc = g ? THC_OK : thcunn__from_thc();
    if (!rc && grad_bias) {
        thc_tensor *s = channel_sum(g);
        if (!s || thc_copy(grad_bias, s)) rc = thcunn__from_thc();
        thc_tensor_release(s);
    }
    if (!rc && grad_weight) {   // sum(g * (x - mean)) * invstd
        thc_tensor *mv = channel_view(save_mean, C);
        thc_tensor *d = mv ? thc_binary(THC_SUB, x, mv) : NULL;
        thc_tensor *gd = d ? thc_binary(THC_MUL, g, d) : NULL;
        thc_tensor *s = gd ? channel_sum(gd) : NULL;
        thc_tensor *iv = s ? thc_to_dtype(save_invstd, THC_FLOAT64) : NULL;
        thc_tensor *r = iv ? thc_binary(THC_MUL, s, iv) : NULL;
        if (!r || thc_copy(grad_weight, r)) rc = thcunn__from_thc();
        thc_tensor *all[] = {mv, d, gd, s, iv, r};
        for (thc_tensor *p : all) thc_tensor_release(p);
    }
    thc_tensor_release(x);
    thc_tensor_release(g);
    return rc;
}
