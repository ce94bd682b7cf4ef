"""Copies that overlap, with Numba CUDA streams: copy in, compute, copy out, cut into chunks on
several streams (overlap.cu's pipeline in Python). Run: python overlap_numba.py [N]
(no GPU: NUMBA_ENABLE_CUDASIM=1 python overlap_numba.py 4096; the simulator runs it in order)."""
import argparse

import numpy as np
from numba import config, cuda

WORK = 2048  # multiply-adds per float: about the time of copying it over PCIe Gen5


# --8<-- [start:kernel]
@cuda.jit
def compute(work, a, b, inp, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < out.size:
        v = inp[i]
        for _ in range(work):
            v = v * a + b  # float32 throughout: a and b are float32
        out[i] = v
        i += stride
# --8<-- [end:kernel]


# --8<-- [start:pipeline]
def pipeline(host_in, host_out, dev_in, dev_out, streams, chunks, work=WORK):
    """host_in -> host_out + work, chunk c on streams[c % len(streams)]. The host arrays must be
    pinned (cuda.pinned_array) for the copies to be asynchronous; returns when all is done."""
    one, n = np.float32(1), host_in.size
    blocks = 32 * getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1)
    per = -(-n // chunks)  # floats per chunk, the last one shorter
    for c in range(chunks):
        part, s = slice(c * per, min(n, (c + 1) * per)), streams[c % len(streams)]
        if part.start >= n:
            break
        threads = part.stop - part.start
        dev_in[part].copy_to_device(host_in[part], stream=s)
        compute[min(blocks, (threads + 255) // 256), 256, s](work, one, one, dev_in[part],
                                                             dev_out[part])
        dev_out[part].copy_to_host(host_out[part], stream=s)
    for s in streams:
        s.synchronize()
    return host_out
# --8<-- [end:pipeline]


# --8<-- [start:setup]
def buffers(n: int, streams: int):
    """Pinned host input (whole numbers, so that + work is exact) and output, the device
    buffers and the streams."""
    host_in = cuda.pinned_array(n, np.float32)
    host_in[:] = np.arange(n) % 1000
    host_out = cuda.pinned_array(n, np.float32)
    return (host_in, host_out, cuda.device_array(n, np.float32), cuda.device_array(n, np.float32),
            [cuda.stream() for _ in range(streams)])
# --8<-- [end:setup]


def check(n: int, chunks: int, streams: int, work: int = WORK) -> int:
    """Elements of the pipeline's output that are not input + work."""
    host_in, host_out, dev_in, dev_out, ss = buffers(n, streams)
    host_out[:] = 0
    got = pipeline(host_in, host_out, dev_in, dev_out, ss, chunks, work)
    return int(np.count_nonzero(got != host_in + np.float32(work)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=1 << 24, help="floats (default 2^24)")
    n = parser.parse_args().n
    if not 1 <= n <= 1 << 30:
        parser.error("N must be from 1 to 2^30")
    work = 4 if config.ENABLE_CUDASIM else WORK  # the simulator runs kernels as Python
    wrong = check(n, chunks=8, streams=4, work=work)
    print(f"OK: all {n} elements match" if wrong == 0 else f"FAILED: {wrong} elements wrong")
    raise SystemExit(1 if wrong else 0)
