/* Losses: nll_loss (class weights, ignore_index; input (N, C) or
 * (N, C, d1, ...) seen as (N, C, inner)) and the pointwise losses (mse,
 * l1, smooth_l1, huber, bce, bce_with_logits), with reductions. */
#include <math.h>
#include <stdint.h>

#include "thnn_internal.h"

static int check_target(const char *fn, const th_tensor *input,
                        const th_tensor *target, const th_tensor *weight,
                        int64_t *N, int64_t *C, int64_t *inner) {
    char a[256], b[256];
    int rc;
    if (!target) return thnn__error(TH_ERR_VALUE, "%s: target must not be NULL", fn);
    if (target->dtype != TH_INT64)
        return thnn__error(TH_ERR_RUNTIME, "expected scalar type Long but found %s",
                           thnn__dtype_name(target->dtype));
    if (input->ndim < 1)
        return thnn__error(TH_ERR_RUNTIME, "input tensor should be 1D or 2D");
    if (input->ndim == 1) {
        *N = 1; *C = input->sizes[0]; *inner = 1;
        if (target->ndim != 0)
            return thnn__error(TH_ERR_RUNTIME, "0D target tensor expected, "
                               "multi-target not supported");
    } else {
        *N = input->sizes[0]; *C = input->sizes[1]; *inner = 1;
        for (int i = 2; i < input->ndim; i++) *inner *= input->sizes[i];
        if (target->ndim != input->ndim - 1)
            return thnn__error(TH_ERR_RUNTIME, input->ndim == 2 ?
                               "1D target tensor expected, multi-target not supported"
                               : "Expected target of %d dimensions for input %s, got %s",
                               input->ndim - 1, thnn__shape(input, a), thnn__shape(target, b));
        if (target->sizes[0] != *N)
            return thnn__error(TH_ERR_VALUE, "Expected input batch_size (%lld) to "
                               "match target batch_size (%lld).", (long long)*N,
                               (long long)target->sizes[0]);
        for (int i = 1; i < target->ndim; i++)
            if (target->sizes[i] != input->sizes[i + 1])
                return thnn__error(TH_ERR_RUNTIME, "size mismatch (got input: %s, "
                                   "target: %s)", thnn__shape(input, a),
                                   thnn__shape(target, b));
    }
    if (weight) {
        if (weight->ndim != 1 || weight->sizes[0] != *C)
            return thnn__error(TH_ERR_RUNTIME, "weight tensor should be defined "
                               "either for all %lld classes or no classes but got "
                               "weight tensor of shape: %s", (long long)*C,
                               thnn__shape(weight, a));
        if ((rc = thnn__check_dtype(fn, "weight", weight, input->dtype))) return rc;
    }
    return TH_OK;
}

#define DEFINE_NLL(T)                                                          \
    /* returns 0, or the first bad target + 1 in *bad */                      \
    static void nll_fwd_##T(T *out, double *tw, const T *x, const int64_t *t,  \
                            const T *w, int64_t N, int64_t C, int64_t inner,   \
                            int reduction, int64_t ignore, int64_t *bad) {     \
        double sum = 0, wsum = 0;                                              \
        for (int64_t n = 0; n < N; n++)                                        \
            for (int64_t i = 0; i < inner; i++) {                              \
                const int64_t c = t[n * inner + i];                            \
                double v = 0;                                                  \
                if (c != ignore) {                                             \
                    if (c < 0 || c >= C) { *bad = c; return; }                 \
                    const double wc = w ? (double)w[c] : 1.0;                  \
                    v = -wc * (double)x[(n * C + c) * inner + i];              \
                    wsum += wc;                                                \
                }                                                              \
                if (reduction == THNN_REDUCTION_NONE) out[n * inner + i] = (T)v; \
                else sum += v;                                                 \
            }                                                                  \
        *tw = wsum;                                                            \
        if (reduction == THNN_REDUCTION_MEAN) out[0] = (T)(sum / wsum);        \
        else if (reduction == THNN_REDUCTION_SUM) out[0] = (T)sum;             \
    }                                                                          \
    static void nll_bwd_##T(T *gx, const T *gy, const int64_t *t, const T *w,  \
                            double tw, int64_t N, int64_t C, int64_t inner,    \
                            int reduction, int64_t ignore) {                   \
        for (int64_t n = 0; n < N; n++)                                        \
            for (int64_t i = 0; i < inner; i++) {                              \
                const int64_t c = t[n * inner + i];                            \
                if (c == ignore || c < 0 || c >= C) continue;                  \
                const double wc = w ? (double)w[c] : 1.0;                      \
                double g = reduction == THNN_REDUCTION_NONE ?                  \
                           (double)gy[n * inner + i] : (double)gy[0];          \
                if (reduction == THNN_REDUCTION_MEAN) g /= tw;                 \
                gx[(n * C + c) * inner + i] = (T)(-wc * g);                    \
            }                                                                  \
    }
