// Step 3: 32x32 tiles of A and B staged in shared memory.
#pragma once
#include "common.cuh"

// --8<-- [start:smem]
// A block of 32x32 threads computes a 32x32 tile of C. It walks along K in steps of 32, copying
// a 32x32 tile of A and of B into shared memory once, then every thread reads them 32 times.
constexpr int TILE = 32;

__global__ void sgemm_smem(int M, int N, int K, const float *A, const float *B, float *C) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Out-of-range elements are loaded as zeros, so the tile loop needs no special case.
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();  // the tiles are complete before anyone reads them
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc += As[ty][kk] * Bs[kk][tx];
        __syncthreads();  // everyone is done reading before the next tiles overwrite them
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
// --8<-- [end:smem]

inline void launch_smem(int M, int N, int K, const float *A, const float *B, float *C) {
    sgemm_smem<<<dim3(CEIL_DIV(N, TILE), CEIL_DIV(M, TILE)), dim3(TILE, TILE)>>>(M, N, K, A, B, C);
}
