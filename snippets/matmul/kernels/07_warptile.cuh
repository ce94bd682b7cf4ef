// Step 7: warp tiles and double buffering, a template over every tile size (the tuning grid),
// with an optional split of K across blocks for sizes whose tiles leave SMs idle.
#pragma once
#include "common.cuh"
#include "06_vectorized.cuh"  // PAD

// --8<-- [start:warptile]
// Warp tiling plus double buffering. The block's tile is split among warps (WM x WN each), and
// each warp's tile into WMITER x WNITER sub-tiles in which lane (lr, lc) owns a TM x TN piece:
// a warp's shared-memory reads are then 8 (A) and 4 (B) contiguous float4s, with no bank
// conflicts. Two shared-memory buffers let the global loads of tile k+1 be in flight while
// tile k is multiplied; one barrier per step instead of two. With SPLIT > 1, block z of the
// grid's third dimension sums only its share of K and writes it to C + z * M * N (a workspace
// that split_k_sum then adds up). EDGE = 1: blocks on the bottom and right edges load their
// tiles without guards too (below).
template <int BM_, int BN_, int BK_, int WM, int WN, int WMITER, int WNITER, int TM_, int TN_,
          int THREADS, int MIN_BLOCKS, int GROUP, int EDGE = 0>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_warptile(int M, int N, int K, int k_chunk, const float *A, const float *B, float *C) {
    constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;   // one sub-tile of a warp
    constexpr int LANES_N = WSUBN / TN_;                      // lanes along a sub-tile's row
    static_assert((WSUBM / TM_) * LANES_N == 32, "a sub-tile must hold exactly 32 lanes");
    static_assert((BM_ / WM) * (BN_ / WN) * 32 == THREADS, "warps must cover the block tile");
    static_assert(TM_ % 4 == 0 && TN_ % 4 == 0 && BK_ % 4 == 0, "float4 granularity");
    constexpr int A_LOADS = BM_ * BK_ / 4 / THREADS, B_LOADS = BK_ * BN_ / 4 / THREADS;
    static_assert(A_LOADS * THREADS * 4 == BM_ * BK_ && B_LOADS * THREADS * 4 == BK_ * BN_,
                  "every thread loads the same number of float4s");

    __shared__ __align__(16) float As[2][BK_][BM_ + PAD];
    __shared__ __align__(16) float Bs[2][BK_][BN_];
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int wrow = warp / (BN_ / WN), wcol = warp % (BN_ / WN);
    const int lr = lane / LANES_N, lc = lane % LANES_N;
    int tile_row, tile_col;
    block_tile<GROUP>(tile_row, tile_col);
    const int row0 = tile_row * BM_, col0 = tile_col * BN_;
    const bool a_vec = (K % 4 == 0), b_vec = (N % 4 == 0);
    const int k_begin = blockIdx.z * k_chunk, k_end = min(K, k_begin + k_chunk);
    C += (size_t)blockIdx.z * M * N;

    float4 a_stage[A_LOADS], b_stage[B_LOADS];  // the next tiles, on their way to shared memory
    // A block whose tiles lie wholly inside A and B (all but the edge blocks) loads without
    // guards: one uniform branch per tile instead of load4's guards on every float4, whose
    // branches cost more than their instructions (they starve the warp schedulers of
    // instructions: see "Tuning" on the page). Rows whose length is not a multiple of 4 floats
    // are not 16-byte aligned: four 4-byte loads then, still without guards.
    const bool inner = row0 + BM_ <= M && col0 + BN_ <= N;
    auto fetch = [&](int k0) {
        if (inner && k0 + BK_ <= K) {
#pragma unroll
            for (int l = 0; l < A_LOADS; ++l) {
                int i = t + l * THREADS, r = i / (BK_ / 4), c = (i % (BK_ / 4)) * 4;
                a_stage[l] = load4_inside(&A[(size_t)(row0 + r) * K + k0 + c], a_vec);
            }
#pragma unroll
            for (int l = 0; l < B_LOADS; ++l) {
                int i = t + l * THREADS, r = i / (BN_ / 4), c = (i % (BN_ / 4)) * 4;
                b_stage[l] = load4_inside(&B[(size_t)(k0 + r) * N + col0 + c], b_vec);
            }
            return;
        }
        // EDGE: an edge block's rows past M read row M - 1 and its columns past N column N - 1,
        // without a branch; those values only reach results that are never stored. Only the
        // last tile along K, which must read zeros past K, keeps load4's guards.
        if (EDGE && k0 + BK_ <= K) {
#pragma unroll
            for (int l = 0; l < A_LOADS; ++l) {
                int i = t + l * THREADS, r = i / (BK_ / 4), c = (i % (BK_ / 4)) * 4;
                a_stage[l] = load4_inside(&A[(size_t)min(row0 + r, M - 1) * K + k0 + c], a_vec);
            }
#pragma unroll
            for (int l = 0; l < B_LOADS; ++l) {
                int i = t + l * THREADS, r = i / (BN_ / 4), c = col0 + (i % (BN_ / 4)) * 4;
                const float *row = &B[(size_t)(k0 + r) * N];
                auto at = [&](int j) { return row[min(j, N - 1)]; };
                b_stage[l] = b_vec && c + 3 < N ? *reinterpret_cast<const float4 *>(row + c)
                                                : make_float4(at(c), at(c + 1), at(c + 2), at(c + 3));
            }
            return;
        }
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            int i = t + l * THREADS, r = i / (BK_ / 4), c = (i % (BK_ / 4)) * 4;
            a_stage[l] = load4(A, M, K, row0 + r, k0 + c, a_vec);
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            int i = t + l * THREADS, r = i / (BN_ / 4), c = (i % (BN_ / 4)) * 4;
            b_stage[l] = load4(B, K, N, k0 + r, col0 + c, b_vec);
        }
    };
    auto stash = [&](int buf) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            int i = t + l * THREADS, r = i / (BK_ / 4), c = (i % (BK_ / 4)) * 4;
            As[buf][c + 0][r] = a_stage[l].x;
            As[buf][c + 1][r] = a_stage[l].y;
            As[buf][c + 2][r] = a_stage[l].z;
            As[buf][c + 3][r] = a_stage[l].w;
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            int i = t + l * THREADS, r = i / (BN_ / 4), c = (i % (BN_ / 4)) * 4;
            *reinterpret_cast<float4 *>(&Bs[buf][r][c]) = b_stage[l];
        }
    };

    float acc[WMITER * TM_][WNITER * TN_] = {{0.0f}};
    float a_reg[WMITER * TM_], b_reg[WNITER * TN_];
    fetch(k_begin);
    stash(0);
    __syncthreads();
    int buf = 0;
    for (int k0 = k_begin; k0 < k_end; k0 += BK_) {
        bool more = k0 + BK_ < k_end;
        if (more) fetch(k0 + BK_);  // global loads in flight during the arithmetic below
#pragma unroll
        for (int kk = 0; kk < BK_; ++kk) {
#pragma unroll
            for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
                for (int i = 0; i < TM_; i += 4)
                    *reinterpret_cast<float4 *>(&a_reg[wm * TM_ + i]) =
                        *reinterpret_cast<const float4 *>(
                            &As[buf][kk][wrow * WM + wm * WSUBM + lr * TM_ + i]);
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                for (int j = 0; j < TN_; j += 4)
                    *reinterpret_cast<float4 *>(&b_reg[wn * TN_ + j]) =
                        *reinterpret_cast<const float4 *>(
                            &Bs[buf][kk][wcol * WN + wn * WSUBN + lc * TN_ + j]);
#pragma unroll
            for (int i = 0; i < WMITER * TM_; ++i)
#pragma unroll
                for (int j = 0; j < WNITER * TN_; ++j) acc[i][j] += a_reg[i] * b_reg[j];
        }
        if (more) stash(buf ^ 1);  // the other buffer: nobody reads it in this step
        __syncthreads();
        buf ^= 1;
    }
