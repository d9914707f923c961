/* Shape ops that copy: cat, flip, roll, repeat, tril/triu.  Most are built
 * from views of the result (narrow, as-strided) filled with th_copy, which
 * already handles every dtype, layout and thread split. */
#include "th_internal.h"

/* Copies src into the slice [start, start + len) of dst along dim. */
static int copy_into_slice(th_tensor *dst, int dim, int64_t start, int64_t len,
                           const th_tensor *src) {
    th_tensor *v = th_narrow(dst, dim, start, len);
    if (!v) return th_last_status();
    int rc = th_copy(v, src);
    th_tensor_release(v);
    return rc;
}

/* ---- cat ------------------------------------------------------------ */
/* PyTorch still skips 1-d empty tensors, whatever the others' shape. */
static int legacy_empty(const th_tensor *t) {
    return t->ndim == 1 && t->sizes[0] == 0;
}

th_tensor *th_cat(int n, th_tensor *const *tensors, int dim) {
    if (n <= 0 || !tensors)
        return th__error_null(TH_ERR_VALUE, "torch.cat(): expected a "
                              "non-empty list of Tensors");
    int dtype = tensors[0]->dtype, ref = -1;
    for (int i = 0; i < n; i++) {
        const th_tensor *t = tensors[i];
        if (t->ndim == 0)
            return th__error_null(TH_ERR_RUNTIME, "zero-dimensional tensor "
                                  "(at position %d) cannot be concatenated",
                                  i);
        dtype = th_promote_types(dtype, t->dtype);
        if (ref < 0 && !legacy_empty(t)) ref = i;
    }
    if (ref < 0) { /* only legacy empties */
        int64_t zero = 0;
        return th_empty(1, &zero, dtype);
    }
    const th_tensor *r0 = tensors[ref];
    int d = th__wrap_dim(dim, r0->ndim);
    if (d < 0) return NULL;
    int64_t sizes[TH_MAX_DIMS];
    memcpy(sizes, r0->sizes, sizeof sizes);
    sizes[d] = 0;
    for (int i = 0; i < n; i++) {
        const th_tensor *t = tensors[i];
        if (legacy_empty(t)) continue;
        if (t->ndim != r0->ndim)
            return th__error_null(TH_ERR_RUNTIME, "Tensors must have same "
                                  "number of dimensions: got %d and %d",
                                  r0->ndim, t->ndim);
        for (int k = 0; k < t->ndim; k++)
            if (k != d && t->sizes[k] != r0->sizes[k])
                return th__error_null(TH_ERR_RUNTIME,
                                      "Sizes of tensors must match except in "
                                      "dimension %d. Expected size %lld but "
                                      "got size %lld for tensor number %d in "
                                      "the list.", d, (long long)r0->sizes[k],
                                      (long long)t->sizes[k], i);
        if (th__add_ovf(sizes[d], t->sizes[d], &sizes[d]))
            return th__error_null(TH_ERR_RUNTIME, "torch.cat(): the sizes of "
                                  "dimension %d add up to more than int64 "
                                  "(at tensor number %d)", d, i);
    }
    th_tensor *r = th_empty(r0->ndim, sizes, dtype);
    if (!r) return NULL;
    int64_t off = 0;
    for (int i = 0; i < n; i++) {
        const th_tensor *t = tensors[i];
        if (legacy_empty(t) || t->sizes[d] == 0) continue;
        if (copy_into_slice(r, d, off, t->sizes[d], t) != TH_OK) {
            th_tensor_release(r);
            return NULL;
        }
        off += t->sizes[d];
    }
    return r;
}

/* ---- flip / roll ---------------------------------------------------- */
/* Row-wise flip of a contiguous tensor: output row r reads the input row
 * with the flipped dims mirrored, reversed when the last dim flips. */
typedef struct {
    const char *src;
    char *dst;
    int nd; /* dims before the last */
    int64_t sizes[TH_MAX_DIMS], rstride[TH_MAX_DIMS];
    int flip[TH_MAX_DIMS];
    int64_t len, item;
    int rev;
} flip_ctx;

