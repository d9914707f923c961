// sort, topk and kthvalue along a dim, the tensor seen as (outer, L, inner)
// with rows = outer * inner: a stable bottom-up merge sort; NaN sorts above
// every number, as in libTH and PyTorch.  Short rows sort one per thread;
// longer ones in parallel passes over all elements, where each element
// finds its place in the merged run by a binary search in the other run
// (O(n log^2 n) work, but every pass is one wide kernel, so a single long
// row uses the whole device).
#include "ops.cuh"

using namespace thc;

namespace {

// x goes before y in the order
template <typename T> THC_HD inline bool before(T x, T y, int desc) {
    bool xn = x != x, yn = y != y;
    if (desc) return (x > y) || (xn && !yn);
    return (x < y) || (yn && !xn);
}

template <typename T> struct SortRowFn {
    const T *in;         // contiguous, (outer, L, inner)
    T *vals;             // contiguous, count along dim
    int64_t *idx;
    T *sk;               // scratch: 2 * rows * L keys and positions
    int64_t *si;
    int64_t L, inner, start, count, rows;
    int desc;
    THC_HD void operator()(int64_t r) const {
        int64_t base = (r / inner) * L * inner + r % inner;
        T *ka = sk + r * L, *kb = sk + (rows + r) * L;
        int64_t *ia = si + r * L, *ib = si + (rows + r) * L;
        for (int64_t i = 0; i < L; i++) {
            ka[i] = in[base + i * inner];
            ia[i] = i;
        }
        for (int64_t w = 1; w < L; w *= 2) {   // merge runs of w into runs of 2w
            for (int64_t lo = 0; lo < L; lo += 2 * w) {
                int64_t mid = lo + w < L ? lo + w : L, hi = lo + 2 * w < L ? lo + 2 * w : L;
                int64_t i = lo, j = mid, o = lo;
                while (i < mid && j < hi) {
                    bool right = before(ka[j], ka[i], desc);   // ties keep the left one
                    kb[o] = right ? ka[j] : ka[i];
                    ib[o++] = right ? ia[j++] : ia[i++];
                }
                while (i < mid) { kb[o] = ka[i]; ib[o++] = ia[i++]; }
                while (j < hi) { kb[o] = ka[j]; ib[o++] = ia[j++]; }
            }
            T *tk = ka; ka = kb; kb = tk;
            int64_t *ti = ia; ia = ib; ib = ti;
        }
        int64_t out = (r / inner) * count * inner + r % inner;
        for (int64_t j = 0; j < count; j++) {
            vals[out + j * inner] = ka[start + j];
            idx[out + j * inner] = ia[start + j];
        }
    }
};

// rows shorter than this sort one per thread; the others in merge passes
constexpr int64_t ROW_PER_THREAD_MAX = 32;

// scratch (rows, L) <- the rows of `in`, with their positions
template <typename T> struct GatherRowsFn {
    const T *in;
    T *keys;
    int64_t *pos;
    int64_t L, inner;
    THC_HD void operator()(int64_t e) const {
        int64_t r = e / L, i = e % L;
        keys[e] = in[(r / inner) * L * inner + r % inner + i * inner];
        pos[e] = i;
    }
};

// One pass: runs of w (sorted) into runs of 2w.  Element p of a left run
// lands after the right run's elements that go strictly before it, one of
// a right run after the left run's elements that do not go after it: so
// ties keep their order (stable).
template <typename T> struct MergePassFn {
    const T *ka;
    const int64_t *ia;
    T *kb;
    int64_t *ib;
    int64_t L, w;
    int desc;
    THC_HD void operator()(int64_t e) const {
        int64_t r = e / L, p = e % L;
        const T *row = ka + r * L;
        int64_t run = p / w, start = (run & ~(int64_t)1) * w;
        int64_t mid = start + w < L ? start + w : L, hi = start + 2 * w < L ? start + 2 * w : L;
        T x = row[p];
        bool left = (run & 1) == 0;
        int64_t lo = left ? mid : start, up = left ? hi : mid;   // the other run
        while (lo < up) {   // first position where the prefix predicate fails
            int64_t m = lo + (up - lo) / 2;
            bool prefix = left ? before(row[m], x, desc) : !before(x, row[m], desc);
            if (prefix) lo = m + 1;
            else up = m;
        }
        int64_t other = lo - (left ? mid : start);
        int64_t dst = start + (left ? p - start : p - mid) + other;
        kb[r * L + dst] = x;
        ib[r * L + dst] = ia[e];
    }
};

// outputs <- sorted positions [start, start + count) of every row
template <typename T> struct ScatterRowsFn {
    const T *keys;
    const int64_t *pos;
    T *vals;
    int64_t *idx;
    int64_t L, inner, start, count;
    THC_HD void operator()(int64_t e) const {
        int64_t r = e / count, j = e % count;
        int64_t out = (r / inner) * count * inner + r % inner + j * inner;
        vals[out] = keys[r * L + start + j];
        idx[out] = pos[r * L + start + j];
    }
};

template <typename T>
int sort_rows(const T *in, T *vals, int64_t *idx, T *sk, int64_t *si, int64_t L, int64_t inner,
              int64_t start, int64_t count, int64_t rows, int desc) {
    if (L <= ROW_PER_THREAD_MAX)
        return for_each("sort", rows,
                        SortRowFn<T>{in, vals, idx, sk, si, L, inner, start, count, rows, desc},
                        thc__stream());
    int64_t n = rows * L;
    T *ka = sk, *kb = sk + n;
    int64_t *ia = si, *ib = si + n;
    int rc = for_each("sort", n, GatherRowsFn<T>{in, ka, ia, L, inner}, thc__stream());
    for (int64_t w = 1; !rc && w < L; w *= 2) {
        rc = for_each("sort", n, MergePassFn<T>{ka, ia, kb, ib, L, w, desc}, thc__stream());
        T *tk = ka; ka = kb; kb = tk;
        int64_t *ti = ia; ia = ib; ib = ti;
    }
    return rc ? rc : for_each("sort", rows * count,
                              ScatterRowsFn<T>{ka, ia, vals, idx, L, inner, start, count},
                              thc__stream());
}

// Sorts every row of a along dim (wrapped) and keeps the sorted positions
// [start, start + count); outputs have a's shape with count along dim.
int sort_core(const thc_tensor *a, int dim, int desc, int64_t start, int64_t count,
              thc_tensor **values, thc_tensor **indices) {
    int64_t L = a->ndim ? a->sizes[dim] : 1, outer = 1, inner = 1;
    int64_t sizes[THC_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) {
        sizes[d] = d == dim ? count : a->sizes[d];
        if (d < dim) outer *= a->sizes[d];
        if (d > dim) inner *= a->sizes[d];
    }
    int ct = thc__is_half(a->dtype) ? THC_FLOAT32 : a->dtype;
    thc_tensor *c = thc__cast(a, ct), *x = c ? thc_contiguous(c) : NULL;
    thc_tensor *v = x ? thc_empty(a->ndim, sizes, ct) : NULL;
    thc_tensor *ix = v ? thc_empty(a->ndim, sizes, THC_INT64) : NULL;
    int64_t rows = outer * inner, scratch = 2 * rows * L;
    thc_tensor *sk = ix ? thc_empty(1, &scratch, ct) : NULL;
    thc_tensor *si = sk ? thc_empty(1, &scratch, THC_INT64) : NULL;
    int rc = si ? THC_OK : thc_last_status();
    if (!rc && rows > 0 && count > 0) switch (ct) {
        THC_CASES_COMPUTE(rc = sort_rows((const scalar_t *)thc__ptr(x), (scalar_t *)thc__ptr(v),
                                         (int64_t *)thc__ptr(ix), (scalar_t *)thc__ptr(sk),
                                         (int64_t *)thc__ptr(si), L, inner, start, count, rows,
                                         desc))
    }
    if (!rc && ct != a->dtype) {   // back to float16 / bfloat16 (exact)
        thc_tensor *h = thc_to_dtype(v, a->dtype);
        thc_tensor_release(v);
        v = h;
        if (!h) rc = thc_last_status();
    }
    thc_tensor *tmp[] = {c, x, sk, si};
    for (thc_tensor *t : tmp) thc_tensor_release(t);
    if (rc) {
        thc_tensor_release(v);
        thc_tensor_release(ix);
        return rc;
    }
    *values = v;
    *indices = ix;
    return THC_OK;
}

int check_args(const char *what, const thc_tensor *a, thc_tensor **values,
               thc_tensor **indices) {
    if (thc__check_device(what, "the input", a)) return thc_last_status();
    if (!values || !indices) return thc__error(THC_ERR_VALUE, "%s: NULL result pointer", what);
    return THC_OK;
}

}  // namespace