#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < TM_; ++i) {
            int r = row0 + wrow * WM + wm * WSUBM + lr * TM_ + i;
            if (r >= M) continue;
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                for (int j = 0; j < TN_; j += 4) {
                    int c = col0 + wcol * WN + wn * WSUBN + lc * TN_ + j;
                    const float *v = &acc[wm * TM_ + i][wn * TN_ + j];
                    float *dst = &C[(size_t)r * N + c];
                    if (b_vec && c + 3 < N) {
                        *reinterpret_cast<float4 *>(dst) = make_float4(v[0], v[1], v[2], v[3]);
                    } else {
                        for (int q = 0; q < 4 && c + q < N; ++q) dst[q] = v[q];
                    }
                }
        }
}
// --8<-- [end:warptile]

// split = 1: one block per tile of C. split > 1: up to `split` blocks per tile, each over a
// chunk of K (a multiple of BK), writing partial tiles to a workspace that split_k_sum adds
// into C.
template <int BM_, int BN_, int BK_, int WM, int WN, int WMITER, int WNITER, int TM_, int TN_,
          int THREADS, int MIN_BLOCKS, int GROUP, int EDGE = 0>
void run_warptile(int split, int M, int N, int K, const float *A, const float *B, float *C) {
    const int k_chunk = CEIL_DIV(CEIL_DIV(K, split), BK_) * BK_;
    const int splits = CEIL_DIV(K, k_chunk);  // <= split
    dim3 grid(CEIL_DIV(N, BN_), CEIL_DIV(M, BM_), splits);
    float *out = splits > 1 ? split_k_workspace((size_t)splits * M * N) : C;
    sgemm_warptile<BM_, BN_, BK_, WM, WN, WMITER, WNITER, TM_, TN_, THREADS, MIN_BLOCKS, GROUP, EDGE>
        <<<grid, THREADS>>>(M, N, K, k_chunk, A, B, out);
    if (splits > 1) split_k_sum(M, N, splits, out, C);
}

