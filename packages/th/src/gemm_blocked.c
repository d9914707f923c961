/* Portable float32/float64 GEMM, gemv and dot for builds without BLAS
 * (TH_NO_BLAS).
 *
 * GEMM follows the GotoBLAS scheme: a KC x NC panel of B and an MC x KC
 * block of A are packed into contiguous slivers (NR columns / MR rows
 * wide, zero padded), and an MR x NR register-blocked micro-kernel
 * written in plain C (gcc vectorises it at -O3) runs over them.  On
 * x86-64 the micro-kernel is also compiled for AVX2+FMA and AVX-512 and
 * the best one the CPU supports is picked once at run time; the
 * environment variable TH_GEMM_KERNEL=generic|avx2|avx512 can force a
 * lower one (for testing).  Threads split C into a grid of blocks. */
#include "th_internal.h"

#ifdef TH_NO_BLAS
#include "gemm_blocked.h"

/* ---- micro-kernels ------------------------------------------------- */
/* out (MR x NR, row-major) = sum over p < kc of a[p] (MR) x b[p] (NR).
 * The accumulators stay in registers once gcc unrolls the i loop. */
#define DEF_UKR(NAME, T, MR, NR, FMA, ATTR)                                  \
    ATTR static void NAME(int64_t kc, const T *restrict a,                   \
                          const T *restrict b, T *restrict out) {            \
        T acc[MR][NR];                                                       \
        for (int i = 0; i < MR; i++)                                         \
            for (int j = 0; j < NR; j++) acc[i][j] = 0;                      \
        for (int64_t p = 0; p < kc; p++, a += MR, b += NR) {                 \
            _Pragma("GCC unroll 16")                                         \
            for (int i = 0; i < MR; i++) {                                   \
                T ai = a[i];                                                 \
                for (int j = 0; j < NR; j++)                                 \
                    acc[i][j] = FMA(ai, b[j], acc[i][j]);                    \
            }                                                                \
        }                                                                    \
        for (int i = 0; i < MR; i++)                                         \
            for (int j = 0; j < NR; j++) out[i * NR + j] = acc[i][j];        \
    }

/* -std=c99 turns off fp contraction, so fused multiply-adds are asked
 * for explicitly where the target is known to have them. */
#define MULADD(x, y, z) ((x) * (y) + (z))
#if defined(__FMA__) || defined(__aarch64__)
#define BASE_FMAF __builtin_fmaf
#define BASE_FMA __builtin_fma
#else
#define BASE_FMAF MULADD
#define BASE_FMA MULADD
#endif

/* Baseline ISA (SSE2 on x86-64, NEON on arm64): 128-bit vectors. */
DEF_UKR(ukr_f32_base, float, 4, 8, BASE_FMAF, )
DEF_UKR(ukr_f64_base, double, 4, 4, BASE_FMA, )

#if defined(__x86_64__) && defined(__GNUC__)
#define TH_GEMM_X86 1
#define ATTR_AVX2 __attribute__((target("avx2,fma")))
#ifdef __clang__
#define ATTR_AVX512 __attribute__((target("avx512f,fma")))
#else /* gcc would otherwise keep to 256-bit vectors */
#define ATTR_AVX512 \
    __attribute__((target("avx512f,fma,prefer-vector-width=512")))
#endif
/* 16 vector registers: larger tiles spill accumulators */
DEF_UKR(ukr_f32_avx2, float, 5, 16, __builtin_fmaf, ATTR_AVX2)
DEF_UKR(ukr_f64_avx2, double, 4, 8, __builtin_fma, ATTR_AVX2)
DEF_UKR(ukr_f32_avx512, float, 12, 32, __builtin_fmaf, ATTR_AVX512)
DEF_UKR(ukr_f64_avx512, double, 12, 16, __builtin_fma, ATTR_AVX512)
#endif

#define MAX_MR 12
#define MAX_NR 32

typedef void (*ukr_f32_fn)(int64_t, const float *, const float *, float *);
typedef void (*ukr_f64_fn)(int64_t, const double *, const double *,
                           double *);
typedef struct {
    int mr_f32, nr_f32;
    ukr_f32_fn f32;
    int mr_f64, nr_f64;
    ukr_f64_fn f64;
} kernel_set;

