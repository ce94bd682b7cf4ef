// Launches that cost nothing, in CUDA C: a chain of many tiny kernels, launched one by one on a
// stream, then captured once as a CUDA graph and replayed with one call. Each kernel adds 1 to
// 1,024 floats, so a chain of L kernels leaves L in every element, and the time per kernel is
// what launching costs. This file is the lesson: the kernel, both launches in one table, and a
// main that runs and checks each once. Timing is the harness's (bench/runner.cu includes this
// file: `python snippets/bench/run.py timeline`).
// Build: nvcc -O3 -arch=sm_90 -o build/graphs snippets/timeline/graphs.cu
// Run:   ./build/graphs         (checks every row; takes no arguments)
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CUDA_CHECK(call) cuda_check((call), __FILE__, __LINE__)
static void cuda_check(cudaError_t e, const char *file, int line) {
    if (e == cudaSuccess) return;
    fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorName(e), cudaGetErrorString(e), file, line);
    exit(1);
}

__global__ void add_one(int n, float *x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

struct Kernel {
    const char *name;
    int chain;   // kernels in the chain
    bool graph;  // captured once and replayed, or launched one by one
};
// --8<-- [start:table]
const Kernel KERNELS[] = {
    {"cuda_c_stream_1", 1, false},       {"cuda_c_graph_1", 1, true},
    {"cuda_c_stream_10", 10, false},     {"cuda_c_graph_10", 10, true},
    {"cuda_c_stream_100", 100, false},   {"cuda_c_graph_100", 100, true},
    {"cuda_c_stream_1000", 1000, false}, {"cuda_c_graph_1000", 1000, true},
};
// --8<-- [end:table]
const int N_KERNELS = sizeof KERNELS / sizeof KERNELS[0];

struct Problem {
    int n;
    float *x, *host;
    cudaGraphExec_t graphs[N_KERNELS];  // each graph row's, captured on its first call
};

// --8<-- [start:launch]
const int THREADS = 256;
static void chain(Problem *p, int length, cudaStream_t s) {
    for (int k = 0; k < length; ++k) add_one<<<(p->n + THREADS - 1) / THREADS, THREADS, 0, s>>>(p->n, p->x);
}

// The same launches, recorded on a capturing stream instead of run, then made executable.
static cudaGraphExec_t capture(Problem *p, int length) {
    cudaStream_t s;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamCreate(&s));
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    chain(p, length, s);
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaStreamDestroy(s));
    return exec;
}

static void run(Problem *p, const Kernel &k) {
    if (!k.graph) return chain(p, k.chain, 0);  // L launches
    cudaGraphExec_t &exec = p->graphs[&k - KERNELS];
    if (!exec) exec = capture(p, k.chain);
    CUDA_CHECK(cudaGraphLaunch(exec, 0));  // one launch runs all L kernels
}
// --8<-- [end:launch]

struct Check { const char *metric; double value, bound; bool ok; };

static Problem *setup(const long dims[3]) {
    Problem *p = (Problem *)calloc(1, sizeof(Problem));
    p->n = (int)dims[0];
    p->host = (float *)malloc(p->n * sizeof(float));
    if (!p->host) {
        fprintf(stderr, "error: cannot allocate %d floats on the host\n", p->n);
        exit(1);
    }
    CUDA_CHECK(cudaMalloc(&p->x, p->n * sizeof(float)));
    return p;
}

// From zeros, one call: every element must hold the chain's length.
static Check check(Problem *p, const Kernel &k) {
    CUDA_CHECK(cudaMemset(p->x, 0, p->n * sizeof(float)));
    run(p, k);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(p->host, p->x, p->n * sizeof(float), cudaMemcpyDeviceToHost));
    long bad = 0;
    for (int i = 0; i < p->n; i++) bad += p->host[i] != (float)k.chain;
    return {"mismatched_elements", (double)bad, NAN, bad == 0};
}

#ifdef BENCH_RUNNER  // what bench/runner.cu needs besides: the size, one call, its work
const int SIZE_PARTS = 1;
const long MAX_DIM = 1L << 24;
const char *const DEFAULT_SIZE = "1024";
struct Work { double bytes, flops; };
static void launch(Problem *p, const Kernel &k) { run(p, k); }
static Work work(const Problem *p, const Kernel &k) {
    return {2.0 * sizeof(float) * p->n * k.chain, 1.0 * p->n * k.chain};
}
std::string bench_extra(const Problem *, const Kernel &k) {
    return "\"kernels\": " + std::to_string(k.chain);
}
#endif

static void teardown(Problem *p) {
    for (cudaGraphExec_t exec : p->graphs)
        if (exec) CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaFree(p->x));
    free(p->host), free(p);
}

#ifndef BENCH_RUNNER
int main(int argc, char **argv) {
    if (argc > 1) {
        fprintf(stderr, "error: %s takes no arguments (timing: python snippets/bench/run.py timeline)\n", argv[0]);
        return 2;
    }
    const long dims[3] = {1024, 0, 0};
    Problem *p = setup(dims);
    int failed = 0;
    for (const Kernel &k : KERNELS) {
        Check c = check(p, k);
        printf("%-20s %s\n", k.name, c.ok ? "matches the host" : "WRONG");
        failed += !c.ok;
    }
    teardown(p);
    printf(failed ? "FAILED: %d row(s) wrong\n" : "OK: all %d rows match\n", failed ? failed : N_KERNELS);
    return failed ? 1 : 0;
}
#endif
