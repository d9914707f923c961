// Reductions over dims (sum, prod, mean, amax, amin, all, any,
// count_nonzero, nansum; logsumexp and var composed from them), max/min
// with indices along a dim, argmax/argmin.  Floating values accumulate in
// double and integers in int64 (so results do not depend on the launch
// shape); the dtype rules are libTH's.
#include "ops.cuh"

using namespace thc;

namespace {

enum Kind { K_SUM, K_PROD, K_NANSUM, K_MAX, K_MIN, K_ALL, K_ANY, K_COUNT };

template <typename T> struct AccOf { typedef int64_t type; };
template <> struct AccOf<float> { typedef double type; };
template <> struct AccOf<double> { typedef double type; };

template <typename A> THC_HD inline A lowest();
template <> THC_HD inline double lowest<double>() { return -INFINITY; }
template <> THC_HD inline int64_t lowest<int64_t>() { return INT64_MIN; }
template <typename A> THC_HD inline A highest();
template <> THC_HD inline double highest<double>() { return INFINITY; }
template <> THC_HD inline int64_t highest<int64_t>() { return INT64_MAX; }

template <typename A> THC_HD inline A init(int kind) {
    switch (kind) {
    case K_PROD: case K_ALL: return A(1);
    case K_MAX: return lowest<A>();
    case K_MIN: return highest<A>();
    default: return A(0);
    }
}

// folds v into acc; max/min keep a NaN once seen
template <typename A> THC_HD inline A combine(int kind, A acc, A v) {
    switch (kind) {
    case K_SUM: return acc + v;
    case K_PROD: return acc * v;
    case K_NANSUM: return v != v ? acc : acc + v;
    case K_MAX: return (acc != acc || !(v > acc || v != v)) ? acc : v;
    case K_MIN: return (acc != acc || !(v < acc || v != v)) ? acc : v;
    case K_ALL: return acc && v != 0 ? A(1) : A(0);
    case K_ANY: return acc || v != 0 ? A(1) : A(0);
    default: return acc + (v != 0 ? A(1) : A(0));   // K_COUNT
    }
}

// Where output m's elements start (kept dims) and where its k-th reduced
// element lies relative to that (reduced dims).
struct Plan {
    int out_ndim;
    int64_t out_sizes[THC_MAX_DIMS];
    int64_t M, K;
    Offsets kept, red;
};

int make_plan(const thc_tensor *a, int ndims, const int *dims, int keepdim, Plan *P) {
    int mask[THC_MAX_DIMS] = {0};
    if (ndims < 0 || ndims > THC_MAX_DIMS)
        return thc__error(THC_ERR_VALUE, "invalid number of reduction dims %d", ndims);
    if (!dims || ndims == 0) {
        for (int d = 0; d < a->ndim; d++) mask[d] = 1;
    } else {
        for (int i = 0; i < ndims; i++) {
            int d = thc__wrap_dim(dims[i], a->ndim);
            if (d < 0) return thc_last_status();
            if (a->ndim == 0) continue;
            if (mask[d])
                return thc__error(THC_ERR_RUNTIME,
                                  "dim %d appears multiple times in the list of dims", d);
            mask[d] = 1;
        }
    }
    thc_tensor kt = *a, rt = *a;
    kt.ndim = rt.ndim = 0;
    kt.offset = rt.offset = 0;
    P->out_ndim = 0;
    for (int d = 0; d < a->ndim; d++) {
        thc_tensor *t = mask[d] ? &rt : &kt;
        t->sizes[t->ndim] = a->sizes[d];
        t->strides[t->ndim++] = a->strides[d];
        if (!mask[d] || keepdim) P->out_sizes[P->out_ndim++] = mask[d] ? 1 : a->sizes[d];
    }
    const thc_tensor *kp = &kt, *rp = &rt;
    thc__geom gk, gr;
    thc__geom_init(&gk, kt.ndim, kt.sizes, 1, &kp);
    thc__geom_init(&gr, rt.ndim, rt.sizes, 1, &rp);
    P->M = gk.numel;
    P->K = gr.numel;
    P->kept = Offsets::of(gk);
    P->red = Offsets::of(gr);
    return THC_OK;
}

// One thread per output: acc over the K reduced elements.
template <typename T> struct ReduceFn {
    typedef typename AccOf<T>::type A;
    A *out;
    const T *in;
    int kind;
    int64_t K;
    double scale;
    Offsets kept, red;
    THC_HD void operator()(int64_t m) const {
        int64_t base;
        kept.at<1>(m, &base);
        A acc = init<A>(kind);
        for (int64_t k = 0; k < K; k++) {
            int64_t off;
            red.at<1>(k, &off);
            acc = combine<A>(kind, acc, (A)in[base + off]);
        }
        out[m] = scale != 1.0 ? (A)(acc * scale) : acc;
    }
};

#ifdef __CUDACC__
// Few outputs over many elements: a block per output folds its elements
// in a tree through shared memory.
const int kReduceThreads = 256;

template <typename T>
__global__ void reduce_block_kernel(ReduceFn<T> f) {
    typedef typename AccOf<T>::type A;
    __shared__ A part[kReduceThreads];
    int64_t base;
    f.kept.template at<1>(blockIdx.x, &base);
    A acc = init<A>(f.kind);
    for (int64_t k = threadIdx.x; k < f.K; k += blockDim.x) {
        int64_t off;
        f.red.template at<1>(k, &off);
        acc = combine<A>(f.kind, acc, (A)f.in[base + off]);
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            A v = part[threadIdx.x + s];
            // a count folds partial counts by adding them
            part[threadIdx.x] = f.kind == K_COUNT ? part[threadIdx.x] + v
                                                  : combine<A>(f.kind, part[threadIdx.x], v);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        A r = part[0];
        f.out[blockIdx.x] = f.scale != 1.0 ? (A)(r * f.scale) : r;
    }
}
#endif

template <typename T>
int run_reduce(const thc_tensor *x, const Plan &P, int kind, double scale, thc_tensor *acc) {
    ReduceFn<T> f{(typename AccOf<T>::type *)thc__ptr(acc), (const T *)thc__ptr(x), kind, P.K,
                  scale, P.kept, P.red};
#ifdef __CUDACC__
    if (P.M < 65536 && P.K >= 256) {
        reduce_block_kernel<T><<<(unsigned)P.M, kReduceThreads, 0, (cudaStream_t)thc__stream()>>>(f);
        return thc__launch_status("reduce");
    }
#endif
    return for_each("reduce", P.M, f, thc__stream());
}

// Reduces x (compute dtype, on the device) into a fresh tensor of the
// output shape and dtype od.
thc_tensor *reduce_into(const thc_tensor *a, int ndims, const int *dims, int keepdim, int kind,
                        int cd, int od, bool mean) {
    Plan P;
    if (make_plan(a, ndims, dims, keepdim, &P)) return NULL;
    thc_tensor *out = thc_empty(P.out_ndim, P.out_sizes, od);
    if (!out || P.M == 0) return out;
    int ct = thc__is_half(cd) ? THC_FLOAT32 : cd;
    thc_tensor *x = thc__cast(a, ct);
    if (!x) {
        thc_tensor_release(out);
        return NULL;
    }
    if (x != a && make_plan(x, ndims, dims, keepdim, &P)) {   // the copy's strides
        thc_tensor_release(x);
        thc_tensor_release(out);
        return NULL;
    }
    int acc_dtype = thc_dtype_is_floating(ct) ? THC_FLOAT64 : THC_INT64;
    thc_tensor *acc = thc_empty(P.out_ndim, P.out_sizes, acc_dtype);
    double scale = mean ? (P.K ? 1.0 / (double)P.K : NAN) : 1.0;
    int rc = acc ? THC_OK : thc_last_status();
    if (!rc) switch (ct) { THC_CASES_COMPUTE(rc = run_reduce<scalar_t>(x, P, kind, scale, acc)) }
    if (!rc) rc = thc_copy(out, acc);
    thc_tensor_release(acc);
    thc_tensor_release(x);
    if (rc) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}

const char *const reduce_names[THC_NUM_REDUCE_OPS] = {
    "sum", "prod", "mean", "amax", "amin", "all", "any", "count_nonzero", "logsumexp", "nansum"};

thc_tensor *logsumexp(const thc_tensor *a, int ndims, const int *dims, int keepdim, int dtype) {
    thc_tensor *x = thc__cast(a, dtype);
    if (!x) return NULL;
    thc_tensor *m = reduce_into(x, ndims, dims, 1, K_MAX, dtype, dtype, false);
    thc_tensor *zero = thc_scalar_double(0.0, THC_FLOAT64), *inf = NULL, *shift = NULL,
               *d = NULL, *e = NULL, *s = NULL, *l = NULL, *r = NULL, *out = NULL;
    // an infinite maximum shifts by 0 (exp(inf - inf) would be NaN)
    if (m && zero) inf = thc_unary(THC_ISINF, m);
    if (inf) shift = thc_where(inf, zero, m);
    if (shift) d = thc_binary(THC_SUB, x, shift);
    if (d) e = thc_unary(THC_EXP, d);
    if (e) s = reduce_into(e, ndims, dims, 1, K_SUM, dtype, dtype, false);
    if (s) l = thc_unary(THC_LOG, s);
    if (l) r = thc_binary(THC_ADD, l, shift);
    if (r) {
        Plan P;
        out = make_plan(a, ndims, dims, keepdim, &P) ? NULL
                                                      : thc_view(r, P.out_ndim, P.out_sizes);
    }
    thc_tensor *all[] = {x, m, zero, inf, shift, d, e, s, l, r};
    for (thc_tensor *t : all) thc_tensor_release(t);
    return out;
}

}  // namespace

