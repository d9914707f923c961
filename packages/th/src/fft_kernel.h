/* libTH's FFT loops for one real type: fft.c includes this file once with
 * REAL float (SUF f32, 16 lanes) and once with REAL double (SUF f64, 8
 * lanes), 64 bytes of lanes either way.  See fft_internal.h for the
 * layout. */
#define FFT_CAT2(a, b) a##_##b
#define FFT_CAT(a, b) FFT_CAT2(a, b)
#define FN(name) FFT_CAT(name, SUF)
#define L LANES

/* ---- the Stockham stages: x (n lanes) -> y, span ns -> ns * radix ---- */
/* One vector holds an element's L lanes; buffers are 64-byte aligned. */
typedef REAL FN(vec) __attribute__((vector_size(64), may_alias));
#define V FN(vec)

static TH_CLONES void FN(stage2)(int64_t n, const fft_stage *s, int inv,
                                 const REAL *xr_, const REAL *xi_, REAL *yr_, REAL *yi_) {
    const V *restrict xr = (const V *)xr_, *restrict xi = (const V *)xi_;
    V *restrict yr = (V *)yr_, *restrict yi = (V *)yi_;
    const int64_t ns = s->ns, m = n / 2;
    const REAL sg = inv ? -1 : 1;
    for (int64_t b = 0; b < m; b += ns)
        for (int64_t k = 0; k < ns; k++) {
            const int64_t j = b + k, o = 2 * b + k;
            const REAL wr = (REAL)s->tw[2 * k], wi = sg * (REAL)s->tw[2 * k + 1];
            V ar = xr[j], ai = xi[j], cr = xr[j + m], ci = xi[j + m];
            V br = cr * wr - ci * wi, bi = cr * wi + ci * wr;
            yr[o] = ar + br;
            yi[o] = ai + bi;
            yr[o + ns] = ar - br;
            yi[o + ns] = ai - bi;
        }
}

static TH_CLONES void FN(stage4)(int64_t n, const fft_stage *s, int inv,
                                 const REAL *xr_, const REAL *xi_, REAL *yr_, REAL *yi_) {
    const V *restrict xr = (const V *)xr_, *restrict xi = (const V *)xi_;
    V *restrict yr = (V *)yr_, *restrict yi = (V *)yi_;
    const int64_t ns = s->ns, m = n / 4;
    const REAL sg = inv ? -1 : 1;
    for (int64_t b = 0; b < m; b += ns)
        for (int64_t k = 0; k < ns; k++) {
            const int64_t j = b + k, o = 4 * b + k;
            const double *t = s->tw + 6 * k;
            const REAL w1r = (REAL)t[0], w1i = sg * (REAL)t[1];
            const REAL w2r = (REAL)t[2], w2i = sg * (REAL)t[3];
            const REAL w3r = (REAL)t[4], w3i = sg * (REAL)t[5];
            V a0r = xr[j], a0i = xi[j];
            V x1r = xr[j + m], x1i = xi[j + m];
            V x2r = xr[j + 2 * m], x2i = xi[j + 2 * m];
            V x3r = xr[j + 3 * m], x3i = xi[j + 3 * m];
            V a1r = x1r * w1r - x1i * w1i, a1i = x1r * w1i + x1i * w1r;
            V a2r = x2r * w2r - x2i * w2i, a2i = x2r * w2i + x2i * w2r;
            V a3r = x3r * w3r - x3i * w3i, a3i = x3r * w3i + x3i * w3r;
            V t0r = a0r + a2r, t0i = a0i + a2i, t1r = a0r - a2r, t1i = a0i - a2i;
            V t2r = a1r + a3r, t2i = a1i + a3i, t3r = a1r - a3r, t3i = a1i - a3i;
            yr[o] = t0r + t2r;
            yi[o] = t0i + t2i;
            yr[o + 2 * ns] = t0r - t2r;
            yi[o + 2 * ns] = t0i - t2i;
            /* forward: y1 = t1 - i t3, y3 = t1 + i t3 (inverse: swapped) */
            yr[o + ns] = t1r + sg * t3i;
            yi[o + ns] = t1i - sg * t3r;
            yr[o + 3 * ns] = t1r - sg * t3i;
            yi[o + 3 * ns] = t1i + sg * t3r;
        }
}

