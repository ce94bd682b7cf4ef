// The sum of N float32 on an NVIDIA GPU in CUDA C, five steps from one atomicAdd per element to
// one pass at the speed of a read, each held to the fastest read-only kernel of the same run.
// Each sum is checked against the exact float64 sum of the same numbers within its error bound.
// Build: nvcc -O3 -arch=sm_90 -o build/reduce snippets/reduction/reduce.cu   (sm_90: H100/H200;
//        leave out -arch to build for the toolkit's default target)
// Run:   ./build/reduce [N] [REPEATS] [--bench]   (default N = 2^28 = 268435456 floats, 20 repeats;
//        --bench also prints one "BENCH {json}" line per kernel for a benchmark runner)
// --8<-- [start:imports]
#include <cuda_runtime.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
// --8<-- [end:imports]

#define CUDA_CHECK(call) cuda_check((call), __FILE__, __LINE__)
static void cuda_check(cudaError_t e, const char *file, int line) {
    if (e == cudaSuccess) return;
    fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorName(e), cudaGetErrorString(e),
            file, line);
    exit(1);
}

const int THREADS = 256;  // threads per block, a multiple of 32

// --8<-- [start:atomic]
// Step 1: every thread adds its element to one float in device memory.
__global__ void sum_atomic(long n, const float *__restrict__ x, float *out) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, x[i]);
}
// --8<-- [end:atomic]

// --8<-- [start:shared]
// Step 2: each block sums its 256 elements in shared memory, halving the active threads at each
// level; one atomicAdd per block.
__global__ void sum_shared(long n, const float *__restrict__ x, float *out) {
    __shared__ float buf[THREADS];
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    int t = threadIdx.x;
    buf[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half) buf[t] += buf[t + half];
        __syncthreads();  // every sum of this level is written before the next level reads it
    }
    if (t == 0) atomicAdd(out, buf[0]);
}
// --8<-- [end:shared]

// --8<-- [start:shuffle]
// Step 3: inside a warp, threads read each other's registers (__shfl_down_sync): five levels
// with no shared memory and no barrier; shared memory only carries the warps' totals.
__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);  // add the value of lane + offset
    return v;  // lane 0 holds the warp's total
}

__device__ float block_sum(float v) {
    __shared__ float warp_total[32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_total[warp] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? warp_total[lane] : 0.0f;
    if (warp == 0) v = warp_sum(v);
    return v;  // thread 0 holds the block's total
}

__global__ void sum_shuffle(long n, const float *__restrict__ x, float *out) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    float v = block_sum(i < n ? x[i] : 0.0f);
    if (threadIdx.x == 0) atomicAdd(out, v);
}
// --8<-- [end:shuffle]

// --8<-- [start:vector]
// Step 4: a fixed grid; each thread walks the array in float4 (16-byte) loads, four loads in
// flight per trip, and keeps its running sum in a register. One atomicAdd per block.
__device__ float thread_sum(long n, const float *__restrict__ x) {
    const float4 *x4 = reinterpret_cast<const float4 *>(x);  // cudaMalloc: 256-byte aligned
    long n4 = n / 4, stride = (long)gridDim.x * blockDim.x;
    long first = (long)blockIdx.x * blockDim.x + threadIdx.x, i = first;
    float s = 0.0f;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        float4 a = x4[i], b = x4[i + stride], c = x4[i + 2 * stride], d = x4[i + 3 * stride];
        s += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w)) +
             ((c.x + c.y) + (c.z + c.w)) + ((d.x + d.y) + (d.z + d.w));
    }
    for (; i < n4; i += stride) {
        float4 a = x4[i];
        s += (a.x + a.y) + (a.z + a.w);
    }
    if (first < n - 4 * n4) s += x[4 * n4 + first];  // the 0 to 3 elements left over
    return s;
}

__global__ void sum_vector(long n, const float *__restrict__ x, float *out) {
    float v = block_sum(thread_sum(n, x));
    if (threadIdx.x == 0) atomicAdd(out, v);
}
// --8<-- [end:vector]

// --8<-- [start:one_pass]
// Step 5: no atomic on the sum. Each block writes its total; the last block to finish (a
// counter says which) adds the totals in a fixed order. One launch, no memset, the same result
// on every run.
__device__ unsigned int blocks_done = 0;  // reset by the last block for the next launch

__global__ void sum_one_pass(long n, const float *__restrict__ x, float *partial, float *out) {
    __shared__ bool last;
    float v = block_sum(thread_sum(n, x));
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = v;
        __threadfence();  // this block's total is visible to every block before it counts itself
        last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    float s = 0.0f;
    for (int b = threadIdx.x; b < gridDim.x; b += blockDim.x)
        s += __ldcg(&partial[b]);  // read from L2, where the other blocks' writes went
    s = block_sum(s);
    if (threadIdx.x == 0) {
        *out = s;
        blocks_done = 0;
    }
}
// --8<-- [end:one_pass]

