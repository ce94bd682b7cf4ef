// Step 2: the same kernel with threadIdx.x along a row of C, so a warp's loads coalesce.
#pragma once
#include "01_naive.cuh"  // dot: row of A times column of B

// --8<-- [start:coalesced]
// Step 1's dot; threadIdx.x now walks along a row of C. A warp reads one element of A
// (a broadcast) and 32 neighbouring elements of B (one 128-byte line), and writes one line of C.
__global__ void sgemm_coalesced(int M, int N, int K, const float *A, const float *B, float *C) {
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) C[(size_t)row * N + col] = dot(N, K, A, B, row, col);
}
// --8<-- [end:coalesced]

inline void launch_coalesced(int M, int N, int K, const float *A, const float *B, float *C) {
    sgemm_coalesced<<<dim3(CEIL_DIV(N, 32), CEIL_DIV(M, 32)), dim3(32, 32)>>>(M, N, K, A, B, C);
}