/* Any odd radix p: y_q = A_q -+ i B_q with A_q = a_0 + sum_r (a_r +
 * a_{p-r}) cos(2 pi r q / p), B_q = sum_r (a_r - a_{p-r}) sin(...). */
static TH_CLONES void FN(stage_odd)(int64_t n, const fft_stage *s, int inv,
                                    const REAL *xr_, const REAL *xi_, REAL *yr_, REAL *yi_) {
    const V *restrict xr = (const V *)xr_, *restrict xi = (const V *)xi_;
    V *restrict yr = (V *)yr_, *restrict yi = (V *)yi_;
    const int p = s->radix, h = (p - 1) / 2;
    const int64_t ns = s->ns, m = n / p;
    const REAL sg = inv ? -1 : 1;
    const double *cs = s->coef, *sn = s->coef + h * h;
    V a0r, a0i, sr[FFT_MAX_RADIX / 2 + 1], si[FFT_MAX_RADIX / 2 + 1];
    V dr[FFT_MAX_RADIX / 2 + 1], di[FFT_MAX_RADIX / 2 + 1];
    for (int64_t b = 0; b < m; b += ns)
        for (int64_t k = 0; k < ns; k++) {
            const int64_t j = b + k, o = p * b + k;
            const double *t = s->tw + 2 * k * (p - 1);
            a0r = xr[j];
            a0i = xi[j];
            V yr0 = a0r, yi0 = a0i;
            for (int r = 1; r <= h; r++) { /* twiddled a_r and a_{p-r} */
                const REAL ur = (REAL)t[2 * (r - 1)], ui = sg * (REAL)t[2 * (r - 1) + 1];
                const REAL vr = (REAL)t[2 * (p - r - 1)], vi = sg * (REAL)t[2 * (p - r - 1) + 1];
                V pr = xr[j + r * m], pi = xi[j + r * m];
                V qr = xr[j + (p - r) * m], qi = xi[j + (p - r) * m];
                V ar = pr * ur - pi * ui, ai = pr * ui + pi * ur;
                V cr = qr * vr - qi * vi, ci = qr * vi + qi * vr;
                sr[r] = ar + cr;
                si[r] = ai + ci;
                dr[r] = ar - cr;
                di[r] = ai - ci;
                yr0 += sr[r];
                yi0 += si[r];
            }
            yr[o] = yr0;
            yi[o] = yi0;
            for (int q = 1; q <= h; q++) {
                V Ar = a0r, Ai = a0i, Br = a0r * 0, Bi = a0r * 0;
                for (int r = 1; r <= h; r++) {
                    const REAL c = (REAL)cs[(q - 1) * h + r - 1];
                    const REAL z = (REAL)sn[(q - 1) * h + r - 1];
                    Ar += sr[r] * c;
                    Ai += si[r] * c;
                    Br += dr[r] * z;
                    Bi += di[r] * z;
                }
                yr[o + q * ns] = Ar + sg * Bi;
                yi[o + q * ns] = Ai - sg * Br;
                yr[o + (p - q) * ns] = Ar - sg * Bi;
                yi[o + (p - q) * ns] = Ai + sg * Br;
            }
        }
}
/* The stages of p over the lanes in (*xr, *xi), using (*yr, *yi) as the
 * other buffer; on return (*xr, *xi) holds the result. */
static void FN(lanes_run)(const fft_lanes *p, int inv, REAL **xr, REAL **xi,
                          REAL **yr, REAL **yi) {
    for (int i = 0; i < p->nstages; i++) {
        const fft_stage *s = &p->st[i];
        if (s->radix == 4)
            FN(stage4)(p->n, s, inv, *xr, *xi, *yr, *yi);
        else if (s->radix == 2)
            FN(stage2)(p->n, s, inv, *xr, *xi, *yr, *yi);
        else
            FN(stage_odd)(p->n, s, inv, *xr, *xi, *yr, *yi);
        REAL *t = *xr; *xr = *yr; *yr = t;
        t = *xi; *xi = *yi; *yi = t;
    }
}

static REAL *FN(lane_buffers)(fft_job *job, int64_t n) {
    REAL *mem = th__alloc(4 * n * L * (int64_t)sizeof(REAL)); /* sizes checked by the plan */
    if (!mem)
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
    return mem;
}