extern "C" THC_API thc_tensor *thc_reduce(int op, const thc_tensor *a, int ndims, const int *dims,
                                          int keepdim, int dtype) {
    if (thc__check_device("reduce", "the input", a)) return NULL;
    if (op < 0 || op >= THC_NUM_REDUCE_OPS)
        return (thc_tensor *)thc__error_null(THC_ERR_VALUE, "invalid reduction op %d", op);
    if (dtype >= THC_NUM_DTYPES)
        return (thc_tensor *)thc__error_null(THC_ERR_TYPE, "invalid dtype code %d", dtype);
    const char *name = reduce_names[op];
    bool takes_dtype = op == THC_RED_SUM || op == THC_RED_PROD || op == THC_RED_MEAN ||
                       op == THC_RED_NANSUM;
    if (dtype >= 0 && !takes_dtype)
        return (thc_tensor *)thc__error_null(THC_ERR_TYPE,
                                             "%s() got an unexpected keyword argument 'dtype'",
                                             name);
    int in = a->dtype, fl = thc_dtype_is_floating(in);
    switch (op) {
    case THC_RED_SUM: case THC_RED_PROD: case THC_RED_NANSUM: {
        int cd = dtype >= 0 ? dtype : in, od = dtype >= 0 ? dtype : fl ? in : THC_INT64;
        int kind = op == THC_RED_PROD ? K_PROD : op == THC_RED_NANSUM ? K_NANSUM : K_SUM;
        return reduce_into(a, ndims, dims, keepdim, kind, cd, od, false);
    }
    case THC_RED_MEAN:
        if (dtype >= 0 && !thc_dtype_is_floating(dtype))
            return (thc_tensor *)thc__error_null(
                THC_ERR_RUNTIME, "mean(): could not infer output dtype. Optional dtype must be "
                "either a floating point or complex dtype. Got: %s", thc__dtype_title(dtype));
        if (dtype < 0 && !fl)
            return (thc_tensor *)thc__error_null(
                THC_ERR_RUNTIME, "mean(): could not infer output dtype. Input dtype must be "
                "either a floating point or complex dtype. Got: %s", thc__dtype_title(in));
        if (dtype < 0) dtype = in;
        return reduce_into(a, ndims, dims, keepdim, K_SUM, dtype, dtype, true);
    case THC_RED_AMAX: case THC_RED_AMIN:
        if (thc_numel(a) == 0) {
            if (!dims || ndims == 0)
                return (thc_tensor *)thc__error_null(
                    THC_ERR_RUNTIME, "%s(): Expected reduction dim to be specified for "
                    "input.numel() == 0. Specify the reduction dim with the 'dim' argument.",
                    name);
            for (int i = 0; i < ndims; i++) {
                int d = thc__wrap_dim(dims[i], a->ndim);
                if (d >= 0 && a->ndim > 0 && a->sizes[d] == 0)
                    return (thc_tensor *)thc__error_null(
                        THC_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.",
                        name, d);
            }
        }
        return reduce_into(a, ndims, dims, keepdim, op == THC_RED_AMAX ? K_MAX : K_MIN, in, in,
                           false);
    case THC_RED_ALL: case THC_RED_ANY:
        return reduce_into(a, ndims, dims, keepdim, op == THC_RED_ALL ? K_ALL : K_ANY, in,
                           in == THC_UINT8 ? THC_UINT8 : THC_BOOL, false);
    case THC_RED_COUNT_NONZERO:
        return reduce_into(a, ndims, dims, keepdim, K_COUNT, in, THC_INT64, false);
    default:   // THC_RED_LOGSUMEXP
    {   // 16-bit floats: computed in float32, rounded once at the end
        int od = fl ? in : thc_get_default_dtype();
        if (!thc__is_half(od)) return logsumexp(a, ndims, dims, keepdim, od);
        thc_tensor *r = logsumexp(a, ndims, dims, keepdim, THC_FLOAT32);
        thc_tensor *o = r ? thc_to_dtype(r, od) : NULL;
        thc_tensor_release(r);
        return o;
    }
    }
}

