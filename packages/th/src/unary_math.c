/* Transcendental element-wise loops, vectorised through glibc's vector
 * math library (vecmath.h); each loop is cloned for AVX-512 and AVX2. */
#include "elementwise.h"
#include "vecmath.h"

#define MATH_LOOP(NAME, T, EXPR)                                              \
    TH_CLONES                                                                 \
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
