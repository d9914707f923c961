/* Discrete Fourier transforms along one dim: complex to complex, real to
 * complex (the one-sided half) and complex to real.  Plans are built per
 * call from two small tables of roots (fft_internal.h), so nothing is
 * cached between calls; the loops are in fft_kernel.h.  Lengths whose
 * prime factors are all <= FFT_MAX_RADIX are taken (th_fft_supported);
 * the front computes the others another way. */
#include "fft_internal.h"
#include "vecmath.h"

typedef struct fft_half { /* a real transform of length 2m */
    const fft_job *job;
    int64_t m;
    fft_roots roots;      /* of 2m */
    void *table;          /* w^k for k < count, in the real type */
    int64_t count;
} fft_half;

/* pairs (k, m - k) per work item of the real transforms' unpacking */
#define FFT_HALF_CHUNK 2048

#define REAL float
#define SUF f32
#define LANES 16
#define MASKINT int32_t
#include "fft_kernel.h"
#undef REAL
#undef SUF
#undef LANES
#undef MASKINT

#define REAL double
#define SUF f64
#define LANES 8
#define MASKINT int64_t
#include "fft_kernel.h"
#undef REAL
#undef SUF
#undef LANES
#undef MASKINT

/* ---- roots and plans ------------------------------------------------ */
static void roots_free(fft_roots *r) {
    th__free(r->lo);
    r->lo = r->hi = NULL;
}

static int roots_init(fft_roots *r, int64_t n) {
    int64_t s = (int64_t)sqrt((double)n);
    while (s * s < n) /* the smallest s with s * s >= n */
        s++;
    while (s > 1 && (s - 1) * (s - 1) >= n)
        s--;
    int64_t nh = (n + s - 1) / s;
    r->n = n;
    r->s = s;
    r->lo = th__alloc(2 * (s + nh) * (int64_t)sizeof(double));
    if (!r->lo)
        return TH_ERR_MEMORY;
    r->hi = r->lo + 2 * s;
    for (int64_t e = 0; e < s; e++) {
        double a = -2 * TH_PI * (double)e / (double)n;
        r->lo[2 * e] = cos(a);
        r->lo[2 * e + 1] = sin(a);
    }
    for (int64_t u = 0; u < nh; u++) {
        double a = -2 * TH_PI * (double)(u * s % n) / (double)n;
        r->hi[2 * u] = cos(a);
        r->hi[2 * u + 1] = sin(a);
    }
    return TH_OK;
}

/* n's radices, 4s first, then 2 and the odd primes; -1 when a prime
 * factor is above FFT_MAX_RADIX. */
static int factorize(int64_t n, int *radix) {
    int k = 0;
    while (n % 4 == 0 && k < FFT_MAX_STAGES) {
        radix[k++] = 4;
        n /= 4;
    }
    if (n % 2 == 0 && k < FFT_MAX_STAGES) {
        radix[k++] = 2;
        n /= 2;
    }
    for (int p = 3; p <= FFT_MAX_RADIX && n > 1; p += 2)
        while (n % p == 0 && k < FFT_MAX_STAGES) {
            radix[k++] = p;
            n /= p;
        }
    return n == 1 ? k : -1;
}

static void lanes_free(fft_lanes *p) {
    th__free(p->mem);
    p->mem = NULL;
}

/* The stages of length n, whose roots are those of roots->n taken every
 * roots->n / n. */
