// Indexing on the device: index_select, gather, scatter (set and sum),
// index_add/copy/fill, masked_fill, masked_select, nonzero, cumsum and
// cumprod.  Indices are checked on the device: a kernel records the first
// out-of-range index in a two-element flag tensor, read back afterwards,
// and skips the write.  Sums into shared targets use atomics (1- and
// 2-byte values through their 4-byte word).
#include "ops.cuh"

using namespace thc;

namespace {

// The walk of scatter/gather: `sizes` is the iteration shape; the target
// (self or input) steps by tstr except along `dim`, where the index picks
// the position.
// How an op reads an index, as PyTorch: negative entries wrap for some ops
// and are refused (each with its own wording) by others.
enum { IDX_WRAP = 0, IDX_GATHER = 1, IDX_SELECT = 2, IDX_COPY = 3 };

struct SgGeom {
    int32_t ndim, dim, idx_mode;   // idx_mode: IDX_*
    int64_t dim_size, dim_stride;
    int64_t sizes[THC_MAX_DIMS], tstr[THC_MAX_DIMS], istr[THC_MAX_DIMS], ostr[THC_MAX_DIMS];
    THC_HD void at(int64_t i, int64_t *t, int64_t *ix, int64_t *o) const {
        *t = *ix = *o = 0;
        for (int d = ndim - 1; d >= 0; d--) {
            int64_t s = sizes[d], k = i % s;
            i /= s;
            if (d != dim) *t += k * tstr[d];
            *ix += k * istr[d];
            *o += k * ostr[d];
        }
    }
};

// the index at `ix` made non-negative, or -1 after recording it as bad
THC_HD inline int64_t read_index(const void *index, int index_dtype, int64_t ix, int64_t size,
                                 int mode, int64_t *flag) {
    int64_t j = index_dtype == THC_INT32 ? ((const int32_t *)index)[ix]
                                         : ((const int64_t *)index)[ix];
    if (j < (mode == IDX_WRAP ? -size : 0) || j >= size) {
        if (flag[0] == 0) {   // a benign race: some bad index is reported
            flag[0] = 1;
            flag[1] = j;
        }
        return -1;
    }
    return j < 0 ? j + size : j;
}

template <typename T> struct GatherFn {
    T *out;
    const T *src;
    const void *index;
    int index_dtype;
    int64_t *flag;
    SgGeom g;
    THC_HD void operator()(int64_t i) const {
        int64_t t, ix, o;
        g.at(i, &t, &ix, &o);
        int64_t j = read_index(index, index_dtype, ix, g.dim_size, g.idx_mode, flag);
        if (j >= 0) out[o] = src[t + j * g.dim_stride];
    }
};

template <typename T> struct ScatterFn {
    T *self;
    In<T> src;   // defined in the element-wise file's pattern: pointer or value
    const void *index;
    int index_dtype;
    int64_t *flag;
    int reduce;   // thc_scatter_reduce: NONE, SUM, PROD, AMAX or AMIN
    T alpha;
    SgGeom g;
    THC_HD void operator()(int64_t i) const {
        int64_t t, ix, o;
        g.at(i, &t, &ix, &o);
        int64_t j = read_index(index, index_dtype, ix, g.dim_size, g.idx_mode, flag);
        if (j < 0) return;
        T v = src.p ? src.p[o] : src.s, *p = self + t + j * g.dim_stride;
        if (reduce == THC_SCATTER_NONE) *p = v;
        else if (reduce == THC_SCATTER_SUM) atomic_add(p, (T)(alpha * v));
        else atomic_apply(p, ScatterCombine<T>{reduce, v});
    }
};

int check_index(const char *op, const thc_tensor *index) {
    if (thc__check_device(op, "index", index)) return thc_last_status();
    if (index->dtype != THC_INT64 && index->dtype != THC_INT32)
        return thc__error(THC_ERR_TYPE, "%s(): Expected dtype int64 or int32 for index, but got "
                          "%s", op, thc__dtype_title(index->dtype));
    return THC_OK;
}

int ne_dim(const thc_tensor *t) { return t->ndim ? t->ndim : 1; }
int64_t ne_size(const thc_tensor *t, int d) { return t->ndim ? t->sizes[d] : 1; }
int64_t ne_stride(const thc_tensor *t, int d) { return t->ndim ? t->strides[d] : 0; }

// the flag tensor (zeroed), and its check after the kernel
thc_tensor *new_flag(void) {
    int64_t two = 2;
    thc_tensor *f = thc_empty(1, &two, THC_INT64);
    if (f && thc_zero(f)) {
        thc_tensor_release(f);
        return NULL;
    }
    return f;
}

int check_flag(thc_tensor *flag, int dim, int64_t size, int mode) {   // keeps the flag
    int64_t h[2];
    int rc = thc_copy_to_host(h, flag);
    if (rc) return rc;
    if (!h[0]) return THC_OK;
    if (mode == IDX_SELECT) return thc__error(THC_ERR_INDEX, "index out of range in self");
    return thc__error(mode == IDX_GATHER ? THC_ERR_RUNTIME : THC_ERR_INDEX,
                      "%sindex %lld is out of bounds for dimension %d with size %lld",
                      mode == IDX_COPY ? "index_copy_(): " : "", (long long)h[1], dim,
                      (long long)size);
}

// geometry over `iter` (the iteration shape: index's for gather/scatter)
SgGeom sg_geom(const thc_tensor *target, int dim, const thc_tensor *iter,
               const int64_t *istr, const thc_tensor *other) {
    SgGeom g;
    g.ndim = iter->ndim;
    g.dim = dim;
    g.idx_mode = IDX_WRAP;
    g.dim_size = ne_size(target, dim);
    g.dim_stride = ne_stride(target, dim);
    for (int d = 0; d < THC_MAX_DIMS; d++) {
        bool in = d < iter->ndim;
        g.sizes[d] = in ? iter->sizes[d] : 1;
        g.tstr[d] = in && d < target->ndim ? target->strides[d] : 0;
        g.istr[d] = in ? istr[d] : 0;
        g.ostr[d] = in && other && d < other->ndim ? other->strides[d] : 0;
    }
    return g;
}

// reads every index a scatter will use, recording a bad one, writing nothing
struct IndexCheckFn {
    const void *index;
    int index_dtype;
    int64_t *flag;
    SgGeom g;
    THC_HD void operator()(int64_t i) const {
        int64_t t, ix, o;
        g.at(i, &t, &ix, &o);
        read_index(index, index_dtype, ix, g.dim_size, g.idx_mode, flag);
    }
};

template <typename T>
int run_scatter(thc_tensor *self, const thc_tensor *src, const thc_tensor *index, SgGeom g,
                int64_t n, int reduce, T alpha, int64_t *flag, const char *what) {
    ScatterFn<T> f{(T *)thc__ptr(self), operand<T>(src), thc__ptr(index), index->dtype, flag,
                   reduce, alpha, g};
    return for_each(what, n, f, thc__stream());
}

// Whether t (an operand read while self is written) shares self's memory:
// its threads could then read what others of the same launch write, so the
// writers take a copy of it, as if every operand were read first (libTH's
// result).
bool shares_memory(const thc_tensor *self, const thc_tensor *t) {
    return !thc__on_host(t) && t->storage == self->storage;
}

// self[..., index[i], ...] (op)= src[i] walking `iter`'s shape; src is
// converted to self's dtype first (a host scalar stays a value)
int scatter_walk(const char *what, thc_tensor *self, int dim, const thc_tensor *index,
                 const int64_t *istr, const thc_tensor *iter, const thc_tensor *src, int reduce,
                 const thc_tensor *alpha, int mode) {
    thc_tensor *s = thc__cast(src, self->dtype);
    if (s && shares_memory(self, s)) {
        thc_tensor *copy = thc_clone(s);
        thc_tensor_release(s);
        s = copy;
    }
    if (!s) return thc_last_status();
    thc_tensor *flag = new_flag();
    int rc = flag ? THC_OK : thc_last_status();
    SgGeom g = sg_geom(self, dim, iter, istr, thc__on_host(s) ? NULL : s);
    g.idx_mode = mode;
    int64_t n = thc_numel(iter);
    if (!rc && n > 0) {   // every index checked first: a bad one leaves self as it was
        rc = for_each(what, n, IndexCheckFn{thc__ptr(index), index->dtype,
                                            (int64_t *)thc__ptr(flag), g}, thc__stream());
        if (!rc) rc = check_flag(flag, dim, g.dim_size, mode);
    }
    if (!rc && n > 0) {
        int64_t *fp = (int64_t *)thc__ptr(flag);
        switch (self->dtype) {
            THC_CASES_COMPUTE(rc = run_scatter<scalar_t>(
                                  self, s, index, g, n, reduce,
                                  alpha ? host_value<scalar_t>(alpha) : convert<scalar_t>(1),
                                  fp, what))
        default:
            rc = thc__error(THC_ERR_NOT_IMPLEMENTED, "%s: %s tensors are not supported on the "
                            "GPU yet", what, thc_dtype_name(self->dtype));
        }
    }
    thc_tensor_release(s);
    thc_tensor_release(flag);
    if (!rc) thc__bump_version(self);
    return rc;
}

}  // namespace

