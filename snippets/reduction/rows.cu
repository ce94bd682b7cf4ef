// Row-wise softmax and RMSNorm of float32 rows of 4096 in CUDA C, at the speed of a copy: one
// block per row, the row held in registers (float4 loads), one read and one write of memory,
// warp shuffles for the row's max and sums. Each kernel runs at 128, 256 and 512 threads a row
// (32, 16 and 8 floats a thread), next to cudaMemcpy of the same bytes: the ceiling.
// Each output is checked against a float64 reference within its derived relative error bound.
// This file is the lesson: kernels, their launches in one table, and a main that checks each
// once. Timing is the harness's: bench/runner.cu includes this file and times every row
// (`python snippets/bench/run.py reduction`).
// Build: nvcc -O3 -arch=sm_90 -o build/rows snippets/reduction/rows.cu   (sm_90: H100/H200)
// Run:   ./build/rows           (checks every kernel on 1024 rows; takes no arguments)
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUDA_CHECK(call) cuda_check((call), __FILE__, __LINE__)
static void cuda_check(cudaError_t e, const char *file, int line) {
    if (e == cudaSuccess) return;
    fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorName(e), cudaGetErrorString(e),
            file, line);
    exit(1);
}

const int COLS = 4096;       // floats per row, fixed: each thread's share is known when compiling
const float EPS = 1e-6f;     // RMSNorm's epsilon, as torch.nn.functional.rms_norm(..., eps=1e-6)
const double U = 0x1p-24;    // unit roundoff of float32

// --8<-- [start:reduce]
// The row's max or sum, in every thread. Butterfly shuffles (__shfl_xor_sync) leave the warp's
// result in all 32 lanes; each warp then reads every warp's result from shared memory and
// combines them in the same order, so all threads agree. One barrier per reduction: each
// reduction has its own shared array, so no barrier is needed before it is written.
template <bool MAX> __device__ float combine(float a, float b) { return MAX ? fmaxf(a, b) : a + b; }

template <int THREADS, bool MAX> __device__ float row_reduce(float v, float *warp_result) {
    for (int lane_mask = 16; lane_mask > 0; lane_mask /= 2)
        v = combine<MAX>(v, __shfl_xor_sync(0xffffffffu, v, lane_mask));
    if (threadIdx.x % 32 == 0) warp_result[threadIdx.x / 32] = v;
    __syncthreads();
    v = warp_result[0];
#pragma unroll
    for (int w = 1; w < THREADS / 32; ++w) v = combine<MAX>(v, warp_result[w]);
    return v;
}
// --8<-- [end:reduce]

// --8<-- [start:softmax]
// y = exp(x - max) / sum(exp(x - max)) per row. Every load is issued before the first is used;
// the row is never read twice, and exp is computed once per element.
template <int THREADS>
__global__ void __launch_bounds__(THREADS) softmax_rows(const float *__restrict__ x,
                                                        float *__restrict__ y) {
    constexpr int V = COLS / 4 / THREADS;  // float4 per thread: 8, 4 or 2
    __shared__ float warp_max[THREADS / 32], warp_sum[THREADS / 32];
    const float4 *in = reinterpret_cast<const float4 *>(x + (long)blockIdx.x * COLS);
    float4 *out = reinterpret_cast<float4 *>(y + (long)blockIdx.x * COLS);
    float4 v[V];
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = in[threadIdx.x + k * THREADS];  // coalesced, 16 bytes each
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < V; ++k) m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
    m = row_reduce<THREADS, true>(m, warp_max);  // exp(x - m) <= 1: no overflow
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < V; ++k) {
        v[k] = make_float4(expf(v[k].x - m), expf(v[k].y - m), expf(v[k].z - m), expf(v[k].w - m));
        s += v[k].x; s += v[k].y; s += v[k].z; s += v[k].w;  // 4V serial adds
    }
    s = row_reduce<THREADS, false>(s, warp_sum);
    float r = __frcp_rn(s);  // one correctly rounded reciprocal, then a product per element
#pragma unroll
    for (int k = 0; k < V; ++k)
        out[threadIdx.x + k * THREADS] = make_float4(v[k].x * r, v[k].y * r, v[k].z * r, v[k].w * r);
}
// --8<-- [end:softmax]

