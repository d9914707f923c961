/* Sorting and searching.  sort, topk, kthvalue and unique share one row
 * engine over a contiguous copy, rows split across threads: a stable LSD
 * radix sort for long rows, a stable merge sort of (value, index) pairs
 * otherwise, and selection for topk/kthvalue.  All of them order equal
 * values by index and NaN as the largest value, like PyTorch's stable sort,
 * so every path gives the same answer.  float16/bfloat16 are sorted as
 * float32 (exact both ways).  Also searchsorted, bincount and histc. */
#include "th_internal.h"

#define ISNAN_f32(x) isnan(x)
#define ISNAN_f64(x) isnan(x)
#define ISNAN_i8(x) 0
#define ISNAN_u8(x) 0
#define ISNAN_i16(x) 0
#define ISNAN_i32(x) 0
#define ISNAN_i64(x) 0
#define ISNAN_b8(x) 0

/* "a goes strictly before b"; equal keys keep their order (stable) */
#define ASC(S, a, b) ((a) < (b) || (ISNAN_##S(b) && !ISNAN_##S(a)))
#define DESC(S, a, b) ((a) > (b) || (ISNAN_##S(a) && !ISNAN_##S(b)))
/* the same on pairs; the _T forms are total orders (ties by index), so a
 * selection followed by a sort agrees exactly with the full stable sort */
#define ASC_V(S, a, b) ASC(S, (a).v, (b).v)
#define DESC_V(S, a, b) DESC(S, (a).v, (b).v)
#define ASC_T(S, a, b) \
    (ASC(S, (a).v, (b).v) || (!ASC(S, (b).v, (a).v) && (a).i < (b).i))
#define DESC_T(S, a, b) \
    (DESC(S, (a).v, (b).v) || (!DESC(S, (b).v, (a).v) && (a).i < (b).i))

#define RUN 16         /* insertion-sorted run length */
#define PAIR_BYTES 16  /* the largest pair: 8-byte value + int64 index */

/* Bottom-up merge sort of n pairs (tmp holds n more), stable under CMP. */
#define MSORT(T, S, CMP)                                                      \
    static void msort_##S##_##CMP(pair_##S *a, pair_##S *tmp, int64_t n) {   \
        for (int64_t lo = 0; lo < n; lo += RUN) {                             \
            int64_t hi = TH_MIN(lo + RUN, n);                                 \
            for (int64_t i = lo + 1; i < hi; i++) {                           \
                pair_##S x = a[i];                                            \
                int64_t j = i;                                                \
                for (; j > lo && CMP(S, x, a[j - 1]); j--) a[j] = a[j - 1];   \
                a[j] = x;                                                     \
            }                                                                 \
        }                                                                     \
        pair_##S *src = a, *dst = tmp;                                        \
        for (int64_t w = RUN; w < n; w *= 2) {                                \
            for (int64_t lo = 0; lo < n; lo += 2 * w) {                       \
                int64_t mid = TH_MIN(lo + w, n), hi = TH_MIN(lo + 2 * w, n);  \
                /* runs already in order: just move them */                   \
                if (mid >= hi || !CMP(S, src[mid], src[mid - 1])) {           \
                    memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof *a); \
                    continue;                                                 \
                }                                                             \
                int64_t i = lo, j = mid, k = lo;                              \
                while (i < mid && j < hi)                                     \
                    dst[k++] = CMP(S, src[j], src[i]) ? src[j++] : src[i++];  \
                while (i < mid) dst[k++] = src[i++];                          \
                while (j < hi) dst[k++] = src[j++];                           \
            }                                                                 \
            pair_##S *t = src;                                                \
            src = dst;                                                        \
            dst = t;                                                          \
        }                                                                     \
        if (src != a) memcpy(a, src, (size_t)n * sizeof *a);                  \
    }

#define SWAP_P(x, y)                                                          \
    do {                                                                      \
        tmp_ = p[x];                                                          \
        p[x] = p[y];                                                          \
        p[y] = tmp_;                                                          \
    } while (0)

/* Quickselect (median of three) under a total order CMP: afterwards p[nth]
 * holds the element of that rank, smaller ranks before it.  Falls back
 * to sorting what is left if the partitions keep coming out lopsided. */
