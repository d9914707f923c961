/* Random sampling: a counter-based Philox4x32-10 stream.
 *
 * THE STREAM (libTHC must reproduce this mapping exactly)
 *
 *  Block.  A generator holds a 64-bit `seed` and an `offset` counting the
 *  128-bit blocks already consumed.  Block b is Philox4x32-10 (Salmon et
 *  al., Random123; multipliers 0xD2511F53 / 0xCD9E8D57, Weyl constants
 *  0x9E3779B9 / 0xBB67AE85, 10 rounds) with
 *      key     = (k0, k1) = (seed & 0xffffffff, seed >> 32)
 *      counter = (c0, c1, c2, c3) = (b & 0xffffffff, b >> 32, 0, 0)
 *  giving four 32-bit words x0..x3.  (Check: seed 0, block 0 gives
 *  6627e8d5 e169c58d bc57ac4c 9b00dbd8.)
 *
 *  Elements.  A call that makes n values with P values per block draws
 *  element i (row-major order of the output) from block offset + i / P,
 *  slot j = i % P, and then advances offset by ceil(n / P).  The result
 *  is the same whatever the thread count or the output's strides.
 *  A "64-bit word" of slot j (when P = 2) is w = x[2j] | x[2j+1] << 32.
 *
 *  uniform_  float32/float16/bfloat16: P = 4, u = (x[j] >> 8) * 2^-24.
 *            float64: P = 2, u = (w >> 11) * 2^-53.  Both in [0, 1).
 *            v = low + (high - low) * u in float64, then v = min(v, cap)
 *            where cap is the largest value of the dtype below high (so
 *            results stay in [low, high); cap = inf when low == high),
 *            then rounded to the dtype (float16/bfloat16 via float32).
 *  normal_   Box-Muller on pairs.  float32/float16/bfloat16: P = 4; pair
 *            (x0, x1) gives elements 0 and 1, (x2, x3) elements 2 and 3:
 *                u1 = ((a >> 8) + 1) * 2^-24   in (0, 1]
 *                u2 = (b >> 8) * 2^-24         in [0, 1)
 *                r = sqrt(-2 log u1), t = 2pi u2  (float32 arithmetic)
 *                z0 = r cos t, z1 = r sin t
 *            float64: P = 2; u1 = ((w0 >> 11) + 1) * 2^-53 from words
 *            (x0, x1), u2 = (w1 >> 11) * 2^-53 from (x2, x3), float64
 *            arithmetic; elements z0, z1.  value = mean + std * z in
 *            float64, rounded to the dtype (float16/bfloat16 via
 *            float32).  (Transcendentals may differ by an ulp between
 *            devices.)
 *            normal_tensor_ uses the same z with mean[i] and std[i].
 *  bernoulli_ P = 4; element is 1 when x[j] * 2^-32 < p (or p[i] of the
 *            broadcast p tensor), else 0.
 *  randint_  P = 2; value = low + floor(w * (high - low) / 2^64), exact
 *            128-bit product (bias below (high - low) / 2^64).
 *  randperm  P = 2; "inside-out" Fisher-Yates: for i = 0 .. n-1,
 *            j = floor(w_i * (i + 1) / 2^64), a[i] = a[j], a[j] = i.
 *  multinomial with replacement: P = 2, one draw per output element
 *            (row r, sample s -> element r * num_samples + s);
 *            u = (w >> 11) * 2^-53; the category is the first k whose
 *            cumulative weight (float64 running sum) exceeds u * total
 *            (a row whose sum overflows is first divided by its largest
 *            weight; if rounding leaves no such k, the last category of
 *            positive weight).
 *  multinomial without replacement: P = 2, one draw per category (row r,
 *            category k -> element r * categories + k); exponential race
 *            key_k = -log(((w >> 11) + 1) * 2^-53) / weight_k; the samples
 *            are the num_samples smallest keys (ties: lower index first),
 *            in increasing key order.
 *  Integer results are stored into the dtype by conversion from int64
 *  (float16/bfloat16 via float32); weights are read as float64.
 *
 * Concurrency: a call reserves its blocks with one atomic fetch-add on
 * offset, so threads sharing a generator never reuse a block.  Changing
 * the seed while another thread draws from the generator is a race. */
#include "th_internal.h"

#define DEFAULT_SEED 67280421310721ULL

/* ---- Philox4x32-10 ------------------------------------------------- */
/* LANES consecutive blocks at a time; w receives their words in element
 * order: w[4 * l + j] is word x_j of block `block + l`. */
#define LANES 8
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

#if defined(__SSE2__) && !defined(TH_RANDOM_NO_SIMD)
#include <emmintrin.h>

/* hi and lo 32-bit halves of the four products a[l] * m */
static inline void mulhilo4(__m128i a, __m128i m, __m128i *hi, __m128i *lo) {
    const __m128i low_half = _mm_set_epi32(0, -1, 0, -1);
    __m128i even = _mm_mul_epu32(a, m);
    __m128i odd = _mm_mul_epu32(_mm_srli_epi64(a, 32), m);
    *hi = _mm_or_si128(_mm_srli_epi64(even, 32), _mm_andnot_si128(low_half, odd));
    *lo = _mm_or_si128(_mm_and_si128(even, low_half), _mm_slli_epi64(odd, 32));
}

