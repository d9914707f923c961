// Matrix products of floating dtypes: mm, bmm, addmm, baddbmm.  One kernel
// takes any strides (transposed and broadcast operands need no copies):
// on the GPU, 32x32 output tiles staged through shared memory; on the
// emulated device, a dot product per output element.  Accumulates in
// float (double for float64), as cuBLAS does.
#include "ops.cuh"

using namespace thc;

namespace {

struct Mat {   // a (batch of) strided matrices; element strides
    const void *p;
    int64_t rs, cs, bs;
};

template <typename T> struct AccT { typedef float type; };
template <> struct AccT<double> { typedef double type; };

// out[b, i, j] = alpha * sum_k A[b, i, k] B[b, k, j] + beta * C[b, i, j]
template <typename T> struct GemmArgs {
    T *out;   // contiguous (batch, m, n)
    Mat a, b, c;   // c.p NULL: no input term
    int64_t m, n, k, batch;
    double alpha, beta;
};

template <typename T>
THC_HD inline T load(const Mat &x, int64_t b, int64_t r, int64_t c) {
    return ((const T *)x.p)[b * x.bs + r * x.rs + c * x.cs];
}

template <typename T> THC_HD inline void store(const GemmArgs<T> &g, int64_t b, int64_t i, int64_t j,
                                               typename AccT<T>::type acc) {
    typedef typename AccT<T>::type A;
    A v = (A)g.alpha * acc;
    if (g.c.p && g.beta != 0) v += (A)g.beta * (A)load<T>(g.c, b, i, j);
    g.out[(b * g.m + i) * g.n + j] = (T)v;
}

template <typename T> struct GemmFn {   // one output element per index
    GemmArgs<T> g;
    THC_HD void operator()(int64_t idx) const {
        int64_t j = idx % g.n, i = (idx / g.n) % g.m, b = idx / (g.n * g.m);
        typename AccT<T>::type acc = 0;
        for (int64_t k = 0; k < g.k; k++) acc += load<T>(g.a, b, i, k) * load<T>(g.b, b, k, j);
        store(g, b, i, j, acc);
    }
};

#ifdef __CUDACC__
const int kTile = 32;

template <typename T> __global__ void gemm_tiled_kernel(GemmArgs<T> g) {
    typedef typename AccT<T>::type A;
    __shared__ T as[kTile][kTile + 1], bs[kTile][kTile + 1];
    int64_t b = blockIdx.z, i0 = (int64_t)blockIdx.y * kTile, j0 = (int64_t)blockIdx.x * kTile;
    int tx = threadIdx.x, ty = threadIdx.y;   // 32 x 8 threads: 4 rows each
    A acc[4] = {0, 0, 0, 0};
    for (int64_t k0 = 0; k0 < g.k; k0 += kTile) {
        for (int r = ty; r < kTile; r += 8) {
            int64_t i = i0 + r, k = k0 + tx;
            as[r][tx] = (i < g.m && k < g.k) ? load<T>(g.a, b, i, k) : T(0);
            int64_t kk = k0 + r, j = j0 + tx;
            bs[r][tx] = (kk < g.k && j < g.n) ? load<T>(g.b, b, kk, j) : T(0);
        }
        __syncthreads();
        for (int kk = 0; kk < kTile; kk++) {
            A bv = bs[kk][tx];
            for (int q = 0; q < 4; q++) acc[q] += (A)as[ty + 8 * q][kk] * bv;
        }
        __syncthreads();
    }
    for (int q = 0; q < 4; q++) {
        int64_t i = i0 + ty + 8 * q, j = j0 + tx;
        if (i < g.m && j < g.n) store(g, b, i, j, acc[q]);
    }
}
#endif

template <typename T> int run_gemm(const GemmArgs<T> &g) {
    if (g.m == 0 || g.n == 0 || g.batch == 0) return THC_OK;
#ifdef __CUDACC__
    if (g.batch <= 65535 && (g.m + kTile - 1) / kTile <= 65535) {
        dim3 grid((unsigned)((g.n + kTile - 1) / kTile), (unsigned)((g.m + kTile - 1) / kTile),
                  (unsigned)g.batch);
        gemm_tiled_kernel<T><<<grid, dim3(kTile, 8), 0, (cudaStream_t)thc__stream()>>>(g);
        return thc__launch_status("mm");
    }
#endif
    return for_each("mm", g.batch * g.m * g.n, GemmFn<T>{g}, thc__stream());
}

Mat mat_of(const thc_tensor *t, int batched) {   // t: (m, n) or (batch, m, n)
    Mat x;
    x.p = thc__ptr(t);
    x.bs = batched ? t->strides[0] : 0;
    x.rs = t->strides[batched];
    x.cs = t->strides[batched + 1];
    return x;
}

int check_operands(const char *name, const thc_tensor *a, const thc_tensor *b, int ndim) {
    if (thc__check_device(name, "mat1", a) || thc__check_device(name, "mat2", b))
        return thc_last_status();
    if (a->storage->device != b->storage->device)
        return thc__error(THC_ERR_RUNTIME, "Expected all tensors to be on the same device, but "
                          "found at least two devices, cuda:%d and cuda:%d!",
                          a->storage->device, b->storage->device);
    if (a->ndim != ndim || b->ndim != ndim)
        return thc__error(THC_ERR_RUNTIME, "%s: expected %dD tensors, got %dD and %dD", name,
                          ndim, a->ndim, b->ndim);
    if (a->dtype != b->dtype)
        return thc__error(THC_ERR_RUNTIME, "expected m1 and m2 to have the same dtype, but got: "
                          "%s != %s", thc_dtype_name(a->dtype), thc_dtype_name(b->dtype));
    if (!thc_dtype_is_floating(a->dtype))
        return thc__error(THC_ERR_TYPE, "\"%s_cuda\" not implemented for '%s'", name,
                          thc__dtype_title(a->dtype));
    int last = ndim - 1;
    if (ndim == 3 && a->sizes[0] != b->sizes[0])
        return thc__error(THC_ERR_RUNTIME, "batch1 and batch2 must have same number of batches, "
                          "got %lld and %lld", (long long)a->sizes[0], (long long)b->sizes[0]);
    if (a->sizes[last] != b->sizes[last - 1])
        return thc__error(THC_ERR_RUNTIME,
                          "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                          (long long)a->sizes[last - 1], (long long)a->sizes[last],
                          (long long)b->sizes[last - 1], (long long)b->sizes[last]);
    return THC_OK;
}

// beta * input + alpha * (a @ b) for (batched) a, b; input may be NULL
thc_tensor *product(const char *name, const thc_tensor *input, const thc_tensor *a,
                    const thc_tensor *b, double beta, double alpha, int batched) {
    if (check_operands(name, a, b, batched ? 3 : 2)) return NULL;
    int64_t batch = batched ? a->sizes[0] : 1, m = a->sizes[batched], k = a->sizes[batched + 1],
            n = b->sizes[batched + 1];
    int64_t shape[3] = {batch, m, n};
    thc_tensor *c = NULL;
    if (input) {
        if (thc__check_device(name, "input", input)) return NULL;
        if (input->dtype != a->dtype)
            return (thc_tensor *)thc__error_null(THC_ERR_RUNTIME,
                                                 "%s: input dtype %s does not match %s", name,
                                                 thc_dtype_name(input->dtype),
                                                 thc_dtype_name(a->dtype));
        c = thc_expand(input, batched ? 3 : 2, batched ? shape : shape + 1);
        if (!c) return NULL;
    }
    int dt = a->dtype;
    if (batch == 0 || m == 0 || n == 0) {
        thc_tensor_release(c);
        return thc_empty(batched ? 3 : 2, batched ? shape : shape + 1, dt);
    }
    {   // cuBLAS, when it is loaded and the layouts suit it
        thc_tensor *out = thc_empty(batched ? 3 : 2, batched ? shape : shape + 1, dt);
        bool with_c = c && beta != 0;
        int rc = out ? (with_c ? thc_copy(out, c) : THC_OK) : thc_last_status();
        if (!rc) {
            Mat ma = mat_of(a, batched), mb = mat_of(b, batched);
            rc = thc__cublas_gemm(dt, batch, m, n, k, alpha, ma.p, ma.rs, ma.cs, ma.bs, mb.p,
                                  mb.rs, mb.cs, mb.bs, with_c ? beta : 0.0, thc__ptr(out),
                                  thc__stream());
        }
        if (rc != -1) {
            thc_tensor_release(c);
            if (rc) {
                thc_tensor_release(out);
                return NULL;
            }
            return out;
        }
        thc_tensor_release(out);   // not for cuBLAS: libTHC's kernel below
    }
    // 16-bit floats: computed in float32, rounded once at the end
    int ct = thc__is_half(dt) ? THC_FLOAT32 : dt;
    thc_tensor *ca = thc__cast(a, ct), *cb = ca ? thc__cast(b, ct) : NULL;
    thc_tensor *cc = cb && c ? thc__cast(c, ct) : NULL;
    thc_tensor *out = cb && (cc || !c) ? thc_empty(batched ? 3 : 2, batched ? shape : shape + 1, ct)
                                       : NULL;
    int rc = out ? THC_OK : thc_last_status();
    if (!rc) {
        Mat ma = mat_of(ca, batched), mb = mat_of(cb, batched), mc = {NULL, 0, 0, 0};
        if (cc) mc = mat_of(cc, batched);
        if (ct == THC_FLOAT64)
            rc = run_gemm(GemmArgs<double>{(double *)thc__ptr(out), ma, mb, mc, m, n, k, batch,
                                           alpha, beta});
        else
            rc = run_gemm(GemmArgs<float>{(float *)thc__ptr(out), ma, mb, mc, m, n, k, batch,
                                          alpha, beta});
    }
    if (!rc && ct != dt) {
        thc_tensor *o2 = thc_to_dtype(out, dt);
        thc_tensor_release(out);
        out = o2;
        if (!o2) rc = thc_last_status();
    }
    thc_tensor *all[] = {c, ca, cb, cc};
    for (thc_tensor *t : all) thc_tensor_release(t);
    if (rc) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}

}  // namespace

extern "C" THC_API thc_tensor *thc_mm(const thc_tensor *a, const thc_tensor *b) {
    return product("mm", NULL, a, b, 0.0, 1.0, 0);
}

extern "C" THC_API thc_tensor *thc_bmm(const thc_tensor *a, const thc_tensor *b) {
    return product("bmm", NULL, a, b, 0.0, 1.0, 1);
}

extern "C" THC_API thc_tensor *thc_addmm(const thc_tensor *input, const thc_tensor *m1,
                                         const thc_tensor *m2, double beta, double alpha) {
    return product("addmm", input, m1, m2, beta, alpha, 0);
}

extern "C" THC_API thc_tensor *thc_baddbmm(const thc_tensor *input, const thc_tensor *b1,
                                           const thc_tensor *b2, double beta, double alpha) {
    return product("baddbmm", input, b1, b2, beta, alpha, 1);
}