#define SELECT(T, S, CMP)                                                     \
    static void select_##S##_##CMP(pair_##S *p, pair_##S *buf, int64_t n,    \
                                   int64_t nth) {                             \
        int64_t lo = 0, hi = n - 1;                                           \
        pair_##S tmp_;                                                        \
        for (int rounds = 0; hi - lo >= 16; rounds++) {                       \
            if (rounds > 64) {                                                \
                msort_##S##_##CMP(p + lo, buf, hi - lo + 1);                  \
                return;                                                       \
            }                                                                 \
            int64_t mid = lo + (hi - lo) / 2;                                 \
            if (CMP(S, p[mid], p[lo])) SWAP_P(lo, mid);                       \
            if (CMP(S, p[hi], p[lo])) SWAP_P(lo, hi);                         \
            if (CMP(S, p[hi], p[mid])) SWAP_P(mid, hi);                       \
            SWAP_P(mid, hi - 1); /* pivot parks at hi - 1 */                  \
            pair_##S pv = p[hi - 1];                                          \
            int64_t i = lo, j = hi - 1;                                       \
            for (;;) {                                                        \
                do i++; while (CMP(S, p[i], pv)); /* CMP reads args twice */ \
                do j--; while (CMP(S, pv, p[j]));                             \
                if (i >= j) break;                                            \
                SWAP_P(i, j);                                                 \
            }                                                                 \
            SWAP_P(i, hi - 1);                                                \
            if (nth == i) return;                                             \
            if (nth < i) hi = i - 1;                                          \
            else lo = i + 1;                                                  \
        }                                                                     \
        for (int64_t i = lo + 1; i <= hi; i++) {                              \
            pair_##S x = p[i];                                                \
            int64_t j = i;                                                    \
            for (; j > lo && CMP(S, x, p[j - 1]); j--) p[j] = p[j - 1];       \
            p[j] = x;                                                         \
        }                                                                     \
    }

/* ---- LSD radix sort for long rows ----------------------------------
 * Values map to unsigned keys whose order is ASC's: sign-flipped
 * integers; floats by their bits with NaNs made one positive NaN (last)
 * and -0.0 made +0.0 (they compare equal).  Descending sorts complement
 * the key.  LSD passes are stable, so equal keys keep index order, exactly
 * like the merge sort. */
#define RADIX_MIN 512

static inline uint32_t key_f32(float v) {
    uint32_t b;
    if (v == 0) v = 0; /* -0.0 -> +0.0 */
    memcpy(&b, &v, 4);
    if (isnan(v)) b = 0x7fc00000u;
    return (b & 0x80000000u) ? ~b : b | 0x80000000u;
}
static inline uint64_t key_f64(double v) {
    uint64_t b;
    if (v == 0) v = 0;
    memcpy(&b, &v, 8);
    if (isnan(v)) b = 0x7ff8000000000000ull;
    return (b >> 63) ? ~b : b | 0x8000000000000000ull;
}
#define KEY_f32(v) key_f32(v)
#define KEY_f64(v) key_f64(v)
#define KEY_i8(v) ((uint32_t)(uint8_t)((uint8_t)(v) ^ 0x80u))
#define KEY_u8(v) ((uint32_t)(v))
#define KEY_i16(v) ((uint32_t)(uint16_t)((uint16_t)(v) ^ 0x8000u))
#define KEY_i32(v) ((uint32_t)(v) ^ 0x80000000u)
#define KEY_i64(v) ((uint64_t)(v) ^ 0x8000000000000000ull)
#define KEY_b8(v) ((uint32_t)(v))
#define KT_f32 uint32_t
#define KT_f64 uint64_t
#define KT_i8 uint32_t
#define KT_u8 uint32_t
#define KT_i16 uint32_t
#define KT_i32 uint32_t
#define KT_i64 uint64_t
#define KT_b8 uint32_t
#define KB_f32 4 /* key bytes that vary */
#define KB_f64 8
#define KB_i8 1
#define KB_u8 1
#define KB_i16 2
#define KB_i32 4
#define KB_i64 8
#define KB_b8 1

/* Sorts keys k (with indices ix) using k2/ix2 as scratch; returns 1 if the
 * result ended up in k2/ix2.  Passes whose digit never varies are skipped. */
#define RADIX_FN(KT)                                                          \
    static int radix_##KT(KT *k, int64_t *ix, KT *k2, int64_t *ix2,           \
                          int64_t n, int nbytes) {                            \
        int64_t cnt[8][256];                                                  \
        memset(cnt, 0, sizeof cnt);                                           \
        for (int64_t i = 0; i < n; i++)                                       \
            for (int b = 0; b < nbytes; b++) cnt[b][(k[i] >> (8 * b)) & 255]++; \
        int swapped = 0;                                                      \
        for (int b = 0; b < nbytes; b++) {                                    \
            int sh = 8 * b;                                                   \
            if (cnt[b][(k[0] >> sh) & 255] == n) continue;                    \
            int64_t off[256], sum = 0;                                        \
            for (int d = 0; d < 256; d++) {                                   \
                off[d] = sum;                                                 \
                sum += cnt[b][d];                                             \
            }                                                                 \
            for (int64_t i = 0; i < n; i++) {                                 \
                int64_t pos = off[(k[i] >> sh) & 255]++;                      \
                k2[pos] = k[i];                                               \
                ix2[pos] = ix[i];                                             \
            }                                                                 \
            KT *tk = k; k = k2; k2 = tk;                                      \
            int64_t *ti = ix; ix = ix2; ix2 = ti;                             \
            swapped = !swapped;                                               \
        }                                                                     \
        return swapped;                                                       \
    }
