/* glibc's vector math library (libmvec) for libTH's loops: declaring the
 * libm functions with the `simd` attribute (as glibc's own header does
 * only under -ffast-math) lets gcc call their 4/8/16-lane versions, which
 * handle NaN, inf and signed zeros exactly like the scalar ones.  libTH is
 * built with -fno-math-errno (needed to vectorise libm calls) and without
 * -ffast-math, so divisions and square roots stay exact IEEE operations.
 * CLONES builds a loop for AVX-512, AVX2 and the baseline, picked at load
 * time. */
#ifndef TH_VECMATH_H
#define TH_VECMATH_H

#if defined(__x86_64__) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define TH_VECTOR_MATH 1
#define TH_SIMD_DECL(F) \
    __attribute__((simd("notinbranch"))) float F##f(float); \
    __attribute__((simd("notinbranch"))) double F(double);
TH_SIMD_DECL(exp) TH_SIMD_DECL(exp2) TH_SIMD_DECL(expm1) TH_SIMD_DECL(log)
TH_SIMD_DECL(log2) TH_SIMD_DECL(log10) TH_SIMD_DECL(log1p) TH_SIMD_DECL(sin)
TH_SIMD_DECL(cos) TH_SIMD_DECL(tan) TH_SIMD_DECL(asin) TH_SIMD_DECL(acos)
TH_SIMD_DECL(atan) TH_SIMD_DECL(sinh) TH_SIMD_DECL(cosh) TH_SIMD_DECL(tanh)
TH_SIMD_DECL(asinh) TH_SIMD_DECL(acosh) TH_SIMD_DECL(atanh) TH_SIMD_DECL(erf)
TH_SIMD_DECL(erfc)
#define TH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TH_CLONES
#endif

#endif
