// softmax and log_softmax along any dim: the tensor seen as (outer, len,
// inner).  Short lines: one thread per (outer, inner) line, max-subtracted,
// in double.  Long lines (or few of them, which would leave the GPU idle):
// composed of libTHC's reductions along dim (which split a long line over
// many threads and accumulate in double) and element-wise calls.
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

struct Lines {
    int64_t outer, len, inner;
    THCUNN_HD int64_t base(int64_t line) const {
        return (line / inner) * len * inner + line % inner;
    }
};

template <typename T> struct ForwardFn {
    T *out;
    const T *in;
    Lines l;
    int log;
    THCUNN_HD void operator()(int64_t line) const {
        int64_t b = l.base(line), s = l.inner;
        double mx = -INFINITY;
        for (int64_t k = 0; k < l.len; k++) {
            double v = in[b + k * s];
            mx = (v > mx || v != v) ? v : mx;
        }
        double sum = 0;
        for (int64_t k = 0; k < l.len; k++) sum += exp((double)in[b + k * s] - mx);
        double lse = log ? mx + ::log(sum) : 0;
        for (int64_t k = 0; k < l.len; k++) {
            double v = in[b + k * s];
            out[b + k * s] = (T)(log ? v - lse : exp(v - mx) / sum);
        }
    }
};

template <typename T> struct BackwardFn {
    T *gin;
    const T *gout, *out;
    Lines l;
    int log;
    THCUNN_HD void operator()(int64_t line) const {
        int64_t b = l.base(line), s = l.inner;
        double acc = 0;   // sum(g) for log_softmax, sum(g * y) for softmax
        for (int64_t k = 0; k < l.len; k++)
            acc += log ? (double)gout[b + k * s] : (double)gout[b + k * s] * out[b + k * s];
        for (int64_t k = 0; k < l.len; k++) {
            double g = gout[b + k * s], y = out[b + k * s];
            gin[b + k * s] = (T)(log ? g - exp(y) * acc : y * (g - acc));
        }
    }
};

int lines_of(const char *what, const thc_tensor *t, int dim, Lines *l) {
    int nd = t->ndim ? t->ndim : 1;
    if (dim < -nd || dim >= nd)
        return thcunn__error(THC_ERR_INDEX, "%s: Dimension out of range (expected to be in range "
                             "of [%d, %d], but got %d)", what, -nd, nd - 1, dim);
    if (dim < 0) dim += nd;
    l->outer = l->inner = 1;
    l->len = t->ndim ? t->sizes[dim] : 1;
    for (int d = 0; d < t->ndim; d++) {
        if (d < dim) l->outer *= t->sizes[d];
        if (d > dim) l->inner *= t->sizes[d];
    }
    return THC_OK;
}

// libTHC's reductions and element-wise calls instead of a thread per
// line: lines of 1024 and more, or of 128 and more when there are at
// most 512 of them
bool composed(const Lines &l) {
    const int64_t lines = l.outer * l.inner;
    return lines > 0 && (l.len >= 1024 || (l.len >= 128 && lines <= 512));
}

// the dim that lines_of accepted, non-negative
int wrap(const thc_tensor *t, int dim) { return dim < 0 ? dim + t->ndim : dim; }

// output = softmax(x) = exp(x - max) / sum, or log_softmax(x) = x - max -
// log(sum); the sums accumulate in double (libTHC's reductions do)
int forward_composed(thc_tensor *output, const thc_tensor *x, int dim, int log) {
    thc_tensor *mx = thc_reduce(THC_RED_AMAX, x, 1, &dim, 1, -1), *e = NULL, *s = NULL;
    int rc = mx && !thc_binary_out(THC_SUB, output, x, mx) ? THC_OK : thcunn__from_thc();
    if (!rc && !log) {   // in place in output: no temporary of x's size
        if (thc_unary_out(THC_EXP, output, output) ||
            !(s = thc_reduce(THC_RED_SUM, output, 1, &dim, 1, -1)) ||
            thc_binary_out(THC_DIV, output, output, s))
            rc = thcunn__from_thc();
    } else if (!rc) {
        if (!(e = thc_unary(THC_EXP, output)) ||
            !(s = thc_reduce(THC_RED_SUM, e, 1, &dim, 1, -1)) || thc_unary_out(THC_LOG, s, s) ||
            thc_binary_out(THC_SUB, output, output, s))
            rc = thcunn__from_thc();
    }
    thc_tensor *tmp[] = {mx, e, s};
    for (thc_tensor *t : tmp) thc_tensor_release(t);
    return rc;
}