// --8<-- [start:rmsnorm]
// y = x / sqrt(mean(x^2) + eps) * w per row (w: one weight per column, shared by every row and
// read from cache after the first rows).
template <int THREADS>
__global__ void __launch_bounds__(THREADS) rmsnorm_rows(const float *__restrict__ x,
                                                        const float *__restrict__ w,
                                                        float *__restrict__ y) {
    constexpr int V = COLS / 4 / THREADS;
    __shared__ float warp_sum[THREADS / 32];
    const float4 *in = reinterpret_cast<const float4 *>(x + (long)blockIdx.x * COLS);
    float4 *out = reinterpret_cast<float4 *>(y + (long)blockIdx.x * COLS);
    float4 v[V];
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = in[threadIdx.x + k * THREADS];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < V; ++k) {  // fused multiply-add: each square enters the sum unrounded
        s = fmaf(v[k].x, v[k].x, s); s = fmaf(v[k].y, v[k].y, s);
        s = fmaf(v[k].z, v[k].z, s); s = fmaf(v[k].w, v[k].w, s);
    }
    s = row_reduce<THREADS, false>(s, warp_sum);
    float r = rsqrtf(s * (1.0f / COLS) + EPS);  // 1/COLS is a power of two: the product is exact
    const float4 *w4 = reinterpret_cast<const float4 *>(w);
#pragma unroll
    for (int k = 0; k < V; ++k) {
        float4 g = w4[threadIdx.x + k * THREADS];
        out[threadIdx.x + k * THREADS] =
            make_float4(v[k].x * r * g.x, v[k].y * r * g.y, v[k].z * r * g.z, v[k].w * r * g.w);
    }
}
// --8<-- [end:rmsnorm]

// --8<-- [start:bound]
// Largest relative error of one output element, to first order, in units of u = 2^-24.
// Softmax: exp's argument x - m is rounded (|x - m| u, which exp turns into a relative error)
// and expf is within 2 ulp of the correctly rounded result (2.5 ulp of the exact one, and an ulp
// is up to 2u relative: 5u); both reach the numerator and every term of the sum. The sum adds
// its depth (4V serial adds, 5 shuffle levels, THREADS/32 - 1 warp results); the reciprocal
// and the product 2u. RMSNorm: the sum of squares (fma: no rounding of the squares) is off by
// its depth, + eps by u; rsqrtf halves that relative error and adds its own 2 ulp (4u); the two
// products add 2u.
static double sum_depth(int threads) { return COLS / threads + 5 + threads / 32 - 1; }
static double softmax_bound(int threads, double spread) {
    return (2 * (spread + 5) + sum_depth(threads) + 2) * U;
}
static double rmsnorm_bound(int threads) { return ((sum_depth(threads) + 1) / 2 + 4 + 2) * U; }
// --8<-- [end:bound]

struct Problem {
    long rows;
    double spread;         // the largest max - min of any row
    float *x, *w, *y;      // on the device
    float *hx, *hw, *hy;   // on the host: inputs, and the output fetched for the check
    double *want[2];       // float64 softmax and RMSNorm of x, made once
};

// --8<-- [start:launch]
enum Op { SOFTMAX, RMSNORM, COPY };
struct Kernel {
    const char *name;
    Op op;
    int threads;
    void (*run)(Problem *);
};

template <int T> static void softmax(Problem *p) { softmax_rows<T><<<p->rows, T>>>(p->x, p->y); }
template <int T> static void rmsnorm(Problem *p) { rmsnorm_rows<T><<<p->rows, T>>>(p->x, p->w, p->y); }
static void copy(Problem *p) {  // the ceiling: the same bytes read and written by the copy engine path
    CUDA_CHECK(cudaMemcpyAsync(p->y, p->x, p->rows * COLS * sizeof(float), cudaMemcpyDeviceToDevice));
}

const Kernel KERNELS[] = {
    {"cuda_c_softmax_128", SOFTMAX, 128, softmax<128>}, {"cuda_c_softmax_256", SOFTMAX, 256, softmax<256>},
    {"cuda_c_softmax_512", SOFTMAX, 512, softmax<512>}, {"cuda_c_rmsnorm_128", RMSNORM, 128, rmsnorm<128>},
    {"cuda_c_rmsnorm_256", RMSNORM, 256, rmsnorm<256>}, {"cuda_c_rmsnorm_512", RMSNORM, 512, rmsnorm<512>},
    {"cuda_c_copy", COPY, 0, copy},
};
const int N_KERNELS = sizeof KERNELS / sizeof KERNELS[0];
// --8<-- [end:launch]

struct Check { const char *metric; double value, bound; bool ok; };

