/* Gradient scatter of the index-saving max poolings; planes run on
 * libTH's thread pool (each plane's indices point into its own plane, so
 * no two threads write one element).  Index -1 marks a window that held no input element
 * (only padding, through dilation): it passes no gradient. */
#include "max_pool_grad.h"

typedef struct scatter_ctx {
    void *gin;
    const void *gout;
    const int64_t *ind;
    int64_t in_plane, out_plane;
} scatter_ctx;

#define DEFINE_SCATTER(T)                                                     \
    static void scatter_##T(int64_t p0, int64_t p1, void *ctx) {              \
        const scatter_ctx *c = ctx;                                           \
        T *gin = c->gin;                                                      \
        const T *gout = c->gout;                                              \
        const int64_t *ind = c->ind, in_plane = c->in_plane, out_plane = c->out_plane; \
        for (int64_t p = p0; p < p1; p++)                                     \
            for (int64_t i = 0; i < out_plane; i++) {                         \
                const int64_t k = ind[p * out_plane + i];                     \
                if (k >= 0) gin[p * in_plane + k] += gout[p * out_plane + i]; \
            }                                                                 \
    }
DEFINE_SCATTER(float)
DEFINE_SCATTER(double)

int thnn__max_pool_backward(const char *fn, th_tensor *grad_input,
                            const th_tensor *grad_output,
                            const th_tensor *indices, int spatial) {
    char a[256], b[256], c[256];
    int rc;
    if ((rc = thnn__check_float(fn, "grad_input", grad_input))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, grad_input))) return rc;
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    if ((rc = thnn__check_dtype(fn, "indices", indices, TH_INT64))) return rc;
    if (grad_output->dtype != grad_input->dtype)
        return thnn__error(TH_ERR_TYPE, "%s: grad_output type (%s) and grad_input "
                           "type (%s) should be the same", fn,
                           thnn__dtype_name(grad_output->dtype),
                           thnn__dtype_name(grad_input->dtype));
    const int d = grad_input->ndim, lead = d - spatial;
    int ok = (lead == 1 || lead == 2) && grad_output->ndim == d && indices->ndim == d;
    for (int i = 0; ok && i < d; i++)
        ok = grad_output->sizes[i] == indices->sizes[i] &&
             (i >= lead || grad_output->sizes[i] == grad_input->sizes[i]);
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s and indices %s do "
                           "not match grad_input %s (%dD or %dD, same leading dims)",
                           fn, thnn__shape(grad_output, a), thnn__shape(indices, b),
                           thnn__shape(grad_input, c), spatial + 1, spatial + 2);
    int64_t planes = 1, in_plane = 1, out_plane = 1;
    for (int i = 0; i < d; i++) {
        if (i < lead) planes *= grad_input->sizes[i];
        else {
            in_plane *= grad_input->sizes[i];
            out_plane *= grad_output->sizes[i];
        }
    }
    th_tensor *go = thnn__contig(grad_output), *ind = thnn__contig(indices);
    if (!go || !ind) { rc = thnn_last_status(); goto done; }
    const int64_t *ip = thnn__data(ind), n = planes * out_plane;
    for (int64_t i = 0; i < n; i++)
        if (ip[i] < -1 || ip[i] >= in_plane) {
            rc = thnn__error(TH_ERR_INDEX, "%s: index %lld out of range for an input "
                             "plane of %lld elements", fn, (long long)ip[i],
                             (long long)in_plane);
            goto done;
        }
    if (th_zero(grad_input)) { rc = thnn__from_th(fn); goto done; }
    scatter_ctx sc = {thnn__data(grad_input), thnn__data(go), ip, in_plane, out_plane};
    th_parallel_for(planes, thnn__grain(out_plane),
                    go->dtype == TH_FLOAT32 ? scatter_float : scatter_double, &sc);
done:
    thnn__release(go); thnn__release(ind);
    return rc;
}
