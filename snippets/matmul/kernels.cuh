// Every kernel of docs/kernels/matmul.md, one file each under kernels/ in the page's order,
// and the table that sgemm.cu checks and bench/runner.cu times them from, by name.
#pragma once
#include "kernels/01_naive.cuh"
#include "kernels/02_coalesced.cuh"
#include "kernels/03_smem.cuh"
#include "kernels/04_blocktile_1d.cuh"
#include "kernels/05_blocktile_2d.cuh"
#include "kernels/06_vectorized.cuh"
#include "kernels/07_warptile.cuh"
#include "kernels/08_tensor_core.cuh"
#include "kernels/09_wgmma.cuh"

// --8<-- [start:launch]
// How each kernel is called: its launcher (in the kernel's file) picks grid and block shapes
// from its tile sizes; template instances are the tuning variants. cuBLAS, the yardstick, has
// rows of its own (in a build with -DWITH_CUBLAS), each right before the kernels held to it.
using Launcher = void (*)(int, int, int, const float *, const float *, float *);
using LauncherBf16 = void (*)(int, int, int, const __nv_bfloat16 *, int, const __nv_bfloat16 *,
                              int, float *);

struct Kernel {
    const char *name;
    Launcher launch;          // FP32 kernels: float inputs
    LauncherBf16 launch_bf16; // tensor-core kernels: BF16 inputs, FP32 output
    bool published;           // in the progression (run by default); others are tuning variants
    const char *library;      // "cublas" for the yardstick's rows, else none (this page's kernels)
};

#ifdef WITH_CUBLAS  // cuBLAS with the launchers' arguments (sgemm.cu): FP32, TF32, BF16
void cublas_fp32(int M, int N, int K, const float *A, const float *B, float *C);
void cublas_tf32(int M, int N, int K, const float *A, const float *B, float *C);
void cublas_bf16(int M, int N, int K, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *Bt,
                 int ldb, float *C);
void cublas_bf16_padded_k(int M, int N, int K, const __nv_bfloat16 *A, int lda,
                          const __nv_bfloat16 *Bt, int ldb, float *C);
#endif