extern "C" THC_API int thc_sort(const thc_tensor *a, int dim, int descending, int stable,
                                thc_tensor **values, thc_tensor **indices) {
    (void)stable;   // every sort here is stable
    if (check_args("sort", a, values, indices)) return thc_last_status();
    if ((dim = thc__wrap_dim(dim, a->ndim)) < 0) return thc_last_status();
    int64_t L = a->ndim ? a->sizes[dim] : 1;
    return sort_core(a, dim, descending, 0, L, values, indices);
}

extern "C" THC_API int thc_topk(const thc_tensor *a, int64_t k, int dim, int largest, int sorted,
                                thc_tensor **values, thc_tensor **indices) {
    (void)sorted;   // results always come sorted
    if (check_args("topk", a, values, indices)) return thc_last_status();
    if ((dim = thc__wrap_dim(dim, a->ndim)) < 0) return thc_last_status();
    int64_t L = a->ndim ? a->sizes[dim] : 1;
    if (k < 0 || k > L) return thc__error(THC_ERR_RUNTIME, "selected index k out of range");
    if (a->ndim == 0) k = 1;   // a 0-d result holds one element
    return sort_core(a, dim, largest, 0, k, values, indices);
}

extern "C" THC_API int thc_kthvalue(const thc_tensor *a, int64_t k, int dim, int keepdim,
                                    thc_tensor **values, thc_tensor **indices) {
    if (check_args("kthvalue", a, values, indices)) return thc_last_status();
    if ((dim = thc__wrap_dim(dim, a->ndim)) < 0) return thc_last_status();
    int64_t L = a->ndim ? a->sizes[dim] : 1;
    if (L == 0)
        return thc__error(THC_ERR_INDEX, "kthvalue(): Expected reduction dim %d to have non-zero "
                          "size.", dim);
    if (k < 1 || k > L)
        return thc__error(THC_ERR_RUNTIME, "kthvalue(): selected number k out of range for "
                          "dimension %d", dim);
    thc_tensor *v, *ix;
    int rc = sort_core(a, dim, 0, k - 1, 1, &v, &ix);
    if (rc) return rc;
    if (!keepdim && a->ndim > 0) {
        thc_tensor *sv = thc_squeeze(v, dim), *sx = thc_squeeze(ix, dim);
        thc_tensor_release(v);
        thc_tensor_release(ix);
        if (!sv || !sx) {
            thc_tensor_release(sv);
            thc_tensor_release(sx);
            return thc_last_status();
        }
        v = sv;
        ix = sx;
    }
    *values = v;
    *indices = ix;
    return THC_OK;
}
