/* Sorting and searching (sort.c) against hand-computed values. */
#include <string.h>
#include "check.h"

static th_tensor *pool[256];
static int npool = 0;
static th_tensor *keep(th_tensor *t) {
    if (t && npool < 256) pool[npool++] = t;
    return t;
}
static void drain(void) {
    while (npool > 0) th_tensor_release(pool[--npool]);
}

static th_tensor *T(int dtype, int ndim, const int64_t *sizes,
                    const double *vals) {
    th_tensor *t = th_empty(ndim, sizes, TH_FLOAT64);
    int64_t n = th_numel(t);
    for (int64_t i = 0; i < n; i++) ((double *)th_data_ptr(t))[i] = vals[i];
    th_tensor *r = th_to_dtype(t, dtype);
    th_tensor_release(t);
    return keep(r);
}


static void test_sort(void) {
    th_tensor *v, *i;
    th_tensor *a = T(TH_FLOAT32, 1, SZ(6), DV(3, NAN, 1, 3, -2, 1));
    CHECK(th_sort(a, 0, 0, 1, &v, &i) == TH_OK);
    CHECK(same(keep(v), 1, SZ(6), DV(-2, 1, 1, 3, 3, NAN)));
    CHECK(same(keep(i), 1, SZ(6), DV(4, 2, 5, 0, 3, 1)) && i->dtype == TH_INT64);
    CHECK(th_sort(a, -1, 1, 1, &v, &i) == TH_OK);
    CHECK(same(keep(v), 1, SZ(6), DV(NAN, 3, 3, 1, 1, -2)));
    CHECK(same(keep(i), 1, SZ(6), DV(1, 0, 3, 2, 5, 4)));
    /* along dim 0 of a transposed int view: m.T = [[5,2],[1,9],[7,1]] */
    th_tensor *m = T(TH_INT16, 2, SZ(2, 3), DV(5, 1, 7, 2, 9, 1));
    th_tensor *mt = keep(th_transpose(m, 0, 1));
    CHECK(th_sort(mt, 0, 0, 0, &v, &i) == TH_OK);
    CHECK(same(keep(v), 2, SZ(3, 2), DV(1, 1, 5, 2, 7, 9)) && v->dtype == TH_INT16);
    CHECK(same(keep(i), 2, SZ(3, 2), DV(1, 2, 0, 0, 2, 1)));
    /* half, bool, 0-d, empty */
    CHECK(th_sort(T(TH_FLOAT16, 1, SZ(3), DV(0.5, -1, 0.25)), 0, 1, 0, &v, &i) ==
          TH_OK);
    CHECK(same(keep(v), 1, SZ(3), DV(0.5, 0.25, -1)) && v->dtype == TH_FLOAT16);
    keep(i);
    CHECK(th_sort(T(TH_BOOL, 1, SZ(4), DV(1, 0, 1, 0)), 0, 0, 1, &v, &i) == TH_OK);
    CHECK(same(keep(v), 1, SZ(4), DV(0, 0, 1, 1)));
    CHECK(same(keep(i), 1, SZ(4), DV(1, 3, 0, 2)));
    CHECK(th_sort(T(TH_FLOAT64, 0, NULL, DV(4)), 0, 0, 0, &v, &i) == TH_OK);
    CHECK(same(keep(v), 0, NULL, DV(4)) && same(keep(i), 0, NULL, DV(0)));
    CHECK(th_sort(T(TH_UINT8, 2, SZ(0, 3), DV(0)), 1, 0, 0, &v, &i) == TH_OK);
    CHECK(same(keep(v), 2, SZ(0, 3), DV(0)) && same(keep(i), 2, SZ(0, 3), DV(0)));
    ERR(th_sort(m, 2, 0, 0, &v, &i) != TH_OK, TH_ERR_INDEX,
        "Dimension out of range");

    /* a long row: exercises the merge passes (and threads over rows) */
    int64_t n = 5000, rows = 40;
    th_tensor *big = keep(th_empty(2, SZ(40, 5000), TH_INT32));
    int32_t *bp = th_data_ptr(big);
    uint32_t s = 12345;
    for (int64_t k = 0; k < n * rows; k++) {
        s = s * 1103515245u + 12345u;
        bp[k] = (int32_t)((s >> 8) % 1000); /* many ties */
    }
    CHECK(th_sort(big, 1, 0, 1, &v, &i) == TH_OK);
    keep(v);
    keep(i);
    const int32_t *vp = th_data_ptr(v);
    const int64_t *ip = th_data_ptr(i);
    int ok = 1;
    for (int64_t r = 0; r < rows && ok; r++)
        for (int64_t k = 0; k < n && ok; k++) {
            int64_t o = r * n + k;
            ok = vp[o] == bp[r * n + ip[o]];
            if (k > 0)
                ok = ok && (vp[o - 1] < vp[o] ||
                            (vp[o - 1] == vp[o] && ip[o - 1] < ip[o]));
        }
    CHECK(ok);
    drain();
}

