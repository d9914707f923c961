/* Tensor lifetime and views: plain C, no device code.  A view's geometry
 * is libTH's (th_meta.h), wrapped over the device storage, so shapes,
 * strides, checks and messages are libTH's exactly. */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "thc_internal.h"

static void meta_of(const thc_tensor *t, th_meta *m) {
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

/* A tensor over s with geometry m (NULL when rc, m's status, failed). */
static thc_tensor *wrap_meta(thc_storage *s, int rc, const th_meta *m) {
    return rc ? NULL : thc__wrap(s, m->offset, m->ndim, m->sizes, m->strides, m->dtype);
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

/* A tensor over a new device storage of m's size. */
static thc_tensor *new_tensor(int rc, const th_meta *m) {
    if (rc) return NULL;
    thc_storage *s = thc__storage_new(m->storage_nbytes);
    if (!s) return NULL;
    thc_tensor *t = wrap_meta(s, THC_OK, m);
    thc_storage_release(s);
    return t;
}

int thc__check_dtype(int dtype) {
    if (dtype >= 0 && dtype < THC_NUM_DTYPES) return THC_OK;
    if (dtype >= 0 && dtype < TH_NUM_DTYPES)
        return thc__error(THC_ERR_NOT_IMPLEMENTED, "%s tensors are not supported by "
                          "ember-thc yet", th_dtype_name(dtype));
    return thc__error(THC_ERR_TYPE, "invalid dtype code %d", dtype);
}

/* libTH's dtype codes past THC's (complex64, complex128) have no kernels
 * here: refused at creation, so no kernel ever sees one */
static int unsupported_dtype(int dtype) {
    if (dtype < THC_NUM_DTYPES || dtype >= TH_NUM_DTYPES) return 0; /* others: th_meta */
    return thc__check_dtype(dtype) != THC_OK;
}

THC_API thc_tensor *thc_empty(int ndim, const int64_t *sizes, int dtype) {
    if (unsupported_dtype(dtype)) return NULL;
    th_meta m;
    return new_tensor(th_meta_new(&m, ndim, sizes, NULL, dtype), &m);
}

THC_API thc_tensor *thc_empty_strided(int ndim, const int64_t *sizes,
                                      const int64_t *strides, int dtype) {
    if (unsupported_dtype(dtype)) return NULL;
    th_meta m;
    return new_tensor(th_meta_new(&m, ndim, sizes, strides, dtype), &m);
}

THC_API thc_tensor *thc_tensor_from_storage(thc_storage *s, int64_t offset, int ndim,
                                            const int64_t *sizes, const int64_t *strides,
                                            int dtype) {
    if (!s) return thc__error_null(THC_ERR_VALUE, "storage is NULL");
    if (unsupported_dtype(dtype)) return NULL;
    th_meta m;
    return wrap_meta(s, th_meta_on_storage(&m, s->nbytes, offset, ndim, sizes,
                                           strides, dtype), &m);
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
    return th_strides_are_contiguous(t->ndim, t->sizes, t->strides);
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

/* ---- views ----------------------------------------------------------- */
#define VIEW(call) /* t's view by th_meta's `call` on m, t's geometry */ \
    th_meta m;                                                         \
    meta_of(t, &m);                                                    \
    return wrap_meta(t->storage, call, &m)

THC_API thc_tensor *thc_alias(const thc_tensor *t) { VIEW(th_meta_alias(&m, &m)); }

THC_API thc_tensor *thc_view(const thc_tensor *t, int ndim, const int64_t *sizes) {
    VIEW(th_meta_view(&m, &m, ndim, sizes));
}

THC_API thc_tensor *thc_reshape(const thc_tensor *t, int ndim, const int64_t *sizes) {
    th_meta m;
    int copy;
    meta_of(t, &m);
    if (th_meta_reshape(&m, &m, ndim, sizes, &copy)) return NULL;
    if (!copy) return wrap_meta(t->storage, THC_OK, &m);
    thc_tensor *c = thc_clone(t);
    if (!c) return NULL;
    m.offset = c->offset;
    thc_tensor *r = wrap_meta(c->storage, THC_OK, &m);
    thc_tensor_release(c);
    return r;
}

THC_API thc_tensor *thc_as_strided(const thc_tensor *t, int ndim, const int64_t *sizes,
                                   const int64_t *strides, int64_t offset) {
    if (offset < 0) offset = t->offset;
    return thc_tensor_from_storage(t->storage, offset, ndim, sizes, strides, t->dtype);
}

THC_API thc_tensor *thc_transpose(const thc_tensor *t, int d0, int d1) {
    VIEW(th_meta_transpose(&m, &m, d0, d1));
}

THC_API thc_tensor *thc_permute(const thc_tensor *t, int ndim, const int *dims) {
    VIEW(th_meta_permute(&m, &m, ndim, dims));
}

THC_API thc_tensor *thc_narrow(const thc_tensor *t, int dim, int64_t start, int64_t length) {
    VIEW(th_meta_narrow(&m, &m, dim, start, length));
}

THC_API thc_tensor *thc_select(const thc_tensor *t, int dim, int64_t index) {
    VIEW(th_meta_select(&m, &m, dim, index));
}

THC_API thc_tensor *thc_slice(const thc_tensor *t, int dim, int64_t start, int64_t stop,
                              int64_t step) {
    VIEW(th_meta_slice(&m, &m, dim, start, stop, step));
}

THC_API thc_tensor *thc_expand(const thc_tensor *t, int ndim, const int64_t *sizes) {
    VIEW(th_meta_expand(&m, &m, ndim, sizes));
}

thc_tensor *thc__expand_to(const thc_tensor *t, int ndim, const int64_t *sizes) {
    return thc_expand(t, ndim, sizes);
}

THC_API int thc_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b,
                                 int64_t *out) {
    return th_broadcast_shapes(na, a, nb, b, out);
}

THC_API thc_tensor *thc_squeeze(const thc_tensor *t, int dim) {
    VIEW(th_meta_squeeze(&m, &m, dim));
}

THC_API thc_tensor *thc_squeeze_all(const thc_tensor *t) { VIEW(th_meta_squeeze_all(&m, &m)); }

THC_API thc_tensor *thc_unsqueeze(const thc_tensor *t, int dim) {
    VIEW(th_meta_unsqueeze(&m, &m, dim));
}

THC_API thc_tensor *thc_unfold(const thc_tensor *t, int dim, int64_t size, int64_t step) {
    VIEW(th_meta_unfold(&m, &m, dim, size, step));
}

THC_API thc_tensor *thc_diagonal(const thc_tensor *t, int64_t offset, int d0, int d1) {
    VIEW(th_meta_diagonal(&m, &m, offset, d0, d1));
}

THC_API thc_tensor *thc_flip_view(const thc_tensor *t, int ndim, const int *dims) {
    VIEW(th_meta_flip(&m, &m, ndim, dims));
}
