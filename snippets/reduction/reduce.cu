// The sum of N float32 on an NVIDIA GPU in CUDA C, five steps from one atomicAdd per element to
// one pass at the speed of a read, each held to the fastest read-only kernel of the same run.
// Each sum is checked against the exact float64 sum of the same numbers within its error bound.
// This file is the lesson: kernels, their launches in one table, and a main that checks each
// once. Timing is the harness's: bench/runner.cu includes this file and times every row
// (`python snippets/bench/run.py reduction`).
// Build: nvcc -O3 -arch=sm_90 -o build/reduce snippets/reduction/reduce.cu   (sm_90: H100/H200;
//        leave out -arch to build for the toolkit's default target)
// Run:   ./build/reduce         (checks every kernel at N = 2^24 floats; takes no arguments)
// --8<-- [start:imports]
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

struct Problem {
    long n;
    int sms;
    long per_element, per_float4, fixed;  // grid sizes (section launch)
    double exact, abs_sum;                // the float64 sum of x, exact, and of |x|
    float *x, *out, *partial;             // on the device
};

// --8<-- [start:launch]
static void grids(Problem *p) {
    p->per_element = (p->n + THREADS - 1) / THREADS;          // steps 1-3: a thread per element
    p->per_float4 = (p->n / 4 + THREADS - 1) / THREADS;       // one float4 per thread
    if (p->per_float4 < 1) p->per_float4 = 1;
    p->fixed = 8L * p->sms < p->per_float4 ? 8L * p->sms : p->per_float4;  // steps 4-5: 8 per SM
}

static void atomic(Problem *p) {
    CUDA_CHECK(cudaMemsetAsync(p->out, 0, sizeof(float)));
    sum_atomic<<<p->per_element, THREADS>>>(p->n, p->x, p->out);
}
static void shared(Problem *p) {
    CUDA_CHECK(cudaMemsetAsync(p->out, 0, sizeof(float)));
    sum_shared<<<p->per_element, THREADS>>>(p->n, p->x, p->out);
}
static void shuffle(Problem *p) {
    CUDA_CHECK(cudaMemsetAsync(p->out, 0, sizeof(float)));
    sum_shuffle<<<p->per_element, THREADS>>>(p->n, p->x, p->out);
}
static void vector(Problem *p) {
    CUDA_CHECK(cudaMemsetAsync(p->out, 0, sizeof(float)));
    sum_vector<<<p->fixed, THREADS>>>(p->n, p->x, p->out);
}
static void one_pass(Problem *p) { sum_one_pass<<<p->fixed, THREADS>>>(p->n, p->x, p->partial, p->out); }
static void read_grid(Problem *p) { read_vector<<<p->fixed, THREADS>>>(p->n, p->x, NAN, p->out); }
static void read_float4(Problem *p) {
    read_one_float4<<<p->per_float4, THREADS>>>(p->n, p->x, NAN, p->out);
}

// Depth of each summation tree: the most additions an element goes through (0: reads only).
static double levels() { return log2((double)THREADS); }
static double per_thread(const Problem *p) { return ceil((double)p->n / (p->fixed * THREADS)); }
static double d_atomic(const Problem *p) { return (double)p->n; }
static double d_tree(const Problem *p) { return levels() + p->per_element; }
static double d_vector(const Problem *p) { return per_thread(p) + levels() + p->fixed; }
static double d_one_pass(const Problem *p) {
    return per_thread(p) + levels() + ceil((double)p->fixed / THREADS) + levels();
}
static double d_read(const Problem *) { return 0; }

struct Kernel {
    const char *name;
    void (*run)(Problem *);
    double (*depth)(const Problem *);
};
const Kernel KERNELS[] = {
    {"cuda_c_atomic", atomic, d_atomic},       {"cuda_c_shared", shared, d_tree},
    {"cuda_c_shuffle", shuffle, d_tree},       {"cuda_c_vector", vector, d_vector},
    {"cuda_c_one_pass", one_pass, d_one_pass}, {"cuda_c_read_vector", read_grid, d_read},
    {"cuda_c_read_float4", read_float4, d_read},
};
const int N_KERNELS = sizeof KERNELS / sizeof KERNELS[0];
// --8<-- [end:launch]

struct Check { const char *metric; double value, bound; bool ok; };

static Problem *setup(const long dims[3]) {
    Problem *p = (Problem *)calloc(1, sizeof(Problem));
    p->n = dims[0];
    size_t bytes = p->n * sizeof(float);
    float *x = (float *)malloc(bytes);
    if (!x) {
        fprintf(stderr, "error: cannot allocate %ld floats on the host\n", p->n);
        exit(1);
    }
    for (long i = 0; i < p->n; i++) {
        x[i] = x_at(i);
        p->exact += x[i];
        p->abs_sum += fabs(x[i]);
    }
    int device;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p->sms, cudaDevAttrMultiProcessorCount, device));
    grids(p);
    CUDA_CHECK(cudaMalloc(&p->x, bytes));
    CUDA_CHECK(cudaMalloc(&p->out, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&p->partial, p->fixed * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(p->x, x, bytes, cudaMemcpyHostToDevice));
    free(x);
    return p;
}

// One call on a sum preset to NaN (a sum never written fails), compared with the exact sum.
static Check check(Problem *p, const Kernel &k) {
    double depth = k.depth(p);
    if (depth == 0) {  // a read-only kernel: nothing to compare
        k.run(p);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        return {"none (reads only)", 0, NAN, true};
    }
    float got;
    CUDA_CHECK(cudaMemset(p->out, 0xff, sizeof(float)));
    k.run(p);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(&got, p->out, sizeof(float), cudaMemcpyDeviceToHost));
    double error = fabs((double)got - p->exact), bound = error_bound(depth, p->abs_sum);
    return {"abs_error", error, bound, error <= bound};
}

#ifdef BENCH_RUNNER  // what bench/runner.cu needs besides: the size, one call, its work
const int SIZE_PARTS = 1;
const long MAX_DIM = 1L << 29;  // the float64 reference is exact up to 2^29 elements
const char *const DEFAULT_SIZE = "268435456";
struct Work { double bytes, flops; };
static void launch(Problem *p, const Kernel &k) { k.run(p); }
static Work work(const Problem *p, const Kernel &k) {
    return {(double)p->n * sizeof(float), k.depth(p) > 0 ? (double)p->n : 0.0};
}
#endif

static void teardown(Problem *p) {
    CUDA_CHECK(cudaFree(p->x));
    CUDA_CHECK(cudaFree(p->out));
    CUDA_CHECK(cudaFree(p->partial));
    free(p);
}

#ifndef BENCH_RUNNER
int main(int argc, char **argv) {
    if (argc > 1) {
        fprintf(stderr, "error: %s takes no arguments (timing: python snippets/bench/run.py reduction)\n", argv[0]);
        return 2;
    }
    const long dims[3] = {1L << 24, 0, 0};
    Problem *p = setup(dims);
    int failed = 0;
    for (int j = 0; j < N_KERNELS; j++) {
        const Kernel &k = KERNELS[j];
        Check c = check(p, k);
        printf("%-20s %s = %.3g (bound %.3g)%s\n", k.name, c.metric, c.value, c.bound, c.ok ? "" : "  WRONG");
        failed += !c.ok;
    }
    teardown(p);
    printf(failed ? "FAILED: %d kernel(s) off their bound\n" : "OK: every sum within its bound\n", failed);
    return failed ? 1 : 0;
}
#endif
