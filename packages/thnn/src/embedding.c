/* embedding: rows of a (num, dim) table gathered by int64 indices of any
 * shape; the backward scatters-adds into grad_weight (padding_idx rows get
 * no gradient).
 *
 * embedding_bag: rows of a (num, dim) table gathered by 1-D int64
 * indices and reduced (sum, mean or max) over bags that `offsets` cut the
 * indices into; padding_idx rows take no part.  The forward also writes
 * what the backward needs: the bag of every index (offset2bag), the
 * number of counted indices per bag (bag_size) and, for max, the row that
 * won each (bag, column) (max_indices).  On libTH's thread pool: bags in
 * the forward, column blocks in the backward (so that no two threads add
 * to one row element). */
#include <math.h>
#include <string.h>

#include "thnn_internal.h"

/* ---- embedding ---- */
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

/* ---- embedding_bag ---- */
#define BAG_BLOCK 64 /* columns per range of the backward */

/* one call's tensors and settings (the backward only reads o2b, bsz, mi) */
typedef struct bag_ctx {
    void *out; /* output, grad_weight or grad_per_sample_weights */
    const void *w, *gy, *pw;
    const int64_t *ip, *op;
    int64_t *o2b, *bsz, *mi;
    int64_t n, B, D, padding_idx;
    int mode;
} bag_ctx;

/* unpacks a bag_ctx into the loops' names */
#define BAG_LOCALS(T)                                                          \
    const bag_ctx *c = ctx;                                                    \
    const T *w = c->w, *gy = c->gy, *pw = c->pw;                               \
    const int64_t *ip = c->ip, *op = c->op;                                    \
    int64_t *o2b = c->o2b, *bsz = c->bsz, *mi = c->mi;                         \
    const int64_t n = c->n, B = c->B, D = c->D, padding_idx = c->padding_idx;  \
    const int mode = c->mode;                                                  \
    (void)w; (void)gy; (void)pw; (void)ip; (void)op; (void)o2b; (void)bsz;     \
    (void)mi; (void)n; (void)B; (void)D; (void)padding_idx; (void)mode

/* bag b covers indices [start, end) of its offsets; the last bag runs to
 * the end of indices, as in PyTorch (which reads no end from the extra
 * offset of include_last_offset) */
#define DEFINE_EMBEDDING_BAG(T)                                                \
    static void bag_fwd_##T(int64_t b0, int64_t b1, void *ctx) {               \
        BAG_LOCALS(T);                                                         \
        T *out = c->out;                                                       \
        for (int64_t b = b0; b < b1; b++) {                                    \
            const int64_t start = op[b], end = b + 1 < B ? op[b + 1] : n;      \
            T *orow = out + b * D;                                             \
            int64_t count = 0;                                                 \
            for (int64_t d = 0; d < D; d++) orow[d] = 0;                       \
            if (mi) for (int64_t d = 0; d < D; d++) mi[b * D + d] = -1;        \
            for (int64_t i = start; i < end; i++) {                            \
                o2b[i] = b;                                                    \
                const int64_t row = ip[i];                                     \
                if (row == padding_idx) continue;                              \
                const T *wr = w + row * D;                                     \
                if (mi) {                                                      \
                    for (int64_t d = 0; d < D; d++) {                          \
                        const T v = wr[d], cur = orow[d];                      \
                        /* the first counted index wins ties; a NaN sticks */  \
                        if (count == 0 || v > cur || (isnan(v) && !isnan(cur))) { \
                            orow[d] = v;                                       \
                            mi[b * D + d] = row;                               \
                        }                                                      \
                    }                                                          \
                } else {                                                       \
                    const T sc = pw ? pw[i] : (T)1;                            \
                    for (int64_t d = 0; d < D; d++) orow[d] += sc * wr[d];     \
                }                                                              \
                count++;                                                       \
            }                                                                  \
            bsz[b] = count;                                                    \
            if (mode == THNN_EMBEDDING_BAG_MEAN && count > 0)                  \
                for (int64_t d = 0; d < D; d++) orow[d] /= (T)count;           \
        }                                                                      \
    }                                                                          \
    /* column blocks of BAG_BLOCK: each range owns columns [d0, d1) of every \
     * row, so no two threads add to one element */                           \
    static void bag_bwd_##T(int64_t blk0, int64_t blk1, void *ctx) {          \
        BAG_LOCALS(T);                                                         \
        T *gw = c->out;                                                        \
        for (int64_t blk = blk0; blk < blk1; blk++) {                          \
            const int64_t d0 = blk * BAG_BLOCK;                                \
            const int64_t d1 = d0 + BAG_BLOCK < D ? d0 + BAG_BLOCK : D;        \
            if (mi) {                                                          \
                for (int64_t b = 0; b < B; b++)                                \
                    for (int64_t d = d0; d < d1; d++) {                        \
                        const int64_t row = mi[b * D + d];                     \
                        if (row >= 0 && row != padding_idx)                    \
                            gw[row * D + d] += gy[b * D + d];                  \
                    }                                                          \
                continue;                                                      \
            }                                                                  \
            for (int64_t i = 0; i < n; i++) {                                  \
                const int64_t b = o2b[i], row = ip[i];                         \
                if (b < 0 || row == padding_idx) continue;                     \
                T sc = pw ? pw[i] : (T)1;                                      \
                if (mode == THNN_EMBEDDING_BAG_MEAN) sc = bsz[b] > 0 ? sc / (T)bsz[b] : 0; \
                T *gr = gw + row * D;                                          \
                const T *g = gy + b * D;                                       \
                for (int64_t d = d0; d < d1; d++) gr[d] += sc * g[d];          \
            }                                                                  \
        }                                                                      \
    }