// ---- gather and index_select ------------------------------------------------------
namespace {

thc_tensor *gather_walk(const char *what, const thc_tensor *a, int dim, const thc_tensor *index,
                        const int64_t *istr, int out_ndim, const int64_t *out_sizes, int mode) {
    thc_tensor *out = thc_empty(out_ndim, out_sizes, a->dtype);
    if (!out || thc_numel(out) == 0) return out;
    thc_tensor *flag = new_flag();
    if (!flag) {
        thc_tensor_release(out);
        return NULL;
    }
    SgGeom g = sg_geom(a, dim, out, istr, out);
    g.idx_mode = mode;
    int rc = THC_OK;
    int64_t *fp = (int64_t *)thc__ptr(flag);
    switch (a->dtype) {
        THC_CASES_ALL(rc = for_each(what, thc_numel(out),
                                    GatherFn<scalar_t>{(scalar_t *)thc__ptr(out),
                                                       (const scalar_t *)thc__ptr(a),
                                                       thc__ptr(index), index->dtype, fp, g},
                                    thc__stream()))
    }
    int frc = check_flag(flag, dim, g.dim_size, mode);
    thc_tensor_release(flag);
    if (!rc) rc = frc;
    if (rc) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}

}  // namespace

extern "C" THC_API thc_tensor *thc_gather(const thc_tensor *a, int dim, const thc_tensor *index) {
    if (thc__check_device("gather", "input", a) || check_index("gather", index)) return NULL;
    if ((dim = thc__wrap_dim(dim, a->ndim)) < 0) return NULL;
    if (ne_dim(index) != ne_dim(a))
        return (thc_tensor *)thc__error_null(THC_ERR_RUNTIME, "Index tensor must have the same "
                                             "number of dimensions as input tensor");
    char b1[256], b2[256];
    for (int d = 0; d < a->ndim; d++)
        if (d != dim && index->sizes[d] > a->sizes[d])
            return (thc_tensor *)thc__error_null(
                THC_ERR_RUNTIME, "Size does not match at dimension %d expected index %s to be "
                "smaller than self %s apart from dimension %d", d,
                thc__shape_str(index->ndim, index->sizes, b1),
                thc__shape_str(a->ndim, a->sizes, b2), dim);
    return gather_walk("gather", a, dim, index, index->strides, index->ndim, index->sizes,
                       IDX_GATHER);
}

