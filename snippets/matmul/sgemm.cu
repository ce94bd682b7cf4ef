// Matrix product C = A @ B (row-major, any M, N, K): seven FP32 kernels from naive to warp-tiled
// and two BF16 tensor-core kernels (mma.sync; wgmma fed by TMA), each checked against a float64
// reference on the GPU and then timed, with cuBLAS (FP32, TF32, BF16) as the yardstick.
//
// Build: nvcc -O3 -arch=sm_90a -o build/sgemm snippets/matmul/sgemm.cu             (kernels only)
//        nvcc -O3 -arch=sm_90a -DWITH_CUBLAS -o build/sgemm snippets/matmul/sgemm.cu -lcublas
// Run:   ./build/sgemm [--kernel NAME,...] [--repeats N] [--budget S] [--bench] SIZE [SIZE ...]
//        SIZE is N (square) or MxNxK, for example 4096 or 3001x4099x2053.
// --8<-- [start:imports]
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // CUtensorMap and the type of cuTensorMapEncodeTiled (no -lcuda needed)
#ifdef WITH_CUBLAS
#include <cublas_v2.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>
// --8<-- [end:imports]

// --8<-- [start:check]
#define CUDA_CHECK(call)                                                                    \
    do {                                                                                    \
        cudaError_t err_ = (call);                                                          \
        if (err_ != cudaSuccess) {                                                          \
            fprintf(stderr, "CUDA error: %s (%s) at %s:%d\n", cudaGetErrorName(err_),       \
                    cudaGetErrorString(err_), __FILE__, __LINE__);                          \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)
// --8<-- [end:check]

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

// --8<-- [start:naive]
// One thread per element of C. threadIdx.x walks down a column of C: the 32 threads of a warp
// read 32 different rows of A (addresses K floats apart), so no two loads share a cache line.
__global__ void sgemm_naive(int M, int N, int K, const float *A, const float *B, float *C) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        C[(size_t)row * N + col] = acc;
    }
}
// --8<-- [end:naive]

// --8<-- [start:coalesced]
// Same arithmetic; threadIdx.x now walks along a row of C. A warp reads one element of A
// (a broadcast) and 32 neighbouring elements of B (one 128-byte line), and writes one line of C.
__global__ void sgemm_coalesced(int M, int N, int K, const float *A, const float *B, float *C) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        C[(size_t)row * N + col] = acc;
    }
}
// --8<-- [end:coalesced]

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

// --8<-- [start:blocktile_2d]
// Each thread computes an 8x8 tile of C: per step along K it loads 8 values of A and 8 of B
// into registers and does 64 multiply-adds with them (an outer product).
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int THREADS_2D = (BM / TM) * (BN / TN);  // 256

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
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a_reg[i] * b_reg[j];
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

// --8<-- [start:load4]
// Four consecutive floats of row `r`, columns c..c+3, of a rows x cols row-major matrix:
// one 16-byte load when the row length allows aligned float4 access and all four are inside,
// otherwise four guarded loads (zeros outside the matrix).
__device__ __forceinline__ float4 load4(const float *X, int rows, int cols, int r, int c,
                                        bool vec_ok) {
    if (r < rows && vec_ok && c + 3 < cols)
        return *reinterpret_cast<const float4 *>(&X[(size_t)r * cols + c]);
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (r < rows) {
        const float *p = &X[(size_t)r * cols];
        if (c + 0 < cols) v.x = p[c + 0];
        if (c + 1 < cols) v.y = p[c + 1];
        if (c + 2 < cols) v.z = p[c + 2];
        if (c + 3 < cols) v.w = p[c + 3];
    }
    return v;
}
// --8<-- [end:load4]

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
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a_reg[i] * b_reg[j];
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

// --8<-- [start:swizzle]
// The tile of C this block computes. GROUP = 1: block (x, y) takes tile column x, row y.
// GROUP > 1: blocks are taken in launch order and walk down GROUP tile rows before moving one
// tile column right, so the blocks resident at one time share tiles of A and B in L2.
template <int GROUP>
__device__ __forceinline__ void block_tile(int &tile_row, int &tile_col) {
    if (GROUP <= 1) {
        tile_row = blockIdx.y, tile_col = blockIdx.x;
        return;
    }
    const int tiles_m = gridDim.y, tiles_n = gridDim.x;
    const int id = blockIdx.y * tiles_n + blockIdx.x, per_group = GROUP * tiles_n;
    const int first = id / per_group * GROUP, rows = min(tiles_m - first, GROUP);
    tile_row = first + id % per_group % rows;
    tile_col = id % per_group / rows;
}
// --8<-- [end:swizzle]