RADIX_FN(uint32_t)
RADIX_FN(uint64_t)
#define RADIX_OF(KT) RADIX_OF_(KT) /* expands KT_xx first */
#define RADIX_OF_(KT) radix_##KT

/* Rows of a contiguous input: row r = (o, q) starts at o * L * inner + q
 * and steps by inner.  Sorted positions [start, start + count) go to the
 * contiguous outputs, laid out the same way with count in place of L. */
typedef struct {
    const char *in;
    char *vals;
    int64_t *idx;
    int64_t L, inner, start, count;
    int desc, dtype;
    int failed;
} rows_ctx;

/* Full rows get the stable sort (radix when long); topk (start 0) keeps
 * a sorted buffer when k is small, else selects; kthvalue (count 1)
 * selects.  Every path orders ties by index, like the stable sort. */
#define SORT_TYPE(E, T, S)                                                    \
    typedef struct {                                                          \
        T v;                                                                  \
        int64_t i;                                                            \
    } pair_##S;                                                               \
    MSORT(T, S, ASC_V)                                                        \
    MSORT(T, S, DESC_V)                                                       \
    MSORT(T, S, ASC_T)                                                        \
    MSORT(T, S, DESC_T)                                                       \
    SELECT(T, S, ASC_T)                                                       \
    SELECT(T, S, DESC_T)                                                      \
    /* the best cnt of a strided row, by keeping a sorted buffer p */         \
    static void topk_small_##S(pair_##S *p, const T *x, int64_t L,            \
                               int64_t inner, int64_t cnt, int desc) {        \
        int64_t m = 0;                                                        \
        for (int64_t j = 0; j < L; j++) {                                     \
            T v = x[j * inner];                                               \
            int64_t pos;                                                      \
            if (m < cnt) {                                                    \
                pos = m++;                                                    \
            } else if (desc ? DESC(S, v, p[cnt - 1].v) : ASC(S, v, p[cnt - 1].v)) { \
                pos = cnt - 1;                                                \
            } else {                                                          \
                continue;                                                     \
            }                                                                 \
            if (desc)                                                         \
                for (; pos > 0 && DESC(S, v, p[pos - 1].v); pos--) p[pos] = p[pos - 1]; \
            else                                                              \
                for (; pos > 0 && ASC(S, v, p[pos - 1].v); pos--) p[pos] = p[pos - 1]; \
            p[pos].v = v;                                                     \
            p[pos].i = j;                                                     \
        }                                                                     \
    }                                                                         \
    /* a full row by radix; returns the sorted indices (values: x[i]) */      \
    static int64_t *radix_row_##S(void *buf, const T *x, int64_t L,           \
                                  int64_t inner, int desc) {                  \
        KT_##S *k = buf, *k2 = k + L;                                         \
        int64_t *ix = (int64_t *)(k2 + L), *ix2 = ix + L;                     \
        KT_##S flip = desc ? (KT_##S)~(KT_##S)0 : 0;                          \
        for (int64_t j = 0; j < L; j++) {                                     \
            k[j] = (KT_##S)(KEY_##S(x[j * inner]) ^ flip);                    \
            ix[j] = j;                                                        \
        }                                                                     \
        return RADIX_OF(KT_##S)(k, ix, k2, ix2, L, KB_##S) ? ix2 : ix;          \
    }                                                                         \
    static void rows_##S(const rows_ctx *c, int64_t b, int64_t e, void *buf) { \
        pair_##S *p = buf, *tmp = p + c->L;                                   \
        int64_t L = c->L, inner = c->inner, start = c->start, cnt = c->count; \
        int select = cnt < L && (start == 0 || cnt == 1);                     \
        int small = select && start == 0 && cnt <= 32;                        \
        for (int64_t r = b; r < e; r++) {                                     \
            int64_t o = r / inner, q = r % inner;                             \
            const T *x = (const T *)c->in + o * L * inner + q;                \
            int64_t base = o * cnt * inner + q;                               \
            T *ov = (T *)c->vals + base;                                      \
            int64_t *oi = c->idx + base;                                      \
            if (!select && L >= RADIX_MIN) {                                  \
                const int64_t *ix = radix_row_##S(buf, x, L, inner, c->desc); \
                for (int64_t t = 0; t < cnt; t++) {                           \
                    ov[t * inner] = x[ix[start + t] * inner];                 \
                    oi[t * inner] = ix[start + t];                            \
                }                                                             \
                continue;                                                     \
            }                                                                 \
            if (small) {                                                      \
                topk_small_##S(p, x, L, inner, cnt, c->desc);                 \
            } else {                                                          \
                for (int64_t j = 0; j < L; j++) {                             \
                    p[j].v = x[j * inner];                                    \
                    p[j].i = j;                                               \
                }                                                             \
                if (!select) {                                                \
                    if (c->desc) msort_##S##_DESC_V(p, tmp, L);               \
                    else msort_##S##_ASC_V(p, tmp, L);                        \
                } else if (c->desc) {                                         \
                    select_##S##_DESC_T(p, tmp, L, start + cnt - 1);          \
                    if (cnt > 1) msort_##S##_DESC_T(p, tmp, cnt);             \
                } else {                                                      \
                    select_##S##_ASC_T(p, tmp, L, start + cnt - 1);           \
                    if (cnt > 1) msort_##S##_ASC_T(p, tmp, cnt);              \
                }                                                             \
            }                                                                 \
            for (int64_t t = 0; t < cnt; t++) {                               \
                ov[t * inner] = p[start + t].v;                               \
                oi[t * inner] = p[start + t].i;                               \
            }                                                                 \
        }                                                                     \
    }
TH_FOR_NATIVE_DTYPES(SORT_TYPE)

static void rows_range(int64_t b, int64_t e, void *vctx) {
    rows_ctx *c = vctx;
    void *buf = malloc((size_t)(2 * c->L * PAIR_BYTES));
    if (!buf) {
        c->failed = 1;
        return;
    }
    switch (c->dtype) {
#define ROWS_CASE(E, T, S) case E: rows_##S(c, b, e, buf); break;
        TH_FOR_NATIVE_DTYPES(ROWS_CASE)
#undef ROWS_CASE
    default: break;
    }
    free(buf);
}

/* Contiguous copy of `a` in the dtype its values are compared in. */
static th_tensor *sortable(const th_tensor *a) {
    return th__is_half(a->dtype) ? th_to_dtype(a, TH_FLOAT32) : th_contiguous(a);
}

/* Sorts every row of `a` along dim (wrapped) and keeps sorted positions
 * [start, start + count); outputs have a's shape with count along dim. */
static int sort_core(const th_tensor *a, int dim, int desc, int64_t start,
                     int64_t count, th_tensor **values, th_tensor **indices) {
    if (th__refuse_complex("sort", a->dtype)) return th_last_status();
    int64_t L = a->ndim ? a->sizes[dim] : 1;
    int64_t outer = a->ndim ? th__prod(dim, a->sizes) : 1;
    int64_t inner = a->ndim ? th__prod(a->ndim - dim - 1, a->sizes + dim + 1) : 1;
    int64_t sizes[TH_MAX_DIMS];
    memcpy(sizes, a->sizes, sizeof sizes);
    if (a->ndim) sizes[dim] = count;
    th_tensor *x = sortable(a);
    th_tensor *v = x ? th_empty(a->ndim, sizes, x->dtype) : NULL;
    th_tensor *ix = v ? th_empty(a->ndim, sizes, TH_INT64) : NULL;
    if (!ix) goto fail;
    int64_t rows = outer * inner;
    if (rows > 0 && count > 0) {
        rows_ctx c = {th__ptr(x), th__ptr(v), (int64_t *)th__ptr(ix), L,
                      inner, start, count, desc, x->dtype, 0};
        th_parallel_for(rows, TH_MAX(1, TH_GRAIN / L), rows_range, &c);
        if (c.failed) {
            th__error(TH_ERR_MEMORY, "sort: not enough memory for a row "
                      "buffer of %lld elements", (long long)L);
            goto fail;
        }
    }
    if (v->dtype != a->dtype) { /* back to float16 / bfloat16 */
        th_tensor *h = th_to_dtype(v, a->dtype);
        th_tensor_release(v);
        if (!(v = h)) goto fail;
    }
    th_tensor_release(x);
    *values = v;
    *indices = ix;
    return TH_OK;
fail:
    th_tensor_release(x);
    th_tensor_release(v);
    th_tensor_release(ix);
    return th_last_status() ? th_last_status() : TH_ERR_MEMORY;
}

int th_sort(const th_tensor *a, int dim, int descending, int stable,
            th_tensor **values, th_tensor **indices) {
    (void)stable; /* every path is stable */
    if ((dim = th__wrap_dim(dim, a->ndim)) < 0) return th_last_status();
    int64_t L = a->ndim ? a->sizes[dim] : 1;
    return sort_core(a, dim, descending, 0, L, values, indices);
}

int th_topk(const th_tensor *a, int64_t k, int dim, int largest, int sorted,
            th_tensor **values, th_tensor **indices) {
    (void)sorted; /* results always come sorted */
    if ((dim = th__wrap_dim(dim, a->ndim)) < 0) return th_last_status();
    int64_t L = a->ndim ? a->sizes[dim] : 1;
    if (k < 0 || k > L)
        return th__error(TH_ERR_RUNTIME, "selected index k out of range");
    if (a->ndim == 0) k = 1; /* a 0-d result holds one element */
    return sort_core(a, dim, largest, 0, k, values, indices);
}

/* Hands out a (values, indices) pair reduced along dim, squeezing dim
 * away unless `keep` (taking over v and ix, released on failure). */
static int reduced_pair(th_tensor *v, th_tensor *ix, int dim, int keep,
                        th_tensor **values, th_tensor **indices) {
    if (!keep) {
        th_tensor *sv = th_squeeze(v, dim), *si = th_squeeze(ix, dim);
        th_tensor_release(v);
        th_tensor_release(ix);
        if (!sv || !si) {
            th_tensor_release(sv);
            th_tensor_release(si);
            return th_last_status();
        }
        v = sv;
        ix = si;
    }
    *values = v;
    *indices = ix;
    return TH_OK;
}

int th_kthvalue(const th_tensor *a, int64_t k, int dim, int keepdim,
                th_tensor **values, th_tensor **indices) {
    if ((dim = th__wrap_dim(dim, a->ndim)) < 0) return th_last_status();
    int64_t L = a->ndim ? a->sizes[dim] : 1;
    if (L == 0)
        return th__error(TH_ERR_INDEX, "kthvalue(): Expected reduction dim %d "
                         "to have non-zero size.", dim);
    if (k < 1 || k > L)
        return th__error(TH_ERR_RUNTIME, "kthvalue(): selected number k out of "
                         "range for dimension %d", dim);
    th_tensor *v, *ix;
    int rc = sort_core(a, dim, 0, k - 1, 1, &v, &ix);
    if (rc != TH_OK) return rc;
    return reduced_pair(v, ix, dim, keepdim || a->ndim == 0, values, indices);
}

/* ---- mode ----------------------------------------------------------- */
/* Row r of sorted values sv (positions si), laid out as sort_core's
 * outputs: in a stable ascending sort equal values form runs whose
 * positions increase, so the longest run (the first, i.e. the smallest
 * value, on ties) ends at the last occurrence of the most frequent value.
 * NaNs never compare equal: each is a run of one (as PyTorch). */
typedef struct {
    const char *sv;
    const int64_t *si;
    char *vals;
    int64_t *idx;
    int64_t L, inner;
    int dtype;
} mode_ctx;

#define MODE_FN(E, T, S)                                                      \
    static void mode_##S(const mode_ctx *c, int64_t b, int64_t e) {           \
        const T *sv = (const T *)c->sv;                                       \
        for (int64_t r = b; r < e; r++) {                                     \
            int64_t base = r / c->inner * c->L * c->inner + r % c->inner;     \
            int64_t best = base, best_len = 0, run = 0;                       \
            for (int64_t t = 0; t < c->L; t++) {                              \
                int64_t at = base + t * c->inner;                             \
                run = t > 0 && sv[at] == sv[at - c->inner] ? run + 1 : 1;     \
                if (run > best_len) { /* a longer run, or the best goes on */ \
                    best_len = run;                                           \
                    best = at;                                                \
                }                                                             \
            }                                                                 \
            ((T *)c->vals)[r] = sv[best];                                     \
            c->idx[r] = c->si[best];                                          \
        }                                                                     \
    }
