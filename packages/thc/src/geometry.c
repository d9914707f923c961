/* Collapsing the iteration geometry of element-wise operations. */
#include "geometry.h"

void thc__geom_init(thc__geom *g, int ndim, const int64_t *sizes, int nops,
                    const thc_tensor *const *ops) {
    int64_t st[THC__MAX_OPS][THC_MAX_DIMS];
    g->nops = nops;
    g->numel = 1;
    for (int d = 0; d < ndim; d++) g->numel *= sizes[d];
    for (int k = 0; k < nops; k++) {
        const thc_tensor *t = ops[k];
        int lead = ndim - t->ndim;
        g->offsets[k] = t->offset;
        for (int d = 0; d < ndim; d++) {
            int j = d - lead;
            st[k][d] = (j < 0 || t->sizes[j] != sizes[d]) ? 0 : t->strides[j];
        }
    }
    /* drop size-1 dims, then merge a dim into the next-outer one when every
     * operand steps over the inner dim exactly as far as one outer step */
    int n = 0;
    for (int d = 0; d < ndim && g->numel > 1; d++) {
        if (sizes[d] == 1) continue;
        int merge = n > 0;
        for (int k = 0; merge && k < nops; k++)
            merge = st[k][d] * sizes[d] == g->strides[k][n - 1];
        if (merge) {
            g->sizes[n - 1] *= sizes[d];
            for (int k = 0; k < nops; k++) g->strides[k][n - 1] = st[k][d];
        } else {
            g->sizes[n] = sizes[d];
            for (int k = 0; k < nops; k++) g->strides[k][n] = st[k][d];
            n++;
        }
    }
    g->ndim = n;
    g->unit = n == 1;
    for (int k = 0; g->unit && k < nops; k++) g->unit = g->strides[k][0] == 1;
    for (int k = 0; k < nops; k++)
        for (int d = n; d < THC_MAX_DIMS; d++) g->strides[k][d] = 0;
    for (int d = n; d < THC_MAX_DIMS; d++) g->sizes[d] = 1;
}
