/* Tensor geometry without storage (th_meta.h): creation checks and every
 * view.  libTH's tensors and libTHC's wrap these results over their own
 * storages, so both libraries follow one set of rules and messages. */
#include "th_internal.h"

/* Every view is made here: its element count must fit in int64 and every
 * element it addresses must lie in the storage (expand and as_strided can
 * ask for anything; the views derived from an in-bounds tensor stay in
 * bounds, and this check keeps it so).  out may be t. */
static int set_view(th_meta *out, const th_meta *t, int64_t offset, int ndim,
                    const int64_t *sizes, const int64_t *strides) {
    int64_t n;
    if (th__checked_numel(ndim, sizes, &n) ||
        th__check_in_storage("view", ndim, sizes, strides, offset, t->dtype,
                             t->storage_nbytes))
        return th_last_status();
    /* written in place: sizes/strides are either locals of the caller or
       t's own arrays when out is t (then each copy is of itself) */
    out->dtype = t->dtype;
    out->storage_nbytes = t->storage_nbytes;
    out->offset = offset;
    out->ndim = ndim;
    out->flags = 0;
    if (sizes != out->sizes)
        for (int i = 0; i < ndim; i++) {
            out->sizes[i] = sizes[i];
            out->strides[i] = strides[i];
        }
    return TH_OK;
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

static void fill(th_meta *out, int64_t offset, int ndim, const int64_t *sizes,
                 const int64_t *strides, int dtype, int64_t nbytes) {
    out->offset = offset;
    out->ndim = ndim;
    out->dtype = dtype;
    out->flags = 0;
    out->storage_nbytes = nbytes;
    for (int i = 0; i < ndim; i++) {
        out->sizes[i] = sizes[i];
        out->strides[i] = strides[i];
    }
}

int th_meta_new(th_meta *out, int ndim, const int64_t *sizes,
                const int64_t *strides, int dtype) {
    if (check_shape(ndim, sizes, dtype) != TH_OK) return th_last_status();
    int64_t nbytes, cstrides[TH_MAX_DIMS];
    if (strides) {
        for (int i = 0; i < ndim; i++)
            if (strides[i] < 0)
                return th__error(TH_ERR_VALUE, "empty_strided: negative "
                                 "strides are not supported");
    } else {
        th__contiguous_strides(ndim, sizes, cstrides);
    }
    if (th__storage_nbytes(ndim, sizes, strides, dtype, &nbytes))
        return th_last_status();
    fill(out, 0, ndim, sizes, strides ? strides : cstrides, dtype, nbytes);
    return TH_OK;
}

int th_meta_on_storage(th_meta *out, int64_t nbytes, int64_t offset, int ndim,
                       const int64_t *sizes, const int64_t *strides,
                       int dtype) {
    int64_t n, cstrides[TH_MAX_DIMS];
    if (check_shape(ndim, sizes, dtype) != TH_OK ||
        th__checked_numel(ndim, sizes, &n) != TH_OK)
        return th_last_status();
    if (!strides) {
        th__contiguous_strides(ndim, sizes, cstrides);
        strides = cstrides;
    }
    if (th__check_in_storage("setStorage", ndim, sizes, strides, offset,
                             dtype, nbytes))
        return th_last_status();
    fill(out, offset, ndim, sizes, strides, dtype, nbytes);
    return TH_OK;
}

int th_meta_alias(th_meta *out, const th_meta *t) {
    return set_view(out, t, t->offset, t->ndim, t->sizes, t->strides);
}

static int64_t th_meta_numel(const th_meta *t) { return th__prod(t->ndim, t->sizes); }

static int th_meta_is_contiguous(const th_meta *t) {
    return th__is_contiguous(t->ndim, t->sizes, t->strides);
}

/* Resolves one -1 in a requested shape against numel. */
static int infer_shape(const th_meta *t, int ndim, const int64_t *in,
                       int64_t *out) {
    if (ndim < 0 || ndim > TH_MAX_DIMS)
        return th__error(TH_ERR_VALUE, "shape has %d dimensions, more than "
                         "the %d supported", ndim, TH_MAX_DIMS);
    int infer = -1, overflow = 0;
    int64_t prod = 1, numel = th_meta_numel(t);
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
static int view_strides(const th_meta *t, int ndim, const int64_t *sizes,
                        int64_t *strides) {
    int64_t numel = th_meta_numel(t);
    if (numel == 0 || th_meta_is_contiguous(t)) {
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
                /* set_view checks the result against the storage */
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

int th_meta_view(th_meta *out, const th_meta *t, int ndim,
                 const int64_t *sizes) {
    int64_t shape[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    if (infer_shape(t, ndim, sizes, shape)) return th_last_status();
    if (!view_strides(t, ndim, shape, strides))
        return th__error(TH_ERR_RUNTIME,
                         "view size is not compatible with input "
                         "tensor's size and stride (at least one "
                         "dimension spans across two contiguous "
                         "subspaces). Use .reshape(...) instead.");
    return set_view(out, t, t->offset, ndim, shape, strides);
}

int th_meta_reshape(th_meta *out, const th_meta *t, int ndim,
                    const int64_t *sizes, int *copy) {
    int64_t shape[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    if (infer_shape(t, ndim, sizes, shape)) return th_last_status();
    *copy = !view_strides(t, ndim, shape, strides);
    if (!*copy) return set_view(out, t, t->offset, ndim, shape, strides);
    /* the shape of a fresh contiguous copy */
    th__contiguous_strides(ndim, shape, strides);
    fill(out, 0, ndim, shape, strides, t->dtype, 0);
    return TH_OK;
}

int th_meta_transpose(th_meta *out, const th_meta *t, int d0, int d1) {
    if ((d0 = th__wrap_dim(d0, t->ndim)) < 0) return th_last_status();
    if ((d1 = th__wrap_dim(d1, t->ndim)) < 0) return th_last_status();
    if (th_meta_alias(out, t)) return th_last_status();
    if (out->ndim > 0) {  /* t may be out: swap through locals */
        int64_t s0 = out->sizes[d0], st0 = out->strides[d0];
        out->sizes[d0] = out->sizes[d1];
        out->strides[d0] = out->strides[d1];
        out->sizes[d1] = s0;
        out->strides[d1] = st0;
    }
    return TH_OK;
}

int th_meta_permute(th_meta *out, const th_meta *t, int ndim,
                    const int *dims) {
    if (ndim != t->ndim)
        return th__error(TH_ERR_RUNTIME,
                         "permute(sparse_coo): number of dimensions in "
                         "the tensor input does not match the length of "
                         "the desired ordering of dimensions i.e. input."
                         "dim() = %d is not equal to len(dims) = %d",
                         t->ndim, ndim);
    int seen[TH_MAX_DIMS] = {0};
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        int d = th__wrap_dim(dims[i], ndim);
        if (d < 0) return th_last_status();
        if (seen[d])
            return th__error(TH_ERR_RUNTIME,
                             "permute(): duplicate dims are not allowed.");
        seen[d] = 1;
        sizes[i] = t->sizes[d];
        strides[i] = t->strides[d];
    }
    return set_view(out, t, t->offset, ndim, sizes, strides);
}

int th_meta_narrow(th_meta *out, const th_meta *t, int dim, int64_t start,
                   int64_t length) {
    if (t->ndim == 0)
        return th__error(TH_ERR_RUNTIME,
                         "narrow() cannot be applied to a 0-dim tensor.");
    if ((dim = th__wrap_dim(dim, t->ndim)) < 0) return th_last_status();
    int64_t size = t->sizes[dim];
    if (start < -size || start > size)
        return th__error(TH_ERR_INDEX,
                         "start out of range (expected to be in range "
                         "of [%lld, %lld], but got %lld)",
                         (long long)-size, (long long)size, (long long)start);
    if (start < 0) start += size;
    if (length < 0 || length > size - start) /* start + length may wrap */
        return th__error(TH_ERR_RUNTIME,
                         "start (%lld) + length (%lld) exceeds dimension "
                         "size (%lld).", (long long)start,
                         (long long)length, (long long)size);
    int64_t stride = t->strides[dim];
    if (th_meta_alias(out, t)) return th_last_status();
    out->offset += start * stride;
    out->sizes[dim] = length;
    return TH_OK;
}

int th_meta_select(th_meta *out, const th_meta *t, int dim, int64_t index) {
    if (t->ndim == 0)
        return th__error(TH_ERR_INDEX,
                         "select() cannot be applied to a 0-dim tensor.");
    if ((dim = th__wrap_dim(dim, t->ndim)) < 0) return th_last_status();
    int64_t size = t->sizes[dim];
    if (index < -size || index >= size)
        return th__error(TH_ERR_INDEX,
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
    return set_view(out, t, t->offset + index * t->strides[dim], n, sizes,
                    strides);
}

int th_meta_slice(th_meta *out, const th_meta *t, int dim, int64_t start,
                  int64_t stop, int64_t step) {
    if (t->ndim == 0)
        return th__error(TH_ERR_INDEX,
                         "slice() cannot be applied to a 0-dim tensor.");
    if ((dim = th__wrap_dim(dim, t->ndim)) < 0) return th_last_status();
    if (step <= 0)
        return th__error(TH_ERR_VALUE, "step must be greater than zero");
    int64_t size = t->sizes[dim], stride = t->strides[dim];
    if (start < 0) start += size;
    if (stop < 0) stop += size;
    start = TH_MIN(TH_MAX(start, 0), size);
    stop = TH_MIN(TH_MAX(stop, start), size);
    int64_t len = stop == start ? 0 : (stop - start - 1) / step + 1, nstride;
    if (th__view_stride(stride, step, len, &nstride)) return th_last_status();
    if (th_meta_alias(out, t)) return th_last_status();
    out->strides[dim] = nstride;
    out->offset += start * stride;
    out->sizes[dim] = len;
    return TH_OK;
}

int th_meta_expand(th_meta *out, const th_meta *t, int ndim,
                   const int64_t *sizes) {
    char b1[256], b2[256];
    if (ndim < t->ndim)
        return th__error(TH_ERR_RUNTIME,
                         "expand(%s{%s}, size=%s): the number of sizes "
                         "provided (%d) must be greater or equal to the "
                         "number of dimensions in the tensor (%d)",
                         th_dtype_name(t->dtype),
                         th__shape_str(t->ndim, t->sizes, b1),
                         th__shape_str(ndim, sizes, b2), ndim, t->ndim);
    if (ndim > TH_MAX_DIMS)
        return th__error(TH_ERR_VALUE, "too many dimensions (%d)", ndim);
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
                return th__error(TH_ERR_RUNTIME,
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
                return th__error(TH_ERR_RUNTIME,
                                 "The expanded size of the tensor (%lld) "
                                 "isn't allowed in a leading, "
                                 "non-existing dimension %d",
                                 (long long)want, i);
            ns[i] = want;
            st[i] = 0;
        }
    }
    return set_view(out, t, t->offset, ndim, ns, st);
}

int th_meta_squeeze(th_meta *out, const th_meta *t, int dim) {
    if ((dim = th__wrap_dim(dim, t->ndim)) < 0) return th_last_status();
    if (t->ndim == 0 || t->sizes[dim] != 1) return th_meta_alias(out, t);
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (i == dim) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    return set_view(out, t, t->offset, n, sizes, strides);
}

int th_meta_squeeze_all(th_meta *out, const th_meta *t) {
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (t->sizes[i] == 1) continue;
        sizes[n] = t->sizes[i];
        strides[n++] = t->strides[i];
    }
    return set_view(out, t, t->offset, n, sizes, strides);
}

int th_meta_unsqueeze(th_meta *out, const th_meta *t, int dim) {
    if ((dim = th__wrap_dim(dim, t->ndim + 1)) < 0) return th_last_status();
    if (t->ndim >= TH_MAX_DIMS)
        return th__error(TH_ERR_VALUE, "too many dimensions (%d)",
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
    return set_view(out, t, t->offset, t->ndim + 1, sizes, strides);
}

int th_meta_unfold(th_meta *out, const th_meta *t, int dim, int64_t size,
                   int64_t step) {
    if ((dim = th__wrap_dim(dim, t->ndim)) < 0) return th_last_status();
    int64_t dsize = t->ndim ? t->sizes[dim] : 1;
    int64_t dstride = t->ndim ? t->strides[dim] : 1;
    if (size < 0 || size > dsize)
        return th__error(TH_ERR_RUNTIME,
                         "maximum size for tensor at dimension %d is "
                         "%lld but size is %lld", dim, (long long)dsize,
                         (long long)size);
    if (step <= 0)
        return th__error(TH_ERR_RUNTIME,
                         "step is %lld but must be > 0", (long long)step);
    if (t->ndim >= TH_MAX_DIMS)
        return th__error(TH_ERR_VALUE, "too many dimensions");
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        sizes[i] = t->sizes[i];
        strides[i] = t->strides[i];
    }
    int n = t->ndim;
    if (n) {
        sizes[dim] = (dsize - size) / step + 1;
        if (th__view_stride(dstride, step, sizes[dim], &strides[dim]))
            return th_last_status();
    }
    sizes[n] = size;
    strides[n] = dstride;
    return set_view(out, t, t->offset, n + 1, sizes, strides);
}

int th_meta_diagonal(th_meta *out, const th_meta *t, int64_t offset, int d0,
                     int d1) {
    if (t->ndim < 2)
        return th__error(TH_ERR_RUNTIME,
                         "diagonal dimensions requires ndim larger "
                         "than 1, got %d", t->ndim);
    if ((d0 = th__wrap_dim(d0, t->ndim)) < 0) return th_last_status();
    if ((d1 = th__wrap_dim(d1, t->ndim)) < 0) return th_last_status();
    if (d0 == d1)
        return th__error(TH_ERR_RUNTIME,
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
    return set_view(out, t, off, n, sizes, strides);
}

int th_meta_flip(th_meta *out, const th_meta *t, int ndim, const int *dims) {
    int seen[TH_MAX_DIMS] = {0};
    for (int i = 0; i < ndim; i++) {  /* checked first: out may be t */
        int d = th__wrap_dim(dims[i], t->ndim);
        if (d < 0) return th_last_status();
        if (seen[d])
            return th__error(TH_ERR_RUNTIME, "dims has duplicates, "
                             "original flip dims size=%d", ndim);
        seen[d] = 1;
    }
    if (th_meta_alias(out, t)) return th_last_status();
    for (int d = 0; d < out->ndim; d++) {
        if (!seen[d] || out->sizes[d] == 0) continue;
        out->offset += (out->sizes[d] - 1) * out->strides[d];
        out->strides[d] = -out->strides[d];
    }
    return TH_OK;
}
