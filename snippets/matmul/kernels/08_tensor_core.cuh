// Step 8: tensor cores through mma.sync, BF16 inputs and FP32 results.
#pragma once
#include <cuda_bf16.h>

#include "common.cuh"

// --8<-- [start:tensor_core]
// Tensor cores: BF16 inputs, FP32 accumulation, with the warp-level mma.sync instruction
// (m16n8k16: a 16x16 tile of A times a 16x8 tile of B per instruction and warp). The block
// tile is BM x BN, stepped along K by BK; STAGES tiles are in flight at once, copied from
// global to shared memory by cp.async (no registers on the way). ldmatrix loads the
// fragments each lane needs for mma.sync; the 16-byte chunks of each shared row are XOR-
// swizzled so that the 8 rows one ldmatrix phase reads sit in 8 different bank groups.
// A is M x K (row stride lda); B comes transposed, N x K (row stride ldb), the way a Linear
// layer stores its weight, so both are read along K. Both are BF16 with lda, ldb multiples of
// 8 and zero padding past K; C is M x N FP32.

// 16 bytes global -> shared, bypassing L1 and registers; src_bytes 0 writes zeros.
__device__ __forceinline__ void cp_async16(unsigned dst, const void *src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
    asm(  // not volatile: registers in, registers out, so the compiler may schedule it freely
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Physical 16-byte chunk of logical chunk c in row r of a tile with CHUNKS chunks per row.
template <int CHUNKS>
__device__ __forceinline__ int swizzle(int r, int c) {
    static_assert(CHUNKS == 4 || CHUNKS % 8 == 0, "rows of 64 bytes or multiples of 128");
    return CHUNKS == 4 ? c ^ ((r >> 1) & 3) : c ^ (r & 7);
}

template <int BM_, int BN_, int BK_, int WM, int WN, int STAGES, int GROUP>
__global__ void __launch_bounds__((BM_ / WM) * (BN_ / WN) * 32)
gemm_bf16_tc(int M, int N, int K, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *B,
             int ldb, float *C) {
    constexpr int THREADS = (BM_ / WM) * (BN_ / WN) * 32;
    constexpr int MI = WM / 16, NI = WN / 8;            // mma tiles per warp
    constexpr int ACH = BK_ / 8;                        // 16-byte chunks per shared row
    constexpr int A_CP = BM_ * ACH / THREADS, B_CP = BN_ * ACH / THREADS;
    static_assert(A_CP * THREADS == BM_ * ACH && B_CP * THREADS == BN_ * ACH, "even copies");
    static_assert(NI % 2 == 0 && BK_ % 16 == 0, "B fragments come in pairs of n8 tiles");
    extern __shared__ __align__(128) unsigned char smem[];
    __nv_bfloat16 *As = reinterpret_cast<__nv_bfloat16 *>(smem);   // [STAGES][BM][BK]
    __nv_bfloat16 *Bs = As + STAGES * BM_ * BK_;                    // [STAGES][BN][BK]

    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int wrow = warp / (BN_ / WN), wcol = warp % (BN_ / WN);
    int tile_row, tile_col;
    block_tile<GROUP>(tile_row, tile_col);
    const int row0 = tile_row * BM_, col0 = tile_col * BN_;
    const int ktiles = (K + BK_ - 1) / BK_;

    auto load_tile = [&](int stage, int kt) {
        const int k0 = kt * BK_;
#pragma unroll
        for (int l = 0; l < A_CP; ++l) {
            int i = t + l * THREADS, r = i / ACH, c = i % ACH;
            int gr = row0 + r, gk = k0 + c * 8;
            bool in = gr < M && gk < lda;
            cp_async16(smem_addr(As + (stage * BM_ + r) * BK_ + swizzle<ACH>(r, c) * 8),
                       in ? A + (size_t)gr * lda + gk : A, in ? 16 : 0);
        }
#pragma unroll
        for (int l = 0; l < B_CP; ++l) {  // B^T: rows are columns n of B, K along each row
            int i = t + l * THREADS, r = i / ACH, c = i % ACH;
            int gn = col0 + r, gk = k0 + c * 8;
            bool in = gn < N && gk < ldb;
            cp_async16(smem_addr(Bs + (stage * BN_ + r) * BK_ + swizzle<ACH>(r, c) * 8),
                       in ? B + (size_t)gn * ldb + gk : B, in ? 16 : 0);
        }
    };

    float acc[MI][NI][4] = {};
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {  // fill the pipeline
        if (s < ktiles) load_tile(s, s);
        asm volatile("cp.async.commit_group;\n");
    }
    for (int kt = 0; kt < ktiles; ++kt) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));  // tile kt has landed
        __syncthreads();  // ... for every thread, and everyone is done with tile kt - 1
        if (kt + STAGES - 1 < ktiles) load_tile((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
        asm volatile("cp.async.commit_group;\n");
        const int stage = kt % STAGES;
        const __nv_bfloat16 *as = As + stage * BM_ * BK_, *bs = Bs + stage * BN_ * BK_;
        // Fragments of k-step s + 1 are loaded before the mma.sync of step s is issued, so
        // shared-memory latency overlaps tensor-core work (two register sets, a and b).
        unsigned a[2][MI][4], b[2][NI][2];
        auto load_fragments = [&](int set, int kk) {
#pragma unroll
            for (int mi = 0; mi < MI; ++mi) {  // rows lane % 16, k half lane / 16
                int r = wrow * WM + mi * 16 + lane % 16, c = kk / 8 + lane / 16;
                ldmatrix_x4(a[set][mi], smem_addr(as + r * BK_ + swizzle<ACH>(r, c) * 8));
            }
#pragma unroll
            for (int ni = 0; ni < NI; ni += 2) {  // n rows lane % 8 (+8 for lanes 16..31), k half (lane / 8) % 2
                int r = wcol * WN + ni * 8 + lane % 8 + lane / 16 * 8, c = kk / 8 + lane / 8 % 2;
                unsigned q[4];
                ldmatrix_x4(q, smem_addr(bs + r * BK_ + swizzle<ACH>(r, c) * 8));
                b[set][ni][0] = q[0], b[set][ni][1] = q[1];
                b[set][ni + 1][0] = q[2], b[set][ni + 1][1] = q[3];
            }
        };
        load_fragments(0, 0);
#pragma unroll
        for (int s = 0; s < BK_ / 16; ++s) {
            if (s + 1 < BK_ / 16) load_fragments((s + 1) % 2, (s + 1) * 16);
#pragma unroll
            for (int mi = 0; mi < MI; ++mi)
#pragma unroll
                for (int ni = 0; ni < NI; ++ni)
                    mma_bf16(acc[mi][ni], a[s % 2][mi], b[s % 2][ni][0], b[s % 2][ni][1]);
        }
    }
    asm volatile("cp.async.wait_group 0;\n");
    // Each lane holds rows lane/4 and lane/4 + 8, columns 2*(lane%4) and +1, of every tile.
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                int r = row0 + wrow * WM + mi * 16 + lane / 4 + h * 8;
                int c = col0 + wcol * WN + ni * 8 + (lane % 4) * 2;
                if (r >= M) continue;
                float *dst = &C[(size_t)r * N + c];
                if (N % 2 == 0 && c + 1 < N) {
                    *reinterpret_cast<float2 *>(dst) =
                        make_float2(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
                } else {
                    if (c < N) dst[0] = acc[mi][ni][2 * h];
                    if (c + 1 < N) dst[1] = acc[mi][ni][2 * h + 1];
                }
            }
}
// --8<-- [end:tensor_core]

template <int BM_, int BN_, int BK_, int WM, int WN, int STAGES, int GROUP = 1>
void launch_tc(int M, int N, int K, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *B,
               int ldb, float *C) {
    constexpr int smem = STAGES * (BM_ + BN_) * BK_ * (int)sizeof(__nv_bfloat16);
    static bool opted_in = false;  // more than 48 KiB of shared memory needs an opt-in
    if (!opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(gemm_bf16_tc<BM_, BN_, BK_, WM, WN, STAGES, GROUP>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        opted_in = true;
    }
    dim3 grid(CEIL_DIV(N, BN_), CEIL_DIV(M, BM_));
    gemm_bf16_tc<BM_, BN_, BK_, WM, WN, STAGES, GROUP>
        <<<grid, (BM_ / WM) * (BN_ / WN) * 32, smem>>>(M, N, K, A, lda, B, ldb, C);
}
