// Random fills from a counter-based Philox 4x32-10 generator: element i of
// a fill reads block (offset + i / per_block) of the stream keyed by the
// seed, so results do not depend on the launch shape, and the generator's
// offset advances past the blocks a fill used.  multinomial draws from the
// same stream: with replacement one uniform per sample, searched in the
// row's cumulative weights; without replacement an exponential race (one
// key per category, the smallest keys win), ordered by libTHC's topk.
#include <float.h>

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

// ---- multinomial ----------------------------------------------------------------
enum { ROW_OK, ROW_BAD_VALUE, ROW_ZERO_SUM, ROW_TOO_FEW };

// A row's error from its facts (one rule for short and long rows): bad (a
// NaN, inf or negative weight), its sum and (without replacement) how many
// weights are positive.
THC_HD inline int row_status(bool bad, double sum, int64_t positive, int64_t ns,
                             int replacement) {
    return bad ? ROW_BAD_VALUE : !(sum > 0) ? ROW_ZERO_SUM
           : !replacement && positive < ns ? ROW_TOO_FEW : ROW_OK;
}

// Checks a row of float64 weights; with replacement, turns it into its
// running sums (scaled by 1 / the largest weight where the sum would
// overflow).  key[r]: r * 4 + the row's error, or INT64_MAX when fine, so
// the smallest key names the first bad row.  Short rows only (a loop on one
// thread per row); long ones: prep_long_rows.
struct MultiPrepFn {
    double *p;
    int64_t *last, *key;   // last: the last category of positive weight
    int64_t cats, ns;
    int replacement;
    THC_HD void operator()(int64_t r) const {
        double *row = p + r * cats, sum = 0, big = 0;
        int64_t positive = 0, lastk = 0;
        bool bad = false;
        for (int64_t q = 0; q < cats; q++) {
            double v = row[q];
            bad = bad || !(v >= 0) || v == INFINITY;
            if (v > 0) {
                positive++;
                lastk = q;
            }
            big = v > big ? v : big;
            sum += v;
        }
        int status = row_status(bad, sum, positive, ns, replacement);
        last[r] = lastk;
        key[r] = status ? r * 4 + status : INT64_MAX;
        if (status == ROW_OK && replacement) {
            double scale = sum == INFINITY ? 1.0 / big : 1.0, run = 0;
            for (int64_t q = 0; q < cats; q++) row[q] = run += row[q] * scale;
        }
    }
};

// Rows of at least LONG_ROW categories are prepared by libTHC's whole-device
// ops (reductions along the rows, element-wise ops, in-order scans of short
// chunks) instead of MultiPrepFn's loop.  That loop takes two dependent
// passes of `cats` steps on one thread, some 10 ns a step on a GPU (~1 ms
// for a 50257-word vocabulary); the ops take some 20 launches of a few us
// each, nearly whatever the length.  They break even near 2048 categories
// (an estimate, not yet timed on a GPU); below, the launches would dominate.
// Many short rows keep the loop: they are parallel across rows already.
constexpr int64_t LONG_ROW = 2048;

// Long rows, one thread per row, from the rows' reductions: the key and
// last MultiPrepFn gives, and the factor the running sums are taken with.
// lo/hi/sum: each row's amin (NaN propagates), amax and sum; any/from_end:
// whether a weight is positive and where the first one is counting from the
// row's end; positive: how many (NULL with replacement, which ignores it).
struct LongRowFn {
    const double *lo, *hi, *sum;
    const bool *any;
    const int64_t *from_end, *positive;
    int64_t *last, *key;
    double *scale;
    int64_t cats, ns;
    int replacement;
    THC_HD void operator()(int64_t r) const {
        bool bad = !(lo[r] >= 0) || hi[r] == INFINITY;
        int status = row_status(bad, sum[r], positive ? positive[r] : 0, ns, replacement);
        last[r] = any[r] ? cats - 1 - from_end[r] : 0;
        key[r] = status ? r * 4 + status : INT64_MAX;
        // 1 / the largest weight where the sum overflows, as MultiPrepFn, or
        // comes within a factor 2 of it: the running sums add in another
        // order than the reduction and must stay finite too (scaling a row
        // changes none of its probabilities)
        scale[r] = sum[r] > DBL_MAX / 2 ? 1.0 / hi[r] : 1.0;
    }
};

