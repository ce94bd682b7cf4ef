"""Run a topic's benchmark the fair way and write its results file.

Run:  python snippets/bench/run.py mandelbrot --output docs/data/mandelbrot-h100.json
A topic's benchmark is snippets/<topic>/benchmark.py, a module that defines BENCHMARK; this
command imports it with its topic's folder first on sys.path, so it finds its lessons by name.
Progress goes to stderr; a summary table goes to stdout once the results file is written.
The output is written whole or not at all. While the run goes on, what is measured so far is kept
in <name>.partial.json beside it ("partial": true); Ctrl-C leaves an earlier output untouched,
and --resume continues from the partial file; where the machine is gone, --finish writes the
partial file final as it stands, with a note naming what it lacks.

Ctrl-C at any moment prints one line and exits 130: run as a command (or imported first by a
script that calls `main`), this module installs, before anything heavy loads, a SIGINT handler
that exits at once; `main` puts Python's own handler back for the run, whose Ctrl-C keeps what
was measured.
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted(signum, frame):
    """Ctrl-C while a benchmark's imports load: one line and exit code 130, at once."""
    os.write(2, b"interrupted (Ctrl-C)\n")
    os._exit(130)  # an exception raised here could land inside a C extension's import


def _imported_by_main() -> bool:
    """Whether the module importing this one is a script's __main__ (one that calls `main`)."""
    frame = sys._getframe(1).f_back  # past this module's own frame
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        frame = frame.f_back
    return frame is not None and frame.f_globals.get("__name__") == "__main__"


if __name__ == "__main__" or _imported_by_main():
    signal.signal(signal.SIGINT, _interrupted)

import argparse  # noqa: E402  (after the handler: these imports take time)
import importlib.util  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

from bench import adapters, cli, results, runner, system, timing  # noqa: E402

SNIPPETS = Path(__file__).resolve().parents[1]  # the topics: snippets/<topic>/benchmark.py
# The topic a compile probe measures: runner.compile_times runs this command again, in fresh
# processes, as `run.py --probe-compile --variants V`; they inherit the topic from the run.
PROBED_TOPIC = "BENCH_PROBED_TOPIC"
PARTIAL_NOTE = "partial results: the run had not finished when this was written"


def summary(measurements: list[dict]) -> str:
    """A plain-text table: one row per case, variant and phase."""
    lines = [f"{'case':<10} {'variant':<14} {'phase':<15} {'median s':>12} {'spread':>7} "
             f"{'repeats':>7} {'calls':>6}"]
    for m in measurements:
        lines.append(f"{m['case']:<10} {m['variant']:<14} {m['phase']:<15} {m['median_s']:>12.6f} "
                     f"{m['spread']:>7.3f} {m['repeats']:>7} {m.get('calls_per_sample', 1):>6}")
    return "\n".join(lines)


def parser(name: str) -> cli.Parser:
    p = cli.Parser(prog=f"benchmark {name}", description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=cli.name_list,
                   help="comma-separated (default: every default case)")
    p.add_argument("--variants", type=cli.name_list,
                   help="comma-separated (default: each case's own list)")
    p.add_argument("--repeats", type=cli.positive_int(100_000), default=timing.MIN_REPEATS,
                   help=f"timed samples per measurement (default {timing.MIN_REPEATS}; fewer "
                        "marks the file a quick check, not for publication)")
    p.add_argument("--warmup", type=cli.non_negative_int(10_000), default=2,
                   help="untimed calls before timing (default 2)")
    p.add_argument("--min-sample", type=cli.positive_float(60.0), default=0.02, metavar="SECONDS",
                   help="batch calls shorter than this into one sample (default 0.02)")
    p.add_argument("--compile-runs", type=cli.non_negative_int(100), default=2,
                   help="fresh processes per variant and cache state for compile times; "
                        "0 skips (default 2)")
    p.add_argument("--output", help="results file to write (JSON)")
    p.add_argument("--sass", type=cli.output_path, metavar="TXT",
                   help="write the SASS (GPU machine code) of the Numba CUDA kernels the GPU rows "
                        "launch, each compiled on the probe case (needs an NVIDIA GPU and "
                        "nvdisasm); given without --output, runs no benchmark")
    after = p.add_mutually_exclusive_group()  # what to do with an interrupted run's partial file
    after.add_argument("--resume", action="store_true",
                       help="keep what <output>.partial.json already holds and run only the rest")
    after.add_argument("--finish", action="store_true",
                       help="write <output> from <output>.partial.json as it stands, measuring "
                            "nothing (for a run whose machine is gone); a note names what it lacks")
    p.add_argument("--probe-compile", action="store_true", help=argparse.SUPPRESS)
    return p


