/* reflection_pad1d/2d/3d and replication_pad1d/2d/3d.  `padding` holds one
 * (before, after) pair per padded dim, last dim first: {left, right},
 * {left, right, top, bottom}, {left, right, top, bottom, front, back};
 * negative values crop, as in PyTorch.  Every output position reads one
 * input position (a per-dim index map), so the backward scatter-adds
 * within a plane: planes run on libTH's thread pool. */
#include <stdlib.h>

#include "thnn_internal.h"

enum { REFLECT = 0, REPLICATE = 1 };

typedef struct pad_geom {
    int k;                    /* padded dims, 1..3 */
    int64_t planes;           /* product of the leading (batch, channel) dims */
    int64_t in[3], out[3];    /* depth, height, width (1 where not padded) */
    int64_t before[3];
} pad_geom;

/* `in` is the unpadded tensor (input, or grad_input in the backward) */
static int geometry(const char *fn, const char *name, int mode, int k,
                    const th_tensor *in, const int64_t *padding, pad_geom *g) {
    char a[256];
    int rc;
    if ((rc = thnn__check_float(fn, name, in))) return rc;
    if (!padding)
        return thnn__error(TH_ERR_VALUE, "%s: padding must not be NULL", fn);
    if (in->ndim != k + 1 && in->ndim != k + 2)
        return thnn__error(TH_ERR_RUNTIME, "%s: Expected %dD or %dD (batch mode) tensor "
                           "for %s, but got: %s", fn, k + 1, k + 2, name, thnn__shape(in, a));
    /* the batch dim may be 0, the others may not (nothing to pad from) */
    for (int i = in->ndim == k + 2 ? 1 : 0; i < in->ndim; i++)
        if (in->sizes[i] == 0)
            return thnn__error(TH_ERR_RUNTIME, "%s: Expected %dD or %dD (batch mode) "
                               "tensor with possibly 0 batch size and other non-zero "
                               "dimensions for %s, but got: %s", fn, k + 1, k + 2,
                               name, thnn__shape(in, a));
    g->k = k;
    g->planes = 1;
    for (int i = 0; i < in->ndim - k; i++)
        if (thnn__mul_ovf(g->planes, in->sizes[i], &g->planes))
            return thnn__size_overflow(fn, "the number of planes");
    for (int j = 0; j < 3; j++) { g->in[j] = g->out[j] = 1; g->before[j] = 0; }
    for (int j = 0; j < k; j++) {            /* j = 0: last dim */
        const int dim = in->ndim - 1 - j, slot = 2 - j;
        const int64_t n = in->sizes[dim], pb = padding[2 * j], pa = padding[2 * j + 1];
        if (mode == REFLECT && (pb >= n || pa >= n))
            return thnn__error(TH_ERR_RUNTIME, "Argument #4: Padding size should be "
                               "less than the corresponding input dimension, but got: "
                               "padding (%lld, %lld) at dimension %d of input %s",
                               (long long)pb, (long long)pa, dim, thnn__shape(in, a));
        int64_t o;
        if (thnn__add_ovf(n, pb, &o) || thnn__add_ovf(o, pa, &o))
            return thnn__size_overflow(fn, "the padded size");
        if (o < 1)
            return thnn__error(TH_ERR_RUNTIME, "%s: input size %lld at dimension %d of "
                               "input %s is too small for padding (%lld, %lld): the "
                               "calculated output size is %lld", fn, (long long)n, dim,
                               thnn__shape(in, a), (long long)pb, (long long)pa,
                               (long long)o);
        g->in[slot] = n; g->out[slot] = o; g->before[slot] = pb;
    }
    return TH_OK;
}

/* `padded` (output or grad_output) must be `in`'s shape with padded sizes;
 * only the output has to be contiguous (grad_output is made so) */
static int check_padded(const char *fn, const char *name, const th_tensor *padded,
                        const th_tensor *in, const pad_geom *g, int need_contiguous) {
    int64_t s[TH_MAX_DIMS];
    for (int i = 0; i < in->ndim; i++) s[i] = in->sizes[i];
    for (int j = 0; j < g->k; j++) s[in->ndim - 1 - j] = g->out[2 - j];
    if (need_contiguous || !padded)
        return thnn__check_out(fn, name, padded, in->ndim, s, in->dtype);
    int ok = padded->ndim == in->ndim && padded->dtype == in->dtype;
    for (int i = 0; ok && i < in->ndim; i++) ok = padded->sizes[i] == s[i];
    if (!ok) {
        char a[256], b[256];
        th_tensor want = *padded;
        want.ndim = in->ndim;
        for (int i = 0; i < in->ndim; i++) want.sizes[i] = s[i];
        return thnn__error(TH_ERR_RUNTIME, "%s: expected %s of shape %s and scalar "
                           "type %s but got %s (%s)", fn, name, thnn__shape(&want, a),
                           thnn__dtype_name(in->dtype), thnn__shape(padded, b),
                           thnn__dtype_name(padded->dtype));
    }
    return TH_OK;
}