// the smallest r with r * r >= n (running_sums' chunk length)
int64_t ceil_sqrt(int64_t n) {
    int64_t r = (int64_t)sqrt((double)n);
    while (r * r < n) r++;
    while (r > 1 && (r - 1) * (r - 1) >= n) r--;
    return r;
}

// The running sums along the rows of x (lines x len, float64), a new
// tensor: monotone, and a zero weight adds exactly nothing (p[q] ==
// p[q - 1]), as MultiPrepFn's loop gives them, so MultiDrawFn's binary
// search never lands on a zero weight.  thc_cumsum gives that only for the
// lines it scans in order (up to kScanSerialMax): the chunks of longer ones
// start from offsets summed in another order, which can step down, or leave
// a zero weight a sliver, at a chunk's start.  So: chunks of c (about
// sqrt(len): both scans stay short) each scanned from 0 in order
// (recursively while c is long), their totals (last running sums) scanned
// in order, and chunk k >= 1 adds that scan's value at k - 1.  Chunk k's
// last sum, offset + total, is then bit for bit chunk k + 1's offset.
thc_tensor *running_sums(const thc_tensor *x, int64_t lines, int64_t len) {
    if (len <= kScanSerialMax) return thc_cumsum(x, 1, THC_FLOAT64);
    int64_t c = ceil_sqrt(len), fewest = (len + kScanSerialMax - 1) / kScanSerialMax;
    c = c > fewest ? c : fewest;
    int64_t nch = (len + c - 1) / c, wide[2] = {lines, nch * c}, flat[2] = {lines * nch, c},
            grid[3] = {lines, nch, c};
    enum { BUF, BODY, TAIL, CHUNKS, LOCAL, GRID, TOTALS, UPTO, REST, BEFORE, OFFSET, WIDE, OUT,
           N };
    thc_tensor *t[N] = {NULL};
    // zero-padded to whole chunks (zero weights change no running sum)
    t[BUF] = thc_empty(2, wide, THC_FLOAT64);
    t[BODY] = t[BUF] ? thc_narrow(t[BUF], 1, 0, len) : NULL;
    int rc = t[BODY] ? thc_copy(t[BODY], x) : thc_last_status();
    if (!rc && nch * c > len)
        rc = (t[TAIL] = thc_narrow(t[BUF], 1, len, nch * c - len)) ? thc_zero(t[TAIL])
                                                                    : thc_last_status();
    if (!rc && !((t[CHUNKS] = thc_view(t[BUF], 2, flat)) &&
                 (t[LOCAL] = running_sums(t[CHUNKS], lines * nch, c)) &&
                 (t[GRID] = thc_view(t[LOCAL], 3, grid)) &&
                 (t[TOTALS] = thc_select(t[GRID], 2, c - 1)) &&
                 (t[UPTO] = thc_cumsum(t[TOTALS], 1, THC_FLOAT64)) &&
                 (t[REST] = thc_narrow(t[GRID], 1, 1, nch - 1)) &&
                 (t[BEFORE] = thc_narrow(t[UPTO], 1, 0, nch - 1)) &&
                 (t[OFFSET] = thc_unsqueeze(t[BEFORE], 2))))
        rc = thc_last_status();
    if (!rc) rc = thc_binary_out(THC_ADD, t[REST], t[REST], t[OFFSET]);
    if (!rc && !((t[WIDE] = thc_view(t[LOCAL], 2, wide)) &&
                 (t[OUT] = thc_narrow(t[WIDE], 1, 0, len))))
        rc = thc_last_status();
    thc_tensor *out = rc ? NULL : thc_contiguous(t[OUT]);
    for (int i = 0; i < N; i++) thc_tensor_release(t[i]);
    return out;
}

