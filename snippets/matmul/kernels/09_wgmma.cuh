// Step 9: Hopper's tensor-core path, TMA copies and wgmma, warp-specialised (sm_90a).
#pragma once
#include <cuda_bf16.h>
#include <cudaTypedefs.h>  // CUtensorMap and the type of cuTensorMapEncodeTiled (no -lcuda needed)

#include <cstdint>

#include "common.cuh"

// --8<-- [start:wgmma]
// Hopper's own path. The Tensor Memory Accelerator (TMA) copies whole tiles from global to
// shared memory, issued by one thread, and wgmma.mma_async multiplies a 64 x BN tile per
// warpgroup (4 warps) straight from shared memory, with no fragments in registers. Warp
// specialisation: warpgroup 0 only issues copies, the CONSUMERS warpgroups after it only
// multiply (64 rows each: the block tile is 64 CONSUMERS x BN); STAGES tiles are in flight,
// handed between them with mbarriers ("full": the copy has landed; "empty": every multiplier
// is done with it). Both operands are read along K (B comes as B^T, N x K), in the
// 128-byte-swizzled layout that TMA writes and wgmma reads. Needs sm_90a.
namespace hopper {
constexpr int BK = 64;  // BK * 2 bytes = one 128-byte swizzled row
__host__ __device__ constexpr int stage_bytes(int bm, int bn) { return (bm + bn) * BK * 2; }

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

// d (64 x BN, FP32, BN / 2 registers a thread) += A (64 x 16) * B (16 x BN), both from shared.
// The instruction names its accumulator registers one by one: the operand lists (%0 .. ) and
// the constraint lists ("+f"(d[0]) .. ) are spelled out by the macros below.
#define WG_R10(t) "%" #t "0, %" #t "1, %" #t "2, %" #t "3, %" #t "4, %" #t "5, %" #t "6, %" #t "7, %" #t "8, %" #t "9, "
#define WG_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
__device__ __forceinline__ void wgmma_tile(float (&d)[128], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        WG_R10() WG_R10(1) WG_R10(2) WG_R10(3) WG_R10(4) WG_R10(5) WG_R10(6) WG_R10(7) WG_R10(8)
        WG_R10(9) WG_R10(10) WG_R10(11) "%120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, p, 1, 1, 0, 0;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56),
          WG_D8(64), WG_D8(72), WG_D8(80), WG_D8(88), WG_D8(96), WG_D8(104), WG_D8(112), WG_D8(120)
        : "l"(a), "l"(b), "r"(1));
}
__device__ __forceinline__ void wgmma_tile(float (&d)[64], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        WG_R10() WG_R10(1) WG_R10(2) WG_R10(3) WG_R10(4) WG_R10(5)
        "%60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : WG_D8(0), WG_D8(8), WG_D8(16), WG_D8(24), WG_D8(32), WG_D8(40), WG_D8(48), WG_D8(56)
        : "l"(a), "l"(b), "r"(1));
}
#undef WG_R10
#undef WG_D8

template <int BM, int BN, int STAGES, int GROUP, int IN_FLIGHT, int CONSUMERS = BM / 64>
__global__ void __launch_bounds__(128 * (CONSUMERS + 1), 1)
gemm_bf16_wgmma(int M, int N, int K, int kt_chunk, const __grid_constant__ CUtensorMap map_a,
                const __grid_constant__ CUtensorMap map_bt, float *C) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    // 128-byte swizzling repeats every 1024 bytes: tiles start on a multiple of that.
    unsigned char *smem = smem_raw + ((1024 - smem_addr(smem_raw) % 1024) % 1024);
    constexpr int A_BYTES = BM * BK * 2;
    auto tile_a = [&](int s) { return smem + s * stage_bytes(BM, BN); };
    auto tile_b = [&](int s) { return smem + s * stage_bytes(BM, BN) + A_BYTES; };
    // Split-K (gridDim.z > 1): this block takes K tiles kt0 .. kt0 + ktiles - 1 and writes its
    // partial tile into slice z of the workspace C (split_k_sum adds the slices).
    const int kt0 = blockIdx.z * kt_chunk;
    const int wg = threadIdx.x / 128, ktiles = min((K + BK - 1) / BK - kt0, kt_chunk);
    C += (size_t)blockIdx.z * M * N;
    int tile_row, tile_col;
    block_tile<GROUP>(tile_row, tile_col);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], CONSUMERS);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {  // producer: few registers needed, give them to the multipliers
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < ktiles; ++kt) {
                const int s = kt % STAGES;
                if (kt >= STAGES) mbar_wait(&empty[s], (kt / STAGES + 1) % 2);  // stage is free
                mbar_expect_bytes(&full[s], stage_bytes(BM, BN));
                tma_load(tile_a(s), &map_a, (kt0 + kt) * BK, tile_row * BM, &full[s]);
                tma_load(tile_b(s), &map_bt, (kt0 + kt) * BK, tile_col * BN, &full[s]);
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    float d[BN / 2] = {};
    for (int kt = 0; kt < ktiles; ++kt) {  // consumer: rows (wg - 1) * 64 .. + 64 of the tile
        const int s = kt % STAGES;
        mbar_wait(&full[s], kt / STAGES % 2);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int j = 0; j < BK / 16; ++j)  // k16 step j starts 32 bytes further along each row
            wgmma_tile(d, descriptor(tile_a(s) + (wg - 1) * 64 * BK * 2 + 32 * j),
                            descriptor(tile_b(s) + 32 * j));
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        // Wait until at most IN_FLIGHT groups are still running; the stage of the group that
        // has finished goes back to the producer.
        asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(IN_FLIGHT) : "memory");
        if (kt >= IN_FLIGHT && threadIdx.x % 128 == 0) mbar_arrive(&empty[(kt - IN_FLIGHT) % STAGES]);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) asm volatile("" : "+f"(d[i])::"memory");  // d is final here
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

