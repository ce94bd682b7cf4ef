// SAXPY, y = a*x + y, on an NVIDIA GPU in CUDA C: four kernels from the simplest to one that
// streams as fast as a copy, each timed next to three device copies measured in the same run
// (cudaMemcpy and two copy kernels); the fastest copy is the ceiling every kernel is held to.
// Build: nvcc -O3 -arch=sm_90 -o build/saxpy snippets/saxpy/saxpy.cu   (sm_90: H100/H200;
//        leave out -arch to build for the toolkit's default target)
// Run:   ./build/saxpy [N] [REPEATS] [--bench]   (default N = 2^28 = 268435456 floats, 20 repeats;
//        --bench also prints one "BENCH {json}" line per kernel for a benchmark runner)
// --8<-- [start:imports]
#include <cuda_runtime.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

// Exactly representable inputs: a*x + y is exact in float32 with or without a fused multiply-add,
// so the GPU result must equal the host's bit for bit.
static float x_at(long i) { return (float)(i % 1000) * 0.5f - 250.0f; }
static float y_at(long i) { return (float)(i % 777) * 0.25f; }

enum { CALLS = 10 };  // launches per timed sample: the figures are per launch

// --8<-- [start:timing]
// Seconds per call of `work`: `repeats` samples of CALLS calls between two CUDA events.
template <typename F>
static void time_events(F work, int repeats, double *samples) {
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int r = 0; r < 3; r++) work();  // warm-up
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int r = 0; r < repeats; r++) {
        CUDA_CHECK(cudaEventRecord(start));
        for (int c = 0; c < CALLS; c++) work();
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        samples[r] = ms * 1e-3 / CALLS;
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
}
// --8<-- [end:timing]

static double median(const double *samples, int repeats) {
    double *s = (double *)malloc(repeats * sizeof(double));
    memcpy(s, samples, repeats * sizeof(double));
    qsort(s, repeats, sizeof(double), cmp_double);
    double m = repeats % 2 ? s[repeats / 2] : 0.5 * (s[repeats / 2 - 1] + s[repeats / 2]);
    free(s);
    return m;
}

struct Variant {
    const char *name;  // as printed and recorded
    int is_copy;       // copies move 2 floats per element, SAXPY 3
    long blocks;       // grid size (0: cudaMemcpy)
};

