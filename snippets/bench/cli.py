"""The habits every benchmark command shares: bounded argument types, output paths checked before
any work, atomic writes, one line and exit 130 on Ctrl-C.

For the harness's own commands (`bench/run.py`, each topic's `benchmark.py`). Teaching files do
not import this: each keeps its own few lines of the same habit, so it runs when copied alone.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Callable

INTERRUPTED = 130  # the shell's code for a process ended by SIGINT (128 + 2)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (exit 2), without the usage block."""

    def error(self, message: str):  # noqa: D102  (argparse's hook)
        self.exit(2, f"error: {message}\n")


def _number(kind, text: str):
    try:
        value = kind(text)
    except (TypeError, ValueError):
        what = "a whole number" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be finite, got {text}")
    return value


def int_between(lower: int, upper: int) -> Callable[[str], int]:
    """argparse type: a whole number from `lower` to `upper`."""
    def parse(text: str) -> int:
        value = _number(int, text)
        if not lower <= value <= upper:
            raise argparse.ArgumentTypeError(f"must be from {lower} to {upper}, got {value}")
        return value
    return parse


def positive_int(upper: int) -> Callable[[str], int]:
    """argparse type: a whole number from 1 to `upper`."""
    return int_between(1, upper)


def non_negative_int(upper: int) -> Callable[[str], int]:
    """argparse type: a whole number from 0 to `upper`."""
    return int_between(0, upper)


def positive_float(upper: float = math.inf) -> Callable[[str], float]:
    """argparse type: a finite number above 0 and at most `upper`."""
    def parse(text: str) -> float:
        value = _number(float, text)
        if not 0 < value <= upper:
            raise argparse.ArgumentTypeError(f"must be above 0 and at most {upper:g}, got {text}")
        return value
    return parse


def name_list(text: str) -> list[str]:
    """argparse type: comma-separated names, at least one."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give at least one name")
    return names


def check_output(path: str | os.PathLike) -> Path:
    """The path if a file can be written there now; ValueError (one line) otherwise."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder; name a file")
    folder = path.parent
    if not folder.is_dir():
        raise ValueError(f"folder {folder} does not exist" if not folder.exists()
                         else f"{folder} is not a folder")
    probe = folder / f".{path.name}.{os.getpid()}.probe"
    try:  # a real write: permission bits say nothing for root or a read-only file system
        probe.touch(exist_ok=False)
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"cannot write in {folder} ({exc.strerror or exc})") from None
    return path


def output_path(text: str) -> Path:
    """argparse type: a file that can be written (checked when the arguments are parsed)."""
    try:
        return check_output(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def atomic_write(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write a file whole or not at all: a temporary file beside it, then os.replace."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def partial_path(path: str | os.PathLike) -> Path:
    """Where an interrupted run keeps what it measured: results.json -> results.partial.json."""
    path = Path(path)
    stem = path.name[:-len(".json")] if path.name.endswith(".json") else path.name
    return path.with_name(f"{stem}.partial.json")


def run_main(main: Callable[[list[str] | None], int], argv: list[str] | None = None,
             what: str = "interrupted") -> int:
    """Call main(argv); Ctrl-C gives one line on stderr and exit code 130, no traceback."""
    try:
        return main(argv)
    except KeyboardInterrupt:
        print(f"{what} (Ctrl-C)", file=sys.stderr)
        return INTERRUPTED