DEFINE_EMBEDDING_BAG(float)
DEFINE_EMBEDDING_BAG(double)

#define DEFINE_PSW_GRAD(T)                                                     \
    static void psw_grad_##T(int64_t i0, int64_t i1, void *ctx) {              \
        BAG_LOCALS(T);                                                         \
        T *gp = c->out;                                                        \
        for (int64_t i = i0; i < i1; i++) {                                    \
            double s = 0;                                                      \
            if (o2b[i] >= 0 && ip[i] != padding_idx) {                         \
                const T *g = gy + o2b[i] * D, *wr = w + ip[i] * D;             \
                _Pragma("omp simd reduction(+:s)")                             \
                for (int64_t d = 0; d < D; d++) s += (double)g[d] * (double)wr[d]; \
            }                                                                  \
            gp[i] = (T)s;                                                      \
        }                                                                      \
    }
DEFINE_PSW_GRAD(float)
DEFINE_PSW_GRAD(double)

static const char *mode_name(int mode) {
    return mode == THNN_EMBEDDING_BAG_SUM ? "sum" : mode == THNN_EMBEDDING_BAG_MEAN ? "mean"
                                                                                  : "max";
}

static int check_long_1d(const char *fn, const char *name, const th_tensor *t) {
    char a[256];
    if (!t) return thnn__error(TH_ERR_VALUE, "%s: %s must not be NULL", fn, name);
    if (t->dtype != TH_INT64)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected %s of scalar type Long but "
                           "found %s", fn, name, thnn__dtype_name(t->dtype));
    if (t->ndim != 1)
        return thnn__error(TH_ERR_VALUE, "%s: %s has to be a 1D Tensor, but got a "
                           "tensor of shape %s", fn, name, thnn__shape(t, a));
    return TH_OK;
}

/* weight (num, dim), indices, per_sample_weights; mode and its options */
static int check_common(const char *fn, const th_tensor *weight_like, const char *wname,
                        const th_tensor *indices, const th_tensor *psw, int mode) {
    char a[256], b[256];
    int rc;
    if ((rc = thnn__check_float(fn, wname, weight_like))) return rc;
    if (weight_like->ndim != 2)
        return thnn__error(TH_ERR_RUNTIME, "%s: %s must be 2-D, got %s", fn, wname,
                           thnn__shape(weight_like, a));
    if (mode < THNN_EMBEDDING_BAG_SUM || mode > THNN_EMBEDDING_BAG_MAX)
        return thnn__error(TH_ERR_VALUE, "%s: %d is not a valid mode (0 sum, 1 mean, "
                           "2 max)", fn, mode);
    if ((rc = check_long_1d(fn, "indices", indices))) return rc;
    if (psw) {
        if (mode != THNN_EMBEDDING_BAG_SUM)
            return thnn__error(TH_ERR_VALUE, "embedding_bag: per_sample_weights is only "
                               "supported for mode='sum' (got mode='%s')", mode_name(mode));
        if (psw->dtype != weight_like->dtype)
            return thnn__error(TH_ERR_TYPE, "embedding_bag: expected per_sample_weights "
                               "of scalar type %s but found %s",
                               thnn__dtype_name(weight_like->dtype),
                               thnn__dtype_name(psw->dtype));
        if (psw->ndim != 1 || psw->sizes[0] != indices->sizes[0])
            return thnn__error(TH_ERR_VALUE, "embedding_bag: expected per_sample_weights "
                               "%s to have the shape of indices %s", thnn__shape(psw, a),
                               thnn__shape(indices, b));
    }
    return TH_OK;
}

