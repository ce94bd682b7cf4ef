// Copies that overlap, in CUDA C: copy in (host to device), compute, copy out (device to host),
// first one after the other, then cut into chunks spread over several streams, so that while one
// chunk computes the next one is copied in and the last one copied out. The host buffers are
// pinned (cudaMallocHost): only pinned memory copies asynchronously. This file is the lesson: the
// stages, the pipeline, their launches in one table, and a main that runs and checks each once.
// Timing is the harness's (bench/runner.cu includes this file: `python snippets/bench/run.py
// timeline`); it times each row between two events on the default stream, which waits for every
// stream created here.
// Build: nvcc -O3 -arch=sm_90 -o build/overlap snippets/timeline/overlap.cu
// Run:   ./build/overlap        (checks every row at N = 2^24 floats; takes no arguments)
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUDA_CHECK(call) cuda_check((call), __FILE__, __LINE__)
static void cuda_check(cudaError_t e, const char *file, int line) {
    if (e == cudaSuccess) return;
    fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorName(e), cudaGetErrorString(e), file, line);
    exit(1);
}

// --8<-- [start:kernel]
// The compute stage: WORK dependent multiply-adds per float, about as long as copying the float
// over a PCIe Gen5 link (the machine page's pinned bandwidth), so that no stage hides the
// others. With a = b = 1 the result is exactly in + WORK: the check costs one pass on the host.
const int WORK = 2048;
__global__ void compute(long n, int work, float a, float b, const float *__restrict__ in,
                        float *__restrict__ out) {
    long stride = (long)gridDim.x * blockDim.x;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = in[i];
        for (int k = 0; k < work; ++k) v = fmaf(v, a, b);
        out[i] = v;
    }
}
// --8<-- [end:kernel]

const int MAX_STREAMS = 8;
struct Problem {
    long n;
    int sms;
    float *host_in, *host_out;  // pinned host memory
    float *dev_in, *dev_out;
    cudaStream_t streams[MAX_STREAMS];
};

// --8<-- [start:pipeline]
const int THREADS = 256;
static void compute_on(Problem *p, long first, long count, cudaStream_t s) {
    long blocks = (count + THREADS - 1) / THREADS, most = 32L * p->sms;
    compute<<<blocks < most ? blocks : most, THREADS, 0, s>>>(count, WORK, 1.0f, 1.0f,
                                                             p->dev_in + first, p->dev_out + first);
}

// Chunk c goes to stream c % streams: its copy in, its compute and its copy out follow each other
// in that stream, while the other streams' chunks use the two copy engines and the SMs.
static void pipeline(Problem *p, int chunks, int streams) {
    long per = (p->n + chunks - 1) / chunks;
    for (int c = 0; c < chunks; ++c) {
        long first = c * per, count = first + per < p->n ? per : p->n - first;
        if (count <= 0) break;
        cudaStream_t s = p->streams[c % streams];
        size_t bytes = count * sizeof(float);
        CUDA_CHECK(cudaMemcpyAsync(p->dev_in + first, p->host_in + first, bytes,
                                   cudaMemcpyHostToDevice, s));
        compute_on(p, first, count, s);
        CUDA_CHECK(cudaMemcpyAsync(p->host_out + first, p->dev_out + first, bytes,
                                   cudaMemcpyDeviceToHost, s));
    }
}
// --8<-- [end:pipeline]

static void copy_in(Problem *p) {
    CUDA_CHECK(cudaMemcpyAsync(p->dev_in, p->host_in, p->n * sizeof(float), cudaMemcpyHostToDevice, 0));
}
static void compute_all(Problem *p) { compute_on(p, 0, p->n, 0); }
static void copy_out(Problem *p) {
    CUDA_CHECK(cudaMemcpyAsync(p->host_out, p->dev_out, p->n * sizeof(float), cudaMemcpyDeviceToHost, 0));
}

enum Stage { COPY_IN, COMPUTE, COPY_OUT, PIPELINE };
struct Kernel {
    const char *name;
    Stage stage;
    int chunks, streams;  // PIPELINE only
};
// --8<-- [start:table]
// The three stages alone (the ideal is the longest), then the pipeline: one chunk on one stream
// is the three stages in a row; more chunks on more streams overlap them.
const Kernel KERNELS[] = {
    {"cuda_c_copy_in", COPY_IN, 1, 1},    {"cuda_c_compute", COMPUTE, 1, 1},
    {"cuda_c_copy_out", COPY_OUT, 1, 1},  {"cuda_c_c1_s1", PIPELINE, 1, 1},
    {"cuda_c_c4_s1", PIPELINE, 4, 1},     {"cuda_c_c4_s2", PIPELINE, 4, 2},
    {"cuda_c_c4_s4", PIPELINE, 4, 4},     {"cuda_c_c8_s2", PIPELINE, 8, 2},
    {"cuda_c_c8_s4", PIPELINE, 8, 4},     {"cuda_c_c16_s2", PIPELINE, 16, 2},
    {"cuda_c_c16_s4", PIPELINE, 16, 4},   {"cuda_c_c16_s8", PIPELINE, 16, 8},
    {"cuda_c_c32_s3", PIPELINE, 32, 3},   {"cuda_c_c32_s4", PIPELINE, 32, 4},
    {"cuda_c_c32_s8", PIPELINE, 32, 8},   {"cuda_c_c64_s4", PIPELINE, 64, 4},
    {"cuda_c_c64_s8", PIPELINE, 64, 8},   {"cuda_c_c128_s8", PIPELINE, 128, 8},
};
const int N_KERNELS = sizeof KERNELS / sizeof KERNELS[0];
static void run(Problem *p, const Kernel &k) {
    if (k.stage == COPY_IN) copy_in(p);
    else if (k.stage == COMPUTE) compute_all(p);
    else if (k.stage == COPY_OUT) copy_out(p);
    else pipeline(p, k.chunks, k.streams);
}
// --8<-- [end:table]

