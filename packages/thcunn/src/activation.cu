// Pointwise activations and their derivatives: one kernel per dtype with
// the activation code as an argument (the formulas are libTHNN's).
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

const double kSeluAlpha = 1.6732632423543772848170429916717;
const double kSeluScale = 1.0507009873554804934193349852946;
const double kSqrt2OverPi = 0.79788456080286535587989211986876;
const double kInvSqrt2 = 0.70710678118654752440084436210485;
const double kInvSqrt2Pi = 0.39894228040143267793994605993438;

THCUNN_HD inline double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }
THCUNN_HD inline double softplus(double x, double beta, double thr) {
    return x * beta > thr ? x : log1p(exp(x * beta)) / beta;
}

THCUNN_HD inline double act(int op, double x, double a, double b) {
    switch (op) {
    case THCUNN_RELU: return x > 0 ? x : 0;
    case THCUNN_LEAKY_RELU: return x > 0 ? x : a * x;
    case THCUNN_ELU: return x > 0 ? x : a * expm1(x);
    case THCUNN_SELU: return kSeluScale * (x > 0 ? x : kSeluAlpha * expm1(x));
    case THCUNN_GELU:
        if (a != 0) return 0.5 * x * (1 + tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
        return 0.5 * x * (1 + erf(x * kInvSqrt2));
    case THCUNN_SILU: return x * sigm(x);
    case THCUNN_SIGMOID: return sigm(x);
    case THCUNN_TANH: return tanh(x);
    case THCUNN_SOFTPLUS: return softplus(x, a, b);
    case THCUNN_HARDTANH: return x < a ? a : x > b ? b : x;
    case THCUNN_HARDSWISH: return x <= -3 ? 0 : x >= 3 ? x : x * (x + 3) / 6;
    default: return x * tanh(softplus(x, 1, 20));   // mish
    }
}

THCUNN_HD inline double act_grad(int op, double x, double a, double b) {
    switch (op) {
    case THCUNN_RELU: return x > 0 ? 1 : 0;
    case THCUNN_LEAKY_RELU: return x > 0 ? 1 : a;
    case THCUNN_ELU: return x > 0 ? 1 : a * exp(x);
    case THCUNN_SELU: return kSeluScale * (x > 0 ? 1 : kSeluAlpha * exp(x));
    case THCUNN_GELU:
        if (a != 0) {
            double u = kSqrt2OverPi * (x + 0.044715 * x * x * x), t = tanh(u);
            return 0.5 * (1 + t) +
                   0.5 * x * (1 - t * t) * kSqrt2OverPi * (1 + 3 * 0.044715 * x * x);
        }
        return 0.5 * (1 + erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * exp(-0.5 * x * x);
    case THCUNN_SILU: {
        double s = sigm(x);
        return s * (1 + x * (1 - s));
    }
    case THCUNN_SIGMOID: {
        double s = sigm(x);
        return s * (1 - s);
    }
    case THCUNN_TANH: {
        double t = tanh(x);
        return 1 - t * t;
    }
    case THCUNN_SOFTPLUS: return x * a > b ? 1 : sigm(x * a);
    case THCUNN_HARDTANH: return x <= a || x >= b ? 0 : 1;
    case THCUNN_HARDSWISH: return x < -3 ? 0 : x > 3 ? 1 : (2 * x + 3) / 6;
    default: {   // mish
        double sp = softplus(x, 1, 20), t = tanh(sp);
        return t + x * (1 - t * t) * sigm(x);
    }
    }
}

template <typename T> struct ForwardFn {
    T *out;
    const T *in;
    int op;
    double a, b;
    THCUNN_HD void operator()(int64_t i) const { out[i] = (T)act(op, (double)in[i], a, b); }
};

template <typename T> struct BackwardFn {
    T *gin;
    const T *gout, *in;
    int op;
    double a, b;
    THCUNN_HD void operator()(int64_t i) const {
        gin[i] = (T)((double)gout[i] * act_grad(op, (double)in[i], a, b));
    }
};

int check_activation(const char *what, int op) {
    if (op < 0 || op >= THCUNN_NUM_ACTIVATIONS)
        return thcunn__error(THC_ERR_VALUE, "%s: unknown activation %d", what, op);
    return THC_OK;
}

}  // namespace

extern "C" THCUNN_API int thcunn_activation_forward(thc_tensor *output, const thc_tensor *input,
                                                    int activation, double a, double b) {
    const char *what = "activation_forward";
    if (thcunn__check_runtime(what) || check_activation(what, activation) ||
        thcunn__check_tensor(what, "input", input, 1) ||
        thcunn__check_output(what, "output", output, input->ndim, input->sizes, input->dtype))
        return thcunn_last_status();
    thc_tensor *x = thc_contiguous(input);
    if (!x) return thcunn__from_thc();
    int rc;
    THCUNN_FLOATING(x->dtype, rc = for_each(what, thcunn__numel(x),
                                            ForwardFn<scalar_t>{data<scalar_t>(output),
                                                                data<scalar_t>(x), activation,
                                                                a, b}))
    thc_tensor_release(x);
    return rc;
}

extern "C" THCUNN_API int thcunn_activation_backward_input(thc_tensor *grad_input,
                                                           const thc_tensor *grad_output,
                                                           const thc_tensor *input,
                                                           int activation, double a, double b) {
    const char *what = "activation_backward_input";
    if (thcunn__check_runtime(what) || check_activation(what, activation) ||
        thcunn__check_tensor(what, "input", input, 1) ||
        thcunn__check_tensor(what, "grad_output", grad_output, 1) ||
        thcunn__check_output(what, "grad_input", grad_input, input->ndim, input->sizes,
                             input->dtype))
        return thcunn_last_status();
    if (thcunn__numel(grad_output) != thcunn__numel(input) || grad_output->dtype != input->dtype)
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output must match the input", what);
    thc_tensor *x = thc_contiguous(input), *g = x ? thc_contiguous(grad_output) : NULL;
    int rc = g ? THC_OK : thcunn__from_thc();
    if (!rc)
        THCUNN_FLOATING(x->dtype, rc = for_each(what, thcunn__numel(x),
                                                BackwardFn<scalar_t>{data<scalar_t>(grad_input),
                                                                     data<scalar_t>(g),
                                                                     data<scalar_t>(x),
                                                                     activation, a, b}))
    thc_tensor_release(x);
    thc_tensor_release(g);
    return rc;
}