DEFINE_NLL(float)
DEFINE_NLL(double)

static int check_reduction(const char *fn, int reduction) {
    if (reduction < THNN_REDUCTION_NONE || reduction > THNN_REDUCTION_SUM)
        return thnn__error(TH_ERR_VALUE, "%s: %d is not a valid value for "
                           "reduction (0 none, 1 mean, 2 sum)", fn, reduction);
    return TH_OK;
}

THNN_API int thnn_nll_loss_forward(th_tensor *output, th_tensor *total_weight,
                                   const th_tensor *input,
                                   const th_tensor *target,
                                   const th_tensor *weight, int reduction,
                                   int64_t ignore_index) {
    static const char fn[] = "nll_loss";
    int64_t N, C, inner;
    int rc;
    if ((rc = check_reduction(fn, reduction))) return rc;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = check_target(fn, input, target, weight, &N, &C, &inner))) return rc;
    if (reduction == THNN_REDUCTION_NONE)
        rc = thnn__check_out(fn, "output", output, target->ndim, target->sizes, input->dtype);
    else
        rc = thnn__check_out(fn, "output", output, 0, NULL, input->dtype);
    if (rc) return rc;
    if ((rc = thnn__check_out(fn, "total_weight", total_weight, 0, NULL, input->dtype)))
        return rc;
    th_tensor *x = thnn__contig(input), *t = thnn__contig(target);
    th_tensor *w = weight ? thnn__contig(weight) : NULL;
    if (!x || !t || (weight && !w)) { rc = thnn_last_status(); goto done; }
    double tw = 0;
    int64_t bad = INT64_MIN;
    if (x->dtype == TH_FLOAT32)
        nll_fwd_float(thnn__data(output), &tw, thnn__data(x), thnn__data(t),
                      w ? thnn__data(w) : NULL, N, C, inner, reduction, ignore_index, &bad);
    else
        nll_fwd_double(thnn__data(output), &tw, thnn__data(x), thnn__data(t),
                       w ? thnn__data(w) : NULL, N, C, inner, reduction, ignore_index, &bad);
    if (bad != INT64_MIN) {
        rc = thnn__error(TH_ERR_INDEX, "Target %lld is out of bounds.", (long long)bad);
        goto done;
    }
    if (th_fill_double(total_weight, tw)) rc = thnn__from_th(fn);
done:
    thnn__release(x); thnn__release(t); thnn__release(w);
    return rc;
}

