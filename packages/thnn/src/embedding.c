/* embedding: rows of a (num, dim) table gathered by int64 indices of any
 * shape; the backward scatters-adds into grad_weight (padding_idx rows get
 * no gradient). */
#include <string.h>

#include "thnn_internal.h"

static int check_indices(const char *fn, const th_tensor *indices, int64_t num) {
    int rc;
    if ((rc = thnn__check_dtype(fn, "indices", indices, TH_INT64))) {
        if (indices)
            return thnn__error(TH_ERR_RUNTIME, "Expected tensor for argument #1 "
                               "'indices' to have scalar type Long; but got %s "
                               "instead", thnn__dtype_name(indices->dtype));
        return rc;
    }
    th_tensor *ic = thnn__contig(indices);
    if (!ic) return thnn_last_status();
    const int64_t *ip = thnn__data(ic), n = th_numel(ic);
    for (int64_t i = 0; i < n; i++)
        if (ip[i] < 0 || ip[i] >= num) {
            rc = thnn__error(TH_ERR_INDEX, "index %lld is out of bounds for an "
                             "embedding of %lld rows", (long long)ip[i], (long long)num);
            break;
        }
    th_tensor_release(ic);
    return rc;
}

/* output: indices.shape + (dim,) */
/* output row i = weight row indices[i], rows of `row_bytes` */
typedef struct gather_ctx {
    char *out;
    const char *w;
    const int64_t *ip;
    int64_t row_bytes;
} gather_ctx;

static void gather_rows(int64_t i0, int64_t i1, void *ctx) {
    const gather_ctx *c = ctx;
    for (int64_t i = i0; i < i1; i++)
        memcpy(c->out + i * c->row_bytes, c->w + c->ip[i] * c->row_bytes,
               (size_t)c->row_bytes);
}

THNN_API int thnn_embedding_forward(th_tensor *output, const th_tensor *weight,
                                    const th_tensor *indices) {
    static const char fn[] = "embedding";
    char a[256];
    int rc;
    if ((rc = thnn__check_float(fn, "weight", weight))) return rc;
    if (weight->ndim != 2)
        return thnn__error(TH_ERR_RUNTIME, "'weight' must be 2-D, got %s",
                           thnn__shape(weight, a));
    if ((rc = check_indices(fn, indices, weight->sizes[0]))) return rc;
    if (indices->ndim + 1 > TH_MAX_DIMS)
        return thnn__error(TH_ERR_RUNTIME, "%s: too many index dims", fn);
    int64_t os[TH_MAX_DIMS];
    for (int i = 0; i < indices->ndim; i++) os[i] = indices->sizes[i];
    const int64_t D = weight->sizes[1];
    os[indices->ndim] = D;
    if ((rc = thnn__check_out(fn, "output", output, indices->ndim + 1, os, weight->dtype)))
        return rc;
    th_tensor *w = thnn__contig(weight), *ic = thnn__contig(indices);
    if (!w || !ic) { thnn__release(w); thnn__release(ic); return thnn_last_status(); }
    const int64_t n = th_numel(ic), *ip = thnn__data(ic), isz = th_dtype_itemsize(w->dtype);
    char *op = thnn__data(output);
    const char *wp = thnn__data(w);
    gather_ctx c = {op, wp, ip, D * isz};
    th_parallel_for(n, thnn__grain(D), gather_rows, &c);
    th_tensor_release(w); th_tensor_release(ic);
    return TH_OK;
}

#define DEFINE_EMB_BWD(T)                                                      \
    static void emb_bwd_##T(T *gw, const T *gy, const int64_t *ip, int64_t n,  \
                            int64_t D, int64_t padding_idx) {                  \
        for (int64_t i = 0; i < n; i++) {                                      \
            if (ip[i] == padding_idx) continue;                                \
            T *row = gw + ip[i] * D;                                           \
            const T *g = gy + i * D;                                           \
            for (int64_t d = 0; d < D; d++) row[d] += g[d];                    \
        }                                                                      \
    }
DEFINE_EMB_BWD(float)
DEFINE_EMB_BWD(double)

/* grad_weight (num, dim) is overwritten; padding_idx < 0: none */
THNN_API int thnn_embedding_backward_params(th_tensor *grad_weight,
                                            const th_tensor *grad_output,
                                            const th_tensor *indices,
                                            int64_t padding_idx) {
    static const char fn[] = "embedding_backward_params";
    char a[256];
    int rc;
    if ((rc = thnn__check_float(fn, "grad_weight", grad_weight))) return rc;
    if ((rc = thnn__check_like(fn, "grad_weight", grad_weight, grad_weight))) return rc;
    if (grad_weight->ndim != 2)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_weight must be 2-D, got %s", fn,
                           thnn__shape(grad_weight, a));
    if ((rc = check_indices(fn, indices, grad_weight->sizes[0]))) return rc;
    const int64_t D = grad_weight->sizes[1], n = th_numel(indices);
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    if (th_numel(grad_output) != n * D || grad_output->dtype != grad_weight->dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s does not match "
                           "indices and grad_weight", fn, thnn__shape(grad_output, a));
    if (th_zero(grad_weight)) return thnn__from_th(fn);
    th_tensor *gy = thnn__contig(grad_output), *ic = thnn__contig(indices);
    if (!gy || !ic) { thnn__release(gy); thnn__release(ic); return thnn_last_status(); }
    if (gy->dtype == TH_FLOAT32)
        emb_bwd_float(thnn__data(grad_weight), thnn__data(gy), thnn__data(ic), n, D, padding_idx);
    else
        emb_bwd_double(thnn__data(grad_weight), thnn__data(gy), thnn__data(ic), n, D, padding_idx);
    th_tensor_release(gy); th_tensor_release(ic);
    return TH_OK;
}
