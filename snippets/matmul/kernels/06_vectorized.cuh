// Step 6: step 5's tiles (BM, BN, BK, TM, TN) with 16-byte loads and a transposed, padded A tile.
#pragma once
#include "common.cuh"
#include "05_blocktile_2d.cuh"  // the tile sizes and outer_product

// --8<-- [start:vectorized]
// The 2-D kernel with 16-byte loads. A's tile is stored transposed (As[k][m]), so the 8 values
// of A a thread needs for one k are contiguous and come in as two float4 reads, like B's.
// Padding each As row by 4 floats puts the transposing stores of a warp in different banks.
constexpr int PAD = 4;

__global__ void __launch_bounds__(THREADS_2D)
sgemm_vectorized(int M, int N, int K, const float *A, const float *B, float *C) {
    __shared__ __align__(16) float As[BK][BM + PAD];
    __shared__ __align__(16) float Bs[BK][BN];
    int t = threadIdx.x;
    int trow = t / (BN / TN), tcol = t % (BN / TN);
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    bool a_vec = (K % 4 == 0), b_vec = (N % 4 == 0);
    int ar = t / (BK / 4), ac = (t % (BK / 4)) * 4;  // A tile 128x8: one float4 per thread
    int br = t / (BN / 4), bc = (t % (BN / 4)) * 4;  // B tile 8x128: one float4 per thread
    float acc[TM][TN] = {{0.0f}}, a_reg[TM], b_reg[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        float4 a4 = load4(A, M, K, row0 + ar, k0 + ac, a_vec);
        As[ac + 0][ar] = a4.x;  // transpose on the way into shared memory
        As[ac + 1][ar] = a4.y;
        As[ac + 2][ar] = a4.z;
        As[ac + 3][ar] = a4.w;
        *reinterpret_cast<float4 *>(&Bs[br][bc]) = load4(B, K, N, k0 + br, col0 + bc, b_vec);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
            for (int i = 0; i < TM; i += 4)
                *reinterpret_cast<float4 *>(&a_reg[i]) =
                    *reinterpret_cast<const float4 *>(&As[kk][trow * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4 *>(&b_reg[j]) =
                    *reinterpret_cast<const float4 *>(&Bs[kk][tcol * TN + j]);
            outer_product(acc, a_reg, b_reg);  // step 5's multiply-adds
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        int r = row0 + trow * TM + i;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            int c = col0 + tcol * TN + j;
            float *dst = &C[(size_t)r * N + c];
            if (b_vec && c + 3 < N) {
                *reinterpret_cast<float4 *>(dst) =
                    make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
            } else {
                for (int q = 0; q < 4 && c + q < N; ++q) dst[q] = acc[i][j + q];
            }
        }
    }
}
// --8<-- [end:vectorized]

inline void launch_vectorized(int M, int N, int K, const float *A, const float *B, float *C) {
    sgemm_vectorized<<<dim3(CEIL_DIV(N, BN), CEIL_DIV(M, BM)), THREADS_2D>>>(M, N, K, A, B, C);
}
