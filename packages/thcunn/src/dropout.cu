// dropout: a Bernoulli(1 - p) mask from libTHC's Philox generator
// (thc_bernoulli_, so a seeded generator repeats its masks), then one
// kernel scales it to 0 or 1/(1-p) and writes output = input * mask.  The
// backward multiplies by the same mask.  Checks and messages are
// libTHNN's (src/dropout.c).
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

const char *type_name(int dtype) {   // PyTorch's scalar type names
    static const char *names[] = {"Float", "Double", "Half", "BFloat16", "Char",
                                  "Byte",  "Short",  "Int",  "Long",     "Bool"};
    return dtype >= 0 && dtype < THC_NUM_DTYPES ? names[dtype] : "?";
}

int thc_failed(const char *fn) {
    int st = thc_last_status();
    return thcunn__error(st ? st : THC_ERR_RUNTIME, "%s: %s", fn, thc_last_error());
}

int check_float(const char *fn, const char *name, const thc_tensor *t) {
    if (!t) return thcunn__error(THC_ERR_VALUE, "%s: %s must not be NULL", fn, name);
    if (thcunn__check_tensor(fn, name, t, 0)) return thcunn_last_status();
    if (t->dtype != THC_FLOAT32 && t->dtype != THC_FLOAT64)
        return thcunn__error(THC_ERR_TYPE, "%s: expected %s of scalar type Float or Double but "
                             "found %s", fn, name, type_name(t->dtype));
    return THC_OK;
}

// out: like's shape and dtype, contiguous
int check_like(const char *fn, const char *name, const thc_tensor *out, const thc_tensor *like) {
    char a[256], b[256];
    if (!out) return thcunn__error(THC_ERR_VALUE, "%s: %s must not be NULL", fn, name);
    if (thcunn__check_tensor(fn, name, out, 0)) return thcunn_last_status();
    int ok = out->ndim == like->ndim;
    for (int i = 0; ok && i < like->ndim; i++) ok = out->sizes[i] == like->sizes[i];
    if (!ok)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected %s of shape %s but got %s", fn, name,
                             thcunn__shape_str(like->ndim, like->sizes, a),
                             thcunn__shape_str(out->ndim, out->sizes, b));
    if (out->dtype != like->dtype)
        return thcunn__error(THC_ERR_TYPE, "%s: expected %s of scalar type %s but found %s", fn,
                             name, type_name(like->dtype), type_name(out->dtype));
    if (!thc_is_contiguous(out))
        return thcunn__error(THC_ERR_RUNTIME, "%s: %s must be contiguous", fn, name);
    return THC_OK;
}

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
    if (thcunn__check_runtime(fn) || check_float(fn, "input", input)) return thcunn_last_status();
    if (!(p >= 0 && p <= 1))
        return thcunn__error(THC_ERR_VALUE, "dropout probability has to be between 0 and 1, "
                             "but got %g", p);
    if (check_like(fn, "output", output, input) || check_like(fn, "mask", mask, input))
        return thcunn_last_status();
    thc_generator *g = generator ? generator : thc_default_generator();
    // p = 1 draws nothing (as libTHNN): every element is dropped
    if (p == 1 ? thc_zero(mask) : thc_bernoulli_(mask, 1.0 - p, g)) return thc_failed(fn);
    thc_tensor *x = thc_contiguous(input);
    if (!x) return thc_failed(fn);
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
    if (thcunn__check_runtime(fn) || check_float(fn, "grad_output", grad_output) ||
        check_float(fn, "mask", mask) || check_like(fn, "grad_input", grad_input, mask))
        return thcunn_last_status();
    if (thc_binary_out(THC_MUL, grad_input, grad_output, mask)) return thc_failed(fn);
    return THC_OK;
}