def finish(bench: runner.Benchmark, doc: dict, partial: Path, output: Path,
           cases: list[str]) -> int:
    """The partial file made final as it stands: its own machine, date and commit, its
    measurements untouched, and a note naming every case/variant (and the compile times) that
    the interrupted run had not measured."""
    done = {tuple(pair) for pair in doc["completed"]}
    lacking = [f"{case}/{variant}" for case in cases
               for variant in bench.cases[case].variants or bench.runnable()
               if (case, variant) not in done]
    if bench.compiled and tuple(runner.COMPILE) not in done:
        lacking.append("the compile times")
    notes = [n for n in doc["notes"] if n != PARTIAL_NOTE]
    notes.append("finished from the partial file of an interrupted run (run.py --finish), "
                 "nothing measured afterwards; not measured: " + (", ".join(lacking) or "nothing"))
    results.write_results(output, bench.name, doc["system"], doc["measurements"], notes,
                          quick_check=bool(doc.get("quick_check")), code=doc.get("code"),
                          variants=doc.get("variants") or bench.described())
    partial.unlink(missing_ok=True)
    print(f"results written to {output} (not measured: {', '.join(lacking) or 'nothing'})")
    return 0


def previous_run(partial: Path, bench: runner.Benchmark) -> dict:
    """The partial results to resume from (empty if there are none); ValueError if unusable."""
    if not partial.exists():
        print(f"note: nothing to resume ({partial} does not exist); starting afresh",
              file=sys.stderr)
        return {}
    doc = results.read_results(partial, current=True)
    if not doc.get("partial") or doc["benchmark"] != bench.name:
        raise ValueError(f"{partial} is not a partial run of {bench.name}")
    completed = doc.get("completed", [])
    if not (isinstance(completed, list) and all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(n, str) for n in pair)
            for pair in completed)):
        raise ValueError(f"{partial}: completed must be a list of [case, variant] pairs")
    case_params = doc.get("case_params", {})
    if not (isinstance(case_params, dict)
            and all(isinstance(p, dict) for p in case_params.values())):
        raise ValueError(f"{partial}: case_params must map each case to its parameters")
    rows = {(m.get("case"), m.get("variant")) for m in doc.get("measurements", [])}
    cases_with_rows = {case for case, _ in rows}
    for case, variant in completed:  # a pair said done must have its rows (or, for a program
        # that reports other rows, such as a C table, at least one row of that case)
        measure = getattr(bench.variants.get(variant), "measure", None)
        other_rows = type(measure).__name__ == "CTable"
        if [case, variant] != list(runner.COMPILE) and (case, variant) not in rows \
                and not (other_rows and case in cases_with_rows):
            raise ValueError(f"{partial} says {case}/{variant} was measured but holds no row "
                             "of it; delete it or run without --resume")
    if list(runner.COMPILE) in completed and not any(m.get("case") == "compile"
                                                     for m in doc.get("measurements", [])):
        raise ValueError(f"{partial} says the compile times were measured but holds none; "
                         "delete it or run without --resume")
    for case, params in case_params.items():
        if case in bench.cases and bench.cases[case].params != params:
            raise ValueError(f"{partial} measured case {case} with other parameters; delete it "
                             "or run without --resume")
    changed = system.changed_sources(doc["code"])
    if changed:
        raise ValueError(f"{partial} was measured by other code ({', '.join(changed)} changed "
                         "since); delete it or run without --resume")
    return only_completed_rows(doc, bench, partial)


def only_completed_rows(doc: dict, bench: runner.Benchmark, partial: Path) -> dict:
    """The partial without rows of pairs it does not mark measured (a variant that failed
    after some rows, or a damaged `completed`): --resume measures those again, and --finish
    names them as not measured, so their old rows would be doubled or contradicted."""
    done = {tuple(pair) for pair in doc["completed"]}
    c_tables = {case for case, variant in done  # a C table's rows bear its own names
                if type(getattr(bench.variants.get(variant), "measure", None)).__name__ == "CTable"}
    kept, dropped = [], []
    for m in doc.get("measurements", []):
        pair = (m.get("case"), m.get("variant"))
        if pair in done or pair[0] in c_tables or (
                pair[0] == runner.COMPILE[0] and tuple(runner.COMPILE) in done):
            kept.append(m)
        elif f"{pair[0]}/{pair[1]}" not in dropped:
            dropped.append(f"{pair[0]}/{pair[1]}")
    if dropped:
        print(f"note: {partial} holds rows of {', '.join(dropped)} without marking "
              f"{'it' if len(dropped) == 1 else 'them'} measured: they are not kept",
              file=sys.stderr)
    return {**doc, "measurements": kept}


