// reflection_pad1d/2d/3d and replication_pad1d/2d/3d, libTHNN's rules:
// `padding` holds one (before, after) pair per padded dim, last dim first;
// negative values crop.  Every output reads one input position (a per-dim
// index map), so the forward is a thread per output.  In the backward
// several outputs map to one input: reflection gathers (at most 3 outputs
// per dim, so at most 27 per input, deterministic); replication's edge
// inputs collect a whole padded slab, so it scatters with atomic adds from
// a thread per output instead of looping over the slab in one thread.
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

enum { REFLECT = 0, REPLICATE = 1 };

// padded dims in slots depth, height, width (size 1 and no padding where
// not padded); planes = product of the leading (batch, channel) dims
struct PadGeom {
    int64_t planes;
    int64_t in[3], out[3], before[3];
};

// `in` is the unpadded tensor (input, or grad_input in the backward)
int geometry(const char *fn, const char *name, int mode, int k, const thc_tensor *in,
             const int64_t *padding, PadGeom *g) {
    char a[256];
    if (thcunn__check_tensor(fn, name, in, 1)) return thcunn_last_status();
    if (!padding) return thcunn__error(THC_ERR_VALUE, "%s: padding must not be NULL", fn);
    if (in->ndim != k + 1 && in->ndim != k + 2)
        return thcunn__error(THC_ERR_RUNTIME, "%s: Expected %dD or %dD (batch mode) tensor "
                             "for %s, but got: %s", fn, k + 1, k + 2, name,
                             thcunn__shape_str(in->ndim, in->sizes, a));
    // the batch dim may be 0, the others may not (nothing to pad from)
    for (int i = in->ndim == k + 2 ? 1 : 0; i < in->ndim; i++)
        if (in->sizes[i] == 0)
            return thcunn__error(THC_ERR_RUNTIME, "%s: Expected %dD or %dD (batch mode) "
                                 "tensor with possibly 0 batch size and other non-zero "
                                 "dimensions for %s, but got: %s", fn, k + 1, k + 2, name,
                                 thcunn__shape_str(in->ndim, in->sizes, a));
    if (thcunn__planes(fn, in, 0, in->ndim - k, &g->planes)) return thcunn_last_status();
    for (int j = 0; j < 3; j++) {
        g->in[j] = g->out[j] = 1;
        g->before[j] = 0;
    }
    for (int j = 0; j < k; j++) {   // j = 0: the last dim
        const int dim = in->ndim - 1 - j, slot = 2 - j;
        const int64_t n = in->sizes[dim], pb = padding[2 * j], pa = padding[2 * j + 1];
        if (mode == REFLECT && (pb >= n || pa >= n))
            return thcunn__error(THC_ERR_RUNTIME, "Argument #4: Padding size should be less "
                                 "than the corresponding input dimension, but got: padding "
                                 "(%lld, %lld) at dimension %d of input %s", (long long)pb,
                                 (long long)pa, dim, thcunn__shape_str(in->ndim, in->sizes, a));
        int64_t o;
        if (thcunn__add_ovf(n, pb, &o) || thcunn__add_ovf(o, pa, &o))
            return thcunn__size_overflow(fn, "the padded size");
        if (o < 1)
            return thcunn__error(THC_ERR_RUNTIME, "%s: input size %lld at dimension %d of "
                                 "input %s is too small for padding (%lld, %lld): the "
                                 "calculated output size is %lld", fn, (long long)n, dim,
                                 thcunn__shape_str(in->ndim, in->sizes, a), (long long)pb,
                                 (long long)pa, (long long)o);
        g->in[slot] = n;
        g->out[slot] = o;
        g->before[slot] = pb;
    }
    return THC_OK;
}

// s: THC_MAX_DIMS sizes (in->ndim is k + 1 or k + 2 once geometry passed;
// the bounds keep the compiler's array checks quiet)
void padded_shape(const thc_tensor *in, int k, const PadGeom &g, int64_t *s) {
    const int nd = in->ndim < THC_MAX_DIMS ? in->ndim : THC_MAX_DIMS;
    for (int i = 0; i < nd; i++) s[i] = in->sizes[i];
    for (int j = 0; j < k && j < 3 && nd - 1 - j >= 0; j++) s[nd - 1 - j] = g.out[2 - j];
}

