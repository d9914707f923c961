/* OpenMP parallel loops with a grain size, and the thread-count setting. */
#include "th_internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef TH_NO_BLAS
void scipy_openblas_set_num_threads(int n);
#endif

#ifdef _OPENMP
/* 0: not yet initialised.  Read by every thread that runs a parallel loop,
 * so accessed atomically (set it before starting threads that use libTH). */
static int num_threads = 0;
#endif

int th_get_num_threads(void) {
#ifdef _OPENMP
    int n = __atomic_load_n(&num_threads, __ATOMIC_RELAXED);
    if (n == 0) {  /* first use; a concurrent th_set_num_threads wins */
        int unset = 0;
        n = omp_get_max_threads();
        if (!__atomic_compare_exchange_n(&num_threads, &unset, n, 0,
                                         __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            n = unset;
    }
    return n;
#else
    return 1;
#endif
}

int th_set_num_threads(int n) {
    if (n < 1)
        return th__error(TH_ERR_VALUE,
                         "set_num_threads expects a positive integer, got %d",
                         n);
#ifdef _OPENMP
    __atomic_store_n(&num_threads, n, __ATOMIC_RELAXED);
    omp_set_num_threads(n);
#endif
#ifndef TH_NO_BLAS
    scipy_openblas_set_num_threads(n);
#endif
    return TH_OK;
}

int th__in_parallel(void) {
#ifdef _OPENMP
    return omp_in_parallel();
#else
    return 0;
#endif
}

void th__parallel_for(int64_t n, int64_t grain, th_range_fn fn, void *ctx) {
    if (n <= 0)
        return;
#ifdef _OPENMP
    int nt = th_get_num_threads();
    if (grain < 1)
        grain = 1;
    int64_t max_chunks = n / grain;
    if (nt > max_chunks)
        nt = (int)max_chunks;
    if (nt > 1 && !omp_in_parallel()) {
#pragma omp parallel num_threads(nt)
        {
            int tid = omp_get_thread_num();
            int cnt = omp_get_num_threads();
            int64_t chunk = (n + cnt - 1) / cnt;
            int64_t b = tid * chunk;
            int64_t e = TH_MIN(n, b + chunk);
            if (b < e)
                fn(b, e, ctx);
        }
        return;
    }
#else
    (void)grain;
#endif
    fn(0, n, ctx);
}