TH_FOR_NATIVE_DTYPES(MODE_FN)

static void mode_range(int64_t b, int64_t e, void *vctx) {
    mode_ctx *c = vctx;
    switch (c->dtype) {
#define MODE_CASE(E, T, S) case E: mode_##S(c, b, e); break;
        TH_FOR_NATIVE_DTYPES(MODE_CASE)
#undef MODE_CASE
    default: break;
    }
}

int th_mode(const th_tensor *a, int dim, int keepdim, th_tensor **values,
            th_tensor **indices) {
    if (th__refuse_complex("mode", a->dtype)) return th_last_status();
    if ((dim = th__wrap_dim(dim, a->ndim)) < 0) return th_last_status();
    int64_t L = a->ndim ? a->sizes[dim] : 1;
    if (L == 0)
        return th__error(TH_ERR_INDEX, "mode(): Expected reduction dim %d to "
                         "have non-zero size.", dim);
    th_tensor *x = sortable(a), *sv = NULL, *si = NULL, *v = NULL, *ix = NULL;
    int64_t sizes[TH_MAX_DIMS];
    memcpy(sizes, a->sizes, sizeof sizes);
    if (a->ndim) sizes[dim] = 1;
    if (!x || sort_core(x, dim, 0, 0, L, &sv, &si) != TH_OK ||
        !(v = th_empty(a->ndim, sizes, x->dtype)) ||
        !(ix = th_empty(a->ndim, sizes, TH_INT64)))
        goto fail;
    int64_t inner = a->ndim ? th__prod(a->ndim - dim - 1, a->sizes + dim + 1) : 1;
    mode_ctx c = {th__ptr(sv), (const int64_t *)th__ptr(si), th__ptr(v),
                  (int64_t *)th__ptr(ix), L, inner, x->dtype};
    th_parallel_for(th_numel(v), TH_MAX(1, TH_GRAIN / L), mode_range, &c);
    if (v->dtype != a->dtype) { /* back to float16 / bfloat16 */
        th_tensor *h = th_to_dtype(v, a->dtype);
        th_tensor_release(v);
        if (!(v = h)) goto fail;
    }
    th_tensor_release(x);
    th_tensor_release(sv);
    th_tensor_release(si);
    return reduced_pair(v, ix, dim, keepdim || a->ndim == 0, values, indices);
fail:
    th_tensor_release(x);
    th_tensor_release(sv);
    th_tensor_release(si);
    th_tensor_release(v);
    th_tensor_release(ix);
    return th_last_status() ? th_last_status() : TH_ERR_MEMORY;
}