// softmax: gin = y * (g - sum(g * y)); log_softmax: gin = g - exp(y) *
// sum(g); gin holds the intermediate products (no temporary of y's size)
int backward_composed(thc_tensor *gin, const thc_tensor *g, const thc_tensor *y, int dim,
                      int log) {
    thc_tensor *s = NULL;
    int bad;
    if (log)
        bad = !(s = thc_reduce(THC_RED_SUM, g, 1, &dim, 1, -1)) ||
              thc_unary_out(THC_EXP, gin, y) || thc_binary_out(THC_MUL, gin, gin, s) ||
              thc_binary_out(THC_SUB, gin, g, gin);
    else
        bad = thc_binary_out(THC_MUL, gin, g, y) ||
              !(s = thc_reduce(THC_RED_SUM, gin, 1, &dim, 1, -1)) ||
              thc_binary_out(THC_SUB, gin, g, s) || thc_binary_out(THC_MUL, gin, gin, y);
    thc_tensor_release(s);
    return bad ? thcunn__from_thc() : THC_OK;
}

int forward(const char *what, thc_tensor *output, const thc_tensor *input, int dim, int log) {
    Lines l;
    if (thcunn__check_runtime(what) || thcunn__check_tensor(what, "input", input, 1) ||
        thcunn__check_output(what, "output", output, input->ndim, input->sizes, input->dtype) ||
        lines_of(what, input, dim, &l))
        return thcunn_last_status();
    if (composed(l)) return forward_composed(output, input, wrap(input, dim), log);
    thc_tensor *x = thc_contiguous(input);
    if (!x) return thcunn__from_thc();
    int rc = THC_OK;
    if (l.len > 0)
        THCUNN_FLOATING(x->dtype, rc = for_each(what, l.outer * l.inner,
                                                ForwardFn<scalar_t>{data<scalar_t>(output),
                                                                    data<scalar_t>(x), l, log}))
    thc_tensor_release(x);
    return rc;
}

int backward(const char *what, thc_tensor *grad_input, const thc_tensor *grad_output,
             const thc_tensor *output, int dim, int log) {
    Lines l;
    if (thcunn__check_runtime(what) || thcunn__check_tensor(what, "output", output, 1) ||
        thcunn__check_tensor(what, "grad_output", grad_output, 1) ||
        thcunn__check_output(what, "grad_input", grad_input, output->ndim, output->sizes,
                             output->dtype) ||
        lines_of(what, output, dim, &l))
        return thcunn_last_status();
    if (thcunn__numel(grad_output) != thcunn__numel(output))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output must match the output", what);
    if (composed(l)) {   // grad_output seen with output's shape, as the per-thread path does
        thc_tensor *g = thc_reshape(grad_output, output->ndim, output->sizes);
        int rc = g ? backward_composed(grad_input, g, output, wrap(output, dim), log)
                   : thcunn__from_thc();
        thc_tensor_release(g);
        return rc;
    }
    thc_tensor *y = thc_contiguous(output), *g = y ? thc_contiguous(grad_output) : NULL;
    int rc = g ? THC_OK : thcunn__from_thc();
    if (!rc && l.len > 0)
        THCUNN_FLOATING(y->dtype, rc = for_each(what, l.outer * l.inner,
                                                BackwardFn<scalar_t>{data<scalar_t>(grad_input),
                                                                     data<scalar_t>(g),
                                                                     data<scalar_t>(y), l, log}))
    thc_tensor_release(y);
    thc_tensor_release(g);
    return rc;
}

}  // namespace

extern "C" THCUNN_API int thcunn_softmax_forward(thc_tensor *output, const thc_tensor *input,
                                                 int dim) {
    return forward("softmax_forward", output, input, dim, 0);
}

extern "C" THCUNN_API int thcunn_log_softmax_forward(thc_tensor *output, const thc_tensor *input,
                                                     int dim) {
    return forward("log_softmax_forward", output, input, dim, 1);
}

extern "C" THCUNN_API int thcunn_softmax_backward_input(thc_tensor *grad_input,
                                                        const thc_tensor *grad_output,
                                                        const thc_tensor *output, int dim) {
    return backward("softmax_backward_input", grad_input, grad_output, output, dim, 0);
}

extern "C" THCUNN_API int thcunn_log_softmax_backward_input(thc_tensor *grad_input,
                                                            const thc_tensor *grad_output,
                                                            const thc_tensor *output, int dim) {
    return backward("log_softmax_backward_input", grad_input, grad_output, output, dim, 1);
}
