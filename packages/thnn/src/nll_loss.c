/* nll_loss (class weights, ignore_index; input (N, C) or (N, C, d1, ...)
 * seen as (N, C, inner)), with reductions. */
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