/* ---- unique ------------------------------------------------------- */
/* Over sorted values sv (original positions si): each distinct value once
 * to uv, group sizes to cnt, each position's group to inv (optional).
 * NaNs never compare equal, so each is its own group (as PyTorch). */
#define GROUP_FN(E, T, S)                                                     \
    static int64_t group_##S(const void *svp, const int64_t *si, int64_t n,   \
                             void *uvp, int64_t *inv, int64_t *cnt) {         \
        const T *sv = svp;                                                    \
        T *uv = uvp;                                                          \
        int64_t g = -1;                                                       \
        for (int64_t k = 0; k < n; k++) {                                     \
            if (k == 0 || sv[k] != sv[k - 1]) {                               \
                uv[++g] = sv[k];                                              \
                cnt[g] = 0;                                                   \
            }                                                                 \
            cnt[g]++;                                                         \
            if (inv) inv[si[k]] = g;                                          \
        }                                                                     \
        return g + 1;                                                         \
    }
TH_FOR_NATIVE_DTYPES(GROUP_FN)

int th_unique(const th_tensor *a, int sorted, th_tensor **values,
              th_tensor **inverse, th_tensor **counts) {
    if (th__refuse_complex("unique", a->dtype)) return th_last_status();
    (void)sorted; /* output is always sorted */
    th_tensor *x = sortable(a), *sv = NULL, *si = NULL, *inv = NULL;
    th_tensor *v = NULL, *cn = NULL;
    int64_t n = x ? th_numel(x) : 0, ng = 0;
    if (!x || !(sv = th_empty(1, &n, x->dtype)) ||
        !(si = th_empty(1, &n, TH_INT64)) ||
        (inverse && !(inv = th_empty(a->ndim, a->sizes, TH_INT64))))
        goto fail;
    /* the flattened tensor as one row of the stable sort */
    rows_ctx c = {th__ptr(x), th__ptr(sv), (int64_t *)th__ptr(si), n, 1, 0, n,
                  0, x->dtype, 0};
    if (n > 0) rows_range(0, 1, &c);
    char *uv = th__alloc(n * 8);
    int64_t *cnt = uv ? th__alloc(n * (int64_t)sizeof(int64_t)) : NULL;
    if (c.failed || !cnt) {
        th__free(uv);
        if (c.failed) th__error(TH_ERR_MEMORY, "unique: not enough memory");
        goto fail;
    }
    switch (x->dtype) {
#define GROUP_CASE(E, T, S)                                                   \
    case E:                                                                   \
        ng = group_##S(th__ptr(sv), (const int64_t *)th__ptr(si), n, uv,      \
                       inv ? (int64_t *)th__ptr(inv) : NULL, cnt);            \
        break;
        TH_FOR_NATIVE_DTYPES(GROUP_CASE)
#undef GROUP_CASE
    default: break;
    }
    if ((v = th_empty(1, &ng, x->dtype)))
        memcpy(th__ptr(v), uv, (size_t)(ng * th_dtype_itemsize(x->dtype)));
    if (v && counts && (cn = th_empty(1, &ng, TH_INT64)))
        memcpy(th__ptr(cn), cnt, (size_t)ng * sizeof(int64_t));
    th__free(uv);
    th__free(cnt);
    if (!v || (counts && !cn)) goto fail;
    if (v->dtype != a->dtype) { /* back to float16 / bfloat16 */
        th_tensor *h = th_to_dtype(v, a->dtype);
        th_tensor_release(v);
        if (!(v = h)) goto fail;
    }
    th_tensor_release(x);
    th_tensor_release(sv);
    th_tensor_release(si);
    *values = v;
    if (inverse) *inverse = inv;
    if (counts) *counts = cn;
    return TH_OK;