extern "C" THC_API thc_tensor *thc_index_select(const thc_tensor *a, int dim,
                                                const thc_tensor *index) {
    if (thc__check_device("index_select", "input", a) || check_index("index_select", index))
        return NULL;
    if ((dim = thc__wrap_dim(dim, a->ndim)) < 0) return NULL;
    if (index->ndim > 1)
        return (thc_tensor *)thc__error_null(THC_ERR_INDEX, "index_select(): Index is supposed "
                                             "to be a vector");
    int64_t sizes[THC_MAX_DIMS], istr[THC_MAX_DIMS] = {0};
    int nd = a->ndim;
    for (int d = 0; d < nd; d++) sizes[d] = a->sizes[d];
    if (nd == 0) {   // a 0-d input: the result keeps the index's shape
        int64_t one = 1;
        thc_tensor *v = thc_view(a, 1, &one);
        if (!v) return NULL;
        int64_t n = thc_numel(index);
        istr[0] = index->ndim ? index->strides[0] : 0;
        thc_tensor *r = gather_walk("index_select", v, 0, index, istr, 1, &n, IDX_SELECT);
        thc_tensor_release(v);
        if (r && index->ndim == 0) {
            thc_tensor *s = thc_view(r, 0, NULL);
            thc_tensor_release(r);
            r = s;
        }
        return r;
    }
    sizes[dim] = thc_numel(index);
    istr[dim] = index->ndim ? index->strides[0] : 0;
    return gather_walk("index_select", a, dim, index, istr, nd, sizes, IDX_SELECT);
}

