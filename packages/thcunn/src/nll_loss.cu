// nll_loss: a thread per (sample, position) writes its loss and weight;
// the reductions are libTHC's.  Targets are checked on the device: the
// first bad one is recorded in a flag tensor read back after the kernel.
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

template <typename T> struct ForwardFn {
    T *loss, *wsum;   // per element
    const T *x, *weight;
    const int64_t *target;
    int64_t C, D, ignore;
    int64_t *flag;
    THCUNN_HD void operator()(int64_t i) const {
        int64_t n = i / D, d = i % D, t = target[i];
        if (t == ignore) {
            loss[i] = 0;
            wsum[i] = 0;
            return;
        }
        if (t < 0 || t >= C) {
            if (!flag[0]) {
                flag[0] = 1;
                flag[1] = t;
            }
            loss[i] = 0;
            wsum[i] = 0;
            return;
        }
        T w = weight ? weight[t] : T(1);
        loss[i] = -w * x[(n * C + t) * D + d];
        wsum[i] = w;
    }
};

template <typename T> struct BackwardFn {
    T *gin;
    const T *gout, *weight, *total;
    const int64_t *target;
    int64_t C, D, ignore;
    int reduction;
    THCUNN_HD void operator()(int64_t i) const {
        int64_t n = i / D, d = i % D, t = target[i];
        if (t == ignore || t < 0 || t >= C) return;
        T w = weight ? weight[t] : T(1);
        T g = reduction == THCUNN_REDUCTION_NONE ? gout[i]
            : reduction == THCUNN_REDUCTION_MEAN ? gout[0] / total[0] : gout[0];
        gin[(n * C + t) * D + d] = -w * g;
    }
};

int shapes(const char *what, const thc_tensor *input, const thc_tensor *target,
           const thc_tensor *weight, int64_t *N, int64_t *C, int64_t *D) {
    if (thcunn__check_tensor(what, "input", input, 1) ||
        thcunn__check_tensor(what, "target", target, 0))
        return thcunn_last_status();
    if (target->dtype != THC_INT64)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected scalar type Long but found %s", what,
                             thc_dtype_name(target->dtype));
    char a[256], b[256];
    if (input->ndim < 2 || target->ndim != input->ndim - 1)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected input (N, C, ...) and target (N, "
                             "...), got input %s and target %s", what,
                             thcunn__shape_str(input->ndim, input->sizes, a),
                             thcunn__shape_str(target->ndim, target->sizes, b));
    *N = input->sizes[0];
    *C = input->sizes[1];
    *D = 1;
    bool ok = target->sizes[0] == *N;
    for (int i = 2; i < input->ndim; i++) {
        *D *= input->sizes[i];
        ok = ok && target->sizes[i - 1] == input->sizes[i];
    }
    if (!ok)
        return thcunn__error(THC_ERR_RUNTIME, "%s: Expected input batch_size (%lld) to match "
                             "target batch_size (%lld).", what, (long long)*N,
                             (long long)target->sizes[0]);
    if (weight && (thcunn__check_tensor(what, "weight", weight, 1) || weight->ndim != 1 ||
                   weight->sizes[0] != *C || weight->dtype != input->dtype))
        return thcunn__error(THC_ERR_RUNTIME, "%s: weight tensor should be defined either for "
                             "all %lld classes or no classes", what, (long long)*C);
    return THC_OK;
}

}  // namespace