fail:
    th_tensor_release(x);
    th_tensor_release(sv);
    th_tensor_release(si);
    th_tensor_release(inv);
    th_tensor_release(v);
    th_tensor_release(cn);
    return th_last_status() ? th_last_status() : TH_ERR_MEMORY;
}

/* ---- searchsorted --------------------------------------------------- */
/* Boundaries rows of length L; value k searches row k / M (row 0 when the
 * boundaries are 1-d).  The comparisons are PyTorch's, so NaNs land where
 * they do there. */
typedef struct {
    const char *seq, *vals;
    int64_t *out;
    int64_t L, M;
    int one_row, right, dtype;
} ss_ctx;

#define SEARCH_FN(E, T, S)                                                    \
    static void search_##S(const ss_ctx *c, int64_t b, int64_t e) {           \
        const T *v = (const T *)c->vals;                                      \
        for (int64_t k = b; k < e; k++) {                                     \
            const T *bd = (const T *)c->seq + (c->one_row ? 0 : k / c->M) * c->L; \
            T val = v[k];                                                     \
            int64_t lo = 0, hi = c->L;                                        \
            while (lo < hi) {                                                 \
                int64_t mid = lo + ((hi - lo) >> 1);                          \
                int go_right = c->right ? !(bd[mid] > val) : !(bd[mid] >= val); \
                if (go_right) lo = mid + 1;                                   \
                else hi = mid;                                                \
            }                                                                 \
            c->out[k] = lo;                                                   \
        }                                                                     \
    }