/* source index of output position o along a dim of n inputs */
static inline int64_t src_index(int mode, int64_t o, int64_t n, int64_t before) {
    int64_t i;
    /* a crop beyond int64 (before near INT64_MIN with a huge after) lands
       past the last input: clamp instead of wrapping */
    if (__builtin_sub_overflow(o, before, &i)) i = before < 0 ? INT64_MAX : INT64_MIN;
    if (mode == REPLICATE) return i < 0 ? 0 : i >= n ? n - 1 : i;
    if (i < 0) i = -i;
    if (i >= n) i = 2 * (n - 1) - i;
    return i;
}

/* one call's data, geometry and per-dim source index maps */
typedef struct pad_ctx {
    void *out;      /* output, or grad_input */
    const void *in; /* input, or grad_output */
    const pad_geom *g;
    const int64_t *md, *mh, *mw;
} pad_ctx;

#define DEFINE_PAD(T)                                                          \
    static void pad_fwd_##T(int64_t p0, int64_t p1, void *ctx) {               \
        const pad_ctx *c = ctx;                                                \
        T *y = c->out;                                                         \
        const T *x = c->in;                                                    \
        const pad_geom *g = c->g;                                              \
        const int64_t *md = c->md, *mh = c->mh, *mw = c->mw;                   \
        const int64_t ip = g->in[0] * g->in[1] * g->in[2];                     \
        const int64_t op = g->out[0] * g->out[1] * g->out[2];                  \
        const int64_t shift = g->before[2];                                    \
        const int64_t w0 = shift < 0 ? 0 : shift > g->out[2] ? g->out[2] : shift; \
        int64_t w1 = shift + g->in[2];                                         \
        w1 = w1 < w0 ? w0 : w1 > g->out[2] ? g->out[2] : w1;                   \
        for (int64_t p = p0; p < p1; p++) {                                    \
            const T *xp = x + p * ip;                                          \
            T *yp = y + p * op;                                                \
            for (int64_t d = 0; d < g->out[0]; d++)                            \
                for (int64_t h = 0; h < g->out[1]; h++) {                      \
                    const T *xr = xp + (md[d] * g->in[1] + mh[h]) * g->in[2];  \
                    T *yr = yp + (d * g->out[1] + h) * g->out[2];              \
                    /* the unpadded middle is a plain copy */               \
                    for (int64_t w = 0; w < w0; w++) yr[w] = xr[mw[w]];        \
                    for (int64_t w = w0; w < w1; w++) yr[w] = xr[w - shift];   \
                    for (int64_t w = w1; w < g->out[2]; w++) yr[w] = xr[mw[w]]; \
                }                                                              \
        }                                                                      \
    }                                                                          \
    static void pad_bwd_##T(int64_t p0, int64_t p1, void *ctx) {               \
        const pad_ctx *c = ctx;                                                \
        T *gx = c->out;                                                        \
        const T *gy = c->in;                                                   \
        const pad_geom *g = c->g;                                              \
        const int64_t *md = c->md, *mh = c->mh, *mw = c->mw;                   \
        const int64_t ip = g->in[0] * g->in[1] * g->in[2];                     \
        const int64_t op = g->out[0] * g->out[1] * g->out[2];                  \
        for (int64_t p = p0; p < p1; p++) {                                    \
            T *xp = gx + p * ip;                                               \
            const T *yp = gy + p * op;                                         \
            for (int64_t i = 0; i < ip; i++) xp[i] = 0;                        \
            for (int64_t d = 0; d < g->out[0]; d++)                            \
                for (int64_t h = 0; h < g->out[1]; h++) {                      \
                    T *xr = xp + (md[d] * g->in[1] + mh[h]) * g->in[2];        \
                    const T *yr = yp + (d * g->out[1] + h) * g->out[2];        \
                    for (int64_t w = 0; w < g->out[2]; w++) xr[mw[w]] += yr[w]; \
                }                                                              \
        }                                                                      \
    }
DEFINE_PAD(float)
DEFINE_PAD(double)