// --8<-- [start:warptile]
// Warp tiling plus double buffering. The block's tile is split among warps (WM x WN each), and
// each warp's tile into WMITER x WNITER sub-tiles in which lane (lr, lc) owns a TM x TN piece:
// a warp's shared-memory reads are then 8 (A) and 4 (B) contiguous float4s, with no bank
// conflicts. Two shared-memory buffers let the global loads of tile k+1 be in flight while
// tile k is multiplied; one barrier per step instead of two.
template <int BM_, int BN_, int BK_, int WM, int WN, int WMITER, int WNITER, int TM_, int TN_,
          int THREADS, int MIN_BLOCKS, int GROUP>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_warptile(int M, int N, int K, const float *A, const float *B, float *C) {
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

    float4 a_stage[A_LOADS], b_stage[B_LOADS];  // the next tiles, on their way to shared memory
    // A block whose tiles lie wholly inside A and B (all but the edge blocks, when N and K are
    // multiples of 4) uses plain 16-byte loads: one uniform branch per tile instead of load4's
    // guards on every float4, whose branches cost more than their instructions (they starve
    // the warp schedulers of instructions: see "Tuning" on the page).
    const bool inner = a_vec && b_vec && row0 + BM_ <= M && col0 + BN_ <= N;
    auto fetch = [&](int k0) {
        if (inner && k0 + BK_ <= K) {
#pragma unroll
            for (int l = 0; l < A_LOADS; ++l) {
                int i = t + l * THREADS, r = i / (BK_ / 4), c = (i % (BK_ / 4)) * 4;
                a_stage[l] = *reinterpret_cast<const float4 *>(&A[(size_t)(row0 + r) * K + k0 + c]);
            }
#pragma unroll
            for (int l = 0; l < B_LOADS; ++l) {
                int i = t + l * THREADS, r = i / (BN_ / 4), c = (i % (BN_ / 4)) * 4;
                b_stage[l] = *reinterpret_cast<const float4 *>(&B[(size_t)(k0 + r) * N + col0 + c]);
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
    fetch(0);
    stash(0);
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < K; k0 += BK_) {
        bool more = k0 + BK_ < K;
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
__device__ __forceinline__ unsigned smem_addr(const void *p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

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


// --8<-- [start:wgmma]
// Hopper's own path. The Tensor Memory Accelerator (TMA) copies whole tiles from global to
// shared memory, issued by one thread, and wgmma.mma_async multiplies a 64 x 256 tile per
// warpgroup (4 warps) straight from shared memory, with no fragments in registers. Warp
// specialisation: warpgroup 0 only issues copies, warpgroups 1 and 2 only multiply; STAGES
// tiles are in flight, handed between them with mbarriers ("full": the copy has landed;
// "empty": both multipliers are done with it). Both operands are read along K (B comes as
// B^T, N x K), in the 128-byte-swizzled layout that TMA writes and wgmma reads. Needs sm_90a.
namespace hopper {
constexpr int BM = 128, BN = 256, BK = 64;                  // block tile; BK * 2 B = one 128 B row
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2;  // one stage: 16 KiB + 32 KiB

__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
}

__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile("{\n .reg .pred p;\n"
                     " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

__device__ __forceinline__ void mbar_expect_bytes(uint64_t *bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
                 ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

// One box of the tensor map (64 K-values x rows) into shared memory; bar counts its bytes.
__device__ __forceinline__ void tma_load(void *dst, const CUtensorMap *map, int k, int row,
                                         uint64_t *bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(smem_addr(dst)), "l"(map), "r"(k), "r"(row), "r"(smem_addr(bar))
                 : "memory");
}

// Shared-memory matrix descriptor: start address, 8-row groups 1024 bytes apart, 128 B swizzle.
__device__ __forceinline__ uint64_t descriptor(const void *tile) {
    return (uint64_t)((smem_addr(tile) & 0x3FFFF) >> 4) | (uint64_t)1 << 16 |
           (uint64_t)(1024 >> 4) << 32 | (uint64_t)1 << 62;
}

// d (64 x 256, FP32, 128 registers a thread) += A (64 x 16) * B (16 x 256), both from shared.
__device__ __forceinline__ void wgmma_64x256x16(float (&d)[128], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(a), "l"(b), "r"(1));
}

template <int STAGES, int GROUP, int IN_FLIGHT>
__global__ void __launch_bounds__(384, 1)
gemm_bf16_wgmma(int M, int N, int K, const __grid_constant__ CUtensorMap map_a,
                const __grid_constant__ CUtensorMap map_bt, float *C) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    // 128-byte swizzling repeats every 1024 bytes: tiles start on a multiple of that.
    unsigned char *smem = smem_raw + ((1024 - smem_addr(smem_raw) % 1024) % 1024);
    auto tile_a = [&](int s) { return smem + s * (A_BYTES + B_BYTES); };
    auto tile_b = [&](int s) { return smem + s * (A_BYTES + B_BYTES) + A_BYTES; };
    const int wg = threadIdx.x / 128, ktiles = (K + BK - 1) / BK;
    int tile_row, tile_col;
    block_tile<GROUP>(tile_row, tile_col);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], 2);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {  // producer: few registers needed, give them to the multipliers
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < ktiles; ++kt) {
                const int s = kt % STAGES;
                if (kt >= STAGES) mbar_wait(&empty[s], (kt / STAGES + 1) % 2);  // stage is free
                mbar_expect_bytes(&full[s], A_BYTES + B_BYTES);
                tma_load(tile_a(s), &map_a, kt * BK, tile_row * BM, &full[s]);
                tma_load(tile_b(s), &map_bt, kt * BK, tile_col * BN, &full[s]);
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    float d[128] = {};
    for (int kt = 0; kt < ktiles; ++kt) {  // consumer: rows (wg - 1) * 64 .. + 64 of the tile
        const int s = kt % STAGES;
        mbar_wait(&full[s], kt / STAGES % 2);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int j = 0; j < BK / 16; ++j)  // k16 step j starts 32 bytes further along each row
            wgmma_64x256x16(d, descriptor(tile_a(s) + (wg - 1) * 64 * BK * 2 + 32 * j),
                            descriptor(tile_b(s) + 32 * j));
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        // Wait until at most IN_FLIGHT groups are still running; the stage of the group that
        // has finished goes back to the producer.
        asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(IN_FLIGHT) : "memory");
        if (kt >= IN_FLIGHT && threadIdx.x % 128 == 0) mbar_arrive(&empty[(kt - IN_FLIGHT) % STAGES]);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
    for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");  // d is final here
    // Accumulator layout: warp w of the group holds rows 16w + lane/4 (+8), and in each n8
    // column block j the columns 8j + 2*(lane%4) and +1: d[4j], d[4j+1] then d[4j+2], d[4j+3].
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const int row = tile_row * BM + (wg - 1) * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = row + 8 * h, c = tile_col * BN + 8 * j + 2 * (lane % 4);
            if (r >= M) continue;
            float *dst = &C[(size_t)r * N + c];
            if (N % 2 == 0 && c + 1 < N) {
                *reinterpret_cast<float2 *>(dst) = make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
            } else {
                if (c < N) dst[0] = d[4 * j + 2 * h];
                if (c + 1 < N) dst[1] = d[4 * j + 2 * h + 1];
            }
        }
#else
    __trap();  // built without sm_90a: the host never launches this (see compiled_for_sm90a)
#endif
}

__global__ void compiled_for_sm90a(int *yes) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    *yes = 1;
#else
    *yes = 0;
#endif
}
}  // namespace hopper
// --8<-- [end:wgmma]