// MultiPrepFn's work for long rows (LONG_ROW) from whole-device ops: writes
// last and key as it does and, with replacement, replaces *p (rows x cats
// float64, contiguous) by its rows' running sums.
int prep_long_rows(thc_tensor **p, thc_tensor *last, thc_tensor *key, int64_t rows, int64_t cats,
                   int64_t ns, int replacement) {
    int one = 1;
    int64_t shape[2] = {rows, cats}, col[2] = {rows, 1};
    enum { X, LO, HI, SUM, ZERO, FLIP, POS, ANY, FROM_END, COUNT, SCALE, SCALE_COL, SUMS, N };
    thc_tensor *t[N] = {NULL};
    int rc = (t[X] = thc_view(*p, 2, shape)) &&
             (t[LO] = thc_reduce(THC_RED_AMIN, t[X], 1, &one, 0, -1)) &&
             (t[HI] = thc_reduce(THC_RED_AMAX, t[X], 1, &one, 0, -1)) &&
             (t[SUM] = thc_reduce(THC_RED_SUM, t[X], 1, &one, 0, -1)) &&
             // positive weights read from the row's end: the first is the last
             (t[ZERO] = thc_scalar_double(0.0, THC_FLOAT64)) &&
             (t[FLIP] = thc_flip_view(t[X], 1, &one)) &&
             (t[POS] = thc_binary(THC_GT, t[FLIP], t[ZERO])) &&
             (t[SCALE] = thc_empty(1, &rows, THC_FLOAT64))
                 ? thc_minmax_dim(t[POS], 1, 0, 1, &t[ANY], &t[FROM_END])
                 : thc_last_status();
    if (!rc && !replacement && !(t[COUNT] = thc_reduce(THC_RED_SUM, t[POS], 1, &one, 0, -1)))
        rc = thc_last_status();
    if (!rc)
        rc = for_each("multinomial", rows,
                      LongRowFn{(const double *)thc__ptr(t[LO]), (const double *)thc__ptr(t[HI]),
                                (const double *)thc__ptr(t[SUM]), (const bool *)thc__ptr(t[ANY]),
                                (const int64_t *)thc__ptr(t[FROM_END]),
                                t[COUNT] ? (const int64_t *)thc__ptr(t[COUNT]) : NULL,
                                (int64_t *)thc__ptr(last), (int64_t *)thc__ptr(key),
                                (double *)thc__ptr(t[SCALE]), cats, ns, replacement},
                      thc__stream());
    if (!rc && replacement) {   // running sums of the scaled weights
        rc = (t[SCALE_COL] = thc_view(t[SCALE], 2, col))
                 ? thc_binary_out(THC_MUL, t[X], t[X], t[SCALE_COL]) : thc_last_status();
        if (!rc && !(t[SUMS] = running_sums(t[X], rows, cats))) rc = thc_last_status();
        if (!rc) {
            thc_tensor_release(*p);
            *p = t[SUMS];
            t[SUMS] = NULL;
        }
    }
    for (int i = 0; i < N; i++) thc_tensor_release(t[i]);
    return rc;
}

// sample i = (row r, draw s): the first category whose running sum
// exceeds u * total (the last positive one if rounding leaves none)
struct MultiDrawFn {
    const double *cum;
    const int64_t *last;
    int64_t *out;
    int64_t cats, ns;
    uint64_t seed, offset;
    THC_HD void operator()(int64_t i) const {
        int64_t r = i / ns;
        U4 w = philox(seed, offset + (uint64_t)i / 2);
        double u = unit_double(w.x[2 * (i % 2)], w.x[2 * (i % 2) + 1]);
        const double *row = cum + r * cats;
        double t = u * row[cats - 1];
        int64_t lo = 0, hi = cats;
        while (lo < hi) {
            int64_t mid = lo + ((hi - lo) >> 1);
            if (row[mid] > t) hi = mid;
            else lo = mid + 1;
        }
        out[i] = lo < cats ? lo : last[r];
    }
};

// key of category i (row-major over rows x cats): -log(u) / weight with u
// in (0, 1]; zero weights get +inf so they are never among the smallest
// while a positive weight is left (positive keys are kept finite)
struct RaceKeyFn {
    const double *p;
    double *key;
    uint64_t seed, offset;
    THC_HD void operator()(int64_t i) const {
        U4 w = philox(seed, offset + (uint64_t)i / 2);
        uint32_t a = w.x[2 * (i % 2)], b = w.x[2 * (i % 2) + 1];
        double u = (double)((((uint64_t)a << 32) | b) >> 11) * (1.0 / 9007199254740992.0);
        u += 1.0 / 9007199254740992.0;
        double k = -log(u) / p[i];
        key[i] = p[i] > 0 ? (k < DBL_MAX ? k : DBL_MAX) : INFINITY;
    }
};

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