/* in: input (forward) or grad_input (backward); padded: output or grad_output */
static int pad(const char *fn, int mode, int k, int backward, th_tensor *in_out,
               th_tensor *padded_out, const th_tensor *in, const th_tensor *padded,
               const int64_t *padding) {
    pad_geom g;
    int rc;
    if ((rc = geometry(fn, backward ? "grad_input" : "input", mode, k, in, padding, &g)))
        return rc;
    if (backward) {
        if ((rc = check_padded(fn, "grad_output", padded, in, &g, 0))) return rc;
        if (!th_is_contiguous(in))
            return thnn__error(TH_ERR_RUNTIME, "%s: grad_input must be contiguous", fn);
    } else if ((rc = check_padded(fn, "output", padded, in, &g, 1))) {
        return rc;
    }
    int64_t *map = malloc((size_t)(g.out[0] + g.out[1] + g.out[2]) * sizeof *map);
    if (!map) return thnn__error(TH_ERR_MEMORY, "%s: out of memory", fn);
    int64_t *md = map, *mh = md + g.out[0], *mw = mh + g.out[1];
    for (int64_t i = 0; i < g.out[0]; i++) md[i] = src_index(mode, i, g.in[0], g.before[0]);
    for (int64_t i = 0; i < g.out[1]; i++) mh[i] = src_index(mode, i, g.in[1], g.before[1]);
    for (int64_t i = 0; i < g.out[2]; i++) mw[i] = src_index(mode, i, g.in[2], g.before[2]);
    th_tensor *src = thnn__contig(backward ? padded : in);
    if (!src) { free(map); return thnn_last_status(); }
    pad_ctx c = {thnn__data(backward ? in_out : padded_out), thnn__data(src), &g, md, mh, mw};
    const int f32 = src->dtype == TH_FLOAT32;
    th_parallel_for(g.planes, thnn__grain(g.out[0] * g.out[1] * g.out[2]),
                    backward ? (f32 ? pad_bwd_float : pad_bwd_double)
                             : (f32 ? pad_fwd_float : pad_fwd_double), &c);
    th_tensor_release(src);
    free(map);
    return TH_OK;
}

THNN_API int thnn_reflection_pad1d_forward(th_tensor *output, const th_tensor *input,
                                           const int64_t *padding) {
    return pad("reflection_pad1d", REFLECT, 1, 0, NULL, output, input, output, padding);
}
THNN_API int thnn_reflection_pad1d_backward_input(th_tensor *grad_input,
                                                  const th_tensor *grad_output,
                                                  const int64_t *padding) {
    return pad("reflection_pad1d_backward_input", REFLECT, 1, 1, grad_input, NULL,
               grad_input, grad_output, padding);
}
THNN_API int thnn_reflection_pad2d_forward(th_tensor *output, const th_tensor *input,
                                           const int64_t *padding) {
    return pad("reflection_pad2d", REFLECT, 2, 0, NULL, output, input, output, padding);
}
THNN_API int thnn_reflection_pad2d_backward_input(th_tensor *grad_input,
                                                  const th_tensor *grad_output,
                                                  const int64_t *padding) {
    return pad("reflection_pad2d_backward_input", REFLECT, 2, 1, grad_input, NULL,
               grad_input, grad_output, padding);
}
THNN_API int thnn_reflection_pad3d_forward(th_tensor *output, const th_tensor *input,
                                           const int64_t *padding) {
    return pad("reflection_pad3d", REFLECT, 3, 0, NULL, output, input, output, padding);
}
THNN_API int thnn_reflection_pad3d_backward_input(th_tensor *grad_input,
                                                  const th_tensor *grad_output,
                                                  const int64_t *padding) {
    return pad("reflection_pad3d_backward_input", REFLECT, 3, 1, grad_input, NULL,
               grad_input, grad_output, padding);
}
THNN_API int thnn_replication_pad1d_forward(th_tensor *output, const th_tensor *input,
                                            const int64_t *padding) {
    return pad("replication_pad1d", REPLICATE, 1, 0, NULL, output, input, output, padding);
}
THNN_API int thnn_replication_pad1d_backward_input(th_tensor *grad_input,
                                                   const th_tensor *grad_output,
                                                   const int64_t *padding) {
    return pad("replication_pad1d_backward_input", REPLICATE, 1, 1, grad_input, NULL,
               grad_input, grad_output, padding);
}
THNN_API int thnn_replication_pad2d_forward(th_tensor *output, const th_tensor *input,
                                            const int64_t *padding) {
    return pad("replication_pad2d", REPLICATE, 2, 0, NULL, output, input, output, padding);
}
THNN_API int thnn_replication_pad2d_backward_input(th_tensor *grad_input,
                                                   const th_tensor *grad_output,
                                                   const int64_t *padding) {
    return pad("replication_pad2d_backward_input", REPLICATE, 2, 1, grad_input, NULL,
               grad_input, grad_output, padding);
}
THNN_API int thnn_replication_pad3d_forward(th_tensor *output, const th_tensor *input,
                                            const int64_t *padding) {
    return pad("replication_pad3d", REPLICATE, 3, 0, NULL, output, input, output, padding);
}
THNN_API int thnn_replication_pad3d_backward_input(th_tensor *grad_input,
                                                   const th_tensor *grad_output,
                                                   const int64_t *padding) {
    return pad("replication_pad3d_backward_input", REPLICATE, 3, 1, grad_input, NULL,
               grad_input, grad_output, padding);
}
