// FP32 matrix product C = A @ B (row-major, any M, N, K), seven kernels from naive to warp-tiled,
// each checked against a float64 reference on the GPU and then timed, with cuBLAS as the yardstick.
//
// Build: nvcc -O3 -arch=sm_90 -o build/sgemm snippets/matmul/sgemm.cu              (kernels only)
//        nvcc -O3 -arch=sm_90 -DWITH_CUBLAS -o build/sgemm snippets/matmul/sgemm.cu -lcublas
// Run:   ./build/sgemm [--kernel NAME] [--repeats N] [--csv FILE] SIZE [SIZE ...]
//        SIZE is N (square) or MxNxK, for example 4096 or 3001x4099x2053.
#include <cuda_runtime.h>
#ifdef WITH_CUBLAS
#include <cublas_v2.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

// --8<-- [start:warptile]
// Warp tiling plus double buffering. The block's tile is split among warps (WM x WN each), and
// each warp's tile into WMITER x WNITER sub-tiles in which lane (lr, lc) owns a TM x TN piece:
// a warp's shared-memory reads are then 8 (A) and 4 (B) contiguous float4s, with no bank
// conflicts. Two shared-memory buffers let the global loads of tile k+1 be in flight while
// tile k is multiplied; one barrier per step instead of two.
template <int BM_, int BN_, int BK_, int WM, int WN, int WMITER, int WNITER, int TM_, int TN_,
          int THREADS>