// grad_output: any strides (made contiguous here), but the padded shape
// and grad_input's dtype
int check_grad_output(const char *fn, const thc_tensor *go, const thc_tensor *gi, int k,
                      const PadGeom &g) {
    if (thcunn__check_tensor(fn, "grad_output", go, 1)) return thcunn_last_status();
    int64_t s[THC_MAX_DIMS];
    padded_shape(gi, k, g, s);
    int ok = go->ndim == gi->ndim && go->dtype == gi->dtype;
    for (int i = 0; ok && i < gi->ndim; i++) ok = go->sizes[i] == s[i];
    if (!ok) {
        char a[256], b[256];
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected grad_output of shape %s and "
                             "scalar type %s but got %s (%s)", fn,
                             thcunn__shape_str(gi->ndim, s, a), thc_dtype_name(gi->dtype),
                             thcunn__shape_str(go->ndim, go->sizes, b),
                             thc_dtype_name(go->dtype));
    }
    return THC_OK;
}

// source index of output position o along a dim of n inputs
THCUNN_HD inline int64_t src_index(int mode, int64_t o, int64_t n, int64_t before) {
    int64_t i = o - before;
    if (mode == REPLICATE) return i < 0 ? 0 : i >= n ? n - 1 : i;
    if (i < 0) i = -i;
    if (i >= n) i = 2 * (n - 1) - i;
    return i;
}

// the t-th (t < 3) output position that reflects onto input i along a dim
// (n inputs, `on` outputs), or -1: the plain copy, the mirror on the
// before side (i > 0) and the one on the after side (i < n - 1); the
// padding being smaller than n, there are no others
THCUNN_HD inline int64_t reflect_tap(int t, int64_t i, int64_t n, int64_t on, int64_t before) {
    int64_t o = t == 0 ? i + before : t == 1 ? (i > 0 ? before - i : -1)
                                             : (i < n - 1 ? before + 2 * (n - 1) - i : -1);
    return o >= 0 && o < on ? o : -1;
}

template <typename T> struct PadFwd {
    T *out;
    const T *x;
    PadGeom g;
    int mode;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t w = o % g.out[2], r = o / g.out[2];
        int64_t h = r % g.out[1];
        r /= g.out[1];
        int64_t d = r % g.out[0], p = r / g.out[0];
        int64_t sd = src_index(mode, d, g.in[0], g.before[0]);
        int64_t sh = src_index(mode, h, g.in[1], g.before[1]);
        int64_t sw = src_index(mode, w, g.in[2], g.before[2]);
        out[o] = x[((p * g.in[0] + sd) * g.in[1] + sh) * g.in[2] + sw];
    }
};

// reflection backward: a thread per input, summing the outputs that read it
template <typename T> struct ReflectBwd {
    T *gin;
    const T *gout;
    PadGeom g;
    THCUNN_HD void operator()(int64_t i) const {
        int64_t w = i % g.in[2], r = i / g.in[2];
        int64_t h = r % g.in[1];
        r /= g.in[1];
        int64_t d = r % g.in[0], p = r / g.in[0];
        const T *gp = gout + p * g.out[0] * g.out[1] * g.out[2];
        T s = 0;
        for (int td = 0; td < 3; td++) {
            int64_t od = reflect_tap(td, d, g.in[0], g.out[0], g.before[0]);
            if (od < 0) continue;
            for (int th = 0; th < 3; th++) {
                int64_t oh = reflect_tap(th, h, g.in[1], g.out[1], g.before[1]);
                if (oh < 0) continue;
                const T *row = gp + (od * g.out[1] + oh) * g.out[2];
                for (int tw = 0; tw < 3; tw++) {
                    int64_t ow = reflect_tap(tw, w, g.in[2], g.out[2], g.before[2]);
                    if (ow >= 0) s += row[ow];
                }
            }
        }
        gin[i] = s;
    }
};