/* ---- moving lines in and out of the lanes --------------------------- */
typedef MASKINT FN(ivec) __attribute__((vector_size(64)));
#define IV FN(ivec)

#if LANES == 16
#define MASK(F, a) ((IV)FFT_M16(F, a))
#else
#define MASK(F, a) ((IV)FFT_M8(F, a))
#endif
/* the transpose's round at distance d, the (re, im) pairs apart and back,
 * lanes reversed */
#define TLO(c, d) (((c) & (d)) ? L + (c) - (d) : (c))
#define THI(c, d) (((c) & (d)) ? L + (c) : (c) + (d))
#define EVEN(c, a) (2 * (c))
#define ODD(c, a) (2 * (c) + 1)
#define JLO(c, a) ((c) % 2 ? L + (c) / 2 : (c) / 2)
#define JHI(c, a) ((c) % 2 ? L + L / 2 + (c) / 2 : L / 2 + (c) / 2)
#define REV(c, a) (L - 1 - (c))
#define REVERSE(v) __builtin_shuffle((v), MASK(REV, 0))

/* unaligned moves (macros: 64-byte vectors are not passed to functions) */
#define LOADU(v, p) memcpy(&(v), (p), sizeof(V))
#define STOREU(p, v) memcpy((p), &(v), sizeof(V))

/* An L x L tile transposed in place: at each distance d the off-diagonal
 * d x d blocks of every 2d x 2d block swap. */
#define ROUND(d)                                                    \
    for (int i = 0; i < L; i++)                                     \
        if (!(i & (d))) {                                           \
            V a = r[i], b = r[i + (d)];                             \
            r[i] = __builtin_shuffle(a, b, MASK(TLO, d));           \
            r[i + (d)] = __builtin_shuffle(a, b, MASK(THI, d));     \
        }
static inline void FN(transpose)(V *r) {
#if LANES == 16
    ROUND(8)
#endif
    ROUND(4)
    ROUND(2)
    ROUND(1)
}
#undef ROUND

/* L complex values at p (pairs) as their real and imaginary parts */
static inline void FN(load_pairs)(const REAL *p, V *re, V *im) {
    V a, b;
    LOADU(a, p);
    LOADU(b, p + L);
    *re = __builtin_shuffle(a, b, MASK(EVEN, 0));
    *im = __builtin_shuffle(a, b, MASK(ODD, 0));
}

static inline void FN(store_pairs)(REAL *p, const V *re, const V *im) {
    V a = __builtin_shuffle(*re, *im, MASK(JLO, 0)), b = __builtin_shuffle(*re, *im, MASK(JHI, 0));
    STOREU(p, a);
    STOREU(p + L, b);
}

/* The lanes of n elements from L rows: complex pairs at re[l] (im NULL),
 * or real parts at re[l] and imaginary parts at im[l]; n a multiple of L. */
static inline void FN(rows_to_lanes)(const REAL *const *re, const REAL *const *im, int64_t n,
                                     REAL *xr, REAL *xi) {
    for (int64_t jt = 0; jt < n; jt += L) {
        V r[L], i[L];
        for (int l = 0; l < L; l++) {
            if (im) {
                LOADU(r[l], re[l] + jt);
                LOADU(i[l], im[l] + jt);
            } else {
                FN(load_pairs)(re[l] + 2 * jt, &r[l], &i[l]);
            }
        }
        FN(transpose)(r);
        FN(transpose)(i);
        for (int q = 0; q < L; q++) {
            ((V *)xr)[jt + q] = r[q];
            ((V *)xi)[jt + q] = i[q];
        }
    }
}

