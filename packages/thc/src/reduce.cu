// Reductions over dims (sum, prod, mean, amax, amin, all, any,
// count_nonzero, nansum; logsumexp and var composed from them), max/min
// with indices along a dim, argmax/argmin.  Floating values accumulate in
// double and integers in int64; the order of the sums follows the split,
// which depends only on the shape (the same bits on every run), but the
// block-per-row kernel of a GPU build adds in another order than the
// emulated device does: float results agree up to rounding.  The dtype
// rules are libTH's.
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

// A fold's rule for merging two partial results: a nansum's or count's
// partials are plain sums (a NaN partial is inf + -inf and must stay NaN);
// every other kind merges partials as it folds elements.
THC_HD inline int merge_kind(int kind) {
    return kind == K_NANSUM || kind == K_COUNT ? K_SUM : kind;
}

// ---- splitting long reductions ------------------------------------------------
// M outputs of K elements each run as M x P chunks (a device thread each),
// chunk p of output m holding its elements k = p, p + P, p + 2P, ...
// (interleaved, so neighbouring threads read neighbouring elements of a
// contiguous row); the M x P partials are then reduced again by the same
// rule, P per output.  The same code runs on the GPU and on the emulated
// device, so the tests exercise the split and every merge rule.
const int64_t kChunkMin = 512;          // elements per chunk, at least
const int64_t kChunkTarget = 1 << 17;   // threads to aim for: ~1024 per SM of an H100

// chunks per output (1: no split)
int64_t split_of(int64_t M, int64_t K) {
    if (K < 2 * kChunkMin || M >= kChunkTarget) return 1;
    int64_t by_len = K / kChunkMin, by_fill = (kChunkTarget + M - 1) / M;
    return by_len < by_fill ? by_len : by_fill;
}

// Which chunk a thread folds.  Chunk-major order (thread i: output i % M,
// chunk i / M) when neighbouring outputs are adjacent in memory and a row's
// elements are not (x.sum(0)): then a warp's threads read neighbouring
// columns; else output-major (output i / P, chunk i % P).  Thread i writes
// its partial at i, so the partials lie (P, M) or (M, P).
struct Split {
    int64_t M, P;
    int chunk_major;
    THC_HD void of(int64_t i, int64_t *m, int64_t *p) const {
        *m = chunk_major ? i % M : i / P;
        *p = chunk_major ? i / M : i % P;
    }
};

THC_HD inline bool adjacent(const Offsets &o) {
    return o.unit || (o.ndim > 0 && o.strides[0][o.ndim - 1] == 1);
}

Split split_for(int64_t M, int64_t P, const Offsets &kept, const Offsets &red) {
    return Split{M, P, P > 1 && adjacent(kept) && !adjacent(red)};
}

// offsets of n elements `stride` apart (the partials' layout)
Offsets line(int64_t n, int64_t stride) {
    Offsets o;
    memset(&o, 0, sizeof o);
    o.ndim = 1;
    o.nops = 1;
    o.unit = stride == 1;
    o.sizes[0] = n;
    o.strides[0][0] = stride;
    return o;
}

// uninitialised device memory for n elements of `elem` bytes
thc_tensor *scratch(int64_t n, size_t elem) {
    int64_t bytes = n * (int64_t)elem;
    return thc_empty(1, &bytes, THC_UINT8);
}

// Thread i folds a chunk of an output, as `split` says (P = 1: the whole
// output).
template <typename T> struct ReduceFn {
    typedef typename AccOf<T>::type A;
    A *out;
    const T *in;
    int kind;
    int64_t K, P;
    double scale;   // the last stage's (mean); 1 elsewhere
    Offsets kept, red;
    Split split;
    // elements k0, k0 + step, ... of the output whose elements start at base
    THC_HD A fold(int64_t base, int64_t k0, int64_t step) const {
        A acc = init<A>(kind);
        for (int64_t k = k0; k < K; k += step) {
            int64_t off;
            red.at<1>(k, &off);
            acc = combine<A>(kind, acc, (A)in[base + off]);
        }
        return acc;
    }
    THC_HD void operator()(int64_t i) const {
        int64_t base, m, p;
        split.of(i, &m, &p);
        kept.at<1>(m, &base);
        A acc = fold(base, p, P);
        out[i] = scale != 1.0 ? (A)(acc * scale) : acc;
    }
};