struct Check { const char *metric; double value, bound; bool ok; };

static Problem *setup(const long dims[3]) {
    Problem *p = (Problem *)calloc(1, sizeof(Problem));
    size_t bytes = dims[0] * sizeof(float);
    p->n = dims[0];
    int device;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&p->sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaMallocHost(&p->host_in, bytes));
    CUDA_CHECK(cudaMallocHost(&p->host_out, bytes));
    CUDA_CHECK(cudaMalloc(&p->dev_in, bytes));
    CUDA_CHECK(cudaMalloc(&p->dev_out, bytes));
    for (int s = 0; s < MAX_STREAMS; ++s) CUDA_CHECK(cudaStreamCreate(&p->streams[s]));
    for (long i = 0; i < p->n; i++) p->host_in[i] = (float)(i % 1000);  // + WORK stays exact
    return p;
}

// One call from cleared buffers, then what the row's stage must have produced: the input on the
// device (copy in), input + WORK on the device (compute) or on the host (copy out, pipeline).
static Check check(Problem *p, const Kernel &k) {
    size_t bytes = p->n * sizeof(float);
    float *seen = (float *)malloc(bytes);
    if (!seen) {
        fprintf(stderr, "error: cannot allocate %ld floats on the host\n", p->n);
        exit(1);
    }
    CUDA_CHECK(cudaMemset(p->dev_in, 0, bytes));
    CUDA_CHECK(cudaMemset(p->dev_out, 0, bytes));
    memset(p->host_out, 0, bytes);
    if (k.stage == COMPUTE || k.stage == COPY_OUT) copy_in(p);
    if (k.stage == COPY_OUT) compute_all(p);
    run(p, k);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    if (k.stage == COPY_IN) CUDA_CHECK(cudaMemcpy(seen, p->dev_in, bytes, cudaMemcpyDeviceToHost));
    else if (k.stage == COMPUTE) CUDA_CHECK(cudaMemcpy(seen, p->dev_out, bytes, cudaMemcpyDeviceToHost));
    else memcpy(seen, p->host_out, bytes);
    long bad = 0;
    for (long i = 0; i < p->n; i++)
        bad += seen[i] != p->host_in[i] + (k.stage == COPY_IN ? 0.0f : (float)WORK);
    free(seen);
    return {"mismatched_elements", (double)bad, NAN, bad == 0};
}

#ifdef BENCH_RUNNER  // what bench/runner.cu needs besides: the size, one call, its work
const int SIZE_PARTS = 1;
const long MAX_DIM = 1L << 30;
const char *const DEFAULT_SIZE = "67108864";
struct Work { double bytes, flops; };
static void launch(Problem *p, const Kernel &k) { run(p, k); }
static Work work(const Problem *p, const Kernel &k) {  // bytes over the host link
    double link = (k.stage == COMPUTE ? 0.0 : k.stage == PIPELINE ? 2.0 : 1.0) * sizeof(float) * p->n;
    return {link, k.stage == COPY_IN || k.stage == COPY_OUT ? 0.0 : 2.0 * WORK * p->n};
}
std::string bench_extra(const Problem *, const Kernel &k) {
    return "\"chunks\": " + std::to_string(k.chunks) + ", \"streams\": " + std::to_string(k.streams);
}
#endif

static void teardown(Problem *p) {
    for (int s = 0; s < MAX_STREAMS; ++s) CUDA_CHECK(cudaStreamDestroy(p->streams[s]));
    CUDA_CHECK(cudaFree(p->dev_in));
    CUDA_CHECK(cudaFree(p->dev_out));
    CUDA_CHECK(cudaFreeHost(p->host_in));
    CUDA_CHECK(cudaFreeHost(p->host_out));
    free(p);
}

#ifndef BENCH_RUNNER
int main(int argc, char **argv) {
    if (argc > 1) {
        fprintf(stderr, "error: %s takes no arguments (timing: python snippets/bench/run.py timeline)\n", argv[0]);
        return 2;
    }
    const long dims[3] = {1L << 24, 0, 0};
    Problem *p = setup(dims);
    int failed = 0;
    for (const Kernel &k : KERNELS) {
        Check c = check(p, k);
        printf("%-16s %s\n", k.name, c.ok ? "matches the host" : "WRONG");
        failed += !c.ok;
    }
    teardown(p);
    printf(failed ? "FAILED: %d row(s) wrong\n" : "OK: all %d rows match\n", failed ? failed : N_KERNELS);
    return failed ? 1 : 0;
}
#endif