static int lanes_init(fft_lanes *p, int64_t n, const fft_roots *roots) {
    int radix[FFT_MAX_STAGES];
    memset(p, 0, sizeof(*p));
    p->n = n;
    p->nstages = factorize(n, radix);
    if (p->nstages < 0)
        return th__error(TH_ERR_NOT_IMPLEMENTED, "fft: no kernel for length %lld", (long long)n);
    int64_t doubles = 0, ns = 1;
    for (int i = 0; i < p->nstages; i++) {
        int h = (radix[i] - 1) / 2;
        doubles += 2 * ns * (radix[i] - 1) + (radix[i] % 2 ? 2 * h * h : 0);
        ns *= radix[i];
    }
    p->mem = th__alloc((doubles + 1) * (int64_t)sizeof(double));
    if (!p->mem)
        return TH_ERR_MEMORY;
    double *m = p->mem;
    const int64_t step = roots->n / n;
    ns = 1;
    for (int i = 0; i < p->nstages; i++) {
        fft_stage *s = &p->st[i];
        const int R = radix[i];
        s->radix = R;
        s->ns = ns;
        s->tw = m;
        const int64_t unit = n / (ns * R); /* W_{ns R} = W_n^unit */
        for (int64_t k = 0; k < ns; k++)
            for (int r = 1; r < R; r++, m += 2)
                fft__root(roots, (int64_t)r * k * unit * step, 0, &m[0], &m[1]);
        s->coef = NULL;
        if (R % 2) {
            int h = (R - 1) / 2;
            s->coef = m;
            for (int q = 1; q <= h; q++)
                for (int r = 1; r <= h; r++) {
                    double a = 2 * TH_PI * (double)(r * q % R) / R;
                    m[(q - 1) * h + r - 1] = cos(a);
                    m[h * h + (q - 1) * h + r - 1] = sin(a);
                }
            m += 2 * h * h;
        }
        ns *= R;
    }
    return TH_OK;
}

/* n = n1 * n2 with both >= lanes, n2 <= sqrt(n) as close to it as can be,
 * a multiple of lanes where one is; 0 if there is no such split.  The
 * divisors come from n's factors (all <= FFT_MAX_RADIX, or 0), so a
 * length near 2^62 costs its few thousand divisors, not a scan to sqrt(n). */
static int64_t four_step_split(int64_t n, int lanes) {
    int64_t prime[FFT_MAX_RADIX], m = n;
    int exp[FFT_MAX_RADIX], count[FFT_MAX_RADIX] = {0}, np = 0;
    for (int64_t q = 2; q <= FFT_MAX_RADIX && m > 1; q++)
        if (m % q == 0) {
            prime[np] = q;
            exp[np] = 0;
            while (m % q == 0) {
                m /= q;
                exp[np]++;
            }
            np++;
        }
    if (m != 1)
        return 0;
    int64_t best = 0, best_aligned = 0;
    for (;;) { /* every divisor d: the exponents count[] run like an odometer */
        int64_t d = 1;
        for (int i = 0; i < np; i++)
            for (int k = 0; k < count[i]; k++)
                d *= prime[i];
        if (d >= lanes && n / d >= lanes && d <= n / d) {
            best = TH_MAX(best, d);
            if (d % lanes == 0 && (n / d) % lanes == 0)
                best_aligned = TH_MAX(best_aligned, d);
        }
        int i = 0;
        while (i < np && ++count[i] > exp[i])
            count[i++] = 0;
        if (i == np)
            break;
    }
    return best_aligned * 2 >= best ? (best_aligned ? best_aligned : best) : best;
}

/* Lengths above which one transform is computed in four steps (its lane
 * buffers would leave the L2 cache), or any length from lanes^2 when the
 * batch is too small to fill the lanes. */
#define FFT_LANES_MAX 2048

static void plan_free(fft_plan *pl) {
    lanes_free(&pl->whole);
    lanes_free(&pl->col);
    lanes_free(&pl->row);
    roots_free(&pl->roots);
}

static int plan_init(fft_plan *pl, int64_t n, int64_t batch, int lanes) {
    memset(pl, 0, sizeof(*pl));
    pl->n = n;
    int64_t n2 = (n > FFT_LANES_MAX || batch < lanes) ? four_step_split(n, lanes) : 0;
    int st = roots_init(&pl->roots, n);
    if (st == TH_OK && n2) {
        pl->four_step = 1;
        pl->n1 = n / n2;
        pl->n2 = n2;
        st = lanes_init(&pl->col, pl->n1, &pl->roots);
        if (st == TH_OK)
            st = lanes_init(&pl->row, pl->n2, &pl->roots);
    } else if (st == TH_OK) {
        st = lanes_init(&pl->whole, n, &pl->roots);
    }
    if (st != TH_OK)
        plan_free(pl);
    return st;
}

/* The longest buffer a plan of length n works in, times lanes: what its
 * workers allocate, checked before any of them does. */