THNN_API int thnn_nll_loss_backward_input(th_tensor *grad_input,
                                          const th_tensor *grad_output,
                                          const th_tensor *target,
                                          const th_tensor *weight,
                                          const th_tensor *total_weight,
                                          int reduction, int64_t ignore_index) {
    static const char fn[] = "nll_loss_backward_input";
    int64_t N, C, inner;
    int rc;
    if ((rc = check_reduction(fn, reduction))) return rc;
    if ((rc = thnn__check_float(fn, "grad_input", grad_input))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, grad_input))) return rc;
    if ((rc = check_target(fn, grad_input, target, weight, &N, &C, &inner))) return rc;
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    if ((rc = thnn__check_float(fn, "total_weight", total_weight))) return rc;
    int64_t want = reduction == THNN_REDUCTION_NONE ? th_numel(target) : 1;
    if (th_numel(grad_output) != want || grad_output->dtype != grad_input->dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected grad_output of %lld "
                           "elements of type %s", fn, (long long)want,
                           thnn__dtype_name(grad_input->dtype));
    double tw;
    if (th_get_double(total_weight, 0, &tw)) return thnn__from_th(fn);
    if (th_zero(grad_input)) return thnn__from_th(fn);
    th_tensor *gy = thnn__contig(grad_output), *t = thnn__contig(target);
    th_tensor *w = weight ? thnn__contig(weight) : NULL;
    if (!gy || !t || (weight && !w)) { rc = thnn_last_status(); goto done; }
    if (gy->dtype == TH_FLOAT32)
        nll_bwd_float(thnn__data(grad_input), thnn__data(gy), thnn__data(t),
                      w ? thnn__data(w) : NULL, tw, N, C, inner, reduction, ignore_index);
    else
        nll_bwd_double(thnn__data(grad_input), thnn__data(gy), thnn__data(t),
                       w ? thnn__data(w) : NULL, tw, N, C, inner, reduction, ignore_index);
done:
    thnn__release(gy); thnn__release(t); thnn__release(w);
    return rc;
}

/* ---- pointwise losses ----------------------------------------------------
 * per element l(x, y), times weight[i] if given; reduced by mean or sum. */
static inline double ld(const th_tensor *t, int64_t k) {
    return t->dtype == TH_FLOAT32 ? (double)((const float *)thnn__data(t))[k]
                                  : ((const double *)thnn__data(t))[k];
}
static inline void st(th_tensor *t, int64_t k, double v) {
    if (t->dtype == TH_FLOAT32) ((float *)thnn__data(t))[k] = (float)v;
    else ((double *)thnn__data(t))[k] = v;
}

static inline double log_sigmoid(double x) {
    return x < 0 ? x - log1p(exp(x)) : -log1p(exp(-x));
}

/* loss value and its derivative in x */
static inline void pw(int loss, double x, double y, double a, double pwt,
                      double *l, double *d) {
    double r = x - y, ar = fabs(r);
    switch (loss) {
    case THNN_MSE_LOSS: *l = r * r; *d = 2 * r; break;
    case THNN_L1_LOSS: *l = ar; *d = (r > 0) - (r < 0); break;
    case THNN_SMOOTH_L1_LOSS:
        if (a == 0 || ar >= a) { *l = ar - (a == 0 ? 0 : 0.5 * a); *d = (r > 0) - (r < 0); }
        else { *l = 0.5 * r * r / a; *d = r / a; }
        break;
    case THNN_HUBER_LOSS:
        if (ar <= a) { *l = 0.5 * r * r; *d = r; }
        else { *l = a * (ar - 0.5 * a); *d = a * ((r > 0) - (r < 0)); }
        break;
    case THNN_BCE_LOSS: {
        /* PyTorch clamps the logs at -100 */
        double lx = x > 0 ? log(x) : -100, l1x = x < 1 ? log1p(-x) : -100;
        if (lx < -100) lx = -100;
        if (l1x < -100) l1x = -100;
        *l = -(y * lx + (1 - y) * l1x);
        const double e = 1e-12;
        *d = (x - y) / ((1 - x) * x > e ? (1 - x) * x : e);
        break;
    }
    default: { /* THNN_BCE_WITH_LOGITS_LOSS, pwt = pos_weight */
        *l = -(pwt * y * log_sigmoid(x) + (1 - y) * log_sigmoid(-x));
        double s = 1.0 / (1.0 + exp(-x));
        *d = (pwt * y + 1 - y) * s - pwt * y;
        break;
    }
    }
}

