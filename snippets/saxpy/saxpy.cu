// SAXPY, y = a*x + y, on an NVIDIA GPU in CUDA C: four kernels from the simplest to one that
// streams as fast as a copy, and three device copies (cudaMemcpy and two copy kernels), the
// ceiling every kernel is held to. This file is the lesson: the kernels, their launches in one
// table, and a main that runs and checks each once. Timing is the harness's (bench/runner.cu
// includes this file and times every row of KERNELS: `python snippets/bench/run.py saxpy`).
// Build: nvcc -O3 -arch=sm_90 -o build/saxpy snippets/saxpy/saxpy.cu   (sm_90: H100/H200;
//        leave out -arch to build for the toolkit's default target)
// Run:   ./build/saxpy          (checks every kernel at N = 2^24 floats; takes no arguments)
// --8<-- [start:imports]
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
// --8<-- [end:imports]

// --8<-- [start:check]
#define CUDA_CHECK(call) cuda_check((call), __FILE__, __LINE__)
static void cuda_check(cudaError_t e, const char *file, int line) {
    if (e == cudaSuccess) return;
    fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorName(e), cudaGetErrorString(e), file, line);
    exit(1);
}
// --8<-- [end:check]

// --8<-- [start:kernel]
// Step 1: one thread per element, the shape of the array-addition kernel.
__global__ void saxpy_one(long n, float a, const float *__restrict__ x, float *__restrict__ y) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
// --8<-- [end:kernel]

// --8<-- [start:grid_stride]
// Step 2: a fixed grid walks the whole array, one element per trip.
__global__ void saxpy_grid_stride(long n, float a, const float *__restrict__ x,
                                  float *__restrict__ y) {
    long stride = (long)gridDim.x * blockDim.x;  // threads in the whole grid
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = a * x[i] + y[i];
}
// --8<-- [end:grid_stride]

// --8<-- [start:unrolled]
// Step 3: four elements per trip, all eight loads issued before the first store.
__global__ void saxpy_unrolled(long n, float a, const float *__restrict__ x,
                               float *__restrict__ y) {
    long stride = (long)gridDim.x * blockDim.x;
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        float x0 = x[i], x1 = x[i + stride], x2 = x[i + 2 * stride], x3 = x[i + 3 * stride];
        float y0 = y[i], y1 = y[i + stride], y2 = y[i + 2 * stride], y3 = y[i + 3 * stride];
        y[i] = a * x0 + y0;
        y[i + stride] = a * x1 + y1;
        y[i + 2 * stride] = a * x2 + y2;
        y[i + 3 * stride] = a * x3 + y3;
    }
    for (; i < n; i += stride) y[i] = a * x[i] + y[i];  // the last few elements
}
// --8<-- [end:unrolled]

// --8<-- [start:float4]
// Step 4: one float4 per thread: each load and store moves 16 bytes (ld.global.v4.f32).
// cudaMalloc returns 256-byte aligned memory, so x and y are 16-byte aligned.
__global__ void saxpy_float4(long n, float a, const float *__restrict__ x,
                             float *__restrict__ y) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long n4 = n / 4;
    if (i < n4) {
        float4 xv = reinterpret_cast<const float4 *>(x)[i];
        float4 yv = reinterpret_cast<float4 *>(y)[i];
        yv.x = a * xv.x + yv.x;
        yv.y = a * xv.y + yv.y;
        yv.z = a * xv.z + yv.z;
        yv.w = a * xv.w + yv.w;
        reinterpret_cast<float4 *>(y)[i] = yv;
    }
    if (i < n - 4 * n4) y[4 * n4 + i] = a * x[4 * n4 + i] + y[4 * n4 + i];  // 0-3 left over
}
// --8<-- [end:float4]

// --8<-- [start:copies]
// Copy kernels, the ceilings' candidates next to cudaMemcpy: 4 bytes and 16 bytes per access.
__global__ void copy_float(long n, const float *__restrict__ src, float *__restrict__ dst) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

__global__ void copy_float4(long n, const float *__restrict__ src, float *__restrict__ dst) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long n4 = n / 4;
    if (i < n4) reinterpret_cast<float4 *>(dst)[i] = reinterpret_cast<const float4 *>(src)[i];
    if (i < n - 4 * n4) dst[4 * n4 + i] = src[4 * n4 + i];
}
// --8<-- [end:copies]

// Exactly representable inputs: a*x + y is exact in float32 with or without a fused multiply-add,
// so the GPU result must equal the host's bit for bit.
static float x_at(long i) { return (float)(i % 1000) * 0.5f - 250.0f; }
static float y_at(long i) { return (float)(i % 777) * 0.25f; }

struct Problem {
    long n;
    float a;
    int sms;                      // streaming multiprocessors: the grid-stride kernels' grid
    float *x, *y, *copy;          // on the device
    float *host_x, *host_y, *out; // on the host: inputs, and what comes back
};

// --8<-- [start:launch]
const int THREADS = 256;  // threads per block
static long per_element(const Problem *p) { return (p->n + THREADS - 1) / THREADS; }
static long per_float4(const Problem *p) {  // at least one block: it also does the last 0-3
    return p->n / 4 >= THREADS ? (p->n / 4 + THREADS - 1) / THREADS : 1;
}
static long fixed_grid(const Problem *p) {  // grid-stride kernels: 32 blocks per SM at most
    return 32L * p->sms < per_element(p) ? 32L * p->sms : per_element(p);
}

