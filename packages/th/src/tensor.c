/* Tensor lifetime, metadata, creation and views. */
#include "th_internal.h"

/* A tensor's element count is checked when it is made, but a product of
 * some of its sizes can still exceed int64 when another size is 0 (e.g.
 * the dims after the first of a [0, 2**40, 2**40] tensor): wrap, never
 * undefined; such a tensor has no element to address. */
int64_t th__prod(int n, const int64_t *v) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p = th__wrap_mul(p, v[i]);
    return p;
}
TH_EXPORT_AS(th_prod, th__prod);

void th__contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        /* wraps only when another size is 0 (no element, strides unused) */
        s = th__wrap_mul(s, sizes[i] > 1 ? sizes[i] : 1);
    }
}
TH_EXPORT_AS(th_contiguous_strides, th__contiguous_strides);

th_tensor *th__wrap(th_storage *s, int64_t offset, int ndim,
                    const int64_t *sizes, const int64_t *strides, int dtype) {
    th_tensor *t = malloc(sizeof *t);
    if (!t) return th__error_null(TH_ERR_MEMORY, "not enough memory for a tensor header");
    t->storage = s;
    th_storage_retain(s);
    t->offset = offset;
    t->ndim = ndim;
    t->dtype = dtype;
    t->flags = 0;
    t->refcount = 1;
    for (int i = 0; i < ndim; i++) {
        t->sizes[i] = sizes[i];
        t->strides[i] = strides[i];
    }
    return t;
}

void th__meta_of(const th_tensor *t, th_meta *m) {
    m->offset = t->offset;
    m->ndim = t->ndim;
    m->dtype = t->dtype;
    m->flags = t->flags;
    m->storage_nbytes = t->storage->nbytes;
    for (int i = 0; i < t->ndim; i++) {
        m->sizes[i] = t->sizes[i];
        m->strides[i] = t->strides[i];
    }
}

th_tensor *th__wrap_meta(const th_tensor *t, const th_meta *m) {
    return th__wrap(t->storage, m->offset, m->ndim, m->sizes, m->strides,
                    m->dtype);
}

/* A tensor over a new storage of m's size. */
static th_tensor *new_tensor(const th_meta *m) {
    th_storage *s = th_storage_new(m->storage_nbytes);
    if (!s) return NULL;
    th_tensor *t = th__wrap(s, 0, m->ndim, m->sizes, m->strides, m->dtype);
    th_storage_release(s);
    return t;
}

th_tensor *th_empty(int ndim, const int64_t *sizes, int dtype) {
    th_meta m;
    return th_meta_new(&m, ndim, sizes, NULL, dtype) ? NULL : new_tensor(&m);
}

th_tensor *th_empty_strided(int ndim, const int64_t *sizes,
                            const int64_t *strides, int dtype) {
    th_meta m;
    return th_meta_new(&m, ndim, sizes, strides, dtype) ? NULL : new_tensor(&m);
}

th_tensor *th_tensor_from_storage(th_storage *s, int64_t offset, int ndim,
                                  const int64_t *sizes, const int64_t *strides,
                                  int dtype) {
    if (!s) return th__error_null(TH_ERR_VALUE, "storage is NULL");
    th_meta m;
    if (th_meta_on_storage(&m, s->nbytes, offset, ndim, sizes, strides, dtype))
        return NULL;
    /* kernels load elements through typed (vectorised) pointers, which C
       requires to be aligned; libTH's own storages always are, wrapped
       external memory may not be */
    int64_t item = th_dtype_itemsize(dtype);
    if (th__prod(ndim, sizes) > 0 && (uintptr_t)s->data % (uintptr_t)item != 0)
        return th__error_null(TH_ERR_VALUE, "setStorage: the storage's data "
                              "address is not a multiple of the %lld-byte "
                              "elements of %s", (long long)item,
                              th_dtype_name(dtype));
    return th__wrap(s, m.offset, m.ndim, m.sizes, m.strides, m.dtype);
}

void th_tensor_retain(th_tensor *t) {
    if (t) __atomic_add_fetch(&t->refcount, 1, __ATOMIC_RELAXED);
}

