/* adaptive_avg_pool2d and adaptive_max_pool2d (with indices): output cell
 * (i, j) covers input rows [floor(i*H/OH), ceil((i+1)*H/OH)) and the
 * columns alike, as in PyTorch.  The max is the first maximal element
 * (row-major), a NaN wins.  Planes run on libTH's thread pool. */
#include <math.h>

#include "max_pool_grad.h"

typedef struct amp_ctx {
    void *out;
    int64_t *ind;
    const void *x;
    int64_t H, W, OH, OW;
} amp_ctx;

#define DEFINE_ADAPTIVE_MAX(T)                                                 \
    static void adaptive_max_##T(int64_t p0, int64_t p1, void *ctx) {          \
        const amp_ctx *c = ctx;                                                \
        T *out = c->out;                                                       \
        int64_t *ind = c->ind;                                                 \
        const T *x = c->x;                                                     \
        const int64_t H = c->H, W = c->W, OH = c->OH, OW = c->OW;              \
        for (int64_t p = p0; p < p1; p++) {                                    \
            const T *xp = x + p * H * W;                                       \
            for (int64_t oh = 0; oh < OH; oh++) {                              \
                const int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH; \
                for (int64_t ow = 0; ow < OW; ow++) {                          \
                    const int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW; \
                    T best = xp[h0 * W + w0];                                  \
                    int64_t bi = h0 * W + w0;                                  \
                    for (int64_t ih = h0; ih < h1 && !isnan(best); ih++)       \
                        for (int64_t iw = w0; iw < w1; iw++) {                 \
                            const T v = xp[ih * W + iw];                       \
                            if (v > best || isnan(v)) {                        \
                                best = v;                                      \
                                bi = ih * W + iw;                              \
                                if (isnan(v)) break;                           \
                            }                                                  \
                        }                                                      \
                    out[(p * OH + oh) * OW + ow] = best;                       \
                    ind[(p * OH + oh) * OW + ow] = bi;                         \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }
DEFINE_ADAPTIVE_MAX(float)
DEFINE_ADAPTIVE_MAX(double)

THNN_API int thnn_adaptive_max_pool2d_forward(th_tensor *output,
                                              th_tensor *indices,
                                              const th_tensor *input) {
    static const char fn[] = "adaptive_max_pool2d";
    char a[256], b[256];
    int rc;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    const int d = input->ndim;
    if (d != 3 && d != 4)
        return thnn__error(TH_ERR_RUNTIME, "%s: Expected 3D or 4D tensor, but got %s",
                           fn, thnn__shape(input, a));
    for (int i = d - 3; i < d; i++)
        if (input->sizes[i] == 0)
            return thnn__error(TH_ERR_RUNTIME, "%s: Expected input to have non-zero "
                               "size for non-batch dimensions, but input has sizes %s "
                               "with dimension %d being empty", fn,
                               thnn__shape(input, a), i);
    if ((rc = thnn__check_float(fn, "output", output))) return rc;
    int ok = output->ndim == d && output->sizes[d - 2] > 0 && output->sizes[d - 1] > 0;
    for (int i = 0; ok && i < d - 2; i++) ok = output->sizes[i] == input->sizes[i];
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: output %s does not fit input %s (same "
                           "leading dims, positive output size)", fn,
                           thnn__shape(output, a), thnn__shape(input, b));
    if ((rc = thnn__check_out(fn, "output", output, d, output->sizes, input->dtype)))
        return rc;
    if ((rc = thnn__check_out(fn, "indices", indices, d, output->sizes, TH_INT64)))
        return rc;
    const int64_t planes = d == 4 ? input->sizes[0] * input->sizes[1] : input->sizes[0];
    const int64_t H = input->sizes[d - 2], W = input->sizes[d - 1];
    const int64_t OH = output->sizes[d - 2], OW = output->sizes[d - 1];
    th_tensor *x = thnn__contig(input);
    if (!x) return thnn_last_status();
    amp_ctx c = {thnn__data(output), thnn__data(indices), thnn__data(x), H, W, OH, OW};
    th_parallel_for(planes, thnn__grain(H * W),
                    x->dtype == TH_FLOAT32 ? adaptive_max_float : adaptive_max_double, &c);
    thnn__release(x);
    return TH_OK;
}

THNN_API int thnn_adaptive_max_pool2d_backward_input(th_tensor *grad_input,
                                                     const th_tensor *grad_output,
                                                     const th_tensor *indices) {
    return thnn__max_pool_backward("adaptive_max_pool2d_backward_input", grad_input,
                                   grad_output, indices, 2);
}

/* ---- adaptive_avg_pool2d: output cell i covers input rows
 * [floor(i*H/OH), ceil((i+1)*H/OH)) as in PyTorch ----------------------- */
/* one call's data and geometry, for the per-plane range functions */
typedef struct aap_ctx {
    void *out; /* output, or grad_output in the backward */
    void *x;   /* input, or grad_input (written) in the backward */
    int64_t H, W, OH, OW;
    int bwd;
} aap_ctx;

#define DEFINE_ADAPTIVE(T)                                                     \
    static void adaptive_##T(int64_t p0, int64_t p1, void *ctx) {              \
        const aap_ctx *c = ctx;                                                \
        T *out = c->out, *x = c->x;                                            \
        const int64_t H = c->H, W = c->W, OH = c->OH, OW = c->OW;              \
        const int bwd = c->bwd;                                                \
        for (int64_t p = p0; p < p1; p++) {                                    \
            T *xp = x + p * H * W;                                             \
            for (int64_t oh = 0; oh < OH; oh++) {                              \
                const int64_t h0 = oh * H / OH, h1 = ((oh + 1) * H + OH - 1) / OH; \
                for (int64_t ow = 0; ow < OW; ow++) {                          \
                    const int64_t w0 = ow * W / OW, w1 = ((ow + 1) * W + OW - 1) / OW; \
                    const T n = (T)((h1 - h0) * (w1 - w0));                    \
                    T *o = out + (p * OH + oh) * OW + ow;                       \
                    if (bwd) {                                                 \
                        const T v = *o / n;                                    \
                        for (int64_t ih = h0; ih < h1; ih++)                   \
                            for (int64_t iw = w0; iw < w1; iw++)               \
                                xp[ih * W + iw] += v;                          \
                    } else {                                                   \
                        T s = 0;                                               \
                        for (int64_t ih = h0; ih < h1; ih++)                   \
                            for (int64_t iw = w0; iw < w1; iw++)               \
                                s += xp[ih * W + iw];                          \
                        *o = s / n;                                            \
                    }                                                          \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }
DEFINE_ADAPTIVE(float)
DEFINE_ADAPTIVE(double)

/* the planes on libTH's thread pool, each of H * W work */
static void aap_run(aap_ctx *c, int64_t planes, int dtype) {
    th_parallel_for(planes, thnn__grain(c->H * c->W),
                    dtype == TH_FLOAT32 ? adaptive_float : adaptive_double, c);
}

static int adaptive_check(const char *fn, const th_tensor *input, int64_t *planes) {
    char a[256];
    int rc = thnn__check_float(fn, "input", input);
    if (rc) return rc;
    if (input->ndim != 3 && input->ndim != 4)
        return thnn__error(TH_ERR_RUNTIME, "%s: Expected 3D or 4D tensor, but got %s",
                           fn, thnn__shape(input, a));
    for (int i = 1; i < input->ndim; i++)
        if (input->sizes[i] == 0)
            return thnn__error(TH_ERR_RUNTIME, "%s: Expected input to have non-zero "
                               "size for non-batch dimensions, but input has sizes %s "
                               "with dimension %d being empty", fn, thnn__shape(input, a), i);
    *planes = input->ndim == 4 ? input->sizes[0] * input->sizes[1] : input->sizes[0];
    return TH_OK;
}

THNN_API int thnn_adaptive_avg_pool2d_forward(th_tensor *output,
                                              const th_tensor *input) {
    static const char fn[] = "adaptive_avg_pool2d";
    int64_t planes;
    int rc;
    if ((rc = adaptive_check(fn, input, &planes))) return rc;
    const int d = input->ndim;
    if ((rc = thnn__check_float(fn, "output", output))) return rc;
    int ok = output->ndim == d && output->sizes[d - 2] > 0 && output->sizes[d - 1] > 0;
    for (int i = 0; ok && i < d - 2; i++) ok = output->sizes[i] == input->sizes[i];
    if (!ok) {
        char a[256], b[256];
        return thnn__error(TH_ERR_RUNTIME, "%s: output %s does not fit input %s (same "
                           "leading dims, positive output size)", fn,
                           thnn__shape(output, a), thnn__shape(input, b));
    }
    if ((rc = thnn__check_like(fn, "output", output, output))) return rc;
    if (output->dtype != input->dtype)
        return thnn__error(TH_ERR_TYPE, "%s: output dtype differs from input", fn);
    th_tensor *x = thnn__contig(input);
    if (!x) return thnn_last_status();
    aap_ctx c = {.out = thnn__data(output), .x = thnn__data(x), .H = x->sizes[d - 2],
                 .W = x->sizes[d - 1], .OH = output->sizes[d - 2], .OW = output->sizes[d - 1]};
    aap_run(&c, planes, x->dtype);
    th_tensor_release(x);
    return TH_OK;
}

THNN_API int thnn_adaptive_avg_pool2d_backward_input(th_tensor *grad_input,
                                                     const th_tensor *grad_output) {
    static const char fn[] = "adaptive_avg_pool2d_backward_input";
    int64_t planes;
    int rc;
    if ((rc = adaptive_check(fn, grad_input, &planes))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, grad_input))) return rc;
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    const int d = grad_input->ndim;
    int ok = grad_output->ndim == d && grad_output->dtype == grad_input->dtype;
    for (int i = 0; ok && i < d - 2; i++) ok = grad_output->sizes[i] == grad_input->sizes[i];
    if (!ok) {
        char a[256], b[256];
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s does not fit grad_input %s",
                           fn, thnn__shape(grad_output, a), thnn__shape(grad_input, b));
    }
    if (th_zero(grad_input)) return thnn__from_th(fn);
    th_tensor *go = th_clone(grad_output);
    if (!go) return thnn__from_th(fn);
    aap_ctx c = {.out = thnn__data(go), .x = thnn__data(grad_input),
                 .H = grad_input->sizes[d - 2], .W = grad_input->sizes[d - 1],
                 .OH = go->sizes[d - 2], .OW = go->sizes[d - 1], .bwd = 1};
    aap_run(&c, planes, go->dtype);
    th_tensor_release(go);
    return TH_OK;
}