extern "C" THCUNN_API int thcunn_nll_loss_forward(thc_tensor *output, thc_tensor *total_weight,
                                                  const thc_tensor *input,
                                                  const thc_tensor *target,
                                                  const thc_tensor *weight, int reduction,
                                                  int64_t ignore_index) {
    const char *what = "nll_loss_forward";
    int64_t N, C, D;
    if (thcunn__check_runtime(what) || shapes(what, input, target, weight, &N, &C, &D))
        return thcunn_last_status();
    if (reduction < THCUNN_REDUCTION_NONE || reduction > THCUNN_REDUCTION_SUM)
        return thcunn__error(THC_ERR_VALUE, "%s: invalid reduction %d", what, reduction);
    if (reduction == THCUNN_REDUCTION_NONE
            ? thcunn__check_output(what, "output", output, target->ndim, target->sizes,
                                   input->dtype)
            : thcunn__check_output(what, "output", output, 0, NULL, input->dtype))
        return thcunn_last_status();
    if (thcunn__check_output(what, "total_weight", total_weight, 0, NULL, input->dtype))
        return thcunn_last_status();
    int64_t M = N * D, two = 2;
    thc_tensor *x = thc_contiguous(input), *t = x ? thc_contiguous(target) : NULL;
    thc_tensor *w = t && weight ? thc_contiguous(weight) : NULL;
    thc_tensor *loss = t ? thc_empty(1, &M, input->dtype) : NULL;
    thc_tensor *ws = loss ? thc_empty(1, &M, input->dtype) : NULL;
    thc_tensor *flag = ws ? thc_empty(1, &two, THC_INT64) : NULL;
    int rc = flag && (!weight || w) && !thc_zero(flag) ? THC_OK : thcunn__from_thc();
    if (!rc)
        THCUNN_FLOATING(x->dtype, rc = for_each(what, M,
                                                ForwardFn<scalar_t>{
                                                    data<scalar_t>(loss), data<scalar_t>(ws),
                                                    data<scalar_t>(x),
                                                    w ? data<scalar_t>(w) : NULL,
                                                    data<int64_t>(t), C, D, ignore_index,
                                                    data<int64_t>(flag)}))
    int64_t hflag[2] = {0, 0};
    if (!rc && thc_copy_to_host(hflag, flag)) rc = thcunn__from_thc();
    if (!rc && hflag[0])
        rc = thcunn__error(THC_ERR_INDEX, "Target %lld is out of bounds.", (long long)hflag[1]);
    thc_tensor *lsum = NULL, *wsum = NULL, *mean = NULL;
    if (!rc) {
        wsum = thc_reduce(THC_RED_SUM, ws, 0, NULL, 0, -1);
        if (!wsum || thc_copy(total_weight, wsum)) rc = thcunn__from_thc();
    }
    if (!rc && reduction == THCUNN_REDUCTION_NONE) {
        thc_tensor *lv = thc_view(loss, target->ndim, target->sizes);
        if (!lv || thc_copy(output, lv)) rc = thcunn__from_thc();
        thc_tensor_release(lv);
    } else if (!rc) {
        lsum = thc_reduce(THC_RED_SUM, loss, 0, NULL, 0, -1);
        mean = lsum && reduction == THCUNN_REDUCTION_MEAN ? thc_binary(THC_DIV, lsum, wsum) : NULL;
        const thc_tensor *r = reduction == THCUNN_REDUCTION_MEAN ? mean : lsum;
        if (!r || thc_copy(output, r)) rc = thcunn__from_thc();
    }
    thc_tensor *all[] = {x, t, w, loss, ws, flag, lsum, wsum, mean};
    for (thc_tensor *p : all) thc_tensor_release(p);
    return rc;
}

extern "C" THCUNN_API int thcunn_nll_loss_backward_input(thc_tensor *grad_input,
                                                         const thc_tensor *grad_output,
                                                         const thc_tensor *target,
                                                         const thc_tensor *weight,
                                                         const thc_tensor *total_weight,
                                                         int reduction, int64_t ignore_index) {
    const char *what = "nll_loss_backward_input";
    int64_t N, C, D;
    if (thcunn__check_runtime(what) || shapes(what, grad_input, target, weight, &N, &C, &D) ||
        thcunn__check_tensor(what, "grad_output", grad_output, 1) ||
        thcunn__check_tensor(what, "total_weight", total_weight, 1))
        return thcunn_last_status();
    if (!thc_is_contiguous(grad_input))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_input must be contiguous", what);
    if (grad_output->dtype != grad_input->dtype)   // the kernel reads it as grad_input's type
        return thcunn__error(THC_ERR_TYPE, "%s: expected grad_output of scalar type %s but "
                             "found %s", what, thcunn__type_name(grad_input->dtype),
                             thcunn__type_name(grad_output->dtype));
    if (thcunn__numel(grad_output) != (reduction == THCUNN_REDUCTION_NONE ? N * D : 1))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output has %lld elements, expected %lld",
                             what, (long long)thcunn__numel(grad_output),
                             (long long)(reduction == THCUNN_REDUCTION_NONE ? N * D : 1));
    thc_tensor *g = thc_contiguous(grad_output), *t = g ? thc_contiguous(target) : NULL;
    thc_tensor *w = t && weight ? thc_contiguous(weight) : NULL;
    thc_tensor *tw = t ? thc_to_dtype(total_weight, grad_input->dtype) : NULL;
    int rc = tw && (!weight || w) && !thc_zero(grad_input) ? THC_OK : thcunn__from_thc();
    if (!rc)
        THCUNN_FLOATING(grad_input->dtype,
                        rc = for_each(what, N * D,
                                      BackwardFn<scalar_t>{data<scalar_t>(grad_input),
                                                           data<scalar_t>(g),
                                                           w ? data<scalar_t>(w) : NULL,
                                                           data<scalar_t>(tw), data<int64_t>(t),
                                                           C, D, ignore_index, reduction}))
    thc_tensor *all[] = {g, t, w, tw};
    for (thc_tensor *p : all) thc_tensor_release(p);
    return rc;
}