void th_tensor_release(th_tensor *t) {
    if (!t || __atomic_sub_fetch(&t->refcount, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    th_storage_release(t->storage);
    free(t);
}

int64_t th_numel(const th_tensor *t) { return th__prod(t->ndim, t->sizes); }

int th__is_contiguous(int ndim, const int64_t *sizes, const int64_t *strides) {
    int64_t expected = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        if (sizes[i] == 0) return 1;
        if (sizes[i] != 1 && strides[i] != expected) return 0;
        expected *= sizes[i];
    }
    return 1;
}
TH_EXPORT_AS(th_strides_are_contiguous, th__is_contiguous);

int th_is_contiguous(const th_tensor *t) {
    return th__is_contiguous(t->ndim, t->sizes, t->strides);
}

void *th_data_ptr(const th_tensor *t) { return th__ptr(t); }

static int linear_offset(const th_tensor *t, int64_t linear, int64_t *off) {
    int64_t n = th_numel(t);
    if (linear < 0 || linear >= n)
        return th__error(TH_ERR_INDEX,
                         "index %lld is out of bounds for a tensor of %lld "
                         "elements", (long long)linear, (long long)n);
    int64_t o = 0;
    for (int i = t->ndim - 1; i >= 0; i--) {
        o += (linear % t->sizes[i]) * t->strides[i];
        linear /= t->sizes[i];
    }
    *off = o;
    return TH_OK;
}

int th_get_double(const th_tensor *t, int64_t linear, double *out) {
    int64_t o = 0;
    if (linear_offset(t, linear, &o)) return th_last_status();
    *out = th__load_double(th__ptr(t) + o * th_dtype_itemsize(t->dtype), t->dtype);
    return TH_OK;
}

int th_get_int64(const th_tensor *t, int64_t linear, int64_t *out) {
    int64_t o = 0;
    if (linear_offset(t, linear, &o)) return th_last_status();
    *out = th__load_int64(th__ptr(t) + o * th_dtype_itemsize(t->dtype), t->dtype);
    return TH_OK;
}

double th__scalar_double(const th_tensor *t) {
    return th__load_double(th__ptr(t), t->dtype);
}

int64_t th__scalar_int64(const th_tensor *t) {
    return th__load_int64(th__ptr(t), t->dtype);
}

int th__same_shape(const th_tensor *a, const th_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i]) return 0;
    return 1;
}

th_tensor *th__empty_like(const th_tensor *t, int dtype) {
    return th_empty(t->ndim, t->sizes, dtype);
}

/* ---- creation ------------------------------------------------------ */
th_tensor *th_scalar_double(double v, int dtype) {
    th_tensor *t = th_empty(0, NULL, dtype);
    if (t) th__store_double(th__ptr(t), dtype, v);
    return t;
}

th_tensor *th_scalar_int64(int64_t v, int dtype) {
    th_tensor *t = th_empty(0, NULL, dtype);
    if (!t) return NULL;
    char *p = th__ptr(t);
    switch (dtype) {
    case TH_INT64: *(int64_t *)p = v; break;
    case TH_INT32: *(int32_t *)p = (int32_t)v; break;
    case TH_INT16: *(int16_t *)p = (int16_t)v; break;
    case TH_INT8: *(int8_t *)p = (int8_t)v; break;
    case TH_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    default: th__store_double(p, dtype, (double)v);
    }
    return t;
}

th_tensor *th_arange(double start, double end, double step, int dtype) {
    if (th__refuse_complex("arange", dtype)) return NULL;
    if (step == 0)
        return th__error_null(TH_ERR_RUNTIME, "step must be nonzero");
    if (!isfinite(start) || !isfinite(end))
        return th__error_null(TH_ERR_RUNTIME, "unsupported range: %g -> %g",
                              start, end);
    if ((step > 0 && end < start) || (step < 0 && end > start))
        return th__error_null(TH_ERR_RUNTIME,
                              "upper bound and larger bound inconsistent "
                              "with step sign");
    double count = ceil((end - start) / step);
    if (count > 9.0e15)
        return th__error_null(TH_ERR_RUNTIME, "arange would create %g elements",
                              count);
    int64_t n = (int64_t)count;
    /* converting a double outside int64 to int64 is undefined */
    if (dtype == TH_INT64 && (start < -0x1p63 || start >= 0x1p63 ||
                              (n > 1 && (step < -0x1p63 || step >= 0x1p63))))
        return th__error_null(TH_ERR_RUNTIME, "arange: start %g and step %g must "
                              "fit in int64 for an int64 result", start, step);
    th_tensor *t = th_empty(1, &n, dtype);
    if (!t) return NULL;
    char *p = th__ptr(t);
    int64_t item = th_dtype_itemsize(dtype);
    int integral = th_dtype_is_integral(dtype);
    for (int64_t i = 0; i < n; i++) {
        /* start and step lie inside int64 (checked above); the sums and
           products wrap, never undefined */
        if (integral && dtype == TH_INT64)
            ((int64_t *)p)[i] = th__wrap_add((int64_t)start,
                                             th__wrap_mul(i, (int64_t)step));
        else
            th__store_double(p + i * item, dtype, start + (double)i * step);
    }
    return t;
}

th_tensor *th_linspace(double start, double end, int64_t steps, int dtype) {
    if (steps < 0)
        return th__error_null(TH_ERR_RUNTIME,
                              "number of steps must be non-negative");
    th_tensor *t = th_empty(1, &steps, dtype);
    if (!t) return NULL;
    char *p = th__ptr(t);
    int64_t item = th_dtype_itemsize(dtype);
    double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0;
    int64_t half = steps > 1 ? steps / 2 : steps; /* one step: [start] */
    for (int64_t i = 0; i < steps; i++) {
        /* symmetric, so that both ends are exact */
        double v = i < half ? start + step * (double)i
                            : end - step * (double)(steps - 1 - i);
        if (th_dtype_is_integral(dtype)) v = trunc(v);
        th__store_double(p + i * item, dtype, v);
    }
    return t;
}

