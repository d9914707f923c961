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

void th__contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        /* wraps only when another size is 0 (no element, strides unused) */
        s = th__wrap_mul(s, sizes[i] > 1 ? sizes[i] : 1);
    }
}

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

static int check_shape(int ndim, const int64_t *sizes, int dtype) {
    if (dtype < 0 || dtype >= TH_NUM_DTYPES)
        return th__error(TH_ERR_TYPE, "invalid dtype code %d", dtype);
    if (ndim < 0 || ndim > TH_MAX_DIMS)
        return th__error(TH_ERR_VALUE,
                         "number of dimensions must be in [0, %d], got %d",
                         TH_MAX_DIMS, ndim);
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            char b[256];
            return th__error(TH_ERR_RUNTIME,
                             "Trying to create tensor with negative dimension "
                             "%lld: %s", (long long)sizes[i],
                             th__shape_str(ndim, sizes, b));
        }
    }
    return TH_OK;
}

th_tensor *th_empty(int ndim, const int64_t *sizes, int dtype) {
    if (check_shape(ndim, sizes, dtype) != TH_OK) return NULL;
    int64_t strides[TH_MAX_DIMS];
    th__contiguous_strides(ndim, sizes, strides);
    int64_t nbytes;
    if (th__storage_nbytes(ndim, sizes, NULL, dtype, &nbytes)) return NULL;
    th_storage *s = th_storage_new(nbytes);
    if (!s) return NULL;
    th_tensor *t = th__wrap(s, 0, ndim, sizes, strides, dtype);
    th_storage_release(s);
    return t;
}

th_tensor *th_tensor_from_storage(th_storage *s, int64_t offset, int ndim,
                                  const int64_t *sizes, const int64_t *strides,
                                  int dtype) {
    if (!s) return th__error_null(TH_ERR_VALUE, "storage is NULL");
    int64_t n, cstrides[TH_MAX_DIMS];
    if (check_shape(ndim, sizes, dtype) != TH_OK ||
        th__checked_numel(ndim, sizes, &n) != TH_OK)
        return NULL;
    if (!strides) {
        th__contiguous_strides(ndim, sizes, cstrides);
        strides = cstrides;
    }
    if (th__check_in_storage("setStorage", ndim, sizes, strides, offset,
                             dtype, s->nbytes))
        return NULL;
    /* kernels load elements through typed (vectorised) pointers, which C
       requires to be aligned; libTH's own storages always are, wrapped
       external memory may not be */
    int64_t item = th_dtype_itemsize(dtype);
    if (n > 0 && (uintptr_t)s->data % (uintptr_t)item != 0)
        return th__error_null(TH_ERR_VALUE, "setStorage: the storage's data "
                              "address is not a multiple of the %lld-byte "
                              "elements of %s", (long long)item,
                              th_dtype_name(dtype));
    return th__wrap(s, offset, ndim, sizes, strides, dtype);
}

th_tensor *th_empty_strided(int ndim, const int64_t *sizes,
                            const int64_t *strides, int dtype) {
    if (check_shape(ndim, sizes, dtype) != TH_OK) return NULL;
    int64_t nbytes;
    for (int i = 0; i < ndim; i++)
        if (strides[i] < 0)
            return th__error_null(TH_ERR_VALUE, "empty_strided: negative "
                                  "strides are not supported");
    if (th__storage_nbytes(ndim, sizes, strides, dtype, &nbytes)) return NULL;
    th_storage *s = th_storage_new(nbytes);
    if (!s) return NULL;
    th_tensor *t = th__wrap(s, 0, ndim, sizes, strides, dtype);
    th_storage_release(s);
    return t;
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

int th_is_contiguous(const th_tensor *t) {
    int64_t expected = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] == 0) return 1;
        if (t->sizes[i] != 1 && t->strides[i] != expected) return 0;
        expected *= t->sizes[i];
    }
    return 1;
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