static void philox_lanes(uint64_t key, uint64_t block, uint32_t *w) {
    enum { V = LANES / 4 };
    __m128i c0[V], c1[V], c2[V], c3[V];
    const __m128i m0 = _mm_set1_epi32((int)PHILOX_M0);
    const __m128i m1 = _mm_set1_epi32((int)PHILOX_M1);
    for (int v = 0; v < V; v++) {
        uint32_t lo[4], hi[4];
        for (int l = 0; l < 4; l++) {
            uint64_t b = block + (uint64_t)(4 * v + l);
            lo[l] = (uint32_t)b;
            hi[l] = (uint32_t)(b >> 32);
        }
        c0[v] = _mm_loadu_si128((const __m128i *)lo);
        c1[v] = _mm_loadu_si128((const __m128i *)hi);
        c2[v] = c3[v] = _mm_setzero_si128();
    }
    uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    for (int r = 0; r < 10; r++) {
        __m128i key0 = _mm_set1_epi32((int)k0), key1 = _mm_set1_epi32((int)k1);
        for (int v = 0; v < V; v++) {
            __m128i hi0, lo0, hi1, lo1;
            mulhilo4(c0[v], m0, &hi0, &lo0);
            mulhilo4(c2[v], m1, &hi1, &lo1);
            c0[v] = _mm_xor_si128(_mm_xor_si128(hi1, c1[v]), key0);
            c2[v] = _mm_xor_si128(_mm_xor_si128(hi0, c3[v]), key1);
            c1[v] = lo1;
            c3[v] = lo0;
        }
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
    for (int v = 0; v < V; v++) { /* 4x4 transpose to block order */
        __m128i t0 = _mm_unpacklo_epi32(c0[v], c1[v]);
        __m128i t1 = _mm_unpacklo_epi32(c2[v], c3[v]);
        __m128i t2 = _mm_unpackhi_epi32(c0[v], c1[v]);
        __m128i t3 = _mm_unpackhi_epi32(c2[v], c3[v]);
        __m128i *o = (__m128i *)(w + 16 * v);
        _mm_storeu_si128(o + 0, _mm_unpacklo_epi64(t0, t1));
        _mm_storeu_si128(o + 1, _mm_unpackhi_epi64(t0, t1));
        _mm_storeu_si128(o + 2, _mm_unpacklo_epi64(t2, t3));
        _mm_storeu_si128(o + 3, _mm_unpackhi_epi64(t2, t3));
    }
}
#else
static void philox_lanes(uint64_t key, uint64_t block, uint32_t *w) {
    uint32_t c0[LANES], c1[LANES], c2[LANES], c3[LANES];
    for (int l = 0; l < LANES; l++) {
        uint64_t b = block + (uint64_t)l;
        c0[l] = (uint32_t)b;
        c1[l] = (uint32_t)(b >> 32);
        c2[l] = c3[l] = 0;
    }
    uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    for (int r = 0; r < 10; r++) {
        for (int l = 0; l < LANES; l++) {
            uint64_t p0 = (uint64_t)PHILOX_M0 * c0[l];
            uint64_t p1 = (uint64_t)PHILOX_M1 * c2[l];
            uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1[l] ^ k0;
            uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3[l] ^ k1;
            c1[l] = (uint32_t)p1;
            c3[l] = (uint32_t)p0;
            c0[l] = n0;
            c2[l] = n2;
        }
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
    for (int l = 0; l < LANES; l++) {
        w[4 * l + 0] = c0[l];
        w[4 * l + 1] = c1[l];
        w[4 * l + 2] = c2[l];
        w[4 * l + 3] = c3[l];
    }
}
#endif

/* Runs the statements after it for each group of up to LANES blocks of
 * [B0, B1) in C's stream, PER elements per block: w[] holds the group's
 * words in element order, i0 is its first element and m the number of
 * its elements below C->n. */
#define FOR_EACH_GROUP(C, B0, B1, PER, ...)                                 \
    for (int64_t g_ = (B0); g_ < (B1); g_ += LANES) {                       \
        uint32_t w[4 * LANES];                                              \
        philox_lanes((C)->key, (C)->base + (uint64_t)g_, w);                \
        const int64_t i0 = g_ * (PER);                                      \
        const int64_t m =                                                   \
            TH_MIN(TH_MIN(LANES, (B1) - g_) * (PER), (C)->n - i0);          \
        __VA_ARGS__                                                         \
    }

/* ---- words to numbers ---------------------------------------------- */
static inline uint64_t word64(uint32_t lo, uint32_t hi) {
    return (uint64_t)lo | ((uint64_t)hi << 32);
}
static inline float u24(uint32_t w) { return (float)(w >> 8) * 0x1p-24f; }
static inline double u53(uint32_t lo, uint32_t hi) {
    return (double)(word64(lo, hi) >> 11) * 0x1p-53;
}
/* floor(a * b / 2^64) without a 128-bit type */
static inline uint64_t mulhi64(uint64_t a, uint64_t b) {
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

static inline void box_muller_f(uint32_t a, uint32_t b, float *z0, float *z1) {
    float u1 = (float)((a >> 8) + 1) * 0x1p-24f;
    float t = 6.28318530717958647692f * u24(b);
    float r = sqrtf(-2.0f * logf(u1));
    *z0 = r * cosf(t);
    *z1 = r * sinf(t);
}

static inline void box_muller_d(const uint32_t x[4], double *z0, double *z1) {
    double u1 = (double)((word64(x[0], x[1]) >> 11) + 1) * 0x1p-53;
    double t = 2.0 * TH_PI * u53(x[2], x[3]);
    double r = sqrt(-2.0 * log(u1));
    *z0 = r * cos(t);
    *z1 = r * sin(t);
}

/* Next half/bfloat16 bit pattern towards -inf (both are sign-magnitude). */
static inline th_half_t half_down(th_half_t h) {
    if (h == 0) return 0x8001;
    return (th_half_t)((h & 0x8000) ? h + 1 : h - 1);
}

/* ---- generators ---------------------------------------------------- */
static th_generator default_gen = {DEFAULT_SEED, 0};

th_generator *th_default_generator(void) { return &default_gen; }

th_generator *th_generator_new(uint64_t seed) {
    th_generator *g = malloc(sizeof *g);
    if (!g) return th__error_null(TH_ERR_MEMORY, "not enough memory for a generator");
    g->seed = seed;
    g->offset = 0;
    return g;
}

void th_generator_free(th_generator *g) {
    if (g != &default_gen) free(g);
}

void th_generator_set_seed(th_generator *g, uint64_t seed) {
    if (!g) g = &default_gen;
    __atomic_store_n(&g->seed, seed, __ATOMIC_RELAXED);
    __atomic_store_n(&g->offset, 0, __ATOMIC_RELAXED);
}

/* Everything a kernel needs: the stream position and the parameters. */
typedef struct {
    uint64_t key, base;     /* Philox key, first reserved block */
    int64_t n;              /* elements to produce */
    char *out;              /* contiguous output */
    double a, b, c;         /* per-call scalars (see each kernel) */
    const double *pa, *pb;  /* per-element parameters, or NULL */
    int64_t lo;             /* randint: low */
    uint64_t range;         /* randint: high - low */
} rng_ctx;

/* Takes nblocks blocks from g (NULL: the default generator) for c. */
static void reserve(th_generator *g, int64_t nblocks, rng_ctx *c) {
    if (!g) g = &default_gen;
    c->key = __atomic_load_n(&g->seed, __ATOMIC_RELAXED);
    c->base = __atomic_fetch_add(&g->offset, (uint64_t)nblocks, __ATOMIC_RELAXED);
}

/* Reserves the blocks for c->n values at `per` per block and runs fn
 * over the blocks in parallel (grain in elements). */
static void run_blocks(th_generator *g, rng_ctx *c, int64_t per,
                       int64_t grain, th_range_fn fn) {
    int64_t nblocks = (c->n + per - 1) / per;
    reserve(g, nblocks, c);
    th_parallel_for(nblocks, TH_MAX(grain / per, 1), fn, c);
}

/* In-place ops generate into t itself when it is contiguous, else into a
 * contiguous scratch tensor that finish() copies back. */
static th_tensor *target(th_tensor *t) {
    if (th_is_contiguous(t)) {
        th_tensor_retain(t);
        return t;
    }
    return th__empty_like(t, t->dtype);
}

static int finish(th_tensor *t, th_tensor *dst) {
    int rc = TH_OK;
    if (dst == t) th__bump_version(t);
    else rc = th_copy(t, dst);
    th_tensor_release(dst);
    return rc;
}

static int check_floating(const th_tensor *t, const char *op) {
    if (!th_dtype_is_floating(t->dtype))
        return th__error(TH_ERR_TYPE, "%s expects a floating point tensor, "
                         "but got dtype %s", op, th_dtype_name(t->dtype));
    return TH_OK;
}

/* Rounding a double to each float dtype. */
#define CONV_f32(v) ((float)(v))
#define CONV_f64(v) (v)
#define CONV_f16(v) th__float_to_half((float)(v))
#define CONV_bf16(v) th__float_to_bf16((float)(v))

/* ---- uniform_ ------------------------------------------------------ */
/* c->a = low, c->b = high - low, c->c = cap: the largest value of the
 * dtype below high.  Clamping v to cap before rounding gives the same
 * result as stepping a value that rounded up to high back down.  The
 * per-group loops live in helpers taking restrict pointers and plain
 * values: that is what lets GCC vectorise them. */
#define UNIFORM24(S, T)                                                     \
    static inline void uniform_group_##S(                                   \
        T *restrict o, const uint32_t *restrict w, int64_t m, double low,   \
        double span, double cap) {                                          \
        for (int64_t k = 0; k < m; k++) {                                   \
            double v = low + span * (double)u24(w[k]);                      \
            o[k] = CONV_##S(v < cap ? v : cap);                             \
        }                                                                   \
    }                                                                       \
    static void uniform_##S(int64_t b0, int64_t b1, void *vctx) {           \
        const rng_ctx *c = vctx;                                            \
        T *out = (T *)c->out;                                               \
        FOR_EACH_GROUP(c, b0, b1, 4,                                        \
            uniform_group_##S(out + i0, w, m, c->a, c->b, c->c);)           \
    }
UNIFORM24(f32, float)
UNIFORM24(f16, th_half_t)
UNIFORM24(bf16, th_half_t)

static inline void uniform_group_f64(double *restrict o,
                                     const uint32_t *restrict w, int64_t m,
                                     double low, double span, double cap) {
    for (int64_t k = 0; k < m; k++) {
        double v = low + span * u53(w[2 * k], w[2 * k + 1]);
        o[k] = v < cap ? v : cap;
    }
}

static void uniform_f64(int64_t b0, int64_t b1, void *vctx) {
    const rng_ctx *c = vctx;
    double *out = (double *)c->out;
    FOR_EACH_GROUP(c, b0, b1, 2,
        uniform_group_f64(out + i0, w, m, c->a, c->b, c->c);)
}

/* Largest value of a float dtype below high (as a double). */
static double value_below(double high, int dtype) {
    if (dtype == TH_FLOAT64) return nextafter(high, -INFINITY);
    float f = (float)high;
    if (dtype == TH_FLOAT32) return (double)f < high ? f : nextafterf(f, -INFINITY);
    int bf = dtype == TH_BFLOAT16;
    th_half_t h = bf ? th__float_to_bf16(f) : th__float_to_half(f);
    for (;;) {
        double v = bf ? th__bf16_to_float(h) : th__half_to_float(h);
        if (v < high) return v;
        h = half_down(h);
    }
}

static double dtype_max(int dtype) {
    switch (dtype) {
    case TH_FLOAT16: return 65504.0;
    case TH_BFLOAT16: return 3.3895313892515355e38;
    case TH_FLOAT32: return 3.4028234663852886e38;
    default: return 1.7976931348623157e308;
    }
}

int th_uniform_(th_tensor *t, double low, double high, th_generator *g) {
    if (check_floating(t, "uniform_")) return th_last_status();
    double max = dtype_max(t->dtype);
    const char *name = th_dtype_name(t->dtype);
    if (!(low >= -max && low <= max))
        return th__error(TH_ERR_RUNTIME, "from=%g is out of bounds for %s",
                         low, name);
    if (!(high >= -max && high <= max))
        return th__error(TH_ERR_RUNTIME, "to=%g is out of bounds for %s",
                         high, name);
    if (low > high)
        return th__error(TH_ERR_RUNTIME, "uniform_ expects to return a "
                         "[from, to) range, but found from=%g > to=%g",
                         low, high);
    if (!(high - low <= max))
        return th__error(TH_ERR_RUNTIME, "uniform_ expects to-from <= %g "
                         "(the largest %s), but found to=%g and from=%g "
                         "which result in to-from to exceed the limit",
                         max, name, high, low);
    th_tensor *dst = target(t);
    if (!dst) return th_last_status();
    rng_ctx c = {0};
    c.n = th_numel(t);
    c.out = th__ptr(dst);
    c.a = low;
    c.b = high - low;
    c.c = low < high ? value_below(high, t->dtype) : INFINITY;
    switch (t->dtype) {
    case TH_FLOAT32: run_blocks(g, &c, 4, TH_GRAIN, uniform_f32); break;
    case TH_FLOAT16: run_blocks(g, &c, 4, TH_GRAIN, uniform_f16); break;
    case TH_BFLOAT16: run_blocks(g, &c, 4, TH_GRAIN, uniform_bf16); break;
    default: run_blocks(g, &c, 2, TH_GRAIN, uniform_f64); break;
    }
    return finish(t, dst);
}

/* ---- normal_ and normal_tensor_ ------------------------------------ */
/* c->a = mean, c->b = std, or per element c->pa / c->pb when set. */
#define NORMAL_STORE(S, dst, i, z)                                          \
    do {                                                                    \
        double mu = c->pa ? c->pa[i] : c->a, sd = c->pb ? c->pb[i] : c->b;  \
        (dst) = CONV_##S(mu + sd * (double)(z));                            \
    } while (0)

/* Pairs of elements (2p, 2p + 1) come from words (w[2p], w[2p + 1]). */
#define NORMAL24(S, T)                                                      \
    static void normal_##S(int64_t b0, int64_t b1, void *vctx) {            \
        const rng_ctx *c = vctx;                                            \
        T *out = (T *)c->out;                                               \
        FOR_EACH_GROUP(c, b0, b1, 4,                                        \
            float z[4 * LANES];                                             \
            for (int64_t k = 0; k < m; k += 2)                              \
                box_muller_f(w[k], w[k + 1], &z[k], &z[k + 1]);             \
            for (int64_t k = 0; k < m; k++)                                 \
                NORMAL_STORE(S, out[i0 + k], i0 + k, z[k]);)                \
    }
NORMAL24(f32, float)
NORMAL24(f16, th_half_t)
NORMAL24(bf16, th_half_t)

/* Elements (2l, 2l + 1) come from block l's words w[4l .. 4l + 3]. */
static void normal_f64(int64_t b0, int64_t b1, void *vctx) {
    const rng_ctx *c = vctx;
    double *out = (double *)c->out;
    FOR_EACH_GROUP(c, b0, b1, 2,
        double z[2 * LANES];
        for (int64_t k = 0; k < m; k += 2)
            box_muller_d(&w[2 * k], &z[k], &z[k + 1]);
        for (int64_t k = 0; k < m; k++)
            NORMAL_STORE(f64, out[i0 + k], i0 + k, z[k]);)
}

/* Box-Muller costs more than a uniform: split smaller ranges. */
#define NORMAL_GRAIN (TH_GRAIN / 8)

static int run_normal(th_tensor *t, rng_ctx *c, th_generator *g) {
    th_tensor *dst = target(t);
    if (!dst) return th_last_status();
    c->n = th_numel(t);
    c->out = th__ptr(dst);
    switch (t->dtype) {
    case TH_FLOAT32: run_blocks(g, c, 4, NORMAL_GRAIN, normal_f32); break;
    case TH_FLOAT16: run_blocks(g, c, 4, NORMAL_GRAIN, normal_f16); break;
    case TH_BFLOAT16: run_blocks(g, c, 4, NORMAL_GRAIN, normal_bf16); break;
    default: run_blocks(g, c, 2, NORMAL_GRAIN, normal_f64); break;
    }
    return finish(t, dst);
}

int th_normal_(th_tensor *t, double mean, double std, th_generator *g) {
    if (check_floating(t, "normal_")) return th_last_status();
    if (!(std >= 0.0))
        return th__error(TH_ERR_RUNTIME,
                         "normal expects std >= 0.0, but found std %g", std);
    rng_ctx c = {0};
    c.a = mean;
    c.b = std;
    return run_normal(t, &c, g);
}

/* `p` broadcast to t's shape as a fresh contiguous float64 tensor. */
static th_tensor *expand_f64(const th_tensor *p, const th_tensor *t) {
    th_tensor *e = th__expand_to(p, t->ndim, t->sizes);
    if (!e) return NULL;
    th_tensor *r = th_to_dtype(e, TH_FLOAT64);
    th_tensor_release(e);
    return r;
}

int th_normal_tensor_(th_tensor *t, const th_tensor *mean,
                      const th_tensor *std, th_generator *g) {
    if (check_floating(t, "normal_")) return th_last_status();
    /* a complex mean or std would lose its imaginary part */
    if (th__refuse_complex("normal", mean->dtype) ||
        th__refuse_complex("normal", std->dtype))
        return th_last_status();
    th_tensor *m = expand_f64(mean, t), *s = m ? expand_f64(std, t) : NULL;
    if (!s) {
        char b1[256], b2[256], b3[256];
        th_tensor_release(m);
        return th__error(TH_ERR_RUNTIME, "normal: mean of shape %s and std "
                         "of shape %s cannot be broadcast to the output shape "
                         "%s", th__shape_str(mean->ndim, mean->sizes, b1),
                         th__shape_str(std->ndim, std->sizes, b2),
                         th__shape_str(t->ndim, t->sizes, b3));
    }
    rng_ctx c = {0};
    c.pa = (const double *)th__ptr(m);
    c.pb = (const double *)th__ptr(s);
    int64_t n = th_numel(t);
    for (int64_t i = 0; i < n; i++)
        if (!(c.pb[i] >= 0.0)) {
            double bad = c.pb[i];
            th_tensor_release(m);
            th_tensor_release(s);
            return th__error(TH_ERR_RUNTIME, "normal expects all elements of "
                             "std >= 0.0, but found std %g", bad);
        }
    int rc = run_normal(t, &c, g);
    th_tensor_release(m);
    th_tensor_release(s);
    return rc;
}

/* ---- integer-valued kernels: any dtype ----------------------------- */
#define ALL_DTYPES(X)                  \
    TH_FOR_NATIVE_DTYPES(X)            \
    X(TH_FLOAT16, th_half_t, f16)      \
    X(TH_BFLOAT16, th_half_t, bf16)

/* int64 value to element type (values were range-checked) */
#define FROM_I64_f32(v) ((float)(v))
#define FROM_I64_f64(v) ((double)(v))
#define FROM_I64_f16(v) th__float_to_half((float)(v))
#define FROM_I64_bf16(v) th__float_to_bf16((float)(v))
#define FROM_I64_i8(v) ((int8_t)(v))
#define FROM_I64_u8(v) ((uint8_t)(v))
#define FROM_I64_i16(v) ((int16_t)(v))
#define FROM_I64_i32(v) ((int32_t)(v))
#define FROM_I64_i64(v) ((int64_t)(v))
#define FROM_I64_b8(v) ((th_bool_t)((v) != 0))

/* bernoulli: per element p in c->pa, else c->range = ceil(p * 2^32)
 * (for an integer x, x * 2^-32 < p exactly when x < ceil(p * 2^32)). */
#define BERNOULLI_KERNEL(E, T, S)                                           \
    static inline void bernoulli_group_##S(T *restrict o,                   \
                                           const uint32_t *restrict w,      \
                                           int64_t m, uint64_t thr) {       \
        for (int64_t k = 0; k < m; k++)                                     \
            o[k] = FROM_I64_##S((int64_t)((uint64_t)w[k] < thr));           \
    }                                                                       \
    static void bernoulli_##S(int64_t b0, int64_t b1, void *vctx) {         \
        const rng_ctx *c = vctx;                                            \
        T *out = (T *)c->out;                                               \
        const double *pa = c->pa;                                           \
        FOR_EACH_GROUP(c, b0, b1, 4,                                        \
            if (!pa) {                                                      \
                bernoulli_group_##S(out + i0, w, m, c->range);              \
            } else {                                                        \
                for (int64_t k = 0; k < m; k++)                             \
                    out[i0 + k] = FROM_I64_##S(                             \
                        (int64_t)((double)w[k] * 0x1p-32 < pa[i0 + k]));    \
            })                                                              \
    }
