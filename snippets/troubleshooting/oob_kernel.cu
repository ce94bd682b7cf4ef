// A kernel with a planted out-of-bounds write, for compute-sanitizer to find.
//
//   nvcc -arch=native -lineinfo -o oob_kernel snippets/troubleshooting/oob_kernel.cu
//   ./oob_kernel                                   # may finish "OK": the bug goes unseen
//   compute-sanitizer --error-exitcode 99 ./oob_kernel
//   ./oob_kernel --far                             # a write far outside: cudaErrorIllegalAddress
//
// Every CUDA call is checked; a failure prints the error's name and text and exits 1. Without a
// GPU the first call fails (cudaErrorInsufficientDriver when no driver is installed). The one
// option, --far, makes the stray write land 1 GiB past the array.

// --8<-- [start:imports]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
// --8<-- [end:imports]

// --8<-- [start:check]
#define CHECK(call)                                                                     \
    do {                                                                                \
        cudaError_t err_ = (call);                                                      \
        if (err_ != cudaSuccess) {                                                      \
            std::fprintf(stderr, "CUDA error: %s: %s (%s:%d: %s)\n", cudaGetErrorName(err_), \
                         cudaGetErrorString(err_), __FILE__, __LINE__, #call);         \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)
// --8<-- [end:check]

// --8<-- [start:kernel]
// The bug: `<=` lets thread n write x[n], one element past the end of the array. With --far the
// stray thread writes 2^28 elements (1 GiB) past it instead, into memory nobody allocated.
__global__ void scale(float *x, int n, float a, long long far) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) {                        // should be i < n
        long long j = (i == n) ? i + far : i;
        x[j] = a * x[j];
    }
}
// --8<-- [end:kernel]

int main(int argc, char **argv) {
    long n = 1000000;
    long long far = (argc > 1 && !std::strcmp(argv[1], "--far")) ? 1LL << 28 : 0;  // 1 GiB past
    // --8<-- [start:launch]
    float *host = static_cast<float *>(std::malloc(n * sizeof(float)));
    if (!host) { std::fprintf(stderr, "error: out of host memory\n"); return 1; }
    for (long i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000);
    float *dev = nullptr;
    CHECK(cudaMalloc(&dev, n * sizeof(float)));
    CHECK(cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice));
    int threads = 256, blocks = static_cast<int>((n + 1 + threads - 1) / threads);
    scale<<<blocks, threads>>>(dev, static_cast<int>(n), 2.0f, far);
    CHECK(cudaGetLastError());           // launch errors (bad configuration, too many resources)
    CHECK(cudaDeviceSynchronize());      // errors while it ran (illegal address, ...)
    CHECK(cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost));
    // --8<-- [end:launch]
    long wrong = 0;
    for (long i = 0; i < n; ++i) wrong += host[i] != 2.0f * static_cast<float>(i % 1000);
    CHECK(cudaFree(dev));
    std::free(host);
    if (wrong) { std::fprintf(stderr, "error: %ld of %ld elements wrong\n", wrong, n); return 1; }
    std::printf("OK: %ld elements scaled (and one write past the end that nothing reported)\n", n);
    return 0;
}
