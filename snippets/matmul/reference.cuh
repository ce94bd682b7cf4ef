// What sgemm.cu checks every kernel with: random inputs made on the GPU, their
// BF16 copies for the tensor-core kernels, the float64 reference product and the error check.
#pragma once
#include <cuda_bf16.h>

#include <cmath>
#include <cstring>

#include "kernels/common.cuh"

// --8<-- [start:reference]
// The float64 reference: the same product with double accumulation (tiled through shared
// memory so that checking an 8192^3 product takes well under a second).
__global__ void dgemm_reference(int M, int N, int K, const float *A, const float *B, double *R) {
    __shared__ double As[16][16], Bs[16][16];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
    double acc = 0.0;
    for (int k0 = 0; k0 < K; k0 += 16) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0;
        __syncthreads();
        for (int kk = 0; kk < 16; ++kk) acc += As[ty][kk] * Bs[kk][tx];
        __syncthreads();
    }
    if (row < M && col < N) R[(size_t)row * N + col] = acc;
}

// sums[0] += sum (C - R)^2, sums[1] += sum R^2, sums[2] += count of non-finite C (NaN poison).
__global__ void error_sums(size_t n, const float *C, const double *R, double *sums) {
    double d2 = 0.0, r2 = 0.0, bad = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double c = C[i], r = R[i];
        if (!isfinite(c)) bad += 1.0;
        else d2 += (c - r) * (c - r);
        r2 += r * r;
    }
    for (int off = 16; off > 0; off /= 2) {
        d2 += __shfl_down_sync(0xffffffffu, d2, off);
        r2 += __shfl_down_sync(0xffffffffu, r2, off);
        bad += __shfl_down_sync(0xffffffffu, bad, off);
    }
    if (threadIdx.x % 32 == 0) {
        atomicAdd(&sums[0], d2);
        atomicAdd(&sums[1], r2);
        atomicAdd(&sums[2], bad);
    }
}
// --8<-- [end:reference]

// --8<-- [start:fill]
// Uniform random numbers in [-1, 1) from a hash of the index: reproducible, no host copy needed.
__global__ void fill_uniform(size_t n, float *x, unsigned seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 16; h *= 0x7feb352du; h ^= h >> 15; h *= 0x846ca68bu; h ^= h >> 16;
        x[i] = (h >> 8) * (2.0f / 16777216.0f) - 1.0f;
    }
}
// --8<-- [end:fill]

// --8<-- [start:to_bf16]
// Round a rows x cols float matrix X to BF16 in Y, rows padded with zeros to a stride `ld` (the
// tensor-core kernels copy 16-byte chunks, 8 BF16 values). With `transpose`, Y holds X^T
// (cols x ld): B is stored N x K, the way the tensor-core kernels read it.
__global__ void to_bf16(int rows, int cols, int ld, bool transpose, const float *X,
                        __nv_bfloat16 *Y) {
    const int y_rows = transpose ? cols : rows, y_cols = transpose ? rows : cols;
    size_t n = (size_t)y_rows * ld;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        int r = (int)(i / ld), c = (int)(i % ld);  // element (r, c) of Y
        float v = c >= y_cols ? 0.0f : transpose ? X[(size_t)c * cols + r] : X[(size_t)r * cols + c];
        Y[i] = __float2bfloat16_rn(v);
    }
}
// --8<-- [end:to_bf16]

// --8<-- [start:verify]
// Accuracy bound for a relative Frobenius error against the float64 product. FP32: rounding
// grows like sqrt(K) * 2^-24 for random data; allow 8 times that. BF16 and TF32 round their
// inputs to 8 and 11 significant bits: the error is a few units of that rounding, whatever K.
static double tolerance(const char *precision, int k) {
    if (!strcmp(precision, "bf16")) return 4.0 * std::ldexp(1.0, -8);
    if (!strcmp(precision, "tf32")) return 4.0 * std::ldexp(1.0, -11);
    return 8.0 * std::sqrt((double)k) * std::ldexp(1.0, -24);
}

// Poison C with NaN (all bits set), run once, and compare with the float64 reference:
// relative Frobenius error ||C - R|| / ||R||; any element left unwritten makes it infinite.
template <typename F>
static double relative_error(F run, size_t n, float *C, const double *R, double *sums) {
    CUDA_CHECK(cudaMemset(C, 0xFF, n * sizeof(float)));
    run();
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemset(sums, 0, 3 * sizeof(double)));
    error_sums<<<1024, 256>>>(n, C, R, sums);
    CUDA_CHECK(cudaGetLastError());
    double h[3];
    CUDA_CHECK(cudaMemcpy(h, sums, sizeof h, cudaMemcpyDeviceToHost));
    return h[2] > 0 ? INFINITY : std::sqrt(h[0] / h[1]);
}
// --8<-- [end:verify]
