// dropout: a Bernoulli(1 - p) mask from libTHC's Philox generator
// (thc_bernoulli_, so a seeded generator repeats its masks), then one
// kernel scales it to 0 or 1/(1-p) and writes output = input * mask.  The
// backward multiplies by the same mask.  Checks and messages are
// libTHNN's (src/dropout.c).
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

// mask (0 or 1) *= scale; out = x * mask
template <typename T> struct ApplyFn {
    T *out, *mask;
    const T *x;
    T scale;
    THCUNN_HD void operator()(int64_t i) const {
        const T m = mask[i] * scale;
        mask[i] = m;
        out[i] = x[i] * m;
    }
};

}  // namespace

extern "C" THCUNN_API int thcunn_dropout_forward(thc_tensor *output, thc_tensor *mask,
                                                 const thc_tensor *input, double p,
                                                 thc_generator *generator) {
    static const char fn[] = "dropout";
    if (thcunn__check_runtime(fn) || thcunn__check_float(fn, "input", input))
        return thcunn_last_status();
    if (!(p >= 0 && p <= 1))
        return thcunn__error(THC_ERR_VALUE, "dropout probability has to be between 0 and 1, "
                             "but got %g", p);
    if (thcunn__check_like(fn, "output", output, input) ||
        thcunn__check_like(fn, "mask", mask, input))
        return thcunn_last_status();
    thc_generator *g = generator ? generator : thc_default_generator();
    // p = 1 draws nothing (as libTHNN): every element is dropped
    if (p == 1 ? thc_zero(mask) : thc_bernoulli_(mask, 1.0 - p, g)) return thcunn__thc_failed(fn);
    thc_tensor *x = thc_contiguous(input);
    if (!x) return thcunn__thc_failed(fn);
    int rc;
    THCUNN_FLOATING(input->dtype,
                    rc = for_each(fn, thcunn__numel(input),
                                  ApplyFn<scalar_t>{data<scalar_t>(output), data<scalar_t>(mask),
                                                    data<scalar_t>(x),
                                                    (scalar_t)(p == 1 ? 0.0 : 1.0 / (1.0 - p))}))
    thc_tensor_release(x);
    return rc;
}

extern "C" THCUNN_API int thcunn_dropout_backward_input(thc_tensor *grad_input,
                                                        const thc_tensor *grad_output,
                                                        const thc_tensor *mask) {
    static const char fn[] = "dropout_backward_input";
    if (thcunn__check_runtime(fn) || thcunn__check_float(fn, "grad_output", grad_output) ||
        thcunn__check_float(fn, "mask", mask) ||
        thcunn__check_like(fn, "grad_input", grad_input, mask))
        return thcunn_last_status();
    if (thc_binary_out(THC_MUL, grad_input, grad_output, mask)) return thcunn__thc_failed(fn);
    return THC_OK;
}
