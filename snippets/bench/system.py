"""Describe the machine a benchmark ran on: CPU, GPU, driver, CUDA, library versions, date, command.

Every results file carries this block so a figure can always be traced to its hardware and
software, `code_version` (the git commit of the code that measured) and `source_hashes` (the
sha256 of every source file the run executed, which `changed_sources` checks against the files of
a checkout, with or without git). Nothing here raises: a missing tool or library is recorded as
None ("unknown" for a commit outside git).
"""

from __future__ import annotations

import ast
import datetime as dt
import hashlib
import importlib.metadata
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from bench import gpu_state

LIBRARIES = ("numpy", "numba", "numba-cuda", "cuda-python", "cuda-bindings", "cupy-cuda12x",
             "cupy-cuda13x", "tensorflow", "keras", "jax", "jaxlib", "jax-cuda12-plugin",
             "torch", "pyopencl", "pocl-binary-distribution", "nvidia-cuda-runtime-cu12",
             "nvidia-cublas-cu12")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = Path(__file__).resolve().parents[2]  # the project (snippets/bench/system.py), links resolved
SOURCE_SUFFIXES = (".py", ".c", ".h", ".cu", ".cuh")  # what a run executes or compiles


def _run(cmd: list[str], cwd: str | None = None) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def gpus() -> list[dict]:
    """One entry per NVIDIA GPU, from nvidia-smi's query mode (empty without a driver)."""
    fields = "name,driver_version,memory.total,compute_cap,pci.bus_id"
    out = _run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"])
    found = []
    for line in (out or "").splitlines():
        name, driver, mem, cc, bus = (x.strip() for x in line.split(","))
        found.append({"name": name, "driver": driver, "memory_mib": int(float(mem)),
                      "compute_capability": cc, "pci_bus_id": bus})
    return found


