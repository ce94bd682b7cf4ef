"""Measure every SAXPY version over a range of sizes and write one results file.

For each size N (default 2^10 .. 2^28, every second power of two) it checks, then times:
on the GPU, Numba CUDA, CuPy (when installed) and the CUDA C binary (when given with
--cuda-binary), each next to a device-to-device copy measured by the same toolkit in the same
run; host<->device copies with pageable and pinned memory at the largest size; on the CPU, NumPy
(one core) and Numba parallel (all cores, with a parallel copy as the CPU's ceiling). Without a
GPU it measures the CPU and says so in the results file's notes.

Run:  python snippets/saxpy/measure_saxpy.py --out saxpy.json [--cuda-binary build/saxpy]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from bench import results, system, timing  # noqa: E402

import saxpy_numba_cpu  # noqa: E402  (the snippets beside this file)
import saxpy_numpy  # noqa: E402

A = np.float32(2.0)
ELEM = 4  # bytes per float32
# Each GPU variant's ceiling, measured in the same run: a device-to-device copy by the same
# toolkit. The CPU versions get none: a CPU core's bandwidth depends on how many cache-line
# fetches it keeps in flight, so copy, read and SAXPY each stream at their own rate there (the
# page shows them side by side).
CEILING = {"numba_cuda": ("copy", "numba_cuda"), "cupy_kernel": ("copy", "cupy"),
           "cupy_expression": ("copy", "cupy"), "cuda_c": ("copy", "cuda_c")}


def ceiling_of(variant: str) -> dict | None:
    if variant not in CEILING:
        return None
    case, of = CEILING[variant]
    return {"case": case, "variant": of}


def saxpy_counts(n: int) -> dict:
    return {"bytes": 3 * ELEM * n, "flops": 2 * n}  # 2 reads + 1 write; one multiply, one add


def copy_counts(n: int) -> dict:
    return {"bytes": 2 * ELEM * n, "flops": 0}  # 1 read + 1 write


def record(case, variant, device, stats, n, counts, phase="kernel", **extra) -> dict:
    return results.measurement(case, variant, device, phase, stats, params={"n": n, "dtype": "float32"},
                               **counts, **extra)


def once(seconds: float) -> dict:
    """A single timed call (compile time) in the Stats layout."""
    return {"median_s": seconds, "min_s": seconds, "max_s": seconds, "repeats": 1,
            "clock": "host", "spread": 1.0}


def checked(mismatches: int, what: str) -> dict:
    if mismatches:
        raise RuntimeError(f"{what}: {mismatches} elements differ from NumPy")
    return {"metric": "mismatched_elements", "value": 0}


# ---------------------------------------------------------------- CPU

def measure_cpu(x, y, sizes, repeats, log) -> list[dict]:
    out = []
    y0 = y.copy()
    compile_s = timing.time_once(lambda: saxpy_numba_cpu.saxpy(A, x[:16], y0[:16].copy()))
    out.append(record("saxpy", "numba_parallel", "cpu", once(compile_s), 16, saxpy_counts(16),
                      phase="compile_first"))
    for n in sizes:
        xs, ys = x[:n], y0[:n].copy()  # ys is updated by every timed call
        want = A * xs + y0[:n]
        for variant, fn in (("numpy", saxpy_numpy.saxpy), ("numba_parallel", saxpy_numba_cpu.saxpy)):
            trial = y0[:n].copy()
            fn(A, xs, trial)
            err = checked(int(np.count_nonzero(trial != want)), f"{variant} at N={n}")
            stats = timing.time_host(lambda fn=fn: fn(A, xs, ys), repeats)
            out.append(record("saxpy", variant, "cpu", stats, n, saxpy_counts(n), error=err))
        dst = np.empty_like(xs)
        saxpy_numba_cpu.copy(xs, dst)
        err = checked(int(np.count_nonzero(dst != xs)), f"CPU copy at N={n}")
        stats = timing.time_host(lambda: saxpy_numba_cpu.copy(xs, dst), repeats)
        out.append(record("copy", "numba_parallel", "cpu", stats, n, copy_counts(n), error=err))
        err = checked(int(saxpy_numba_cpu.read(xs) != np.sum(xs, dtype=np.float64)), f"CPU read at N={n}")
        stats = timing.time_host(lambda: saxpy_numba_cpu.read(xs), repeats)
        out.append(record("read", "numba_parallel", "cpu", stats, n, {"bytes": ELEM * n, "flops": 0},
                          error=err))
        log(f"CPU N=2^{n.bit_length() - 1} done")
    return out


# ---------------------------------------------------------------- GPU: Numba CUDA

def measure_numba_cuda(x, y, sizes, repeats, transfers, log) -> list[dict]:
    from numba import cuda

    import saxpy_numba_cuda as nc

    out = []
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    d_copy = cuda.device_array_like(d_x)
    first = timing.time_once(lambda: (nc.run_saxpy(A, d_x[:16], d_y[:16]), cuda.synchronize()))
    out.append(record("saxpy", "numba_cuda", "gpu", once(first), 16, saxpy_counts(16),
                      phase="compile_first"))
    for n in sizes:
        xs, ys, cs = d_x[:n], d_y[:n], d_copy[:n]
        ys.copy_to_device(y[:n])
        nc.run_saxpy(A, xs, ys)
        err = checked(int(np.count_nonzero(ys.copy_to_host() != A * x[:n] + y[:n])),
                      f"Numba CUDA at N={n}")
        blocks = nc.grid_for(n)
        stats = timing.time_cuda(lambda: nc.run_saxpy(A, xs, ys, blocks), repeats, warmup=3,
                                 calls=nc.CALLS)
        out.append(record("saxpy", "numba_cuda", "gpu", stats, n, saxpy_counts(n), error=err,
                          ceiling=ceiling_of("numba_cuda"),
                          launch={"blocks": blocks, "threads": nc.THREADS}))
        cs.copy_to_device(xs)
        err = checked(int(np.count_nonzero(cs.copy_to_host() != x[:n])), f"device copy at N={n}")
        stats = timing.time_cuda(lambda: cs.copy_to_device(xs), repeats, warmup=3, calls=nc.CALLS)
        out.append(record("copy", "numba_cuda", "gpu", stats, n, copy_counts(n), error=err))
        log(f"Numba CUDA N=2^{n.bit_length() - 1} done")
    if transfers:
        n = sizes[-1]
        cs = d_copy[:n]
        pageable, pinned = np.empty(n, np.float32), cuda.pinned_array(n, np.float32)
        pageable[:] = x[:n]
        pinned[:] = x[:n]
        plan = [("h2d", "pageable", lambda: cs.copy_to_device(pageable)),
                ("h2d", "pinned", lambda: cs.copy_to_device(pinned)),
                ("d2h", "pageable", lambda: cs.copy_to_host(pageable)),
                ("d2h", "pinned", lambda: cs.copy_to_host(pinned))]
        for case, memory, fn in plan:
            stats = timing.time_cuda(fn, repeats, warmup=2)
            out.append(record(case, "numba_cuda", "gpu", stats, n, {"bytes": ELEM * n, "flops": 0},
                              phase="transfer", host_memory=memory))
        if np.count_nonzero(pinned != x[:n]) or np.count_nonzero(pageable != x[:n]):
            raise RuntimeError("a host<->device copy returned wrong data")
        log("host<->device transfers done")
    return out


# ---------------------------------------------------------------- GPU: CuPy

def measure_cupy(cp, x, y, sizes, repeats, log) -> list[dict]:
    import saxpy_cupy as sc

    out = []
    saxpy = sc.kernels(cp)
    d_x, d_y = cp.asarray(x), cp.asarray(y)
    d_copy = cp.empty_like(d_x)
    first = timing.time_once(lambda: (saxpy(A, d_x[:16], d_y[:16]), cp.cuda.Device().synchronize()))
    out.append(record("saxpy", "cupy_kernel", "gpu", once(first), 16, saxpy_counts(16),
                      phase="compile_first"))
    for n in sizes:
        xs, ys, cs = d_x[:n], d_y[:n], d_copy[:n]
        ys.set(y[:n])
        saxpy(A, xs, ys)
        want = A * x[:n] + y[:n]
        err = checked(int(np.count_nonzero(cp.asnumpy(ys) != want)), f"CuPy kernel at N={n}")
        err_expr = checked(int(np.count_nonzero(cp.asnumpy(A * cp.asarray(x[:n]) + cp.asarray(y[:n]))
                                                != want)), f"CuPy expression at N={n}")
        for variant, fn, e in (("cupy_kernel", lambda: saxpy(A, xs, ys), err),
                               ("cupy_expression", lambda: A * xs + ys, err_expr)):
            stats = sc.time_cupy(cp, fn, repeats)
            out.append(record("saxpy", variant, "gpu", stats, n, saxpy_counts(n), error=e,
                              ceiling=ceiling_of(variant)))
        nbytes = ELEM * n
        cs.data.copy_from_device(xs.data, nbytes)
        err = checked(int(np.count_nonzero(cp.asnumpy(cs) != x[:n])), f"CuPy copy at N={n}")
        stats = sc.time_cupy(cp, lambda: cs.data.copy_from_device(xs.data, nbytes), repeats)
        out.append(record("copy", "cupy", "gpu", stats, n, copy_counts(n), error=err))
        log(f"CuPy N=2^{n.bit_length() - 1} done")
    return out


# ---------------------------------------------------------------- GPU: the CUDA C binary

LINE = re.compile(r"^(?P<what>saxpy|device copy)\s+median (?P<med>[\d.]+) ms \(min (?P<min>[\d.]+), "
                  r"max (?P<max>[\d.]+), (?P<rep>\d+) repeats\)")
LAUNCH = re.compile(r"(?P<sms>\d+) SMs, (?P<blocks>\d+) blocks x (?P<threads>\d+) threads")


def parse_cuda_c(stdout: str) -> dict:
    """{"saxpy": Stats dict, "device copy": Stats dict, "launch": {...}} from the binary's output."""
    found = {}
    for line in stdout.splitlines():
        m = LINE.match(line)
        if m:
            med, lo, hi = (float(m[k]) / 1e3 for k in ("med", "min", "max"))
            found[m["what"]] = {"median_s": med, "min_s": lo, "max_s": hi, "repeats": int(m["rep"]),
                                "clock": "cuda-event", "spread": round(hi / lo, 4) if lo else None}
        m = LAUNCH.search(line)
        if m:
            found["launch"] = {k: int(v) for k, v in m.groupdict().items()}
    if "saxpy" not in found or "device copy" not in found or "OK: all" not in stdout:
        raise ValueError("unexpected output from the CUDA C binary:\n" + stdout[-500:])
    return found


