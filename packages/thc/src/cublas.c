/* cuBLAS for the matrix products, loaded with dlopen at the first product:
 * libTHC does not link it, so it builds without the (large) cuBLAS wheel
 * and runs without it on its own GEMM kernel.  Only the few entry points
 * used here are declared, as plain C (handles and streams are pointers,
 * enums are ints). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thc_internal.h"

/* cuBLAS's enum values (cublas_api.h, library_types.h) */
enum { OP_N = 0, OP_T = 1, R_32F = 0, R_64F = 1, R_16F = 2, R_16BF = 14,
       COMPUTE_32F = 68, COMPUTE_64F = 70, COMPUTE_32F_FAST_TF32 = 77, GEMM_DEFAULT = -1 };

typedef int (*create_fn)(void **handle);
typedef int (*destroy_fn)(void *handle);
typedef int (*set_stream_fn)(void *handle, void *stream);
typedef int (*gemm_fn)(void *handle, int transa, int transb, int m, int n, int k,
                       const void *alpha, const void *a, int atype, int lda, long long stride_a,
                       const void *b, int btype, int ldb, long long stride_b, const void *beta,
                       void *c, int ctype, int ldc, long long stride_c, int batch, int compute,
                       int algo);

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char library_path[1024];
static char load_error[1200];
static create_fn create;
static destroy_fn destroy;
static set_stream_fn set_stream;
static gemm_fn gemm;
/* a handle belongs to the device current at its creation and is not shared
 * between threads: one per thread and device */
#define MAX_HANDLES 64
static __thread void *handles[MAX_HANDLES];
/* its destructor frees a finished thread's handles (a key's destructors run
 * at pthread_exit, not at process exit, when the driver may be gone) */
static pthread_key_t handles_key;
static int have_key;

static void release_handles(void *unused) {
    (void)unused;
    for (int d = 0; d < MAX_HANDLES; d++) {
        if (!handles[d]) continue;
        thc_set_device(d);   /* a handle belongs to its device */
        destroy(handles[d]);
        handles[d] = NULL;
    }
}

static void load(void) {
    const char *off = getenv("EMBER_THC_CUBLAS");
    if (!thc_has_cuda() || (off && strcmp(off, "0") == 0)) {
        snprintf(load_error, sizeof load_error, "%s", thc_has_cuda()
                 ? "disabled by EMBER_THC_CUBLAS=0" : "libTHC was built without CUDA");
        return;
    }
    /* the CUDA 13 cuBLAS first (the runtime libTHC is built with here), then
     * older majors and the unversioned name */
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11",
                                        "libcublas.so"};
    const char *name = library_path;
    void *lib = NULL;
    if (library_path[0]) {
        lib = dlopen(library_path, RTLD_NOW | RTLD_LOCAL);
    } else {
        for (size_t i = 0; !lib && i < sizeof names / sizeof *names; i++)
            lib = dlopen(name = names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (!lib) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return;
    }
    create = (create_fn)dlsym(lib, "cublasCreate_v2");
    destroy = (destroy_fn)dlsym(lib, "cublasDestroy_v2");
    set_stream = (set_stream_fn)dlsym(lib, "cublasSetStream_v2");
    gemm = (gemm_fn)dlsym(lib, "cublasGemmStridedBatchedEx");
    if (!create || !destroy || !set_stream || !gemm) {
        snprintf(load_error, sizeof load_error, "%s lacks cublasGemmStridedBatchedEx", name);
        create = NULL;
        return;
    }
    have_key = pthread_key_create(&handles_key, release_handles) == 0;
}

static int allow_tf32; /* read by every thread: atomic loads and stores */

THC_API int thc_set_float32_matmul_tf32(int allow) {
    __atomic_store_n(&allow_tf32, allow != 0, __ATOMIC_RELAXED);
    return THC_OK;
}

THC_API int thc_float32_matmul_tf32(void) {
    return __atomic_load_n(&allow_tf32, __ATOMIC_RELAXED);
}