/* one call's tensors and settings, for the range functions */
typedef struct pw_ctx {
    th_tensor *out; /* per-element losses (reduction none) or grad_input */
    const th_tensor *x, *y, *w, *pwt, *gy;
    int loss, reduction;
    double a, scale; /* scale: the reduction's factor on grad_output */
    int64_t last;    /* pos_weight runs along the last dim */
} pw_ctx;

/* writes the losses of [i0, i1) (reduction none) or returns their sum */
static double pw_fwd_range(int64_t i0, int64_t i1, void *ctx) {
    const pw_ctx *c = ctx;
    double sum = 0;
    for (int64_t i = i0; i < i1; i++) {
        double l, d;
        pw(c->loss, ld(c->x, i), ld(c->y, i), c->a, c->pwt ? ld(c->pwt, i % c->last) : 1.0,
           &l, &d);
        if (c->w) l *= ld(c->w, i);
        if (c->reduction == THNN_REDUCTION_NONE) st(c->out, i, l);
        else sum += l;
    }
    return sum;
}

static void pw_bwd_range(int64_t i0, int64_t i1, void *ctx) {
    const pw_ctx *c = ctx;
    for (int64_t i = i0; i < i1; i++) {
        double l, d;
        pw(c->loss, ld(c->x, i), ld(c->y, i), c->a, c->pwt ? ld(c->pwt, i % c->last) : 1.0,
           &l, &d);
        if (c->w) d *= ld(c->w, i);
        const double g = c->reduction == THNN_REDUCTION_NONE ? ld(c->gy, i)
                                                             : ld(c->gy, 0) * c->scale;
        st(c->out, i, d * g);
    }
}

static int pw_check(const char *fn, const th_tensor *input, const th_tensor *target,
                    const th_tensor *weight, const th_tensor *pos_weight, int loss,
                    int reduction, double a) {
    char s1[256], s2[256];
    int rc;
    if ((rc = check_reduction(fn, reduction))) return rc;
    if (loss < THNN_MSE_LOSS || loss > THNN_BCE_WITH_LOGITS_LOSS)
        return thnn__error(TH_ERR_VALUE, "%s: unknown loss %d", fn, loss);
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = thnn__check_float(fn, "target", target))) return rc;
    int ok = input->ndim == target->ndim;
    for (int i = 0; ok && i < input->ndim; i++) ok = input->sizes[i] == target->sizes[i];
    if (!ok)
        return thnn__error(TH_ERR_VALUE, "Using a target size (%s) that is different "
                           "to the input size (%s) is not supported",
                           thnn__shape(target, s1), thnn__shape(input, s2));
    if (target->dtype != input->dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected target of scalar type %s but "
                           "found %s", fn, thnn__dtype_name(input->dtype),
                           thnn__dtype_name(target->dtype));
    if (weight && (th_numel(weight) != th_numel(input) || weight->dtype != input->dtype))
        return thnn__error(TH_ERR_RUNTIME, "%s: weight %s must have the input's shape "
                           "%s and dtype", fn, thnn__shape(weight, s1), thnn__shape(input, s2));
    int64_t last = input->ndim ? input->sizes[input->ndim - 1] : 1;
    if (pos_weight && (th_numel(pos_weight) != last || pos_weight->dtype != input->dtype))
        return thnn__error(TH_ERR_RUNTIME, "%s: pos_weight must have %lld elements "
                           "(the input's last dim) but has %lld", fn, (long long)last,
                           (long long)th_numel(pos_weight));
    if ((loss == THNN_SMOOTH_L1_LOSS || loss == THNN_HUBER_LOSS) && a < 0)
        return thnn__error(TH_ERR_RUNTIME, "%s: beta / delta must be non-negative, got %g",
                           fn, a);
    if (loss == THNN_HUBER_LOSS && a == 0)
        return thnn__error(TH_ERR_RUNTIME, "huber_loss does not support non-positive "
                           "values for delta.");
    return TH_OK;
}