// Tuning instances: the macros make each name from the template arguments, so that one line
// holds both. FP32 warp tile: wt_<BM>x<BN>x<BK>_<WM>x<WN>_<WMITER>x<WNITER>_<TM>x<TN>_<threads>
// _<min blocks per SM>_g<group of tile rows>_k<split of K>[_edge: edge blocks load without
// guards]; tensor cores (mma.sync):
// tc_<BM>x<BN>x<BK>_<WM>x<WN>_s<stages>_g<group>; wgmma (block tile BM x BN x 64):
// wgmma_<BM>x<BN>_s<stages>_g<group>_f<groups left in flight>_k<split of K>.
#define WT(bm, bn, bk, wm, wn, wmi, wni, tm, tn, th, mb, g, k)                                  \
    {"wt_" #bm "x" #bn "x" #bk "_" #wm "x" #wn "_" #wmi "x" #wni "_" #tm "x" #tn "_" #th "_" #mb \
     "_g" #g "_k" #k, launch_warptile<bm, bn, bk, wm, wn, wmi, wni, tm, tn, th, mb, g, k>}
#define WTE(bm, bn, bk, wm, wn, wmi, wni, tm, tn, th, mb, g, k)                                 \
    {"wt_" #bm "x" #bn "x" #bk "_" #wm "x" #wn "_" #wmi "x" #wni "_" #tm "x" #tn "_" #th "_" #mb \
     "_g" #g "_k" #k "_edge", launch_warptile<bm, bn, bk, wm, wn, wmi, wni, tm, tn, th, mb, g, k, 1>}
#define TC(bm, bn, bk, wm, wn, s, g)                                                            \
    {"tc_" #bm "x" #bn "x" #bk "_" #wm "x" #wn "_s" #s "_g" #g, nullptr,                       \
     launch_tc<bm, bn, bk, wm, wn, s, g>}
#define WG(bm, bn, s, g, f, k)                                                                  \
    {"wgmma_" #bm "x" #bn "_s" #s "_g" #g "_f" #f "_k" #k, nullptr, launch_wgmma<bm, bn, s, g, f, k>}

const Kernel KERNELS[] = {
#ifdef WITH_CUBLAS
    {"cublas_fp32", cublas_fp32, nullptr, true, "cublas"},
    {"cublas_tf32", cublas_tf32, nullptr, true, "cublas"},
#endif
    {"naive", launch_naive, nullptr, true},
    {"coalesced", launch_coalesced, nullptr, true},
    {"smem", launch_smem, nullptr, true},
    {"blocktile_1d", launch_blocktile_1d, nullptr, true},
    {"blocktile_2d", launch_blocktile_2d, nullptr, true},
    {"vectorized", launch_vectorized, nullptr, true},
    // 8 warps of 64x64 per SM; block tile and split of K chosen per size (the wave model).
    {"warptile", launch_warptile_auto, nullptr, true},
    // The published FP32 tiles, each split 1 to 4 ways, and their neighbours at 4096^3.
    WT(128, 256, 16, 64, 64, 1, 2, 8, 8, 256, 1, 1, 1), WT(128, 256, 16, 64, 64, 1, 2, 8, 8, 256, 1, 1, 2),
    WT(128, 256, 16, 64, 64, 1, 2, 8, 8, 256, 1, 1, 3), WT(128, 256, 16, 64, 64, 1, 2, 8, 8, 256, 1, 1, 4),
    WT(256, 128, 16, 64, 64, 1, 2, 8, 8, 256, 1, 1, 1), WT(256, 128, 16, 64, 64, 1, 2, 8, 8, 256, 1, 1, 2),
    WT(256, 128, 16, 64, 64, 1, 2, 8, 8, 256, 1, 1, 4), WT(128, 256, 8, 64, 64, 1, 2, 8, 8, 256, 1, 1, 1),
    WT(128, 256, 16, 64, 64, 2, 2, 8, 4, 256, 1, 1, 1), WT(256, 128, 16, 64, 64, 1, 4, 8, 4, 256, 1, 1, 1),
    WT(128, 128, 16, 64, 64, 2, 2, 8, 4, 128, 2, 1, 1), WT(128, 128, 16, 64, 64, 2, 2, 8, 4, 128, 2, 1, 4),
    WT(128, 128, 16, 64, 32, 2, 2, 4, 4, 256, 1, 1, 1), WT(128, 256, 16, 64, 64, 1, 2, 8, 8, 256, 1, 8, 1),
    WT(128, 128, 8, 64, 32, 2, 2, 4, 4, 256, 2, 1, 1),  // the Numba kernel's tiles
    // Around the odd shape's pick (256x128, 1x4 sub-tiles: exactly 3 waves): tile rows in groups
    // of 8 (L2 reuse), BK 8 (half the shared memory), and 128x128 two a SM in groups of 8.
    WT(256, 128, 16, 64, 64, 1, 4, 8, 4, 256, 1, 8, 1), WT(256, 128, 8, 64, 64, 1, 4, 8, 4, 256, 1, 1, 1),
    WT(128, 128, 16, 64, 64, 2, 2, 8, 4, 128, 2, 8, 1),
    // The same at the odd shape's edges: edge blocks without guards (the last wave waits on them).
    WTE(256, 128, 16, 64, 64, 1, 4, 8, 4, 256, 1, 1, 1), WTE(128, 128, 16, 64, 64, 2, 2, 8, 4, 128, 2, 1, 1),
    WTE(256, 128, 16, 64, 64, 1, 2, 8, 8, 256, 1, 1, 1),
#ifdef WITH_CUBLAS
    {"cublas_bf16", nullptr, cublas_bf16, true, "cublas"},
    {"cublas_bf16_padded_k", nullptr, cublas_bf16_padded_k, true, "cublas"},
#endif
    // 128x128x32 block tile, 4 warps of 64x64, 4 tiles in flight, blocks in groups of 8 rows.
    {"tensor_core", nullptr, launch_tc<128, 128, 32, 64, 64, 4, 8>, true},
    // TMA + wgmma, 4 stages, groups of 8 tile rows, no group left in flight, K never split; the
    // block tile (128x256, 128x128 or 64x128) chosen per size by the wave model.
    {"wgmma", nullptr, launch_wgmma_auto, true},
    // Tensor cores with mma.sync, and wgmma: pipeline depth, tile order, split.
    TC(128, 128, 32, 64, 64, 3, 8), TC(128, 128, 64, 64, 64, 3, 8), TC(128, 256, 64, 64, 64, 3, 1),
    TC(128, 128, 32, 64, 64, 4, 1),
    // wgmma: the three tiles of launch_wgmma_auto, and neighbours (depth, order, in flight, split).
    WG(128, 256, 4, 8, 0, 1), WG(128, 256, 4, 8, 1, 1), WG(128, 256, 4, 16, 0, 1), WG(128, 256, 4, 8, 0, 2),
    WG(128, 128, 4, 8, 0, 1), WG(128, 128, 6, 8, 0, 1), WG(128, 128, 4, 8, 1, 1),
    WG(64, 128, 4, 8, 0, 1), WG(64, 128, 6, 8, 0, 1), WG(64, 128, 4, 8, 1, 1), WG(64, 128, 4, 1, 0, 1),
    WG(64, 256, 4, 8, 0, 1),
};
#undef WT
#undef WTE
#undef TC
#undef WG
const int N_KERNELS = sizeof(KERNELS) / sizeof(KERNELS[0]);
// --8<-- [end:launch]