extern "C" THC_API thc_tensor *thc_var(const thc_tensor *a, int ndims, const int *dims,
                                       double correction, int keepdim, int take_sqrt) {
    if (thc__check_device("var", "the input", a)) return NULL;
    if (!thc_dtype_is_floating(a->dtype))
        return (thc_tensor *)thc__error_null(
            THC_ERR_RUNTIME, "std and var only support floating point and complex dtypes");
    Plan P;
    if (make_plan(a, ndims, dims, keepdim, &P)) return NULL;
    // two passes in double: the mean, then the squared deviations from it
    thc_tensor *x = thc__cast(a, THC_FLOAT64);
    thc_tensor *mean = x ? reduce_into(x, ndims, dims, 1, K_SUM, THC_FLOAT64, THC_FLOAT64, true)
                         : NULL;
    thc_tensor *dev = mean ? thc_binary(THC_SUB, x, mean) : NULL;
    thc_tensor *sq = dev ? thc_unary(THC_SQUARE, dev) : NULL;
    thc_tensor *m2 = sq ? reduce_into(sq, ndims, dims, keepdim, K_SUM, THC_FLOAT64, THC_FLOAT64,
                                      false)
                        : NULL;
    // as PyTorch: divide by max(0, N - correction), giving inf or nan
    double n = (double)P.K, div = n > correction ? n - correction : 0.0;
    thc_tensor *divisor = thc_scalar_double(div, THC_FLOAT64);
    thc_tensor *v = m2 && divisor ? thc_binary(THC_DIV, m2, divisor) : NULL;
    thc_tensor *r = v && take_sqrt ? thc_unary(THC_SQRT, v) : NULL;
    thc_tensor *out = v ? thc_to_dtype(take_sqrt ? r : v, a->dtype) : NULL;
    if (take_sqrt && !r) {
        thc_tensor_release(out);
        out = NULL;
    }
    thc_tensor *all[] = {x, mean, dev, sq, m2, divisor, v, r};
    for (thc_tensor *t : all) thc_tensor_release(t);
    return out;
}