// ---- scatter family --------------------------------------------------------------
namespace {

// a host scalar of `dtype`: 1 for prod, the lowest value for amax, the
// highest for amin
thc_tensor *scatter_identity(int reduce, int dtype) {
    if (reduce == THC_SCATTER_PROD) return thc_scalar_int64(1, dtype);
    bool hi = reduce == THC_SCATTER_AMIN;
    if (thc_dtype_is_floating(dtype)) return thc_scalar_double(hi ? INFINITY : -INFINITY, dtype);
    int64_t lo_v = 0, hi_v = 1;   // bool
    switch (dtype) {
    case THC_INT8: lo_v = INT8_MIN; hi_v = INT8_MAX; break;
    case THC_UINT8: lo_v = 0; hi_v = UINT8_MAX; break;
    case THC_INT16: lo_v = INT16_MIN; hi_v = INT16_MAX; break;
    case THC_INT32: lo_v = INT32_MIN; hi_v = INT32_MAX; break;
    case THC_INT64: lo_v = INT64_MIN; hi_v = INT64_MAX; break;
    default: break;
    }
    return thc_scalar_int64(hi ? hi_v : lo_v, dtype);
}

}  // namespace

extern "C" THC_API int thc_scatter_(thc_tensor *self, int dim, const thc_tensor *index,
                                    const thc_tensor *src, int reduce, int include_self) {
    if (thc__check_device("scatter", "self", self) || check_index("scatter", index))
        return thc_last_status();
    if (!src) return thc__error(THC_ERR_VALUE, "scatter: src is NULL");
    if (shares_memory(self, index)) {   // e.g. self.scatter_(0, self, ...)
        thc_tensor *copy = thc_clone(index);
        int rc = copy ? thc_scatter_(self, dim, copy, src, reduce, include_self)
                      : thc_last_status();
        thc_tensor_release(copy);
        return rc;
    }
    if (!thc__on_host(src) && thc__check_device("scatter", "src", src)) return thc_last_status();
    if ((dim = thc__wrap_dim(dim, self->ndim)) < 0) return thc_last_status();
    if (reduce == THC_SCATTER_MEAN)
        return thc__error(THC_ERR_NOT_IMPLEMENTED, "scatter_reduce: reduce='mean' is composed "
                          "from sums and counts by the caller (ember.thc)");
    if (reduce < THC_SCATTER_NONE || reduce > THC_SCATTER_AMIN)
        return thc__error(THC_ERR_VALUE, "scatter(): unknown reduce code %d", reduce);
    if (ne_dim(index) != ne_dim(self))
        return thc__error(THC_ERR_RUNTIME, "Index tensor must have the same number of dimensions "
                          "as self tensor");
    bool host = thc__on_host(src);
    if (!host && ne_dim(src) != ne_dim(index))
        return thc__error(THC_ERR_RUNTIME, "Index tensor must have the same number of dimensions "
                          "as src tensor");
    if (!host && src->dtype != self->dtype)
        return thc__error(THC_ERR_TYPE, "scatter(): Expected self.dtype to be equal to "
                          "src.dtype");
    char b1[256], b2[256], b3[256];
    for (int d = 0; d < self->ndim; d++) {
        bool bad = d != dim && index->sizes[d] > self->sizes[d];
        bad = bad || (!host && index->sizes[d] > src->sizes[d]);
        if (bad)
            return thc__error(THC_ERR_RUNTIME, "Expected index %s to be smaller than self %s "
                              "apart from dimension %d%s%s",
                              thc__shape_str(index->ndim, index->sizes, b1),
                              thc__shape_str(self->ndim, self->sizes, b2), dim,
                              host ? "" : " and to be smaller size than src ",
                              host ? "" : thc__shape_str(src->ndim, src->sizes, b3));
    }
    if (reduce > THC_SCATTER_SUM && !include_self && thc_numel(index) > 0) {
        // every target an index names starts from the reduction's identity
        thc_tensor *id = scatter_identity(reduce, self->dtype);
        int rc = id ? scatter_walk("scatter", self, dim, index, index->strides, index, id,
                                   THC_SCATTER_NONE, NULL, IDX_GATHER)
                    : thc_last_status();
        thc_tensor_release(id);
        if (rc) return rc;
    }
    return scatter_walk("scatter", self, dim, index, index->strides, index, src, reduce, NULL,
                        IDX_GATHER);
}

