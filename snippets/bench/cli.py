"""The habits every benchmark command shares: bounded argument types, output paths checked before
any work, atomic writes (through a symlink to its target), I/O errors as one line naming the path,
one line and exit 130 on Ctrl-C.

For the harness's own commands (`bench/run.py`, each topic's `benchmark.py`). Teaching files do
not import this: each keeps its own few lines of the same habit, so it runs when copied alone.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import math
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import Callable

INTERRUPTED = 130  # the shell's code for a process ended by SIGINT (128 + 2)
WRITTEN: list[str] = []  # outputs this command has written whole: a Ctrl-C's line names them


class CannotWrite(OSError):
    """An output that could not be written; str() is one line naming the path and the cause."""

    def __str__(self) -> str:
        return self.strerror


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (exit 2), without the usage block."""

    def error(self, message: str):  # noqa: D102  (argparse's hook)
        self.exit(2, f"error: {message}\n")

    def print_help(self, file=None):  # noqa: D102  (argparse's hook)
        """--help through `show`: a full stdout raises CannotWrite (one line, exit 1 in
        run_main) instead of a silent exit 0, a reader gone (| head) ends quietly."""
        if file is not None:
            return super().print_help(file)
        show(self.format_help().rstrip("\n"))


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
    """The path if a file can be written there now; ValueError (one line) otherwise.

    A symlink is checked where it points: that is where atomic_write writes."""
    path = Path(path)
    real = path.resolve()
    if real.is_dir():
        raise ValueError(f"{path} is a folder; name a file")
    folder = real.parent
    if not folder.is_dir():
        raise ValueError(f"folder {folder} does not exist" if not folder.exists()
                         else f"{folder} is not a folder")
    probe = folder / f".{real.name}.{os.getpid()}.probe"
    try:  # a real write: permission bits say nothing for root or a read-only file system
        probe.touch(exist_ok=False)
        probe.unlink()
    except OSError as exc:
        if exc.errno == errno.ENOENT:  # the folder is there: its file system makes no files (/proc)
            raise ValueError(f"cannot create files in {folder} (its file system holds no new "
                             "files)") from None
        raise ValueError(f"cannot write in {folder} ({exc.strerror or exc})") from None
    return path