TH_FOR_NATIVE_DTYPES(SEARCH_FN)

static void search_range(int64_t b, int64_t e, void *vctx) {
    const ss_ctx *c = vctx;
    switch (c->dtype) {
#define SEARCH_CASE(E, T, S) case E: search_##S(c, b, e); break;
        TH_FOR_NATIVE_DTYPES(SEARCH_CASE)
#undef SEARCH_CASE
    default: break;
    }
}

th_tensor *th_searchsorted(const th_tensor *seq, const th_tensor *v,
                           int right, int out_int32) {
    char b1[256], b2[256];
    if (seq->ndim == 0)
        return th__error_null(TH_ERR_RUNTIME,
                              "torch.searchsorted(): boundaries tensor should "
                              "have positive dimension, but got 0 dimension");
    int matched = seq->ndim == 1;
    if (!matched && v->ndim == seq->ndim) {
        matched = 1;
        for (int d = 0; d < seq->ndim - 1; d++)
            matched = matched && seq->sizes[d] == v->sizes[d];
    }
    if (!matched)
        return th__error_null(TH_ERR_RUNTIME,
                              "torch.searchsorted(): boundaries tensor should "
                              "be 1 dimension or the first N-1 dimensions of "
                              "boundaries tensor and input value tensor must "
                              "match, but we got boundaries tensor %s and "
                              "input value tensor %s",
                              th__shape_str(seq->ndim, seq->sizes, b1),
                              th__shape_str(v->ndim, v->sizes, b2));
    int ct = th_promote_types(seq->dtype, v->dtype);
    if (th__refuse_complex("searchsorted", ct)) return NULL;
    if (th__is_half(ct)) ct = TH_FLOAT32;
    th_tensor *sc = seq->dtype == ct ? th_contiguous(seq) : th_to_dtype(seq, ct);
    th_tensor *vc = !sc ? NULL
                  : v->dtype == ct ? th_contiguous(v) : th_to_dtype(v, ct);
    th_tensor *r = vc ? th_empty(v->ndim, v->sizes, TH_INT64) : NULL;
    if (r && th_numel(r) > 0) {
        ss_ctx c = {th__ptr(sc), th__ptr(vc), (int64_t *)th__ptr(r),
                    seq->sizes[seq->ndim - 1], v->ndim ? v->sizes[v->ndim - 1] : 1,
                    seq->ndim == 1, right, ct};
        th_parallel_for(th_numel(r), TH_GRAIN / 16, search_range, &c);
    }
    if (r && out_int32) {
        th_tensor *r32 = th_to_dtype(r, TH_INT32);
        th_tensor_release(r);
        r = r32;
    }
    th_tensor_release(sc);
    th_tensor_release(vc);
    return r;
}

/* ---- bincount / histc ----------------------------------------------- */
th_tensor *th_bincount(const th_tensor *a, const th_tensor *weights,
                       int64_t minlength) {
    if (weights && th__refuse_complex("bincount", weights->dtype)) return NULL;
    if (!th_dtype_is_integral(a->dtype))
        return th__error_null(TH_ERR_TYPE, "bincount: expected an integral "
                              "input tensor, but got %s",
                              th_dtype_name(a->dtype));
    if (minlength < 0)
        return th__error_null(TH_ERR_RUNTIME, "minlength should be >= 0");
    if (a->ndim != 1)
        return th__error_null(TH_ERR_RUNTIME, "bincount only supports 1-d "
                              "non-negative integral inputs.");
    if (weights && (weights->ndim != 1 || weights->sizes[0] != a->sizes[0]))
        return th__error_null(TH_ERR_RUNTIME, "weights should be 1-d and have "
                              "the same length as input");
    th_tensor *x = a->dtype == TH_INT64 ? th_contiguous(a) : th_to_dtype(a, TH_INT64);
    if (!x) return NULL;
    const int64_t *xv = (const int64_t *)th__ptr(x);
    int64_t n = th_numel(x), hi = -1;
    for (int64_t i = 0; i < n; i++) {
        if (xv[i] < 0) {
            th_tensor_release(x);
            return th__error_null(TH_ERR_RUNTIME, "bincount only supports 1-d "
                                  "non-negative integral inputs.");
        }
        hi = TH_MAX(hi, xv[i]);
    }
    if (hi == INT64_MAX) { /* hi + 1 bins do not fit in int64 */
        th_tensor_release(x);
        return th__error_null(TH_ERR_RUNTIME, "maximum value of input "
                              "overflowed, it should be < %lld but got %lld",
                              (long long)INT64_MAX, (long long)hi);
    }
    int64_t nbins = TH_MAX(minlength, hi + 1);
    /* PyTorch: float32 weights give float32, any other weights float64;
     * an empty input gives int64 zeros whatever the weights */
    int rdt = !weights || n == 0 ? TH_INT64
            : weights->dtype == TH_FLOAT32 ? TH_FLOAT32 : TH_FLOAT64;
    th_tensor *w = rdt != TH_INT64 ? th_to_dtype(weights, rdt) : NULL;
    th_tensor *r = (rdt == TH_INT64 || w) ? th_empty(1, &nbins, rdt) : NULL;
    if (r) {
        char *rp = th__ptr(r);
        memset(rp, 0, (size_t)(nbins * th_dtype_itemsize(rdt)));
        if (rdt == TH_INT64) {
            for (int64_t i = 0; i < n; i++) ((int64_t *)rp)[xv[i]]++;
        } else if (rdt == TH_FLOAT32) {
            const float *wv = (const float *)th__ptr(w);
            for (int64_t i = 0; i < n; i++) ((float *)rp)[xv[i]] += wv[i];
        } else {
            const double *wv = (const double *)th__ptr(w);
            for (int64_t i = 0; i < n; i++) ((double *)rp)[xv[i]] += wv[i];
        }
    }
    th_tensor_release(x);
    th_tensor_release(w);
    return r;
}