def _terminated(signum, frame):
    raise KeyboardInterrupt  # SIGTERM ends a run as Ctrl-C does: partial kept, temporaries removed


class _Progress:
    """Standard error for progress lines: a line that cannot be written (a full log,
    `2>&1 | head`) is dropped, and the run, and what it measured, go on."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        try:
            return self.stream.write(text)
        except (OSError, ValueError):
            return len(text)

    def flush(self):
        try:
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def __getattr__(self, name):
        return getattr(self.stream, name)


def main(bench: runner.Benchmark, argv: list[str] | None = None,
         folder: Path | None = None) -> int:
    """The command line of a benchmark: `run.py <topic>` calls it with the topic's BENCHMARK and
    folder (whose sources the results file hashes; default: the folder of the script run)."""
    signal.signal(signal.SIGTERM, _terminated)
    stderr, sys.stderr = sys.stderr, _Progress(sys.stderr)
    try:
        return cli.run_main(lambda a: _main(bench, a, folder), argv)
    finally:
        sys.stderr = stderr


def _main(bench: runner.Benchmark, argv: list[str] | None, folder: Path | None) -> int:
    p = parser(bench.name)
    args = p.parse_args(argv)
    main_file = getattr(sys.modules["__main__"], "__file__", None)
    script = Path(main_file).resolve() if main_file else None  # the benchmark.py being run
    if not args.probe_compile:  # the output first: no work is done for a file that cannot land
        if not (args.output or args.sass):
            p.error("--output is required")
        try:
            output = cli.check_output(args.output) if args.output else None
        except ValueError as exc:
            p.error(f"--output: {exc}")
        if args.sass and not adapters.real_gpu():
            p.error("--sass needs an NVIDIA GPU (not the CUDA simulator)")
    unknown = [v for v in args.variants or [] if v not in bench.variants]
    if unknown:
        p.error(f"unknown variant {', '.join(unknown)}; choose from {', '.join(bench.variants)}")
    if args.probe_compile:  # internal: run by compile_times in a fresh process
        print(json.dumps(runner.probe_compile(bench, args.variants or list(bench.compiled))))
        return 0
    cases = args.cases or [n for n, c in bench.cases.items() if c.default]
    unknown = [c for c in cases if c not in bench.cases]
    if unknown:
        p.error(f"unknown case {', '.join(unknown)}; choose from {', '.join(bench.cases)}")
    if args.sass:
        from bench import sass

        cli.atomic_write(args.sass, sass.dump(bench))
        print(f"SASS written to {args.sass}")
        if output is None:
            return 0
    partial = cli.partial_path(output)
    if partial is None and (args.resume or args.finish):
        p.error(f"--output {output} is not a file: there is no partial file to continue")
    try:
        with cli.lock(output if partial is not None else None):
            return _run(bench, args, p, output, partial, script, folder, cases)
    except cli.Locked as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def damaged(exc: BaseException, partial: Path) -> str:
    return (f"{partial} is damaged (nested too deeply to read)" if isinstance(exc, RecursionError)
            else str(exc))


def _run(bench, args, p, output: Path, partial: Path | None, script, folder, cases) -> int:
    """The run itself, with the output's lock held; `partial` None: nothing kept on the way."""
    previous = {}
    if args.finish:
        if not partial.exists():
            p.error(f"--finish: {partial} does not exist")
        try:
            previous = previous_run(partial, bench)
        except (OSError, ValueError, RecursionError) as exc:
            p.error(f"--finish: {damaged(exc, partial)}")
        return finish(bench, previous, partial, output, cases)
    if args.resume:
        try:
            previous = previous_run(partial, bench)
        except (OSError, ValueError, RecursionError) as exc:
            p.error(f"--resume: {damaged(exc, partial)}")
    elif partial is not None and partial.exists():
        print(f"note: {partial} (an interrupted run) will be replaced; --resume continues it "
              "instead", file=sys.stderr)

    described = system.describe_system()
    topic = folder or (script.parent if script else SNIPPETS / bench.name)  # hashed
    quick = args.repeats < timing.MIN_REPEATS or bool(previous.get("quick_check"))
    previous["notes"] = [n for n in previous.get("notes", []) if n != PARTIAL_NOTE]
    state: dict = {"measurements": previous.get("measurements", []),
                   "notes": previous["notes"], "completed": previous.get("completed", [])}

    def write(path: Path, final: bool) -> Path:
        described["cuda"]["frameworks"] = system.framework_cuda()  # imported by now
        extra = {} if final else {
            "completed": state["completed"],
            "case_params": {c: bench.cases[c].params for c in {c for c, _ in state["completed"]}
                            if c in bench.cases}}
        notes = state["notes"] + ([] if final else [PARTIAL_NOTE])
        sources = system.source_hashes(topic)
        code = {**system.code_version(), "sources": sources,
                "syntax": system.syntax_hashes(sources),
                "definitions": system.definition_hashes(sources)}
        return results.write_results(path, bench.name, described, state["measurements"], notes,
                                     quick_check=quick, partial=not final, code=code,
                                     variants={**bench.described(), **runner.BUILTIN_VARIANTS},
                                     **extra)

    def keep(measurements, notes, completed):
        state.update(measurements=list(measurements), notes=list(notes),
                     completed=[list(c) for c in completed])
        if partial is not None:
            write(partial, final=False)  # a run killed outright still leaves this behind

    try:
        measurements, notes = runner.run_benchmark(
            bench, cases, args.variants, repeats=args.repeats, warmup=args.warmup,
            min_sample_s=args.min_sample, compile_runs=args.compile_runs, script=script,
            previous=previous, on_progress=keep)
    except KeyboardInterrupt:
        kept = len(state["completed"]) if partial is not None else 0
        if kept:
            write(partial, final=False)
        where = f"{kept} finished variant(s) kept in {partial}; --resume continues" if kept \
            else "nothing finished"
        print(f"interrupted (Ctrl-C): {where}; {output} not written", file=sys.stderr)
        return cli.INTERRUPTED
    state.update(measurements=measurements, notes=notes)
    with cli.ctrl_c_held() as pressed:  # a Ctrl-C now waits: the results are written whole
        try:
            path = write(output, final=True)
        except cli.CannotWrite as exc:
            kept = f"what was measured is kept in {partial} (--resume writes it)" if partial \
                else "nothing was kept"
            print(f"error: {exc}; {kept}", file=sys.stderr)
            return 1
        if partial is not None:
            partial.unlink(missing_ok=True)
    if pressed:
        print(f"interrupted (Ctrl-C) after the results were written whole to {path}",
              file=sys.stderr)
        return cli.INTERRUPTED
    try:
        shown = cli.show("\n".join([*(f"note: {note}" for note in notes), summary(measurements),
                                    f"results written to {path}"]))
    except cli.CannotWrite as exc:
        print(f"error: {exc}; the results are in {path}", file=sys.stderr)
        return 1
    return 1 if runner.failures(notes) or not shown else 0