namespace {

// index_add/copy/fill: `index` (a vector) picks positions along dim of self
// for the slices of `iter` (src, or self's shape with dim = len(index))
int index_family(const char *what, thc_tensor *self, int dim, const thc_tensor *index,
                 const thc_tensor *src, int add, const thc_tensor *alpha, int mode) {
    if (thc__check_device(what, "self", self) || check_index(what, index))
        return thc_last_status();
    if (!src) return thc__error(THC_ERR_VALUE, "%s: source is NULL", what);
    if (shares_memory(self, index)) {
        thc_tensor *copy = thc_clone(index);
        int rc = copy ? index_family(what, self, dim, copy, src, add, alpha, mode)
                      : thc_last_status();
        thc_tensor_release(copy);
        return rc;
    }
    if (!thc__on_host(src) && thc__check_device(what, "source", src)) return thc_last_status();
    if ((dim = thc__wrap_dim(dim, self->ndim)) < 0) return thc_last_status();
    if (index->ndim > 1)
        return thc__error(THC_ERR_INDEX, "%s(): Index is supposed to be a vector", what);
    int64_t n = thc_numel(index);
    thc_tensor iter = *self;
    if (iter.ndim == 0) {
        iter.ndim = 1;
        iter.sizes[0] = 1;
        iter.strides[0] = 0;
    }
    iter.sizes[dim] = n;
    const thc_tensor *it = &iter;
    if (!thc__on_host(src)) {
        char b1[256], b2[256];
        bool ok = ne_dim(src) == ne_dim(self);
        for (int d = 0; ok && d < ne_dim(self); d++) ok = ne_size(src, d) == iter.sizes[d];
        if (!ok)
            return thc__error(THC_ERR_RUNTIME, "%s(): Source/destination tensor must have same "
                              "slice shapes; source %s, destination %s, index length %lld", what,
                              thc__shape_str(src->ndim, src->sizes, b1),
                              thc__shape_str(self->ndim, self->sizes, b2), (long long)n);
        if (src->dtype != self->dtype)
            return thc__error(THC_ERR_RUNTIME, "%s(): self (%s) and source (%s) must have the "
                              "same scalar type", what, thc__dtype_title(self->dtype),
                              thc__dtype_title(src->dtype));
        it = src->ndim ? src : &iter;
    }
    int64_t istr[THC_MAX_DIMS] = {0};
    istr[dim] = index->ndim ? index->strides[0] : 0;
    thc_tensor target = *self;   // a 0-d self walks as a vector of one
    if (target.ndim == 0) {
        target.ndim = 1;
        target.sizes[0] = 1;
        target.strides[0] = 0;
    }
    int rc = scatter_walk(what, &target, dim, index, istr, it, src,
                          add ? THC_SCATTER_SUM : THC_SCATTER_NONE, alpha, mode);
    return rc;
}

}  // namespace

extern "C" THC_API int thc_index_add_(thc_tensor *self, int dim, const thc_tensor *index,
                                      const thc_tensor *src, const thc_tensor *alpha) {
    return index_family("index_add_", self, dim, index, src, 1, alpha, IDX_SELECT);
}

extern "C" THC_API int thc_index_copy_(thc_tensor *self, int dim, const thc_tensor *index,
                                       const thc_tensor *src) {
    return index_family("index_copy_", self, dim, index, src, 0, NULL, IDX_COPY);
}

extern "C" THC_API int thc_index_fill_(thc_tensor *self, int dim, const thc_tensor *index,
                                       const thc_tensor *value) {
    if (value && !thc__on_host(value) && thc_numel(value) != 1)
        return thc__error(THC_ERR_RUNTIME, "index_fill_ only supports a 0-dimensional value "
                          "tensor, but got tensor with %d dimension(s).", value->ndim);
    thc_tensor *v = value && !thc__on_host(value)
                        ? (thc_dtype_is_floating(value->dtype)
                               ? thc_scalar_double(thc__scalar_double(value), value->dtype)
                               : thc_scalar_int64(thc__scalar_int64(value), value->dtype))
                        : NULL;
    int rc = index_family("index_fill_", self, dim, index, v ? v : value, 0, NULL, IDX_WRAP);
    thc_tensor_release(v);
    return rc;
}

// ---- masked fill ------------------------------------------------------------------
namespace {

template <typename T> struct MaskedFillFn {
    T *self;
    const bool *mask;
    T value;
    Offsets g;
    THC_HD void operator()(int64_t i) const {
        int64_t off[2];
        g.at<2>(i, off);
        if (mask[off[1]]) self[off[0]] = value;
    }
};

}  // namespace

