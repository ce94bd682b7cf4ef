"""The benchmark runner: times a topic's benchmark the fair way and returns measurements.

A topic's `benchmark.py` defines one `Benchmark`: its registry of variants (key -> `Variant`:
the label a reader sees, CPU or GPU, its step on the page), its cases (problem sizes), `setup` (variant, params) -> `Prepared` callables, a
`reference` to check every variant against, a `check`, and the work it does (`counts`).
`run_benchmark` then, for every case and variant:

1. checks correctness first (a variant that fails is reported and not timed: a note
   "<case>/<variant> failed ...", which `failures` picks out and `run.py` exits 1 on);
2. warms up, then takes at least 10 timed samples (median, min, max) with `bench.timing`:
   host clock for CPU variants and for GPU end-to-end (allocation, copies, kernel, copy back),
   CUDA events for GPU kernel-only time;
3. batches calls whose single run is shorter than `min_sample_s` and divides by the batch
   size, so that clock resolution and launch jitter do not decide the result;
4. measures compile time on its own, in fresh processes: first call with an empty on-disk
   cache (NUMBA_CACHE_DIR pointed at a new folder) and first call with that cache warm.

A variant timed outside Python (a CUDA C binary, a framework's own loop) sets
`Prepared.external`: a callable returning the program's output, whose `BENCH {json}` lines
(`bench.external`) carry the samples, the calls per sample and the correctness check.

Without a GPU the GPU variants are skipped and the notes say why. `bench/run.py` is the CLI:
`run.py <topic>` imports snippets/<topic>/benchmark.py and runs its BENCHMARK.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from bench import external, gpu_state, results, timing

PHASES = ("kernel", "end_to_end", "compile_first", "compile_cached", "context_init")


# --8<-- [start:api]
@dataclass
class Prepared:
    """What `setup` returns for one variant and one case."""
    run: Callable[[], Any] | None = None  # everything: allocate, copy in, compute, copy back;
    #                                       returns the result
    kernel: Callable[[], Any] | None = None  # GPU only: device work on data already on the device
    fetch: Callable[[], Any] | None = None  # GPU only: copy the kernel's output back (for checking)
    external: Callable[[], str] | None = None  # timed outside Python: returns the program's
    #                                            output, whose `BENCH {json}` lines are the figures
    # `run` may do `calls` calls' work (an epoch of n images: n; the figures are per call);
    # `record` goes into the measurement (params, extra); in a case timed in rounds
    # (Case.rounds), `trace(median_s)` profiles one more run of a GPU row after the rounds.
    calls: int = 1
    record: dict = field(default_factory=dict)
    trace: Callable[[float], dict] | None = None


@dataclass(frozen=True)
class Variant:
    """One version a page shows: the single place its label and step are written."""
    label: str  # what a reader sees (the runner copies it into the results file)
    device: str = "gpu"  # "cpu" or "gpu"
    step: str = ""  # its place in the page's progression ("1", "2", ...), if it has one
    group: str = ""  # a role the page picks variants by ("copy", "ceiling", ...)
    runs: bool = True  # False: reported by another variant's program, never run on its own


@dataclass
class Case:
    params: dict  # problem size, passed to setup/reference/counts
    variants: tuple[str, ...] | None = None  # run by default (None: every variant that runs)
    note: str = ""  # why some variants are left out by default
    default: bool = True  # run when no cases are named (False: a quick check, on request)
    rounds: timing.Rounds | None = None  # time the case's rows together, in interleaved rounds


@dataclass
class Benchmark:
    name: str
    variants: dict[str, Variant]  # key -> Variant: the topic's registry
    cases: dict[str, Case]
    setup: Callable[[str, dict], Prepared]
    reference: Callable[[dict], Any]  # the trusted result for a case
    check: Callable[[str, Any, Any], dict]  # (variant, result, reference) -> {"metric", "value", "ok"}
    counts: Callable[[str, dict, Any], dict]  # (variant, params, reference) -> flops/bytes/work
    compiled: tuple[str, ...] = ()  # variants compiled on first call: their compile time is probed
    probe_params: dict = field(default_factory=dict)  # a tiny case for compile-time probes

    def __post_init__(self):
        for key, v in self.variants.items():
            if v.device not in ("cpu", "gpu"):
                raise ValueError(f"{self.name}: variant {key}: device must be cpu or gpu")
        for name, case in self.cases.items():
            unknown = [v for v in case.variants or () if v not in self.variants]
            if unknown:
                raise ValueError(f"{self.name}: case {name} names unknown variants {unknown}")

    def runnable(self) -> list[str]:
        return [k for k, v in self.variants.items() if v.runs]

    def device(self, key: str) -> str:
        return self.variants[key].device

    def described(self) -> dict:
        """The registry as the results file records it (renderers read labels from there)."""
        return {k: {"label": v.label, "device": v.device, "step": v.step, "group": v.group}
                for k, v in self.variants.items()}
# --8<-- [end:api]


def gpu_status() -> tuple[bool, str]:
    """(usable, why): can GPU variants run here, and if not, why not."""
    try:
        from numba import config, cuda
    except ImportError as exc:
        return False, f"GPU variants skipped: Numba is not installed ({exc})"
    if config.ENABLE_CUDASIM:
        return True, ("GPU variants ran on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): "
                      "their times measure Python on the CPU, not a GPU")
    if not cuda.is_available():
        return False, ("GPU variants skipped: no CUDA GPU found here "
                       "(numba.cuda.is_available() is False)")
    return True, ""


def progress(message: str, start: list[float] = [time.perf_counter()]) -> None:  # noqa: B006
    print(f"[{time.perf_counter() - start[0]:7.1f} s] {message}", file=sys.stderr, flush=True)


def calls_per_sample(seconds: float, min_sample_s: float) -> int:
    if seconds <= 0:
        return 1000
    return max(1, min(100_000, math.ceil(min_sample_s / seconds)))


def batched(fn: Callable[[], Any], calls: int) -> Callable[[], None]:
    if calls == 1:
        return fn

    def many():
        for _ in range(calls):
            fn()
    return many


def per_call(stats: timing.Stats, calls: int) -> timing.Stats:
    return timing.Stats(stats.median_s / calls, stats.min_s / calls, stats.max_s / calls,
                        stats.repeats, stats.clock, stats.calls_per_sample * calls, stats.sm_clock)


def gpu_conditions(stats: timing.Stats, readings: list[int], fields: dict) -> dict:
    """What a GPU measurement records of the card's state: the SM clock while its samples ran
    (read at each sample for event timings, else sampled by a thread) and the L2: never flushed
    between samples, so a problem whose bytes fit in the L2 is timed with a warm cache."""
    clock = stats.sm_clock or gpu_state.clock_record(readings, "every 5 ms")
    l2 = gpu_state.l2_bytes()
    moved = fields.get("bytes")
    return {"sm_clock": clock,
            "l2": {"flushed": False, "bytes": l2,
                   "fits": None if l2 is None or not moved else moved <= l2}}


FAILED = re.compile(r"^\S+/\S+ failed\b")


def failures(notes: list[str]) -> list[str]:
    """The notes that report a failed variant ("<case>/<variant> failed ...")."""
    return [n for n in notes if FAILED.match(n)]


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    stderr = getattr(exc, "stderr", None)
    if isinstance(stderr, bytes):
        stderr = stderr.decode(errors="replace")
    if stderr and stderr.strip():
        text += f" (stderr: {stderr.strip().splitlines()[-1]})"
    text = " ".join(text.split())
    return text if len(text) <= 400 else text[:397] + "..."


def measure_external(bench: Benchmark, case: str, variant: str, params: dict, reference: Any,
                     output: Callable[[], str]) -> tuple[list[dict], str]:
    """Run a variant timed outside Python and turn its `BENCH` records into measurements."""
    try:
        with gpu_state.Sampler() as sampler:
            text = output()
        records = external.parse(text)
    except (OSError, subprocess.SubprocessError, ValueError, RuntimeError) as exc:
        return [], f"{case}/{variant} failed: its program gave no usable figures ({_one_line(exc)})"
    bad = [f"{r['variant']} {r['phase']}: {r['error']['metric']} = {r['error']['value']}"
           for r in records if not r["error"]["ok"]]
    if bad:
        return [], f"{case}/{variant} failed its correctness check ({'; '.join(bad)}); not recorded"
    counted = bench.counts(variant, params, reference)
    found = []
    for r in records:
        clock = f"{r.get('clock', external.DEFAULT_CLOCK)} (external)"
        stats = timing.summarize(r["samples_s"], clock, r["calls_per_sample"])
        fields = {**counted, "params": {**params, **r.get("params", {})},
                  "error": {k: v for k, v in r["error"].items() if k != "ok"}}
        fields.update({k: r[k] for k in ("bytes", "flops", "extra") if k in r})
        if r["variant"] not in bench.variants:
            return [], (f"{case}/{variant} failed: its program reported variant {r['variant']!r}, "
                        "which the registry does not name")
        device = bench.device(r["variant"])
        if device == "gpu":
            fields.update(gpu_conditions(stats, sampler.readings, fields))
        found.append(results.measurement(case, r["variant"], device, r["phase"], stats, **fields))
    return found, ""


def _time(fn, calls, clock, repeats, warmup):
    timer = timing.time_cuda if clock == "cuda" else timing.time_host
    return per_call(timer(batched(fn, calls), repeats=repeats, warmup=warmup), calls)


def measure_variant(bench: Benchmark, case: str, variant: str, params: dict, reference: Any,
                    repeats: int, warmup: int, min_sample_s: float) -> tuple[list[dict], str]:
    """Check one variant, then time it. Returns (measurements, problem) with problem "" if OK."""
    device = bench.device(variant)
    prep = bench.setup(variant, params)
    if prep.external is not None:
        return measure_external(bench, case, variant, params, reference, prep.external)
    if prep.run is None:
        raise ValueError(f"{bench.name}: setup({variant!r}) returned neither run nor external")
    t0 = time.perf_counter()
    outputs = {"end_to_end": prep.run()}  # first calls compile; timing comes later
    first_s = time.perf_counter() - t0
    if prep.kernel is not None:
        prep.kernel()
        outputs["kernel"] = prep.fetch()
    checks = {phase: bench.check(variant, out, reference) for phase, out in outputs.items()}
    bad = [f"{phase}: {c['metric']} = {c['value']}" for phase, c in checks.items() if not c["ok"]]
    if bad:
        return [], f"{case}/{variant} failed its correctness check ({'; '.join(bad)}); not timed"
    extra = bench.counts(variant, params, reference)
    found = []
    if device == "gpu":
        plan = [("kernel", prep.kernel, "cuda"), ("end_to_end", prep.run, "host")]
    else:  # on the CPU nothing is copied: one figure is both kernel and end-to-end
        plan = [("kernel", prep.run, "host")]
    for phase, fn, clock in plan:
        if fn is None:
            continue
        if clock == "cuda":
            one = _time(fn, 1, "cuda", 1, 0).median_s
        elif phase == "kernel" and variant not in bench.compiled:
            one = first_s  # nothing was compiled: the check run was a fair sample already
        else:
            one = timing.time_once(fn)
        calls = calls_per_sample(one, min_sample_s)
        # Event timings read the clock at each sample; host-clock GPU timings need a sampler.
        sampler = gpu_state.Sampler() if device == "gpu" and clock == "host" else None
        with sampler or contextlib.nullcontext():
            stats = _time(fn, calls, clock, repeats, warmup if one < 1.0 else 0)  # slow: warm
        if prep.calls != 1:  # a run is `calls` calls' work (an epoch of n images): per call
            stats = per_call(stats, prep.calls)
        more = (gpu_conditions(stats, sampler.readings if sampler else [], extra)
                if device == "gpu" else {})
        if prep.record:  # what the adapter says of the row (a training step's settings)
            more["extra"] = {**extra.get("extra", {}), **prep.record.get("extra", {})}
        found.append(results.measurement(
            case, variant, device, phase, stats, params={**params, **prep.record.get("params", {})},
            calls_per_sample=calls * prep.calls,
            error={k: v for k, v in checks.get(phase, checks["end_to_end"]).items() if k != "ok"},
            **{**extra, **more}))
    return found, ""


def measure_rounds(bench: Benchmark, case: str, variants: list[str], params: dict,
                   reference: Any, spec: timing.Rounds) -> tuple[list[dict], list[str]]:
    """A case's rows in one process, timed together in interleaved rounds (timing.Rounds): each
    set up, run once (compiling) and once more, checked; then the rounds; then each GPU row's
    trace; each row's last result checked again. Returns (measurements, problems)."""
    ready, problems, start = {}, [], time.perf_counter()
    for variant in variants:
        t0 = time.perf_counter()
        if spec.build_s is not None and t0 - start > spec.build_s:
            problems.append(f"{case}/{variant} failed: not set up, {spec.build_s:g} s had passed")
            continue
        try:
            prep = bench.setup(variant, params)
            prep.run()  # compiles
            check = bench.check(variant, prep.run(), reference)
        except Exception as exc:  # noqa: BLE001 - one row's failure is its own
            problems.append(f"{case}/{variant} failed: {_one_line(exc)}")
            continue
        if not check["ok"]:
            problems.append(f"{case}/{variant} failed its correctness check ({check['metric']} = "
                            f"{check['value']}); not timed")
            continue
        ready[variant] = prep, time.perf_counter() - t0
        progress(f"{case}: {variant}: ready in {ready[variant][1]:.1f} s")
    groups = [{v: p.run for v, (p, _) in ready.items() if bench.device(v) == d}
              for d in ("gpu", "cpu")]  # no CPU row's threads share the host with a GPU round
    with gpu_state.Sampler() as sampler:
        timed = timing.time_rounds(groups, spec, say=progress)
    found = []
    for variant, (prep, ready_s) in ready.items():
        t, device = timed[variant], bench.device(variant)
        check = bench.check(variant, t["last"], reference)
        if not check["ok"]:
            problems.append(f"{case}/{variant} failed its correctness check after its rounds "
                            f"({check['metric']} = {check['value']}); not recorded")
            continue
        stats = timing.summarize([s / prep.calls for s in t["samples_s"]], "host", prep.calls)
        counted = bench.counts(variant, params, reference)
        work = counted.get("work") or {"calls": 1}
        rounds = [{"round": r["round"], "counted": r["counted"],
                   **{f"{unit}_per_s": round(amount / statistics.median(
                       [s / prep.calls for s in r["samples_s"]]), 1)
                      for unit, amount in work.items()},
                   "samples": len(r["samples_s"]), "seconds": r["seconds"], "steal": r["steal"],
                   "cpu_per_s": r["cpu_per_s"]} for r in t["rounds"]]
        extra = {**prep.record.get("extra", {}), "rounds": rounds, "ready_s": round(ready_s, 2)}
        for unit in work:
            extra[f"rounds_{unit}_per_s"] = [r[f"{unit}_per_s"] for r in rounds if r["counted"]]
        if prep.trace is not None and device == "gpu":
            extra["trace"] = prep.trace(stats.median_s)
            progress(f"{case}: {variant}: traced")
        fields = {**counted, "params": {**params, **{k: v for k, v in asdict(spec).items() if v is not None},
                             **prep.record.get("params", {})},
                  "calls_per_sample": prep.calls, "extra": extra,
                  "error": {k: v for k, v in check.items() if k != "ok"}}
        if device == "gpu":
            fields.update(gpu_conditions(stats, sampler.readings, fields))
        found.append(results.measurement(case, variant, device, "end_to_end", stats, **fields))
    return found, problems


