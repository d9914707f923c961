/* dropout: a mask of 0 and 1/(1-p) drawn with libTH's Philox generator
 * (th_bernoulli_), output = input * mask; the backward multiplies by the
 * same mask. */
#include "thnn_internal.h"

THNN_API int thnn_dropout_forward(th_tensor *output, th_tensor *mask,
                                  const th_tensor *input, double p,
                                  th_generator *generator) {
    static const char fn[] = "dropout";
    int rc;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if (!(p >= 0 && p <= 1))
        return thnn__error(TH_ERR_VALUE, "dropout probability has to be between 0 "
                           "and 1, but got %g", p);
    if ((rc = thnn__check_like(fn, "output", output, input))) return rc;
    if ((rc = thnn__check_like(fn, "mask", mask, input))) return rc;
    th_generator *g = generator ? generator : th_default_generator();
    if (p == 1) {
        if (th_zero(mask)) return thnn__from_th(fn);
    } else {
        if (th_bernoulli_(mask, NULL, 1.0 - p, g)) return thnn__from_th(fn);
        th_tensor *scale = th_scalar_double(1.0 / (1.0 - p), input->dtype);
        if (!scale) return thnn__from_th(fn);
        rc = th_binary_out(TH_MUL, mask, mask, scale);
        th_tensor_release(scale);
        if (rc) return thnn__from_th(fn);
    }
    if (th_binary_out(TH_MUL, output, input, mask)) return thnn__from_th(fn);
    return TH_OK;
}

THNN_API int thnn_dropout_backward_input(th_tensor *grad_input,
                                         const th_tensor *grad_output,
                                         const th_tensor *mask) {
    static const char fn[] = "dropout_backward_input";
    int rc;
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    if ((rc = thnn__check_float(fn, "mask", mask))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, mask))) return rc;
    if (th_binary_out(TH_MUL, grad_input, grad_output, mask)) return thnn__from_th(fn);
    return TH_OK;
}