extern "C" THC_API int thc_masked_fill_(thc_tensor *self, const thc_tensor *mask,
                                        const thc_tensor *value) {
    if (thc__check_device("masked_fill_", "self", self) ||
        thc__check_device("masked_fill_", "mask", mask))
        return thc_last_status();
    if (mask->dtype != THC_BOOL)
        return thc__error(THC_ERR_RUNTIME, "masked_fill_ only supports boolean masks, but got "
                          "mask with dtype %s", thc_dtype_name(mask->dtype));
    if (shares_memory(self, mask)) {   // e.g. a bool tensor masked by a view of itself
        thc_tensor *copy = thc_clone(mask);
        int rc = copy ? thc_masked_fill_(self, copy, value) : thc_last_status();
        thc_tensor_release(copy);
        return rc;
    }
    if (!value || thc_numel(value) != 1)
        return thc__error(THC_ERR_RUNTIME, "masked_fill_ only supports a 0-dimensional value "
                          "tensor, but got tensor with %d dimension(s).", value ? value->ndim : 0);
    int64_t shape[THC_MAX_DIMS];
    int nd = thc_broadcast_shapes(self->ndim, self->sizes, mask->ndim, mask->sizes, shape);
    if (nd < 0) return thc_last_status();
    char b1[256], b2[256];
    bool same = nd == self->ndim;
    for (int d = 0; same && d < nd; d++) same = shape[d] == self->sizes[d];
    if (!same)
        return thc__error(THC_ERR_RUNTIME, "masked_fill_: the mask %s does not broadcast to self "
                          "%s", thc__shape_str(mask->ndim, mask->sizes, b1),
                          thc__shape_str(self->ndim, self->sizes, b2));
    const thc_tensor *ops[2] = {self, mask};
    thc__geom g;
    thc__geom_init(&g, self->ndim, self->sizes, 2, ops);
    g.offsets[0] = g.offsets[1] = 0;
    int rc = THC_OK;
    switch (self->dtype) {
        THC_CASES_ALL(rc = for_each("masked_fill_", g.numel,
                                    MaskedFillFn<scalar_t>{(scalar_t *)thc__ptr(self),
                                                           (const bool *)thc__ptr(mask),
                                                           host_value<scalar_t>(value),
                                                           Offsets::of(g)},
                                    thc__stream()))
    }
    if (!rc) thc__bump_version(self);
    return rc;
}

// ---- nonzero and masked_select: a compaction -------------------------------------
// The running count of set elements (an inclusive scan) gives each set
// element its output row; then a thread per element writes its own row.
namespace {

struct NonzeroFn {
    int64_t *out;
    const bool *nz;      // a contiguous bool tensor: element != 0
    const int64_t *pos;  // inclusive running count of nz
    int ndim;
    int64_t sizes[THC_MAX_DIMS];
    THC_HD void operator()(int64_t i) const {
        if (!nz[i]) return;
        int64_t row = pos[i] - 1, rest = i;
        for (int d = ndim - 1; d >= 0; d--) {
            out[row * ndim + d] = rest % sizes[d];
            rest /= sizes[d];
        }
    }
};

template <typename T> struct SelectFn {
    T *out;
    const T *a;          // contiguous, broadcast to the mask's shape already
    const bool *m;       // contiguous
    const int64_t *pos;  // inclusive running count of m
    THC_HD void operator()(int64_t i) const {
        if (m[i]) out[pos[i] - 1] = a[i];
    }
};

// the inclusive running count of the contiguous bool tensor `flags`, as a
// flat int64 tensor; *count: its last value
thc_tensor *running_count(const thc_tensor *flags, int64_t *count) {
    int64_t n = thc_numel(flags);
    thc_tensor *flat = thc_view(flags, 1, &n);
    thc_tensor *pos = flat ? thc_cumsum(flat, 0, THC_INT64) : NULL;
    thc_tensor_release(flat);
    *count = 0;
    if (pos && n > 0 && thc_get_int64(pos, n - 1, count)) {
        thc_tensor_release(pos);
        return NULL;
    }
    return pos;
}

// a contiguous bool tensor of (a != 0)
thc_tensor *nonzero_mask(const thc_tensor *a) {
    thc_tensor *zero = thc_scalar_int64(0, THC_INT64);
    thc_tensor *nz = zero ? thc_binary(THC_NE, a, zero) : NULL;
    thc_tensor_release(zero);
    return nz;
}

}  // namespace