#define REVERSE_ROW(T)                                                        \
    do {                                                                      \
        T *o = (T *)d;                                                        \
        const T *x = (const T *)s + c->len - 1;                               \
        for (int64_t j = 0; j < c->len; j++) o[j] = x[-j];                    \
    } while (0)

static void flip_range(int64_t b, int64_t e, void *vctx) {
    const flip_ctx *c = vctx;
    int64_t bytes = c->len * c->item;
    for (int64_t r = b; r < e; r++) {
        int64_t rem = r, srow = 0;
        for (int d = c->nd - 1; d >= 0; d--) {
            int64_t i = rem % c->sizes[d];
            rem /= c->sizes[d];
            srow += (c->flip[d] ? c->sizes[d] - 1 - i : i) * c->rstride[d];
        }
        const char *s = c->src + srow * bytes;
        char *d = c->dst + r * bytes;
        if (!c->rev) {
            memcpy(d, s, (size_t)bytes);
            continue;
        }
        switch (c->item) {
        case 1: REVERSE_ROW(uint8_t); break;
        case 2: REVERSE_ROW(uint16_t); break;
        case 4: REVERSE_ROW(uint32_t); break;
        case 16: REVERSE_ROW(th_u128); break;
        default: REVERSE_ROW(uint64_t); break;
        }
    }
}

th_tensor *th_flip(const th_tensor *a, int ndims, const int *dims) {
    int seen[TH_MAX_DIMS] = {0};
    for (int i = 0; i < ndims; i++) {
        int d = th__wrap_dim(dims[i], a->ndim);
        if (d < 0) return NULL;
        if (seen[d]++)
            return th__error_null(TH_ERR_RUNTIME, "dim %d appears multiple "
                                  "times in the list of dims", d);
    }
    if (a->ndim == 0 || th_numel(a) == 0) return th_clone(a);
    th_tensor *c = th_contiguous(a);
    th_tensor *r = c ? th__empty_like(a, a->dtype) : NULL;
    if (r) {
        flip_ctx f;
        memset(&f, 0, sizeof f);
        for (int i = 0; i < ndims; i++)
            f.flip[dims[i] < 0 ? dims[i] + a->ndim : dims[i]] = 1;
        f.src = th__ptr(c);
        f.dst = th__ptr(r);
        f.nd = a->ndim - 1;
        f.len = a->sizes[a->ndim - 1];
        f.item = th_dtype_itemsize(a->dtype);
        f.rev = f.flip[a->ndim - 1];
        int64_t rows = 1;
        for (int d = f.nd - 1; d >= 0; d--) {
            f.sizes[d] = a->sizes[d];
            f.rstride[d] = rows;
            rows *= a->sizes[d];
        }
        th_parallel_for(rows, TH_MAX(1, TH_GRAIN / f.len), flip_range, &f);
    }
    th_tensor_release(c);
    return r;
}

