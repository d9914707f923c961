/* Indexing and shape ops (index.c, shape.c) against hand-computed values. */
#include <string.h>
#include "check.h"

/* Tensors made by a test are kept here and released by drain(). */
static th_tensor *pool[512];
static int npool = 0;
static th_tensor *keep(th_tensor *t) {
    if (t && npool < 512) pool[npool++] = t;
    return t;
}
static void drain(void) {
    while (npool > 0) th_tensor_release(pool[--npool]);
}

/* A new tensor of `dtype` holding vals (row-major). */
static th_tensor *T(int dtype, int ndim, const int64_t *sizes,
                    const double *vals) {
    th_tensor *t = th_empty(ndim, sizes, TH_FLOAT64);
    int64_t n = th_numel(t);
    for (int64_t i = 0; i < n; i++) ((double *)th_data_ptr(t))[i] = vals[i];
    th_tensor *r = th_to_dtype(t, dtype);
    th_tensor_release(t);
    return keep(r);
}

static th_tensor *L(int ndim, const int64_t *sizes, const int64_t *vals) {
    th_tensor *t = th_empty(ndim, sizes, TH_INT64);
    memcpy(th_data_ptr(t), vals, (size_t)th_numel(t) * sizeof(int64_t));
    return keep(t);
}

#define FAILS_NULL(expr) ((expr) == NULL)
#define FAILS_RC(expr) ((expr) != TH_OK)