def output_path(text: str) -> Path:
    """argparse type: a file that can be written (checked when the arguments are parsed)."""
    try:
        return check_output(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def atomic_write(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write a file whole or not at all: a temporary file beside it, then os.replace.

    A symlink is written through (its target is replaced; the link stays a link). A device or a
    pipe (/dev/stdout, a FIFO) is written in place: renaming a file over it would replace it. An
    I/O error (a full disk, a file-size limit) raises CannotWrite naming `path`; the earlier file
    is intact.
    """
    path = Path(path)
    real = path.resolve()
    tmp = real.with_name(f".{real.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")  # unique
    try:
        if path.exists() and not path.is_file():
            with open(path, "wb" if isinstance(data, bytes) else "w") as f:
                f.write(data)
        else:
            tmp.write_bytes(data) if isinstance(data, bytes) else tmp.write_text(data)
            with _ctrl_c_after():  # a Ctrl-C inside the rename comes after it is recorded
                os.replace(tmp, real)
                WRITTEN.append(str(path))
    except OSError as exc:
        raise CannotWrite(exc.errno, f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:  # a file system gone read-only: the write's own error is the one to say
            pass
    return path


@contextlib.contextmanager
def _ctrl_c_after():
    """A Ctrl-C inside the block (a rename and the record of it) is held, then given again as
    the block ends to whatever handler is in place (run.py's ctrl_c_held, or KeyboardInterrupt).
    A Python handler, not a blocked signal: another thread (Numba's) may take the signal, and
    Python then raises in the main thread between the rename and its record."""
    if signal.getsignal(signal.SIGINT) is None:  # a handler set outside Python: leave it be
        yield
        return
    with ctrl_c_held() as pressed:
        yield
    if pressed:
        signal.raise_signal(signal.SIGINT)


def interrupted_line(what: str = "interrupted") -> str:
    """The one line for a Ctrl-C, naming the outputs already written whole (WRITTEN)."""
    if not WRITTEN:
        return f"{what} (Ctrl-C)"
    if len(WRITTEN) == 1:
        return f"{what} (Ctrl-C) after {WRITTEN[0]} was written whole"
    return f"{what} (Ctrl-C) after {len(WRITTEN)} files were written whole (the last: {WRITTEN[-1]})"


def stdout_name() -> str:
    """Standard output, with the file behind it where there is one: "standard output (/dev/full)"."""
    try:
        where = os.readlink(f"/proc/self/fd/{sys.stdout.fileno()}")
    except (OSError, ValueError, AttributeError):
        where = ""
    return f"standard output ({where})" if where.startswith("/") else "standard output"


def _stdout_to_null() -> None:
    """After a failed write to stdout: what is still buffered goes nowhere (no error at exit)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def show(text: str) -> bool:
    """Print text to stdout now. False if the reader stopped reading (| head): nothing more to
    say. A full device raises CannotWrite naming it."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        _stdout_to_null()
        return False
    except OSError as exc:
        name = stdout_name()
        _stdout_to_null()
        raise CannotWrite(exc.errno, f"cannot write to {name}: {exc.strerror or exc}") from None
    return True


def partial_path(path: str | os.PathLike) -> Path | None:
    """Where an interrupted run keeps what it measured: results.json -> results.partial.json;
    None for an output that is not a file (/dev/null, a pipe): nothing is kept beside those."""
    path = Path(path)
    if path.exists() and not path.is_file():
        return None
    stem = path.name[:-len(".json")] if path.name.endswith(".json") else path.name
    return path.with_name(f"{stem}.partial.json")


def run_main(main: Callable[[list[str] | None], int], argv: list[str] | None = None,
             what: str = "interrupted") -> int:
    """Call main(argv); Ctrl-C gives one line on stderr (naming any output atomic_write had
    already written whole) and exit code 130, no traceback; an output that cannot be written
    (CannotWrite), standard output closed included, gives one line and exit code 1.

    Ctrl-C raises KeyboardInterrupt inside main (Python's own handler, put back for the call:
    `bench.run` installs an exit-at-once handler while a benchmark's imports load)."""
    if sys.stdout is None:  # started with standard output closed (>&-): its lines go nowhere
        print("error: standard output is closed; give it a file (> FILE) or /dev/null",
              file=sys.stderr)
        return 1
    before = signal.getsignal(signal.SIGINT)
    WRITTEN.clear()  # this command's outputs
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        return main(argv)
    except KeyboardInterrupt:
        print(interrupted_line(what), file=sys.stderr)
        return INTERRUPTED
    except CannotWrite as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if before is not None:  # None: set outside Python, nothing to put back
            signal.signal(signal.SIGINT, before)


@contextlib.contextmanager
def ctrl_c_held():
    """Hold a Ctrl-C that arrives inside the block (a final rename: the file is whole either
    way); the list it yields says whether one came, for the caller to report after the block."""
    pressed: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    except ValueError:  # not the main thread: nothing to hold
        yield pressed
        return
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, previous)


class Locked(Exception):
    """Another run holds the lock of the same output (its message names it)."""


@contextlib.contextmanager
def lock(path: Path | None):
    """One run per output: `<path>.lock` holds the running process's id, made with O_EXCL.
    A lock left by a process that is gone is taken over; a live one raises Locked."""
    if path is None:
        yield
        return
    lock_file = path.with_name(path.name + ".lock")
    for _ in range(2):
        try:
            fd = os.open(lock_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            try:
                other = int(lock_file.read_text().strip() or "0")
            except (OSError, ValueError):
                other = 0
            if other and _alive(other):
                raise Locked(f"another run (process {other}) is writing {path}; wait for it, "
                             f"or delete {lock_file} if it is gone") from None
            lock_file.unlink(missing_ok=True)  # its process is gone: take it over
            continue
        except OSError as exc:
            raise CannotWrite(exc.errno, f"cannot write {lock_file}: {exc.strerror}") from None
        try:
            with os.fdopen(fd, "w") as f:
                f.write(f"{os.getpid()}\n")
        except OSError as exc:  # a full disk: no lock, and none left behind
            lock_file.unlink(missing_ok=True)
            raise CannotWrite(exc.errno, f"cannot write {lock_file}: {exc.strerror}") from None
        break
    else:
        raise Locked(f"cannot take {lock_file}: another run keeps making it")
    try:
        yield
    finally:
        try:
            lock_file.unlink(missing_ok=True)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
