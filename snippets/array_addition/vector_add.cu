// Array addition on an NVIDIA GPU, done right: any N, every CUDA call checked.
// Build: nvcc -O2 -o build/vector_add_cuda snippets/array_addition/vector_add.cu
// Run:   ./build/vector_add_cuda [N]      (default N = 6: A = 1..6, B = 7..12)
// --8<-- [start:imports]
#include <cuda_runtime.h>

#include "vector_add_common.h"  // parse_n, fill_inputs, check_and_print (and stdio, stdlib)
// --8<-- [end:imports]

// --8<-- [start:check]
// Every CUDA call returns an error code; ignoring it turns a failure into silent garbage.
#define CUDA_CHECK(call) cuda_check((call), __FILE__, __LINE__)
static void cuda_check(cudaError_t e, const char *file, int line) {
    if (e == cudaSuccess) return;
    fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorName(e), cudaGetErrorString(e), file, line);
    exit(1);
}
// --8<-- [end:check]

// --8<-- [start:kernel]
__global__ void vector_add(const float *a, const float *b, float *c, long n) {
    // The global index of this thread: which block, times threads per block, plus which thread.
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {  // the last block may run past the end of the arrays
        c[i] = a[i] + b[i];
    }
}
// --8<-- [end:kernel]

// --8<-- [start:launch]
int main(int argc, char **argv) {
    long n = parse_n(argc, argv);  // parse_n, fill_inputs, check_and_print: vector_add_common.h
    size_t bytes = (size_t)n * sizeof(float);
    float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
    if (!a || !b || !c) {
        fprintf(stderr, "error: cannot allocate 3 arrays of %ld floats on the host\n", n);
        return 1;
    }
    fill_inputs(a, b, n);

    float *d_a, *d_b, *d_c;
    CUDA_CHECK(cudaMalloc(&d_a, bytes));
    CUDA_CHECK(cudaMalloc(&d_b, bytes));
    CUDA_CHECK(cudaMalloc(&d_c, bytes));
    CUDA_CHECK(cudaMemcpy(d_a, a, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, b, bytes, cudaMemcpyHostToDevice));

    int threads = 256;                             // threads per block
    long blocks = (n + threads - 1) / threads;     // enough blocks to cover all n elements
    vector_add<<<blocks, threads>>>(d_a, d_b, d_c, n);
    CUDA_CHECK(cudaGetLastError());                // a bad launch configuration shows up here
    CUDA_CHECK(cudaDeviceSynchronize());           // an error inside the kernel shows up here

    CUDA_CHECK(cudaMemcpy(c, d_c, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_c));

    int status = check_and_print(c, n);
    free(a);
    free(b);
    free(c);
    return status;
}
// --8<-- [end:launch]
