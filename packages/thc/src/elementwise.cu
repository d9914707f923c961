// Element-wise kernels: fill, strided copy, add/mul with broadcasting, for
// float32 and float64.  One thread per element in a grid-stride loop; the
// strided offset rule is index.h's, tested on the host.
#include <cuda_runtime.h>

#include "index.h"
#include "thc_internal.h"

namespace {

const int kThreads = 256;
const int64_t kMaxGrid = 65535;

struct Layout {   // passed by value as a kernel parameter
    int32_t ndim;
    int64_t sizes[THC_MAX_DIMS];
    int64_t strides[THC_MAX_DIMS];
};

Layout to_layout(const thc_layout *l) {
    Layout r;
    r.ndim = l->ndim;
    for (int d = 0; d < THC_MAX_DIMS; d++) {
        r.sizes[d] = d < l->ndim ? l->sizes[d] : 1;
        r.strides[d] = d < l->ndim ? l->strides[d] : 0;
    }
    return r;
}

__device__ int64_t offset(const Layout &l, int64_t i) {
    return thc__offset_of(l.ndim, l.sizes, l.strides, i);
}

template <typename T>
__global__ void fill_kernel(T *data, Layout l, int64_t n, T value) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        data[offset(l, i)] = value;
}

template <typename T>
__global__ void copy_kernel(T *dst, Layout dl, const T *src, Layout sl, int64_t n) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        dst[offset(dl, i)] = src[offset(sl, i)];
}

template <typename T, int Op>
__global__ void binary_kernel(T *out, Layout ol, const T *a, Layout al, const T *b,
                              Layout bl, int64_t n) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        T x = a[offset(al, i)], y = b[offset(bl, i)];
        out[offset(ol, i)] = Op == THC_ADD ? x + y : x * y;
    }
}

int launch_status(const char *what) {
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) return THC_OK;
    thc__set_cuda_error_text(cudaGetErrorString(err));
    return thc__error(THC_ERR_RUNTIME, "%s: kernel launch failed: %s", what,
                      cudaGetErrorString(err));
}

int check_dtype(const char *what, int dtype) {
    if (dtype == THC_FLOAT32 || dtype == THC_FLOAT64) return THC_OK;
    return thc__error(THC_ERR_TYPE, "%s: dtype %d is not supported on the GPU yet "
                      "(float32 and float64 are)", what, dtype);
}

int same_sizes(const char *what, const thc_layout *a, const thc_layout *b) {
    int same = a->ndim == b->ndim;
    for (int d = 0; same && d < a->ndim; d++) same = a->sizes[d] == b->sizes[d];
    return same ? THC_OK
                : thc__error(THC_ERR_RUNTIME, "%s: the layouts have different shapes", what);
}

}  // namespace

extern "C" THC_API int thc_fill(void *data, int dtype, const thc_layout *layout, double value,
                                void *stream) {
    int64_t n;
    int rc = check_dtype("thc_fill", dtype);
    if (rc == THC_OK) rc = thc_layout_numel(layout, &n);
    if (rc != THC_OK) return rc;
    if (n == 0) return THC_OK;
    if (!data) return thc__error(THC_ERR_VALUE, "thc_fill: data is NULL");
    thc_launch_config c;
    thc_launch_config_for(n, kThreads, kMaxGrid, &c);
    cudaStream_t s = (cudaStream_t)stream;
    Layout l = to_layout(layout);
    if (dtype == THC_FLOAT32)
        fill_kernel<float><<<(unsigned)c.grid, c.block, 0, s>>>((float *)data, l, n, (float)value);
    else
        fill_kernel<double><<<(unsigned)c.grid, c.block, 0, s>>>((double *)data, l, n, value);
    return launch_status("thc_fill");
}

extern "C" THC_API int thc_copy(void *dst, const thc_layout *dst_layout, const void *src,
                                const thc_layout *src_layout, int dtype, void *stream) {
    int64_t n, m;
    int rc = check_dtype("thc_copy", dtype);
    if (rc == THC_OK) rc = thc_layout_numel(dst_layout, &n);
    if (rc == THC_OK) rc = thc_layout_numel(src_layout, &m);
    if (rc == THC_OK) rc = same_sizes("thc_copy", dst_layout, src_layout);
    if (rc != THC_OK) return rc;
    if (n == 0) return THC_OK;
    if (!dst || !src) return thc__error(THC_ERR_VALUE, "thc_copy: dst or src is NULL");
    thc_launch_config c;
    thc_launch_config_for(n, kThreads, kMaxGrid, &c);
    cudaStream_t s = (cudaStream_t)stream;
    Layout dl = to_layout(dst_layout), sl = to_layout(src_layout);
    if (dtype == THC_FLOAT32)
        copy_kernel<float><<<(unsigned)c.grid, c.block, 0, s>>>((float *)dst, dl,
                                                                (const float *)src, sl, n);
    else
        copy_kernel<double><<<(unsigned)c.grid, c.block, 0, s>>>((double *)dst, dl,
                                                                 (const double *)src, sl, n);
    return launch_status("thc_copy");
}

template <typename T>
static void launch_binary(int op, const thc_launch_config &c, cudaStream_t s, T *out,
                          const Layout &ol, const T *a, const Layout &al, const T *b,
                          const Layout &bl, int64_t n) {
    if (op == THC_ADD)
        binary_kernel<T, THC_ADD><<<(unsigned)c.grid, c.block, 0, s>>>(out, ol, a, al, b, bl, n);
    else
        binary_kernel<T, THC_MUL><<<(unsigned)c.grid, c.block, 0, s>>>(out, ol, a, al, b, bl, n);
}

extern "C" THC_API int thc_binary(int op, int dtype, void *out, const thc_layout *out_layout,
                                  const void *a, const thc_layout *a_layout, const void *b,
                                  const thc_layout *b_layout, void *stream) {
    int64_t n, na, nb;
    if (op != THC_ADD && op != THC_MUL)
        return thc__error(THC_ERR_VALUE, "thc_binary: unknown op %d", op);
    int rc = check_dtype("thc_binary", dtype);
    if (rc == THC_OK) rc = thc_layout_numel(out_layout, &n);
    if (rc == THC_OK) rc = thc_layout_numel(a_layout, &na);
    if (rc == THC_OK) rc = thc_layout_numel(b_layout, &nb);
    if (rc == THC_OK) rc = same_sizes("thc_binary", out_layout, a_layout);
    if (rc == THC_OK) rc = same_sizes("thc_binary", out_layout, b_layout);
    if (rc != THC_OK) return rc;
    if (n == 0) return THC_OK;
    if (!out || !a || !b) return thc__error(THC_ERR_VALUE, "thc_binary: a pointer is NULL");
    thc_launch_config c;
    thc_launch_config_for(n, kThreads, kMaxGrid, &c);
    Layout ol = to_layout(out_layout), al = to_layout(a_layout), bl = to_layout(b_layout);
    cudaStream_t s = (cudaStream_t)stream;
    if (dtype == THC_FLOAT32)
        launch_binary<float>(op, c, s, (float *)out, ol, (const float *)a, al,
                             (const float *)b, bl, n);
    else
        launch_binary<double>(op, c, s, (double *)out, ol, (const double *)a, al,
                              (const double *)b, bl, n);
    return launch_status("thc_binary");
}