extern "C" THC_API thc_tensor *thc_nonzero(const thc_tensor *a) {
    if (thc__check_device("nonzero", "input", a)) return NULL;
    int64_t count = 0;
    thc_tensor *nz = nonzero_mask(a), *pos = nz ? running_count(nz, &count) : NULL;
    int64_t sizes[2] = {count, a->ndim};
    thc_tensor *out = pos ? thc_empty(2, sizes, THC_INT64) : NULL;
    int rc = out ? THC_OK : thc_last_status();
    if (!rc && count > 0 && a->ndim > 0) {
        NonzeroFn f{(int64_t *)thc__ptr(out), (const bool *)thc__ptr(nz),
                    (const int64_t *)thc__ptr(pos), a->ndim, {0}};
        for (int d = 0; d < a->ndim; d++) f.sizes[d] = a->sizes[d];
        rc = for_each("nonzero", thc_numel(a), f, thc__stream());
    }
    thc_tensor_release(nz);
    thc_tensor_release(pos);
    if (rc) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}

extern "C" THC_API thc_tensor *thc_masked_select(const thc_tensor *a, const thc_tensor *mask) {
    if (thc__check_device("masked_select", "input", a) ||
        thc__check_device("masked_select", "mask", mask))
        return NULL;
    if (mask->dtype != THC_BOOL)
        return (thc_tensor *)thc__error_null(THC_ERR_RUNTIME, "masked_select: expected BoolTensor "
                                             "for mask");
    int64_t shape[THC_MAX_DIMS];
    int nd = thc_broadcast_shapes(a->ndim, a->sizes, mask->ndim, mask->sizes, shape);
    if (nd < 0) return NULL;
    thc_tensor *ae = thc_expand(a, nd, shape), *me = ae ? thc_expand(mask, nd, shape) : NULL;
    thc_tensor *ac = me ? thc_contiguous(ae) : NULL, *mc = ac ? thc_contiguous(me) : NULL;
    int64_t count = 0;
    thc_tensor *pos = mc ? running_count(mc, &count) : NULL;
    thc_tensor *out = pos ? thc_empty(1, &count, a->dtype) : NULL;
    int rc = out ? THC_OK : thc_last_status();
    if (!rc && count > 0) switch (a->dtype) {
        THC_CASES_ALL(rc = for_each("masked_select", thc_numel(mc),
                                    SelectFn<scalar_t>{(scalar_t *)thc__ptr(out),
                                                       (const scalar_t *)thc__ptr(ac),
                                                       (const bool *)thc__ptr(mc),
                                                       (const int64_t *)thc__ptr(pos)},
                                    thc__stream()))
    }
    thc_tensor *all[] = {ae, me, ac, mc, pos};
    for (thc_tensor *t : all) thc_tensor_release(t);
    if (rc) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}