static int plan_fits(const fft_plan *pl, int64_t itemsize, int lanes) {
    int64_t len = pl->four_step ? TH_MAX(pl->n1, pl->n2) : pl->n, bytes;
    if (th__mul_ovf(len, 4 * lanes * itemsize, &bytes) ||
        (pl->four_step && th__mul_ovf(pl->n, 2 * itemsize, &bytes)))
        return th__error(TH_ERR_MEMORY, "fft: a transform of length %lld needs more memory "
                         "than can be addressed", (long long)pl->n);
    return TH_OK;
}

/* Runs job (its lines of length n) with a plan for n. */
static int run_c2c(fft_job *job, int64_t n, int dtype) {
    const int dbl = dtype == TH_FLOAT64;
    const int lanes = dbl ? 8 : 16;
    const int64_t itemsize = dbl ? 8 : 4;
    fft_plan plan;
    int st = plan_init(&plan, n, job->B, lanes);
    if (st != TH_OK)
        return st;
    st = plan_fits(&plan, itemsize, lanes);
    job->plan = &plan;
    job->failed = 0;
    if (st == TH_OK && plan.four_step) {
        job->lane_tw = dbl ? lane_twiddles_f64(&plan, job->inverse)
                           : lane_twiddles_f32(&plan, job->inverse);
        if (!job->lane_tw) {
            st = TH_ERR_MEMORY;
        } else if (job->B > 1) { /* lines side by side */
            th_parallel_for(job->B, 1, dbl ? lines_range_f64 : lines_range_f32, job);
        } else if ((job->work = th__alloc(2 * n * itemsize))) { /* one line, split up */
            job->line = 0;
            th_parallel_for((plan.n2 + lanes - 1) / lanes, 1,
                            dbl ? columns_range_f64 : columns_range_f32, job);
            th_parallel_for((plan.n1 + lanes - 1) / lanes, 1,
                            dbl ? rows_range_f64 : rows_range_f32, job);
        } else {
            st = TH_ERR_MEMORY;
        }
        th__free(job->lane_tw);
        th__free(job->work);
        job->lane_tw = job->work = NULL;
    } else if (st == TH_OK) {
        int64_t blocks = (job->B + lanes - 1) / lanes;
        int64_t grain = TH_MAX(1, TH_GRAIN / (n * lanes));
        th_parallel_for(blocks, grain, dbl ? lanes_range_f64 : lanes_range_f32, job);
    }
    plan_free(&plan);
    job->plan = NULL;
    if (st == TH_OK && job->failed)
        st = th__error(TH_ERR_MEMORY, "fft: not enough memory for the transform's buffers "
                       "(length %lld)", (long long)n);
    return st;
}

/* The pairs (k, N/2 - k) of job's lines through f32 or f64 (the real
 * transforms' unpacking or packing), with w^k tabulated once. */
static int run_half(const fft_job *job, int64_t N, int dtype, th_range_fn f32, th_range_fn f64) {
    const int dbl = dtype == TH_FLOAT64;
    const int64_t m = N / 2, pairs = m / 2 + 1;
    fft_half hf = {job, m, {0}, NULL, pairs + 16};
    int st = roots_init(&hf.roots, N);
    if (st != TH_OK)
        return st;
    hf.table = th__alloc(2 * hf.count * (dbl ? 8 : 4));
    if (hf.table) {
        th_parallel_for(hf.count, TH_GRAIN, dbl ? half_table_range_f64 : half_table_range_f32, &hf);
        int64_t chunks = (pairs + FFT_HALF_CHUNK - 1) / FFT_HALF_CHUNK;
        th_parallel_for(job->B * chunks, TH_MAX(1, TH_GRAIN / FFT_HALF_CHUNK), dbl ? f64 : f32,
                        &hf);
    } else {
        st = TH_ERR_MEMORY;
    }
    th__free(hf.table);
    roots_free(&hf.roots);
    return st;
}

/* ---- lines of tensors ------------------------------------------------- */
/* job's batch (every dim of x but dim) and input lines over x; reals per
 * element: 2 for complex x (imaginary part next), 1 for real x. */
static void job_input(fft_job *job, const th_tensor *x, int dim, int complex) {
    const int64_t per = complex ? 2 : 1;
    job->nb = 0;
    job->B = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (d == dim)
            continue;
        job->bsizes[job->nb] = x->sizes[d];
        job->in_bstride[job->nb++] = x->strides[d] * per;
        job->B *= x->sizes[d];
    }
    job->in = th__ptr(x);
    job->in_step = x->strides[dim] * per;
    job->in_imoff = complex ? 1 : -1;
}