/* ---- short transforms: L lines of the batch side by side ------------- */
static TH_CLONES void FN(lanes_range)(int64_t begin, int64_t end, void *ctx) {
    fft_job *job = ctx;
    const fft_lanes *p = &job->plan->whole;
    const int64_t n = p->n, is = job->in_step, ii = job->in_imoff;
    const int64_t os = job->out_step, oi = job->out_imoff;
    const REAL sc = (REAL)job->scale;
    REAL *mem = FN(lane_buffers)(job, n);
    if (!mem)
        return;
    for (int64_t blk = begin; blk < end; blk++) {
        REAL *xr = mem, *xi = mem + n * L, *yr = mem + 2 * n * L, *yi = mem + 3 * n * L;
        const int64_t b0 = blk * L;
        const int cnt = (int)TH_MIN((int64_t)L, job->B - b0);
        const REAL *src[L];
        REAL *dst[L];
        for (int l = 0; l < cnt; l++) {
            int64_t io, oo;
            fft__line(job, b0 + l, &io, &oo);
            src[l] = (const REAL *)job->in + io;
            dst[l] = (REAL *)job->out + oo;
        }
        if (cnt == L && is == 2 && ii == 1 && n % L == 0) { /* tiles of pairs */
            FN(rows_to_lanes)(src, NULL, n, xr, xi);
        } else {
            for (int l = 0; l < L; l++)
                for (int64_t j = 0; j < n; j++) {
                    xr[j * L + l] = l < cnt ? src[l][j * is] : 0;
                    xi[j * L + l] = l < cnt && ii >= 0 ? src[l][j * is + ii] : 0;
                }
        }
        FN(lanes_run)(p, job->inverse, &xr, &xi, &yr, &yi);
        if (cnt == L && os == 2 && oi == 1 && n % L == 0) {
            for (int64_t jt = 0; jt < n; jt += L) {
                V re[L], im[L];
                for (int q = 0; q < L; q++) {
                    re[q] = ((V *)xr)[jt + q] * sc;
                    im[q] = ((V *)xi)[jt + q] * sc;
                }
                FN(transpose)(re);
                FN(transpose)(im);
                for (int l = 0; l < L; l++)
                    FN(store_pairs)(dst[l] + 2 * jt, &re[l], &im[l]);
            }
        } else {
            for (int l = 0; l < cnt; l++)
                for (int64_t j = 0; j < n; j++) {
                    dst[l][j * os] = sc * xr[j * L + l];
                    dst[l][j * os + oi] = sc * xi[j * L + l];
                }
        }
    }
    th__free(mem);
}

/* ---- long transforms: n = n1 x n2, j = j1 n2 + j2, k = k1 + n1 k2 ---- */
/* Columns: the length-n1 transforms over j1 for each j2, times the
 * twiddle W_n^{k1 j2}, into the middle buffer (k1, j2). */
static TH_CLONES void FN(columns_range)(int64_t begin, int64_t end, void *ctx) {
    fft_job *job = ctx;
    const fft_plan *pl = job->plan;
    const int64_t n1 = pl->n1, n2 = pl->n2, n = pl->n;
    const int64_t is = job->in_step, ii = job->in_imoff;
    const int inv = job->inverse;
    REAL *mem = FN(lane_buffers)(job, n1);
    if (!mem)
        return;
    int64_t io, oo;
    fft__line(job, job->line, &io, &oo);
    const REAL *src = (const REAL *)job->in + io;
    REAL *wr = (REAL *)job->work, *wi = wr + n;
    const V *ltr = job->lane_tw, *lti = ltr + n1;
    for (int64_t c = begin; c < end; c++) {
        REAL *xr = mem, *xi = mem + n1 * L, *yr = mem + 2 * n1 * L, *yi = mem + 3 * n1 * L;
        const int64_t j20 = c * L;
        const int cnt = (int)TH_MIN((int64_t)L, n2 - j20);
        for (int64_t j1 = 0; j1 < n1; j1++) {
            const REAL *s = src + (j1 * n2 + j20) * is;
            if (cnt == L && is == 2 && ii == 1) {
                FN(load_pairs)(s, (V *)xr + j1, (V *)xi + j1);
                continue;
            }
            for (int l = 0; l < L; l++) {
                xr[j1 * L + l] = l < cnt ? s[l * is] : 0;
                xi[j1 * L + l] = l < cnt && ii >= 0 ? s[l * is + ii] : 0;
            }
        }
        FN(lanes_run)(&pl->col, inv, &xr, &xi, &yr, &yi);
        for (int64_t k1 = 0; k1 < n1; k1++) {
            double br, bi;
            fft__root(&pl->roots, k1 * j20, inv, &br, &bi);
            const REAL cr = (REAL)br, ci = (REAL)bi;
            V tr = ltr[k1], ti = lti[k1];
            V wre = tr * cr - ti * ci, wim = ti * cr + tr * ci;
            V ar = ((V *)xr)[k1], ai = ((V *)xi)[k1];
            V vr = ar * wre - ai * wim, vi = ar * wim + ai * wre;
            REAL *dr = wr + k1 * n2 + j20, *di = wi + k1 * n2 + j20;
            if (cnt == L) {
                STOREU(dr, vr);
                STOREU(di, vi);
            } else {
                for (int l = 0; l < cnt; l++) {
                    dr[l] = vr[l];
                    di[l] = vi[l];
                }
            }
        }
    }
    th__free(mem);
}