// --8<-- [start:read]
// The ceiling: read every element and do nothing else. The compiler cannot drop the loads,
// because a thread whose sum equals `never` (NaN from the host: no sum equals it) would store.
__global__ void read_vector(long n, const float *__restrict__ x, float never, float *out) {
    float s = thread_sum(n, x);
    if (s == never) *out = s;
}

__global__ void read_one_float4(long n, const float *__restrict__ x, float never, float *out) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    float4 a = i < n / 4 ? reinterpret_cast<const float4 *>(x)[i] : make_float4(0, 0, 0, 0);
    float s = (a.x + a.y) + (a.z + a.w);
    if (s == never) *out = s;
}
// --8<-- [end:read]

static long parse_long(const char *text, const char *what, long lo, long hi) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "error: %s must be a whole number from %ld to %ld, got '%s'\n", what, lo,
                hi, text);
        exit(2);
    }
    return v;
}

static int cmp_double(const void *p, const void *q) {
    double a = *(const double *)p, b = *(const double *)q;
    return (a > b) - (a < b);
}

// --8<-- [start:inputs]
// Inputs in [-1, 1) on a grid of 2^-23: exact in float32, and any float64 sum of up to 2^29 of
// them is exact (at most 29 + 23 = 52 significant bits), so the reference has no error at all.
static float x_at(long i) {
    uint64_t z = (uint64_t)i + 0x9E3779B97F4A7C15ull;  // splitmix64: a well-mixed hash of i
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)((long)(z >> 40) - (1L << 23)) * 0x1p-23f;
}
// --8<-- [end:inputs]

// --8<-- [start:bound]
// A float32 sum whose additions form a tree of depth h (the most additions any element goes
// through) is off by at most h*u/(1 - h*u) * sum|x|, with u = 2^-24 (Higham, "Accuracy and
// Stability of Numerical Algorithms", 2nd ed., section 4.2). No bound at all once h*u >= 1.
static double error_bound(double h, double abs_sum) {
    double hu = h * 0x1p-24;
    return hu < 1 ? hu / (1 - hu) * abs_sum : INFINITY;
}
// --8<-- [end:bound]

struct Variant {
    const char *name;  // as printed and recorded
    long blocks;
    double depth;      // of its summation tree (0: reads only, no sum to check)
};