/* ---- views --------------------------------------------------------- */
/* Every view is made here: its element count must fit in int64 and every
 * element it addresses must lie in t's storage (expand and as_strided can
 * ask for anything; the views derived from an in-bounds tensor stay in
 * bounds, and this check keeps it so). */
static th_tensor *view_of(const th_tensor *t, int64_t offset, int ndim,
                          const int64_t *sizes, const int64_t *strides) {
    int64_t n;
    if (th__checked_numel(ndim, sizes, &n) ||
        th__check_in_storage("view", ndim, sizes, strides, offset, t->dtype,
                             t->storage->nbytes))
        return NULL;
    return th__wrap(t->storage, offset, ndim, sizes, strides, t->dtype);
}

th_tensor *th_alias(const th_tensor *t) {
    return view_of(t, t->offset, t->ndim, t->sizes, t->strides);
}

/* Resolves one -1 in a requested shape against numel. */
static int infer_shape(const th_tensor *t, int ndim, const int64_t *in,
                       int64_t *out) {
    if (ndim < 0 || ndim > TH_MAX_DIMS)
        return th__error(TH_ERR_VALUE, "shape has %d dimensions, more than "
                         "the %d supported", ndim, TH_MAX_DIMS);
    int infer = -1, overflow = 0;
    int64_t prod = 1, numel = th_numel(t);
    for (int i = 0; i < ndim; i++) {
        out[i] = in[i];
        if (in[i] == -1) {
            if (infer >= 0)
                return th__error(TH_ERR_RUNTIME,
                                 "only one dimension can be inferred");
            infer = i;
        } else if (in[i] < 0) {
            return th__error(TH_ERR_RUNTIME, "invalid shape dimension %lld",
                             (long long)in[i]);
        } else if (in[i] == 0) {
            prod = 0;
            overflow = 0;
        } else if (prod != 0 && th__mul_ovf(prod, in[i], &prod)) {
            overflow = 1; /* cannot equal numel (unless a 0 follows) */
        }
    }
    char b1[256];
    if (overflow) prod = -1;
    if (infer >= 0) {
        if (prod <= 0 || numel % prod != 0)
            return th__error(TH_ERR_RUNTIME,
                             "shape '%s' is invalid for input of size %lld",
                             th__shape_str(ndim, in, b1), (long long)numel);
        out[infer] = numel / prod;
    } else if (prod != numel) {
        return th__error(TH_ERR_RUNTIME,
                         "shape '%s' is invalid for input of size %lld",
                         th__shape_str(ndim, in, b1), (long long)numel);
    }
    return TH_OK;
}