static int check_index_range(const int64_t *ip, int64_t n, int64_t num) {
    for (int64_t i = 0; i < n; i++)
        if (ip[i] < 0 || ip[i] >= num)
            return thnn__error(TH_ERR_INDEX, "embedding_bag: index %lld (at position "
                               "%lld of indices) is out of range for a table of %lld "
                               "rows", (long long)ip[i], (long long)i, (long long)num);
    return TH_OK;
}

THNN_API int thnn_embedding_bag_forward(th_tensor *output, th_tensor *offset2bag,
                                        th_tensor *bag_size, th_tensor *max_indices,
                                        const th_tensor *weight, const th_tensor *indices,
                                        const th_tensor *offsets,
                                        const th_tensor *per_sample_weights, int mode,
                                        int include_last_offset, int64_t padding_idx) {
    static const char fn[] = "embedding_bag";
    int rc;
    if ((rc = check_common(fn, weight, "weight", indices, per_sample_weights, mode))) return rc;
    if ((rc = check_long_1d(fn, "offsets", offsets))) return rc;
    const int64_t num = weight->sizes[0], D = weight->sizes[1], n = indices->sizes[0];
    const int64_t nofs = offsets->sizes[0];
    if (include_last_offset && nofs < 1)
        return thnn__error(TH_ERR_VALUE, "embedding_bag: include_last_offset needs at "
                           "least one offset, but offsets is empty");
    const int64_t B = include_last_offset ? nofs - 1 : nofs;
    const int64_t os[2] = {B, D};
    if ((rc = thnn__check_out(fn, "output", output, 2, os, weight->dtype))) return rc;
    if ((rc = thnn__check_out(fn, "offset2bag", offset2bag, 1, &n, TH_INT64))) return rc;
    if ((rc = thnn__check_out(fn, "bag_size", bag_size, 1, &B, TH_INT64))) return rc;
    if (mode == THNN_EMBEDDING_BAG_MAX &&
        (rc = thnn__check_out(fn, "max_indices", max_indices, 2, os, TH_INT64)))
        return rc;
    th_tensor *w = thnn__contig(weight), *ic = thnn__contig(indices);
    th_tensor *oc = thnn__contig(offsets);
    th_tensor *pw = per_sample_weights ? thnn__contig(per_sample_weights) : NULL;
    if (!w || !ic || !oc || (per_sample_weights && !pw)) { rc = thnn_last_status(); goto done; }
    const int64_t *ip = thnn__data(ic), *op = thnn__data(oc);
    if ((rc = check_index_range(ip, n, num))) goto done;
    /* offsets: start at 0, never decrease, never pass the end of indices */
    if (nofs > 0 && op[0] != 0) {
        rc = thnn__error(TH_ERR_VALUE, "embedding_bag: offsets[0] has to be 0, i.e., the "
                         "first sequence in the mini-batch has to start from position 0. "
                         "However, got %lld", (long long)op[0]);
        goto done;
    }
    for (int64_t b = 0; b < nofs; b++) {
        if (op[b] > n) {
            rc = thnn__error(TH_ERR_VALUE, "embedding_bag: offsets[%lld] = %lld is greater "
                             "than the length of indices (%lld)", (long long)b,
                             (long long)op[b], (long long)n);
            goto done;
        }
        if (b && op[b] < op[b - 1]) {
            rc = thnn__error(TH_ERR_VALUE, "embedding_bag: offsets must be non-decreasing, "
                             "but offsets[%lld] = %lld < offsets[%lld] = %lld", (long long)b,
                             (long long)op[b], (long long)(b - 1), (long long)op[b - 1]);
            goto done;
        }
    }
    int64_t *o2b = thnn__data(offset2bag), *bsz = thnn__data(bag_size);
    int64_t *mi = mode == THNN_EMBEDDING_BAG_MAX ? thnn__data(max_indices) : NULL;
    for (int64_t i = 0; i < n; i++) o2b[i] = -1;   /* stays only when there are no bags */
    bag_ctx c = {.out = thnn__data(output), .w = thnn__data(w),
                 .pw = pw ? thnn__data(pw) : NULL, .ip = ip, .op = op, .o2b = o2b,
                 .bsz = bsz, .mi = mi, .n = n, .B = B, .D = D,
                 .padding_idx = padding_idx, .mode = mode};
    /* a bag holds n / B indices on average */
    th_parallel_for(B, thnn__grain(B ? (n / B + 1) * D : 1),
                    w->dtype == TH_FLOAT32 ? bag_fwd_float : bag_fwd_double, &c);
done:
    thnn__release(w); thnn__release(ic); thnn__release(oc); thnn__release(pw);
    return rc;
}