#ifdef __CUDACC__
// Many outputs over long contiguous rows: a block per output folds its
// row with coalesced loads and merges the threads' partials in a tree
// through shared memory (a thread per row would read 32 rows per warp).
const int kReduceThreads = 256;

template <typename T>
__global__ void reduce_block_kernel(ReduceFn<T> f) {
    typedef typename AccOf<T>::type A;
    __shared__ A part[kReduceThreads];
    int64_t base;
    f.kept.template at<1>((int64_t)blockIdx.x, &base);
    part[threadIdx.x] = f.fold(base, threadIdx.x, blockDim.x);
    __syncthreads();
    int mk = merge_kind(f.kind);
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            part[threadIdx.x] = combine<A>(mk, part[threadIdx.x], part[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        A r = part[0];
        f.out[blockIdx.x] = f.scale != 1.0 ? (A)(r * f.scale) : r;
    }
}

// the block kernel's case: long rows whose elements are adjacent, and
// enough of them to fill the device (or too few elements to split)
bool block_per_row(int64_t M, int64_t K, int64_t P, const Offsets &red) {
    return adjacent(red) && K >= kReduceThreads && M <= INT32_MAX && (P == 1 || M >= 1024);
}
#endif

// Reduces M outputs of K elements (at kept + red offsets of in) into out,
// splitting long ones into chunks whose partials reduce again.
template <typename T>
int run_reduce(const T *in, int64_t M, int64_t K, const Offsets &kept, const Offsets &red,
               int kind, double scale, typename AccOf<T>::type *out) {
    typedef typename AccOf<T>::type A;
    int64_t P = split_of(M, K);
    const Split whole{M, 1, 0};
#ifdef __CUDACC__
    if (block_per_row(M, K, P, red)) {
        ReduceFn<T> f{out, in, kind, K, 1, scale, kept, red, whole};
        reduce_block_kernel<T><<<(unsigned)M, kReduceThreads, 0, (cudaStream_t)thc__stream()>>>(f);
        return thc__launch_status("reduce");
    }
#endif
    if (P == 1)
        return for_each("reduce", M, ReduceFn<T>{out, in, kind, K, 1, scale, kept, red, whole},
                        thc__stream());
    thc_tensor *part = scratch(M * P, sizeof(A));
    if (!part) return thc_last_status();
    A *pp = (A *)thc__ptr(part);
    Split split = split_for(M, P, kept, red);
    int rc = for_each("reduce", M * P, ReduceFn<T>{pp, in, kind, K, P, 1.0, kept, red, split},
                      thc__stream());
    // stream order: the scratch memory is reused only by later work
    if (!rc)
        rc = split.chunk_major
                 ? run_reduce<A>(pp, M, P, line(M, 1), line(P, M), merge_kind(kind), scale, out)
                 : run_reduce<A>(pp, M, P, line(M, P), line(P, 1), merge_kind(kind), scale, out);
    thc_tensor_release(part);
    return rc;
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
    if (!rc) switch (ct) {
        THC_CASES_COMPUTE(rc = run_reduce<scalar_t>((const scalar_t *)thc__ptr(x), P.M, P.K, P.kept,
                                                    P.red, kind, scale,
                                                    (AccOf<scalar_t>::type *)thc__ptr(acc)))
    }
    if (!rc) rc = thc_copy(out, acc);
    thc_tensor_release(acc);
    thc_tensor_release(x);
    if (rc) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}

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
    if (dtype >= THC_NUM_DTYPES && thc__check_dtype(dtype)) return NULL;
    const char *name = thc__op_name(THC_OP_REDUCE, op);
    bool takes_dtype = thc__op_flags(THC_OP_REDUCE, op) & THC_OPF_TAKES_DTYPE;
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

// Whether (v, i) goes before (b, bi) in max/min's choice: a NaN first
// (the lowest index among NaNs), then the extreme value, then, among equal
// values, the lowest index, as ember.th's first occurrence.  A total order,
// so chunks' picks merge in any grouping.
template <typename T> THC_HD inline bool before(int is_max, T v, int64_t i, T b, int64_t bi) {
    bool vn = v != v, bn = b != b;
    if (vn || bn) return vn && (!bn || i < bi);
    if (v == b) return i < bi;
    return is_max ? v > b : v < b;
}

// Thread i picks the (value, index) of chunk i % P of output i / P (split
// as run_reduce's); in_idx, where set, holds the indices of a previous
// stage's picks (else element k's index is k).
template <typename T> struct ArgFn {
    T *values;   // NULL: indices only
    int64_t *indices;
    const T *in;
    const int64_t *in_idx;
    int is_max;
    int64_t K, P;
    Offsets kept, red;
    Split split;
    THC_HD void operator()(int64_t i) const {
        int64_t base, off, m, p;
        split.of(i, &m, &p);
        kept.at<1>(m, &base);
        red.at<1>(p, &off);
        T best = in[base + off];
        int64_t bi = in_idx ? in_idx[base + off] : p;
        for (int64_t k = p + P; k < K; k += P) {
            // in the input, a NaN is the pick: later elements have larger indices
            if (!in_idx && best != best) break;
            red.at<1>(k, &off);
            T v = in[base + off];
            int64_t vi = in_idx ? in_idx[base + off] : k;
            if (before<T>(is_max, v, vi, best, bi)) {
                best = v;
                bi = vi;
            }
        }
        if (values) values[i] = best;
        indices[i] = bi;
    }
};

// max/min picks of M outputs of K elements (K >= 1), split into chunks as
// run_reduce's, the chunks' picks merged again by the same order.
template <typename T>
int run_arg(const T *in, const int64_t *in_idx, int64_t M, int64_t K, const Offsets &kept,
            const Offsets &red, int is_max, T *values, int64_t *indices, const char *name) {
    int64_t P = split_of(M, K);
    if (P == 1)
        return for_each(name, M, ArgFn<T>{values, indices, in, in_idx, is_max, K, 1, kept, red,
                                          Split{M, 1, 0}},
                        thc__stream());
    thc_tensor *pv = scratch(M * P, sizeof(T)), *pi = pv ? scratch(M * P, sizeof(int64_t)) : NULL;
    int rc = pi ? THC_OK : thc_last_status();
    T *vp = pi ? (T *)thc__ptr(pv) : NULL;
    int64_t *ip = pi ? (int64_t *)thc__ptr(pi) : NULL;
    Split split = split_for(M, P, kept, red);
    if (!rc)
        rc = for_each(name, M * P, ArgFn<T>{vp, ip, in, in_idx, is_max, K, P, kept, red, split},
                      thc__stream());
    if (!rc)
        rc = split.chunk_major
                 ? run_arg<T>(vp, ip, M, P, line(M, 1), line(P, M), is_max, values, indices, name)
                 : run_arg<T>(vp, ip, M, P, line(M, P), line(P, 1), is_max, values, indices, name);
    thc_tensor_release(pi);
    thc_tensor_release(pv);
    return rc;
}

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
        THC_CASES_COMPUTE(rc = run_arg<scalar_t>((const scalar_t *)thc__ptr(x), NULL, P.M, P.K,
                                                 P.kept, P.red, is_max,
                                                 val ? (scalar_t *)thc__ptr(val) : NULL,
                                                 (int64_t *)thc__ptr(idx), name))
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