// --8<-- [start:launch]
// How each kernel is launched: grid and block shapes follow from its tile sizes.
using Launcher = void (*)(int, int, int, const float *, const float *, float *);
using LauncherBf16 = void (*)(int, int, int, const __nv_bfloat16 *, int, const __nv_bfloat16 *,
                              int, float *);

template <int BM_, int BN_, int BK_, int WM, int WN, int WMITER, int WNITER, int TM_, int TN_,
          int THREADS, int MIN_BLOCKS = 2, int GROUP = 1>
void launch_warptile(int M, int N, int K, const float *A, const float *B, float *C) {
    dim3 grid(CEIL_DIV(N, BN_), CEIL_DIV(M, BM_));
    sgemm_warptile<BM_, BN_, BK_, WM, WN, WMITER, WNITER, TM_, TN_, THREADS, MIN_BLOCKS, GROUP>
        <<<grid, THREADS>>>(M, N, K, A, B, C);
}

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

// A 2-D tensor map over a rows x K BF16 matrix (row stride ld): boxes of 64 K-values x box_rows,
// 128-byte swizzled, zeros past the edges. The driver's encoder is fetched through the runtime.
static CUtensorMap tensor_map(const __nv_bfloat16 *X, int rows, int K, int ld, int box_rows) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    if (!encode) {
        cudaDriverEntryPointQueryResult found;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled",
                                                    reinterpret_cast<void **>(&encode), 12000,
                                                    cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess) {
            fprintf(stderr, "error: this driver has no cuTensorMapEncodeTiled (TMA)\n");
            exit(1);
        }
    }
    CUtensorMap map;
    cuuint64_t dims[2] = {(cuuint64_t)K, (cuuint64_t)rows}, stride[1] = {(cuuint64_t)ld * 2};
    cuuint32_t box[2] = {hopper::BK, (cuuint32_t)box_rows}, step[2] = {1, 1};
    if (encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<__nv_bfloat16 *>(X), dims,
               stride, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
        fprintf(stderr, "error: cuTensorMapEncodeTiled rejected a %d x %d matrix\n", rows, K);
        exit(1);
    }
    return map;
}