/* Rows: the length-n2 transforms over j2 for each k1, to k1 + n1 k2. */
static TH_CLONES void FN(rows_range)(int64_t begin, int64_t end, void *ctx) {
    fft_job *job = ctx;
    const fft_plan *pl = job->plan;
    const int64_t n1 = pl->n1, n2 = pl->n2, n = pl->n;
    const int64_t os = job->out_step, oi = job->out_imoff;
    const REAL sc = (REAL)job->scale;
    REAL *mem = FN(lane_buffers)(job, n2);
    if (!mem)
        return;
    int64_t io, oo;
    fft__line(job, job->line, &io, &oo);
    REAL *dst = (REAL *)job->out + oo;
    const REAL *wr = (const REAL *)job->work, *wi = wr + n;
    for (int64_t r = begin; r < end; r++) {
        REAL *xr = mem, *xi = mem + n2 * L, *yr = mem + 2 * n2 * L, *yi = mem + 3 * n2 * L;
        const int64_t k10 = r * L;
        const int cnt = (int)TH_MIN((int64_t)L, n1 - k10);
        if (cnt == L && n2 % L == 0) {
            const REAL *re[L], *im[L];
            for (int l = 0; l < L; l++) {
                re[l] = wr + (k10 + l) * n2;
                im[l] = wi + (k10 + l) * n2;
            }
            FN(rows_to_lanes)(re, im, n2, xr, xi);
        } else {
            for (int l = 0; l < L; l++) {
                const REAL *sr = wr + (k10 + l) * n2, *si = wi + (k10 + l) * n2;
                for (int64_t j2 = 0; j2 < n2; j2++) {
                    xr[j2 * L + l] = l < cnt ? sr[j2] : 0;
                    xi[j2 * L + l] = l < cnt ? si[j2] : 0;
                }
            }
        }
        FN(lanes_run)(&pl->row, job->inverse, &xr, &xi, &yr, &yi);
        for (int64_t k2 = 0; k2 < n2; k2++) {
            REAL *d = dst + (k10 + n1 * k2) * os;
            V vr = ((V *)xr)[k2] * sc, vi = ((V *)xi)[k2] * sc;
            if (cnt == L && os == 2 && oi == 1) {
                FN(store_pairs)(d, &vr, &vi);
                continue;
            }
            for (int l = 0; l < cnt; l++) {
                d[l * os] = vr[l];
                d[l * os + oi] = vi[l];
            }
        }
    }
    th__free(mem);
}

/* Whole long lines, one after another on each thread, each with its own
 * middle buffer (a batch of them: no region per step). */
static void FN(lines_range)(int64_t begin, int64_t end, void *ctx) {
    fft_job *job = ctx, mine = *job;
    const fft_plan *pl = job->plan;
    mine.work = th__alloc(2 * pl->n * (int64_t)sizeof(REAL));
    mine.failed = !mine.work;
    for (int64_t b = begin; b < end && !mine.failed; b++) {
        mine.line = b;
        FN(columns_range)(0, (pl->n2 + L - 1) / L, &mine);
        FN(rows_range)(0, (pl->n1 + L - 1) / L, &mine);
    }
    if (mine.failed)
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
    th__free(mine.work);
}

/* W_n^{k1 l} for the columns' lanes, in REAL: (n1, L) real, then imag. */
static void *FN(lane_twiddles)(const fft_plan *pl, int inv) {
    REAL *t = th__alloc(2 * pl->n1 * L * (int64_t)sizeof(REAL));
    if (!t)
        return NULL;
    for (int64_t k1 = 0; k1 < pl->n1; k1++)
        for (int l = 0; l < L; l++) {
            double re, im;
            fft__root(&pl->roots, (k1 * l) % pl->n, inv, &re, &im);
            t[k1 * L + l] = (REAL)re;
            t[pl->n1 * L + k1 * L + l] = (REAL)im;
        }
    return t;
}