ALL_DTYPES(BERNOULLI_KERNEL)

/* randint: low + floor(w * range / 2^64) */
#define RANDINT_KERNEL(E, T, S)                                             \
    static void randint_##S(int64_t b0, int64_t b1, void *vctx) {           \
        const rng_ctx *c = vctx;                                            \
        T *out = (T *)c->out;                                               \
        FOR_EACH_GROUP(c, b0, b1, 2,                                        \
            for (int64_t k = 0; k < m; k++) {                               \
                uint64_t off = mulhi64(word64(w[2 * k], w[2 * k + 1]),      \
                                       c->range);                           \
                out[i0 + k] = FROM_I64_##S((int64_t)((uint64_t)c->lo + off)); \
            })                                                              \
    }
ALL_DTYPES(RANDINT_KERNEL)

#define BERNOULLI_ENTRY(E, T, S) [E] = bernoulli_##S,
#define RANDINT_ENTRY(E, T, S) [E] = randint_##S,
static const th_range_fn bernoulli_fns[TH_NUM_DTYPES] = {ALL_DTYPES(BERNOULLI_ENTRY)};
static const th_range_fn randint_fns[TH_NUM_DTYPES] = {ALL_DTYPES(RANDINT_ENTRY)};

int th_bernoulli_(th_tensor *t, const th_tensor *p, double p_scalar,
                  th_generator *g) {
    if (th__refuse_complex("bernoulli_scalar", t->dtype) ||
        (p && th__refuse_complex("bernoulli_tensor", p->dtype)))
        return th_last_status();
    rng_ctx c = {0};
    th_tensor *pf = NULL;
    if (p) {
        pf = expand_f64(p, t);
        if (!pf) {
            char b1[256], b2[256];
            return th__error(TH_ERR_RUNTIME, "bernoulli_: p of shape %s "
                             "cannot be broadcast to the tensor of shape %s",
                             th__shape_str(p->ndim, p->sizes, b1),
                             th__shape_str(t->ndim, t->sizes, b2));
        }
        c.pa = (const double *)th__ptr(pf);
        int64_t n = th_numel(t);
        for (int64_t i = 0; i < n; i++)
            if (!(c.pa[i] >= 0.0 && c.pa[i] <= 1.0)) {
                double bad = c.pa[i];
                th_tensor_release(pf);
                return th__error(TH_ERR_RUNTIME, "bernoulli_ expects p to be "
                                 "in [0, 1], but got p=%g", bad);
            }
    } else if (!(p_scalar >= 0.0 && p_scalar <= 1.0)) {
        return th__error(TH_ERR_RUNTIME, "bernoulli_ expects p to be in "
                         "[0, 1], but got p=%g", p_scalar);
    }
    if (!p) c.range = (uint64_t)ceil(p_scalar * 0x1p32);
    th_tensor *dst = target(t);
    if (!dst) {
        th_tensor_release(pf);
        return th_last_status();
    }
    c.n = th_numel(t);
    c.out = th__ptr(dst);
    run_blocks(g, &c, 4, TH_GRAIN, bernoulli_fns[t->dtype]);
    th_tensor_release(pf);
    return finish(t, dst);
}