def cuda_versions() -> dict:
    """CUDA driver API and runtime versions as Numba sees them, when it can see a GPU."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return {"driver": None, "runtime": None, "note": "Numba CUDA simulator"}
    try:
        from numba import cuda

        if not cuda.is_available():
            return {"driver": None, "runtime": None}
        drv = cuda.cudadrv.driver.driver.get_version()
        rt = cuda.runtime.get_version()
        return {"driver": "%d.%d" % drv, "runtime": "%d.%d" % rt}
    except Exception as exc:  # any failure is a finding, not a crash
        return {"driver": None, "runtime": None, "error": f"{type(exc).__name__}: {exc}"}


def nvcc_version() -> str | None:
    """The CUDA toolkit release of the nvcc on PATH ("12.4"), or None."""
    found = re.search(r"release (\d+\.\d+)", _run(["nvcc", "--version"]) or "")
    return found[1] if found else None


def framework_cuda() -> dict:
    """The CUDA version each already-imported framework reports it was built for or runs."""
    found: dict = {}
    mods = sys.modules
    try:
        if "torch" in mods and mods["torch"].version.cuda:
            found["torch"] = mods["torch"].version.cuda
        if "cupy" in mods:
            v = mods["cupy"].cuda.runtime.runtimeGetVersion()
            found["cupy"] = f"{v // 1000}.{v % 1000 // 10}"
        if "tensorflow" in mods:
            v = mods["tensorflow"].sysconfig.get_build_info().get("cuda_version")
            if v:
                found["tensorflow"] = v
    except Exception as exc:  # a framework without a GPU build or driver: a finding
        found["error"] = f"{type(exc).__name__}: {exc}"[:200]
    return found


def code_version() -> dict:
    """The git commit of the code that runs (and whether it had uncommitted changes).

    A copied tree on a GPU machine may have no .git, or a stale one (the device copy here
    carried the HEAD of the session's start), so the environment, when it names the commit,
    wins: BENCH_GIT_COMMIT=<sha> and BENCH_GIT_DIRTY=0/1. Otherwise git is asked; outside a
    checkout the commit is "unknown".
    """
    sha = os.environ.get("BENCH_GIT_COMMIT", "").strip()
    if re.fullmatch(r"[0-9a-f]{7,40}", sha):
        dirty = os.environ.get("BENCH_GIT_DIRTY")
        return {"commit": sha, "dirty": None if dirty not in ("0", "1") else dirty == "1"}
    sha = _run(["git", "rev-parse", "HEAD"], cwd=HERE)
    if sha:
        status = _run(["git", "--no-optional-locks", "status", "--porcelain",  # no index write:
                       "--untracked-files=no"], cwd=HERE)  # a killed git would leave its lock
        return {"commit": sha, "dirty": None if status is None else bool(status)}
    return {"commit": "unknown", "dirty": None}


def _key(path: Path) -> str:
    """A source file's name in a results file: its path from the project's root (absolute for
    a file outside the project)."""
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


# --8<-- [start:measured]
# Provenance follows what was measured: a results file records the files on its measured path,
# the lessons, the registry, the timing code and the C runner, and never these, which parse
# arguments, write files or describe the machine: a fix to them must not mark a GPU run stale.
NOT_MEASURED = ("snippets/bench/__init__.py", "snippets/bench/cli.py", "snippets/bench/run.py",
                "snippets/bench/results.py", "snippets/bench/system.py")
# Tools readers run for their output, which no benchmark imports (results files written before
# 2026-12-03 hashed their whole topic folder, these among its files).
TOOLS = ("snippets/keras/train.py", "snippets/keras/predict.py",
         "snippets/opencl/register_intel_cpu.py", "snippets/doctor/gpu_doctor.py",
         "snippets/aws/choose_instance.py", "snippets/aws/refresh_prices.py")


def measured(name: str) -> bool:
    return name not in NOT_MEASURED and name not in TOOLS
# --8<-- [end:measured]


def _is_unmeasured_import(node: ast.stmt) -> bool:
    """`from bench import run` and the like: an import of modules `measured` leaves out."""
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        base = node.module.replace(".", "/")
        files = ([f"snippets/{base}/{a.name}.py" for a in node.names] if node.module == "bench"
                 else [f"snippets/{base}.py"])
    elif isinstance(node, ast.Import):
        files = [f"snippets/{a.name.replace('.', '/')}.py" for a in node.names]
    else:
        return False
    return all(f in NOT_MEASURED for f in files)


def _is_main_block(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":`, a script's entry point or demo, never run by a measurement."""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__" and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _canonical(node) -> str:
    """A syntax tree as text, the same on every Python this project runs (3.11 here, 3.12 on
    the GPU machines): node and field names, without positions, empty lists or Nones (3.12
    added fields such as `type_params`, empty in this code)."""
    if isinstance(node, ast.AST):
        fields = [f"{name}={_canonical(value)}" for name, value in ast.iter_fields(node)
                  if value is not None and value != []]
        return f"{type(node).__name__}({','.join(fields)})"
    if isinstance(node, list):
        return "[" + ",".join(map(_canonical, node)) + "]"
    return repr(node)


def _measured_tree(source: str | bytes) -> ast.Module | None:
    """A module's syntax tree less docstrings, the `__main__` block and imports of unmeasured
    modules (None for a file that does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    tree.body = [n for n in tree.body if not (_is_main_block(n) or _is_unmeasured_import(n))]
    return tree


def syntax_digest(source: str | bytes) -> str | None:
    """The sha256 of what a Python module runs when a measurement imports it: its syntax tree
    less docstrings, the `__main__` block and imports of unmeasured modules. Comments and layout
    are not in the tree, so rewording, re-wrapping or documenting a measured file leaves the
    digest as it was. None for a file that does not parse."""
    tree = _measured_tree(source)
    return None if tree is None else hashlib.sha256(_canonical(tree).encode()).hexdigest()


def _of_python_files(digest, sources: dict, root, under: str = "") -> dict:
    """`digest(bytes)` of each Python file of `sources` under `under` that exists and parses."""
    found = {name: digest((Path(root) / name).read_bytes()) for name in sources
             if name.startswith(under) and name.endswith(".py") and (Path(root) / name).is_file()}
    return {name: value for name, value in found.items() if value}


def syntax_hashes(sources: dict[str, str], root: str | os.PathLike = ROOT) -> dict[str, str]:
    """`syntax_digest` of each Python file of a run's `sources` (recorded beside their sha256)."""
    return _of_python_files(syntax_digest, sources, root)


# --8<-- [start:definitions]
# The harness grows by additions: a new adapter or check beside the others, and the imports it
# needs. A results file records, for each harness module it ran, a digest per top-level name,
# so that a name added later, which the run cannot have called, leaves it current; a changed or
# removed one, or any other statement changed, marks it.
HARNESS = "snippets/bench/"


def only_names_added(source: bytes, recorded: dict[str, str]) -> bool:
    """Whether a module differs from the one `recorded` (its `definitions`) only by top-level
    names added, each one that the recorded statements neither use nor bind nor name in a
    string (a new name there could shadow a built-in or an import those statements rely on)."""
    tree = _measured_tree(source)
    now = None if tree is None else _digests(tree)
    if now is None or any(now.get(name) != digest for name, digest in recorded.items()):
        return False
    named, rest = _split(tree)
    kept = [node for name, node in named.items() if name in recorded] + rest
    return not (now.keys() - recorded.keys()) & _names_in(kept)
# --8<-- [end:definitions]


def _statements(tree: ast.Module) -> list[tuple[str | None, ast.stmt]]:
    """The top-level statements, each with the one name it binds (a `def`, a `class`,
    `NAME = ...`) or None; an import is one statement per name it binds."""
    found = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                one = (ast.Import(names=[alias]) if isinstance(node, ast.Import) else
                       ast.ImportFrom(module=node.module, names=[alias], level=node.level))
                found.append(((alias.asname or alias.name).split(".")[0], one))
            continue
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, ast.AnnAssign) and node.value else [])
        name = (node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.ClassDef)) else
                targets[0].id if len(targets) == 1 and isinstance(targets[0], ast.Name) else None)
        found.append((name, node))
    return found