def measure_cuda_c(binary, sizes, repeats, log) -> list[dict]:
    out = []
    for n in sizes:
        proc = subprocess.run([str(binary), str(n), str(repeats)], capture_output=True, text=True,
                              timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{binary} {n} exited {proc.returncode}: {proc.stderr.strip()}")
        found = parse_cuda_c(proc.stdout)
        err = {"metric": "mismatched_elements", "value": 0}  # the binary checks every element
        out.append(record("saxpy", "cuda_c", "gpu", found["saxpy"], n, saxpy_counts(n), error=err,
                          ceiling=ceiling_of("cuda_c"), launch=found.get("launch")))
        out.append(record("copy", "cuda_c", "gpu", found["device copy"], n, copy_counts(n), error=err))
        log(f"CUDA C N=2^{n.bit_length() - 1} done")
    return out


# ---------------------------------------------------------------- the table

def bandwidth_table(measurements: list[dict]) -> list[tuple]:
    """(variant, device, n, ms, GB/s, fraction of its ceiling) for SAXPY at each variant's largest N."""
    ceilings = {(m["case"], m["variant"], m["params"]["n"]): m for m in measurements
                if m["case"] in ("copy", "read") and m["phase"] == "kernel"}
    best = {}
    for m in measurements:
        if m["case"] == "saxpy" and m["phase"] == "kernel":
            if m["variant"] not in best or m["params"]["n"] > best[m["variant"]]["params"]["n"]:
                best[m["variant"]] = m
    rows = []
    for variant, m in best.items():
        n = m["params"]["n"]
        bw = m["bytes"] / m["median_s"]
        c = m.get("ceiling") or {}
        roof = ceilings.get((c.get("case"), c.get("variant"), n))
        frac = bw / (roof["bytes"] / roof["median_s"]) if roof else None
        rows.append((variant, m["device"], n, m["median_s"] * 1e3, bw / 1e9, frac))
    return rows


def print_table(measurements: list[dict]) -> None:
    print(f"{'variant':16s} {'device':6s} {'N':>11s} {'ms':>10s} {'GB/s':>9s} {'of copy':>8s}")
    for variant, device, n, ms, gbs, frac in bandwidth_table(measurements):
        f = f"{100 * frac:7.1f}%" if frac is not None else "       -"
        print(f"{variant:16s} {device:6s} {n:11d} {ms:10.4f} {gbs:9.1f} {f}")
    for m in measurements:
        if m["phase"] == "transfer":
            print(f"{m['case']} {m['host_memory']:8s} N={m['params']['n']}: "
                  f"{m['bytes'] / m['median_s'] / 1e9:.1f} GB/s")


# ---------------------------------------------------------------- CLI

def exponents(text: str) -> list[int]:
    """"10:28:2" -> [10, 12, ..., 28]; "20" -> [20]."""
    try:
        parts = [int(p) for p in text.split(":")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not LO:HI[:STEP] exponents: {text!r}") from None
    if len(parts) == 1:
        parts = parts * 2
    lo, hi, step = (parts + [1])[:3]
    if not (1 <= lo <= hi <= 32 and step >= 1) or len(parts) > 3:
        raise argparse.ArgumentTypeError(f"need 1 <= LO <= HI <= 32 and STEP >= 1: {text!r}")
    return list(range(lo, hi + 1, step)) if (hi - lo) % step == 0 else \
        list(range(lo, hi + 1, step)) + [hi]


def at_least_10(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 10:
        raise argparse.ArgumentTypeError(f"must be at least 10, got {value}")
    return value


def gpu_state() -> tuple[bool, str]:
    from numba import config, cuda

    if config.ENABLE_CUDASIM:
        return True, ("GPU variants ran on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): "
                      "their times are Python on the CPU, not a GPU")
    if not cuda.is_available():
        return False, "no CUDA GPU found (numba.cuda.is_available() is False): GPU variants skipped"
    return True, ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--sizes", type=exponents, default=exponents("10:28:2"),
                        help="exponents of two, LO:HI[:STEP] (default 10:28:2: 2^10 .. 2^28)")
    parser.add_argument("--cpu-sizes", type=exponents, default=None,
                        help="exponents for the CPU versions (default: the same as --sizes)")
    parser.add_argument("--repeats", type=at_least_10, default=20,
                        help="timed repeats per measurement, at least 10 (default 20)")
    parser.add_argument("--cpu-repeats", type=at_least_10, default=10,
                        help="timed repeats for the CPU versions, at least 10 (default 10)")
    parser.add_argument("--cuda-binary", type=Path, default=None,
                        help="the compiled snippets/saxpy/saxpy.cu, run once per size")
    parser.add_argument("--no-transfers", action="store_true", help="skip host<->device copies")
    parser.add_argument("--out", type=Path, default=None, help="results file to write (JSON)")
    parser.add_argument("--note", action="append", default=[],
                        help="a note to record in the results file (repeatable)")
    args = parser.parse_args(argv)
    if args.cuda_binary is not None and not args.cuda_binary.is_file():
        parser.error(f"--cuda-binary {args.cuda_binary} is not a file")

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    gpu_sizes = [2**e for e in args.sizes]
    cpu_sizes = [2**e for e in (args.cpu_sizes or args.sizes)]
    x, y = saxpy_numpy.make_inputs(max(gpu_sizes + cpu_sizes))
    notes = ["bandwidth counts 3 float32 per SAXPY element (read x, read y, write y) and 2 per "
             "copied element; NumPy really moves 5 (it makes a temporary array for a*x)",
             "GPU kernels and copies are timed with CUDA events around one call (median of "
             f"{args.repeats}, after warm-up; CPU versions: median of {args.cpu_repeats}); at "
             "small N that time is mostly launch overhead"] + args.note
    failed: list[str] = []
    measurements = measure_cpu(x, y, cpu_sizes, args.cpu_repeats, log)
    has_gpu, why = gpu_state()
    if why:
        notes.append(why)
    if has_gpu:
        measurements += measure_numba_cuda(x, y, gpu_sizes, args.repeats,
                                           not args.no_transfers, log)
        import saxpy_cupy

        cp = saxpy_cupy.import_cupy()
        if cp is None:
            notes.append("CuPy is not installed or found no GPU: CuPy versions skipped")
        else:
            try:  # a failure here must not lose the other versions' results
                measurements += measure_cupy(cp, x, y, gpu_sizes, args.repeats, log)
            except Exception as exc:
                failed.append(f"CuPy versions failed: {type(exc).__name__}: {exc}")
    if args.cuda_binary is not None:
        if has_gpu and not why:
            try:
                measurements += measure_cuda_c(args.cuda_binary.resolve(), gpu_sizes, args.repeats,
                                               log)
            except Exception as exc:
                failed.append(f"CUDA C version failed: {type(exc).__name__}: {exc}")
        else:
            notes.append("CUDA C binary not run: no real GPU")
    elif has_gpu and not why:
        notes.append("CUDA C version not measured (no --cuda-binary given)")
    notes += failed
    if args.out is not None:
        results.write_results(args.out, "saxpy", system.describe_system(), measurements, notes)
        log(f"wrote {args.out}")
    for note in notes[2:]:
        print(f"note: {note}")
    print_table(measurements)
    for problem in failed:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