__global__ void __launch_bounds__(THREADS, 2)
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
    const int row0 = blockIdx.y * BM_, col0 = blockIdx.x * BN_;
    const bool a_vec = (K % 4 == 0), b_vec = (N % 4 == 0);

    float4 a_stage[A_LOADS], b_stage[B_LOADS];  // the next tiles, on their way to shared memory
    auto fetch = [&](int k0) {
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

// --8<-- [start:launch]
// How each kernel is launched: grid and block shapes follow from its tile sizes.
using Launcher = void (*)(int, int, int, const float *, const float *, float *);

template <int BM_, int BN_, int BK_, int WM, int WN, int WMITER, int WNITER, int TM_, int TN_,
          int THREADS>
void launch_warptile(int M, int N, int K, const float *A, const float *B, float *C) {
    dim3 grid(CEIL_DIV(N, BN_), CEIL_DIV(M, BM_));
    sgemm_warptile<BM_, BN_, BK_, WM, WN, WMITER, WNITER, TM_, TN_, THREADS>
        <<<grid, THREADS>>>(M, N, K, A, B, C);
}

struct Kernel {
    const char *name;
    Launcher launch;
};

const Kernel KERNELS[] = {
    {"naive", [](int M, int N, int K, const float *A, const float *B, float *C) {
         sgemm_naive<<<dim3(CEIL_DIV(M, 32), CEIL_DIV(N, 32)), dim3(32, 32)>>>(M, N, K, A, B, C);
     }},
    {"coalesced", [](int M, int N, int K, const float *A, const float *B, float *C) {
         sgemm_coalesced<<<dim3(CEIL_DIV(N, 32), CEIL_DIV(M, 32)), dim3(32, 32)>>>(M, N, K, A, B,
                                                                                  C);
     }},
    {"smem", [](int M, int N, int K, const float *A, const float *B, float *C) {
         sgemm_smem<<<dim3(CEIL_DIV(N, TILE), CEIL_DIV(M, TILE)), dim3(TILE, TILE)>>>(M, N, K, A,
                                                                                     B, C);
     }},
    {"blocktile_1d", [](int M, int N, int K, const float *A, const float *B, float *C) {
         sgemm_blocktile_1d<<<dim3(CEIL_DIV(N, BN1), CEIL_DIV(M, BM1)), BM1 * BN1 / TM1>>>(
             M, N, K, A, B, C);
     }},
    {"blocktile_2d", [](int M, int N, int K, const float *A, const float *B, float *C) {
         sgemm_blocktile_2d<<<dim3(CEIL_DIV(N, BN), CEIL_DIV(M, BM)), THREADS_2D>>>(M, N, K, A,
                                                                                   B, C);
     }},
    {"vectorized", [](int M, int N, int K, const float *A, const float *B, float *C) {
         sgemm_vectorized<<<dim3(CEIL_DIV(N, BN), CEIL_DIV(M, BM)), THREADS_2D>>>(M, N, K, A, B,
                                                                                 C);
     }},
    // 128x128 block tile, BK 16, 8 warps of 64x32, each lane 2x2 sub-tiles of 4x4.
    {"warptile", launch_warptile<128, 128, 16, 64, 32, 2, 2, 4, 4, 256>},
    // Tuning variants, run only when named with --kernel (see docs/kernels/matmul.md).
    {"warptile_bk8", launch_warptile<128, 128, 8, 64, 32, 2, 2, 4, 4, 256>},
    {"warptile_8x4", launch_warptile<128, 128, 16, 64, 64, 2, 2, 8, 4, 128>},
};
constexpr int N_PUBLISHED = 7;  // the first seven are the progression
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

struct Size { int m, n, k; };

static void usage_error(const char *msg, const char *arg) {
    fprintf(stderr, "error: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

static int parse_int(const char *s, const char *what) {
    char *end = nullptr;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < 1 || v > 65536) usage_error(what, s);
    return (int)v;
}

static Size parse_size(const char *s) {
    Size z{};
    char extra;
    if (sscanf(s, "%dx%dx%d%c", &z.m, &z.n, &z.k, &extra) == 3) {
        if (z.m < 1 || z.n < 1 || z.k < 1 || z.m > 65536 || z.n > 65536 || z.k > 65536)
            usage_error("each of M, N, K must be 1..65536", s);
        return z;
    }
    int n = parse_int(s, "SIZE must be N or MxNxK with each 1..65536");
    return Size{n, n, n};
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

struct Timing { double median_s, min_s, max_s; int repeats; };

// Time `fn` with CUDA events: warm up once, then repeat until `repeats` runs or `budget_s`
// seconds (at least 3 runs), and report median, min and max.
template <typename F>
static Timing time_events(F fn, int repeats, double budget_s) {
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    fn();
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> s;
    double total = 0.0;
    while ((int)s.size() < repeats && (s.size() < 3 || total < budget_s)) {
        CUDA_CHECK(cudaEventRecord(e0));
        fn();
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        CUDA_CHECK(cudaGetLastError());
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        s.push_back(ms / 1e3);
        total += ms / 1e3;
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    return Timing{median(s), *std::min_element(s.begin(), s.end()),
                  *std::max_element(s.begin(), s.end()), (int)s.size()};
}

// --8<-- [start:verify]
// Poison C with NaN (all bits set), run once, and compare with the float64 reference:
// relative Frobenius error ||C - R|| / ||R||, and any element left unwritten counts as a failure.
static double check(const Kernel &kern, Size z, const float *A, const float *B, float *C,
                    const double *R, double *sums, bool *ok) {
    size_t n = (size_t)z.m * z.n;
    CUDA_CHECK(cudaMemset(C, 0xFF, n * sizeof(float)));
    kern.launch(z.m, z.n, z.k, A, B, C);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemset(sums, 0, 3 * sizeof(double)));
    error_sums<<<1024, 256>>>(n, C, R, sums);
    CUDA_CHECK(cudaGetLastError());
    double h[3];
    CUDA_CHECK(cudaMemcpy(h, sums, sizeof h, cudaMemcpyDeviceToHost));
    double rel = h[2] > 0 ? INFINITY : std::sqrt(h[0] / h[1]);
    // float32 rounding grows like sqrt(K) * 2^-24 for random data; allow 8 times that.
    double tol = 8.0 * std::sqrt((double)z.k) * std::ldexp(1.0, -24);
    *ok = rel <= tol;
    return rel;
}
// --8<-- [end:verify]

int main(int argc, char **argv) {
    const char *only = nullptr, *csv_path = nullptr;
    int repeats = 20;
    double budget_s = 1.0;
    std::vector<Size> sizes;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: sgemm [--kernel NAME] [--repeats N] [--budget SECONDS] [--csv FILE] "
                   "SIZE [SIZE ...]\n  SIZE: N (square) or MxNxK. Kernels:");
            for (int j = 0; j < N_KERNELS; ++j) printf(" %s", KERNELS[j].name);
            printf("\n  Each kernel is checked against a float64 reference, then timed with\n"
                   "  CUDA events (median of up to N runs, at least 3, within SECONDS each).\n");
            return 0;
        } else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) {
            only = argv[++i];
        } else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
            repeats = parse_int(argv[++i], "--repeats must be 1..65536");
        } else if (!strcmp(argv[i], "--budget") && i + 1 < argc) {
            budget_s = atof(argv[++i]);
            if (!(budget_s > 0)) usage_error("--budget must be a positive number", argv[i]);
        } else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
            csv_path = argv[++i];
        } else if (argv[i][0] == '-') {
            usage_error("unknown option (or missing value)", argv[i]);
        } else {
            sizes.push_back(parse_size(argv[i]));
        }
    }
    if (sizes.empty()) sizes.push_back(Size{1024, 1024, 1024});
    std::vector<const Kernel *> run;
    for (int j = 0; j < N_KERNELS; ++j)
        if (only ? !strcmp(only, KERNELS[j].name) : j < N_PUBLISHED) run.push_back(&KERNELS[j]);
    if (run.empty()) usage_error("no kernel named", only);

    FILE *csv = nullptr;
    if (csv_path && !(csv = fopen(csv_path, "w"))) usage_error("cannot write", csv_path);
    if (csv) fprintf(csv, "m,n,k,kernel,median_s,min_s,max_s,repeats,rel_error\n");

    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    printf("# %s, %d SMs\n", prop.name, prop.multiProcessorCount);
