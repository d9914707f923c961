/* Tensor lifetime, metadata and views: plain C, no device code (views
 * only change sizes, strides and offsets).  The same rules as libTH's. */
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "runtime.h"
#include "thc_internal.h"

int64_t thc__prod(int n, const int64_t *v) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= v[i];
    return p;
}

void thc__contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= sizes[i] > 1 ? sizes[i] : 1;
    }
}

thc_tensor *thc__wrap(thc_storage *s, int64_t offset, int ndim,
                    const int64_t *sizes, const int64_t *strides, int dtype) {
    thc_tensor *t = malloc(sizeof *t);
    if (!t) return thc__error_null(THC_ERR_MEMORY, "not enough memory for a tensor header");
    t->storage = s;
    thc_storage_retain(s);
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
    if (dtype < 0 || dtype >= THC_NUM_DTYPES)
        return thc__error(THC_ERR_TYPE, "invalid dtype code %d", dtype);
    if (ndim < 0 || ndim > THC_MAX_DIMS)
        return thc__error(THC_ERR_VALUE,
                         "number of dimensions must be in [0, %d], got %d",
                         THC_MAX_DIMS, ndim);
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            char b[256];
            return thc__error(THC_ERR_RUNTIME,
                             "Trying to create tensor with negative dimension "
                             "%lld: %s", (long long)sizes[i],
                             thc__shape_str(ndim, sizes, b));
        }
    }
    return THC_OK;
}

THC_API thc_tensor *thc_empty(int ndim, const int64_t *sizes, int dtype) {
    if (check_shape(ndim, sizes, dtype) != THC_OK) return NULL;
    int64_t strides[THC_MAX_DIMS];
    thc__contiguous_strides(ndim, sizes, strides);
    int64_t nbytes;
    if (thc__storage_nbytes(ndim, sizes, NULL, dtype, &nbytes)) return NULL;
    thc_storage *s = thc__storage_new(nbytes);
    if (!s) return NULL;
    thc_tensor *t = thc__wrap(s, 0, ndim, sizes, strides, dtype);
    thc_storage_release(s);
    return t;
}

THC_API thc_tensor *thc_tensor_from_storage(thc_storage *s, int64_t offset, int ndim,
                                  const int64_t *sizes, const int64_t *strides,
                                  int dtype) {
    if (!s) return thc__error_null(THC_ERR_VALUE, "storage is NULL");
    int64_t n, cstrides[THC_MAX_DIMS];
    if (check_shape(ndim, sizes, dtype) != THC_OK ||
        thc__checked_numel(ndim, sizes, &n) != THC_OK)
        return NULL;
    if (!strides) {
        thc__contiguous_strides(ndim, sizes, cstrides);
        strides = cstrides;
    }
    if (thc__check_in_storage("setStorage", ndim, sizes, strides, offset,
                              dtype, s->nbytes))
        return NULL;
    return thc__wrap(s, offset, ndim, sizes, strides, dtype);
}

THC_API thc_tensor *thc_empty_strided(int ndim, const int64_t *sizes,
                            const int64_t *strides, int dtype) {
    if (check_shape(ndim, sizes, dtype) != THC_OK) return NULL;
    int64_t nbytes;
    for (int i = 0; i < ndim; i++)
        if (strides[i] < 0)
            return thc__error_null(THC_ERR_VALUE, "empty_strided: negative "
                                  "strides are not supported");
    if (thc__storage_nbytes(ndim, sizes, strides, dtype, &nbytes)) return NULL;
    thc_storage *s = thc__storage_new(nbytes);
    if (!s) return NULL;
    thc_tensor *t = thc__wrap(s, 0, ndim, sizes, strides, dtype);
    thc_storage_release(s);
    return t;
}

THC_API void thc_tensor_retain(thc_tensor *t) {
    if (t) __atomic_add_fetch(&t->refcount, 1, __ATOMIC_RELAXED);
}

THC_API void thc_tensor_release(thc_tensor *t) {
    if (!t || __atomic_sub_fetch(&t->refcount, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    thc_storage_release(t->storage);
    free(t);
}

THC_API int64_t thc_numel(const thc_tensor *t) { return thc__prod(t->ndim, t->sizes); }

THC_API int thc_is_contiguous(const thc_tensor *t) {
    int64_t expected = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] == 0) return 1;
        if (t->sizes[i] != 1 && t->strides[i] != expected) return 0;
        expected *= t->sizes[i];
    }
    return 1;
}