/* Integers a dtype holds exactly (floats: up to 2^mantissa bits). */
static void exact_range(int dtype, int64_t *lo, int64_t *hi) {
    static const int64_t his[TH_NUM_DTYPES] = {
        [TH_FLOAT32] = 1LL << 24, [TH_FLOAT64] = 1LL << 53,
        [TH_FLOAT16] = 1LL << 11, [TH_BFLOAT16] = 1LL << 8,
        [TH_INT8] = INT8_MAX,     [TH_UINT8] = UINT8_MAX,
        [TH_INT16] = INT16_MAX,   [TH_INT32] = INT32_MAX,
        [TH_INT64] = INT64_MAX,   [TH_BOOL] = 1};
    *hi = his[dtype];
    if (dtype == TH_UINT8 || dtype == TH_BOOL) *lo = 0;
    else if (th_dtype_is_floating(dtype)) *lo = -*hi;
    else *lo = dtype == TH_INT64 ? INT64_MIN : -*hi - 1;
}

int th_randint_(th_tensor *t, int64_t low, int64_t high, th_generator *g) {
    if (th__refuse_complex("random_from_to", t->dtype)) return th_last_status();
    if (low >= high)
        return th__error(TH_ERR_RUNTIME, "random_ expects 'from' to be less "
                         "than 'to', but got from=%lld >= to=%lld",
                         (long long)low, (long long)high);
    int64_t lo, hi;
    exact_range(t->dtype, &lo, &hi);
    /* floats, like PyTorch, accept wider bounds (values then round),
     * except where they would overflow float16 */
    if (th_dtype_is_floating(t->dtype) && t->dtype != TH_FLOAT16) {
        lo = INT64_MIN;
        hi = INT64_MAX;
    } else if (t->dtype == TH_FLOAT16) {
        lo = -65504;
        hi = 65504;
    }
    if (low < lo || low > hi)
        return th__error(TH_ERR_RUNTIME, "from is out of bounds for %s "
                         "(from=%lld)", th_dtype_name(t->dtype),
                         (long long)low);
    if (high - 1 < lo || high - 1 > hi)
        return th__error(TH_ERR_RUNTIME, "to - 1 is out of bounds for %s "
                         "(to=%lld)", th_dtype_name(t->dtype),
                         (long long)high);
    th_tensor *dst = target(t);
    if (!dst) return th_last_status();
    rng_ctx c = {0};
    c.n = th_numel(t);
    c.out = th__ptr(dst);
    c.lo = low;
    c.range = (uint64_t)high - (uint64_t)low;
    run_blocks(g, &c, 2, TH_GRAIN, randint_fns[t->dtype]);
    return finish(t, dst);
}

