// Every kernel of docs/kernels/matmul.md, one file each under kernels/ in the page's order,
// and the table the runner (sgemm.cu) picks them from by name.
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
// How the runner calls each kernel: its launcher (in the kernel's file) picks grid and block
// shapes from its tile sizes; template instances are the tuning variants.
using Launcher = void (*)(int, int, int, const float *, const float *, float *);
using LauncherBf16 = void (*)(int, int, int, const __nv_bfloat16 *, int, const __nv_bfloat16 *,
                              int, float *);

struct Kernel {
    const char *name;
    Launcher launch;          // FP32 kernels: float inputs
    LauncherBf16 launch_bf16; // tensor-core kernels: BF16 inputs, FP32 output
    bool published;           // in the progression (run by default); others are tuning variants
};

const Kernel KERNELS[] = {
    {"naive", launch_naive, nullptr, true},
    {"coalesced", launch_coalesced, nullptr, true},
    {"smem", launch_smem, nullptr, true},
    {"blocktile_1d", launch_blocktile_1d, nullptr, true},
    {"blocktile_2d", launch_blocktile_2d, nullptr, true},
    {"vectorized", launch_vectorized, nullptr, true},
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