// ---- max/min with indices along one dim ----------------------------------------
namespace {

template <typename T> struct ArgFn {
    T *values;
    int64_t *indices;
    const T *in;
    int is_max;
    int64_t K;
    Offsets kept, red;
    THC_HD void operator()(int64_t m) const {
        int64_t base, off;
        kept.at<1>(m, &base);
        red.at<1>(0, &off);
        T best = in[base + off];
        int64_t bi = 0;
        for (int64_t k = 1; k < K && best == best; k++) {
            red.at<1>(k, &off);
            T v = in[base + off];
            if (v != v || (is_max ? v > best : v < best)) {
                best = v;
                bi = k;
            }
        }
        if (values) values[m] = best;
        indices[m] = bi;
    }
};

int minmax(const thc_tensor *a, int ndims, const int *dims, int keepdim, int is_max,
           thc_tensor **values, thc_tensor **indices, const char *name) {
    Plan P;
    if (make_plan(a, ndims, dims, keepdim, &P)) return thc_last_status();
    if (P.K == 0 && thc_numel(a) == 0 && P.M != 0)
        return thc__error(THC_ERR_INDEX, "%s(): Expected reduction dim to have non-zero size.",
                          name);
    if (thc_numel(a) == 0 && P.M == 0 && (!dims || ndims == 0))
        return thc__error(THC_ERR_RUNTIME, "%s(): Expected reduction dim to be specified for "
                          "input.numel() == 0.", name);
    int ct = thc__is_half(a->dtype) ? THC_FLOAT32 : a->dtype;
    thc_tensor *x = thc__cast(a, ct);
    if (!x) return thc_last_status();
    if (x != a) make_plan(x, ndims, dims, keepdim, &P);
    thc_tensor *idx = thc_empty(P.out_ndim, P.out_sizes, THC_INT64);
    thc_tensor *val = values ? thc_empty(P.out_ndim, P.out_sizes, ct) : NULL;
    int rc = idx && (val || !values) ? THC_OK : thc_last_status();
    if (!rc) switch (ct) {
        THC_CASES_COMPUTE(rc = for_each(name, P.M,
                                        ArgFn<scalar_t>{val ? (scalar_t *)thc__ptr(val) : NULL,
                                                        (int64_t *)thc__ptr(idx),
                                                        (const scalar_t *)thc__ptr(x), is_max,
                                                        P.K, P.kept, P.red},
                                        thc__stream()))
    }
    thc_tensor_release(x);
    if (!rc && val && ct != a->dtype) {
        thc_tensor *v2 = thc_to_dtype(val, a->dtype);
        thc_tensor_release(val);
        val = v2;
        if (!v2) rc = thc_last_status();
    }
    if (rc) {
        thc_tensor_release(idx);
        thc_tensor_release(val);
        return rc;
    }
    *indices = idx;
    if (values) *values = val;
    return THC_OK;
}

}  // namespace