/* ---- randperm ------------------------------------------------------ */
/* Writes the inside-out Fisher-Yates swap targets j_i into out[i]. */
static void perm_draws(int64_t b0, int64_t b1, void *vctx) {
    const rng_ctx *c = vctx;
    int64_t *out = (int64_t *)c->out;
    FOR_EACH_GROUP(c, b0, b1, 2,
        for (int64_t k = 0; k < m; k++)
            out[i0 + k] = (int64_t)mulhi64(word64(w[2 * k], w[2 * k + 1]),
                                           (uint64_t)(i0 + k + 1));)
}

th_tensor *th_randperm(int64_t n, int dtype, th_generator *g) {
    if (dtype < 0 || dtype >= TH_NUM_DTYPES)
        return th__error_null(TH_ERR_TYPE, "invalid dtype code %d", dtype);
    if (th__refuse_complex("randperm", dtype)) return NULL;
    if (n < 0)
        return th__error_null(TH_ERR_RUNTIME, "n must be non-negative, got %lld",
                              (long long)n);
    int64_t lo, hi;
    exact_range(dtype, &lo, &hi);
    if (n > 0 && n - 1 > hi)
        return th__error_null(TH_ERR_RUNTIME, "n is too large for result "
                              "tensor type: '%s' (n=%lld)",
                              th_dtype_name(dtype), (long long)n);
    th_tensor *perm = th_empty(1, &n, TH_INT64);
    if (!perm) return NULL;
    rng_ctx c = {0};
    c.n = n;
    c.out = th__ptr(perm);
    run_blocks(g, &c, 2, TH_GRAIN, perm_draws);
    /* a[i] holds j <= i on entry; entries below i are final */
    int64_t *a = (int64_t *)c.out;
    for (int64_t i = 0; i < n; i++) {
        int64_t j = a[i];
        a[i] = a[j];
        a[j] = i;
    }
    if (dtype == TH_INT64) return perm;
    th_tensor *r = th_to_dtype(perm, dtype);
    th_tensor_release(perm);
    return r;
}