static void one(Problem *p) { saxpy_one<<<per_element(p), THREADS>>>(p->n, p->a, p->x, p->y); }
static void grid_stride(Problem *p) {
    saxpy_grid_stride<<<fixed_grid(p), THREADS>>>(p->n, p->a, p->x, p->y);
}
static void unrolled(Problem *p) {
    saxpy_unrolled<<<fixed_grid(p), THREADS>>>(p->n, p->a, p->x, p->y);
}
static void vec4(Problem *p) { saxpy_float4<<<per_float4(p), THREADS>>>(p->n, p->a, p->x, p->y); }
static void memcpy_copy(Problem *p) {
    CUDA_CHECK(cudaMemcpy(p->copy, p->x, p->n * sizeof(float), cudaMemcpyDeviceToDevice));
}
static void float_copy(Problem *p) { copy_float<<<per_element(p), THREADS>>>(p->n, p->x, p->copy); }
static void float4_copy(Problem *p) {
    copy_float4<<<per_float4(p), THREADS>>>(p->n, p->x, p->copy);
}

struct Kernel {
    const char *name;
    void (*run)(Problem *);
    bool is_copy;  // a copy moves 2 floats per element (x to copy), SAXPY 3 (x, y in, y out)
};
const Kernel KERNELS[] = {
    {"cuda_c_one", one, false},           {"cuda_c_grid_stride", grid_stride, false},
    {"cuda_c_unrolled", unrolled, false}, {"cuda_c_float4", vec4, false},
    {"cuda_c_copy_memcpy", memcpy_copy, true}, {"cuda_c_copy_float", float_copy, true},
    {"cuda_c_copy_float4", float4_copy, true},
};
const int N_KERNELS = sizeof KERNELS / sizeof KERNELS[0];
// --8<-- [end:launch]

struct Check { const char *metric; double value, bound; bool ok; };

static Problem *setup(const long dims[3]) {
    Problem *p = (Problem *)calloc(1, sizeof(Problem));
    size_t bytes = dims[0] * sizeof(float);
    p->n = dims[0];
    p->a = 2.0f;
    p->host_x = (float *)malloc(bytes), p->host_y = (float *)malloc(bytes);
    p->out = (float *)malloc(bytes);
    if (!p->host_x || !p->host_y || !p->out) {
        fprintf(stderr, "error: cannot allocate 3 arrays of %ld floats on the host\n", p->n);
        exit(1);
    }
    for (long i = 0; i < p->n; i++) p->host_x[i] = x_at(i), p->host_y[i] = y_at(i);
    int device;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p->sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaMalloc(&p->x, bytes));
    CUDA_CHECK(cudaMalloc(&p->y, bytes));
    CUDA_CHECK(cudaMalloc(&p->copy, bytes));
    CUDA_CHECK(cudaMemcpy(p->x, p->host_x, bytes, cudaMemcpyHostToDevice));
    return p;
}

// Fresh y, one call, and every element compared with the host's a*x + y (or x, for a copy).
static Check check(Problem *p, const Kernel &k) {
    size_t bytes = p->n * sizeof(float);
    CUDA_CHECK(cudaMemcpy(p->y, p->host_y, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(p->copy, 0, bytes));
    k.run(p);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(p->out, k.is_copy ? p->copy : p->y, bytes, cudaMemcpyDeviceToHost));
    long bad = 0;
    for (long i = 0; i < p->n; i++)
        bad += p->out[i] != (k.is_copy ? p->host_x[i] : p->a * p->host_x[i] + p->host_y[i]);
    return {"mismatched_elements", (double)bad, NAN, bad == 0};
}


#ifdef BENCH_RUNNER  // what bench/runner.cu needs besides: the size, one call, its work
const int SIZE_PARTS = 1;
const long MAX_DIM = 1L << 32;
const char *const DEFAULT_SIZE = "268435456";
struct Work { double bytes, flops; };
static void launch(Problem *p, const Kernel &k) { k.run(p); }
static Work work(const Problem *p, const Kernel &k) {
    return {(k.is_copy ? 2.0 : 3.0) * sizeof(float) * p->n, k.is_copy ? 0.0 : 2.0 * p->n};
}
#endif

static void teardown(Problem *p) {
    CUDA_CHECK(cudaFree(p->x));
    CUDA_CHECK(cudaFree(p->y));
    CUDA_CHECK(cudaFree(p->copy));
    free(p->host_x), free(p->host_y), free(p->out), free(p);
}

#ifndef BENCH_RUNNER
int main(int argc, char **argv) {
    if (argc > 1) {
        fprintf(stderr, "error: %s takes no arguments (timing: python snippets/bench/run.py saxpy)\n", argv[0]);
        return 2;
    }
    const long dims[3] = {1L << 24, 0, 0};
    Problem *p = setup(dims);
    int failed = 0;
    for (const Kernel &k : KERNELS) {
        Check c = check(p, k);
        printf("%-20s %s\n", k.name, c.ok ? "matches the host" : "WRONG");
        failed += !c.ok;
    }
    teardown(p);
    printf(failed ? "FAILED: %d kernel(s) wrong\n" : "OK: all %d kernels match\n", failed ? failed : N_KERNELS);
    return failed ? 1 : 0;
}
#endif