/* A fresh copy of t rolled by `shift` along dim (already wrapped). */
static th_tensor *roll_dim(const th_tensor *t, int dim, int64_t shift) {
    th_tensor *r = th__empty_like(t, t->dtype);
    if (!r) return NULL;
    int64_t size = t->ndim ? t->sizes[dim] : 1;
    int rc;
    if (t->ndim == 0 || size == 0 || th_numel(t) == 0) {
        rc = th_copy(r, t);
    } else {
        int64_t s = ((shift % size) + size) % size;
        if (s == 0) {
            rc = th_copy(r, t);
        } else {
            th_tensor *head = th_narrow(t, dim, 0, size - s);
            th_tensor *tail = th_narrow(t, dim, size - s, s);
            rc = head && tail ? copy_into_slice(r, dim, s, size - s, head)
                              : th_last_status();
            if (rc == TH_OK) rc = copy_into_slice(r, dim, 0, s, tail);
            th_tensor_release(head);
            th_tensor_release(tail);
        }
    }
    if (rc != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    return r;
}

th_tensor *th_roll(const th_tensor *a, int nshifts, const int64_t *shifts,
                   const int *dims) {
    if (nshifts <= 0 || !shifts)
        return th__error_null(TH_ERR_RUNTIME, "`shifts` required");
    if (!dims) { /* roll the flattened tensor, keep the shape */
        if (nshifts != 1)
            return th__error_null(TH_ERR_RUNTIME,
                                  "shifts and dimensions must align. "
                                  "shifts: %d, dims:0", nshifts);
        th_tensor *c = th_contiguous(a);
        int64_t n = th_numel(a);
        th_tensor *flat = c ? th_view(c, 1, &n) : NULL;
        th_tensor *rolled = flat ? roll_dim(flat, 0, shifts[0]) : NULL;
        th_tensor *r = rolled ? th_view(rolled, a->ndim, a->sizes) : NULL;
        th_tensor_release(c);
        th_tensor_release(flat);
        th_tensor_release(rolled);
        return r;
    }
    int wrapped[TH_MAX_DIMS];
    if (nshifts > TH_MAX_DIMS)
        return th__error_null(TH_ERR_VALUE, "roll: too many dims (%d)", nshifts);
    for (int k = 0; k < nshifts; k++)
        if ((wrapped[k] = th__wrap_dim(dims[k], a->ndim)) < 0) return NULL;
    th_tensor *cur = (th_tensor *)a;
    th_tensor_retain(cur);
    for (int k = 0; k < nshifts && cur; k++) {
        th_tensor *next = roll_dim(cur, wrapped[k], shifts[k]);
        th_tensor_release(cur);
        cur = next;
    }
    return cur;
}

/* ---- repeat --------------------------------------------------------- */
/* The general case: copy a once, then double the filled block along each
 * dim until it covers the result (each element is written once). */
static int repeat_by_doubling(th_tensor *r, const th_tensor *x,
                              const int64_t *xs) {
    int nd = r->ndim;
    int64_t filled[TH_MAX_DIMS];
    memcpy(filled, xs, sizeof(int64_t) * (size_t)nd);
    th_tensor *block = th__wrap(r->storage, 0, nd, xs, r->strides, r->dtype);
    int rc = block ? th_copy(block, x) : th_last_status();
    th_tensor_release(block);
    for (int d = 0; d < nd && rc == TH_OK; d++) {
        while (filled[d] < r->sizes[d] && rc == TH_OK) {
            int64_t cnt = TH_MIN(filled[d], r->sizes[d] - filled[d]);
            int64_t sz[TH_MAX_DIMS];
            memcpy(sz, filled, sizeof sz);
            sz[d] = cnt;
            th_tensor *src = th__wrap(r->storage, 0, nd, sz, r->strides,
                                      r->dtype);
            th_tensor *dst = th__wrap(r->storage, filled[d] * r->strides[d], nd,
                                      sz, r->strides, r->dtype);
            rc = src && dst ? th_copy(dst, src) : th_last_status();
            th_tensor_release(src);
            th_tensor_release(dst);
            filled[d] += cnt;
        }
    }
    return rc;
}

th_tensor *th_repeat(const th_tensor *a, int nrep, const int64_t *repeats) {
    if (nrep < a->ndim)
        return th__error_null(TH_ERR_RUNTIME,
                              "Number of dimensions of repeat dims can not be "
                              "smaller than number of dimensions of tensor");
    if (nrep > TH_MAX_DIMS)
        return th__error_null(TH_ERR_VALUE, "repeat: %d dims, more than the "
                              "%d supported", nrep, TH_MAX_DIMS);
    /* a viewed with leading size-1 dims, and the result shape */
    int lead = nrep - a->ndim;
    int64_t xs[TH_MAX_DIMS], xst[TH_MAX_DIMS], out[TH_MAX_DIMS];
    for (int i = 0; i < nrep; i++) {
        if (repeats[i] < 0) {
            char b1[256];
            return th__error_null(TH_ERR_RUNTIME,
                                  "Trying to create tensor with negative "
                                  "dimension %lld: %s", (long long)repeats[i],
                                  th__shape_str(nrep, repeats, b1));
        }
        xs[i] = i < lead ? 1 : a->sizes[i - lead];
        xst[i] = i < lead ? 0 : a->strides[i - lead];
        if (th__mul_ovf(xs[i], repeats[i], &out[i])) {
            char b1[256], b2[256];
            return th__error_null(TH_ERR_RUNTIME,
                                  "repeat: sizes %s repeated %s overflow "
                                  "int64 at dimension %d",
                                  th__shape_str(a->ndim, a->sizes, b1),
                                  th__shape_str(nrep, repeats, b2), i);
        }
    }
    th_tensor *r = th_empty(nrep, out, a->dtype);
    if (!r || th_numel(r) == 0) return r;
    th_tensor *x = th__wrap(a->storage, a->offset, nrep, xs, xst, a->dtype);
    if (!x) {
        th_tensor_release(r);
        return NULL;
    }
    /* Split each dim that is both repeated and longer than 1 into
     * (repeat, size): a broadcast copy then fills r in one pass. */
    int k = 0;
    for (int i = 0; i < nrep; i++) k += 1 + (repeats[i] != 1 && xs[i] != 1);
    int rc;
    if (k <= TH_MAX_DIMS) {
        int64_t sz[TH_MAX_DIMS], dst_st[TH_MAX_DIMS], src_st[TH_MAX_DIMS];
        int j = 0;
        for (int i = 0; i < nrep; i++) {
            if (repeats[i] != 1 && xs[i] != 1) {
                sz[j] = repeats[i];
                dst_st[j] = xs[i] * r->strides[i];
                src_st[j++] = 0;
                sz[j] = xs[i];
                dst_st[j] = r->strides[i];
                src_st[j++] = xst[i];
            } else {
                sz[j] = out[i];
                dst_st[j] = r->strides[i];
                src_st[j++] = xs[i] == 1 ? 0 : xst[i];
            }
        }
        th_tensor *dv = th__wrap(r->storage, 0, k, sz, dst_st, r->dtype);
        th_tensor *sv = th__wrap(a->storage, a->offset, k, sz, src_st, a->dtype);
        rc = dv && sv ? th_copy(dv, sv) : th_last_status();
        th_tensor_release(dv);
        th_tensor_release(sv);
    } else {
        rc = repeat_by_doubling(r, x, xs);
    }
    th_tensor_release(x);
    if (rc != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    return r;
}

/* ---- tril / triu ---------------------------------------------------- */
typedef struct {
    char *p;
    int64_t rows, cols, item, k;
    int upper;
} tri_ctx;

/* Zeroes the discarded part of each matrix row (all-zero bytes are 0 in
 * every dtype, float16 and bool included). */
static void tri_range(int64_t b, int64_t e, void *vctx) {
    const tri_ctx *c = vctx;
    for (int64_t r = b; r < e; r++) {
        int64_t i = r % c->rows, lo, hi;
        if (c->upper) { /* keep j >= i + k */
            lo = 0;
            hi = TH_MAX(0, TH_MIN(c->cols, i + c->k));
        } else { /* keep j <= i + k */
            lo = TH_MIN(c->cols, TH_MAX(0, i + c->k + 1));
            hi = c->cols;
        }
        if (hi > lo)
            memset(c->p + (r * c->cols + lo) * c->item, 0,
                   (size_t)((hi - lo) * c->item));
    }
}

static th_tensor *tri(const th_tensor *a, int64_t k, int upper) {
    if (a->ndim < 2)
        return th__error_null(TH_ERR_RUNTIME, "%s: input tensor must have at "
                              "least 2 dimensions", upper ? "triu" : "tril");
    th_tensor *r = th__empty_like(a, a->dtype);
    if (!r) return NULL;
    if (th_copy(r, a) != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    int64_t rows = a->sizes[a->ndim - 2], cols = a->sizes[a->ndim - 1];
    int64_t nrows = rows > 0 && cols > 0 ? th_numel(r) / cols : 0;
    /* clamp so that i + k cannot overflow */
    k = TH_MAX(TH_MIN(k, cols + 1), -rows - 1);
    tri_ctx c = {th__ptr(r), rows, cols, th_dtype_itemsize(a->dtype), k, upper};
    if (nrows > 0)
        th_parallel_for(nrows, TH_MAX(1, TH_GRAIN / cols), tri_range, &c);
    return r;
}

th_tensor *th_tril(const th_tensor *a, int64_t k) { return tri(a, k, 0); }
th_tensor *th_triu(const th_tensor *a, int64_t k) { return tri(a, k, 1); }