def probe_compile(bench: Benchmark, variants: list[str]) -> dict:
    """In this (fresh) process: seconds for the first call of each variant, compile included."""
    out: dict = {"first_call_s": {}}
    if any(bench.device(v) == "gpu" for v in variants):
        from numba import cuda

        t0 = time.perf_counter()
        cuda.current_context()  # driver and context start-up: paid once per process
        out["context_init_s"] = time.perf_counter() - t0
    for variant in variants:
        prep = bench.setup(variant, bench.probe_params)

        def first(prep=prep):
            if prep.kernel is not None:
                prep.kernel()
                prep.fetch()  # waits for the kernel
            else:
                prep.run()
        out["first_call_s"][variant] = timing.time_once(first)
    return out


def compile_times(bench: Benchmark, variants: list[str], runs: int, script: Path) -> list[dict]:
    """First-call times, each variant in its own fresh processes: `runs` with an empty on-disk
    cache (a new NUMBA_CACHE_DIR), then `runs` more with the cache those left behind. The caches
    are removed on every way out (a failed probe, Ctrl-C); a failed probe raises RuntimeError
    "compile/<variant> failed ..."."""
    samples: dict[tuple[str, str], list[float]] = {}
    for variant in variants:
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as root:
            caches = [os.path.join(root, str(i)) for i in range(runs)]
            for cache in caches:
                os.mkdir(cache)
            for phase in ("compile_first", "compile_cached"):
                progress(f"compile: {variant}, {phase.replace('compile_', '')} call "
                         f"in {runs} fresh process(es)")
                for cache in caches:
                    found = _probe(script, variant, cache)
                    samples.setdefault((phase, variant), []).append(found["first_call_s"][variant])
                    if "context_init_s" in found:
                        samples.setdefault(("context_init", "cuda"), []).append(
                            found["context_init_s"])
    measurements = []
    for (phase, variant), values in samples.items():
        stats = timing.Stats(statistics.median(values), min(values), max(values), len(values),
                             "host (fresh process)")
        device = "gpu" if variant == "cuda" else bench.device(variant)
        measurements.append(results.measurement("compile", variant, device, phase, stats,
                                                params=bench.probe_params))
    return measurements