extern "C" THC_API thc_tensor *thc_multinomial(const thc_tensor *probs, int64_t num_samples,
                                               int replacement, thc_generator *g) {
    if (thc__check_device("multinomial", "the input", probs)) return NULL;
    if (!g) g = &default_gen;
    if (probs->ndim != 1 && probs->ndim != 2)
        return (thc_tensor *)thc__error_null(THC_ERR_RUNTIME, "prob_dist must be 1 or 2 dim");
    if (!thc_dtype_is_floating(probs->dtype))
        return (thc_tensor *)thc__error_null(THC_ERR_TYPE, "multinomial only supports "
                                             "floating-point dtypes for input, got: %s",
                                             thc_dtype_name(probs->dtype));
    if (num_samples <= 0)
        return (thc_tensor *)thc__error_null(THC_ERR_RUNTIME,
                                             "cannot sample n_sample <= 0 samples");
    int64_t cats = probs->sizes[probs->ndim - 1], rows = probs->ndim == 2 ? probs->sizes[0] : 1;
    if (!replacement && num_samples > cats)
        return (thc_tensor *)thc__error_null(THC_ERR_RUNTIME, "cannot sample n_sample > "
                                             "prob_dist.size(-1) samples without replacement");
    int64_t osz[2] = {rows, num_samples};
    if (rows == 0) return thc_empty(2, osz, THC_INT64);
    // a float64 copy (with replacement, the preparation turns it into the
    // rows' running sums)
    thc_tensor *p = thc_empty(probs->ndim, probs->sizes, THC_FLOAT64);
    int rc = p ? thc_copy(p, probs) : thc_last_status();
    thc_tensor *last = rc ? NULL : thc_empty(1, &rows, THC_INT64);
    thc_tensor *key = last ? thc_empty(1, &rows, THC_INT64) : NULL;
    if (!rc && !key) rc = thc_last_status();
    if (!rc && cats >= LONG_ROW)
        rc = prep_long_rows(&p, last, key, rows, cats, num_samples, replacement);
    else if (!rc)
        rc = for_each("multinomial", rows,
                      MultiPrepFn{(double *)thc__ptr(p), (int64_t *)thc__ptr(last),
                                  (int64_t *)thc__ptr(key), cats, num_samples, replacement},
                      thc__stream());
    if (!rc) {   // every row is checked before anything is drawn (one read back)
        thc_tensor *first = thc_reduce(THC_RED_AMIN, key, 0, NULL, 0, -1);
        int64_t k = INT64_MAX;
        rc = first ? thc_get_int64(first, 0, &k) : thc_last_status();
        thc_tensor_release(first);
        static const char *const row_errors[] = {
            NULL, "probability tensor contains either `inf`, `nan` or element < 0",
            "invalid multinomial distribution (sum of probabilities <= 0)",
            "invalid multinomial distribution (with replacement=False, not enough non-negative "
            "category to sample)"};
        if (!rc && k != INT64_MAX) rc = thc__error(THC_ERR_RUNTIME, "%s", row_errors[k % 4]);
    }
    thc_tensor *out = NULL;
    if (!rc && replacement) {
        out = thc_empty(probs->ndim, probs->ndim == 2 ? osz : &num_samples, THC_INT64);
        if (!out) rc = thc_last_status();
        int64_t n = rows * num_samples;
        uint64_t offset = __atomic_fetch_add(&g->offset, (uint64_t)(n + 1) / 2, __ATOMIC_RELAXED);
        if (!rc)
            rc = for_each("multinomial", n,
                          MultiDrawFn{(const double *)thc__ptr(p), (const int64_t *)thc__ptr(last),
                                      (int64_t *)thc__ptr(out), cats, num_samples, g->seed,
                                      offset},
                          thc__stream());
    } else if (!rc) {
        thc_tensor *keys = thc_empty(probs->ndim, probs->sizes, THC_FLOAT64), *kv = NULL;
        int64_t n = rows * cats;
        uint64_t offset = __atomic_fetch_add(&g->offset, (uint64_t)(n + 1) / 2, __ATOMIC_RELAXED);
        rc = keys ? for_each("multinomial", n,
                             RaceKeyFn{(const double *)thc__ptr(p), (double *)thc__ptr(keys),
                                       g->seed, offset},
                             thc__stream())
                  : thc_last_status();
        // the num_samples smallest keys, in increasing order (ties: lower index)
        if (!rc) rc = thc_topk(keys, num_samples, -1, 0, 1, &kv, &out);
        thc_tensor_release(keys);
        thc_tensor_release(kv);
    }
    thc_tensor_release(p);
    thc_tensor_release(last);
    thc_tensor_release(key);
    if (rc) {
        thc_tensor_release(out);
        return NULL;
    }
    return out;
}