int main(int argc, char **argv) {
    int bench = 0, positional = 0;
    long n = 1L << 28, repeats = 20;
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
            printf("usage: %s [N] [REPEATS] [--bench]\n  N        float32 elements (default "
                   "268435456)\n  REPEATS  timed samples per kernel, >= 10 (default 20)\n"
                   "  --bench  also print one 'BENCH {json}' line per kernel\n", argv[0]);
            return 0;
        } else if (!strcmp(argv[k], "--bench")) {
            bench = 1;
        } else if (argv[k][0] == '-' || positional == 2) {
            fprintf(stderr, "error: unexpected argument '%s' (see --help)\n", argv[k]);
            return 2;
        } else if (positional++ == 0) {
            n = parse_long(argv[k], "N", 1, 1L << 29);
        } else {
            repeats = parse_long(argv[k], "REPEATS", 10, 10000);
        }
    }
    size_t bytes = (size_t)n * sizeof(float);
    float *x = (float *)malloc(bytes);
    double *samples = (double *)malloc(repeats * sizeof(double));
    if (!x || !samples) {
        fprintf(stderr, "error: cannot allocate %ld floats on the host\n", n);
        return 1;
    }
    double exact = 0, abs_sum = 0;
    for (long i = 0; i < n; i++) {
        x[i] = x_at(i);
        exact += x[i];
        abs_sum += fabs(x[i]);
    }

    int device, sms;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    // --8<-- [start:launch]
    long per_element = (n + THREADS - 1) / THREADS;             // steps 1-3: a thread per element
    long per_float4 = (n / 4 + THREADS - 1) / THREADS;          // one float4 per thread
    if (per_float4 < 1) per_float4 = 1;
    long fixed = 8L * sms < per_float4 ? 8L * sms : per_float4;  // steps 4-5: 8 blocks per SM
    // --8<-- [end:launch]
    double e = ceil((double)n / (fixed * THREADS)), levels = log2((double)THREADS);
    const Variant variants[] = {
        {"cuda_c_atomic", per_element, (double)n},
        {"cuda_c_shared", per_element, levels + per_element},
        {"cuda_c_shuffle", per_element, levels + per_element},
        {"cuda_c_vector", fixed, e + levels + fixed},
        {"cuda_c_one_pass", fixed, e + levels + ceil((double)fixed / THREADS) + levels},
        {"cuda_c_read_vector", fixed, 0},
        {"cuda_c_read_float4", per_float4, 0},
    };
    const int count = sizeof variants / sizeof variants[0];

    float *d_x, *d_out, *d_partial;
    CUDA_CHECK(cudaMalloc(&d_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_partial, fixed * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x, bytes, cudaMemcpyHostToDevice));
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));

    printf("sum of N = %ld float32, %d SMs, %d threads per block, median of %ld samples; "
           "exact sum %.6f, sum|x| %.1f\n", n, sms, THREADS, repeats, exact, abs_sum);
    double best_read = 0, gbs[sizeof variants / sizeof variants[0]];
    for (int v = 0; v < count; v++) {
        const Variant *var = &variants[v];
        long blocks = var->blocks;
        auto work = [&] {
            switch (v) {
                case 0: CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float)));
                        sum_atomic<<<blocks, THREADS>>>(n, d_x, d_out); break;
                case 1: CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float)));
                        sum_shared<<<blocks, THREADS>>>(n, d_x, d_out); break;
                case 2: CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float)));
                        sum_shuffle<<<blocks, THREADS>>>(n, d_x, d_out); break;
                case 3: CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float)));
                        sum_vector<<<blocks, THREADS>>>(n, d_x, d_out); break;
                case 4: sum_one_pass<<<blocks, THREADS>>>(n, d_x, d_partial, d_out); break;
                case 5: read_vector<<<blocks, THREADS>>>(n, d_x, NAN, d_out); break;
                default: read_one_float4<<<blocks, THREADS>>>(n, d_x, NAN, d_out); break;
            }
        };
        // Check before timing, and again after (a race shows as a result that moves).
        double err = 0, bound = error_bound(var->depth, abs_sum);
        auto check = [&] {
            float got;
            CUDA_CHECK(cudaMemset(d_out, 0xff, sizeof(float)));  // NaN: a sum never written fails
            work();
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof(float), cudaMemcpyDeviceToHost));
            double e1 = fabs((double)got - exact);
            if (var->depth > 0 && !(e1 <= bound)) {
                fprintf(stderr, "error: %s: sum %.6f, exact %.6f: off by %.3g, bound %.3g\n",
                        var->name, got, exact, e1, bound);
                exit(1);
            }
            if (var->depth > 0 && e1 > err) err = e1;
        };
        check();
        // Seconds per call: warm up, then calls per sample chosen so a sample lasts >= 2 ms.
        float ms;
        work();
        CUDA_CHECK(cudaEventRecord(start));
        work();
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        int calls = ms >= 2.0f ? 1 : (int)ceil(2.0 / fmax(ms, 1e-3));
        for (long r = 0; r < repeats; r++) {
            CUDA_CHECK(cudaEventRecord(start));
            for (int c = 0; c < calls; c++) work();
            CUDA_CHECK(cudaEventRecord(stop));
            CUDA_CHECK(cudaEventSynchronize(stop));
            CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            samples[r] = ms * 1e-3 / calls;
        }
        CUDA_CHECK(cudaGetLastError());
        check();
        double *sorted = (double *)malloc(repeats * sizeof(double));
        memcpy(sorted, samples, repeats * sizeof(double));
        qsort(sorted, repeats, sizeof(double), cmp_double);
        double median = repeats % 2 ? sorted[repeats / 2]
                                    : 0.5 * (sorted[repeats / 2 - 1] + sorted[repeats / 2]);
        free(sorted);
        gbs[v] = bytes / median / 1e9;
        if (var->depth == 0 && gbs[v] > best_read) best_read = gbs[v];
        printf("%-20s %10.4f ms  %8.1f GB/s  error %.3g (bound %.3g)\n", var->name, median * 1e3,
               gbs[v], err, var->depth > 0 ? bound : 0.0);
        if (bench) {
            char bound_text[32] = "null";  // JSON has no infinity: null when there is no bound
            if (var->depth > 0 && isfinite(bound)) snprintf(bound_text, 32, "%.9g", bound);
            printf("BENCH {\"variant\": \"%s\", \"phase\": \"kernel\", \"samples_s\": [", var->name);
            for (long r = 0; r < repeats; r++) printf("%s%.9e", r ? ", " : "", samples[r]);
            printf("], \"calls_per_sample\": %d, \"error\": {\"metric\": \"%s\", \"value\": %.9g, "
                   "\"ok\": true}, \"bytes\": %.0f, \"flops\": %.0f, \"params\": {\"n\": %ld, "
                   "\"dtype\": \"float32\"}, \"extra\": {\"blocks\": %ld, \"threads\": %d, "
                   "\"depth\": %.0f, \"bound\": %s, \"abs_sum\": %.1f}}\n",
                   calls, var->depth > 0 ? "abs_error" : "none (reads only)", err, (double)bytes,
                   var->depth > 0 ? (double)n : 0.0, n, blocks, THREADS, var->depth,
                   bound_text, abs_sum);
        }
    }
    for (int v = 0; v < count; v++)
        if (variants[v].depth > 0)
            printf("%-20s %6.1f%% of the fastest read\n", variants[v].name,
                   100.0 * gbs[v] / best_read);
    printf("OK: every sum within its bound\n");
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_partial));
    free(x);
    free(samples);
    return 0;
}