THNN_API int thnn_embedding_bag_backward_params(th_tensor *grad_weight,
                                                const th_tensor *grad_output,
                                                const th_tensor *indices,
                                                const th_tensor *offset2bag,
                                                const th_tensor *bag_size,
                                                const th_tensor *max_indices,
                                                const th_tensor *per_sample_weights,
                                                int mode, int64_t padding_idx) {
    static const char fn[] = "embedding_bag_backward_params";
    char a[256];
    int rc;
    if ((rc = check_common(fn, grad_weight, "grad_weight", indices, per_sample_weights, mode)))
        return rc;
    if (!th_is_contiguous(grad_weight))
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_weight must be contiguous", fn);
    const int64_t num = grad_weight->sizes[0], D = grad_weight->sizes[1];
    const int64_t n = indices->sizes[0];
    if ((rc = check_long_1d(fn, "offset2bag", offset2bag))) return rc;
    if ((rc = check_long_1d(fn, "bag_size", bag_size))) return rc;
    if (offset2bag->sizes[0] != n)
        return thnn__error(TH_ERR_RUNTIME, "%s: offset2bag %s must have the shape of "
                           "indices [%lld]", fn, thnn__shape(offset2bag, a), (long long)n);
    const int64_t B = bag_size->sizes[0];
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    if (grad_output->ndim != 2 || grad_output->sizes[0] != B || grad_output->sizes[1] != D ||
        grad_output->dtype != grad_weight->dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected grad_output of shape [%lld, %lld] "
                           "and scalar type %s but got %s (%s)", fn, (long long)B,
                           (long long)D, thnn__dtype_name(grad_weight->dtype),
                           thnn__shape(grad_output, a),
                           thnn__dtype_name(grad_output->dtype));
    if (mode == THNN_EMBEDDING_BAG_MAX) {
        if (!max_indices)
            return thnn__error(TH_ERR_VALUE, "%s: mode 'max' needs max_indices", fn);
        if (max_indices->dtype != TH_INT64 || max_indices->ndim != 2 ||
            max_indices->sizes[0] != B || max_indices->sizes[1] != D)
            return thnn__error(TH_ERR_RUNTIME, "%s: expected max_indices of shape [%lld, "
                               "%lld] and scalar type Long but got %s (%s)", fn,
                               (long long)B, (long long)D, thnn__shape(max_indices, a),
                               thnn__dtype_name(max_indices->dtype));
    }
    th_tensor *gy = thnn__contig(grad_output), *ic = thnn__contig(indices);
    th_tensor *o2bt = thnn__contig(offset2bag), *bst = thnn__contig(bag_size);
    th_tensor *mit = mode == THNN_EMBEDDING_BAG_MAX ? thnn__contig(max_indices) : NULL;
    th_tensor *pw = per_sample_weights ? thnn__contig(per_sample_weights) : NULL;
    if (!gy || !ic || !o2bt || !bst || (mode == THNN_EMBEDDING_BAG_MAX && !mit) ||
        (per_sample_weights && !pw)) {
        rc = thnn_last_status();
        goto done;
    }
    const int64_t *ip = thnn__data(ic), *o2b = thnn__data(o2bt), *bsz = thnn__data(bst);
    const int64_t *mi = mit ? thnn__data(mit) : NULL;
    /* everything that indexes grad_weight or grad_output is checked first */
    if ((rc = check_index_range(ip, n, num))) goto done;
    for (int64_t i = 0; i < n; i++)
        if (o2b[i] < -1 || o2b[i] >= B) {
            rc = thnn__error(TH_ERR_INDEX, "%s: offset2bag[%lld] = %lld is out of range "
                             "for %lld bags", fn, (long long)i, (long long)o2b[i],
                             (long long)B);
            goto done;
        }
    for (int64_t k = 0; mi && k < B * D; k++)
        if (mi[k] < -1 || mi[k] >= num) {   /* -1 marks an empty bag */
            rc = thnn__error(TH_ERR_INDEX, "%s: max_indices holds row %lld, out of range "
                             "for a table of %lld rows", fn, (long long)mi[k], (long long)num);
            goto done;
        }
    if (th_zero(grad_weight)) { rc = thnn__from_th(fn); goto done; }
    bag_ctx c = {.out = thnn__data(grad_weight), .gy = thnn__data(gy),
                 .pw = pw ? thnn__data(pw) : NULL, .ip = ip, .o2b = (int64_t *)o2b,
                 .bsz = (int64_t *)bsz, .mi = (int64_t *)mi, .n = n, .B = B, .D = D,
                 .padding_idx = padding_idx, .mode = mode};
    /* each column block visits every index (every bag for max) */
    th_parallel_for((D + BAG_BLOCK - 1) / BAG_BLOCK, thnn__grain((mi ? B : n) * BAG_BLOCK),
                    grad_weight->dtype == TH_FLOAT32 ? bag_bwd_float : bag_bwd_double, &c);
done:
    thnn__release(gy); thnn__release(ic); thnn__release(o2bt); thnn__release(bst);
    thnn__release(mit); thnn__release(pw);
    return rc;
}

