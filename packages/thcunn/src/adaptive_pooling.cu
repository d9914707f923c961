// adaptive_avg_pool2d and adaptive_max_pool2d (with indices).  Rules,
// checks and messages are libTHNN's (src/adaptive_pooling.c).
//
// Forwards: a thread per output element.  The average backward gathers (a
// thread per input element sums the cells that cover it: no atomics); the
// max backward scatters along the saved indices (max_pool_grad.cu).
#include "max_pool_grad.h"

using namespace thcunn;

namespace {

// ---- adaptive cells -------------------------------------------------------
// Output cell o of `out` over `in` covers [o*in/out, ceil((o+1)*in/out)).
// The same two formulas with in and out swapped give the cells covering
// input element i, which the gathering backward walks.
THCUNN_HD inline int64_t cell_start(int64_t o, int64_t in, int64_t out) { return o * in / out; }
THCUNN_HD inline int64_t cell_end(int64_t o, int64_t in, int64_t out) {
    return ((o + 1) * in + out - 1) / out;
}

template <typename T> struct AdaptiveAvgFn {
    T *out;
    const T *x;
    int64_t H, W, OH, OW;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t ow = o % OW, oh = (o / OW) % OH, p = o / (OW * OH);
        const T *xp = x + p * H * W;
        int64_t h0 = cell_start(oh, H, OH), h1 = cell_end(oh, H, OH);
        int64_t w0 = cell_start(ow, W, OW), w1 = cell_end(ow, W, OW);
        T s = 0;
        for (int64_t h = h0; h < h1; h++)
            for (int64_t w = w0; w < w1; w++) s += xp[h * W + w];
        out[o] = s / (T)((h1 - h0) * (w1 - w0));
    }
};

template <typename T> struct AdaptiveAvgBackFn {
    T *gin;
    const T *gout;
    int64_t H, W, OH, OW;
    THCUNN_HD void operator()(int64_t i) const {
        int64_t w = i % W, h = (i / W) % H, p = i / (W * H);
        const T *gp = gout + p * OH * OW;
        int64_t oh1 = cell_end(h, OH, H), ow0 = cell_start(w, OW, W), ow1 = cell_end(w, OW, W);
        T s = 0;
        for (int64_t oh = cell_start(h, OH, H); oh < oh1; oh++) {
            int64_t rows = cell_end(oh, H, OH) - cell_start(oh, H, OH);
            for (int64_t ow = ow0; ow < ow1; ow++) {
                int64_t n = rows * (cell_end(ow, W, OW) - cell_start(ow, W, OW));
                s += gp[oh * OW + ow] / (T)n;
            }
        }
        gin[i] = s;
    }
};

// first maximal element of the cell (row-major); a NaN wins and ends it
template <typename T> struct AdaptiveMaxFn {
    T *out;
    int64_t *ind;
    const T *x;
    int64_t H, W, OH, OW;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t ow = o % OW, oh = (o / OW) % OH, p = o / (OW * OH);
        const T *xp = x + p * H * W;
        int64_t h0 = cell_start(oh, H, OH), h1 = cell_end(oh, H, OH);
        int64_t w0 = cell_start(ow, W, OW), w1 = cell_end(ow, W, OW);
        T best = xp[h0 * W + w0];
        int64_t bi = h0 * W + w0;
        for (int64_t h = h0; h < h1 && best == best; h++)
            for (int64_t w = w0; w < w1; w++) {
                T v = xp[h * W + w];
                if (v > best || v != v) {
                    best = v;
                    bi = h * W + w;
                    if (v != v) break;
                }
            }
        out[o] = best;
        ind[o] = bi;
    }
};

// ---- adaptive checks ----------------------------------------------------------
int adaptive_check(const char *fn, const thc_tensor *input, int64_t *planes) {
    char a[256];
    if (thcunn__check_float(fn, "input", input)) return thcunn_last_status();
    if (input->ndim != 3 && input->ndim != 4)
        return thcunn__error(THC_ERR_RUNTIME, "%s: Expected 3D or 4D tensor, but got %s", fn,
                             thcunn__shape_of(input, a));
    for (int i = 1; i < input->ndim; i++)
        if (input->sizes[i] == 0)
            return thcunn__error(THC_ERR_RUNTIME, "%s: Expected input to have non-zero size for "
                                 "non-batch dimensions, but input has sizes %s with dimension "
                                 "%d being empty", fn, thcunn__shape_of(input, a), i);
    if (thcunn__planes(fn, input, 0, input->ndim - 2, planes)) return thcunn_last_status();
    return THC_OK;
}

}  // namespace

// ---- adaptive_avg_pool2d ----------------------------------------------------------
extern "C" THCUNN_API int thcunn_adaptive_avg_pool2d_forward(thc_tensor *output,
                                                             const thc_tensor *input) {
    static const char fn[] = "adaptive_avg_pool2d";
    int64_t planes;
    if (thcunn__check_runtime(fn) || adaptive_check(fn, input, &planes) ||
        thcunn__check_float(fn, "output", output))
        return thcunn_last_status();
    const int d = input->ndim;
    int ok = output->ndim == d && output->sizes[d - 2] > 0 && output->sizes[d - 1] > 0;
    for (int i = 0; ok && i < d - 2; i++) ok = output->sizes[i] == input->sizes[i];
    if (!ok) {
        char a[256], b[256];
        return thcunn__error(THC_ERR_RUNTIME, "%s: output %s does not fit input %s (same "
                             "leading dims, positive output size)", fn,
                             thcunn__shape_of(output, a), thcunn__shape_of(input, b));
    }
    if (thcunn__check_like(fn, "output", output, output)) return thcunn_last_status();
    if (output->dtype != input->dtype)
        return thcunn__error(THC_ERR_TYPE, "%s: output dtype differs from input", fn);
    thc_tensor *x = thcunn__contig(input);
    if (!x) return thcunn_last_status();
    const int64_t H = x->sizes[d - 2], W = x->sizes[d - 1];
    const int64_t OH = output->sizes[d - 2], OW = output->sizes[d - 1];
    int rc;
    THCUNN_FLOATING(x->dtype, rc = for_each(fn, planes * OH * OW,
                                            AdaptiveAvgFn<scalar_t>{data<scalar_t>(output),
                                                                    data<scalar_t>(x), H, W, OH,
                                                                    OW}))
    thc_tensor_release(x);
    return rc;
}

