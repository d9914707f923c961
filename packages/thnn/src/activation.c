/* Pointwise activations and their derivatives (one switch per call, the
 * loop per activation inside it, so the compiler vectorizes the simple
 * ones); float32 and float64. */
#include <math.h>

#include "thnn_internal.h"

#define SELU_ALPHA 1.6732632423543772848170429916717
#define SELU_SCALE 1.0507009873554804934193349852946
#define SQRT_2_PI 0.79788456080286535587989211986876
#define INV_SQRT2 0.70710678118654752440084436210485
#define INV_SQRT_2PI 0.39894228040143267793994605993438

static inline double softplus(double x, double beta, double thr) {
    return x * beta > thr ? x : log1p(exp(x * beta)) / beta;
}
static inline double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

static inline double act_f(int op, double x, double a, double b) {
    switch (op) {
    case THNN_RELU: return x > 0 ? x : 0;
    case THNN_LEAKY_RELU: return x > 0 ? x : a * x;
    case THNN_ELU: return x > 0 ? x : a * expm1(x);
    case THNN_SELU: return SELU_SCALE * (x > 0 ? x : SELU_ALPHA * expm1(x));
    case THNN_GELU:
        if (a != 0) return 0.5 * x * (1 + tanh(SQRT_2_PI * (x + 0.044715 * x * x * x)));
        return 0.5 * x * (1 + erf(x * INV_SQRT2));
    case THNN_SILU: return x * sigm(x);
    case THNN_SIGMOID: return sigm(x);
    case THNN_TANH: return tanh(x);
    case THNN_SOFTPLUS: return softplus(x, a, b);
    case THNN_HARDTANH: return x < a ? a : x > b ? b : x;
    case THNN_HARDSWISH: return x <= -3 ? 0 : x >= 3 ? x : x * (x + 3) / 6;
    case THNN_MISH: return x * tanh(softplus(x, 1, 20));
    }
    return x;
}

static inline double act_df(int op, double x, double a, double b) {
    switch (op) {
    case THNN_RELU: return x > 0 ? 1 : 0;
    case THNN_LEAKY_RELU: return x > 0 ? 1 : a;
    case THNN_ELU: return x > 0 ? 1 : a * exp(x);
    case THNN_SELU: return SELU_SCALE * (x > 0 ? 1 : SELU_ALPHA * exp(x));
    case THNN_GELU:
        if (a != 0) {
            double u = SQRT_2_PI * (x + 0.044715 * x * x * x), t = tanh(u);
            return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * SQRT_2_PI *
                   (1 + 3 * 0.044715 * x * x);
        }
        return 0.5 * (1 + erf(x * INV_SQRT2)) + x * INV_SQRT_2PI * exp(-0.5 * x * x);
    case THNN_SILU: { double s = sigm(x); return s * (1 + x * (1 - s)); }
    case THNN_SIGMOID: { double s = sigm(x); return s * (1 - s); }
    case THNN_TANH: { double t = tanh(x); return 1 - t * t; }
    case THNN_SOFTPLUS: return x * a > b ? 1 : sigm(x * a);
    case THNN_HARDTANH: return x <= a || x >= b ? 0 : 1;
    case THNN_HARDSWISH: return x < -3 ? 0 : x > 3 ? 1 : (2 * x + 3) / 6;
    case THNN_MISH: {
        double sp = softplus(x, 1, 20), t = tanh(sp);
        return t + x * (1 - t * t) * sigm(x);
    }
    }
    return 1;
}

/* one call's arguments, for the range functions on libTH's pool */
typedef struct act_ctx {
    void *out; /* output or grad_input */
    const void *x, *gy;
    int op;
    double a, b;
} act_ctx;

#define DEFINE_ACT(T)                                                          \
    static void act_fwd_##T(int64_t i0, int64_t i1, void *p) {                 \
        const act_ctx *c = p;                                                  \
        T *y = c->out;                                                         \
        const T *x = c->x;                                                     \
        const int op = c->op;                                                  \
        const double a = c->a, b = c->b;                                       \
        if (op == THNN_RELU) {                                                 \
            _Pragma("omp simd")                                                \
            for (int64_t i = i0; i < i1; i++) y[i] = x[i] > 0 ? x[i] : (T)0;   \
            return;                                                            \
        }                                                                      \
        for (int64_t i = i0; i < i1; i++) y[i] = (T)act_f(op, x[i], a, b);     \
    }                                                                          \
    static void act_bwd_##T(int64_t i0, int64_t i1, void *p) {                 \
        const act_ctx *c = p;                                                  \
        T *gx = c->out;                                                        \
        const T *x = c->x, *gy = c->gy;                                        \
        const int op = c->op;                                                  \
        const double a = c->a, b = c->b;                                       \
        if (op == THNN_RELU) {                                                 \
            _Pragma("omp simd")                                                \
            for (int64_t i = i0; i < i1; i++) {                                \
                const T g = gy[i]; /* loaded unconditionally: a blend, no branch */ \
                gx[i] = x[i] > 0 ? g : (T)0;                                   \
            }                                                                  \
            return;                                                            \
        }                                                                      \
        for (int64_t i = i0; i < i1; i++) gx[i] = (T)(gy[i] * act_df(op, x[i], a, b)); \
    }
DEFINE_ACT(float)
DEFINE_ACT(double)

/* ReLU is a load and a compare per element, the others about 8 times that */
static void act_run(th_range_fn f32, th_range_fn f64, int dtype, int64_t n,
                    act_ctx *c) {
    th_parallel_for(n, thnn__grain(c->op == THNN_RELU ? 1 : 8),
                    dtype == TH_FLOAT32 ? f32 : f64, c);
}

static int check_op(const char *fn, int op) {
    if (op < 0 || op >= THNN_NUM_ACTIVATIONS)
        return thnn__error(TH_ERR_VALUE, "%s: unknown activation %d", fn, op);
    return TH_OK;
}

THNN_API int thnn_activation_forward(th_tensor *output, const th_tensor *input,
                                     int activation, double a, double b) {
    static const char fn[] = "activation_forward";
    int rc;
    if ((rc = check_op(fn, activation))) return rc;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = thnn__check_like(fn, "output", output, input))) return rc;
    th_tensor *x = thnn__contig(input);
    if (!x) return thnn_last_status();
    act_ctx c = {thnn__data(output), thnn__data(x), NULL, activation, a, b};
    act_run(act_fwd_float, act_fwd_double, x->dtype, th_numel(x), &c);
    th_tensor_release(x);
    return TH_OK;
}

THNN_API int thnn_activation_backward_input(th_tensor *grad_input,
                                            const th_tensor *grad_output,
                                            const th_tensor *input,
                                            int activation, double a, double b) {
    static const char fn[] = "activation_backward_input";
    int rc;
    char s1[256], s2[256];
    if ((rc = check_op(fn, activation))) return rc;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    if (th_numel(grad_output) != th_numel(input) || grad_output->dtype != input->dtype ||
        grad_output->ndim != input->ndim)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s does not match input %s",
                           fn, thnn__shape(grad_output, s1), thnn__shape(input, s2));
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, input))) return rc;
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    if (!x || !gy) { thnn__release(x); thnn__release(gy); return thnn_last_status(); }
    act_ctx c = {thnn__data(grad_input), thnn__data(x), thnn__data(gy), activation, a, b};
    act_run(act_bwd_float, act_bwd_double, x->dtype, th_numel(x), &c);
    th_tensor_release(x); th_tensor_release(gy);
    return TH_OK;
}