/* ---- multinomial --------------------------------------------------- */
typedef struct {
    const double *cum;      /* rows x cats: running sums (with replacement) */
    const double *w;        /* rows x cats: weights (without replacement) */
    const int64_t *last;    /* per row: last category of positive weight */
    int64_t cats, ns;       /* categories, samples per row */
    int64_t *out;           /* rows x ns */
    int failed;             /* set when a thread runs out of memory */
} multi_ctx;

typedef struct {
    rng_ctx c;
    multi_ctx m;
} multi_job;

/* With replacement; run_blocks hands over &job->c, the first member. */
static void multi_replace(int64_t b0, int64_t b1, void *vctx) {
    const multi_job *job = vctx;
    const rng_ctx *c = &job->c;
    const multi_ctx *mc = &job->m;
    FOR_EACH_GROUP(c, b0, b1, 2,
        for (int64_t k = 0; k < m; k++) {
            int64_t r = (i0 + k) / mc->ns;
            const double *cum = mc->cum + r * mc->cats;
            double target = u53(w[2 * k], w[2 * k + 1]) * cum[mc->cats - 1];
            int64_t lo = 0, hi = mc->cats; /* first q with cum[q] > target */
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (cum[mid] > target) hi = mid;
                else lo = mid + 1;
            }
            mc->out[i0 + k] = lo < mc->cats ? lo : mc->last[r];
        })
}

