// What every kernel file includes: error checking, CEIL_DIV, and the device helpers that
// several kernels share (load4: steps 6 and 7; block_tile: steps 7 to 9; smem_addr: 8 and 9).
#pragma once
// --8<-- [start:imports]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
// --8<-- [end:check]

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

// Four consecutive floats known to lie inside the matrix: one 16-byte load when aligned,
// otherwise four 4-byte loads (no guards either way).
__device__ __forceinline__ float4 load4_inside(const float *p, bool aligned) {
    if (aligned) return *reinterpret_cast<const float4 *>(p);
    return make_float4(p[0], p[1], p[2], p[3]);
}
// --8<-- [end:load4]

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

// --8<-- [start:split_k]
// Split-K: when a size has too few tiles of C to give every SM a block, SPLIT blocks share one
// tile, each summing a chunk of K into its own M x N slice of a workspace; this kernel then adds
// the slices into C (a few microseconds: the slices stay in L2).
__global__ void split_k_sum_kernel(size_t n, int splits, const float *part, float *C) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float s = part[i];
        for (int z = 1; z < splits; ++z) s += part[z * n + i];
        C[i] = s;
    }
}

inline void split_k_sum(int M, int N, int splits, const float *part, float *C) {
    const size_t n = (size_t)M * N;
    split_k_sum_kernel<<<(unsigned)std::min<size_t>(CEIL_DIV(n, 256), 132 * 16), 256>>>(
        n, splits, part, C);
}

// The SMs of the current GPU (asked once).
inline int sm_count() {
    static int sms = 0;
    if (!sms) {
        int dev = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    }
    return sms;
}

// The wave model: `blocks` blocks run in waves of `slots` (SMs x blocks per SM); the share of
// block slots that have work over all waves. 32 blocks on 132 slots: 0.24 (one wave, mostly idle).
inline double wave_use(long blocks, long slots) {
    return (double)blocks / (double)(CEIL_DIV(blocks, slots) * slots);
}

// The split of K (1 to max_split) that the wave model prefers for `tiles` tiles of C. Only when
// there are fewer tiles than block slots (one wave, part idle): more, and the partial tiles no
// longer fit in L2, so that adding them up costs more than the idle slots. Then the best use of
// the slots, the smallest split among those within 2 % of it; each block keeps at least min_k
// of K, so that its prologue and epilogue stay small beside its loop.
inline int choose_split(long tiles, long slots, int K, int max_split, int min_k) {
    int best = 1;
    if (tiles >= slots) return 1;
    for (int s = 2; s <= max_split && K / s >= min_k; ++s)
        if (wave_use(tiles * s, slots) > wave_use(tiles * best, slots) + 0.02) best = s;
    return best;
}

// One workspace for every split-K launch, grown when a larger one is needed (never freed).
inline float *split_k_workspace(size_t floats) {
    static float *buf = nullptr;
    static size_t have = 0;
    if (floats > have) {
        if (buf) CUDA_CHECK(cudaFree(buf));
        CUDA_CHECK(cudaMalloc(&buf, floats * sizeof(float)));
        have = floats;
    }
    return buf;
}
// --8<-- [end:split_k]

// --8<-- [start:smem_addr]
// The shared-memory address of a pointer into shared memory, as PTX instructions take it.
__device__ __forceinline__ unsigned smem_addr(const void *p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// --8<-- [end:smem_addr]
