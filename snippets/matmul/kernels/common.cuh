// What every kernel file includes: error checking, CEIL_DIV, and the device helpers that
// several kernels share (load4: steps 6 and 7; block_tile: steps 7 to 9; smem_addr: 8 and 9).
#pragma once
// --8<-- [start:imports]
#include <cuda_runtime.h>

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

// --8<-- [start:smem_addr]
// The shared-memory address of a pointer into shared memory, as PTX instructions take it.
__device__ __forceinline__ unsigned smem_addr(const void *p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// --8<-- [end:smem_addr]