THC_API void *thc_data_ptr(const thc_tensor *t) { return thc__ptr(t); }

int thc__same_shape(const thc_tensor *a, const thc_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i]) return 0;
    return 1;
}

thc_tensor *thc__empty_like(const thc_tensor *t, int dtype) {
    return thc_empty(t->ndim, t->sizes, dtype);
}

/* Every view is made here: its element count must fit in int64 and every
 * element it addresses must lie in t's storage (expand and as_strided can
 * ask for anything; views of an in-bounds tensor stay in bounds, and this
 * check keeps it so). */
static thc_tensor *view_of(const thc_tensor *t, int64_t offset, int ndim,
                          const int64_t *sizes, const int64_t *strides) {
    int64_t n;
    if (thc__checked_numel(ndim, sizes, &n) ||
        thc__check_in_storage("view", ndim, sizes, strides, offset, t->dtype,
                              t->storage->nbytes))
        return NULL;
    return thc__wrap(t->storage, offset, ndim, sizes, strides, t->dtype);
}

THC_API thc_tensor *thc_alias(const thc_tensor *t) {
    return view_of(t, t->offset, t->ndim, t->sizes, t->strides);
}

/* Resolves one -1 in a requested shape against numel. */
static int infer_shape(const thc_tensor *t, int ndim, const int64_t *in,
                       int64_t *out) {
    if (ndim < 0 || ndim > THC_MAX_DIMS)
        return thc__error(THC_ERR_VALUE, "shape has %d dimensions, more than "
                         "the %d supported", ndim, THC_MAX_DIMS);
    int infer = -1, overflow = 0;
    int64_t prod = 1, numel = thc_numel(t);
    for (int i = 0; i < ndim; i++) {
        out[i] = in[i];
        if (in[i] == -1) {
            if (infer >= 0)
                return thc__error(THC_ERR_RUNTIME,
                                 "only one dimension can be inferred");
            infer = i;
        } else if (in[i] < 0) {
            return thc__error(THC_ERR_RUNTIME, "invalid shape dimension %lld",
                             (long long)in[i]);
        } else if (in[i] == 0) {
            prod = 0;
            overflow = 0;
        } else if (prod != 0 && thc__mul_ovf(prod, in[i], &prod)) {
            overflow = 1; /* cannot equal numel (unless a 0 follows) */
        }
    }
    char b1[256];
    if (overflow) prod = -1;
    if (infer >= 0) {
        if (prod <= 0 || numel % prod != 0)
            return thc__error(THC_ERR_RUNTIME,
                             "shape '%s' is invalid for input of size %lld",
                             thc__shape_str(ndim, in, b1), (long long)numel);
        out[infer] = numel / prod;
    } else if (prod != numel) {
        return thc__error(THC_ERR_RUNTIME,
                         "shape '%s' is invalid for input of size %lld",
                         thc__shape_str(ndim, in, b1), (long long)numel);
    }
    return THC_OK;
}

