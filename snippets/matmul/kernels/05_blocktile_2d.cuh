// Step 5: each thread computes an 8x8 tile of results (a 2-D register tile).
#pragma once
#include "common.cuh"

// --8<-- [start:blocktile_2d]
// Each thread computes an 8x8 tile of C: per step along K it loads 8 values of A and 8 of B
// into registers and does 64 multiply-adds with them (an outer product).
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int THREADS_2D = (BM / TM) * (BN / TN);  // 256

// The outer product of TM values of A and TN values of B, added into the thread's results.
__device__ __forceinline__ void outer_product(float (&acc)[TM][TN], const float (&a)[TM],
                                              const float (&b)[TN]) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
}

__global__ void __launch_bounds__(THREADS_2D)
sgemm_blocktile_2d(int M, int N, int K, const float *A, const float *B, float *C) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    int t = threadIdx.x;
    int trow = t / (BN / TN), tcol = t % (BN / TN);
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {{0.0f}}, a_reg[TM], b_reg[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = t; i < BM * BK; i += THREADS_2D) {  // 4 elements of A per thread
            int r = i / BK, c = i % BK;
            As[r][c] = (row0 + r < M && k0 + c < K) ? A[(size_t)(row0 + r) * K + k0 + c] : 0.0f;
        }
#pragma unroll
        for (int i = t; i < BK * BN; i += THREADS_2D) {  // 4 elements of B per thread
            int r = i / BN, c = i % BN;
            Bs[r][c] = (k0 + r < K && col0 + c < N) ? B[(size_t)(k0 + r) * N + col0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
            for (int i = 0; i < TM; ++i) a_reg[i] = As[trow * TM + i][kk];
#pragma unroll
            for (int j = 0; j < TN; ++j) b_reg[j] = Bs[kk][tcol * TN + j];
            outer_product(acc, a_reg, b_reg);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            int r = row0 + trow * TM + i, c = col0 + tcol * TN + j;
            if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
        }
}
// --8<-- [end:blocktile_2d]

inline void launch_blocktile_2d(int M, int N, int K, const float *A, const float *B, float *C) {
    sgemm_blocktile_2d<<<dim3(CEIL_DIV(N, BN), CEIL_DIV(M, BM)), THREADS_2D>>>(M, N, K, A, B, C);
}