/* job's output lines over out (contiguous complex, or real read as
 * pairs when `pairs`). */
static void job_output(fft_job *job, th_tensor *out, int dim, int pairs) {
    int k = 0;
    for (int d = 0; d < out->ndim; d++)
        if (d != dim)
            job->out_bstride[k++] = out->strides[d] * (pairs ? 1 : 2);
    job->out = th__ptr(out);
    job->out_step = 2 * out->strides[dim];
    job->out_imoff = pairs ? out->strides[dim] : 1;
}

static int real_of(int dtype) {
    return dtype == TH_COMPLEX128 ? TH_FLOAT64 : TH_FLOAT32;
}

int th_fft_supported(int64_t n, int real) {
    int radix[FFT_MAX_STAGES];
    if (n < 1)
        return 0;
    if (real && n % 2 == 0)
        n /= 2;
    if (factorize(n, radix) < 0)
        return 0;
    return n <= FFT_LANES_MAX || four_step_split(n, 16) > 0;
}

static int check_length(const char *fn, int64_t n, int real) {
    if (n < 1)
        return th__error(TH_ERR_RUNTIME, "Invalid number of data points (%lld) specified",
                         (long long)n);
    if (!th_fft_supported(n, real))
        return th__error(TH_ERR_NOT_IMPLEMENTED, "%s: libTH's FFT has no kernel for length "
                         "%lld (a prime factor above %d)", fn, (long long)n, FFT_MAX_RADIX);
    return TH_OK;
}

static int check_input(const char *fn, const th_tensor *x, int *dim, int complex) {
    if (!x)
        return th__error(TH_ERR_VALUE, "%s: no tensor", fn);
    int cat = th__dtype_category(x->dtype);
    if (complex && cat != 3)
        return th__error(TH_ERR_TYPE, "%s expects a complex tensor, got %s", fn,
                         th_dtype_name(x->dtype));
    if (!complex && x->dtype != TH_FLOAT32 && x->dtype != TH_FLOAT64)
        return th__error(TH_ERR_TYPE, "%s expects a float32 or float64 tensor, got %s", fn,
                         th_dtype_name(x->dtype));
    if (x->ndim == 0)
        return th__error(TH_ERR_INDEX, "%s: a 0-d tensor has no dim to transform", fn);
    *dim = th__wrap_dim(*dim, x->ndim);
    return *dim < 0 ? TH_ERR_INDEX : TH_OK;
}

th_tensor *th_fft_c2c(const th_tensor *x, int dim, int inverse, double scale) {
    if (check_input("fft_c2c", x, &dim, 1) != TH_OK ||
        check_length("fft_c2c", x->sizes[dim], 0) != TH_OK)
        return NULL;
    th_tensor *out = th_empty(x->ndim, x->sizes, x->dtype);
    if (!out || th__prod(x->ndim, x->sizes) == 0)
        return out;
    fft_job job = {0};
    job_input(&job, x, dim, 1);
    job_output(&job, out, dim, 0);
    job.inverse = inverse != 0;
    job.scale = scale;
    if (run_c2c(&job, x->sizes[dim], real_of(x->dtype)) != TH_OK) {
        th_tensor_release(out);
        return NULL;
    }
    return out;
}

/* The lines of dst (complex, contiguous, shaped like x with N along dim)
 * transformed from x's real lines. */
static int r2c_full(fft_job *job, const th_tensor *x, int dim, th_tensor *dst, double scale) {
    job_input(job, x, dim, 0);
    job_output(job, dst, dim, 0);
    job->scale = scale;
    return run_c2c(job, x->sizes[dim], x->dtype);
}