static void test_topk_kth(void) {
    th_tensor *v, *i;
    th_tensor *a = T(TH_FLOAT64, 2, SZ(2, 4), DV(1, 5, 3, 5, NAN, 0, 2, -1));
    CHECK(th_topk(a, 2, 1, 1, 1, &v, &i) == TH_OK);
    CHECK(same(keep(v), 2, SZ(2, 2), DV(5, 5, NAN, 2)));
    CHECK(same(keep(i), 2, SZ(2, 2), DV(1, 3, 0, 2)));
    CHECK(th_topk(a, 1, 0, 0, 1, &v, &i) == TH_OK);
    CHECK(same(keep(v), 2, SZ(1, 4), DV(1, 0, 2, -1)));
    CHECK(same(keep(i), 2, SZ(1, 4), DV(0, 1, 1, 1)));
    CHECK(th_topk(a, 0, 1, 1, 1, &v, &i) == TH_OK);
    CHECK(same(keep(v), 2, SZ(2, 0), DV(0)));
    keep(i);
    ERR(th_topk(a, 5, 1, 1, 1, &v, &i) != TH_OK, TH_ERR_RUNTIME,
        "selected index k out of range");
    ERR(th_topk(a, -1, 1, 1, 1, &v, &i) != TH_OK, TH_ERR_RUNTIME,
        "selected index k out of range");

    th_tensor *b = T(TH_INT64, 2, SZ(2, 3), DV(4, 1, 4, 7, 7, 2));
    CHECK(th_kthvalue(b, 2, 1, 0, &v, &i) == TH_OK);
    CHECK(same(keep(v), 1, SZ(2), DV(4, 7)) && same(keep(i), 1, SZ(2), DV(0, 0)));
    CHECK(th_kthvalue(b, 1, 0, 1, &v, &i) == TH_OK);
    CHECK(same(keep(v), 2, SZ(1, 3), DV(4, 1, 2)));
    CHECK(same(keep(i), 2, SZ(1, 3), DV(0, 0, 1)));
    CHECK(th_kthvalue(T(TH_BFLOAT16, 0, NULL, DV(3)), 1, 0, 0, &v, &i) == TH_OK);
    CHECK(same(keep(v), 0, NULL, DV(3)) && same(keep(i), 0, NULL, DV(0)));
    ERR(th_kthvalue(b, 4, 1, 0, &v, &i) != TH_OK, TH_ERR_RUNTIME,
        "kthvalue(): selected number k out of range for dimension 1");
    ERR(th_kthvalue(T(TH_FLOAT32, 1, SZ(0), DV(0)), 1, 0, 0, &v, &i) != TH_OK,
        TH_ERR_INDEX, "to have non-zero size");
    drain();
}

/* topk/kthvalue select instead of sorting: they must still agree with
 * the stable sort exactly (values and indices), ties and NaNs included. */