template <int STAGES, int GROUP = 1, int IN_FLIGHT = 1>
void launch_wgmma(int M, int N, int K, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *Bt,
                  int ldb, float *C) {
    constexpr int smem = STAGES * (hopper::A_BYTES + hopper::B_BYTES) + 1024;  // + alignment
    static bool opted_in = false;
    if (!opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(hopper::gemm_bf16_wgmma<STAGES, GROUP, IN_FLIGHT>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        opted_in = true;
    }
    // Encoding a map is host work of a few microseconds: done once per matrix, not per call.
    static const void *last_a = nullptr, *last_b = nullptr;
    static int last[3] = {};
    static CUtensorMap map_a, map_bt;
    if (A != last_a || Bt != last_b || last[0] != M || last[1] != N || last[2] != K) {
        map_a = tensor_map(A, M, K, lda, hopper::BM);
        map_bt = tensor_map(Bt, N, K, ldb, hopper::BN);
        last_a = A, last_b = Bt, last[0] = M, last[1] = N, last[2] = K;
    }
    dim3 grid(CEIL_DIV(N, hopper::BN), CEIL_DIV(M, hopper::BM));
    hopper::gemm_bf16_wgmma<STAGES, GROUP, IN_FLIGHT><<<grid, 384, smem>>>(M, N, K, map_a, map_bt, C);
}

struct Kernel {
    const char *name;
    Launcher launch;          // FP32 kernels: float inputs
    LauncherBf16 launch_bf16; // tensor-core kernels: BF16 inputs, FP32 output
    bool published;           // in the progression (run by default); others are tuning variants
};

const Kernel KERNELS[] = {
    {"naive", [](int M, int N, int K, const float *A, const float *B, float *C) {
         sgemm_naive<<<dim3(CEIL_DIV(M, 32), CEIL_DIV(N, 32)), dim3(32, 32)>>>(M, N, K, A, B, C);
     }, nullptr, true},
    {"coalesced", [](int M, int N, int K, const float *A, const float *B, float *C) {
         sgemm_coalesced<<<dim3(CEIL_DIV(N, 32), CEIL_DIV(M, 32)), dim3(32, 32)>>>(M, N, K, A, B,
                                                                                  C);
     }, nullptr, true},
    {"smem", [](int M, int N, int K, const float *A, const float *B, float *C) {
         sgemm_smem<<<dim3(CEIL_DIV(N, TILE), CEIL_DIV(M, TILE)), dim3(TILE, TILE)>>>(M, N, K, A,
                                                                                     B, C);
     }, nullptr, true},
    {"blocktile_1d", [](int M, int N, int K, const float *A, const float *B, float *C) {
         sgemm_blocktile_1d<<<dim3(CEIL_DIV(N, BN1), CEIL_DIV(M, BM1)), BM1 * BN1 / TM1>>>(
             M, N, K, A, B, C);
     }, nullptr, true},
    {"blocktile_2d", [](int M, int N, int K, const float *A, const float *B, float *C) {
         sgemm_blocktile_2d<<<dim3(CEIL_DIV(N, BN), CEIL_DIV(M, BM)), THREADS_2D>>>(M, N, K, A,
                                                                                   B, C);
     }, nullptr, true},
    {"vectorized", [](int M, int N, int K, const float *A, const float *B, float *C) {
         sgemm_vectorized<<<dim3(CEIL_DIV(N, BN), CEIL_DIV(M, BM)), THREADS_2D>>>(M, N, K, A, B,
                                                                                 C);
     }, nullptr, true},
    // 128x256 block tile, BK 16, 8 warps of 64x64, each lane 1x4 sub-tiles of 8x4 (128 results),
    // one block per SM: the best of the tuning grid on the H200 (see docs/kernels/matmul.md).
    {"warptile", launch_warptile<128, 256, 16, 64, 64, 1, 4, 8, 4, 256, 1>, nullptr, true},
    // 128x128x32 block tile, 4 warps of 64x64, 4 tiles in flight, blocks in groups of 8 rows.
    {"tensor_core", nullptr, launch_tc<128, 128, 32, 64, 64, 4, 8>, true},
    // 128x256x64 block tile, TMA + wgmma, 4 stages, blocks in groups of 8 tile rows, one group
    // of wgmmas left running while the next is issued.
    {"wgmma", nullptr, launch_wgmma<4, 8, 1>, true},
    // Tuning variants, run only when named (see docs/kernels/matmul.md). FP32 warp tile:
    // wt_<BM>x<BN>x<BK>_<WM>x<WN>_<WMITER>x<WNITER>_<TM>x<TN>_<threads>_<min blocks per SM>
    // [_g<group of tile rows>]
    {"wt_128x128x16_64x32_2x2_4x4_256_2", launch_warptile<128, 128, 16, 64, 32, 2, 2, 4, 4, 256, 2>},
    {"wt_128x128x16_64x32_2x2_4x4_256_1", launch_warptile<128, 128, 16, 64, 32, 2, 2, 4, 4, 256, 1>},
    {"wt_128x128x8_64x32_2x2_4x4_256_2", launch_warptile<128, 128, 8, 64, 32, 2, 2, 4, 4, 256, 2>},
    {"wt_128x128x16_32x64_2x2_4x4_256_2", launch_warptile<128, 128, 16, 32, 64, 2, 2, 4, 4, 256, 2>},
    {"wt_128x128x16_64x32_1x2_8x4_256_2", launch_warptile<128, 128, 16, 64, 32, 1, 2, 8, 4, 256, 2>},
    {"wt_128x128x16_64x32_2x1_4x8_256_2", launch_warptile<128, 128, 16, 64, 32, 2, 1, 4, 8, 256, 2>},
    {"wt_128x128x16_64x64_1x4_8x4_128_2", launch_warptile<128, 128, 16, 64, 64, 1, 4, 8, 4, 128, 2>},
    {"wt_128x128x16_64x64_2x2_8x4_128_2", launch_warptile<128, 128, 16, 64, 64, 2, 2, 8, 4, 128, 2>},
    {"wt_128x256x8_64x64_2x2_8x4_256_1", launch_warptile<128, 256, 8, 64, 64, 2, 2, 8, 4, 256, 1>},
    {"wt_256x128x8_64x64_2x2_8x4_256_1", launch_warptile<256, 128, 8, 64, 64, 2, 2, 8, 4, 256, 1>},
    {"wt_64x128x16_32x64_2x2_4x4_128_3", launch_warptile<64, 128, 16, 32, 64, 2, 2, 4, 4, 128, 3>},
    {"wt_128x64x16_64x32_2x2_4x4_128_3", launch_warptile<128, 64, 16, 64, 32, 2, 2, 4, 4, 128, 3>},
    {"wt_128x256x8_64x64_1x2_8x8_256_1", launch_warptile<128, 256, 8, 64, 64, 1, 2, 8, 8, 256, 1>},
    {"wt_128x256x8_64x64_2x2_4x8_256_1", launch_warptile<128, 256, 8, 64, 64, 2, 2, 4, 8, 256, 1>},
    {"wt_128x256x8_64x64_1x4_8x4_256_1", launch_warptile<128, 256, 8, 64, 64, 1, 4, 8, 4, 256, 1>},
    {"wt_128x256x16_64x64_2x2_8x4_256_1", launch_warptile<128, 256, 16, 64, 64, 2, 2, 8, 4, 256, 1>},
    {"wt_128x256x16_64x64_1x2_8x8_256_1", launch_warptile<128, 256, 16, 64, 64, 1, 2, 8, 8, 256, 1>},
    {"wt_256x128x16_64x64_1x4_8x4_256_1", launch_warptile<256, 128, 16, 64, 64, 1, 4, 8, 4, 256, 1>},
    {"wt_128x256x8_64x64_2x2_8x4_256_1_g8",
     launch_warptile<128, 256, 8, 64, 64, 2, 2, 8, 4, 256, 1, 8>},
    {"wt_256x128x8_64x64_2x2_8x4_256_1_g8",
     launch_warptile<256, 128, 8, 64, 64, 2, 2, 8, 4, 256, 1, 8>},
    // Tensor-core tile: tc_<BM>x<BN>x<BK>_<WM>x<WN>_s<stages>[_g<group of tile rows>]
    {"tc_128x128x32_64x64_s3", nullptr, launch_tc<128, 128, 32, 64, 64, 3>},
    {"tc_128x128x32_64x64_s4", nullptr, launch_tc<128, 128, 32, 64, 64, 4>},
    {"tc_128x128x32_64x32_s3", nullptr, launch_tc<128, 128, 32, 64, 32, 3>},
    {"tc_128x128x32_64x32_s4", nullptr, launch_tc<128, 128, 32, 64, 32, 4>},
    {"tc_128x256x32_64x64_s3", nullptr, launch_tc<128, 256, 32, 64, 64, 3>},
    {"tc_256x128x32_64x64_s3", nullptr, launch_tc<256, 128, 32, 64, 64, 3>},
    {"tc_128x128x64_64x64_s3", nullptr, launch_tc<128, 128, 64, 64, 64, 3>},
    {"tc_128x256x64_64x64_s3", nullptr, launch_tc<128, 256, 64, 64, 64, 3>},
    {"tc_128x256x32_64x64_s4", nullptr, launch_tc<128, 256, 32, 64, 64, 4>},
    {"tc_128x128x32_64x64_s3_g8", nullptr, launch_tc<128, 128, 32, 64, 64, 3, 8>},
    {"tc_128x128x64_64x64_s3_g8", nullptr, launch_tc<128, 128, 64, 64, 64, 3, 8>},
    {"tc_128x256x32_64x64_s3_g8", nullptr, launch_tc<128, 256, 32, 64, 64, 3, 8>},
    {"tc_128x128x32_64x64_s3_g16", nullptr, launch_tc<128, 128, 32, 64, 64, 3, 16>},
    // wgmma tile (always 128x256x64): wgmma_s<stages>_g<group of tile rows>_f<groups in flight>
    {"wgmma_s4_g8_f0", nullptr, launch_wgmma<4, 8, 0>},
    {"wgmma_s3_g8_f1", nullptr, launch_wgmma<3, 8, 1>},
    {"wgmma_s4_g1_f1", nullptr, launch_wgmma<4, 1, 1>},
    {"wgmma_s4_g16_f1", nullptr, launch_wgmma<4, 16, 1>},
};
constexpr int N_KERNELS = sizeof(KERNELS) / sizeof(KERNELS[0]);
// --8<-- [end:launch]

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

struct Size { int m, n, k; };

static void usage_error(const char *msg, const char *arg) {
    fprintf(stderr, "error: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

static long parse_long(const char *s, const char *what, long lo, long hi) {
    char *end = nullptr;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno || v < lo || v > hi) usage_error(what, s);
    return v;
}

static Size parse_size(const char *s) {
    Size z{};
    char extra;
    if (sscanf(s, "%dx%dx%d%c", &z.m, &z.n, &z.k, &extra) == 3) {
        if (z.m < 1 || z.n < 1 || z.k < 1 || z.m > 32768 || z.n > 32768 || z.k > 32768)
            usage_error("each of M, N, K must be 1..32768", s);
        return z;
    }
    int n = (int)parse_long(s, "SIZE must be N or MxNxK with each 1..32768", 1, 32768);
    return Size{n, n, n};
}

// Samples of one measurement: seconds per call, each sample the mean of `calls` back-to-back
// calls timed with CUDA events (calls chosen so that a sample lasts at least 2 ms).
struct Samples { std::vector<double> s; int calls; };

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Warm up once, then take `repeats` samples, or fewer when `budget_s` seconds are spent
// (never fewer than 10).
template <typename F>
static Samples time_events(F fn, int repeats, double budget_s) {
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    CUDA_CHECK(cudaEventRecord(e0));
    fn();
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK(cudaEventSynchronize(e1));
    CUDA_CHECK(cudaGetLastError());
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    int calls = std::max(1, std::min(1000, (int)std::ceil(2.0 / std::max(ms, 1e-4f))));
    Samples out{{}, calls};
    double total = 0.0;
    while ((int)out.s.size() < repeats && (out.s.size() < 10 || total < budget_s)) {
        CUDA_CHECK(cudaEventRecord(e0));
        for (int c = 0; c < calls; ++c) fn();
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        out.s.push_back(ms / 1e3 / calls);
        total += ms / 1e3;
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    return out;
}

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
static double check(F run, size_t n, float *C, const double *R, double *sums) {
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

#ifdef WITH_CUBLAS
#define CUBLAS_CHECK(call)                                                                  \
    do {                                                                                    \
        cublasStatus_t st_ = (call);                                                        \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                 \
            fprintf(stderr, "cuBLAS error: status %d at %s:%d\n", (int)st_, __FILE__,       \
                    __LINE__);                                                              \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)
#endif

static bool is_cublas(const char *name) { return !strncmp(name, "cublas_", 7); }

int main(int argc, char **argv) {
    std::vector<std::string> wanted;
    int repeats = 20;
    double budget_s = 1.0;
    bool bench_lines = false;
    std::vector<Size> sizes;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: sgemm [--kernel NAME[,NAME...]] [--repeats N] [--budget SECONDS] "
                   "[--bench] SIZE [SIZE ...]\n"
                   "  SIZE: N (square) or MxNxK, each 1..32768 (default 1024).\n"
                   "  NAME: all (the progression, the default), tune (the tuning variants),\n"
                   "        cublas_fp32, cublas_tf32, cublas_bf16 (with -DWITH_CUBLAS), or:\n       ");
            for (int j = 0; j < N_KERNELS; ++j) printf(" %s", KERNELS[j].name);
            printf("\n  Each kernel is checked against a float64 reference, then timed with CUDA\n"
                   "  events: N samples (10..100000, default 20), fewer if SECONDS run out, never\n"
                   "  fewer than 10. --bench adds one 'BENCH {json}' line per measurement.\n");
            return 0;
        } else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) {
            std::string list = argv[++i];
            for (size_t p = 0, q; p <= list.size(); p = q + 1) {
                q = list.find(',', p);
                if (q == std::string::npos) q = list.size();
                if (q > p) wanted.push_back(list.substr(p, q - p));
            }
        } else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
            repeats = (int)parse_long(argv[++i], "--repeats must be 10..100000", 10, 100000);
        } else if (!strcmp(argv[i], "--budget") && i + 1 < argc) {
            char *end = nullptr;
            const char *s = argv[++i];
            budget_s = strtod(s, &end);
            if (end == s || *end != '\0' || !std::isfinite(budget_s) || budget_s <= 0 ||
                budget_s > 3600)
                usage_error("--budget must be a number of seconds in (0, 3600]", s);
        } else if (!strcmp(argv[i], "--bench")) {
            bench_lines = true;
        } else if (argv[i][0] == '-') {
            usage_error("unknown option (or missing value)", argv[i]);
        } else {
            sizes.push_back(parse_size(argv[i]));
        }
    }
    if (sizes.empty()) sizes.push_back(Size{1024, 1024, 1024});
    if (wanted.empty()) wanted.push_back("all");
    // The run list, in table order.
    std::vector<std::string> run;
    auto add = [&](const std::string &name) {
        if (std::find(run.begin(), run.end(), name) == run.end()) run.push_back(name);
    };
    for (const std::string &w : wanted) {
        bool known = false;
#ifdef WITH_CUBLAS
        for (const char *c : {"cublas_fp32", "cublas_tf32", "cublas_bf16"})
            if (w == c || w == "all") add(c), known = true;
#else
        if (is_cublas(w.c_str()))
            usage_error("this build has no cuBLAS (compile with -DWITH_CUBLAS -lcublas)",
                        w.c_str());
#endif
        for (const Kernel &k : KERNELS)
            if (w == k.name || (w == "all" && k.published) || (w == "tune" && !k.published))
                add(k.name), known = true;
        if (!known) usage_error("no kernel named", w.c_str());
    }
    // FP32 and TF32 first, then BF16, each group right after its cuBLAS yardstick: a measurement
    // is then taken in a similar power and thermal state as the one it is compared with.
    auto group = [&](const std::string &name) {
        bool bf16 = name == "cublas_bf16";
        for (const Kernel &k : KERNELS)
            if (name == k.name) bf16 = k.launch_bf16 != nullptr;
        return 2 * bf16 + !is_cublas(name.c_str());
    };
    std::stable_sort(run.begin(), run.end(), [&](const std::string &a, const std::string &b) {
        return group(a) < group(b);
    });

    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    printf("# %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    // wgmma and TMA exist only on compute capability 9.0, in code built for sm_90a.
    int *flag, has_wgmma = 0;
    CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
    hopper::compiled_for_sm90a<<<1, 1>>>(flag);
    CUDA_CHECK(cudaMemcpy(&has_wgmma, flag, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(flag));
    if (!(has_wgmma && prop.major == 9 && prop.minor == 0)) {
        auto skipped = std::remove_if(run.begin(), run.end(), [](const std::string &name) {
            return !name.compare(0, 5, "wgmma");
        });
        if (skipped != run.end())
            printf("# wgmma kernels left out: they need an sm_90a build (nvcc -arch=sm_90a) "
                   "on a compute capability 9.0 GPU\n");
        run.erase(skipped, run.end());
    }
#ifdef WITH_CUBLAS
    cublasHandle_t handle;
    CUBLAS_CHECK(cublasCreate(&handle));
#endif
    printf("%-17s %-36s %9s %8s %8s %9s\n", "size", "kernel", "ms", "TFLOP/s", "%cuBLAS",
           "rel.err");
    bool all_ok = true;
    for (Size z : sizes) {
        const int lda = (z.k + 7) / 8 * 8, ldb = lda;  // BF16 rows of A and B^T, padded to 8
        size_t na = (size_t)z.m * z.k, nb = (size_t)z.k * z.n, nc = (size_t)z.m * z.n;
        float *A, *B, *C;
        __nv_bfloat16 *A16, *B16;
        double *R, *sums;
        CUDA_CHECK(cudaMalloc(&A, na * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&B, nb * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&C, nc * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&A16, (size_t)z.m * lda * sizeof(__nv_bfloat16)));
        CUDA_CHECK(cudaMalloc(&B16, (size_t)z.n * ldb * sizeof(__nv_bfloat16)));
        CUDA_CHECK(cudaMalloc(&R, nc * sizeof(double)));
        CUDA_CHECK(cudaMalloc(&sums, 3 * sizeof(double)));
        fill_uniform<<<1024, 256>>>(na, A, 12345u);
        fill_uniform<<<1024, 256>>>(nb, B, 67890u);
        to_bf16<<<1024, 256>>>(z.m, z.k, lda, false, A, A16);
        to_bf16<<<1024, 256>>>(z.k, z.n, ldb, true, B, B16);
        CUDA_CHECK(cudaGetLastError());
        dgemm_reference<<<dim3(CEIL_DIV(z.n, 16), CEIL_DIV(z.m, 16)), dim3(16, 16)>>>(
            z.m, z.n, z.k, A, B, R);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        const double flops = 2.0 * z.m * z.n * z.k;
        char label[64];
        snprintf(label, sizeof label, "%dx%dx%d", z.m, z.n, z.k);
        double base_fp32 = 0.0, base_bf16 = 0.0;  // cuBLAS medians: the yardsticks
        for (const std::string &name : run) {
            const Kernel *kern = nullptr;
            for (const Kernel &k : KERNELS)
                if (name == k.name) kern = &k;
            const char *precision = kern ? (kern->launch_bf16 ? "bf16" : "fp32")
                                         : name.c_str() + 7;  // cublas_<precision>
            std::function<void()> fn;
            if (kern && kern->launch) {
                fn = [&, kern]() { kern->launch(z.m, z.n, z.k, A, B, C); };
            } else if (kern) {
                fn = [&, kern]() { kern->launch_bf16(z.m, z.n, z.k, A16, lda, B16, ldb, C); };
            }
#ifdef WITH_CUBLAS
            // Row-major C = A B is column-major C^T = B^T A^T: swap the operands, no copies.
            static const float one = 1.0f, zero = 0.0f;
            if (name == "cublas_fp32" || name == "cublas_tf32") {
                cublasComputeType_t ct = name == "cublas_fp32" ? CUBLAS_COMPUTE_32F
                                                               : CUBLAS_COMPUTE_32F_FAST_TF32;
                fn = [&, ct]() {
                    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, z.n, z.m, z.k,
                                              &one, B, CUDA_R_32F, z.n, A, CUDA_R_32F, z.k,
                                              &zero, C, CUDA_R_32F, z.n, ct,
                                              CUBLAS_GEMM_DEFAULT));
                };
            } else if (name == "cublas_bf16") {  // the same BF16 inputs (B^T), FP32 output
                fn = [&]() {
                    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, z.n, z.m, z.k,
                                              &one, B16, CUDA_R_16BF, ldb, A16, CUDA_R_16BF,
                                              lda, &zero, C, CUDA_R_32F, z.n,
                                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                };
            }
#endif
            double rel = check(fn, nc, C, R, sums);
            double bound = tolerance(precision, z.k);
            bool ok = rel <= bound;
            if (!ok) {  // a wrong kernel is reported, never timed
                all_ok = false;
                printf("%-17s %-36s %9s %8s %8s %9.2e  FAILED (bound %.1e)\n", label,
                       name.c_str(), "-", "-", "-", rel, bound);
                if (bench_lines)
                    printf("BENCH {\"variant\": \"%s%s\", \"phase\": \"kernel\", \"samples_s\": "
                           "[], \"calls_per_sample\": 1, \"error\": {\"metric\": "
                           "\"relative_frobenius\", \"value\": %.6g, \"ok\": false}}\n",
                           is_cublas(name.c_str()) ? "" : "cuda_c/", name.c_str(),
                           std::isfinite(rel) ? rel : 1e300);
                fflush(stdout);
                continue;
            }
            Samples tm = time_events(fn, repeats, budget_s);
            double med = median(tm.s);
            if (name == "cublas_fp32") base_fp32 = med;
            if (name == "cublas_bf16") base_bf16 = med;
            double base = !strcmp(precision, "fp32") || !strcmp(precision, "tf32") ? base_fp32
                                                                                    : base_bf16;
            printf("%-17s %-36s %9.3f %8.2f %8.1f %9.2e\n", label, name.c_str(), med * 1e3,
                   flops / med / 1e12, base > 0 ? 100.0 * base / med : NAN, rel);
            if (bench_lines) {
                printf("BENCH {\"variant\": \"%s%s\", \"phase\": \"kernel\", \"samples_s\": [",
                       is_cublas(name.c_str()) ? "" : "cuda_c/", name.c_str());
                for (size_t i = 0; i < tm.s.size(); ++i)
                    printf("%s%.9g", i ? ", " : "", tm.s[i]);
                size_t elem = !strcmp(precision, "bf16") ? 2 : 4;
                printf("], \"calls_per_sample\": %d, \"error\": {\"metric\": "
                       "\"relative_frobenius\", \"value\": %.6g, \"ok\": true}, \"flops\": %.17g, "
                       "\"bytes\": %zu, \"params\": {\"m\": %d, \"n\": %d, \"k\": %d}, "
                       "\"extra\": {\"precision\": \"%s\", \"bound\": %.6g, \"library\": \"%s\"}}\n",
                       tm.calls, rel, flops, elem * (na + nb) + 4 * nc, z.m, z.n, z.k, precision,
                       bound, is_cublas(name.c_str()) ? "cublas" : "");
            }
            fflush(stdout);
        }
        CUDA_CHECK(cudaFree(A));
        CUDA_CHECK(cudaFree(B));
        CUDA_CHECK(cudaFree(C));
        CUDA_CHECK(cudaFree(A16));
        CUDA_CHECK(cudaFree(B16));
        CUDA_CHECK(cudaFree(R));
        CUDA_CHECK(cudaFree(sums));
    }
#ifdef WITH_CUBLAS
    cublasDestroy(handle);
#endif
    printf(all_ok ? "OK: every kernel matched the float64 reference\n"
                  : "FAILED: at least one kernel did not match the float64 reference\n");
    return all_ok ? 0 : 1;
}