THNN_API int thnn_pointwise_loss_forward(th_tensor *output, const th_tensor *input,
                                         const th_tensor *target,
                                         const th_tensor *weight,
                                         const th_tensor *pos_weight, int loss,
                                         int reduction, double a) {
    static const char fn[] = "pointwise_loss";
    int rc;
    if ((rc = pw_check(fn, input, target, weight, pos_weight, loss, reduction, a))) return rc;
    if (reduction == THNN_REDUCTION_NONE)
        rc = thnn__check_like(fn, "output", output, input);
    else
        rc = thnn__check_out(fn, "output", output, 0, NULL, input->dtype);
    if (rc) return rc;
    th_tensor *x = thnn__contig(input), *y = thnn__contig(target);
    th_tensor *w = weight ? thnn__contig(weight) : NULL;
    th_tensor *pwt = pos_weight ? thnn__contig(pos_weight) : NULL;
    if (!x || !y || (weight && !w) || (pos_weight && !pwt)) { rc = thnn_last_status(); goto done; }
    if (loss == THNN_BCE_LOSS) {
        const int64_t n = th_numel(x);
        for (int64_t i = 0; i < n; i++) {
            double v = ld(x, i);
            if (!(v >= 0 && v <= 1)) {
                rc = thnn__error(TH_ERR_RUNTIME, "all elements of input should be "
                                 "between 0 and 1");
                goto done;
            }
        }
    }
    {
        const int64_t n = th_numel(x), last = x->ndim ? x->sizes[x->ndim - 1] : 1;
        pw_ctx c = {.out = output, .x = x, .y = y, .w = w, .pwt = pwt, .loss = loss,
                    .reduction = reduction, .a = a, .last = last};
        const double sum = thnn__parallel_sum(n, 1, pw_fwd_range, &c);
        if (reduction == THNN_REDUCTION_MEAN) st(output, 0, sum / (double)n);
        else if (reduction == THNN_REDUCTION_SUM) st(output, 0, sum);
    }
done:
    thnn__release(x); thnn__release(y); thnn__release(w); thnn__release(pwt);
    return rc;
}

THNN_API int thnn_pointwise_loss_backward_input(th_tensor *grad_input,
                                                const th_tensor *grad_output,
                                                const th_tensor *input,
                                                const th_tensor *target,
                                                const th_tensor *weight,
                                                const th_tensor *pos_weight,
                                                int loss, int reduction, double a) {
    static const char fn[] = "pointwise_loss_backward_input";
    int rc;
    if ((rc = pw_check(fn, input, target, weight, pos_weight, loss, reduction, a))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, input))) return rc;
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    const int64_t n = th_numel(input);
    int64_t want = reduction == THNN_REDUCTION_NONE ? n : 1;
    if (th_numel(grad_output) != want || grad_output->dtype != input->dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected grad_output of %lld elements "
                           "of type %s", fn, (long long)want, thnn__dtype_name(input->dtype));
    th_tensor *x = thnn__contig(input), *y = thnn__contig(target), *gy = thnn__contig(grad_output);
    th_tensor *w = weight ? thnn__contig(weight) : NULL;
    th_tensor *pwt = pos_weight ? thnn__contig(pos_weight) : NULL;
    if (!x || !y || !gy || (weight && !w) || (pos_weight && !pwt)) {
        rc = thnn_last_status();
        goto done;
    }
    {
        const int64_t last = x->ndim ? x->sizes[x->ndim - 1] : 1;
        pw_ctx c = {.out = grad_input, .x = x, .y = y, .w = w, .pwt = pwt, .gy = gy,
                    .loss = loss, .reduction = reduction, .a = a, .last = last,
                    .scale = reduction == THNN_REDUCTION_MEAN ? 1.0 / (double)n : 1.0};
        th_parallel_for(n, thnn__grain(1), pw_bwd_range, &c);
    }
done:
    thnn__release(x); thnn__release(y); thnn__release(gy);
    thnn__release(w); thnn__release(pwt);
    return rc;
}