// ---- cumulative sums and products -------------------------------------------------
// Short lines (up to kScanSerialMax) scan on a thread each, in order.  Long
// ones (a single flattened row is common: unique, nonzero) reduce-then-scan:
// a thread per chunk of SCAN_CHUNK sums its chunk, the chunk totals are
// scanned (the same way, recursively), and a thread per chunk scans it again
// from its offset.
// Accumulation is in double / int64 throughout.
namespace {

constexpr int64_t SCAN_CHUNK = 256;

template <typename T> struct ScanAcc {
    typedef typename std::conditional<std::is_floating_point<T>::value, double, int64_t>::type A;
};

// chunk c of line `line` (c = 0 and one chunk of len: the whole line): out =
// the running sums / products starting from `init`; returns the total
template <typename T> struct ScanChunk {
    typedef typename ScanAcc<T>::A A;
    THC_HD static A run(T *out, const T *in, int64_t line, int64_t c, int64_t chunk,
                        int64_t len, int64_t inner, int prod, A init) {
        int64_t base = (line / inner) * len * inner + line % inner;
        int64_t k1 = (c + 1) * chunk < len ? (c + 1) * chunk : len;
        A acc = init;
        for (int64_t k = c * chunk; k < k1; k++) {
            A v = (A)in[base + k * inner];
            acc = prod ? (A)(acc * v) : (A)(acc + v);
            if (out) out[base + k * inner] = (T)acc;
        }
        return acc;
    }
};

// one line per thread
template <typename T> struct ScanFn {
    typedef typename ScanAcc<T>::A A;
    T *out;        // contiguous, a's shape
    const T *in;   // contiguous
    int64_t len, inner;
    int prod;
    THC_HD void operator()(int64_t line) const {
        ScanChunk<T>::run(out, in, line, 0, len, len, inner, prod, prod ? A(1) : A(0));
    }
};

// pass 1: the total of each chunk, sums[line * nch + c]
template <typename T> struct ChunkTotalFn {
    typedef typename ScanAcc<T>::A A;
    A *sums;
    const T *in;
    int64_t len, inner, nch;
    int prod;
    THC_HD void operator()(int64_t t) const {
        sums[t] = ScanChunk<T>::run(nullptr, in, t / nch, t % nch, SCAN_CHUNK, len, inner, prod,
                                    prod ? A(1) : A(0));
    }
};

// pass 3: each chunk scanned from the inclusive scan of the chunks before it
template <typename T> struct ChunkScanFn {
    typedef typename ScanAcc<T>::A A;
    T *out;
    const T *in;
    const A *scanned;   // inclusive scan of the chunk totals, per line
    int64_t len, inner, nch;
    int prod;
    THC_HD void operator()(int64_t t) const {
        int64_t c = t % nch;
        A init = c ? scanned[t - 1] : (prod ? A(1) : A(0));
        ScanChunk<T>::run(out, in, t / nch, c, SCAN_CHUNK, len, inner, prod, init);
    }
};

thc_tensor *scan(const char *what, const thc_tensor *a, int dim, int dtype, int prod);

// out <- the scan of the contiguous xc (compute dtype ct) along its lines
template <typename T>
int scan_lines(const char *what, T *out, const T *in, int64_t lines, int64_t len, int64_t inner,
               int prod, int acc_dtype) {
    if (len <= kScanSerialMax)
        return for_each(what, lines, ScanFn<T>{out, in, len, inner, prod}, thc__stream());
    typedef typename ScanAcc<T>::A A;
    int64_t nch = (len + SCAN_CHUNK - 1) / SCAN_CHUNK, shape[2] = {lines, nch};
    thc_tensor *sums = thc_empty(2, shape, acc_dtype);
    if (!sums) return thc_last_status();
    int rc = for_each(what, lines * nch,
                      ChunkTotalFn<T>{(A *)thc__ptr(sums), in, len, inner, nch, prod},
                      thc__stream());
    thc_tensor *scanned = rc ? NULL : scan(what, sums, 1, acc_dtype, prod);
    if (!rc && !scanned) rc = thc_last_status();
    if (!rc)
        rc = for_each(what, lines * nch,
                      ChunkScanFn<T>{out, in, (const A *)thc__ptr(scanned), len, inner, nch, prod},
                      thc__stream());
    thc_tensor_release(sums);
    thc_tensor_release(scanned);
    return rc;
}

template <typename T> constexpr int acc_dtype_of() {
    return std::is_floating_point<T>::value ? THC_FLOAT64 : THC_INT64;
}

thc_tensor *scan(const char *what, const thc_tensor *a, int dim, int dtype, int prod) {
    if (thc__check_device(what, "input", a)) return NULL;
    if ((dim = thc__wrap_dim(dim, a->ndim)) < 0) return NULL;
    int od = dtype >= 0 ? dtype : (thc_dtype_is_floating(a->dtype) ? a->dtype : THC_INT64);
    int ct = thc__is_half(od) ? THC_FLOAT32 : od;
    thc_tensor *x = thc__cast(a, ct), *xc = x ? thc_contiguous(x) : NULL;
    thc_tensor *out = xc ? thc_empty(a->ndim, a->sizes, ct) : NULL;
    int rc = out ? THC_OK : thc_last_status();
    int64_t len = a->ndim ? a->sizes[dim] : 1, inner = 1;
    for (int d = dim + 1; d < a->ndim; d++) inner *= a->sizes[d];
    int64_t lines = len ? thc_numel(a) / len : 0;
    if (!rc && lines > 0) switch (ct) {
        THC_CASES_COMPUTE(rc = scan_lines(what, (scalar_t *)thc__ptr(out),
                                          (const scalar_t *)thc__ptr(xc), lines, len, inner,
                                          prod, acc_dtype_of<scalar_t>()))
    }
    thc_tensor_release(x);
    thc_tensor_release(xc);
    if (!rc && ct != od) {
        thc_tensor *o2 = thc_to_dtype(out, od);
        thc_tensor_release(out);
        out = o2;
        if (!o2) rc = thc_last_status();
    }
    if (rc) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}

}  // namespace

extern "C" THC_API thc_tensor *thc_cumsum(const thc_tensor *a, int dim, int dtype) {
    return scan("cumsum", a, dim, dtype, 0);
}

extern "C" THC_API thc_tensor *thc_cumprod(const thc_tensor *a, int dim, int dtype) {
    return scan("cumprod", a, dim, dtype, 1);
}