THC_API int thc_cublas_set_path(const char *path) {
    if (!path) return thc__error(THC_ERR_VALUE, "thc_cublas_set_path: path is NULL");
    if (create || load_error[0])
        return thc__error(THC_ERR_RUNTIME, "thc_cublas_set_path: cuBLAS was already looked for");
    snprintf(library_path, sizeof library_path, "%s", path);
    return THC_OK;
}

THC_API int thc_cublas_available(void) {
    pthread_once(&load_once, load);
    return create != NULL;
}

THC_API const char *thc_cublas_error_text(void) {
    pthread_once(&load_once, load);
    return load_error;
}

/* X (p x q, strides rs, cs) as cuBLAS's column-major operand X^T: its op
 * and leading dimension, or 0 when neither stride is 1 */
static int operand(int64_t p, int64_t q, int64_t rs, int64_t cs, int *op, int *ld) {
    if (q == 1) cs = 1;
    if (p == 1) rs = q > 1 ? q : 1;
    if (cs == 1 && rs >= (q > 1 ? q : 1) && rs < (1LL << 31)) {
        *op = OP_N;
        *ld = (int)rs;
        return 1;
    }
    if (rs == 1 && cs >= (p > 1 ? p : 1) && cs < (1LL << 31)) {
        *op = OP_T;
        *ld = (int)cs;
        return 1;
    }
    return 0;
}

int thc__cublas_gemm(int dtype, int64_t batch, int64_t m, int64_t n, int64_t k, double alpha,
                     const void *a, int64_t ars, int64_t acs, int64_t abs_,
                     const void *b, int64_t brs, int64_t bcs, int64_t bbs, double beta, void *c,
                     void *stream) {
    if (!thc_cublas_available()) return -1;
    if (m >= (1LL << 31) || n >= (1LL << 31) || k >= (1LL << 31) || batch >= (1LL << 31))
        return -1;
    int opa, lda, opb, ldb;
    if (!operand(m, k, ars, acs, &opa, &lda) || !operand(k, n, brs, bcs, &opb, &ldb)) return -1;
    int type = dtype == THC_FLOAT32 ? R_32F : dtype == THC_FLOAT64 ? R_64F
             : dtype == THC_FLOAT16 ? R_16F : dtype == THC_BFLOAT16 ? R_16BF : -1;
    if (type < 0) return -1;
    int device = 0;
    if (thc_get_device(&device) || device < 0 || device >= MAX_HANDLES) return -1;
    void **handle = &handles[device];
    if (!*handle) {
        if (create(handle) != 0) {
            *handle = NULL;
            return thc__error(THC_ERR_RUNTIME, "cublasCreate failed (is the GPU usable?)");
        }
        /* any non-NULL value makes the destructor run for this thread */
        if (have_key) pthread_setspecific(handles_key, handles);
    }
    if (set_stream(*handle, stream) != 0)
        return thc__error(THC_ERR_RUNTIME, "cublasSetStream failed");
    float fa = (float)alpha, fb = (float)beta;
    const void *pa = dtype == THC_FLOAT64 ? (const void *)&alpha : (const void *)&fa;
    const void *pb = dtype == THC_FLOAT64 ? (const void *)&beta : (const void *)&fb;
    /* row-major C = A B is column-major C^T = B^T A^T */
    int compute = dtype == THC_FLOAT64 ? COMPUTE_64F
                : dtype == THC_FLOAT32 && thc_float32_matmul_tf32() ? COMPUTE_32F_FAST_TF32
                : COMPUTE_32F;
    int status = gemm(*handle, opb, opa, (int)n, (int)m, (int)k, pa, b, type, ldb, bbs, a, type,
                      lda, abs_, pb, c, type, (int)n, m * n, (int)batch, compute, GEMM_DEFAULT);
    if (status != 0)
        return thc__error(THC_ERR_RUNTIME, "cublasGemmStridedBatchedEx failed with status %d",
                          status);
    return THC_OK;
}