th_tensor *th_fft_r2c(const th_tensor *x, int dim, double scale) {
    if (check_input("fft_r2c", x, &dim, 0) != TH_OK ||
        check_length("fft_r2c", x->sizes[dim], 1) != TH_OK)
        return NULL;
    const int64_t N = x->sizes[dim];
    const int cdt = x->dtype == TH_FLOAT64 ? TH_COMPLEX128 : TH_COMPLEX64;
    int64_t sizes[TH_MAX_DIMS];
    memcpy(sizes, x->sizes, sizeof(sizes));
    sizes[dim] = N / 2 + 1;
    th_tensor *out = th_empty(x->ndim, sizes, cdt);
    if (!out || th__prod(x->ndim, x->sizes) == 0)
        return out;
    fft_job job = {0};
    int st;
    if (N % 2) { /* the full transform of the real values, then its first half */
        th_tensor *full = th_empty(x->ndim, x->sizes, cdt), *half = NULL;
        st = full ? r2c_full(&job, x, dim, full, scale) : TH_ERR_MEMORY;
        if (st == TH_OK)
            half = th_narrow(full, dim, 0, N / 2 + 1);
        st = half ? th_copy(out, half) : TH_ERR_MEMORY;
        th_tensor_release(half);
        th_tensor_release(full);
    } else { /* x read as N/2 complex values, transformed, unpacked */
        job_input(&job, x, dim, 0);
        job.in_step = 2 * x->strides[dim];
        job.in_imoff = x->strides[dim];
        job_output(&job, out, dim, 0);
        job.scale = scale;
        st = run_c2c(&job, N / 2, x->dtype);
        if (st == TH_OK)
            st = run_half(&job, N, x->dtype, r2c_unpack_range_f32, r2c_unpack_range_f64);
    }
    if (st != TH_OK) {
        th_tensor_release(out);
        return NULL;
    }
    return out;
}

th_tensor *th_fft_c2r(const th_tensor *x, int dim, int64_t N, double scale) {
    if (check_input("fft_c2r", x, &dim, 1) != TH_OK ||
        check_length("fft_c2r", N, 1) != TH_OK)
        return NULL;
    if (x->sizes[dim] < N / 2 + 1)
        return th__error_null(TH_ERR_RUNTIME, "fft_c2r: an output of %lld values needs %lld "
                              "frequencies along dim %d, the input has %lld", (long long)N,
                              (long long)(N / 2 + 1), dim, (long long)x->sizes[dim]);
    const int rdt = real_of(x->dtype);
    int64_t sizes[TH_MAX_DIMS];
    memcpy(sizes, x->sizes, sizeof(sizes));
    sizes[dim] = N;
    th_tensor *out = th_empty(x->ndim, sizes, rdt);
    if (!out || th__prod(x->ndim, sizes) == 0)
        return out;
    fft_job job = {0};
    job_input(&job, x, dim, 1);
    int st;
    if (N % 2) { /* the whole Hermitian spectrum, transformed, its real part */
        sizes[dim] = N;
        th_tensor *full = th_empty(x->ndim, sizes, x->dtype), *re = NULL, *part = NULL;
        st = full ? TH_OK : TH_ERR_MEMORY;
        if (st == TH_OK) {
            job_output(&job, full, dim, 0);
            if (rdt == TH_FLOAT64)
                hermitian_fill_f64(&job, N);
            else
                hermitian_fill_f32(&job, N);
            fft_job inv = {0};
            job_input(&inv, full, dim, 1);
            job_output(&inv, full, dim, 0);
            inv.inverse = 1;
            inv.scale = scale;
            st = run_c2c(&inv, N, rdt);
        }
        if (st == TH_OK && (re = th_view_as_real(full)) && (part = th_select(re, re->ndim - 1, 0)))
            st = th_copy(out, part);
        else if (st == TH_OK)
            st = TH_ERR_MEMORY;
        th_tensor_release(part);
        th_tensor_release(re);
        th_tensor_release(full);
    } else { /* packed into N/2 complex values in out, transformed in place */
        job_output(&job, out, dim, 1);
        st = run_half(&job, N, rdt, c2r_pack_range_f32, c2r_pack_range_f64);
        if (st == TH_OK) {
            fft_job inv = {0};
            job_input(&inv, out, dim, 0);
            inv.in_step = 2 * out->strides[dim];
            inv.in_imoff = out->strides[dim];
            job_output(&inv, out, dim, 1);
            inv.inverse = 1;
            inv.scale = scale;
            st = run_c2c(&inv, N / 2, rdt);
        }
    }
    if (st != TH_OK) {
        th_tensor_release(out);
        return NULL;
    }
    return out;
}
