"""Tile sizes of the Numba kernels (sgemm_numba_03_smem.py to sgemm_numba_07_warptile.py), and the
sizes that follow from them. Under the CUDA simulator (NUMBA_ENABLE_CUDASIM=1) the same kernels
get small tiles: it runs one Python thread per GPU thread. A tuning run sets the warp tile
through MATMUL_NUMBA_WARPTILE ("WBM,WBN,WBK,WM,WN,WMITER,WNITER,WTM,WTN,blocks per SM")."""

import os

from numba import config

SIMULATOR = bool(config.ENABLE_CUDASIM)


# --8<-- [start:tiles]
# Tile sizes are module constants: Numba compiles them into the kernels as literals, so
# cuda.shared.array / cuda.local.array get fixed sizes and loops over them can be unrolled.
if not SIMULATOR:
    TILE = 32                                  # smem: 32x32 tile, one thread per element
    BM1, BN1, BK1, TM1 = 64, 64, 8, 8          # blocktile_1d: 512 threads, 8 results each
    BM, BN, BK, TM, TN = 128, 128, 8, 8, 8     # blocktile_2d, vectorized: 256 threads, 8x8 each
    WBM, WBN, WBK, WM, WN = 128, 128, 16, 64, 64   # warptile: block, warp tiles
    WMITER, WNITER, WTM, WTN = 2, 2, 8, 4      # warptile: 2x2 sub-tiles of 8x4, 128 a lane
else:  # the CUDA simulator: same code, small tiles, so that CI runs in seconds
    TILE = 8
    BM1, BN1, BK1, TM1 = 8, 8, 2, 4
    BM, BN, BK, TM, TN = 16, 16, 4, 4, 4
    WBM, WBN, WBK, WM, WN = 16, 16, 4, 16, 8
    WMITER, WNITER, WTM, WTN = 2, 1, 4, 4
# --8<-- [end:tiles]
BLOCKS_PER_SM = 2
if os.environ.get("MATMUL_NUMBA_WARPTILE"):  # a tuning run's tiles (the simulator's: small)
    (WBM, WBN, WBK, WM, WN, WMITER, WNITER, WTM, WTN,
     BLOCKS_PER_SM) = map(int, os.environ["MATMUL_NUMBA_WARPTILE"].split(","))

THREADS_1D = BM1 * BN1 // TM1
THREADS_2D = (BM // TM) * (BN // TN)
PAD = 4                                     # shared-memory row padding against bank conflicts
WSUBM, WSUBN = WM // WMITER, WN // WNITER
# Shapes of shared and local arrays must be plain constants, not expressions: name them here.
AS_COLS = BM + PAD                          # vectorized: padded row of the transposed A tile
WAS_COLS = WBM + PAD                        # warptile: the same
WACC_M, WACC_N = WMITER * WTM, WNITER * WTN  # warptile: results per lane
WLANES_N = WSUBN // WTN                     # lanes along one row of a warp's sub-tile
WARP = 32 if not SIMULATOR else (WSUBM // WTM) * WLANES_N
WTHREADS = (WBM // WM) * (WBN // WN) * WARP
A_LOADS = WBM * WBK // 4 // WTHREADS        # float4s of A each thread copies per step
B_LOADS = WBK * WBN // 4 // WTHREADS
# Registers capped so that BLOCKS_PER_SM warptile blocks fit on an SM (the simulator's cuda.jit
# takes no launch_bounds).
WARPTILE_OPTIONS = {"launch_bounds": (WTHREADS, BLOCKS_PER_SM)} if not SIMULATOR else {}
ALIGN = 16 if not SIMULATOR else None      # shared tiles read 16 bytes at a time (see load4)
# The copy loops assume every thread copies the same number of elements of each tile.
assert BM1 * BK1 == THREADS_1D == BK1 * BN1
assert BM * BK == 4 * THREADS_2D == BK * BN and BK % 4 == 0
assert (WSUBM // WTM) * WLANES_N == WARP and A_LOADS * WTHREADS * 4 == WBM * WBK
assert B_LOADS * WTHREADS * 4 == WBK * WBN and WTM % 4 == 0 and WTN % 4 == 0