static void test_select_matches_sort(void) {
    int64_t rows = 6, n = 3000;
    th_tensor *a = keep(th_empty(2, SZ(6, 3000), TH_FLOAT64));
    double *ap = th_data_ptr(a);
    uint32_t s = 777;
    for (int64_t k = 0; k < rows * n; k++) {
        s = s * 1103515245u + 12345u;
        ap[k] = (s >> 9) % 50 == 0 ? NAN : (double)((s >> 8) % 300);
    }
    int ok = 1;
    for (int desc = 0; desc < 2; desc++) {
        th_tensor *sv, *si, *tv, *ti, *kv, *ki;
        CHECK(th_sort(a, 1, desc, 1, &sv, &si) == TH_OK);
        CHECK(th_topk(a, 41, 1, desc, 1, &tv, &ti) == TH_OK);
        keep(sv); keep(si); keep(tv); keep(ti);
        for (int64_t r = 0; r < rows && ok; r++)
            for (int64_t k = 0; k < 41 && ok; k++) {
                double x, y;
                int64_t i1, i2;
                th_get_double(sv, r * n + k, &x);
                th_get_double(tv, r * 41 + k, &y);
                th_get_int64(si, r * n + k, &i1);
                th_get_int64(ti, r * 41 + k, &i2);
                ok = (x == y || (isnan(x) && isnan(y))) && i1 == i2;
            }
        if (!desc)
            for (int64_t k = 1; k <= n && ok; k += 499) {
                CHECK(th_kthvalue(a, k, 1, 0, &kv, &ki) == TH_OK);
                keep(kv); keep(ki);
                for (int64_t r = 0; r < rows && ok; r++) {
                    int64_t i1, i2;
                    th_get_int64(si, r * n + k - 1, &i1);
                    th_get_int64(ki, r, &i2);
                    ok = i1 == i2;
                }
            }
    }
    CHECK(ok);
    drain();
}

static void test_unique(void) {
    th_tensor *v, *inv, *cnt;
    th_tensor *a = T(TH_INT32, 2, SZ(2, 3), DV(3, 1, 3, 2, 1, 3));
    CHECK(th_unique(keep(th_transpose(a, 0, 1)), 1, &v, &inv, &cnt) == TH_OK);
    /* transposed flat order: 3 2 1 1 3 3 */
    CHECK(same(keep(v), 1, SZ(3), DV(1, 2, 3)) && v->dtype == TH_INT32);
    CHECK(same(keep(inv), 2, SZ(3, 2), DV(2, 1, 0, 0, 2, 2)));
    CHECK(same(keep(cnt), 1, SZ(3), DV(2, 1, 3)));
    CHECK(th_unique(T(TH_FLOAT16, 1, SZ(5), DV(NAN, 0.5, NAN, 0.5, -1)), 1, &v,
                    NULL, &cnt) == TH_OK);
    CHECK(same(keep(v), 1, SZ(4), DV(-1, 0.5, NAN, NAN)) && v->dtype == TH_FLOAT16);
    CHECK(same(keep(cnt), 1, SZ(4), DV(1, 2, 1, 1)));
    CHECK(th_unique(T(TH_FLOAT64, 1, SZ(0), DV(0)), 1, &v, &inv, NULL) == TH_OK);
    CHECK(same(keep(v), 1, SZ(0), DV(0)) && same(keep(inv), 1, SZ(0), DV(0)));
    CHECK(th_unique(T(TH_BOOL, 0, NULL, DV(1)), 1, &v, &inv, &cnt) == TH_OK);
    CHECK(same(keep(v), 1, SZ(1), DV(1)) && same(keep(inv), 0, NULL, DV(0)));
    keep(cnt);
    drain();
}

static void test_searchsorted(void) {
    th_tensor *seq = T(TH_FLOAT32, 1, SZ(5), DV(1, 3, 3, 5, 7));
    th_tensor *vals = T(TH_INT64, 2, SZ(2, 3), DV(0, 3, 4, 7, 8, 3));
    th_tensor *r = keep(th_searchsorted(seq, vals, 0, 0));
    CHECK(same(r, 2, SZ(2, 3), DV(0, 1, 3, 4, 5, 1)) && r->dtype == TH_INT64);
    r = keep(th_searchsorted(seq, vals, 1, 1));
    CHECK(same(r, 2, SZ(2, 3), DV(0, 3, 3, 5, 5, 3)) && r->dtype == TH_INT32);
    r = keep(th_searchsorted(seq, T(TH_FLOAT64, 0, NULL, DV(NAN)), 0, 0));
    CHECK(same(r, 0, NULL, DV(5)));
    /* batched boundaries, transposed values */
    th_tensor *bseq = T(TH_INT16, 2, SZ(2, 3), DV(1, 2, 3, 10, 20, 30));
    th_tensor *bv = keep(th_transpose(T(TH_INT16, 2, SZ(2, 2), DV(2, 25, 0, 40)),
                                      0, 1)); /* [[2,0],[25,40]] */
    r = keep(th_searchsorted(bseq, bv, 0, 0));
    CHECK(same(r, 2, SZ(2, 2), DV(1, 0, 2, 3)));
    ERR(th_searchsorted(bseq, T(TH_INT16, 2, SZ(3, 1), DV(1, 2, 3)), 0, 0) == NULL,
        TH_ERR_RUNTIME, "boundaries tensor should be 1 dimension or the first "
        "N-1 dimensions");
    ERR(th_searchsorted(T(TH_INT16, 0, NULL, DV(1)), bv, 0, 0) == NULL,
        TH_ERR_RUNTIME, "positive dimension");
    drain();
}