static Problem *setup(const long dims[3]) {
    Problem *p = (Problem *)calloc(1, sizeof(Problem));
    p->rows = dims[0];
    size_t n = p->rows * COLS, bytes = n * sizeof(float);
    p->hx = (float *)malloc(bytes), p->hy = (float *)malloc(bytes);
    p->hw = (float *)malloc(COLS * sizeof(float));
    if (!p->hx || !p->hy || !p->hw) {
        fprintf(stderr, "error: cannot allocate %ld rows on the host\n", p->rows);
        exit(1);
    }
    srand(1);
    for (int j = 0; j < COLS; ++j) p->hw[j] = 0.5f + (float)rand() / RAND_MAX;  // weights in [0.5, 1.5]
    for (long r = 0; r < p->rows; ++r) {
        float lo = INFINITY, hi = -INFINITY;
        for (int j = 0; j < COLS; ++j) {
            float v = p->hx[r * COLS + j] = 8.0f * ((float)rand() / RAND_MAX) - 4.0f;  // [-4, 4]
            lo = fminf(lo, v), hi = fmaxf(hi, v);
        }
        p->spread = fmax(p->spread, (double)hi - lo);
    }
    for (int op = 0; op < 2; ++op) p->want[op] = (double *)malloc(n * sizeof(double));
    if (!p->want[0] || !p->want[1]) {
        fprintf(stderr, "error: cannot allocate the reference of %ld rows on the host\n", p->rows);
        exit(1);
    }
    for (long r = 0; r < p->rows; ++r) {  // the references, in float64
        const float *x = p->hx + r * COLS;
        double *soft = p->want[SOFTMAX] + r * COLS, *rms = p->want[RMSNORM] + r * COLS;
        double m = -INFINITY, s = 0, q = 0;
        for (int j = 0; j < COLS; ++j) m = fmax(m, x[j]);
        for (int j = 0; j < COLS; ++j) s += soft[j] = exp(x[j] - m), q += (double)x[j] * x[j];
        double scale = 1 / sqrt(q / COLS + EPS);
        for (int j = 0; j < COLS; ++j) soft[j] /= s, rms[j] = x[j] * scale * p->hw[j];
    }
    CUDA_CHECK(cudaMalloc(&p->x, bytes));
    CUDA_CHECK(cudaMalloc(&p->y, bytes));
    CUDA_CHECK(cudaMalloc(&p->w, COLS * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(p->x, p->hx, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(p->w, p->hw, COLS * sizeof(float), cudaMemcpyHostToDevice));
    return p;
}

// One call on an output preset to NaN (an element never written fails), compared with the
// float64 softmax or RMSNorm: the largest relative error, against the kernel's bound.
static Check check(Problem *p, const Kernel &k) {
    size_t bytes = p->rows * COLS * sizeof(float);
    CUDA_CHECK(cudaMemset(p->y, 0xff, bytes));
    k.run(p);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(p->hy, p->y, bytes, cudaMemcpyDeviceToHost));
    if (k.op == COPY) {
        long wrong = 0;
        for (size_t i = 0; i < bytes / sizeof(float); ++i) wrong += memcmp(&p->hx[i], &p->hy[i], sizeof(float)) != 0;
        return {"mismatched_elements", (double)wrong, 0, wrong == 0};
    }
    const double *want = p->want[k.op];
    double worst = 0;
    for (size_t i = 0; i < bytes / sizeof(float); ++i) {
        double e = want[i] != 0 ? fabs(p->hy[i] - want[i]) / fabs(want[i]) : (p->hy[i] == 0 ? 0 : INFINITY);
        worst = e > worst || e != e ? e : worst;  // a NaN (never written) stays
    }
    double bound = k.op == SOFTMAX ? softmax_bound(k.threads, p->spread) : rmsnorm_bound(k.threads);
    return {"max_relative_error", worst, bound, worst <= bound};
}

#ifdef BENCH_RUNNER  // what bench/runner.cu needs besides: the size (rows), one call, its work
const int SIZE_PARTS = 1;
const long MAX_DIM = 1L << 16;  // rows: up to 1 GiB an array
const char *const DEFAULT_SIZE = "32768";
struct Work { double bytes, flops; };
static void launch(Problem *p, const Kernel &k) { k.run(p); }
static Work work(const Problem *p, const Kernel &k) {  // read x once, write y once (+ the weights)
    return {8.0 * p->rows * COLS + (k.op == RMSNORM ? 4.0 * COLS : 0), 0};
}
#endif

static void teardown(Problem *p) {
    CUDA_CHECK(cudaFree(p->x));
    CUDA_CHECK(cudaFree(p->y));
    CUDA_CHECK(cudaFree(p->w));
    free(p->hx), free(p->hy), free(p->hw), free(p->want[0]), free(p->want[1]), free(p);
}

#ifndef BENCH_RUNNER
int main(int argc, char **argv) {
    if (argc > 1) {
        fprintf(stderr, "error: %s takes no arguments (timing: python snippets/bench/run.py reduction)\n", argv[0]);
        return 2;
    }
    const long dims[3] = {1024, 0, 0};
    Problem *p = setup(dims);
    int failed = 0;
    for (int j = 0; j < N_KERNELS; j++) {
        Check c = check(p, KERNELS[j]);
        printf("%-20s %s = %.3g (bound %.3g)%s\n", KERNELS[j].name, c.metric, c.value, c.bound, c.ok ? "" : "  WRONG");
        failed += !c.ok;
    }
    teardown(p);
    printf(failed ? "FAILED: %d kernel(s) off their bound\n" : "OK: every row within its bound\n", failed);
    return failed ? 1 : 0;
}
#endif
