// conv_transpose2d, with libTHNN's checks and messages: conv2d with the
// roles of input and output swapped (conv2d's geometry on y (N, O, OH, OW)
// with x's H x W as its output positions): the forward is conv2d's
// input-gradient path (products, then col2im into y), the input gradient
// conv2d's forward (im2col of grad_output), the weight gradient conv2d's
// with x as "grad_output".
#include <stdio.h>

#include "conv_internal.h"

using namespace thcunn;
using namespace thcunn::conv;

namespace {

// ---- conv_transpose2d --------------------------------------------------------
// input x (N, C, H, W), weight (C, O/G, kh, kw), output y (N, O, OH, OW)
struct Convt {
    int64_t N, C, O, G, H, W, kh, kw, OH, OW;
    int64_t sh, sw, ph, pw, oph, opw, dh, dw;
    // conv2d's geometry with y as its input and x as its output
    Conv as_conv() const {
        Conv c;
        c.N = N; c.C = O; c.H = OH; c.W = OW; c.O = C; c.kh = kh; c.kw = kw;
        c.OH = H; c.OW = W; c.sh = sh; c.sw = sw; c.ph = ph; c.pw = pw;
        c.dh = dh; c.dw = dw; c.G = G;
        return c;
    }
};

int convt_params(const char *fn, const int64_t *stride, const int64_t *padding,
                 const int64_t *output_padding, const int64_t *dilation, int64_t groups,
                 Convt *g) {
    if (!stride || !padding || !output_padding || !dilation)
        return thcunn__error(THC_ERR_VALUE, "%s: stride, padding, output_padding and dilation "
                             "must not be NULL", fn);
    for (int i = 0; i < 2; i++) {
        if (stride[i] < 1)
            return thcunn__error(THC_ERR_RUNTIME, "%s: non-positive stride is not supported", fn);
        if (padding[i] < 0 || output_padding[i] < 0)
            return thcunn__error(THC_ERR_RUNTIME, "%s: negative padding is not supported", fn);
        if (dilation[i] < 1)
            return thcunn__error(THC_ERR_RUNTIME, "%s: dilation should be greater than zero", fn);
    }
    if ((output_padding[0] >= stride[0] && output_padding[0] >= dilation[0]) ||
        (output_padding[1] >= stride[1] && output_padding[1] >= dilation[1]))
        return thcunn__error(THC_ERR_RUNTIME, "%s: output padding must be smaller than either "
                             "stride or dilation, but got output_padding_height: %lld "
                             "output_padding_width: %lld stride_height: %lld stride_width: "
                             "%lld dilation_height: %lld dilation_width: %lld", fn,
                             (long long)output_padding[0], (long long)output_padding[1],
                             (long long)stride[0], (long long)stride[1], (long long)dilation[0],
                             (long long)dilation[1]);
    if (groups < 1)
        return thcunn__error(THC_ERR_RUNTIME, "%s: non-positive groups is not supported", fn);
    g->sh = stride[0]; g->sw = stride[1];
    g->ph = padding[0]; g->pw = padding[1];
    g->oph = output_padding[0]; g->opw = output_padding[1];
    g->dh = dilation[0]; g->dw = dilation[1];
    g->G = groups;
    return THC_OK;
}

// (in - 1) * s - 2 * p + d * (k - 1) + op + 1, checked (in, k >= 1)
int convt_out(int64_t in, int64_t s, int64_t p, int64_t d, int64_t k, int64_t op, int64_t *out) {
    int64_t a, b, r;
    return thcunn__mul_ovf(in - 1, s, &a) || thcunn__mul_ovf(p, 2, &b) ||
           thcunn__mul_ovf(d, k - 1, &r) || thcunn__add_ovf(a - b, r, &r) ||
           thcunn__add_ovf(r, op, &r) || thcunn__add_ovf(r, 1, out);
}

// fills g from the input and weight shapes; checks them as libTHNN does
int convt_geometry(const char *fn, const thc_tensor *input, const thc_tensor *weight, Convt *g) {
    char a[256], b[256];
    if (check_pair(fn, input, weight, 4)) return thcunn_last_status();
    g->N = input->sizes[0]; g->C = input->sizes[1];
    g->H = input->sizes[2]; g->W = input->sizes[3];
    g->kh = weight->sizes[2]; g->kw = weight->sizes[3];
    if (weight->sizes[0] != g->C)
        return thcunn__error(THC_ERR_RUNTIME, "Given transposed=1, weight of size %s, expected "
                             "input%s to have %lld channels, but got %lld channels instead",
                             thcunn__shape_of(weight, a), thcunn__shape_of(input, b),
                             (long long)weight->sizes[0], (long long)g->C);
    if (g->C % g->G)
        return thcunn__error(THC_ERR_RUNTIME, "%s: in_channels (%lld) must be divisible by "
                             "groups (%lld)", fn, (long long)g->C, (long long)g->G);
    if (thcunn__mul_ovf(weight->sizes[1], g->G, &g->O))
        return thcunn__size_overflow(fn, "out_channels (weight size 1 times groups)");
    if (g->H < 1 || g->W < 1)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected input to have non-zero size for the "
                             "spatial dimensions, but got input of size %s", fn,
                             thcunn__shape_of(input, a));
    if (g->kh < 1 || g->kw < 1)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected a non-empty kernel, but got weight "
                             "of size %s", fn, thcunn__shape_of(weight, a));
    if (convt_out(g->H, g->sh, g->ph, g->dh, g->kh, g->oph, &g->OH) ||
        convt_out(g->W, g->sw, g->pw, g->dw, g->kw, g->opw, &g->OW))
        return thcunn__size_overflow(fn, "the output size");
    if (g->OH < 1 || g->OW < 1)
        return thcunn__error(THC_ERR_RUNTIME, "Given input size per channel: (%lld x %lld). "
                             "Calculated output size per channel: (%lld x %lld). Output size "
                             "is too small", (long long)g->H, (long long)g->W,
                             (long long)g->OH, (long long)g->OW);
    return THC_OK;
}

}  // namespace

