/* Transcendental element-wise loops, vectorised through glibc's vector
 * math library (libmvec): declaring the libm functions with the `simd`
 * attribute (as glibc's own header does only under -ffast-math) lets gcc
 * call their 4/8/16-lane versions, which handle NaN, inf and signed zeros
 * exactly like the scalar ones.  The library is built with -fno-math-errno
 * (needed to vectorise libm calls) and without -ffast-math, so divisions and
 * square roots stay exact IEEE operations.  Each loop is cloned for AVX-512
 * and AVX2 and picked at load time. */
#include "elementwise.h"

#if defined(__x86_64__) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define VECTOR_MATH 1
#define SIMD_DECL(F) \
    __attribute__((simd("notinbranch"))) float F##f(float); \
    __attribute__((simd("notinbranch"))) double F(double);
SIMD_DECL(exp) SIMD_DECL(exp2) SIMD_DECL(expm1) SIMD_DECL(log) SIMD_DECL(log2)
SIMD_DECL(log10) SIMD_DECL(log1p) SIMD_DECL(sin) SIMD_DECL(cos) SIMD_DECL(tan)
SIMD_DECL(asin) SIMD_DECL(acos) SIMD_DECL(atan) SIMD_DECL(sinh) SIMD_DECL(cosh)
SIMD_DECL(tanh) SIMD_DECL(asinh) SIMD_DECL(acosh) SIMD_DECL(atanh) SIMD_DECL(erf)
SIMD_DECL(erfc)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

#define MATH_LOOP(NAME, T, EXPR)                                              \
    CLONES                                                                    \
    static void NAME(char **d, const int64_t *s, int64_t n, void *ctx) {      \
        (void)ctx;                                                            \
        if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                         \
            T *restrict o = (T *)d[0];                                        \
            const T *restrict xs = (const T *)d[1];                           \
            for (int64_t i = 0; i < n; i++) {                                 \
                T x = xs[i];                                                  \
                o[i] = (EXPR);                                                \
            }                                                                 \
        } else {                                                              \
            char *op = d[0];                                                  \
            const char *xp = d[1];                                            \
            for (int64_t i = 0; i < n; i++, op += s[0], xp += s[1]) {         \
                T x = *(const T *)xp;                                         \
                *(T *)op = (EXPR);                                            \
            }                                                                 \
        }                                                                     \
    }

/* the MATH rows of th_ops.def: their expression in x, which <tgmath.h>
 * makes call the float functions in the float32 loop (expf, sqrtf...) */
#include <tgmath.h>
#define TH_UNARY_OP(CODE, name, c, kind, flags, f, i, b) GEN_##kind(name, f)
#define GEN_MATH(name, EXPR)            \
    MATH_LOOP(name##_f32, float, EXPR)  \
    MATH_LOOP(name##_f64, double, EXPR)
#define GEN_KEEP(name, EXPR)
#define GEN_FLOAT(name, EXPR)
#define GEN_PRED(name, EXPR)
#include "th_ops.def"

th_loop_fn th__unary_math_loop(int op, int dtype) {
    int d = dtype == TH_FLOAT64;
    switch (op) {
#undef GEN_MATH
#define GEN_MATH(CODE, name) \
    case TH_##CODE: return d ? name##_f64 : name##_f32;
#define TH_UNARY_OP(CODE, name, c, kind, ...) GEN_##kind(CODE, name)
#include "th_ops.def"
    default: return NULL;
    }
}