/* ---- real transforms of even length N = 2M through one of length M ---- */
/* w^k = e^{-2 pi i k / N} for k < hf->count: real parts, then imaginary. */
static void FN(half_table_range)(int64_t begin, int64_t end, void *ctx) {
    fft_half *hf = ctx;
    REAL *t = hf->table;
    for (int64_t k = begin; k < end; k++) {
        double re, im;
        fft__root(&hf->roots, k % hf->roots.n, 0, &re, &im);
        t[k] = (REAL)re;
        t[hf->count + k] = (REAL)im;
    }
}

/* x[2j] + i x[2j+1] transformed is Z; the spectrum of x is
 * X[k] = E[k] + w^k O[k] (w = e^{-2 pi i / N}) with E = (Z[k] +
 * conj Z[M-k]) / 2 and O = (Z[k] - conj Z[M-k]) / 2i.  In place over the
 * output lines (Z in k < M, X in k <= M), pairs (k, M - k) for k in
 * chunks of FFT_HALF_CHUNK per item. */
static inline void FN(unpack_pair)(REAL *z, int64_t k, int64_t kk, int64_t os, int64_t oi,
                                   REAL wr, REAL wi) {
    REAL ar = z[k * os], ai = z[k * os + oi];
    REAL br = z[kk * os], bi = -z[kk * os + oi];
    REAL er = (ar + br) / 2, ei = (ai + bi) / 2;
    REAL Or = (ai - bi) / 2, Oi = -(ar - br) / 2;
    REAL tr = wr * Or - wi * Oi, ti = wr * Oi + wi * Or;
    z[k * os] = er + tr;
    z[k * os + oi] = ei + ti;
    if (kk != k) {
        z[kk * os] = er - tr;
        z[kk * os + oi] = -(ei - ti);
    }
}

static TH_CLONES void FN(r2c_unpack_range)(int64_t begin, int64_t end, void *ctx) {
    const fft_half *hf = ctx;
    const fft_job *job = hf->job;
    const int64_t M = hf->m, P = M / 2 + 1, C = (P + FFT_HALF_CHUNK - 1) / FFT_HALF_CHUNK;
    const int64_t os = job->out_step, oi = job->out_imoff;
    const REAL *twr = hf->table, *twi = twr + hf->count;
    for (int64_t it = begin; it < end; it++) {
        const int64_t b = it / C, k0 = it % C * FFT_HALF_CHUNK;
        const int64_t k1 = TH_MIN(P, k0 + FFT_HALF_CHUNK);
        int64_t io, oo;
        fft__line(job, b, &io, &oo);
        REAL *z = (REAL *)job->out + oo;
        int64_t k = k0;
        if (k == 0) {
            REAL r = z[0], i = z[oi];
            z[0] = r + i;
            z[oi] = 0;
            z[M * os] = r - i;
            z[M * os + oi] = 0;
            k = 1;
        }
        /* L pairs at once while this block's and the next one's indices
         * stay clear of each other's mirror images */
        for (; os == 2 && oi == 1 && k + L <= k1 && 2 * (k + 2 * L) <= M; k += L) {
            const int64_t m0 = M - k - L + 1;
            V ar, ai, br, bi;
            FN(load_pairs)(z + 2 * k, &ar, &ai);
            FN(load_pairs)(z + 2 * m0, &br, &bi);
            br = REVERSE(br);
            bi = -REVERSE(bi);
            V er = (ar + br) / 2, ei = (ai + bi) / 2;
            V Or = (ai - bi) / 2, Oi = (br - ar) / 2;
            V wr, wi;
            LOADU(wr, twr + k);
            LOADU(wi, twi + k);
            V tr = wr * Or - wi * Oi, ti = wr * Oi + wi * Or;
            V xr = er + tr, xi = ei + ti, yr = REVERSE(er - tr), yi = REVERSE(ti - ei);
            FN(store_pairs)(z + 2 * k, &xr, &xi);
            FN(store_pairs)(z + 2 * m0, &yr, &yi);
        }
        for (; k < k1; k++)
            FN(unpack_pair)(z, k, M - k, os, oi, twr[k], twi[k]);
    }
}

/* The inverse: Z[k] = (X[k] + conj X[M-k]) + i (X[k] - conj X[M-k])
 * conj(w^k) from the input lines' X[0..M] into the output lines (read as
 * M complex values), ready for an inverse transform of length M. */