extern "C" THC_API int thc_minmax_dim(const thc_tensor *a, int dim, int keepdim, int is_max,
                                      thc_tensor **values, thc_tensor **indices) {
    if (thc__check_device(is_max ? "max" : "min", "the input", a)) return thc_last_status();
    if (!values || !indices) return thc__error(THC_ERR_VALUE, "minmax_dim: NULL result pointer");
    return minmax(a, 1, &dim, keepdim, is_max, values, indices, is_max ? "max" : "min");
}

extern "C" THC_API thc_tensor *thc_argminmax(const thc_tensor *a, int dim, int keepdim,
                                             int is_max) {
    const char *name = is_max ? "argmax" : "argmin";
    if (thc__check_device(name, "the input", a)) return NULL;
    if (a->dtype == THC_BOOL)
        return (thc_tensor *)thc__error_null(THC_ERR_RUNTIME, "%s(): does not support bool input",
                                             name);
    thc_tensor *idx = NULL;
    if (dim < -THC_MAX_DIMS) {   // over the flattened tensor
        int64_t n = thc_numel(a);
        thc_tensor *flat = thc_reshape(a, 1, &n);
        if (!flat) return NULL;
        int d0 = 0;
        int rc = minmax(flat, 1, &d0, 0, is_max, NULL, &idx, name);
        thc_tensor_release(flat);
        if (rc) return NULL;
        if (keepdim && a->ndim > 0) {   // a tensor of ones of a's ndim
            int64_t ones[THC_MAX_DIMS];
            for (int i = 0; i < a->ndim; i++) ones[i] = 1;
            thc_tensor *v = thc_view(idx, a->ndim, ones);
            thc_tensor_release(idx);
            idx = v;
        }
        return idx;
    }
    return minmax(a, 1, &dim, keepdim, is_max, NULL, &idx, name) ? NULL : idx;
}