static const kernel_set base_set = {4, 8, ukr_f32_base, 4, 4, ukr_f64_base};
#ifdef TH_GEMM_X86
static const kernel_set avx2_set = {5, 16, ukr_f32_avx2, 4, 8, ukr_f64_avx2};
static const kernel_set avx512_set = {12, 32, ukr_f32_avx512,
                                      12, 16, ukr_f64_avx512};
#endif

static const kernel_set *pick_kernels(void) {
    static const kernel_set *chosen;
    const kernel_set *k = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
    if (k) return k;
    k = &base_set;
#ifdef TH_GEMM_X86
    const char *want = getenv("TH_GEMM_KERNEL");
    __builtin_cpu_init();
    int has_avx512 = __builtin_cpu_supports("avx512f");
    int has_avx2 = __builtin_cpu_supports("avx2") &&
                   __builtin_cpu_supports("fma");
    if (want && strcmp(want, "generic") == 0)
        k = &base_set;
    else if (want && strcmp(want, "avx2") == 0 && has_avx2)
        k = &avx2_set;
    else if (has_avx512)
        k = &avx512_set;
    else if (has_avx2)
        k = &avx2_set;
#endif
    __atomic_store_n(&chosen, k, __ATOMIC_RELEASE);
    return k;
}

/* Cache budgets in bytes: a B sliver (KC x NR) should take half of L1,
 * an A block (MC x KC) part of L2, a B panel (KC x NC) about 1 MiB. */
#define L1_SLIVER_BYTES (16 * 1024)
#define L2_BLOCK_BYTES (192 * 1024)
#define L3_PANEL_BYTES (1024 * 1024)
/* Below this many multiply-adds packing costs more than it saves. */
#define SMALL_GEMM 8192
/* ... and below this many the work stays on one thread. */
#define PARALLEL_GEMM (1 << 17)

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