/* Strides for viewing t as `sizes` without a copy; 0 if impossible. */
static int view_strides(const thc_tensor *t, int ndim, const int64_t *sizes,
                        int64_t *strides) {
    int64_t numel = thc_numel(t);
    if (numel == 0 || thc_is_contiguous(t)) {
        thc__contiguous_strides(ndim, sizes, strides);
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
                            thc__wrap_mul(tensor_numel, chunk_base_stride))) {
            while (vi >= 0 && (view_numel < tensor_numel || sizes[vi] == 1)) {
                /* view_of checks the result against the storage */
                strides[vi] = thc__wrap_mul(view_numel, chunk_base_stride);
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

THC_API thc_tensor *thc_view(const thc_tensor *t, int ndim, const int64_t *sizes) {
    int64_t shape[THC_MAX_DIMS], strides[THC_MAX_DIMS];
    if (infer_shape(t, ndim, sizes, shape)) return NULL;
    if (!view_strides(t, ndim, shape, strides))
        return thc__error_null(THC_ERR_RUNTIME,
                              "view size is not compatible with input "
                              "tensor's size and stride (at least one "
                              "dimension spans across two contiguous "
                              "subspaces). Use .reshape(...) instead.");
    return view_of(t, t->offset, ndim, shape, strides);
}

THC_API thc_tensor *thc_reshape(const thc_tensor *t, int ndim, const int64_t *sizes) {
    int64_t shape[THC_MAX_DIMS], strides[THC_MAX_DIMS];
    if (infer_shape(t, ndim, sizes, shape)) return NULL;
    if (view_strides(t, ndim, shape, strides))
        return view_of(t, t->offset, ndim, shape, strides);
    thc_tensor *c = thc_clone(t);
    if (!c) return NULL;
    thc__contiguous_strides(ndim, shape, strides);
    thc_tensor *r = view_of(c, c->offset, ndim, shape, strides);
    thc_tensor_release(c);
    return r;
}

THC_API thc_tensor *thc_as_strided(const thc_tensor *t, int ndim, const int64_t *sizes,
                         const int64_t *strides, int64_t offset) {
    if (offset < 0) offset = t->offset;
    return thc_tensor_from_storage(t->storage, offset, ndim, sizes, strides,
                                  t->dtype);
}

THC_API thc_tensor *thc_transpose(const thc_tensor *t, int d0, int d1) {
    if ((d0 = thc__wrap_dim(d0, t->ndim)) < 0) return NULL;
    if ((d1 = thc__wrap_dim(d1, t->ndim)) < 0) return NULL;
    thc_tensor *r = thc_alias(t);
    if (!r || t->ndim == 0) return r;
    r->sizes[d0] = t->sizes[d1];
    r->sizes[d1] = t->sizes[d0];
    r->strides[d0] = t->strides[d1];
    r->strides[d1] = t->strides[d0];
    return r;
}

THC_API thc_tensor *thc_permute(const thc_tensor *t, int ndim, const int *dims) {
    if (ndim != t->ndim)
        return thc__error_null(THC_ERR_RUNTIME,
                              "permute(sparse_coo): number of dimensions in "
                              "the tensor input does not match the length of "
                              "the desired ordering of dimensions i.e. input."
                              "dim() = %d is not equal to len(dims) = %d",
                              t->ndim, ndim);
    int seen[THC_MAX_DIMS] = {0};
    int64_t sizes[THC_MAX_DIMS], strides[THC_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        int d = thc__wrap_dim(dims[i], ndim);
        if (d < 0) return NULL;
        if (seen[d])
            return thc__error_null(THC_ERR_RUNTIME,
                                  "permute(): duplicate dims are not allowed.");
        seen[d] = 1;
        sizes[i] = t->sizes[d];
        strides[i] = t->strides[d];
    }
    return view_of(t, t->offset, ndim, sizes, strides);
}

THC_API thc_tensor *thc_narrow(const thc_tensor *t, int dim, int64_t start, int64_t length) {
    if (t->ndim == 0)
        return thc__error_null(THC_ERR_RUNTIME,
                              "narrow() cannot be applied to a 0-dim tensor.");
    if ((dim = thc__wrap_dim(dim, t->ndim)) < 0) return NULL;
    int64_t size = t->sizes[dim];
    if (start < -size || start > size)
        return thc__error_null(THC_ERR_INDEX,
                              "start out of range (expected to be in range "
                              "of [%lld, %lld], but got %lld)",
                              (long long)-size, (long long)size,
                              (long long)start);
    if (start < 0) start += size;
    if (length < 0 || start + length > size)
        return thc__error_null(THC_ERR_RUNTIME,
                              "start (%lld) + length (%lld) exceeds dimension "
                              "size (%lld).", (long long)start,
                              (long long)length, (long long)size);
    thc_tensor *r = thc_alias(t);
    if (!r) return NULL;
    r->offset += start * t->strides[dim];
    r->sizes[dim] = length;
    return r;
}

THC_API thc_tensor *thc_select(const thc_tensor *t, int dim, int64_t index) {
    if (t->ndim == 0)
        return thc__error_null(THC_ERR_INDEX,
                              "select() cannot be applied to a 0-dim tensor.");
    if ((dim = thc__wrap_dim(dim, t->ndim)) < 0) return NULL;
    int64_t size = t->sizes[dim];
    if (index < -size || index >= size)
        return thc__error_null(THC_ERR_INDEX,
                              "index %lld is out of bounds for dimension %d "
                              "with size %lld", (long long)index, dim,
                              (long long)size);
    if (index < 0) index += size;
    int64_t sizes[THC_MAX_DIMS], strides[THC_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (i == dim) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    return view_of(t, t->offset + index * t->strides[dim], n, sizes, strides);
}

THC_API thc_tensor *thc_slice(const thc_tensor *t, int dim, int64_t start, int64_t stop,
                    int64_t step) {
    if (t->ndim == 0)
        return thc__error_null(THC_ERR_INDEX,
                              "slice() cannot be applied to a 0-dim tensor.");
    if ((dim = thc__wrap_dim(dim, t->ndim)) < 0) return NULL;
    if (step <= 0)
        return thc__error_null(THC_ERR_VALUE, "step must be greater than zero");
    int64_t size = t->sizes[dim];
    if (start < 0) start += size;
    if (stop < 0) stop += size;
    start = THC_MIN(THC_MAX(start, 0), size);
    stop = THC_MIN(THC_MAX(stop, start), size);
    thc_tensor *r = thc_alias(t);
    if (!r) return NULL;
    int64_t len = stop == start ? 0 : (stop - start - 1) / step + 1;
    if (thc__view_stride(t->strides[dim], step, len, &r->strides[dim])) {
        thc_tensor_release(r);
        return NULL;
    }
    r->offset += start * t->strides[dim];
    r->sizes[dim] = len;
    return r;
}

THC_API thc_tensor *thc_expand(const thc_tensor *t, int ndim, const int64_t *sizes) {
    char b1[256], b2[256];
    if (ndim < t->ndim)
        return thc__error_null(THC_ERR_RUNTIME,
                              "expand(%s{%s}, size=%s): the number of sizes "
                              "provided (%d) must be greater or equal to the "
                              "number of dimensions in the tensor (%d)",
                              thc_dtype_name(t->dtype),
                              thc__shape_str(t->ndim, t->sizes, b1),
                              thc__shape_str(ndim, sizes, b2), ndim, t->ndim);
    if (ndim > THC_MAX_DIMS)
        return thc__error_null(THC_ERR_VALUE, "too many dimensions (%d)", ndim);
    int64_t ns[THC_MAX_DIMS], st[THC_MAX_DIMS];
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
                return thc__error_null(THC_ERR_RUNTIME,
                                      "The expanded size of the tensor (%lld) "
                                      "must match the existing size (%lld) at "
                                      "non-singleton dimension %d.  Target "
                                      "sizes: %s.  Tensor sizes: %s",
                                      (long long)want, (long long)have, i,
                                      thc__shape_str(ndim, sizes, b1),
                                      thc__shape_str(t->ndim, t->sizes, b2));
            }
        } else {
            if (want < 0)
                return thc__error_null(THC_ERR_RUNTIME,
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

thc_tensor *thc__expand_to(const thc_tensor *t, int ndim, const int64_t *sizes) {
    return thc_expand(t, ndim, sizes);
}

THC_API int thc_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b,
                        int64_t *out) {
    int n = THC_MAX(na, nb);
    for (int i = n - 1; i >= 0; i--) { /* from the right, as PyTorch reports */
        int ia = na - n + i, ib = nb - n + i;
        int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            thc__error(THC_ERR_RUNTIME,
                      "The size of tensor a (%lld) must match the size of "
                      "tensor b (%lld) at non-singleton dimension %d",
                      (long long)sa, (long long)sb, i);
            return -1;
        }
        out[i] = sa == 1 ? sb : sa;
    }
    return n;
}

THC_API thc_tensor *thc_squeeze(const thc_tensor *t, int dim) {
    if ((dim = thc__wrap_dim(dim, t->ndim)) < 0) return NULL;
    if (t->ndim == 0 || t->sizes[dim] != 1) return thc_alias(t);
    int64_t sizes[THC_MAX_DIMS], strides[THC_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (i == dim) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    return view_of(t, t->offset, n, sizes, strides);
}

THC_API thc_tensor *thc_squeeze_all(const thc_tensor *t) {
    int64_t sizes[THC_MAX_DIMS], strides[THC_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (t->sizes[i] == 1) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    return view_of(t, t->offset, n, sizes, strides);
}

THC_API thc_tensor *thc_unsqueeze(const thc_tensor *t, int dim) {
    if ((dim = thc__wrap_dim(dim, t->ndim + 1)) < 0) return NULL;
    if (t->ndim >= THC_MAX_DIMS)
        return thc__error_null(THC_ERR_VALUE, "too many dimensions (%d)",
                              t->ndim + 1);
    int64_t sizes[THC_MAX_DIMS], strides[THC_MAX_DIMS];
    for (int i = 0, j = 0; i <= t->ndim; i++) {
        if (i == dim) {
            sizes[i] = 1;
            strides[i] = dim < t->ndim ? t->sizes[dim] * t->strides[dim] : 1;
        } else {
            sizes[i] = t->sizes[j];
            strides[i] = t->strides[j++];
        }
    }
    return view_of(t, t->offset, t->ndim + 1, sizes, strides);
}

THC_API thc_tensor *thc_unfold(const thc_tensor *t, int dim, int64_t size, int64_t step) {
    if ((dim = thc__wrap_dim(dim, t->ndim)) < 0) return NULL;
    int64_t dsize = t->ndim ? t->sizes[dim] : 1;
    int64_t dstride = t->ndim ? t->strides[dim] : 1;
    if (size < 0 || size > dsize)
        return thc__error_null(THC_ERR_RUNTIME,
                              "maximum size for tensor at dimension %d is "
                              "%lld but size is %lld", dim, (long long)dsize,
                              (long long)size);
    if (step <= 0)
        return thc__error_null(THC_ERR_RUNTIME,
                              "step is %lld but must be > 0", (long long)step);
    if (t->ndim >= THC_MAX_DIMS)
        return thc__error_null(THC_ERR_VALUE, "too many dimensions");
    int64_t sizes[THC_MAX_DIMS], strides[THC_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        sizes[i] = t->sizes[i];
        strides[i] = t->strides[i];
    }
    int n = t->ndim ? t->ndim : 0;
    if (t->ndim) {
        sizes[dim] = (dsize - size) / step + 1;
        if (thc__view_stride(dstride, step, sizes[dim], &strides[dim]))
            return NULL;
    }
    sizes[n] = size;
    strides[n] = dstride;
    return view_of(t, t->offset, n + 1, sizes, strides);
}

THC_API thc_tensor *thc_diagonal(const thc_tensor *t, int64_t offset, int d0, int d1) {
    if (t->ndim < 2)
        return thc__error_null(THC_ERR_RUNTIME,
                              "diagonal dimensions requires ndim larger "
                              "than 1, got %d", t->ndim);
    if ((d0 = thc__wrap_dim(d0, t->ndim)) < 0) return NULL;
    if ((d1 = thc__wrap_dim(d1, t->ndim)) < 0) return NULL;
    if (d0 == d1)
        return thc__error_null(THC_ERR_RUNTIME,
                              "diagonal dimensions cannot be identical %d, %d",
                              d0, d1);
    int64_t off = t->offset, len;
    if (offset >= 0) {
        len = THC_MAX(THC_MIN(t->sizes[d0], t->sizes[d1] - offset), 0);
        if (len > 0) off += offset * t->strides[d1];
    } else {
        len = THC_MAX(THC_MIN(t->sizes[d0] + offset, t->sizes[d1]), 0);
        if (len > 0) off -= offset * t->strides[d0];
    }
    int64_t sizes[THC_MAX_DIMS], strides[THC_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (i == d0 || i == d1) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    sizes[n] = len;
    strides[n++] = t->strides[d0] + t->strides[d1];
    return view_of(t, off, n, sizes, strides);
}

THC_API thc_tensor *thc_flip_view(const thc_tensor *t, int ndim, const int *dims) {
    thc_tensor *r = thc_alias(t);
    if (!r) return NULL;
    int seen[THC_MAX_DIMS] = {0};
    for (int i = 0; i < ndim; i++) {
        int d = thc__wrap_dim(dims[i], t->ndim);
        if (d < 0 || seen[d]) {
            thc_tensor_release(r);
            if (d >= 0) thc__error(THC_ERR_RUNTIME, "dims has duplicates, "
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