// replication backward: a thread per output, adding into its source
template <typename T> struct ReplicateBwd {
    T *gin;
    const T *gout;
    PadGeom g;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t w = o % g.out[2], r = o / g.out[2];
        int64_t h = r % g.out[1];
        r /= g.out[1];
        int64_t d = r % g.out[0], p = r / g.out[0];
        int64_t sd = src_index(REPLICATE, d, g.in[0], g.before[0]);
        int64_t sh = src_index(REPLICATE, h, g.in[1], g.before[1]);
        int64_t sw = src_index(REPLICATE, w, g.in[2], g.before[2]);
        atomic_add(gin + ((p * g.in[0] + sd) * g.in[1] + sh) * g.in[2] + sw, gout[o]);
    }
};

int pad_forward(const char *fn, int mode, int k, thc_tensor *output, const thc_tensor *input,
                const int64_t *padding) {
    PadGeom g;
    int64_t s[THC_MAX_DIMS];
    if (thcunn__check_runtime(fn) || geometry(fn, "input", mode, k, input, padding, &g))
        return thcunn_last_status();
    padded_shape(input, k, g, s);
    if (thcunn__check_output(fn, "output", output, input->ndim, s, input->dtype))
        return thcunn_last_status();
    thc_tensor *x = thc_contiguous(input);
    if (!x) return thcunn__from_thc();
    int rc;
    THCUNN_FLOATING(x->dtype, rc = for_each(fn, thcunn__numel(output),
                                            PadFwd<scalar_t>{data<scalar_t>(output),
                                                             data<scalar_t>(x), g, mode}))
    thc_tensor_release(x);
    return rc;
}

int pad_backward(const char *fn, int mode, int k, thc_tensor *grad_input,
                 const thc_tensor *grad_output, const int64_t *padding) {
    PadGeom g;
    if (thcunn__check_runtime(fn) ||
        geometry(fn, "grad_input", mode, k, grad_input, padding, &g) ||
        check_grad_output(fn, grad_output, grad_input, k, g))
        return thcunn_last_status();
    if (!thc_is_contiguous(grad_input))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_input must be contiguous", fn);
    thc_tensor *go = thc_contiguous(grad_output);
    if (!go) return thcunn__from_thc();
    int rc = THC_OK;
    if (mode == REFLECT) {   // every grad_input element is written
        THCUNN_FLOATING(go->dtype, rc = for_each(fn, thcunn__numel(grad_input),
                                                 ReflectBwd<scalar_t>{data<scalar_t>(grad_input),
                                                                      data<scalar_t>(go), g}))
    } else if (thc_zero(grad_input)) {
        rc = thcunn__from_thc();
    } else {
        THCUNN_FLOATING(go->dtype, rc = for_each(fn, thcunn__numel(go),
                                                 ReplicateBwd<scalar_t>{data<scalar_t>(grad_input),
                                                                        data<scalar_t>(go), g}))
    }
    thc_tensor_release(go);
    return rc;
}

}  // namespace

#define THCUNN_DEFINE_PAD(NAME, MODE, K)                                                       \
    extern "C" THCUNN_API int thcunn_##NAME##_forward(thc_tensor *output,                      \
                                                      const thc_tensor *input,                 \
                                                      const int64_t *padding) {                \
        return pad_forward(#NAME, MODE, K, output, input, padding);                            \
    }                                                                                          \
    extern "C" THCUNN_API int thcunn_##NAME##_backward_input(thc_tensor *grad_input,           \
                                                             const thc_tensor *grad_output,    \
                                                             const int64_t *padding) {         \
        return pad_backward(#NAME "_backward_input", MODE, K, grad_input, grad_output,         \
                            padding);                                                          \
    }

THCUNN_DEFINE_PAD(reflection_pad1d, REFLECT, 1)
THCUNN_DEFINE_PAD(reflection_pad2d, REFLECT, 2)
THCUNN_DEFINE_PAD(reflection_pad3d, REFLECT, 3)
THCUNN_DEFINE_PAD(replication_pad1d, REPLICATE, 1)
THCUNN_DEFINE_PAD(replication_pad2d, REPLICATE, 2)
THCUNN_DEFINE_PAD(replication_pad3d, REPLICATE, 3)