extern "C" THCUNN_API int thcunn_adaptive_avg_pool2d_backward_input(
    thc_tensor *grad_input, const thc_tensor *grad_output) {
    static const char fn[] = "adaptive_avg_pool2d_backward_input";
    int64_t planes;
    if (thcunn__check_runtime(fn) || adaptive_check(fn, grad_input, &planes) ||
        thcunn__check_like(fn, "grad_input", grad_input, grad_input) ||
        thcunn__check_float(fn, "grad_output", grad_output))
        return thcunn_last_status();
    const int d = grad_input->ndim;
    int ok = grad_output->ndim == d && grad_output->dtype == grad_input->dtype;
    for (int i = 0; ok && i < d - 2; i++) ok = grad_output->sizes[i] == grad_input->sizes[i];
    if (!ok) {
        char a[256], b[256];
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output %s does not fit grad_input %s",
                             fn, thcunn__shape_of(grad_output, a),
                             thcunn__shape_of(grad_input, b));
    }
    const int64_t H = grad_input->sizes[d - 2], W = grad_input->sizes[d - 1];
    const int64_t OH = grad_output->sizes[d - 2], OW = grad_output->sizes[d - 1];
    if (OH == 0 || OW == 0) {   // no cells: no gradient (and no division by 0 below)
        return thc_zero(grad_input) ? thcunn__from_thc() : THC_OK;
    }
    thc_tensor *go = thcunn__contig(grad_output);
    if (!go) return thcunn_last_status();
    int rc;
    THCUNN_FLOATING(go->dtype, rc = for_each(fn, planes * H * W,
                                             AdaptiveAvgBackFn<scalar_t>{
                                                 data<scalar_t>(grad_input), data<scalar_t>(go),
                                                 H, W, OH, OW}))
    thc_tensor_release(go);
    return rc;
}

// ---- adaptive_max_pool2d ----------------------------------------------------------
extern "C" THCUNN_API int thcunn_adaptive_max_pool2d_forward(thc_tensor *output,
                                                             thc_tensor *indices,
                                                             const thc_tensor *input) {
    static const char fn[] = "adaptive_max_pool2d";
    char a[256], b[256];
    if (thcunn__check_runtime(fn) || thcunn__check_float(fn, "input", input))
        return thcunn_last_status();
    const int d = input->ndim;
    if (d != 3 && d != 4)
        return thcunn__error(THC_ERR_RUNTIME, "%s: Expected 3D or 4D tensor, but got %s", fn,
                             thcunn__shape_of(input, a));
    for (int i = d - 3; i < d; i++)
        if (input->sizes[i] == 0)
            return thcunn__error(THC_ERR_RUNTIME, "%s: Expected input to have non-zero size for "
                                 "non-batch dimensions, but input has sizes %s with dimension "
                                 "%d being empty", fn, thcunn__shape_of(input, a), i);
    if (thcunn__check_float(fn, "output", output)) return thcunn_last_status();
    int ok = output->ndim == d && output->sizes[d - 2] > 0 && output->sizes[d - 1] > 0;
    for (int i = 0; ok && i < d - 2; i++) ok = output->sizes[i] == input->sizes[i];
    if (!ok)
        return thcunn__error(THC_ERR_RUNTIME, "%s: output %s does not fit input %s (same "
                             "leading dims, positive output size)", fn,
                             thcunn__shape_of(output, a), thcunn__shape_of(input, b));
    if (thcunn__check_out(fn, "output", output, d, output->sizes, input->dtype) ||
        thcunn__check_out(fn, "indices", indices, d, output->sizes, THC_INT64))
        return thcunn_last_status();
    const int64_t planes = d == 4 ? input->sizes[0] * input->sizes[1] : input->sizes[0];
    const int64_t H = input->sizes[d - 2], W = input->sizes[d - 1];
    const int64_t OH = output->sizes[d - 2], OW = output->sizes[d - 1];
    thc_tensor *x = thcunn__contig(input);
    if (!x) return thcunn_last_status();
    int rc;
    THCUNN_FLOATING(x->dtype, rc = for_each(fn, planes * OH * OW,
                                            AdaptiveMaxFn<scalar_t>{data<scalar_t>(output),
                                                                    data<int64_t>(indices),
                                                                    data<scalar_t>(x), H, W, OH,
                                                                    OW}))
    thc_tensor_release(x);
    return rc;
}

extern "C" THCUNN_API int thcunn_adaptive_max_pool2d_backward_input(
    thc_tensor *grad_input, const thc_tensor *grad_output, const thc_tensor *indices) {
    return max_pool_backward("adaptive_max_pool2d_backward_input", grad_input, grad_output,
                             indices, 2);
}
