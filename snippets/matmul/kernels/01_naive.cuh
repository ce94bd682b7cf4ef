// Step 1 of docs/kernels/matmul.md: one thread per element of C, mapped the wrong way.
#pragma once
#include "common.cuh"

// --8<-- [start:naive]
// Row `row` of A times column `col` of B: the K multiply-adds of one element of C.
__device__ __forceinline__ float dot(int N, int K, const float *A, const float *B, int row,
                                      int col) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    return acc;
}

// One thread per element of C. threadIdx.x walks down a column of C: the 32 threads of a warp
// read 32 different rows of A (addresses K floats apart), so no two loads share a cache line.
__global__ void sgemm_naive(int M, int N, int K, const float *A, const float *B, float *C) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) C[(size_t)row * N + col] = dot(N, K, A, B, row, col);
}
// --8<-- [end:naive]

inline void launch_naive(int M, int N, int K, const float *A, const float *B, float *C) {
    sgemm_naive<<<dim3(CEIL_DIV(M, 32), CEIL_DIV(N, 32)), dim3(32, 32)>>>(M, N, K, A, B, C);
}
