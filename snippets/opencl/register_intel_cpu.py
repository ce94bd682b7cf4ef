"""Register Intel's OpenCL CPU runtime, installed with pip, with the OpenCL ICD loader.

Run:  pip install pyopencl intel-opencl-rt intel-cmplr-lib-rt
      python register_intel_cpu.py [--dir FOLDER]
      export OCL_ICD_VENDORS=FOLDER        (the line it prints; or: eval "$(python ...)")

The ICD loader (libOpenCL) finds drivers through `.icd` files, each naming a driver library.
pip puts Intel's driver at <python prefix>/lib/libintelocl.so, but the `.icd` file in the wheel
names a path on the machine it was built on, so the loader never finds it. This writes a folder
with an `.icd` file that names the installed library, plus copies of the system's own `.icd`
files (/etc/OpenCL/vendors), because OCL_ICD_VENDORS replaces that folder: GPU drivers stay
visible.
"""

# --8<-- [start:imports]
import os
import signal
import sys


WRITTEN = []  # the files this run has written whole (write_atomically)


def interrupted(signum, frame):
    """Ctrl-C, wherever it lands (even inside a slow import below): one line and exit code 130;
    the line names any file already written whole."""
    done = f" ({', '.join(WRITTEN)} written whole before it)" if WRITTEN else ""
    os.write(2, f"interrupted{done}\n".encode())
    os._exit(130)  # at once: an exception raised here could land in a C extension or be ignored


if __name__ == "__main__":
    signal.signal(signal.SIGINT, interrupted)

import argparse
from pathlib import Path
# --8<-- [end:imports]

SYSTEM_VENDORS = Path("/etc/OpenCL/vendors")
ICD_NAME = "intel-cpu.icd"


class Problem(RuntimeError):
    """A one-line reason, with its fix."""


def intel_library(prefix: Path = Path(sys.prefix)) -> Path | None:
    """Where pip installed Intel's CPU runtime for this Python, if it did."""
    lib = prefix / "lib" / "libintelocl.so"
    return lib if lib.is_file() else None


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write through a temporary file and rename it: a reader never sees half a file. A symlink
    is written through: its target is replaced, the link stays. A device or a pipe (/dev/stdout,
    a FIFO) is written in place: renaming a file over it would replace it."""
    if Path(path).exists() and not Path(path).is_file():
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return
    path = Path(path).resolve()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")  # unique
    try:
        tmp.write_bytes(data) if isinstance(data, bytes) else tmp.write_text(data)
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # a Ctrl-C inside
        try:  # the rename waits until the file is recorded as written
            os.replace(tmp, path)
            WRITTEN.append(str(path))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    finally:
        try:
            tmp.unlink(missing_ok=True)  # after a failed write (a full disk, say): no leftover
        except OSError:  # a file system gone read-only: the write's own error is the one to say
            pass


def folder_name(text: str) -> Path:
    """--dir: a folder name; an empty one would mean the current folder, so it is refused."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty folder name (it would write into the current "
                                         "folder): name the folder")
    return Path(text)


def check_folder(folder: Path) -> None:
    """Fail before writing anything if the folder cannot hold the .icd files."""
    if folder.exists() and not folder.is_dir():
        raise Problem(f"{folder} is a file, not a folder: choose another --dir")
    parent = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise Problem(f"{parent} is a file, not a folder: choose another --dir")
    if parent is None or not os.access(parent, os.W_OK | os.X_OK):
        raise Problem(f"cannot write in {parent or folder}: choose a writable --dir")


# --8<-- [start:register]
def register(folder: Path, library: Path | None, system: Path = SYSTEM_VENDORS) -> list[str]:
    """Fill `folder` with .icd files: the system's, and one naming Intel's library."""
    check_folder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for icd in sorted(system.glob("*.icd")) if system.is_dir() else []:
        if icd.name != ICD_NAME:
            write_atomically(folder / icd.name, icd.read_text())
            written.append(icd.name)
    if library is not None:
        write_atomically(folder / ICD_NAME, f"{library.resolve()}\n")  # one line: the library
        written.append(ICD_NAME)
    return written
# --8<-- [end:register]


def show(text: str, end: str = "\n") -> bool:
    """Print the answer; False if it could not be. A reader that stops reading (| head) ends
    the run quietly; a full device is one line naming it."""
    try:
        print(text, end=end, flush=True)
        return True
    except OSError as exc:  # BrokenPipeError included
        try:
            where = os.readlink(f"/proc/self/fd/{sys.stdout.fileno()}")
        except OSError:
            where = ""
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        if not isinstance(exc, BrokenPipeError):
            name = f"standard output ({where})" if where.startswith("/") else "standard output"
            print(f"error: cannot write to {name}: {exc.strerror}", file=sys.stderr)
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.error = lambda message: parser.exit(2, f"error: {message}\n")
    parser.add_argument("--dir", type=folder_name, default=Path(sys.prefix) / "opencl-vendors",
                        help="folder to write the .icd files into (default: "
                             "<python prefix>/opencl-vendors)")
    parser.add_argument("--optional", action="store_true",
                        help="without Intel's runtime, still write the system's .icd files and "
                             "exit 0 (for set-up scripts on machines it does not support)")
    args = parser.parse_args(argv)
    if sys.stdout is None:  # started with stdout closed (>&-): the export line would be lost
        parser.exit(1, "error: standard output is closed; give it a file (> FILE) or /dev/null\n")
    try:
        library = intel_library()
        if library is None and not args.optional:
            raise Problem(f"Intel's OpenCL CPU runtime is not installed in this Python "
                          f"({sys.prefix}/lib/libintelocl.so is missing): "
                          "pip install intel-opencl-rt intel-cmplr-lib-rt")
        register(args.dir, library)
        return 0 if show(f"export OCL_ICD_VENDORS={args.dir.resolve()}") else 1
    except OSError as exc:  # the folder is checked first; a full disk can still stop a write
        print(f"error: cannot write {args.dir}: {exc.strerror or exc}", file=sys.stderr)
    except Problem as exc:
        print(f"error: {exc}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