def _probe(script: Path, variant: str, cache: str) -> dict:
    """One compile probe: `script --probe-compile` in a fresh process with its own cache."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    cmd = [sys.executable, str(script), "--probe-compile", "--variants", variant]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            raise RuntimeError(f"exit {proc.returncode}: {last.strip()[:300]}")
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError, RuntimeError) as exc:
        reason = exc if isinstance(exc, RuntimeError) else _one_line(exc)
        raise RuntimeError(f"compile/{variant} failed: compile probe failed ({reason})") from None


COMPILE = ("compile", "*")
# What compile_times measures besides the registry's variants: the CUDA context's start-up.
BUILTIN_VARIANTS = {"cuda": {"label": "CUDA context start-up", "device": "gpu", "step": "",
                             "group": "context"}}  # the completed-pair marker of the compile-time probes


def run_benchmark(bench: Benchmark, cases: list[str], variants: list[str] | None = None,
                  repeats: int = timing.MIN_REPEATS, warmup: int = 2, min_sample_s: float = 0.02,
                  compile_runs: int = 2, script: Path | None = None,
                  after_case: Callable[[list[dict], list[str]], None] | None = None,
                  previous: dict | None = None,
                  on_progress: Callable[[list[dict], list[str], list[list[str]]], None]
                  | None = None,
                  ) -> tuple[list[dict], list[str]]:
    """Measure `cases` x `variants`, then compile times; returns (measurements, notes) ready for
    write_results. `after_case(measurements, notes)` is called as each case finishes;
    `on_progress(measurements, notes, completed)` after every variant (completed: the
    [case, variant] pairs done so far). `previous` (a partial results document, see run.py
    --resume) supplies pairs already measured: they are kept and not run again."""
    previous = previous or {}
    completed: list[list[str]] = [list(p) for p in previous.get("completed", [])]
    measurements: list[dict] = [m for m in previous.get("measurements", [])
                                if m["case"] != COMPILE[0] or list(COMPILE) in completed]
    notes: list[str] = [n for n in previous.get("notes", []) if not FAILED.match(n)]
    gpu_ok, why = gpu_status()
    def note(text: str) -> None:
        if text not in notes:
            notes.append(text)

    if why:
        note(why)
    if repeats < timing.MIN_REPEATS:
        note(f"only {repeats} repeats per measurement (fewer than "
             f"{timing.MIN_REPEATS}): a quick check, not for publication")

    def usable(vs):
        return [v for v in vs if gpu_ok or bench.device(v) != "gpu"]

    for case in cases:
        spec = bench.cases[case]
        chosen = usable(variants or spec.variants or bench.runnable())
        if variants is None and spec.note:
            note(f"{case}: {spec.note}")
        if spec.rounds is not None:
            note(f"{case}: {spec.rounds.describe()}")
        todo = [v for v in chosen if [case, v] not in completed]
        if len(todo) < len(chosen):
            progress(f"{case}: {len(chosen) - len(todo)} variant(s) kept from the partial file")
        reference = None
        if todo:
            progress(f"{case}: reference result")
            reference = bench.reference(spec.params)
        if spec.rounds is not None and todo:  # the rows together, all or none kept
            progress(f"{case}: {', '.join(todo)}: set up, check, then time in rounds")
            try:
                found, problems = measure_rounds(bench, case, todo, spec.params, reference,
                                                 spec.rounds)
            except Exception as exc:  # noqa: BLE001 - the rounds' crash fails the case
                found, problems = [], [f"{case}/* failed: {_one_line(exc)}"]
            for problem in problems:
                notes.append(problem)
                progress(problem)
            measurements += found
            completed += [[case, v] for v in todo if any(m["variant"] == v for m in found)]
            todo = []
            if on_progress:
                on_progress(measurements, notes, completed)
        for variant in todo:
            progress(f"{case}: {variant}: check, then time")
            try:
                found, problem = measure_variant(bench, case, variant, spec.params, reference,
                                                 repeats, warmup, min_sample_s)
            except Exception as exc:  # noqa: BLE001 - one variant's crash is its own failure
                reason = (str(exc).strip().splitlines() or [""])[0][:300]
                found, problem = [], f"{case}/{variant} failed: {type(exc).__name__}: {reason}"
            if problem:
                notes.append(problem)
                progress(problem)
            else:
                completed.append([case, variant])
            for m in found:
                progress(f"{case}: {m['variant']} {m['phase']}: median {m['median_s']:.6f} s "
                         f"(spread {m['spread']:.3f}, {m['repeats']} x {m['calls_per_sample']} calls)")
            measurements += found
            if on_progress:
                on_progress(measurements, notes, completed)
        warm = {m["variant"] for m in measurements
                if m["case"] == case and (m.get("l2") or {}).get("fits")}
        if warm:
            note(f"{case}: its data fit in the GPU's L2 cache, which is not flushed between "
                 f"samples: the times of {', '.join(sorted(warm))} are warm-cache times")
        if after_case:
            after_case(measurements, notes)
    every = [v for v in usable(variants or bench.runnable()) if v in bench.compiled]
    if compile_runs > 0 and every and list(COMPILE) not in completed:
        # last: fresh processes do not depend on what ran before
        if script is None:
            raise ValueError("compile times need the benchmark's script (run it through run.py)")
        try:
            measurements += compile_times(bench, every, compile_runs, script)
            completed.append(list(COMPILE))
        except RuntimeError as exc:  # a failed measurement, like a variant's: a note, exit 1
            notes.append(str(exc))
            progress(str(exc))
        if on_progress:
            on_progress(measurements, notes, completed)
    return measurements, notes