th_tensor *th_logspace(double start, double end, int64_t steps, double base,
                       int dtype) {
    th_tensor *t = th_linspace(start, end, steps, TH_FLOAT64);
    if (!t) return NULL;
    double *v = (double *)th__ptr(t);
    for (int64_t i = 0; i < steps; i++) v[i] = pow(base, v[i]);
    th_tensor *r = th_to_dtype(t, dtype);
    th_tensor_release(t);
    return r;
}

th_tensor *th_eye(int64_t n, int64_t m, int dtype) {
    if (m < 0) m = n;
    if (n < 0)
        return th__error_null(TH_ERR_RUNTIME, "n must be greater or equal to "
                              "0, got %lld", (long long)n);
    int64_t sizes[2] = {n, m};
    th_tensor *t = th_empty(2, sizes, dtype);
    if (!t) return NULL;
    th_zero(t);
    int64_t item = th_dtype_itemsize(dtype);
    char *p = th__ptr(t);
    for (int64_t i = 0; i < TH_MIN(n, m); i++)
        th__store_double(p + (i * m + i) * item, dtype, 1.0);
    return t;
}

/* ---- views (their geometry: meta.c) ------------------------------- */
/* The view of t that fn's rc and geometry m describe (NULL if rc failed). */
static th_tensor *view(const th_tensor *t, int rc, const th_meta *m) {
    return rc ? NULL : th__wrap_meta(t, m);
}

th_tensor *th_alias(const th_tensor *t) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_alias(&m, &m), &m);
}

th_tensor *th_view(const th_tensor *t, int ndim, const int64_t *sizes) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_view(&m, &m, ndim, sizes), &m);
}

th_tensor *th_reshape(const th_tensor *t, int ndim, const int64_t *sizes) {
    th_meta m;
    int copy;
    th__meta_of(t, &m);
    if (th_meta_reshape(&m, &m, ndim, sizes, &copy)) return NULL;
    if (!copy) return th__wrap_meta(t, &m);
    th_tensor *c = th_clone(t);
    if (!c) return NULL;
    th_tensor *r = th__wrap(c->storage, c->offset, m.ndim, m.sizes, m.strides,
                            m.dtype);
    th_tensor_release(c);
    return r;
}

th_tensor *th_as_strided(const th_tensor *t, int ndim, const int64_t *sizes,
                         const int64_t *strides, int64_t offset) {
    if (offset < 0) offset = t->offset;
    return th_tensor_from_storage(t->storage, offset, ndim, sizes, strides,
                                  t->dtype);
}

th_tensor *th_transpose(const th_tensor *t, int d0, int d1) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_transpose(&m, &m, d0, d1), &m);
}

th_tensor *th_permute(const th_tensor *t, int ndim, const int *dims) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_permute(&m, &m, ndim, dims), &m);
}

th_tensor *th_narrow(const th_tensor *t, int dim, int64_t start, int64_t length) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_narrow(&m, &m, dim, start, length), &m);
}

th_tensor *th_select(const th_tensor *t, int dim, int64_t index) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_select(&m, &m, dim, index), &m);
}

th_tensor *th_slice(const th_tensor *t, int dim, int64_t start, int64_t stop,
                    int64_t step) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_slice(&m, &m, dim, start, stop, step), &m);
}

th_tensor *th_expand(const th_tensor *t, int ndim, const int64_t *sizes) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_expand(&m, &m, ndim, sizes), &m);
}

th_tensor *th__expand_to(const th_tensor *t, int ndim, const int64_t *sizes) {
    return th_expand(t, ndim, sizes);
}

int th_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b,
                        int64_t *out) {
    int n = TH_MAX(na, nb);
    for (int i = n - 1; i >= 0; i--) { /* from the right, as PyTorch reports */
        int ia = na - n + i, ib = nb - n + i;
        int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            th__error(TH_ERR_RUNTIME,
                      "The size of tensor a (%lld) must match the size of "
                      "tensor b (%lld) at non-singleton dimension %d",
                      (long long)sa, (long long)sb, i);
            return -1;
        }
        out[i] = sa == 1 ? sb : sa;
    }
    return n;
}

th_tensor *th_squeeze(const th_tensor *t, int dim) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_squeeze(&m, &m, dim), &m);
}

th_tensor *th_squeeze_all(const th_tensor *t) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_squeeze_all(&m, &m), &m);
}

th_tensor *th_unsqueeze(const th_tensor *t, int dim) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_unsqueeze(&m, &m, dim), &m);
}

th_tensor *th_unfold(const th_tensor *t, int dim, int64_t size, int64_t step) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_unfold(&m, &m, dim, size, step), &m);
}

th_tensor *th_diagonal(const th_tensor *t, int64_t offset, int d0, int d1) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_diagonal(&m, &m, offset, d0, d1), &m);
}

th_tensor *th_flip_view(const th_tensor *t, int ndim, const int *dims) {
    th_meta m;
    th__meta_of(t, &m);
    return view(t, th_meta_flip(&m, &m, ndim, dims), &m);
}
