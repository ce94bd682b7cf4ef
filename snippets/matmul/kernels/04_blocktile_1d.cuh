// Step 4: each thread computes a column of 8 results (a 1-D register tile).
#pragma once
#include "common.cuh"

// --8<-- [start:blocktile_1d]
// Each thread computes TM1 = 8 elements of one column of C. Per step along K it reads one value
// of B from shared memory into a register and reuses it for 8 multiply-adds.
constexpr int BM1 = 64, BN1 = 64, BK1 = 8, TM1 = 8;  // 64*64/8 = 512 threads per block

__global__ void __launch_bounds__(BM1 * BN1 / TM1)
sgemm_blocktile_1d(int M, int N, int K, const float *A, const float *B, float *C) {
    __shared__ float As[BM1][BK1];
    __shared__ float Bs[BK1][BN1];
    int t = threadIdx.x;
    int tcol = t % BN1, trow = t / BN1;  // this thread: column tcol, rows trow*TM1 .. +TM1
    int row0 = blockIdx.y * BM1, col0 = blockIdx.x * BN1;
    int ar = t / BK1, ac = t % BK1;      // the element of the A tile this thread copies
    int br = t / BN1, bc = t % BN1;      // the element of the B tile this thread copies
    float acc[TM1] = {0.0f};
    for (int k0 = 0; k0 < K; k0 += BK1) {
        As[ar][ac] = (row0 + ar < M && k0 + ac < K) ? A[(size_t)(row0 + ar) * K + k0 + ac] : 0.0f;
        Bs[br][bc] = (k0 + br < K && col0 + bc < N) ? B[(size_t)(k0 + br) * N + col0 + bc] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK1; ++kk) {
            float b = Bs[kk][tcol];
#pragma unroll
            for (int i = 0; i < TM1; ++i) acc[i] += As[trow * TM1 + i][kk] * b;
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM1; ++i) {
        int r = row0 + trow * TM1 + i, c = col0 + tcol;
        if (r < M && c < N) C[(size_t)r * N + c] = acc[i];
    }
}
// --8<-- [end:blocktile_1d]

inline void launch_blocktile_1d(int M, int N, int K, const float *A, const float *B, float *C) {
    dim3 grid(CEIL_DIV(N, BN1), CEIL_DIV(M, BM1));
    sgemm_blocktile_1d<<<grid, BM1 * BN1 / TM1>>>(M, N, K, A, B, C);
}