/* grad of each per-sample weight: <grad_output[bag], weight[row]> (0 for
 * padding rows and indices outside every bag); indices on the pool */
THNN_API int thnn_embedding_bag_backward_per_sample_weights(
    th_tensor *grad_per_sample_weights, const th_tensor *grad_output,
    const th_tensor *weight, const th_tensor *indices, const th_tensor *offset2bag,
    int mode, int64_t padding_idx) {
    static const char fn[] = "embedding_bag_backward_per_sample_weights";
    char a[256];
    int rc;
    if ((rc = check_common(fn, weight, "weight", indices, NULL, mode))) return rc;
    if (mode != THNN_EMBEDDING_BAG_SUM)
        return thnn__error(TH_ERR_VALUE, "embedding_bag_backward: per_sample_weights only "
                           "supported for mode='sum' (got mode='%s')", mode_name(mode));
    const int64_t num = weight->sizes[0], D = weight->sizes[1], n = indices->sizes[0];
    if ((rc = thnn__check_out(fn, "grad_per_sample_weights", grad_per_sample_weights, 1, &n,
                              weight->dtype)))
        return rc;
    if ((rc = check_long_1d(fn, "offset2bag", offset2bag))) return rc;
    if (offset2bag->sizes[0] != n)
        return thnn__error(TH_ERR_RUNTIME, "%s: offset2bag %s must have the shape of "
                           "indices [%lld]", fn, thnn__shape(offset2bag, a), (long long)n);
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    if (grad_output->ndim != 2 || grad_output->sizes[1] != D ||
        grad_output->dtype != weight->dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected grad_output of shape [bags, %lld] "
                           "and scalar type %s but got %s (%s)", fn, (long long)D,
                           thnn__dtype_name(weight->dtype), thnn__shape(grad_output, a),
                           thnn__dtype_name(grad_output->dtype));
    const int64_t B = grad_output->sizes[0];
    th_tensor *gy = thnn__contig(grad_output), *w = thnn__contig(weight);
    th_tensor *ic = thnn__contig(indices), *o2bt = thnn__contig(offset2bag);
    if (!gy || !w || !ic || !o2bt) { rc = thnn_last_status(); goto done; }
    const int64_t *ip = thnn__data(ic), *o2b = thnn__data(o2bt);
    if ((rc = check_index_range(ip, n, num))) goto done;
    for (int64_t i = 0; i < n; i++)
        if (o2b[i] < -1 || o2b[i] >= B) {
            rc = thnn__error(TH_ERR_INDEX, "%s: offset2bag[%lld] = %lld is out of range "
                             "for %lld bags", fn, (long long)i, (long long)o2b[i],
                             (long long)B);
            goto done;
        }
    bag_ctx c = {.out = thnn__data(grad_per_sample_weights), .gy = thnn__data(gy),
                 .w = thnn__data(w), .ip = ip, .o2b = (int64_t *)o2b, .n = n, .D = D,
                 .padding_idx = padding_idx};
    th_parallel_for(n, thnn__grain(D),
                    w->dtype == TH_FLOAT32 ? psw_grad_float : psw_grad_double, &c);
done:
    thnn__release(gy); thnn__release(w); thnn__release(ic); thnn__release(o2bt);
    return rc;
}