#define DEF_GEMM(T, S)                                                       \
    typedef struct {                                                         \
        int64_t m, n, k;                                                     \
        T alpha, beta;                                                       \
        const T *a, *b;                                                      \
        T *c;                                                                \
        int64_t rsa, csa, rsb, csb, rsc, csc;                                \
        int mr, nr;                                                          \
        ukr_##S##_fn ukr;                                                    \
        int64_t kc, mc;                                                      \
        int64_t jm, jn;           /* job grid: row blocks x col blocks */   \
        int64_t mslivers, nslivers;                                          \
        int64_t job_rows, job_cols; /* upper bounds, for the buffers */      \
        int failed;                                                          \
    } gemm_ctx_##S;                                                          \
                                                                             \
    /* A[i0:i0+mb, p0:p0+kb] into MR-row slivers: dst[s][p][i]. */          \
    static void pack_a_##S(const gemm_ctx_##S *g, T *restrict dst,           \
                           int64_t i0, int64_t mb, int64_t p0, int64_t kb) { \
        int mr = g->mr;                                                      \
        for (int64_t s = 0; s < mb; s += mr, dst += mr * kb) {               \
            int rows = (int)TH_MIN(mr, mb - s);                              \
            const T *src = g->a + (i0 + s) * g->rsa + p0 * g->csa;           \
            for (int i = 0; i < rows; i++) {                                 \
                const T *row = src + i * g->rsa;                             \
                if (g->csa == 1)                                             \
                    for (int64_t p = 0; p < kb; p++) dst[p * mr + i] = row[p]; \
                else                                                         \
                    for (int64_t p = 0; p < kb; p++)                         \
                        dst[p * mr + i] = row[p * g->csa];                   \
            }                                                                \
            for (int i = rows; i < mr; i++)                                  \
                for (int64_t p = 0; p < kb; p++) dst[p * mr + i] = 0;        \
        }                                                                    \
    }                                                                        \
                                                                             \
    /* B[p0:p0+kb, j0:j0+nb] into NR-column slivers: dst[s][p][j]. */       \
    static void pack_b_##S(const gemm_ctx_##S *g, T *restrict dst,           \
                           int64_t p0, int64_t kb, int64_t j0, int64_t nb) { \
        int nr = g->nr;                                                      \
        for (int64_t s = 0; s < nb; s += nr, dst += nr * kb) {               \
            int cols = (int)TH_MIN(nr, nb - s);                              \
            const T *src = g->b + p0 * g->rsb + (j0 + s) * g->csb;           \
            for (int64_t p = 0; p < kb; p++) {                               \
                const T *row = src + p * g->rsb;                             \
                T *d = dst + p * nr;                                         \
                if (g->csb == 1)                                             \
                    for (int j = 0; j < cols; j++) d[j] = row[j];            \
                else                                                         \
                    for (int j = 0; j < cols; j++) d[j] = row[j * g->csb];   \
                for (int j = cols; j < nr; j++) d[j] = 0;                    \
            }                                                                \
        }                                                                    \
    }                                                                        \
                                                                             \
    /* C tile (rows x cols) from the kernel's accumulators. */              \
    static void store_##S(const gemm_ctx_##S *g, T *c, int rows, int cols,   \
                          const T *acc, int first) {                         \
        T alpha = g->alpha, beta = g->beta;                                  \
        for (int i = 0; i < rows; i++) {                                     \
            T *ci = c + i * g->rsc;                                          \
            const T *ai = acc + i * g->nr;                                   \
            int64_t cs = g->csc;                                             \
            if (!first)                                                      \
                for (int j = 0; j < cols; j++) ci[j * cs] += alpha * ai[j];  \
            else if (beta == 0)                                              \
                for (int j = 0; j < cols; j++) ci[j * cs] = alpha * ai[j];   \
            else                                                             \
                for (int j = 0; j < cols; j++)                               \
                    ci[j * cs] = beta * ci[j * cs] + alpha * ai[j];          \
        }                                                                    \
    }                                                                        \
                                                                             \
    static void run_job_##S(const gemm_ctx_##S *g, int64_t job, T *abuf,     \
                            T *bbuf) {                                       \
        int mr = g->mr, nr = g->nr;                                          \
        int64_t r = job / g->jn, q = job % g->jn;                            \
        int64_t i0 = TH_MIN(g->m, r * g->mslivers / g->jm * mr);             \
        int64_t i1 = TH_MIN(g->m, (r + 1) * g->mslivers / g->jm * mr);       \
        int64_t j0 = TH_MIN(g->n, q * g->nslivers / g->jn * nr);             \
        int64_t j1 = TH_MIN(g->n, (q + 1) * g->nslivers / g->jn * nr);       \
        T acc[MAX_MR * MAX_NR];                                              \
        for (int64_t p0 = 0; p0 < g->k; p0 += g->kc) {                       \
            int64_t kb = TH_MIN(g->kc, g->k - p0);                           \
            int first = p0 == 0;                                             \
            pack_b_##S(g, bbuf, p0, kb, j0, j1 - j0);                        \
            for (int64_t ic = i0; ic < i1; ic += g->mc) {                    \
                int64_t mb = TH_MIN(g->mc, i1 - ic);                         \
                pack_a_##S(g, abuf, ic, mb, p0, kb);                         \
                for (int64_t jr = j0; jr < j1; jr += nr) {                   \
                    const T *bs = bbuf + (jr - j0) * kb;                     \
                    int cols = (int)TH_MIN(nr, j1 - jr);                     \
                    for (int64_t ir = ic; ir < ic + mb; ir += mr) {          \
                        g->ukr(kb, abuf + (ir - ic) * kb, bs, acc);          \
                        store_##S(g, g->c + ir * g->rsc + jr * g->csc,       \
                                  (int)TH_MIN(mr, ic + mb - ir), cols, acc,  \
                                  first);                                    \
                    }                                                        \
                }                                                            \
            }                                                                \
        }                                                                    \
    }                                                                        \
                                                                             \
    static void gemm_range_##S(int64_t begin, int64_t end, void *vctx) {     \
        gemm_ctx_##S *g = vctx;                                              \
        int64_t mb = TH_MIN(g->mc, g->job_rows);                             \
        T *abuf = th__alloc(mb * g->kc * (int64_t)sizeof(T));                \
        T *bbuf = th__alloc(g->job_cols * g->kc * (int64_t)sizeof(T));       \
        if (abuf && bbuf)                                                    \
            for (int64_t job = begin; job < end; job++)                      \
                run_job_##S(g, job, abuf, bbuf);                             \
        else                                                                 \
            __atomic_store_n(&g->failed, 1, __ATOMIC_RELAXED);               \
        th__free(abuf);                                                      \
        th__free(bbuf);                                                      \
    }                                                                        \
                                                                             \
    /* Straight loops for tiny products (batched 3x3s and the like). */     \
    static void gemm_small_##S(int64_t m, int64_t n, int64_t k, T alpha,     \
                               const T *a, int64_t rsa, int64_t csa,         \
                               const T *b, int64_t rsb, int64_t csb, T beta, \
                               T *c, int64_t rsc, int64_t csc) {             \
        for (int64_t i = 0; i < m; i++)                                      \
            for (int64_t j = 0; j < n; j++) {                                \
                T s = 0;                                                     \
                for (int64_t l = 0; l < k; l++)                              \
                    s += a[i * rsa + l * csa] * b[l * rsb + j * csb];        \
                T *cij = c + i * rsc + j * csc;                              \
                *cij = beta == 0 ? alpha * s : beta * *cij + alpha * s;      \
            }                                                                \
    }                                                                        \
                                                                             \
    int th__gemm_blocked_##S(int64_t m, int64_t n, int64_t k, T alpha,       \
                             const T *a, int64_t rsa, int64_t csa,           \
                             const T *b, int64_t rsb, int64_t csb, T beta,   \
                             T *c, int64_t rsc, int64_t csc) {               \
        if (m <= 0 || n <= 0) return TH_OK;                                 \
        if ((double)m * (double)n * (double)k <= SMALL_GEMM || k <= 0) {     \
            gemm_small_##S(m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta,   \
                           c, rsc, csc);                                     \
            return TH_OK;                                                    \
        }                                                                    \
        const kernel_set *ks = pick_kernels();                               \
        gemm_ctx_##S g = {0};                                                \
        g.m = m; g.n = n; g.k = k;                                           \
        g.alpha = alpha; g.beta = beta;                                      \
        g.a = a; g.b = b; g.c = c;                                           \
        g.rsa = rsa; g.csa = csa; g.rsb = rsb; g.csb = csb;                  \
        g.rsc = rsc; g.csc = csc;                                            \
        g.mr = ks->mr_##S; g.nr = ks->nr_##S; g.ukr = ks->S;                 \
        int64_t kc = L1_SLIVER_BYTES / ((int64_t)sizeof(T) * g.nr);          \
        g.kc = TH_MIN(kc, k);                                                \
        int64_t mc = L2_BLOCK_BYTES / ((int64_t)sizeof(T) * g.kc);           \
        g.mc = TH_MAX(1, mc / g.mr) * g.mr;                                  \
        int64_t nc = L3_PANEL_BYTES / ((int64_t)sizeof(T) * g.kc);           \
        nc = TH_MAX(1, nc / g.nr) * g.nr;                                    \
        g.mslivers = ceil_div(m, g.mr);                                      \
        g.nslivers = ceil_div(n, g.nr);                                      \
        /* Jobs: one band of rows per thread (each packs its B panels   \
         * once), times column blocks of at most nc. */                      \
        g.jm = 1;                                                            \
        g.jn = ceil_div(g.nslivers, nc / g.nr);                              \
        int nt = th_in_parallel() ? 1 : th_get_num_threads();               \
        int parallel = nt > 1 && (double)m * n * k >= PARALLEL_GEMM;         \
        if (parallel && g.mslivers >= nt)                                    \
            g.jm = nt;                                                       \
        else if (parallel)                                                   \
            g.jn = TH_MIN(g.nslivers, ceil_div(g.jn, nt) * nt);              \
        g.job_rows = ceil_div(g.mslivers, g.jm) * g.mr;                      \
        g.job_cols = ceil_div(g.nslivers, g.jn) * g.nr;                      \
        int64_t jobs = g.jm * g.jn;                                          \
        if (parallel)                                                        \
            th_parallel_for(jobs, 1, gemm_range_##S, &g);                   \
        else                                                                 \
            gemm_range_##S(0, jobs, &g);                                     \
        if (g.failed)                                                        \
            return th__error(TH_ERR_MEMORY,                                  \
                             "not enough memory for the GEMM work buffers"); \
        return TH_OK;                                                        \
    }

