"""What make_dataset.py, train.py and predict.py share: one line and exit 130 on Ctrl-C, bounded
numbers as one-line argparse errors, output folders checked before any work, a standard output
that may fail, and a check of .keras files.

Each of the three imports this first, before anything slow: importing it loads only the
standard library.
"""

import argparse
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


def main_to_stdout(main) -> int:
    """main(), with standard output that can fail: a reader that stops reading (`| head`)
    ends the run quietly, a full device is one line (files are written, and named, by main)."""
    try:
        return main()
    except OSError as exc:
        if exc.filename is not None:  # a file main() writes: its own error handling
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        if not isinstance(exc, BrokenPipeError):
            print(f"error: cannot write to standard output: {exc.strerror}", file=sys.stderr)
        return 1


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