#ifdef WITH_CUBLAS
    cublasHandle_t handle;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cuBLAS error: cublasCreate failed\n");
        return 1;
    }
#endif
    printf("%-17s %-13s %10s %9s %8s %10s\n", "size", "kernel", "ms", "TFLOP/s", "cuBLAS%",
           "rel.err");
    bool all_ok = true;
    for (Size z : sizes) {
        size_t na = (size_t)z.m * z.k, nb = (size_t)z.k * z.n, nc = (size_t)z.m * z.n;
        float *A, *B, *C;
        double *R, *sums;
        CUDA_CHECK(cudaMalloc(&A, na * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&B, nb * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&C, nc * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&R, nc * sizeof(double)));
        CUDA_CHECK(cudaMalloc(&sums, 3 * sizeof(double)));
        fill_uniform<<<1024, 256>>>(na, A, 12345u);
        fill_uniform<<<1024, 256>>>(nb, B, 67890u);
        CUDA_CHECK(cudaGetLastError());
        dgemm_reference<<<dim3(CEIL_DIV(z.n, 16), CEIL_DIV(z.m, 16)), dim3(16, 16)>>>(
            z.m, z.n, z.k, A, B, R);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        double flops = 2.0 * z.m * z.n * z.k;
        char label[64];
        snprintf(label, sizeof label, "%dx%dx%d", z.m, z.n, z.k);
        double cublas_s = 0.0;
        auto report = [&](const char *name, Timing tm, double rel, bool ok) {
            double pct = cublas_s > 0 ? 100.0 * cublas_s / tm.median_s : NAN;
            printf("%-17s %-13s %10.3f %9.2f %8.1f %10.2e%s\n", label, name, tm.median_s * 1e3,
                   flops / tm.median_s / 1e12, pct, rel, ok ? "" : "  FAILED");
            if (csv)
                fprintf(csv, "%d,%d,%d,%s,%.9g,%.9g,%.9g,%d,%.6g\n", z.m, z.n, z.k, name,
                        tm.median_s, tm.min_s, tm.max_s, tm.repeats, rel);
        };
#ifdef WITH_CUBLAS
        {
            // Row-major C = A B is column-major C^T = B^T A^T: swap the operands, no copies.
            const float one = 1.0f, zero = 0.0f;
            Kernel cublas{"cublas", nullptr};
            auto run_cublas = [&]() {
                if (cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, z.n, z.m, z.k, &one, B, z.n, A,
                                z.k, &zero, C, z.n) != CUBLAS_STATUS_SUCCESS) {
                    fprintf(stderr, "cuBLAS error: cublasSgemm failed\n");
                    exit(1);
                }
            };
            size_t n = nc;
            CUDA_CHECK(cudaMemset(C, 0xFF, n * sizeof(float)));
            run_cublas();
            CUDA_CHECK(cudaMemset(sums, 0, 3 * sizeof(double)));
            error_sums<<<1024, 256>>>(n, C, R, sums);
            double h[3];
            CUDA_CHECK(cudaMemcpy(h, sums, sizeof h, cudaMemcpyDeviceToHost));
            double rel = h[2] > 0 ? INFINITY : std::sqrt(h[0] / h[1]);
            bool ok = rel <= 8.0 * std::sqrt((double)z.k) * std::ldexp(1.0, -24);
            all_ok = all_ok && ok;
            Timing tm = time_events(run_cublas, repeats, budget_s);
            cublas_s = tm.median_s;
            report(cublas.name, tm, rel, ok);
        }
#endif
        for (const Kernel *kern : run) {
            bool ok = false;
            double rel = check(*kern, z, A, B, C, R, sums, &ok);
            if (!ok) {  // a wrong kernel is reported, never timed
                all_ok = false;
                printf("%-17s %-13s %10s %9s %8s %10.2e  FAILED\n", label, kern->name, "-", "-",
                       "-", rel);
                continue;
            }
            Timing tm = time_events([&]() { kern->launch(z.m, z.n, z.k, A, B, C); }, repeats,
                                    budget_s);
            report(kern->name, tm, rel, ok);
            if (csv) fflush(csv);
        }
        CUDA_CHECK(cudaFree(A));
        CUDA_CHECK(cudaFree(B));
        CUDA_CHECK(cudaFree(C));
        CUDA_CHECK(cudaFree(R));
        CUDA_CHECK(cudaFree(sums));
    }
#ifdef WITH_CUBLAS
    cublasDestroy(handle);
#endif
    if (csv) fclose(csv);
    printf(all_ok ? "OK: every kernel matched the float64 reference\n"
                  : "FAILED: at least one kernel did not match the float64 reference\n");
    return all_ok ? 0 : 1;
}
