"""Time the OpenCL vector-add and SAXPY kernels on each OpenCL device, into a results file.

Run:  python snippets/opencl/bench_opencl.py [--n N] [--device any|gpu|cpu|all] [--out FILE]

Kernel time comes from OpenCL profiling events (what the device did); end-to-end time adds
the copies to and from the device, on the host clock. Every result is checked before timing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import pyopencl as cl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import saxpy  # noqa: E402
import vector_add  # noqa: E402
from bench import results, system, timing  # noqa: E402
from cl_device import NoDevice, all_devices, describe, kind_of, make_queue, pick_device  # noqa: E402


def event_stats(samples: list[float]) -> dict:
    return {"median_s": statistics.median(samples), "min_s": min(samples),
            "max_s": max(samples), "repeats": len(samples), "clock": "opencl-event",
            "spread": round(max(samples) / min(samples), 4) if min(samples) > 0 else None}


def bench_device(device, n: int, repeats: int) -> list[dict]:
    ctx, queue = make_queue(device, profiling=True)
    mf = cl.mem_flags
    a, b = vector_add.make_inputs(n)
    x, y0 = saxpy.make_inputs(n)
    alpha = np.float32(2.0)
    gsize = (-(-n // vector_add.LOCAL_SIZE) * vector_add.LOCAL_SIZE,)
    lsize = (vector_add.LOCAL_SIZE,)
    add_k = cl.Kernel(cl.Program(ctx, vector_add.SOURCE).build(), "vector_add")
    saxpy_k = cl.Kernel(cl.Program(ctx, saxpy.SOURCE).build(), "saxpy")
    d_a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    d_b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    d_c = cl.Buffer(ctx, mf.READ_WRITE, a.nbytes)
    d_x = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    d_y = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y0)

    # Correctness first, on the full size.
    c = vector_add.add_on_device(queue, a, b)
    add_bad = int(np.count_nonzero(c != a + b))
    out = saxpy.saxpy_on_device(queue, float(alpha), x, y0)
    saxpy_bad = int(saxpy.mismatches(out, saxpy.reference(float(alpha), x, y0)).size)

    def run_add():
        return add_k(queue, gsize, lsize, d_a, d_b, d_c, np.int64(n))

    def run_saxpy():  # y is updated in place; SAXPY's cost does not depend on the values
        return saxpy_k(queue, gsize, lsize, np.int64(n), alpha, d_x, d_y)

    def kernel_times(run) -> list[float]:
        for _ in range(2):
            run().wait()
        samples = []
        for _ in range(repeats):
            ev = run()
            ev.wait()
            samples.append((ev.profile.end - ev.profile.start) * 1e-9)
        return samples

    host = np.empty_like(a)

    def end_to_end(run, inputs):
        def go():
            for buf, arr in inputs:
                cl.enqueue_copy(queue, buf, arr)
            run()
            cl.enqueue_copy(queue, host, inputs[-1][0] if run is run_saxpy else d_c)
        return go

    nbytes = 3 * 4 * n  # two arrays read, one written (SAXPY: x, y read; y written)
    params = {"n": n, "local_size": vector_add.LOCAL_SIZE, "device_name": device.name.strip(),
              "platform": device.platform.name.strip(), "opencl": device.version.strip()}
    dev = "gpu" if kind_of(device) == "gpu" else "cpu"
    rows = []
    for case, run, bad, inputs in (
            ("vector_add", run_add, add_bad, [(d_a, a), (d_b, b)]),
            ("saxpy", run_saxpy, saxpy_bad, [(d_x, x), (d_y, y0)])):
        err = {"metric": "mismatched_elements", "value": bad}
        rows.append(results.measurement(case, "opencl", dev, "kernel", event_stats(kernel_times(run)),
                                        params=params, bytes=nbytes, flops=n if case == "vector_add" else 2 * n,
                                        error=err))
        stats = timing.time_host(end_to_end(run, inputs), repeats=repeats)
        rows.append(results.measurement(case, "opencl", dev, "end_to_end", stats, params=params,
                                        bytes=nbytes, error=err))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--n", type=vector_add.positive_int, default=2**24,
                        help="elements per array (default 2^24 = 16,777,216)")
    parser.add_argument("--device", choices=("any", "gpu", "cpu", "all"), default="all",
                        help="which OpenCL devices to time (default: every device found)")
    parser.add_argument("--repeats", type=vector_add.positive_int, default=timing.MIN_REPEATS)
    parser.add_argument("--out", type=Path, default=None, help="write a results JSON file here")
    args = parser.parse_args(argv)

    try:
        devices = [d for _, d in all_devices()] if args.device == "all" else [pick_device(args.device)]
    except NoDevice as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not devices:
        print("error: no OpenCL device found", file=sys.stderr)
        return 1
    rows = []
    for device in devices:
        print(f"device: {describe(device)}")
        rows += bench_device(device, args.n, args.repeats)
    print(f"{'case':<11} {'device':<6} {'phase':<10} {'median ms':>10} {'GB/s':>8}  errors")
    for m in rows:
        gbs = m["bytes"] / m["median_s"] / 1e9 if m["median_s"] > 0 else float("nan")
        print(f"{m['case']:<11} {m['device']:<6} {m['phase']:<10} {m['median_s'] * 1e3:>10.3f} "
              f"{gbs:>8.1f}  {m['error']['value']}")
    if args.out:
        notes = ["kernel: OpenCL profiling events around one kernel; end_to_end: host clock around "
                 "copy in, kernel, copy out",
                 "bytes: 12 per element; for kernel rows, two float32 arrays read and one written "
                 "in device memory; for end_to_end rows, two arrays copied in and one copied out"]
        results.write_results(args.out, "opencl", system.describe_system(check_cuda=False), rows, notes)
        print(f"wrote {args.out}")
    bad = sum(m["error"]["value"] for m in rows)
    if bad:
        print(f"error: {bad} mismatched elements", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
