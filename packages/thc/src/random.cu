// Random fills from a counter-based Philox 4x32-10 generator: element i of
// a fill reads block (offset + i / per_block) of the stream keyed by the
// seed, so results do not depend on the launch shape, and the generator's
// offset advances past the blocks a fill used.
#include "ops.cuh"

using namespace thc;

namespace {

struct U4 {
    uint32_t x[4];
};

THC_HD inline uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t *hi) {
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

THC_HD inline U4 philox(uint64_t seed, uint64_t counter) {
    uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint32_t hi0, hi1;
        uint32_t lo0 = mulhilo(0xD2511F53u, c0, &hi0), lo1 = mulhilo(0xCD9E8D57u, c2, &hi1);
        uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    U4 r = {{c0, c1, c2, c3}};
    return r;
}

THC_HD inline double unit_double(uint32_t a, uint32_t b) {   // [0, 1), 53 bits
    return (double)(((uint64_t)a << 21) ^ (uint64_t)(b >> 11)) * (1.0 / 9007199254740992.0);
}

enum Dist { D_UNIFORM, D_NORMAL, D_BERNOULLI, D_RANDINT };

template <typename T> struct RandomFn {
    T *out;
    Offsets g;
    uint64_t seed, offset;
    int dist;
    double p0, p1;        // low/high, mean/std, p
    int64_t lo, range;    // randint
    THC_HD void operator()(int64_t i) const {
        int64_t off;
        g.at<1>(i, &off);
        double v;
        if (dist == D_NORMAL) {   // Box-Muller: two values per block
            U4 r = philox(seed, offset + (uint64_t)i / 2);
            double u1 = 1.0 - unit_double(r.x[0], r.x[1]), u2 = unit_double(r.x[2], r.x[3]);
            double rad = sqrt(-2.0 * log(u1)), ang = 6.283185307179586 * u2;
            v = p0 + p1 * rad * (i % 2 ? sin(ang) : cos(ang));
        } else {
            U4 r = philox(seed, offset + (uint64_t)i / 2);
            uint32_t a = r.x[2 * (i % 2)], b = r.x[2 * (i % 2) + 1];
            if (dist == D_RANDINT) {
                uint64_t x = ((uint64_t)a << 32) | b;
                out[off] = convert<T>(lo + (int64_t)(x % (uint64_t)range));
                return;
            }
            double u = unit_double(a, b);
            v = dist == D_UNIFORM ? p0 + (p1 - p0) * u : (u < p0 ? 1.0 : 0.0);
        }
        out[off] = convert<T>(v);
    }
};

thc_generator default_gen = {67280421310721ull, 0};

int fill_random(const char *name, thc_tensor *t, thc_generator *g, int dist, double p0, double p1,
                int64_t lo, int64_t range) {
    if (thc__check_device(name, "the tensor", t)) return thc_last_status();
    if (!g) g = &default_gen;
    const thc_tensor *none[1] = {t};
    thc__geom geo;
    thc__geom_init(&geo, t->ndim, t->sizes, 1, none);
    geo.offsets[0] = 0;
    uint64_t offset = __atomic_fetch_add(&g->offset, (uint64_t)(geo.numel + 1) / 2,
                                         __ATOMIC_RELAXED);
    int rc = THC_OK;
    switch (t->dtype) {
        THC_CASES_ALL(rc = for_each(name, geo.numel,
                                    RandomFn<scalar_t>{(scalar_t *)thc__ptr(t), Offsets::of(geo),
                                                       g->seed, offset, dist, p0, p1, lo, range},
                                    thc__stream()))
    }
    if (!rc) thc__bump_version(t);
    return rc;
}

}  // namespace

extern "C" THC_API thc_generator *thc_default_generator(void) { return &default_gen; }

extern "C" THC_API void thc_generator_set_seed(thc_generator *g, uint64_t seed) {
    if (!g) g = &default_gen;
    g->seed = seed;
    g->offset = 0;
}

extern "C" THC_API int thc_uniform_(thc_tensor *t, double low, double high, thc_generator *g) {
    if (t && !thc_dtype_is_floating(t->dtype))
        return thc__error(THC_ERR_TYPE, "\"uniform_cuda\" not implemented for '%s'",
                          thc__dtype_title(t->dtype));
    if (!(low <= high))
        return thc__error(THC_ERR_RUNTIME, "uniform_ expects to return a [from, to) range, but "
                          "found from=%g > to=%g", low, high);
    return fill_random("uniform_", t, g, D_UNIFORM, low, high, 0, 1);
}

extern "C" THC_API int thc_normal_(thc_tensor *t, double mean, double std, thc_generator *g) {
    if (t && !thc_dtype_is_floating(t->dtype))
        return thc__error(THC_ERR_TYPE, "\"normal_kernel_cuda\" not implemented for '%s'",
                          thc__dtype_title(t->dtype));
    if (!(std >= 0.0))
        return thc__error(THC_ERR_RUNTIME, "normal expects std >= 0.0, but found std %g", std);
    return fill_random("normal_", t, g, D_NORMAL, mean, std, 0, 1);
}

extern "C" THC_API int thc_bernoulli_(thc_tensor *t, double p, thc_generator *g) {
    if (!(p >= 0.0 && p <= 1.0))
        return thc__error(THC_ERR_RUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
    return fill_random("bernoulli_", t, g, D_BERNOULLI, p, 0, 0, 1);
}

extern "C" THC_API int thc_randint_(thc_tensor *t, int64_t low, int64_t high, thc_generator *g) {
    if (!(low < high))
        return thc__error(THC_ERR_RUNTIME, "random_ expects 'from' to be less than 'to', but got "
                          "from=%lld >= to=%lld", (long long)low, (long long)high);
    return fill_random("random_", t, g, D_RANDINT, 0, 0, low,
                       (int64_t)((uint64_t)high - (uint64_t)low));
}
