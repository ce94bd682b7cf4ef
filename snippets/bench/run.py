"""Run a registered benchmark the fair way and write its results file.

Run:  python snippets/bench/run.py mandelbrot --cases article --output results/mandelbrot.json
A benchmark is snippets/<name>/benchmark.py (or any file) that calls bench.runner.register.
Progress goes to stderr; a summary table goes to stdout once the results file is written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import results, runner, system, timing  # noqa: E402


def name_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give at least one name")
    return names


def positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value
    return parse


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def summary(measurements: list[dict]) -> str:
    """A plain-text table: one row per case, variant and phase."""
    lines = [f"{'case':<10} {'variant':<14} {'phase':<15} {'median s':>12} {'spread':>7} {'repeats':>7}"]
    for m in measurements:
        lines.append(f"{m['case']:<10} {m['variant']:<14} {m['phase']:<15} {m['median_s']:>12.6f} "
                     f"{m['spread']:>7.3f} {m['repeats']:>7}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("benchmark", help="a name (snippets/<name>/benchmark.py) or a .py path")
    parser.add_argument("--cases", type=name_list, help="comma-separated (default: every default case)")
    parser.add_argument("--variants", type=name_list,
                        help="comma-separated (default: each case's own list)")
    parser.add_argument("--repeats", type=positive(int), default=timing.MIN_REPEATS,
                        help=f"timed samples per measurement (default {timing.MIN_REPEATS})")
    parser.add_argument("--warmup", type=non_negative_int, default=2,
                        help="untimed calls before timing (default 2)")
    parser.add_argument("--min-sample", type=positive(float), default=0.02, metavar="SECONDS",
                        help="batch calls shorter than this into one sample (default 0.02)")
    parser.add_argument("--compile-runs", type=non_negative_int, default=2,
                        help="fresh processes per variant and cache state for compile times; "
                             "0 skips (default 2)")
    parser.add_argument("--output", help="results file to write (JSON)")
    parser.add_argument("--probe-compile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    try:
        bench = runner.load(args.benchmark)
    except LookupError as exc:
        parser.error(str(exc))
    unknown = [v for v in args.variants or [] if v not in bench.variants]
    if unknown:
        parser.error(f"unknown variant {', '.join(unknown)}; "
                     f"choose from {', '.join(bench.variants)}")
    if args.probe_compile:  # internal: run by compile_times in a fresh process
        print(json.dumps(runner.probe_compile(bench, args.variants or list(bench.compiled))))
        return 0
    cases = args.cases or [n for n, c in bench.cases.items() if c.default]
    unknown = [c for c in cases if c not in bench.cases]
    if unknown:
        parser.error(f"unknown case {', '.join(unknown)}; choose from {', '.join(bench.cases)}")
    if not args.output:
        parser.error("--output is required")

    described = system.describe_system()

    def save(measurements, notes, final=False):
        partial = [] if final else ["partial results: the run had not finished when this was written"]
        return results.write_results(args.output, bench.name, described, measurements,
                                     notes + partial)

    measurements, notes = runner.run_benchmark(
        bench, cases, args.variants, repeats=args.repeats, warmup=args.warmup,
        min_sample_s=args.min_sample, compile_runs=args.compile_runs, cli=Path(__file__),
        after_case=save)
    path = save(measurements, notes, final=True)
    for note in notes:
        print(f"note: {note}")
    print(summary(measurements))
    print(f"results written to {path}")
    failed = [n for n in notes if "failed its correctness check" in n]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