static const double M34[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

static void test_index_select(void) {
    th_tensor *a = T(TH_FLOAT32, 2, SZ(3, 4), M34);
    th_tensor *r = keep(th_index_select(a, 0, L(1, SZ(3), IV(2, 0, 2))));
    CHECK(same(r, 2, SZ(3, 4), DV(8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11)));
    r = keep(th_index_select(a, 1, L(1, SZ(2), IV(3, 1))));
    CHECK(same(r, 2, SZ(3, 2), DV(3, 1, 7, 5, 11, 9)));
    /* transposed input, int32 index, half dtype */
    th_tensor *at = keep(th_transpose(T(TH_FLOAT16, 2, SZ(3, 4), M34), 0, 1));
    th_tensor *i32 = keep(th_to_dtype(L(1, SZ(2), IV(0, 2)), TH_INT32));
    r = keep(th_index_select(at, 1, i32));
    CHECK(r && r->dtype == TH_FLOAT16);
    CHECK(same(r, 2, SZ(4, 2), DV(0, 8, 1, 9, 2, 10, 3, 11)));
    /* 0-d input and index */
    th_tensor *s = T(TH_INT64, 0, NULL, DV(7));
    r = keep(th_index_select(s, 0, L(0, NULL, IV(0))));
    CHECK(same(r, 0, NULL, DV(7)));
    /* empty index */
    r = keep(th_index_select(a, 0, L(1, SZ(0), IV(0))));
    CHECK(same(r, 2, SZ(0, 4), DV(0)));
    /* PyTorch's wording; negative indices are refused, not wrapped */
    ERR(FAILS_NULL(th_index_select(a, 0, L(1, SZ(1), IV(5)))), TH_ERR_INDEX,
        "index out of range in self");
    ERR(FAILS_NULL(th_index_select(a, 0, L(1, SZ(2), IV(0, -1)))), TH_ERR_INDEX,
        "index out of range in self");
    ERR(FAILS_NULL(th_index_select(a, 2, L(1, SZ(1), IV(0)))), TH_ERR_INDEX,
        "Dimension out of range");
    ERR(FAILS_NULL(th_index_select(a, 0, L(2, SZ(1, 1), IV(0)))), TH_ERR_INDEX,
        "Index is supposed to be a vector");
    ERR(FAILS_NULL(th_index_select(a, 0, T(TH_FLOAT32, 1, SZ(1), DV(0)))),
        TH_ERR_TYPE, "Expected dtype int64");
    drain();
}

static void test_gather_scatter(void) {
    th_tensor *a = T(TH_FLOAT64, 2, SZ(2, 3), DV(1, 2, 3, 4, 5, 6));
    th_tensor *idx = L(2, SZ(2, 2), IV(0, 2, 2, 0));
    CHECK(same(keep(th_gather(a, 1, idx)), 2, SZ(2, 2), DV(1, 3, 6, 4)));
    CHECK(same(keep(th_gather(a, 0, L(2, SZ(1, 3), IV(1, 0, 1)))), 2, SZ(1, 3),
               DV(4, 2, 6)));
    /* gather from a transposed view: at is [[1,4],[2,5],[3,6]] */
    th_tensor *at = keep(th_transpose(a, 0, 1));
    CHECK(same(keep(th_gather(at, 1, L(2, SZ(3, 1), IV(1, 0, 1)))), 2,
               SZ(3, 1), DV(4, 2, 6)));
    CHECK(same(keep(th_gather(T(TH_INT8, 0, NULL, DV(-3)), 0, L(0, NULL, IV(0)))),
               0, NULL, DV(-3)));
    ERR(FAILS_NULL(th_gather(a, 1, L(2, SZ(1, 1), IV(3)))), TH_ERR_RUNTIME,
        "index 3 is out of bounds for dimension 1 with size 3");
    ERR(FAILS_NULL(th_gather(a, 1, L(2, SZ(1, 1), IV(-1)))), TH_ERR_RUNTIME,
        "index -1 is out of bounds for dimension 1 with size 3");
    ERR(FAILS_NULL(th_gather(a, 1, L(2, SZ(3, 1), IV(0, 0, 0)))),
        TH_ERR_RUNTIME, "Size does not match at dimension 0");
    ERR(FAILS_NULL(th_gather(a, 1, L(1, SZ(1), IV(0)))), TH_ERR_RUNTIME,
        "same number of dimensions");

    /* scatter (no reduce): last write wins, src larger than index */
    th_tensor *s = T(TH_FLOAT32, 2, SZ(2, 3), DV(0, 0, 0, 0, 0, 0));
    th_tensor *src = T(TH_FLOAT32, 2, SZ(2, 3), DV(1, 2, 3, 4, 5, 6));
    CHECK(th_scatter_(s, 1, L(2, SZ(2, 2), IV(2, 0, 1, 1)), src,
                      TH_SCATTER_NONE, 1) == TH_OK);
    CHECK(same(s, 2, SZ(2, 3), DV(2, 0, 1, 0, 5, 0)));
    /* scatter a 0-d value of another dtype */
    CHECK(th_scatter_(s, 0, L(2, SZ(1, 2), IV(1, 0)), T(TH_INT64, 0, NULL, DV(9)),
                      TH_SCATTER_NONE, 1) == TH_OK);
    CHECK(same(s, 2, SZ(2, 3), DV(2, 9, 1, 9, 5, 0)));
    /* sum with duplicates; int32 */
    th_tensor *si = T(TH_INT32, 1, SZ(3), DV(10, 20, 30));
    th_tensor *sv = T(TH_INT32, 1, SZ(4), DV(1, 2, 3, 4));
    th_tensor *di = L(1, SZ(4), IV(0, 2, 0, 2));
    CHECK(th_scatter_(si, 0, di, sv, TH_SCATTER_SUM, 1) == TH_OK);
    CHECK(same(si, 1, SZ(3), DV(14, 20, 36)));
    si = T(TH_INT32, 1, SZ(3), DV(10, 20, 30));
    CHECK(th_scatter_(si, 0, di, sv, TH_SCATTER_SUM, 0) == TH_OK);
    CHECK(same(si, 1, SZ(3), DV(4, 20, 6)));
    si = T(TH_INT32, 1, SZ(3), DV(10, 20, 30));
    CHECK(th_scatter_(si, 0, di, sv, TH_SCATTER_PROD, 1) == TH_OK);
    CHECK(same(si, 1, SZ(3), DV(30, 20, 240)));
    /* mean: int floor division; include_self counts self */
    si = T(TH_INT32, 1, SZ(3), DV(10, 20, -31));
    CHECK(th_scatter_(si, 0, di, sv, TH_SCATTER_MEAN, 1) == TH_OK);
    CHECK(same(si, 1, SZ(3), DV(4, 20, -9))); /* (10+1+3)/3, (-31+2+4)/3 */
    th_tensor *sf = T(TH_FLOAT64, 1, SZ(3), DV(10, 20, 30));
    CHECK(th_scatter_(sf, 0, di, keep(th_to_dtype(sv, TH_FLOAT64)),
                      TH_SCATTER_MEAN, 0) == TH_OK);
    CHECK(same(sf, 1, SZ(3), DV(2, 20, 3)));
    /* amax / amin with NaN, float16 via float32 */
    th_tensor *sh = T(TH_FLOAT16, 1, SZ(3), DV(0, 5, 1));
    th_tensor *hv = T(TH_FLOAT16, 1, SZ(4), DV(2, NAN, -1, 3));
    CHECK(th_scatter_(sh, 0, di, hv, TH_SCATTER_AMAX, 1) == TH_OK);
    CHECK(same(sh, 1, SZ(3), DV(2, 5, NAN)));
    sh = T(TH_FLOAT16, 1, SZ(3), DV(0, 5, 1));
    CHECK(th_scatter_(sh, 0, L(1, SZ(2), IV(0, 0)), hv, TH_SCATTER_AMIN, 0) ==
          TH_OK);
    CHECK(same(sh, 1, SZ(3), DV(NAN, 5, 1)));
    sh = T(TH_INT16, 1, SZ(3), DV(0, 5, 1));
    CHECK(th_scatter_(sh, 0, di, keep(th_to_dtype(sv, TH_INT16)),
                      TH_SCATTER_AMAX, 0) == TH_OK);
    CHECK(same(sh, 1, SZ(3), DV(3, 5, 4)));
    /* scatter into a transposed (non-contiguous) self */
    th_tensor *base = T(TH_FLOAT32, 2, SZ(3, 2), DV(0, 0, 0, 0, 0, 0));
    th_tensor *tv = keep(th_transpose(base, 0, 1)); /* 2 x 3 view */
    CHECK(th_scatter_(tv, 1, L(2, SZ(2, 1), IV(2, 1)), src, TH_SCATTER_SUM, 1) ==
          TH_OK);
    CHECK(same(base, 2, SZ(3, 2), DV(0, 0, 0, 4, 1, 0)));
    /* errors leave self intact */
    th_tensor *keepv = T(TH_FLOAT32, 1, SZ(3), DV(1, 2, 3));
    ERR(FAILS_RC(th_scatter_(keepv, 0, L(1, SZ(2), IV(0, 3)),
                             T(TH_FLOAT32, 1, SZ(2), DV(7, 7)), TH_SCATTER_NONE,
                             1)), TH_ERR_RUNTIME,
        "index 3 is out of bounds for dimension 0 with size 3");
    ERR(FAILS_RC(th_scatter_(keepv, 0, L(1, SZ(2), IV(0, -1)),
                             T(TH_FLOAT32, 1, SZ(2), DV(7, 7)), TH_SCATTER_SUM,
                             1)), TH_ERR_RUNTIME,
        "index -1 is out of bounds for dimension 0 with size 3");
    CHECK(same(keepv, 1, SZ(3), DV(1, 2, 3)));
    ERR(FAILS_RC(th_scatter_(keepv, 0, L(1, SZ(2), IV(0, 1)),
                             T(TH_FLOAT64, 1, SZ(2), DV(7, 7)), TH_SCATTER_NONE,
                             1)), TH_ERR_TYPE, "Expected self.dtype");
    ERR(FAILS_RC(th_scatter_(keepv, 0, L(1, SZ(3), IV(0, 1, 2)),
                             T(TH_FLOAT32, 1, SZ(2), DV(7, 7)), TH_SCATTER_NONE,
                             1)), TH_ERR_RUNTIME, "to be smaller size than src");
    CHECK(same(keepv, 1, SZ(3), DV(1, 2, 3)));
    drain();
}

static void test_index_ops(void) {
    /* index_add_ with alpha and duplicates along dim 1 */
    th_tensor *s = T(TH_FLOAT32, 2, SZ(2, 3), DV(0, 0, 0, 1, 1, 1));
    th_tensor *src = T(TH_FLOAT32, 2, SZ(2, 2), DV(1, 2, 3, 4));
    CHECK(th_index_add_(s, 1, L(1, SZ(2), IV(2, 2)), src,
                        T(TH_FLOAT64, 0, NULL, DV(2))) == TH_OK);
    CHECK(same(s, 2, SZ(2, 3), DV(0, 0, 6, 1, 1, 15)));
    /* transposed self, alpha NULL, int64 */
    th_tensor *base = T(TH_INT64, 2, SZ(3, 2), DV(0, 0, 0, 0, 0, 0));
    th_tensor *tv = keep(th_transpose(base, 0, 1)); /* 2 x 3 */
    CHECK(th_index_add_(tv, 0, L(1, SZ(1), IV(1)),
                        T(TH_INT64, 2, SZ(1, 3), DV(1, 2, 3)), NULL) == TH_OK);
    CHECK(same(base, 2, SZ(3, 2), DV(0, 1, 0, 2, 0, 3)));
    /* bfloat16 */
    th_tensor *bf = T(TH_BFLOAT16, 1, SZ(3), DV(1, 1, 1));
    CHECK(th_index_add_(bf, 0, L(1, SZ(2), IV(1, 1)),
                        T(TH_BFLOAT16, 1, SZ(2), DV(0.5, 0.25)), NULL) == TH_OK);
    CHECK(same(bf, 1, SZ(3), DV(1, 1.75, 1)));
    ERR(FAILS_RC(th_index_add_(s, 1, L(1, SZ(2), IV(0, 1)),
                               T(TH_FLOAT64, 2, SZ(2, 2), DV(1, 2, 3, 4)), NULL)),
        TH_ERR_TYPE, "must have the same scalar type");
    ERR(FAILS_RC(th_index_add_(s, 1, L(1, SZ(3), IV(0, 1, 2)), src, NULL)),
        TH_ERR_RUNTIME, "Number of indices (3)");
    ERR(FAILS_RC(th_index_add_(s, 1, L(1, SZ(2), IV(0, 9)), src, NULL)),
        TH_ERR_INDEX, "index out of range in self");
    ERR(FAILS_RC(th_index_add_(s, 1, L(1, SZ(2), IV(0, -1)), src, NULL)),
        TH_ERR_INDEX, "index out of range in self");
    CHECK(same(s, 2, SZ(2, 3), DV(0, 0, 6, 1, 1, 15)));

    /* index_copy_ */
    th_tensor *c = T(TH_INT8, 2, SZ(3, 2), DV(0, 0, 0, 0, 0, 0));
    CHECK(th_index_copy_(c, 0, L(1, SZ(2), IV(2, 0)),
                         T(TH_INT8, 2, SZ(2, 2), DV(1, 2, 3, 4))) == TH_OK);
    CHECK(same(c, 2, SZ(3, 2), DV(3, 4, 0, 0, 1, 2)));
    ERR(FAILS_RC(th_index_copy_(c, 0, L(1, SZ(1), IV(0)),
                                T(TH_INT8, 2, SZ(1, 3), DV(1, 2, 3)))),
        TH_ERR_RUNTIME, "must match self of shape");
    ERR(FAILS_RC(th_index_copy_(c, 0, L(1, SZ(1), IV(-1)),
                                T(TH_INT8, 2, SZ(1, 2), DV(1, 2)))),
        TH_ERR_INDEX, "index_copy_(): index -1 is out of bounds for dimension 0 with size 3");

    /* index_fill_ with a float value into int, negative index, dim 1 */
    th_tensor *f = T(TH_INT32, 2, SZ(2, 3), DV(1, 2, 3, 4, 5, 6));
    CHECK(th_index_fill_(f, 1, L(1, SZ(2), IV(-1, 0)),
                         T(TH_FLOAT64, 0, NULL, DV(-7.9))) == TH_OK);
    CHECK(same(f, 2, SZ(2, 3), DV(-7, 2, -7, -7, 5, -7)));
    th_tensor *fb = T(TH_BOOL, 1, SZ(3), DV(0, 0, 0));
    CHECK(th_index_fill_(fb, 0, L(0, NULL, IV(1)), T(TH_FLOAT32, 0, NULL, DV(2))) ==
          TH_OK);
    CHECK(same(fb, 1, SZ(3), DV(0, 1, 0)));
    ERR(FAILS_RC(th_index_fill_(f, 1, L(1, SZ(1), IV(0)),
                                T(TH_FLOAT64, 1, SZ(1), DV(1)))),
        TH_ERR_RUNTIME, "0-dimensional value tensor");

    /* take / put_ */
    th_tensor *a = T(TH_FLOAT64, 2, SZ(2, 3), DV(1, 2, 3, 4, 5, 6));
    th_tensor *at = keep(th_transpose(a, 0, 1)); /* flat: 1 4 2 5 3 6 */
    CHECK(same(keep(th_take(at, L(2, SZ(2, 2), IV(0, -1, 3, 2)))), 2, SZ(2, 2),
               DV(1, 6, 5, 2)));
    ERR(FAILS_NULL(th_take(a, L(1, SZ(1), IV(6)))), TH_ERR_INDEX,
        "out of range: tried to access index 6 on a tensor of 6 elements");
    th_tensor *p = T(TH_FLOAT32, 1, SZ(4), DV(0, 0, 0, 0));
    CHECK(th_put_(p, L(1, SZ(3), IV(1, 1, -1)), T(TH_FLOAT32, 1, SZ(3), DV(1, 2, 3)),
                  1) == TH_OK);
    CHECK(same(p, 1, SZ(4), DV(0, 3, 0, 3)));
    CHECK(th_put_(p, L(1, SZ(3), IV(1, 1, 0)), T(TH_FLOAT32, 1, SZ(3), DV(1, 2, 3)),
                  0) == TH_OK);
    CHECK(same(p, 1, SZ(4), DV(3, 2, 0, 3)));
    ERR(FAILS_RC(th_put_(p, L(1, SZ(2), IV(0, 4)), T(TH_FLOAT32, 1, SZ(2), DV(9, 9)),
                         0)), TH_ERR_INDEX, "out of range");
    ERR(FAILS_RC(th_put_(p, L(1, SZ(2), IV(0, 1)), T(TH_FLOAT32, 1, SZ(1), DV(9)),
                         0)), TH_ERR_RUNTIME, "same number of elements");
    CHECK(same(p, 1, SZ(4), DV(3, 2, 0, 3)));
    drain();
}

static void test_masks(void) {
    /* masked_fill_: a row mask broadcast over a transposed self */
    th_tensor *base = T(TH_FLOAT32, 2, SZ(3, 2), DV(1, 2, 3, 4, 5, 6));
    th_tensor *tv = keep(th_transpose(base, 0, 1)); /* [[1,3,5],[2,4,6]] */
    th_tensor *m = T(TH_BOOL, 1, SZ(3), DV(1, 0, 1));
    CHECK(th_masked_fill_(tv, m, T(TH_INT64, 0, NULL, DV(-1))) == TH_OK);
    CHECK(same(base, 2, SZ(3, 2), DV(-1, -1, 3, 4, -1, -1)));
    th_tensor *h = T(TH_FLOAT16, 1, SZ(3), DV(1, 2, 3));
    CHECK(th_masked_fill_(h, m, T(TH_FLOAT64, 0, NULL, DV(0.5))) == TH_OK);
    CHECK(same(h, 1, SZ(3), DV(0.5, 2, 0.5)));
    ERR(FAILS_RC(th_masked_fill_(h, T(TH_UINT8, 1, SZ(3), DV(1, 0, 1)),
                                 T(TH_FLOAT64, 0, NULL, DV(0)))),
        TH_ERR_TYPE, "only supports boolean masks");
    ERR(FAILS_RC(th_masked_fill_(h, T(TH_BOOL, 1, SZ(2), DV(1, 0)),
                                 T(TH_FLOAT64, 0, NULL, DV(0)))),
        TH_ERR_RUNTIME, "expanded size");

    /* masked_select broadcasts mask and input */
    th_tensor *a = T(TH_INT16, 2, SZ(2, 1), DV(1, 2));
    th_tensor *mm = T(TH_BOOL, 2, SZ(2, 3), DV(1, 0, 1, 0, 1, 0));
    CHECK(same(keep(th_masked_select(a, mm)), 1, SZ(3), DV(1, 1, 2)));
    CHECK(same(keep(th_masked_select(T(TH_FLOAT64, 0, NULL, DV(4)),
                                     T(TH_BOOL, 0, NULL, DV(0)))), 1, SZ(0), DV(0)));

    /* masked_scatter_ takes source elements in order */
    th_tensor *s = T(TH_FLOAT64, 2, SZ(2, 2), DV(0, 0, 0, 0));
    CHECK(th_masked_scatter_(s, T(TH_BOOL, 1, SZ(2), DV(0, 1)),
                             T(TH_FLOAT64, 1, SZ(5), DV(7, 8, 9, 10, 11))) == TH_OK);
    CHECK(same(s, 2, SZ(2, 2), DV(0, 7, 0, 8)));
    ERR(FAILS_RC(th_masked_scatter_(s, T(TH_BOOL, 1, SZ(2), DV(1, 1)),
                                    T(TH_FLOAT64, 1, SZ(3), DV(1, 2, 3)))),
        TH_ERR_RUNTIME, "Number of elements of source");
    CHECK(same(s, 2, SZ(2, 2), DV(0, 7, 0, 8)));

    /* nonzero: NaN counts, -0.0 does not; 0-d; half */
    th_tensor *nz = keep(th_nonzero(T(TH_FLOAT32, 2, SZ(2, 3),
                                      DV(0, NAN, -0.0, 2, 0, 1))));
    CHECK(same(nz, 2, SZ(3, 2), DV(0, 1, 1, 0, 1, 2)));
    CHECK(same(keep(th_nonzero(T(TH_FLOAT16, 1, SZ(3), DV(0, -0.0, 3)))), 2,
               SZ(1, 1), DV(2)));
    nz = keep(th_nonzero(T(TH_INT32, 0, NULL, DV(5))));
    CHECK(nz && nz->ndim == 2 && nz->sizes[0] == 1 && nz->sizes[1] == 0);
    drain();
}

static void test_advanced(void) {
    th_tensor *a = T(TH_FLOAT32, 2, SZ(3, 4), M34);
    th_tensor *i0 = L(1, SZ(2), IV(2, -3));
    th_tensor *r = keep(th_index(a, 0, 1, &i0));
    CHECK(same(r, 2, SZ(2, 4), DV(8, 9, 10, 11, 0, 1, 2, 3)));
    /* a[[[0],[2]], [1, 3]] -> broadcast 2x2 */
    th_tensor *two[2] = {L(2, SZ(2, 1), IV(0, 2)), L(1, SZ(2), IV(1, 3))};
    r = keep(th_index(a, 0, 2, two));
    CHECK(same(r, 2, SZ(2, 2), DV(1, 3, 9, 11)));
    /* a[:, [3, 0]] on a transposed input: a.T is 4 x 3 */
    th_tensor *at = keep(th_transpose(a, 0, 1));
    th_tensor *i1 = L(1, SZ(2), IV(2, 0));
    r = keep(th_index(at, 1, 1, &i1));
    CHECK(same(r, 2, SZ(4, 2), DV(8, 0, 9, 1, 10, 2, 11, 3)));
    /* a bool mask */
    th_tensor *mk = T(TH_BOOL, 1, SZ(3), DV(0, 1, 1));
    r = keep(th_index(a, 0, 1, &mk));
    CHECK(same(r, 2, SZ(2, 4), DV(4, 5, 6, 7, 8, 9, 10, 11)));
    th_tensor *mk2 = T(TH_BOOL, 2, SZ(3, 4), DV(1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0));
    r = keep(th_index(a, 0, 1, &mk2));
    CHECK(same(r, 1, SZ(2), DV(0, 7)));
    /* 3-d, middle dims, 0-d index removes the dim */
    th_tensor *b = keep(th_view(keep(th_arange(0, 24, 1, TH_INT64)), 3, SZ(2, 3, 4)));
    th_tensor *sc = L(0, NULL, IV(1));
    r = keep(th_index(b, 1, 1, &sc));
    CHECK(same(r, 2, SZ(2, 4), DV(4, 5, 6, 7, 16, 17, 18, 19)));
    th_tensor *i2 = L(1, SZ(1), IV(-1));
    r = keep(th_index(b, 2, 1, &i2));
    CHECK(same(r, 3, SZ(2, 3, 1), DV(3, 7, 11, 15, 19, 23)));
    ERR(FAILS_NULL(th_index(a, 3, 1, &i0)), TH_ERR_INDEX, "out of range");
    th_tensor *big = L(1, SZ(1), IV(3));
    ERR(FAILS_NULL(th_index(a, 0, 1, &big)), TH_ERR_INDEX,
        "index 3 is out of bounds for dimension 0 with size 3");
    th_tensor *bad[2] = {L(1, SZ(2), IV(0, 1)), L(1, SZ(3), IV(0, 1, 2))};
    ERR(FAILS_NULL(th_index(a, 0, 2, bad)), TH_ERR_INDEX,
        "shape mismatch: indexing tensors could not be broadcast together "
        "with shapes [2], [3]");
    th_tensor *three[3] = {i0, i0, i0};
    ERR(FAILS_NULL(th_index(a, 0, 3, three)), TH_ERR_INDEX, "too many indices");
    th_tensor *fl = T(TH_FLOAT32, 1, SZ(1), DV(0));
    ERR(FAILS_NULL(th_index(a, 0, 1, &fl)), TH_ERR_INDEX, "must be long");
    th_tensor *mk3 = T(TH_BOOL, 1, SZ(2), DV(0, 1));
    ERR(FAILS_NULL(th_index(a, 0, 1, &mk3)), TH_ERR_INDEX,
        "The shape of the mask [2] at index 0 does not match");

    /* index_put_: last write wins / accumulate sums duplicates */
    th_tensor *s = T(TH_FLOAT64, 2, SZ(2, 3), DV(0, 0, 0, 0, 0, 0));
    th_tensor *pi[2] = {L(1, SZ(3), IV(0, 0, 1)), L(1, SZ(3), IV(1, 1, -1))};
    CHECK(th_index_put_(s, 0, 2, pi, T(TH_FLOAT64, 1, SZ(3), DV(1, 2, 3)), 0) ==
          TH_OK);
    CHECK(same(s, 2, SZ(2, 3), DV(0, 2, 0, 0, 0, 3)));
    CHECK(th_index_put_(s, 0, 2, pi, T(TH_FLOAT64, 1, SZ(3), DV(1, 2, 3)), 1) ==
          TH_OK);
    CHECK(same(s, 2, SZ(2, 3), DV(0, 5, 0, 0, 0, 6)));
    /* rows, broadcast value, non-contiguous self, value of another dtype */
    th_tensor *base = T(TH_INT32, 2, SZ(3, 2), DV(0, 0, 0, 0, 0, 0));
    th_tensor *tv = keep(th_transpose(base, 0, 1)); /* 2 x 3 */
    th_tensor *ri = L(1, SZ(1), IV(1));
    CHECK(th_index_put_(tv, 0, 1, &ri, T(TH_FLOAT32, 1, SZ(3), DV(1, 2, 3)), 0) ==
          TH_OK);
    CHECK(same(base, 2, SZ(3, 2), DV(0, 1, 0, 2, 0, 3)));
    CHECK(th_index_put_(tv, 1, 1, &mk, T(TH_INT32, 0, NULL, DV(9)), 0) == TH_OK);
    CHECK(same(base, 2, SZ(3, 2), DV(0, 1, 9, 9, 9, 9)));
    /* half accumulate */
    th_tensor *h = T(TH_FLOAT16, 1, SZ(2), DV(1, 1));
    th_tensor *hi = L(1, SZ(3), IV(0, 0, 0));
    CHECK(th_index_put_(h, 0, 1, &hi, T(TH_FLOAT16, 0, NULL, DV(0.5)), 1) == TH_OK);
    CHECK(same(h, 1, SZ(2), DV(2.5, 1)));
    ERR(FAILS_RC(th_index_put_(s, 0, 2, pi, T(TH_FLOAT64, 1, SZ(2), DV(1, 2)), 0)),
        TH_ERR_RUNTIME, "shape mismatch: value tensor of shape [2]");
    th_tensor *oob[2] = {L(1, SZ(2), IV(0, 2)), L(1, SZ(2), IV(0, 0))};
    ERR(FAILS_RC(th_index_put_(s, 0, 2, oob, T(TH_FLOAT64, 0, NULL, DV(1)), 0)),
        TH_ERR_INDEX, "index 2 is out of bounds for dimension 0 with size 2");
    CHECK(same(s, 2, SZ(2, 3), DV(0, 5, 0, 0, 0, 6)));
    drain();
}

static void test_shape_ops(void) {
    th_tensor *a = T(TH_FLOAT32, 2, SZ(2, 2), DV(1, 2, 3, 4));
    th_tensor *b = T(TH_INT64, 2, SZ(2, 1), DV(5, 6));
    th_tensor *e = T(TH_FLOAT32, 1, SZ(0), DV(0));
    th_tensor *list[3] = {a, e, b};
    th_tensor *r = keep(th_cat(3, list, -1));
    CHECK(r && r->dtype == TH_FLOAT32);
    CHECK(same(r, 2, SZ(2, 3), DV(1, 2, 5, 3, 4, 6)));
    th_tensor *d = T(TH_FLOAT64, 2, SZ(1, 2), DV(7, 8));
    th_tensor *l2[2] = {keep(th_transpose(a, 0, 1)), d};
    r = keep(th_cat(2, l2, 0));
    CHECK(r && r->dtype == TH_FLOAT64);
    CHECK(same(r, 2, SZ(3, 2), DV(1, 3, 2, 4, 7, 8)));
    th_tensor *l3[2] = {e, e};
    CHECK(same(keep(th_cat(2, l3, 0)), 1, SZ(0), DV(0)));
    th_tensor *l4[2] = {a, b};
    ERR(FAILS_NULL(th_cat(2, l4, 0)), TH_ERR_RUNTIME,
        "Sizes of tensors must match except in dimension 0. Expected size 2 "
        "but got size 1 for tensor number 1 in the list.");
    th_tensor *l5[2] = {a, T(TH_FLOAT32, 1, SZ(2), DV(1, 2))};
    ERR(FAILS_NULL(th_cat(2, l5, 0)), TH_ERR_RUNTIME,
        "Tensors must have same number of dimensions: got 2 and 1");
    th_tensor *l6[1] = {T(TH_FLOAT32, 0, NULL, DV(1))};
    ERR(FAILS_NULL(th_cat(1, l6, 0)), TH_ERR_RUNTIME, "zero-dimensional");
    ERR(FAILS_NULL(th_cat(2, l4, 2)), TH_ERR_INDEX, "Dimension out of range");

    /* flip */
    th_tensor *m = T(TH_INT16, 2, SZ(2, 3), DV(1, 2, 3, 4, 5, 6));
    CHECK(same(keep(th_flip(m, 2, (const int[]){0, -1})), 2, SZ(2, 3),
               DV(6, 5, 4, 3, 2, 1)));
    CHECK(same(keep(th_flip(m, 1, (const int[]){1})), 2, SZ(2, 3),
               DV(3, 2, 1, 6, 5, 4)));
    ERR(FAILS_NULL(th_flip(m, 2, (const int[]){0, 0})), TH_ERR_RUNTIME,
        "dim 0 appears multiple times in the list of dims");

    /* roll */
    CHECK(same(keep(th_roll(m, 1, SZ(1), NULL)), 2, SZ(2, 3), DV(6, 1, 2, 3, 4, 5)));
    CHECK(same(keep(th_roll(m, 1, SZ(-1), (const int[]){1})), 2, SZ(2, 3),
               DV(2, 3, 1, 5, 6, 4)));
    CHECK(same(keep(th_roll(m, 2, SZ(1, 4), (const int[]){0, 1})), 2, SZ(2, 3),
               DV(6, 4, 5, 3, 1, 2)));
    CHECK(same(keep(th_roll(keep(th_transpose(m, 0, 1)), 1, SZ(1),
                            (const int[]){0})), 2, SZ(3, 2),
               DV(3, 6, 1, 4, 2, 5)));
    ERR(FAILS_NULL(th_roll(m, 2, SZ(1, 1), NULL)), TH_ERR_RUNTIME,
        "shifts and dimensions must align");

    /* repeat */
    th_tensor *v = T(TH_BFLOAT16, 1, SZ(2), DV(1, 2));
    CHECK(same(keep(th_repeat(v, 2, SZ(2, 2))), 2, SZ(2, 4),
               DV(1, 2, 1, 2, 1, 2, 1, 2)));
    CHECK(same(keep(th_repeat(keep(th_transpose(m, 0, 1)), 2, SZ(1, 2))), 2,
               SZ(3, 4), DV(1, 4, 1, 4, 2, 5, 2, 5, 3, 6, 3, 6)));
    CHECK(same(keep(th_repeat(T(TH_BOOL, 0, NULL, DV(1)), 1, SZ(3))), 1, SZ(3),
               DV(1, 1, 1)));
    CHECK(same(keep(th_repeat(v, 2, SZ(0, 2))), 2, SZ(0, 4), DV(0)));
    ERR(FAILS_NULL(th_repeat(m, 1, SZ(2))), TH_ERR_RUNTIME,
        "can not be smaller than number of dimensions");
    /* 8 dims of size 2 all repeated: 17 split dims, the doubling path */
    th_tensor *nine = keep(th_view(keep(th_arange(0, 256, 1, TH_INT32)), 9,
                                   SZ(2, 2, 2, 2, 2, 2, 2, 2, 1)));
    r = keep(th_repeat(nine, 9, SZ(2, 2, 2, 2, 2, 2, 2, 2, 3)));
    CHECK(r && th_numel(r) == 65536 * 3);
    int ok = r != NULL;
    for (int64_t i = 0; ok && i < th_numel(r); i++) {
        int64_t x, want = 0, rest = i / 3;
        for (int j = 7; j >= 0; j--, rest /= 4)
            want += ((rest % 4) % 2) << (7 - j);
        ok = th_get_int64(r, i, &x) == TH_OK && x == want;
    }
    CHECK(ok);

    /* tril / triu */
    th_tensor *sq = T(TH_FLOAT64, 2, SZ(3, 3), DV(1, 2, 3, 4, 5, 6, 7, 8, 9));
    CHECK(same(keep(th_tril(sq, 0)), 2, SZ(3, 3), DV(1, 0, 0, 4, 5, 0, 7, 8, 9)));
    CHECK(same(keep(th_tril(sq, -1)), 2, SZ(3, 3), DV(0, 0, 0, 4, 0, 0, 7, 8, 0)));
    CHECK(same(keep(th_triu(sq, 1)), 2, SZ(3, 3), DV(0, 2, 3, 0, 0, 6, 0, 0, 0)));
    CHECK(same(keep(th_triu(sq, -1)), 2, SZ(3, 3), DV(1, 2, 3, 4, 5, 6, 0, 8, 9)));
    CHECK(same(keep(th_triu(sq, 100)), 2, SZ(3, 3), DV(0, 0, 0, 0, 0, 0, 0, 0, 0)));
    CHECK(same(keep(th_tril(sq, INT64_MIN)), 2, SZ(3, 3),
               DV(0, 0, 0, 0, 0, 0, 0, 0, 0)));
    th_tensor *bt = keep(th_transpose(T(TH_FLOAT16, 3, SZ(2, 3, 2),
                                        DV(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)),
                                      1, 2)); /* 2 x 2 x 3 */
    CHECK(same(keep(th_triu(bt, 0)), 3, SZ(2, 2, 3),
               DV(1, 3, 5, 0, 4, 6, 7, 9, 11, 0, 10, 12)));
    ERR(FAILS_NULL(th_tril(v, 0)), TH_ERR_RUNTIME, "at least 2 dimensions");
    drain();
}

int main(void) {
    test_index_select();
    test_gather_scatter();
    test_index_ops();
    test_masks();
    test_advanced();
    test_shape_ops();
    return check_report("test_index");
}
