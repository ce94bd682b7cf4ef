"""What make_dataset.py, train.py and predict.py share: one line and exit 130 on Ctrl-C, bounded
numbers as one-line argparse errors, output folders checked before any work, one run per output
folder, a standard output that may fail, and a check of .keras files.

Each of the three imports this first, before anything slow: importing it loads only the
standard library.
"""

import argparse
import contextlib
import io
import os
import sys
import zipfile


class InputError(Exception):
    """Bad input that the user can fix: reported as one line, exit status 2."""


def interrupted(signum, frame):
    """Ctrl-C, wherever it lands (even inside a slow import): one line and exit code 130."""
    os.write(2, b"interrupted\n")
    os._exit(130)  # at once: an exception raised here could land in a C extension or be ignored


def number(kind, low, high):
    """An argparse type: a `kind` (int or float) from low to high; anything else is a one-line error."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {'a whole number' if kind is int else 'a number'}: {text!r}") from None
        if not low <= value <= high:  # false for nan too
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {text}")
        return value
    return parse


def check_output_dir(out, option: str = "") -> None:
    """Before any work: `out` (a Path) is a folder that can be created and written to."""
    name = f"{option} {out}".strip()
    if out.exists() and not out.is_dir():
        raise InputError(f"{name} exists and is not a folder")
    parent = next(p for p in [out, *out.parents] if p.exists())
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{name}: cannot write in {parent}")


class ProgressThatMayFail(io.TextIOBase):
    """Standard output for progress lines: the first write that fails (a full device, a reader
    gone) is kept in .error and every later line is dropped; the run goes on."""

    def __init__(self, stream):
        self.stream, self.error = stream, None

    def write(self, text):
        if self.error is None:
            try:
                self.stream.write(text)
                if "\n" in text:
                    self.stream.flush()
            except OSError as exc:
                self.error = exc
                os.dup2(os.open(os.devnull, os.O_WRONLY), self.stream.fileno())  # none at exit
        return len(text)

    def flush(self):
        self.write("")

    def isatty(self):
        return self.error is None and self.stream.isatty()

    def fileno(self):
        return self.stream.fileno()


def main_to_stdout(main, progress: bool = False) -> int:
    """main(), with standard output that can fail: a reader that stops reading (`| head`)
    ends the run quietly, a full device is one line (files are written, and named, by main).
    With progress=True stdout carries progress only: a failed write costs the run nothing, and
    a full device is one line at the end."""
    if sys.stdout is None:  # started with standard output closed (>&-): say so, do nothing
        if sys.stderr is not None:
            print("error: standard output is closed; give it a file (> FILE) or /dev/null",
                  file=sys.stderr)
        return 1
    if progress:
        sys.stdout = ProgressThatMayFail(sys.stdout)
        code = main()
        failed = sys.stdout.error
        if failed is None or isinstance(failed, BrokenPipeError):
            return code
        print(f"error: cannot write to standard output: {failed.strerror} (the run's files are "
              "written all the same)", file=sys.stderr)
        return code or 1
    try:
        return main()
    except OSError as exc:
        if exc.filename is not None:  # a file main() writes: its own error handling
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        if not isinstance(exc, BrokenPipeError):
            print(f"error: cannot write to standard output: {exc.strerror}", file=sys.stderr)
        return 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


@contextlib.contextmanager
def one_run_in(folder):
    """One run per output folder: folder/run.lock holds the running process's id, made with
    O_EXCL. A lock whose process is gone is taken over; a live one is an InputError naming it."""
    lock = folder / "run.lock"
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            try:
                other = int(lock.read_text().strip() or "0")
            except (OSError, ValueError):
                other = 0
            if other and _alive(other):
                raise InputError(f"another run (process {other}) is writing {folder}; wait for "
                                 f"it, or delete {lock} if it is gone") from None
            lock.unlink(missing_ok=True)  # its process is gone: take it over
            continue
        try:
            with os.fdopen(fd, "w") as f:
                f.write(f"{os.getpid()}\n")
        except OSError as exc:  # a full disk: no lock, and none left behind
            lock.unlink(missing_ok=True)
            raise OSError(exc.errno, exc.strerror, str(lock)) from None
        break
    else:
        raise InputError(f"cannot take {lock}: another run keeps making it")
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def keras_file_problem(path) -> str:
    """Why a .keras file (a zip archive holding config.json) is damaged, or "" if it looks whole.
    Keras itself says "File not found" for a file that is there but is not a zip archive."""
    try:
        with zipfile.ZipFile(path) as archive:
            if "config.json" not in archive.namelist():
                return "not a Keras model: its archive holds no config.json"
            broken = archive.testzip()  # reads every member and checks its CRC
    except (zipfile.BadZipFile, EOFError, ValueError) as exc:
        return f"the file is damaged: not a readable zip archive, as a .keras file is ({exc})"
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    return f"the file is damaged: {broken} fails its CRC check" if broken else ""