/* PyTorch's histc binning, in the input's precision: values outside
 * [lo, hi] and NaNs are skipped; hi falls in the last bin. */
#define HISTC_FN(T, S)                                                        \
    static void histc_##S(const T *x, int64_t n, T *h, int64_t bins,          \
                          double lo_d, double hi_d) {                         \
        T lo = (T)lo_d, hi = (T)hi_d;                                         \
        for (int64_t i = 0; i < n; i++) {                                     \
            T e = x[i];                                                       \
            if (!(e >= lo && e <= hi)) continue;                              \
            T f = (e - lo) * (T)bins / (hi - lo);                             \
            int64_t pos = f < (T)bins ? (int64_t)f : bins - 1;                \
            h[pos] += 1;                                                      \
        }                                                                     \
    }
HISTC_FN(float, f32)
HISTC_FN(double, f64)

th_tensor *th_histc(const th_tensor *a, int64_t bins, double min, double max) {
    if (th__refuse_complex("histogram", a->dtype)) return NULL;
    if (!th_dtype_is_floating(a->dtype))
        return th__error_null(TH_ERR_TYPE, "torch.histc: expected a floating "
                              "point input tensor, but got %s",
                              th_dtype_name(a->dtype));
    if (bins <= 0)
        return th__error_null(TH_ERR_RUNTIME, "torch.histc(): bins must be > "
                              "0, but got %lld for dimension 0",
                              (long long)bins);
    th_tensor *x = sortable(a); /* contiguous float32 / float64 */
    if (!x) return NULL;
    int64_t n = th_numel(x);
    int f64 = x->dtype == TH_FLOAT64;
    const char *xp = th__ptr(x);
    double lo = min, hi = max;
    if (lo == hi && n > 0) { /* the data's range; a NaN makes it NaN */
        lo = INFINITY;
        hi = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            double e = f64 ? ((const double *)xp)[i] : ((const float *)xp)[i];
            if (isnan(e)) {
                lo = hi = NAN;
                break;
            }
            lo = TH_MIN(lo, e);
            hi = TH_MAX(hi, e);
        }
    }
    if (lo == hi) {
        lo -= 1;
        hi += 1;
    }
    if (!isfinite(lo) || !isfinite(hi)) {
        th_tensor_release(x);
        return th__error_null(TH_ERR_RUNTIME, "torch.histc: range of [%g, %g] "
                              "is not finite", lo, hi);
    }
    if (lo > hi) {
        th_tensor_release(x);
        return th__error_null(TH_ERR_RUNTIME,
                              "torch.histc: max must be larger than min");
    }
    if (th__is_half(a->dtype)) { /* PyTorch's bin edges are in that dtype */
        char buf[2];
        th__store_double(buf, a->dtype, lo);
        lo = th__load_double(buf, a->dtype);
        th__store_double(buf, a->dtype, hi);
        hi = th__load_double(buf, a->dtype);
    }
    th_tensor *h = th_empty(1, &bins, x->dtype);
    if (h) {
        memset(th__ptr(h), 0, (size_t)(bins * th_dtype_itemsize(x->dtype)));
        if (f64)
            histc_f64((const double *)xp, n, (double *)th__ptr(h), bins, lo, hi);
        else
            histc_f32((const float *)xp, n, (float *)th__ptr(h), bins, lo, hi);
    }
    th_tensor_release(x);
    if (h && h->dtype != a->dtype) {
        th_tensor *r = th_to_dtype(h, a->dtype);
        th_tensor_release(h);
        h = r;
    }
    return h;
}
