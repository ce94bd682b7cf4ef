"""FP32 lanes of a server CPU and of a GPU, counted the same way: one lane = one "core".

GPU vendors count every FP32 unit as a "CUDA core". Counted the same way, a CPU core with two
AVX-512 FMA units has 2 x 16 = 32 FP32 lanes.

The demo's figures: Intel Xeon Platinum 8480+ (56 cores, two AVX-512 FMA units per core: Intel's product
page, https://www.intel.com/content/www/us/en/products/sku/231746/intel-xeon-platinum-8480-processor-105m-cache-2-00-ghz/specifications.html)
and NVIDIA H100/H200 SXM (132 SMs of 128 FP32 units: "NVIDIA Hopper Architecture In-Depth",
https://developer.nvidia.com/blog/nvidia-hopper-architecture-in-depth/); as of 2026-11-29.
"""


# --8<-- [start:lanes]
def cpu_lanes(cores: int, fma_units: int, simd_bits: int) -> int:
    return cores * fma_units * (simd_bits // 32)  # float32 values per SIMD register


def gpu_lanes(sms: int, fp32_per_sm: int) -> int:
    return sms * fp32_per_sm
# --8<-- [end:lanes]


if __name__ == "__main__":
    cpu, gpu = cpu_lanes(56, 2, 512), gpu_lanes(132, 128)
    print(f"CPU: 56 cores x 2 FMA units x 16 lanes = {cpu:,} FP32 lanes")
    print(f"GPU: 132 SMs x 128 FP32 units = {gpu:,} FP32 lanes")
    print(f"GPU / CPU: {gpu / cpu:.1f}")