static inline void FN(pack_pair)(const REAL *x, REAL *z, int64_t k, int64_t kk, int64_t is,
                                 int64_t ii, int64_t os, int64_t oi, REAL wr, REAL wi) {
    REAL ar = x[k * is], ai = x[k * is + ii];
    REAL br = x[kk * is], bi = -x[kk * is + ii];
    REAL sr = ar + br, si = ai + bi, dr = ar - br, di = ai - bi;
    /* u = d conj(w); Z[k] = s + i u; Z[M-k] = conj(s) + i conj(u) */
    REAL ur = dr * wr + di * wi, ui = di * wr - dr * wi;
    z[k * os] = sr - ui;
    z[k * os + oi] = si + ur;
    if (kk != k) {
        z[kk * os] = sr + ui;
        z[kk * os + oi] = -si + ur;
    }
}

static TH_CLONES void FN(c2r_pack_range)(int64_t begin, int64_t end, void *ctx) {
    const fft_half *hf = ctx;
    const fft_job *job = hf->job;
    const int64_t M = hf->m, P = M / 2 + 1, C = (P + FFT_HALF_CHUNK - 1) / FFT_HALF_CHUNK;
    const int64_t is = job->in_step, ii = job->in_imoff, os = job->out_step, oi = job->out_imoff;
    const REAL *twr = hf->table, *twi = twr + hf->count;
    for (int64_t it = begin; it < end; it++) {
        const int64_t b = it / C, k0 = it % C * FFT_HALF_CHUNK;
        const int64_t k1 = TH_MIN(P, k0 + FFT_HALF_CHUNK);
        int64_t io, oo;
        fft__line(job, b, &io, &oo);
        const REAL *x = (const REAL *)job->in + io;
        REAL *z = (REAL *)job->out + oo;
        int64_t k = k0;
        if (k == 0) {
            REAL a = x[0], c = x[M * is];
            z[0] = a + c;
            z[oi] = a - c;
            k = 1;
        }
        for (; is == 2 && ii == 1 && os == 2 && oi == 1 && k + L <= k1 && 2 * (k + L) <= M;
             k += L) {
            const int64_t m0 = M - k - L + 1;
            V ar, ai, br, bi;
            FN(load_pairs)(x + 2 * k, &ar, &ai);
            FN(load_pairs)(x + 2 * m0, &br, &bi);
            br = REVERSE(br);
            bi = -REVERSE(bi);
            V sr = ar + br, si = ai + bi, dr = ar - br, di = ai - bi;
            V wr, wi;
            LOADU(wr, twr + k);
            LOADU(wi, twi + k);
            V ur = dr * wr + di * wi, ui = di * wr - dr * wi;
            V zr = sr - ui, zi = si + ur, yr = REVERSE(sr + ui), yi = REVERSE(ur - si);
            FN(store_pairs)(z + 2 * k, &zr, &zi);
            FN(store_pairs)(z + 2 * m0, &yr, &yi);
        }
        for (; k < k1; k++)
            FN(pack_pair)(x, z, k, M - k, is, ii, os, oi, twr[k], twi[k]);
    }
}

/* The full spectrum of odd length N from its half X[0..N/2] (X[0]'s
 * imaginary part dropped): the job's input lines into its output lines. */
static void FN(hermitian_fill)(const fft_job *job, int64_t N) {
    const int64_t is = job->in_step, ii = job->in_imoff;
    const int64_t os = job->out_step, oi = job->out_imoff;
    for (int64_t b = 0; b < job->B; b++) {
        int64_t io, oo;
        fft__line(job, b, &io, &oo);
        const REAL *x = (const REAL *)job->in + io;
        REAL *d = (REAL *)job->out + oo;
        d[0] = x[0];
        d[oi] = 0;
        for (int64_t k = 1; k <= N / 2; k++) {
            d[k * os] = d[(N - k) * os] = x[k * is];
            d[k * os + oi] = x[k * is + ii];
            d[(N - k) * os + oi] = -x[k * is + ii];
        }
    }
}

#undef MASK
#undef TLO
#undef THI
#undef EVEN
#undef ODD
#undef JLO
#undef JHI
#undef REV
#undef REVERSE
#undef LOADU
#undef STOREU
#undef IV
#undef V
#undef L
#undef FN
#undef FFT_CAT
#undef FFT_CAT2