typedef struct {
    double key;
    int64_t idx;
} race_entry;

static int race_less(const race_entry *a, const race_entry *b) {
    return a->key < b->key || (a->key == b->key && a->idx < b->idx);
}

static int race_cmp(const void *a, const void *b) {
    return race_less(a, b) ? -1 : race_less(b, a) ? 1 : 0;
}

/* Max-heap of the k smallest entries seen: the root is the largest. */
static void heap_sift_down(race_entry *h, int64_t size, int64_t i) {
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, top = i;
        if (l < size && race_less(&h[top], &h[l])) top = l;
        if (r < size && race_less(&h[top], &h[r])) top = r;
        if (top == i) return;
        race_entry tmp = h[i];
        h[i] = h[top];
        h[top] = tmp;
        i = top;
    }
}

static void heap_push(race_entry *h, int64_t size, race_entry e) {
    int64_t i = size;
    h[i] = e;
    while (i > 0 && race_less(&h[(i - 1) / 2], &h[i])) {
        race_entry tmp = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = tmp;
        i = (i - 1) / 2;
    }
}

/* Without replacement, over rows [r0, r1); c->n counts all draws. */
static void multi_race(int64_t r0, int64_t r1, void *vctx) {
    multi_job *job = vctx;
    const rng_ctx *c = &job->c;
    multi_ctx *mc = &job->m;
    int64_t cats = mc->cats, ns = mc->ns;
    race_entry *heap = malloc((size_t)ns * sizeof *heap);
    if (!heap) {
        __atomic_store_n(&mc->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (int64_t r = r0; r < r1; r++) {
        const double *wt = mc->w + r * cats;
        int64_t first = r * cats, size = 0; /* element of category 0 */
        FOR_EACH_GROUP(c, first / 2, (first + cats + 1) / 2, 2,
            for (int64_t k = 0; k < m; k++) {
                int64_t q = i0 + k - first;
                if (q < 0 || q >= cats || !(wt[q] > 0)) continue;
                uint64_t bits = word64(w[2 * k], w[2 * k + 1]) >> 11;
                double u = (double)(bits + 1) * 0x1p-53;
                /* -log(u) >= 1 - u: most keys lose without a log */
                if (size == ns && 1.0 - u > heap[0].key * wt[q] * (1 + 1e-9))
                    continue;
                race_entry en = {-log(u) / wt[q], q};
                if (size < ns) {
                    heap_push(heap, size++, en);
                } else if (race_less(&en, &heap[0])) {
                    heap[0] = en;
                    heap_sift_down(heap, size, 0);
                }
            })
        qsort(heap, (size_t)size, sizeof *heap, race_cmp);
        for (int64_t s = 0; s < ns; s++) mc->out[r * ns + s] = heap[s].idx;
    }
    free(heap);
}

/* Checks rows [r0, r1) of the float64 copy of probs; with replacement
 * turns each row into running sums in place. */
enum { ROW_OK, ROW_BAD_VALUE, ROW_ZERO_SUM, ROW_TOO_FEW };
typedef struct {
    double *p;
    int64_t cats, ns;
    int replacement;
    int64_t *last;   /* per row: last category of positive weight */
    uint8_t *status; /* per row: ROW_* */
} prep_ctx;

static void prep_rows(int64_t r0, int64_t r1, void *vctx) {
    const prep_ctx *pc = vctx;
    for (int64_t r = r0; r < r1; r++) {
        double *row = pc->p + r * pc->cats, sum = 0, big = 0;
        int64_t positive = 0, last = 0, bad = 0;
        for (int64_t q = 0; q < pc->cats; q++) {
            double v = row[q];
            bad |= !(v >= 0) || isinf(v);
            if (v > 0) {
                positive++;
                last = q;
            }
            big = TH_MAX(big, v);
            sum += v;
        }
        pc->last[r] = last;
        pc->status[r] = bad ? ROW_BAD_VALUE : !(sum > 0) ? ROW_ZERO_SUM
                      : !pc->replacement && positive < pc->ns ? ROW_TOO_FEW
                      : ROW_OK;
        if (pc->status[r] == ROW_OK && pc->replacement) {
            double scale = isinf(sum) ? 1.0 / big : 1.0; /* avoid inf sums */
            double run = 0;
            for (int64_t q = 0; q < pc->cats; q++) row[q] = run += row[q] * scale;
        }
    }
}

th_tensor *th_multinomial(const th_tensor *probs, int64_t num_samples,
                          int replacement, th_generator *g) {
    if (probs->ndim != 1 && probs->ndim != 2)
        return th__error_null(TH_ERR_RUNTIME, "prob_dist must be 1 or 2 dim");
    if (!th_dtype_is_floating(probs->dtype))
        return th__error_null(TH_ERR_TYPE, "multinomial only supports "
                              "floating-point dtypes for input, got: %s",
                              th_dtype_name(probs->dtype));
    if (num_samples <= 0)
        return th__error_null(TH_ERR_RUNTIME,
                              "cannot sample n_sample <= 0 samples");
    int64_t cats = probs->sizes[probs->ndim - 1];
    int64_t rows = probs->ndim == 2 ? probs->sizes[0] : 1;
    if (!replacement && num_samples > cats)
        return th__error_null(TH_ERR_RUNTIME, "cannot sample n_sample > "
                              "prob_dist.size(-1) samples without replacement");
    int64_t osz[2] = {rows, num_samples};
    th_tensor *out = probs->ndim == 2 ? th_empty(2, osz, TH_INT64)
                                      : th_empty(1, &num_samples, TH_INT64);
    th_tensor *p = out ? th_to_dtype(probs, TH_FLOAT64) : NULL;
    int64_t nrow = rows ? rows : 1;
    int64_t *last = p ? th__alloc(nrow * (int64_t)(sizeof *last + 1)) : NULL;
    if (!last) {
        th_tensor_release(p);
        th_tensor_release(out);
        return NULL;
    }
    /* validate every row before drawing anything */
    double *pd = (double *)th__ptr(p);
    prep_ctx pc = {pd, cats, num_samples, replacement, last,
                   (uint8_t *)(last + nrow)};
    th_parallel_for(rows, TH_MAX(1, TH_GRAIN / TH_MAX(cats, 1)), prep_rows, &pc);
    static const char *const row_errors[] = {
        NULL,
        "probability tensor contains either `inf`, `nan` or element < 0",
        "invalid multinomial distribution (sum of probabilities <= 0)",
        "invalid multinomial distribution (with replacement=False, not "
        "enough non-negative category to sample)"};
    for (int64_t r = 0; r < rows; r++) {
        if (pc.status[r] != ROW_OK) {
            const char *err = row_errors[pc.status[r]];
            th__free(last);
            th_tensor_release(p);
            th_tensor_release(out);
            return th__error_null(TH_ERR_RUNTIME, "%s", err);
        }
    }
    multi_job job;
    memset(&job, 0, sizeof job);
    job.m.cum = job.m.w = pd;
    job.m.last = last;
    job.m.cats = cats;
    job.m.ns = num_samples;
    job.m.out = (int64_t *)th__ptr(out);
    if (replacement) {
        job.c.n = rows * num_samples;
        run_blocks(g, &job.c, 2, TH_GRAIN / 8, multi_replace);
    } else {
        /* reserve blocks for every category of every row, then split
         * the rows across threads */
        job.c.n = rows * cats;
        reserve(g, (job.c.n + 1) / 2, &job.c);
        int64_t grain = TH_MAX(1, TH_GRAIN / 8 / TH_MAX(cats, 1));
        th_parallel_for(rows, grain, multi_race, &job);
    }
    th__free(last);
    th_tensor_release(p);
    if (job.m.failed) {
        th_tensor_release(out);
        return th__error_null(TH_ERR_MEMORY, "multinomial: not enough memory "
                              "for %lld samples", (long long)num_samples);
    }
    return out;
}