template <int BM, int BN, int STAGES, int GROUP, int IN_FLIGHT>
void run_wgmma(int split, int M, int N, int K, const __nv_bfloat16 *A, int lda,
               const __nv_bfloat16 *Bt, int ldb, float *C) {
    constexpr int smem = STAGES * hopper::stage_bytes(BM, BN) + 1024;  // + alignment
    auto kernel = hopper::gemm_bf16_wgmma<BM, BN, STAGES, GROUP, IN_FLIGHT>;
    static bool opted_in = false;
    if (!opted_in) {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        opted_in = true;
    }
    // Encoding a map is host work of a few microseconds: done once per matrix, not per call.
    static const void *last_a = nullptr, *last_b = nullptr;
    static int last[3] = {};
    static CUtensorMap map_a, map_bt;
    if (A != last_a || Bt != last_b || last[0] != M || last[1] != N || last[2] != K) {
        map_a = tensor_map(A, M, K, lda, BM);
        map_bt = tensor_map(Bt, N, K, ldb, BN);
        last_a = A, last_b = Bt, last[0] = M, last[1] = N, last[2] = K;
    }
    const int ktiles = CEIL_DIV(K, hopper::BK), kt_chunk = CEIL_DIV(ktiles, split);
    const int splits = CEIL_DIV(ktiles, kt_chunk);  // <= split
    dim3 grid(CEIL_DIV(N, BN), CEIL_DIV(M, BM), splits);
    float *out = splits > 1 ? split_k_workspace((size_t)splits * M * N) : C;
    kernel<<<grid, 128 * (BM / 64 + 1), smem>>>(M, N, K, kt_chunk, map_a, map_bt, out);
    if (splits > 1) split_k_sum(M, N, splits, out, C);
}

// One tuning instance: tile BM x BN (BM = 64 x CONSUMERS), pipeline depth, tile order, groups
// in flight and split of K fixed.
template <int BM, int BN, int STAGES, int GROUP = 1, int IN_FLIGHT = 1, int SPLIT = 1>
void launch_wgmma(int M, int N, int K, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *Bt,
                  int ldb, float *C) {
    run_wgmma<BM, BN, STAGES, GROUP, IN_FLIGHT>(SPLIT, M, N, K, A, lda, Bt, ldb, C);
}

// --8<-- [start:per_size]
// The tile chosen per size by the wave model (common.cuh), as for the FP32 warp tile: 128x256
// unless its blocks leave more than half of the SMs' slots idle over all waves; then 128x128
// on the same test; then 64x128 (one consumer warpgroup, a group of wgmmas left in flight).
// 1024^3 on 132 SMs: 32, 64 and 128 blocks in one wave: 24 %, 48 %, 97 % busy: 64x128.
inline void launch_wgmma_auto(int M, int N, int K, const __nv_bfloat16 *A, int lda,
                              const __nv_bfloat16 *Bt, int ldb, float *C) {
    const long sms = sm_count();
    auto use = [&](int bm, int bn) {
        return wave_use((long)CEIL_DIV(M, bm) * CEIL_DIV(N, bn), sms);
    };
    if (use(128, 256) >= 0.5)
        launch_wgmma<128, 256, 4, 8, 0>(M, N, K, A, lda, Bt, ldb, C);
    else if (use(128, 128) >= 0.5)
        launch_wgmma<128, 128, 4, 8, 0>(M, N, K, A, lda, Bt, ldb, C);
    else
        launch_wgmma<64, 128, 4, 8, 1>(M, N, K, A, lda, Bt, ldb, C);
}
// --8<-- [end:per_size]