// Compare the device array with the expected values on the host; returns the mismatches.
static long mismatches(const float *d, const float *want_x, const float *want_y, float a, long n,
                       float *out) {
    CUDA_CHECK(cudaMemcpy(out, d, n * sizeof(float), cudaMemcpyDeviceToHost));
    long bad = 0;
    for (long i = 0; i < n; i++) {
        float want = want_y ? a * want_x[i] + want_y[i] : want_x[i];
        bad += out[i] != want;
    }
    return bad;
}

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
            n = parse_long(argv[k], "N", 1, 1L << 32);
        } else {
            repeats = parse_long(argv[k], "REPEATS", 10, 10000);
        }
    }
    size_t bytes = (size_t)n * sizeof(float);
    float *x = (float *)malloc(bytes), *y = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    double *samples = (double *)malloc(repeats * sizeof(double));
    if (!x || !y || !out || !samples) {
        fprintf(stderr, "error: cannot allocate 3 arrays of %ld floats on the host\n", n);
        return 1;
    }
    for (long i = 0; i < n; i++) {
        x[i] = x_at(i);
        y[i] = y_at(i);
    }
    const float a = 2.0f;

    float *d_x, *d_y, *d_copy;
    CUDA_CHECK(cudaMalloc(&d_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_y, bytes));
    CUDA_CHECK(cudaMalloc(&d_copy, bytes));
    CUDA_CHECK(cudaMemcpy(d_x, x, bytes, cudaMemcpyHostToDevice));

    // --8<-- [start:launch]
    int device, sms;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const int threads = 256;
    long per_element = (n + threads - 1) / threads;      // one thread per element
    long per_float4 = (n / 4 + threads - 1) / threads;   // one thread per 4 elements
    if (per_float4 < 1) per_float4 = 1;
    long fixed = 32L * sms < per_element ? 32L * sms : per_element;  // grid-stride: 32 per SM
    // --8<-- [end:launch]
    const Variant variants[] = {
        {"cuda_c_one", 0, per_element},        {"cuda_c_grid_stride", 0, fixed},
        {"cuda_c_unrolled", 0, fixed},         {"cuda_c_float4", 0, per_float4},
        {"cuda_c_copy_memcpy", 1, 0},          {"cuda_c_copy_float", 1, per_element},
        {"cuda_c_copy_float4", 1, per_float4},
    };
    const int count = sizeof variants / sizeof variants[0];
    double seconds[sizeof variants / sizeof variants[0]];

    printf("SAXPY y = a*x + y, N = %ld float32, %d SMs, %d threads per block, median of %ld "
           "samples of %d calls\n", n, sms, threads, repeats, CALLS);
    for (int v = 0; v < count; v++) {
        const Variant *var = &variants[v];
        long blocks = var->blocks;
        auto work = [&] {
            switch (v) {
                case 0: saxpy_one<<<blocks, threads>>>(n, a, d_x, d_y); break;
                case 1: saxpy_grid_stride<<<blocks, threads>>>(n, a, d_x, d_y); break;
                case 2: saxpy_unrolled<<<blocks, threads>>>(n, a, d_x, d_y); break;
                case 3: saxpy_float4<<<blocks, threads>>>(n, a, d_x, d_y); break;
                case 4: CUDA_CHECK(cudaMemcpy(d_copy, d_x, bytes, cudaMemcpyDeviceToDevice)); break;
                case 5: copy_float<<<blocks, threads>>>(n, d_x, d_copy); break;
                default: copy_float4<<<blocks, threads>>>(n, d_x, d_copy); break;
            }
        };
        // Check each kernel on fresh data before timing it.
        CUDA_CHECK(cudaMemcpy(d_y, y, bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(d_copy, 0, bytes));
        work();
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        long bad = var->is_copy ? mismatches(d_copy, x, NULL, a, n, out)
                                : mismatches(d_y, x, y, a, n, out);
        if (bad) {
            fprintf(stderr, "error: %s: %ld of %ld elements differ from the host's result\n",
                    var->name, bad, n);
            return 1;
        }
        time_events(work, (int)repeats, samples);
        seconds[v] = median(samples, (int)repeats);
        double moved = (var->is_copy ? 2.0 : 3.0) * bytes;
        printf("%-20s %10.4f ms  %8.1f GB/s\n", var->name, seconds[v] * 1e3,
               moved / seconds[v] / 1e9);
        if (bench) {
            printf("BENCH {\"variant\": \"%s\", \"phase\": \"kernel\", \"samples_s\": [", var->name);
            for (long r = 0; r < repeats; r++) printf("%s%.9e", r ? ", " : "", samples[r]);
            printf("], \"calls_per_sample\": %d, \"error\": {\"metric\": \"mismatched_elements\", "
                   "\"value\": 0, \"ok\": true}, \"bytes\": %.0f, \"flops\": %.0f, "
                   "\"params\": {\"n\": %ld, \"dtype\": \"float32\"}, \"extra\": {\"blocks\": %ld, "
                   "\"threads\": %d, \"kind\": \"%s\"}}\n",
                   CALLS, moved, var->is_copy ? 0.0 : 2.0 * n, n, blocks, var->blocks ? threads : 0,
                   var->is_copy ? "copy" : "saxpy");
        }
    }
    // --8<-- [start:bandwidth]
    double best_copy = 0;  // bytes per second of the fastest copy: the ceiling
    for (int v = 0; v < count; v++)
        if (variants[v].is_copy && 2.0 * bytes / seconds[v] > best_copy)
            best_copy = 2.0 * bytes / seconds[v];
    for (int v = 0; v < count; v++)
        if (!variants[v].is_copy)
            printf("%-20s %6.1f%% of the fastest copy\n", variants[v].name,
                   100.0 * 3.0 * bytes / seconds[v] / best_copy);
    // --8<-- [end:bandwidth]
    printf("OK: all %ld elements match\n", n);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_copy));
    free(x);
    free(y);
    free(out);
    free(samples);
    return 0;
}
