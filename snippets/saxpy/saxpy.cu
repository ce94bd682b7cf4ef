// SAXPY, y = a*x + y, on an NVIDIA GPU in CUDA C, with its effective memory bandwidth and the
// device-to-device copy bandwidth measured in the same run as the ceiling to compare it with.
// Build: nvcc -O3 -arch=sm_90 -o build/saxpy snippets/saxpy/saxpy.cu   (sm_90: H100/H200;
//        leave out -arch to build for the toolkit's default target)
// Run:   ./build/saxpy [N] [REPEATS]      (default N = 2^28 = 268435456 floats, 20 repeats)
#include <cuda_runtime.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

// --8<-- [start:check]
#define CUDA_CHECK(call)                                                                  \
    do {                                                                                  \
        cudaError_t err_ = (call);                                                        \
        if (err_ != cudaSuccess) {                                                        \
            fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorName(err_),    \
                    cudaGetErrorString(err_), __FILE__, __LINE__);                        \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)
// --8<-- [end:check]

// --8<-- [start:kernel]
// Grid-stride loop: a fixed grid of threads walks the whole array, whatever its size.
__global__ void saxpy(long n, float a, const float *__restrict__ x, float *__restrict__ y) {
    long stride = (long)gridDim.x * blockDim.x;  // threads in the whole grid
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    // Four elements per trip, all loads before any store: eight loads in flight per thread.
    for (; i + 3 * stride < n; i += 4 * stride) {
        float x0 = x[i], x1 = x[i + stride], x2 = x[i + 2 * stride], x3 = x[i + 3 * stride];
        float y0 = y[i], y1 = y[i + stride], y2 = y[i + 2 * stride], y3 = y[i + 3 * stride];
        y[i] = a * x0 + y0;
        y[i + stride] = a * x1 + y1;
        y[i + 2 * stride] = a * x2 + y2;
        y[i + 3 * stride] = a * x3 + y3;
    }
    for (; i < n; i += stride) {  // the last few elements, one per trip
        y[i] = a * x[i] + y[i];
    }
}
// --8<-- [end:kernel]

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

static int cmp_float(const void *p, const void *q) {
    float a = *(const float *)p, b = *(const float *)q;
    return (a > b) - (a < b);
}

// Exactly representable inputs: a*x + y is exact in float32 with or without a fused multiply-add,
// so the GPU result must equal the host's bit for bit.
static float x_at(long i) { return (float)(i % 1000) * 0.5f - 250.0f; }
static float y_at(long i) { return (float)(i % 777) * 0.25f; }

struct Timing {
    float median_ms, min_ms, max_ms;
};

// --8<-- [start:timing]
// Time `repeats` launches of `work` with CUDA events, after `warmup` untimed ones.
template <typename F>
static Timing time_events(F work, int repeats, int warmup) {
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int r = 0; r < warmup; r++) work();
    CUDA_CHECK(cudaDeviceSynchronize());
    float *ms = (float *)malloc(repeats * sizeof(float));
    for (int r = 0; r < repeats; r++) {
        CUDA_CHECK(cudaEventRecord(start));
        work();
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        CUDA_CHECK(cudaEventElapsedTime(&ms[r], start, stop));
    }
    qsort(ms, repeats, sizeof(float), cmp_float);
    float median = repeats % 2 ? ms[repeats / 2] : 0.5f * (ms[repeats / 2 - 1] + ms[repeats / 2]);
    Timing t = {median, ms[0], ms[repeats - 1]};
    free(ms);
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return t;
}
// --8<-- [end:timing]

static void report(const char *what, Timing t, double bytes, int repeats) {
    printf("%-12s median %.6f ms (min %.6f, max %.6f, %d repeats)  %.1f GB/s\n", what, t.median_ms,
           t.min_ms, t.max_ms, repeats, bytes / (t.median_ms * 1e-3) / 1e9);
}

int main(int argc, char **argv) {
    if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: %s [N] [REPEATS]   (N floats, default 268435456; REPEATS >= 10, "
                "default 20)\n", argv[0]);
        return 2;
    }
    long n = argc > 1 ? parse_long(argv[1], "N", 1, 1L << 34) : 1L << 28;
    int repeats = argc > 2 ? (int)parse_long(argv[2], "REPEATS", 10, 100000) : 20;
    size_t bytes = (size_t)n * sizeof(float);
    float *x = (float *)malloc(bytes), *y = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    if (!x || !y || !out) {
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
    CUDA_CHECK(cudaMemcpy(d_y, y, bytes, cudaMemcpyHostToDevice));

    // --8<-- [start:launch]
    int device, sms;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const int threads = 256;
    long blocks = 32L * sms;                             // enough to fill every SM several times
    long needed = (n + threads - 1) / threads;           // ... but no more than the data needs
    if (blocks > needed) blocks = needed;
    saxpy<<<blocks, threads>>>(n, a, d_x, d_y);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    // --8<-- [end:launch]

    // Check the first result on the host before timing anything.
    CUDA_CHECK(cudaMemcpy(out, d_y, bytes, cudaMemcpyDeviceToHost));
    for (long i = 0; i < n; i++) {
        float want = a * x[i] + y[i];
        if (out[i] != want) {
            fprintf(stderr, "error: y[%ld] = %g, expected %g\n", i, out[i], want);
            return 1;
        }
    }

    Timing ts = time_events([&] { saxpy<<<blocks, threads>>>(n, a, d_x, d_y); }, repeats, 3);
    CUDA_CHECK(cudaGetLastError());
    // --8<-- [start:copy]
    Timing tc = time_events(
        [&] { CUDA_CHECK(cudaMemcpy(d_copy, d_x, bytes, cudaMemcpyDeviceToDevice)); }, repeats, 3);
    // --8<-- [end:copy]
    CUDA_CHECK(cudaMemcpy(out, d_copy, bytes, cudaMemcpyDeviceToHost));
    for (long i = 0; i < n; i++) {
        if (out[i] != x[i]) {
            fprintf(stderr, "error: the device copy differs at element %ld\n", i);
            return 1;
        }
    }

    // --8<-- [start:bandwidth]
    double saxpy_bytes = 3.0 * bytes;  // read x, read y, write y
    double copy_bytes = 2.0 * bytes;   // read the source, write the destination
    // --8<-- [end:bandwidth]
    printf("SAXPY y = a*x + y, N = %ld float32, %d SMs, %ld blocks x %d threads\n", n, sms, blocks,
           threads);
    report("saxpy", ts, saxpy_bytes, repeats);
    report("device copy", tc, copy_bytes, repeats);
    double ratio = (saxpy_bytes / ts.median_ms) / (copy_bytes / tc.median_ms);
    printf("saxpy / copy bandwidth: %.3f\n", ratio);
    printf("OK: all %ld elements match\n", n);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_copy));
    free(x);
    free(y);
    free(out);
    return 0;
}