static void test_counts(void) {
    th_tensor *x = T(TH_UINT8, 1, SZ(5), DV(1, 3, 1, 0, 1));
    th_tensor *r = keep(th_bincount(x, NULL, 0));
    CHECK(same(r, 1, SZ(4), DV(1, 3, 0, 1)) && r->dtype == TH_INT64);
    r = keep(th_bincount(x, NULL, 6));
    CHECK(same(r, 1, SZ(6), DV(1, 3, 0, 1, 0, 0)));
    r = keep(th_bincount(x, T(TH_FLOAT32, 1, SZ(5), DV(0.5, 1, 0.25, 2, 1)), 0));
    CHECK(same(r, 1, SZ(4), DV(2, 1.75, 0, 1)) && r->dtype == TH_FLOAT32);
    r = keep(th_bincount(x, T(TH_INT32, 1, SZ(5), DV(1, 2, 3, 4, 5)), 0));
    CHECK(same(r, 1, SZ(4), DV(4, 9, 0, 2)) && r->dtype == TH_FLOAT64);
    r = keep(th_bincount(T(TH_INT64, 1, SZ(0), DV(0)), NULL, 2));
    CHECK(same(r, 1, SZ(2), DV(0, 0)));
    ERR(th_bincount(T(TH_INT32, 1, SZ(2), DV(1, -1)), NULL, 0) == NULL,
        TH_ERR_RUNTIME, "non-negative integral");
    ERR(th_bincount(T(TH_INT32, 2, SZ(1, 1), DV(1)), NULL, 0) == NULL,
        TH_ERR_RUNTIME, "1-d non-negative");
    ERR(th_bincount(T(TH_FLOAT32, 1, SZ(1), DV(1)), NULL, 0) == NULL,
        TH_ERR_TYPE, "integral");
    ERR(th_bincount(x, T(TH_FLOAT32, 1, SZ(2), DV(1, 1)), 0) == NULL,
        TH_ERR_RUNTIME, "same length");
    ERR(th_bincount(x, NULL, -1) == NULL, TH_ERR_RUNTIME, "minlength");

    th_tensor *h = T(TH_FLOAT32, 1, SZ(7), DV(0, 1, 2, 2, 3, 4, NAN));
    th_tensor *h6 = keep(th_narrow(h, 0, 0, 6));
    r = keep(th_histc(h6, 4, 0, 0)); /* range from data: [0, 4] */
    CHECK(same(r, 1, SZ(4), DV(1, 1, 2, 2)) && r->dtype == TH_FLOAT32);
    r = keep(th_histc(h, 2, 1, 3)); /* 0, 4, NaN ignored; 3 in last bin */
    CHECK(same(r, 1, SZ(2), DV(1, 3)));
    r = keep(th_histc(T(TH_FLOAT64, 1, SZ(2), DV(5, 5)), 2, 0, 0)); /* [4, 6] */
    CHECK(same(r, 1, SZ(2), DV(0, 2)) && r->dtype == TH_FLOAT64);
    r = keep(th_histc(T(TH_FLOAT16, 2, SZ(1, 2), DV(0.5, 1)), 2, 0, 1));
    CHECK(same(r, 1, SZ(2), DV(0, 2)) && r->dtype == TH_FLOAT16);
    ERR(th_histc(T(TH_FLOAT32, 1, SZ(2), DV(1, NAN)), 3, 0, 0) == NULL,
        TH_ERR_RUNTIME, "is not finite");
    ERR(th_histc(h, 2, 3, 1) == NULL, TH_ERR_RUNTIME, "max must be larger");
    ERR(th_histc(h, 0, 0, 1) == NULL, TH_ERR_RUNTIME, "bins must be > 0");
    ERR(th_histc(T(TH_INT32, 1, SZ(1), DV(1)), 2, 0, 1) == NULL, TH_ERR_TYPE,
        "floating point");
    drain();
}

int main(void) {
    test_sort();
    test_topk_kth();
    test_select_matches_sort();
    test_unique();
    test_searchsorted();
    test_counts();
    return check_report("test_sort");
}