// One tuning instance: every tile size, the split and the edge blocks' loads fixed.
template <int BM_, int BN_, int BK_, int WM, int WN, int WMITER, int WNITER, int TM_, int TN_,
          int THREADS, int MIN_BLOCKS = 2, int GROUP = 1, int SPLIT = 1, int EDGE = 0>
void launch_warptile(int M, int N, int K, const float *A, const float *B, float *C) {
    run_warptile<BM_, BN_, BK_, WM, WN, WMITER, WNITER, TM_, TN_, THREADS, MIN_BLOCKS, GROUP, EDGE>(
        SPLIT, M, N, K, A, B, C);
}

// --8<-- [start:auto]
// The published FP32 kernel: 8 warps of 64x64 results per SM, in one of three block tiles chosen
// per size by the wave model (common.cuh), with the choices of the tuning run:
// - 128x256 tiles fill less than half the block slots (1024^3: 32 tiles for 132 SMs): 128x128
//   tiles, two blocks per SM, and K split so that the blocks fill the slots;
// - otherwise 256x128 tiles if they leave fewer slots idle in the last wave than 128x256
//   (3001x4099x2053: exactly 3 waves against 3.09), else 128x256.
inline void launch_warptile_auto(int M, int N, int K, const float *A, const float *B, float *C) {
    const long slots = sm_count();  // one block per SM for the big tiles
    const long wide = (long)CEIL_DIV(M, 128) * CEIL_DIV(N, 256);
    const long tall = (long)CEIL_DIV(M, 256) * CEIL_DIV(N, 128);
    const long small = (long)CEIL_DIV(M, 128) * CEIL_DIV(N, 128);
    if (wave_use(wide, slots) < 0.5)
        run_warptile<128, 128, 16, 64, 64, 2, 2, 8, 4, 128, 2, 1>(
            choose_split(small, 2 * slots, K, 4, 256), M, N, K, A, B, C);
    else if (wave_use(tall, slots) > wave_use(wide, slots) + 0.02)
        run_warptile<256, 128, 16, 64, 64, 1, 4, 8, 4, 256, 1, 1>(1, M, N, K, A, B, C);
    else
        run_warptile<128, 256, 16, 64, 64, 1, 2, 8, 8, 256, 1, 1>(1, M, N, K, A, B, C);
}
// --8<-- [end:auto]