/* Strides for viewing t as `sizes` without a copy; 0 if impossible. */
static int view_strides(const th_tensor *t, int ndim, const int64_t *sizes,
                        int64_t *strides) {
    int64_t numel = th_numel(t);
    if (numel == 0 || th_is_contiguous(t)) {
        th__contiguous_strides(ndim, sizes, strides);
        return 1;
    }
    /* Walk the old dims in chunks that are contiguous among themselves. */
    int vi = ndim - 1;
    int64_t chunk_base_stride = t->ndim ? t->strides[t->ndim - 1] : 1;
    int64_t tensor_numel = 1, view_numel = 1;
    for (int ti = t->ndim - 1; ti >= 0; ti--) {
        tensor_numel *= t->sizes[ti];
        if (ti == 0 || (t->sizes[ti - 1] != 1 &&
                        t->strides[ti - 1] !=
                            th__wrap_mul(tensor_numel, chunk_base_stride))) {
            while (vi >= 0 && (view_numel < tensor_numel || sizes[vi] == 1)) {
                /* view_of checks the result against the storage */
                strides[vi] = th__wrap_mul(view_numel, chunk_base_stride);
                view_numel *= sizes[vi];
                vi--;
            }
            if (view_numel != tensor_numel) return 0;
            if (ti > 0) {
                chunk_base_stride = t->strides[ti - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return vi == -1;
}

th_tensor *th_view(const th_tensor *t, int ndim, const int64_t *sizes) {
    int64_t shape[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    if (infer_shape(t, ndim, sizes, shape)) return NULL;
    if (!view_strides(t, ndim, shape, strides))
        return th__error_null(TH_ERR_RUNTIME,
                              "view size is not compatible with input "
                              "tensor's size and stride (at least one "
                              "dimension spans across two contiguous "
                              "subspaces). Use .reshape(...) instead.");
    return view_of(t, t->offset, ndim, shape, strides);
}

th_tensor *th_reshape(const th_tensor *t, int ndim, const int64_t *sizes) {
    int64_t shape[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    if (infer_shape(t, ndim, sizes, shape)) return NULL;
    if (view_strides(t, ndim, shape, strides))
        return view_of(t, t->offset, ndim, shape, strides);
    th_tensor *c = th_clone(t);
    if (!c) return NULL;
    th__contiguous_strides(ndim, shape, strides);
    th_tensor *r = view_of(c, c->offset, ndim, shape, strides);
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
    if ((d0 = th__wrap_dim(d0, t->ndim)) < 0) return NULL;
    if ((d1 = th__wrap_dim(d1, t->ndim)) < 0) return NULL;
    th_tensor *r = th_alias(t);
    if (!r || t->ndim == 0) return r;
    r->sizes[d0] = t->sizes[d1];
    r->sizes[d1] = t->sizes[d0];
    r->strides[d0] = t->strides[d1];
    r->strides[d1] = t->strides[d0];
    return r;
}

th_tensor *th_permute(const th_tensor *t, int ndim, const int *dims) {
    if (ndim != t->ndim)
        return th__error_null(TH_ERR_RUNTIME,
                              "permute(sparse_coo): number of dimensions in "
                              "the tensor input does not match the length of "
                              "the desired ordering of dimensions i.e. input."
                              "dim() = %d is not equal to len(dims) = %d",
                              t->ndim, ndim);
    int seen[TH_MAX_DIMS] = {0};
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        int d = th__wrap_dim(dims[i], ndim);
        if (d < 0) return NULL;
        if (seen[d])
            return th__error_null(TH_ERR_RUNTIME,
                                  "permute(): duplicate dims are not allowed.");
        seen[d] = 1;
        sizes[i] = t->sizes[d];
        strides[i] = t->strides[d];
    }
    return view_of(t, t->offset, ndim, sizes, strides);
}

th_tensor *th_narrow(const th_tensor *t, int dim, int64_t start, int64_t length) {
    if (t->ndim == 0)
        return th__error_null(TH_ERR_RUNTIME,
                              "narrow() cannot be applied to a 0-dim tensor.");
    if ((dim = th__wrap_dim(dim, t->ndim)) < 0) return NULL;
    int64_t size = t->sizes[dim];
    if (start < -size || start > size)
        return th__error_null(TH_ERR_INDEX,
                              "start out of range (expected to be in range "
                              "of [%lld, %lld], but got %lld)",
                              (long long)-size, (long long)size,
                              (long long)start);
    if (start < 0) start += size;
    if (length < 0 || length > size - start) /* start + length may wrap */
        return th__error_null(TH_ERR_RUNTIME,
                              "start (%lld) + length (%lld) exceeds dimension "
                              "size (%lld).", (long long)start,
                              (long long)length, (long long)size);
    th_tensor *r = th_alias(t);
    if (!r) return NULL;
    r->offset += start * t->strides[dim];
    r->sizes[dim] = length;
    return r;
}

th_tensor *th_select(const th_tensor *t, int dim, int64_t index) {
    if (t->ndim == 0)
        return th__error_null(TH_ERR_INDEX,
                              "select() cannot be applied to a 0-dim tensor.");
    if ((dim = th__wrap_dim(dim, t->ndim)) < 0) return NULL;
    int64_t size = t->sizes[dim];
    if (index < -size || index >= size)
        return th__error_null(TH_ERR_INDEX,
                              "index %lld is out of bounds for dimension %d "
                              "with size %lld", (long long)index, dim,
                              (long long)size);
    if (index < 0) index += size;
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (i == dim) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    return view_of(t, t->offset + index * t->strides[dim], n, sizes, strides);
}

th_tensor *th_slice(const th_tensor *t, int dim, int64_t start, int64_t stop,
                    int64_t step) {
    if (t->ndim == 0)
        return th__error_null(TH_ERR_INDEX,
                              "slice() cannot be applied to a 0-dim tensor.");
    if ((dim = th__wrap_dim(dim, t->ndim)) < 0) return NULL;
    if (step <= 0)
        return th__error_null(TH_ERR_VALUE, "step must be greater than zero");
    int64_t size = t->sizes[dim];
    if (start < 0) start += size;
    if (stop < 0) stop += size;
    start = TH_MIN(TH_MAX(start, 0), size);
    stop = TH_MIN(TH_MAX(stop, start), size);
    th_tensor *r = th_alias(t);
    if (!r) return NULL;
    int64_t len = stop == start ? 0 : (stop - start - 1) / step + 1;
    if (th__view_stride(t->strides[dim], step, len, &r->strides[dim])) {
        th_tensor_release(r);
        return NULL;
    }
    r->offset += start * t->strides[dim];
    r->sizes[dim] = len;
    return r;
}

th_tensor *th_expand(const th_tensor *t, int ndim, const int64_t *sizes) {
    char b1[256], b2[256];
    if (ndim < t->ndim)
        return th__error_null(TH_ERR_RUNTIME,
                              "expand(%s{%s}, size=%s): the number of sizes "
                              "provided (%d) must be greater or equal to the "
                              "number of dimensions in the tensor (%d)",
                              th_dtype_name(t->dtype),
                              th__shape_str(t->ndim, t->sizes, b1),
                              th__shape_str(ndim, sizes, b2), ndim, t->ndim);
    if (ndim > TH_MAX_DIMS)
        return th__error_null(TH_ERR_VALUE, "too many dimensions (%d)", ndim);
    int64_t ns[TH_MAX_DIMS], st[TH_MAX_DIMS];
    int lead = ndim - t->ndim;
    for (int i = ndim - 1; i >= 0; i--) {
        int j = i - lead;
        int64_t want = sizes[i];
        if (j >= 0) {
            int64_t have = t->sizes[j];
            if (want == -1) want = have;
            if (have == want) {
                ns[i] = have;
                st[i] = t->strides[j];
            } else if (have == 1 && want >= 0) {
                ns[i] = want;
                st[i] = 0;
            } else {
                return th__error_null(TH_ERR_RUNTIME,
                                      "The expanded size of the tensor (%lld) "
                                      "must match the existing size (%lld) at "
                                      "non-singleton dimension %d.  Target "
                                      "sizes: %s.  Tensor sizes: %s",
                                      (long long)want, (long long)have, i,
                                      th__shape_str(ndim, sizes, b1),
                                      th__shape_str(t->ndim, t->sizes, b2));
            }
        } else {
            if (want < 0)
                return th__error_null(TH_ERR_RUNTIME,
                                      "The expanded size of the tensor (%lld) "
                                      "isn't allowed in a leading, "
                                      "non-existing dimension %d",
                                      (long long)want, i);
            ns[i] = want;
            st[i] = 0;
        }
    }
    return view_of(t, t->offset, ndim, ns, st);
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
    if ((dim = th__wrap_dim(dim, t->ndim)) < 0) return NULL;
    if (t->ndim == 0 || t->sizes[dim] != 1) return th_alias(t);
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (i == dim) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    return view_of(t, t->offset, n, sizes, strides);
}

th_tensor *th_squeeze_all(const th_tensor *t) {
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (t->sizes[i] == 1) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    return view_of(t, t->offset, n, sizes, strides);
}

th_tensor *th_unsqueeze(const th_tensor *t, int dim) {
    if ((dim = th__wrap_dim(dim, t->ndim + 1)) < 0) return NULL;
    if (t->ndim >= TH_MAX_DIMS)
        return th__error_null(TH_ERR_VALUE, "too many dimensions (%d)",
                              t->ndim + 1);
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    for (int i = 0, j = 0; i <= t->ndim; i++) {
        if (i == dim) {
            sizes[i] = 1;
            /* any stride is valid for a size-1 dim: wrap, never fail */
            strides[i] = dim < t->ndim ? th__wrap_mul(t->sizes[dim],
                                                      t->strides[dim]) : 1;
        } else {
            sizes[i] = t->sizes[j];
            strides[i] = t->strides[j++];
        }
    }
    return view_of(t, t->offset, t->ndim + 1, sizes, strides);
}

th_tensor *th_unfold(const th_tensor *t, int dim, int64_t size, int64_t step) {
    if ((dim = th__wrap_dim(dim, t->ndim)) < 0) return NULL;
    int64_t dsize = t->ndim ? t->sizes[dim] : 1;
    int64_t dstride = t->ndim ? t->strides[dim] : 1;
    if (size < 0 || size > dsize)
        return th__error_null(TH_ERR_RUNTIME,
                              "maximum size for tensor at dimension %d is "
                              "%lld but size is %lld", dim, (long long)dsize,
                              (long long)size);
    if (step <= 0)
        return th__error_null(TH_ERR_RUNTIME,
                              "step is %lld but must be > 0", (long long)step);
    if (t->ndim >= TH_MAX_DIMS)
        return th__error_null(TH_ERR_VALUE, "too many dimensions");
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        sizes[i] = t->sizes[i];
        strides[i] = t->strides[i];
    }
    int n = t->ndim ? t->ndim : 0;
    if (t->ndim) {
        sizes[dim] = (dsize - size) / step + 1;
        if (th__view_stride(dstride, step, sizes[dim], &strides[dim]))
            return NULL;
    }
    sizes[n] = size;
    strides[n] = dstride;
    return view_of(t, t->offset, n + 1, sizes, strides);
}

th_tensor *th_diagonal(const th_tensor *t, int64_t offset, int d0, int d1) {
    if (t->ndim < 2)
        return th__error_null(TH_ERR_RUNTIME,
                              "diagonal dimensions requires ndim larger "
                              "than 1, got %d", t->ndim);
    if ((d0 = th__wrap_dim(d0, t->ndim)) < 0) return NULL;
    if ((d1 = th__wrap_dim(d1, t->ndim)) < 0) return NULL;
    if (d0 == d1)
        return th__error_null(TH_ERR_RUNTIME,
                              "diagonal dimensions cannot be identical %d, %d",
                              d0, d1);
    int64_t off = t->offset, len;
    if (offset >= 0) {
        len = TH_MAX(TH_MIN(t->sizes[d0], t->sizes[d1] - offset), 0);
        if (len > 0) off += offset * t->strides[d1];
    } else {
        len = TH_MAX(TH_MIN(t->sizes[d0] + offset, t->sizes[d1]), 0);
        if (len > 0) off -= offset * t->strides[d0];
    }
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (i == d0 || i == d1) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    sizes[n] = len;
    strides[n++] = th__wrap_add(t->strides[d0], t->strides[d1]);
    return view_of(t, off, n, sizes, strides);
}

th_tensor *th_flip_view(const th_tensor *t, int ndim, const int *dims) {
    th_tensor *r = th_alias(t);
    if (!r) return NULL;
    int seen[TH_MAX_DIMS] = {0};
    for (int i = 0; i < ndim; i++) {
        int d = th__wrap_dim(dims[i], t->ndim);
        if (d < 0 || seen[d]) {
            th_tensor_release(r);
            if (d >= 0) th__error(TH_ERR_RUNTIME, "dims has duplicates, "
                                  "original flip dims size=%d", ndim);
            return NULL;
        }
        seen[d] = 1;
        if (t->ndim == 0 || r->sizes[d] == 0) continue;
        r->offset += (r->sizes[d] - 1) * r->strides[d];
        r->strides[d] = -r->strides[d];
    }
    return r;
}