def dispatch(argv: list[str]) -> int:
    """`run.py <topic> [options]`: snippets/<topic>/benchmark.py's BENCHMARK run with those
    options."""
    if argv[:1] == ["--probe-compile"] and PROBED_TOPIC in os.environ:  # a compile probe
        argv = [os.environ[PROBED_TOPIC], *argv]
    if not argv or argv[0].startswith("-"):
        topics = sorted(d.name for d in SNIPPETS.iterdir() if (d / "benchmark.py").is_file())
        usage = ("usage: run.py TOPIC [options]  (TOPIC: " + ", ".join(topics) + "; "
                 "`run.py TOPIC --help` lists the options)")
        if not (argv and argv[0] in ("-h", "--help")):
            print(usage, file=sys.stderr)
            return 2
        try:  # the one way the harness writes to stdout (a full device, a reader gone)
            return 0 if cli.show(usage) else 1
        except cli.CannotWrite as exc:
            print(f"error: {exc.strerror}", file=sys.stderr)
            return 1
    script = SNIPPETS / argv[0] / "benchmark.py"
    if not (argv[0].isidentifier() and script.is_file()):
        print(f"error: no benchmark {argv[0]!r} ({script} does not exist)", file=sys.stderr)
        return 2
    os.environ[PROBED_TOPIC] = argv[0]
    sys.path[0] = str(script.parent)  # in place of this file's folder: the lessons import by name
    spec = importlib.util.spec_from_file_location("benchmark", script)
    module = sys.modules["benchmark"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return main(module.BENCHMARK, argv[1:], script.parent)


if __name__ == "__main__":
    sys.exit(dispatch(sys.argv[1:]))