DEF_GEMM(float, f32)
DEF_GEMM(double, f64)

/* ---- dot and gemv -------------------------------------------------- */
/* Contiguous dots keep LANES partial sums, which gcc maps onto vector
 * registers (a single running sum could not be vectorised). */
#define DEF_DOT(T, S, LANES)                                                 \
    T th__dot_blocked_##S(int64_t n, const T *x, int64_t incx, const T *y,   \
                          int64_t incy) {                                    \
        T part[LANES] = {0};                                                 \
        int64_t i = 0;                                                       \
        if (incx == 1 && incy == 1) {                                        \
            for (; i + LANES <= n; i += LANES)                               \
                for (int j = 0; j < LANES; j++)                              \
                    part[j] += x[i + j] * y[i + j];                          \
            for (; i < n; i++) part[0] += x[i] * y[i];                       \
        } else {                                                             \
            for (; i < n; i++) part[i & 3] += x[i * incx] * y[i * incy];     \
        }                                                                    \
        T s = 0;                                                             \
        for (int j = 0; j < LANES; j++) s += part[j];                        \
        return s;                                                            \
    }
DEF_DOT(float, f32, 16)
DEF_DOT(double, f64, 8)

#define GEMV_ROWS 256
#define DEF_GEMV(T, S)                                                       \
    typedef struct {                                                         \
        int64_t k;                                                           \
        T alpha, beta;                                                       \
        const T *a, *x;                                                      \
        T *y;                                                                \
        int64_t rsa, csa, incx, incy;                                        \
    } gemv_ctx_##S;                                                          \
                                                                             \
    static void gemv_put_##S(const gemv_ctx_##S *g, int64_t i, T s) {        \
        T *yi = g->y + i * g->incy;                                          \
        *yi = g->beta == 0 ? g->alpha * s : g->beta * *yi + g->alpha * s;    \
    }                                                                        \
                                                                             \
    static void gemv_range_##S(int64_t begin, int64_t end, void *vctx) {     \
        const gemv_ctx_##S *g = vctx;                                        \
        if (g->rsa == 1 && g->csa != 1) {                                    \
            /* columns are contiguous: axpy over blocks of rows */           \
            T acc[GEMV_ROWS];                                                \
            for (int64_t i0 = begin; i0 < end; i0 += GEMV_ROWS) {            \
                int64_t nb = TH_MIN(GEMV_ROWS, end - i0);                    \
                for (int64_t i = 0; i < nb; i++) acc[i] = 0;                 \
                for (int64_t l = 0; l < g->k; l++) {                         \
                    const T *col = g->a + l * g->csa + i0;                   \
                    T xl = g->x[l * g->incx];                                \
                    for (int64_t i = 0; i < nb; i++) acc[i] += col[i] * xl;  \
                }                                                            \
                for (int64_t i = 0; i < nb; i++)                             \
                    gemv_put_##S(g, i0 + i, acc[i]);                         \
            }                                                                \
        } else {                                                             \
            for (int64_t i = begin; i < end; i++)                            \
                gemv_put_##S(g, i,                                           \
                             th__dot_blocked_##S(g->k, g->a + i * g->rsa,    \
                                                 g->csa, g->x, g->incx));    \
        }                                                                    \
    }                                                                        \
                                                                             \
    void th__gemv_blocked_##S(int64_t m, int64_t k, T alpha, const T *a,     \
                              int64_t rsa, int64_t csa, const T *x,          \
                              int64_t incx, T beta, T *y, int64_t incy) {    \
        gemv_ctx_##S g = {k, alpha, beta, a, x, y, rsa, csa, incx, incy};    \
        int64_t grain = TH_MAX(GEMV_ROWS, TH_GRAIN / TH_MAX(k, 1));          \
        th_parallel_for(m, grain, gemv_range_##S, &g);                      \
    }
DEF_GEMV(float, f32)
DEF_GEMV(double, f64)

#else
/* Built with BLAS: linalg.c calls OpenBLAS instead. */
typedef int th__gemm_blocked_unused;
#endif