def _split(tree: ast.Module) -> tuple[dict[str, ast.stmt], list[ast.stmt]]:
    """The names bound once at the top level, each with its statement; every other statement."""
    statements = _statements(tree)
    names = [name for name, _ in statements]
    named = {name: node for name, node in statements if name and names.count(name) == 1}
    return named, [node for name, node in statements if not (name and names.count(name) == 1)]


def _names_in(nodes: list) -> set[str]:
    """Every identifier the statements use or bind, and every string (a `module:name` too)."""
    found = set()
    for node in (n for top in nodes for n in ast.walk(top)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found |= {node.value, node.value.rpartition(":")[2]}
    return found


def _digests(tree: ast.Module) -> dict[str, str]:
    named, rest = _split(tree)
    digest = lambda node: hashlib.sha256(_canonical(node).encode()).hexdigest()[:16]  # noqa: E731
    return {**{name: digest(node) for name, node in named.items()}, "": digest(rest)}


def definitions(source: str | bytes) -> dict[str, str] | None:
    """A digest (16 hex digits) of each name `_split` finds, and under "" of the other statements
    in their order. None for a file that does not parse."""
    tree = _measured_tree(source)
    return None if tree is None else _digests(tree)


def definition_hashes(sources: dict[str, str], root: str | os.PathLike = ROOT) -> dict:
    """`definitions` of each harness module of a run's `sources`."""
    return _of_python_files(definitions, sources, root, under=HARNESS)


def source_hashes(topic: str | os.PathLike) -> dict[str, str]:
    """The sha256 of every source file on a run's measured path: each module of the project it
    imported (the registry, the lessons, the harness's timing code, a companion from another
    folder), each C or CUDA source of its topic folder and each C source the harness compiled
    (bench/runner.cu), less what `measured` leaves out. Call it when the run ends, when every
    module it used is loaded."""
    files = {p.resolve() for p in Path(topic).rglob("*")
             if p.suffix in SOURCE_SUFFIXES and p.suffix != ".py" and p.is_file()}
    adapters = sys.modules.get("bench.adapters")
    files |= {Path(p).resolve() for p in getattr(adapters, "COMPILED", ())}
    folder = Path(topic).resolve()
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        path = Path(name).resolve() if name and name.endswith(".py") else None
        if path and (path.is_relative_to(ROOT / "snippets") or path.is_relative_to(folder)):
            files.add(path)
    hashes = {_key(p): _sha256(p) for p in sorted(files) if measured(_key(p))}
    return {key: digest for key, digest in hashes.items() if digest}


def changed_sources(code: dict, root: str | os.PathLike = ROOT) -> list[str] | None:
    """The files on a results file's measured path (its `code.sources`, less what `measured`
    leaves out) whose content differs now under `root` (or that are gone): the code that
    measured is no longer the code here. A Python file whose bytes differ but whose
    `syntax_digest` is the one recorded (`code.syntax`) has not changed what runs: only its
    comments, layout, docstrings, `__main__` block or unmeasured imports did; nor has a harness
    module that only gained names (`code.definitions`, `only_names_added`). None for a file
    that records no sources."""
    sources = code.get("sources") if isinstance(code, dict) else None
    if not isinstance(sources, dict):
        return None
    syntax = code.get("syntax") if isinstance(code.get("syntax"), dict) else {}
    defs = code.get("definitions") if isinstance(code.get("definitions"), dict) else {}

    def changed(name: str, digest: str) -> bool:
        path = Path(root) / name
        if _sha256(path) == digest:
            return False
        if name not in syntax or not path.is_file():
            return True
        source = path.read_bytes()
        return syntax_digest(source) != syntax[name] and not (
            name in defs and only_names_added(source, defs[name]))
    return [name for name, digest in sources.items() if measured(name) and changed(name, digest)]


def library_versions() -> dict:
    versions = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return versions


def describe_system(check_cuda: bool = True) -> dict:
    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": shlex.join([os.path.basename(sys.executable), *sys.argv]),
        "host": {"os": platform.platform(), "cpu": cpu_model(), "cores": usable_cores()},
        "gpus": gpus(),
        "gpu_settings": gpu_state.settings(),  # as found: the harness never changes them
        "cuda": {**(cuda_versions() if check_cuda else {"driver": None, "runtime": None,
                                                          "note": "not checked"}),
                 "nvcc": nvcc_version(), "frameworks": framework_cuda()},
        "libraries": library_versions(),
    }