extern "C" THCUNN_API int thcunn_conv_transpose2d_forward(
    thc_tensor *output, const thc_tensor *input, const thc_tensor *weight,
    const thc_tensor *bias, const int64_t *stride, const int64_t *padding,
    const int64_t *output_padding, const int64_t *dilation, int64_t groups) {
    const char *fn = "conv_transpose2d_forward";
    Convt g;
    if (thcunn__check_runtime(fn) ||
        convt_params(fn, stride, padding, output_padding, dilation, groups, &g) ||
        convt_geometry(fn, input, weight, &g) ||
        thcunn__check_vec(fn, "bias", bias, g.O, input->dtype))
        return thcunn_last_status();
    const int64_t os[4] = {g.N, g.O, g.OH, g.OW};
    if (check_out(fn, "output", output, 4, os, input->dtype)) return thcunn_last_status();
    if (thcunn__numel(output) == 0) return THC_OK;
    int rc;
    if (g.C == 0) {   // no input channels: the bias alone
        rc = zero_out(output);
    } else {   // y = col2im(W^T @ x): conv2d's input gradient with x as grad_output
        thc_tensor *x, *w;
        rc = contig2(input, weight, &x, &w);
        if (!rc) rc = conv::input_cols(fn, output, x, w, g.as_conv());
        thc_tensor_release(x);
        thc_tensor_release(w);
    }
    return !rc && bias ? conv::add_bias(output, bias) : rc;
}

extern "C" THCUNN_API int thcunn_conv_transpose2d_backward_input(
    thc_tensor *grad_input, const thc_tensor *grad_output, const thc_tensor *weight,
    const int64_t *stride, const int64_t *padding, const int64_t *output_padding,
    const int64_t *dilation, int64_t groups) {
    const char *fn = "conv_transpose2d_backward_input";
    Convt g;
    if (thcunn__check_runtime(fn) ||
        convt_params(fn, stride, padding, output_padding, dilation, groups, &g) ||
        thcunn__check_tensor(fn, "grad_input", grad_input, 1) ||
        convt_geometry(fn, grad_input, weight, &g))
        return thcunn_last_status();
    const int64_t os[4] = {g.N, g.O, g.OH, g.OW};
    if (check_grad_output(fn, grad_output, 4, os, weight->dtype) ||
        thcunn__check_like(fn, "grad_input", grad_input, grad_input))
        return thcunn_last_status();
    if (thcunn__numel(grad_input) == 0) return THC_OK;
    if (g.O == 0) return zero_out(grad_input);
    // gx = W @ im2col(gy): conv2d's forward on grad_output
    thc_tensor *go, *w;
    int rc = contig2(grad_output, weight, &go, &w);
    if (!rc) rc = conv::forward_cols(fn, grad_input, go, w, g.as_conv());
    thc_tensor_release(go);
    thc_tensor_release(w);
    return rc;
}

extern "C" THCUNN_API int thcunn_conv_transpose2d_backward_params(
    thc_tensor *grad_weight, thc_tensor *grad_bias, const thc_tensor *grad_output,
    const thc_tensor *input, const int64_t *stride, const int64_t *padding,
    const int64_t *output_padding, const int64_t *dilation, int64_t groups) {
    const char *fn = "conv_transpose2d_backward_params";
    Convt g;
    if (thcunn__check_runtime(fn) ||
        convt_params(fn, stride, padding, output_padding, dilation, groups, &g))
        return thcunn_last_status();
    if (!grad_weight && !grad_bias) return THC_OK;
    if (check_params_inputs(fn, grad_output, input, 4)) return thcunn_last_status();
    if (grad_weight) {
        if (thcunn__check_tensor(fn, "grad_weight", grad_weight, 1) ||
            convt_geometry(fn, input, grad_weight, &g))
            return thcunn_last_status();
        const int64_t os[4] = {g.N, g.O, g.OH, g.OW};
        if (check_grad_output(fn, grad_output, 4, os, input->dtype) ||
            thcunn__check_like(fn, "grad_weight", grad_weight, grad_weight))
            return thcunn_last_status();
    }
    const int64_t O = grad_output->sizes[1];
    if (grad_bias && check_out(fn, "grad_bias", grad_bias, 1, &O, input->dtype))
        return thcunn_last_status();
    if (grad_bias && conv::bias_grad(grad_bias, grad_output)) return thcunn_last_status();
    if (!grad_weight) return THC_OK;
    if (thcunn__numel(grad_output) == 0 || thcunn__numel(grad_weight) == 0)
        return zero_out(grad_weight);
    // gW = sum_n x_n @ im2col(gy_n)^T: conv2d's weight gradient with x as grad_output
    thc_tensor *x, *go;
    int rc = contig2(input, grad_output, &x, &go);
    if (!rc) rc = conv::weight_cols(fn, grad_weight, x, go, g.as_conv());
    thc_tensor_release(x);
    thc_tensor_release(go);
    return rc;
}
