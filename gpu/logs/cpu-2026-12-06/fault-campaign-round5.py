"""Fault campaign, round five (issue 49): every tool, as a careless or unlucky user runs it.

Run from anywhere (as root: it mounts small tmpfs file systems for a full disk and a read-only
remount mid-run; gcc builds sigint_at.so, the Ctrl-C-at-a-moment shim below, in its temporary
folder):
    /work/main/.venv/bin/python campaign.py REPO [--table OUT.md] [--only TOOL] [--new]
--new runs only the cases round five added.
Each case is a bash command run in REPO with PYTHONPATH=REPO/snippets; it is scored on:
  traceback  - "Traceback" in stderr (a tool must answer in one line)
  lines      - stderr lines (an error is one line)
  silent0    - exit 0 where the case is a failure (closed/full stdout, bad input, full disk)
  lost       - a file that existed before (a "keep" file) changed or vanished
  message    - the first stderr line (read it: does it say what is wrong?)
Expectation per case: "error" (non-zero, one line), "quiet" (| head: no stderr), "ok";
"130" (Ctrl-C: exit 130, one line); "held" (Ctrl-C inside the final rename: the output whole,
and success or one line that says it was written); "verdict-or-error" (a replayed report: a
diagnosis, exit 0/1, or one line with exit 2); "batch" (run_all.sh: non-zero, its last line an
error). A case's "check" command must pass too (an output whole, no git lock left...).
"""
from __future__ import annotations

import argparse, hashlib, re, shlex, json, os, shutil, signal, subprocess, sys, tempfile, time
from pathlib import Path

LOGS = Path(os.environ.get("CAMPAIGN_STDERR", Path(tempfile.gettempdir()) / "fault-campaign-stderr"))
LOGS.mkdir(exist_ok=True)  # the stderr of every case that did not pass

SIGINT_AT_C = r'''/* LD_PRELOAD shim: a Ctrl-C (SIGINT to the process) at an exact moment, as a user's key press
   could land. SIGINT_AT="rename:SUFFIX[:N]" raises it inside the Nth rename() onto a path ending
   in SUFFIX (after the rename is done: the file is whole, the signal is pending as the call
   returns); "open:SUFFIX[:N]" raises it as the Nth open of such a path returns (mid-work).
   Build: gcc -shared -fPIC -O2 -o sigint_at.so sigint_at.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int seen;

static int matches(const char *what, const char *path) {
    const char *spec = getenv("SIGINT_AT");
    if (!spec || !path) return 0;
    size_t wl = strlen(what);
    if (strncmp(spec, what, wl) != 0 || spec[wl] != ':') return 0;
    char suffix[512]; int nth = 1;
    const char *s = spec + wl + 1, *colon = strrchr(s, ':');
    size_t n = colon ? (size_t)(colon - s) : strlen(s);
    if (n >= sizeof suffix) return 0;
    memcpy(suffix, s, n); suffix[n] = 0;
    if (colon) nth = atoi(colon + 1);
    size_t pl = strlen(path);
    if (pl < n || strcmp(path + pl - n, suffix) != 0) return 0;
    return ++seen == nth;
}

int rename(const char *a, const char *b) {
    int (*real)(const char *, const char *) = dlsym(RTLD_NEXT, "rename");
    int rc = real(a, b);
    if (rc == 0 && matches("rename", b)) kill(getpid(), SIGINT);
    return rc;
}

int renameat(int fa, const char *a, int fb, const char *b) {
    int (*real)(int, const char *, int, const char *) = dlsym(RTLD_NEXT, "renameat");
    int rc = real(fa, a, fb, b);
    if (rc == 0 && matches("rename", b)) kill(getpid(), SIGINT);
    return rc;
}

#define OPEN(name)                                                          \
int name(const char *p, int flags, ...) {                                   \
    mode_t mode = 0; va_list ap; va_start(ap, flags);                       \
    if (flags & (O_CREAT | O_TMPFILE)) mode = va_arg(ap, mode_t);           \
    va_end(ap);                                                             \
    int (*real)(const char *, int, ...) = dlsym(RTLD_NEXT, #name);          \
    int fd = real(p, flags, mode);                                          \
    if (fd >= 0 && matches("open", p)) kill(getpid(), SIGINT);              \
    return fd;                                                              \
}
OPEN(open)
OPEN(open64)

#define OPENAT(name)                                                        \
int name(int d, const char *p, int flags, ...) {                            \
    mode_t mode = 0; va_list ap; va_start(ap, flags);                       \
    if (flags & (O_CREAT | O_TMPFILE)) mode = va_arg(ap, mode_t);           \
    va_end(ap);                                                             \
    int (*real)(int, const char *, int, ...) = dlsym(RTLD_NEXT, #name);     \
    int fd = real(d, p, flags, mode);                                       \
    if (fd >= 0 && matches("open", p)) kill(getpid(), SIGINT);              \
    return fd;                                                              \
}
OPENAT(openat)
OPENAT(openat64)
'''

TOOLS_PY = {
    "choose_instance": "snippets/aws/choose_instance.py --memory-gib 40 --hours 10",
    "llm_memory": "snippets/hardware/llm_memory.py",
    "register_intel_cpu": "snippets/opencl/register_intel_cpu.py --dir {T}/icd --optional",
    "refresh_prices": "snippets/aws/refresh_prices.py --offer {FIX}/aws/offer-AmazonEC2-us-east-1-sample.json --out {T}/prices.csv",
    "gpu_doctor_replay": "snippets/doctor/gpu_doctor.py --replay docs/data/doctor-h200.json",
    "gpu_doctor": "snippets/doctor/gpu_doctor.py --no-compile --timeout 5 --json {T}/doctor.json",
    "structure_logs": "tools/structure_logs.py",
    "timeline_trace": "tools/timeline_trace.py --label x --output {T}/tl.json {T}/trace.json",
    "mandelbrot_image": "tools/mandelbrot_image.py {T}/m.png",
    "site_report": "-m tools.site_report --site {T}/nosite",
    "screenshots": "-m tools.screenshots {T}/nosite x/ -o {T}/shots",
    "make_dataset": "snippets/keras/make_dataset.py {T}/new-$RANDOM --images 4 --size 16",
    "run.py": "snippets/bench/run.py mandelbrot --help",
}

def cases(py):
    P = py
    out = []
    def add(tool, fault, cmd, expect="error", keep=(), setup=None, timeout=120, **more):
        out.append(dict(tool=tool, fault=fault, cmd=cmd, expect=expect, keep=keep, setup=setup,
                        timeout=timeout, **more))
    # stdout faults, for every tool with a cheap invocation
    for tool, args in TOOLS_PY.items():
        base = f"{P} {args}"
        add(tool, "stdout closed (>&-)", base + " >&-")
        if tool not in ("site_report", "screenshots"):  # these stop at the missing site first
            add(tool, "stdout /dev/full", base + " >/dev/full")
            add(tool, "| head -1", base + " | head -1; exit ${PIPESTATUS[0]}", expect="quiet")
    # bad numbers
    for v in ("-1", "inf", "nan", "1e-310", "1e400", "''"):
        add("choose_instance", f"--memory-gib {v}", f"{P} snippets/aws/choose_instance.py --memory-gib {v} --hours 10")
        add("choose_instance", f"--hours {v}", f"{P} snippets/aws/choose_instance.py --memory-gib 40 --hours {v}")
        add("llm_memory", f"--gpu-mib {v}", f"{P} snippets/hardware/llm_memory.py --gpu-mib {v}")
        add("llm_memory", f"--gpu-tbs {v}", f"{P} snippets/hardware/llm_memory.py --gpu-tbs {v}",
            expect="ok" if v == "1e-310" else "error")  # tiny but above 0: 0.0 steps/s, true
        add("gpu_doctor", f"--timeout {v}", f"{P} snippets/doctor/gpu_doctor.py --timeout {v} --no-compile")
        add("timeline_trace", f"--window {v}", f"{P} tools/timeline_trace.py --label x --output {{T}}/tl.json --window {v} {{T}}/trace.json")
    add("llm_memory", "--batch 1e20 (absurd, arithmetic holds)", f"{P} snippets/hardware/llm_memory.py --batch 100000000000000000000", expect="ok")
    # paths of the wrong kind
    add("refresh_prices", "--offer a folder", f"{P} snippets/aws/refresh_prices.py --offer {{T}} --out {{T}}/p.csv")
    add("refresh_prices", "--offer missing", f"{P} snippets/aws/refresh_prices.py --offer {{T}}/none.json --out {{T}}/p.csv")
    add("refresh_prices", "--out a folder", f"{P} snippets/aws/refresh_prices.py --offer {{FIX}}/aws/offer-AmazonEC2-us-east-1-sample.json --out {{T}}")
    add("refresh_prices", "--data a folder", f"{P} snippets/aws/refresh_prices.py --offer {{FIX}}/aws/offer-AmazonEC2-us-east-1-sample.json --data {{T}} --out {{T}}/p.csv")
    add("refresh_prices", "--out under a file", f"{P} snippets/aws/refresh_prices.py --offer {{FIX}}/aws/offer-AmazonEC2-us-east-1-sample.json --out /etc/passwd/p.csv")
    add("refresh_prices", "--offer deeply nested JSON", f"{P} snippets/aws/refresh_prices.py --offer {{T}}/deep.json --out {{T}}/p.csv")
    add("refresh_prices", "--offer truncated JSON", f"{P} snippets/aws/refresh_prices.py --offer {{T}}/trunc.json --out {{T}}/p.csv")
    add("refresh_prices", "--offer binary garbage", f"{P} snippets/aws/refresh_prices.py --offer {{T}}/garbage.bin --out {{T}}/p.csv")
    add("refresh_prices", "out folder read-only (keeps earlier)", f"{P} snippets/aws/refresh_prices.py --offer {{FIX}}/aws/offer-AmazonEC2-us-east-1-sample.json --out {{T}}/ro/p.csv", keep=("ro/p.csv",))
    add("refresh_prices", "ulimit -f 4 (full disk, keeps earlier)", f"ulimit -f 4; {P} snippets/aws/refresh_prices.py --offer {{FIX}}/aws/offer-AmazonEC2-us-east-1-sample.json --out {{T}}/big/p.csv", keep=("big/p.csv",))
    add("gpu_doctor_replay", "--replay a folder", f"{P} snippets/doctor/gpu_doctor.py --replay {{T}}")
    add("gpu_doctor_replay", "--replay missing", f"{P} snippets/doctor/gpu_doctor.py --replay {{T}}/none.json")
    add("gpu_doctor_replay", "--replay deeply nested", f"{P} snippets/doctor/gpu_doctor.py --replay {{T}}/deep.json")
    add("gpu_doctor_replay", "--replay truncated", f"{P} snippets/doctor/gpu_doctor.py --replay {{T}}/trunc.json")
    add("gpu_doctor_replay", "--replay wrong shape (list)", f"{P} snippets/doctor/gpu_doctor.py --replay {{T}}/list.json")
    add("gpu_doctor_replay", "--replay wrong shape (checks: str)", f"{P} snippets/doctor/gpu_doctor.py --replay {{T}}/shape.json")
    add("gpu_doctor_replay", "--replay binary garbage", f"{P} snippets/doctor/gpu_doctor.py --replay {{T}}/garbage.bin")
    add("gpu_doctor", "--json a folder", f"{P} snippets/doctor/gpu_doctor.py --no-compile --json {{T}}")
    add("gpu_doctor", "--json read-only folder (keeps earlier)", f"{P} snippets/doctor/gpu_doctor.py --no-compile --timeout 5 --json {{T}}/ro/d.json", keep=("ro/d.json",))
    add("gpu_doctor", "--json ulimit -f 1 (keeps earlier)", f"ulimit -f 1; {P} snippets/doctor/gpu_doctor.py --no-compile --timeout 5 --json {{T}}/big/d.json", keep=("big/d.json",))
    add("gpu_doctor", "--root a file", f"{P} snippets/doctor/gpu_doctor.py --no-compile --root /etc/passwd")
    add("gpu_doctor", "--libcuda a folder (named in the report)", f"{P} snippets/doctor/gpu_doctor.py --no-compile --libcuda {{T}} | grep -q 'Is a directory'", expect="ok")
    add("register_intel_cpu", "--dir a file", f"{P} snippets/opencl/register_intel_cpu.py --dir /etc/passwd --optional")
    add("register_intel_cpu", "--dir read-only", f"{P} snippets/opencl/register_intel_cpu.py --dir {{T}}/ro --optional")
    add("register_intel_cpu", "--dir missing parent", f"{P} snippets/opencl/register_intel_cpu.py --dir {{T}}/a/b/c --optional", expect="ok")
    add("timeline_trace", "trace a folder", f"{P} tools/timeline_trace.py --label x --output {{T}}/tl.json {{T}}")
    add("timeline_trace", "trace missing", f"{P} tools/timeline_trace.py --label x --output {{T}}/tl.json {{T}}/none")
    add("timeline_trace", "trace deeply nested", f"{P} tools/timeline_trace.py --label x --output {{T}}/tl.json {{T}}/deep.json")
    add("timeline_trace", "trace truncated", f"{P} tools/timeline_trace.py --label x --output {{T}}/tl.json {{T}}/trunc.json")
    add("timeline_trace", "trace binary garbage", f"{P} tools/timeline_trace.py --label x --output {{T}}/tl.json {{T}}/garbage.bin")
    add("timeline_trace", "trace wrong shape (list of str)", f"{P} tools/timeline_trace.py --label x --output {{T}}/tl.json {{T}}/strs.json")
    add("timeline_trace", "--add to a damaged output (keeps it)", f"{P} tools/timeline_trace.py --label x --output {{T}}/trunc2.json --add {{T}}/trace.json", keep=("trunc2.json",))
    add("timeline_trace", "--add to a deeply nested output (keeps it)", f"{P} tools/timeline_trace.py --label x --output {{T}}/deep2.json --add {{T}}/trace.json", keep=("deep2.json",))
    add("mandelbrot_image", "png a folder", f"{P} tools/mandelbrot_image.py {{T}}")
    add("mandelbrot_image", "png under a file", f"{P} tools/mandelbrot_image.py /etc/passwd/m.png")
    add("mandelbrot_image", "read-only folder (keeps earlier)", f"{P} tools/mandelbrot_image.py {{T}}/ro/m.png", keep=("ro/m.png",))
    add("mandelbrot_image", "ulimit -f 1 (keeps earlier)", f"ulimit -f 1; {P} tools/mandelbrot_image.py {{T}}/big/m.png", keep=("big/m.png",))
    add("site_report", "run as a file", f"{P} tools/site_report.py")
    add("site_report", "--site a file", f"{P} -m tools.site_report --site /etc/passwd")
    add("site_report", "--presets bogus", f"{P} -m tools.site_report --presets x")
    add("screenshots", "site a file", f"{P} -m tools.screenshots /etc/passwd x/")
    add("screenshots", "run as a file", f"{P} tools/screenshots.py {{T}} x/")
    add("make_dataset", "out a file", f"{P} snippets/keras/make_dataset.py /etc/passwd")
    add("make_dataset", "--images -1", f"{P} snippets/keras/make_dataset.py {{T}}/d2 --images -1")
    add("make_dataset", "--size nan", f"{P} snippets/keras/make_dataset.py {{T}}/d2 --size nan")
    add("make_dataset", "read-only out", f"{P} snippets/keras/make_dataset.py {{T}}/ro/d --images 4 --size 16")
    add("make_dataset", "ulimit -f 1", f"ulimit -f 1; {P} snippets/keras/make_dataset.py {{T}}/d3 --images 4 --size 64")
    add("run.py", "no topic", f"{P} snippets/bench/run.py")
    add("run.py", "unknown topic", f"{P} snippets/bench/run.py nosuch")
    add("run.py", "--output a folder", f"{P} snippets/bench/run.py mandelbrot --output {{T}}")
    add("run.py", "--output under a file", f"{P} snippets/bench/run.py mandelbrot --output /etc/passwd/x.json")
    add("run.py", "--resume deeply nested partial", f"{P} snippets/bench/run.py mandelbrot --output {{T}}/r.json --resume", setup="cp {T}/deep.json {T}/r.partial.json")
    add("run.py", "--resume truncated partial", f"{P} snippets/bench/run.py mandelbrot --output {{T}}/r.json --resume", setup="cp {T}/trunc.json {T}/r.partial.json")
    add("run_all.sh", "no OUT", "bash gpu/run_all.sh saxpy")
    add("run_all.sh", "unknown topic", "OUT={T}/ra bash gpu/run_all.sh nosuch")
    add("run_all.sh", "OUT a file", "OUT=/etc/passwd bash gpu/run_all.sh saxpy")
    add("run_all.sh", "stdout closed", "OUT={T}/ra bash gpu/run_all.sh nosuch >&-")
    add("train.py", "stdout closed", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/tr >&-")
    add("train.py", "data a file", f"{P} snippets/keras/train.py /etc/passwd --output-dir {{T}}/tr")
    add("train.py", "--epochs -1", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/tr --epochs -1")
    add("train.py", "--learning-rate nan", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/tr --learning-rate nan")
    add("train.py", "--learning-rate inf", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/tr --learning-rate inf")
    add("train.py", "--learning-rate 1e-310", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/tr --learning-rate 1e-310")
    add("train.py", "--output-dir a file", f"{P} snippets/keras/train.py {{T}}/data --output-dir /etc/passwd")
    add("train.py", "history deeply nested", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/trdeep --epochs 1 --image-size 32", keep=("trdeep/history.json",))
    add("predict.py", "stdout closed", f"{P} snippets/keras/predict.py {{T}}/m.keras {{T}}/data >&-")
    add("predict.py", "model a folder", f"{P} snippets/keras/predict.py {{T}} {{T}}/data")
    add("predict.py", "model garbage", f"{P} snippets/keras/predict.py {{T}}/garbage.bin {{T}}/data")
    add("predict.py", "--threshold nan", f"{P} snippets/keras/predict.py {{T}}/garbage.bin {{T}}/data --threshold nan")
    add("timeline_trace", "trace field of another type (args: list)", f"{P} tools/timeline_trace.py --label x --output {{T}}/tl.json {{T}}/args.json")
    add("timeline_trace", "--add to an output whose traces is a list (keeps it)", f"{P} tools/timeline_trace.py --label x --output {{T}}/tlist.json --add {{T}}/trace.json", keep=("tlist.json",))
    add("train.py", "--learning-rate 1e-39 (subnormal)", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/tr --learning-rate 1e-39")
    # Ctrl-C at start and in the middle: exit 130, one line, earlier output kept. Round five moved
    # the five that finished before a timed signal came (refresh_prices 0.1 s, make_dataset 1.5 s,
    # train.py 15 s, choose_instance 0.1 s, structure_logs 0.1 s) to round_five, signalled as they
    # open an input or commit an epoch (sigint_at.so), so that they score on any machine
    for tool, cmd, at, keep in [
            ("gpu_doctor", f"{P} snippets/doctor/gpu_doctor.py --timeout 5 --json {{T}}/big/d.json", 0.3, ("big/d.json",)),
            ("gpu_doctor", f"{P} snippets/doctor/gpu_doctor.py --timeout 5 --json {{T}}/big/d.json", 4, ("big/d.json",)),
            ("mandelbrot_image", f"{P} tools/mandelbrot_image.py {{T}}/big/m.png", 0.3, ("big/m.png",)),
            ("mandelbrot_image", f"{P} tools/mandelbrot_image.py {{T}}/big/m.png", 2, ("big/m.png",)),
            ("run.py", f"{P} snippets/bench/run.py mandelbrot --output {{T}}/rm.json", 0.5, ()),
            ("run.py", f"{P} snippets/bench/run.py mandelbrot --output {{T}}/rm.json", 8, ()),
            ("train.py", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/trc --image-size 16 --epochs 50", 1, ()),
    ]:
        add(tool, f"Ctrl-C after {at} s", cmd, expect="130", keep=keep, sigint=at, timeout=120)
    # two runs on the same output at once: one wins or both finish, the output is whole
    add("mandelbrot_image", "two runs, one png", f"{P} tools/mandelbrot_image.py {{T}}/two.png", twice=True,
        check=f"{P} -c \"import sys; d=open('{{T}}/two.png','rb').read(); sys.exit(not d.startswith(b'\\x89PNG'))\"")
    add("refresh_prices", "two runs, one csv", f"{P} snippets/aws/refresh_prices.py --offer {{FIX}}/aws/offer-AmazonEC2-us-east-1-sample.json --out {{T}}/two.csv", twice=True,
        check="test -s {T}/two.csv")
    add("gpu_doctor", "two runs, one --json", f"{P} snippets/doctor/gpu_doctor.py --no-compile --timeout 5 --json {{T}}/two.json >/dev/null; test $? -le 1", twice=True,
        check=f"{P} -c \"import json; json.load(open('{{T}}/two.json'))\"")
    add("timeline_trace", "two runs --add, one output", f"{P} tools/timeline_trace.py --label x$RANDOM --add --output {{T}}/two-tl.json {{T}}/trace.json", twice=True,
        check=f"{P} -c \"import json; json.load(open('{{T}}/two-tl.json'))\"")
    add("make_dataset", "two runs, one folder", f"{P} snippets/keras/make_dataset.py {{T}}/two-data --images 4 --size 16", twice=True,
        check="test $(find {T}/two-data -name '*.jpg' | wc -l) -ge 4")
    add("run.py", "two runs, one results file", f"{P} snippets/bench/run.py mandelbrot --cases smoke --output {{T}}/two-r.json", twice=True, timeout=300,
        check=f"{P} -c \"import json; json.load(open('{{T}}/two-r.json'))\"")
    add("train.py", "two runs, one --output-dir", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/two-tr --image-size 16 --epochs 1", twice=True, timeout=300,
        check="test -s {T}/two-tr/history.json")
    add("climb.py", "KERAS_BACKEND=tensorflow exported", f"KERAS_BACKEND=tensorflow timeout 200 {P} snippets/keras/climb.py --help", timeout=220)
    return out + round_five(py)


OFFER = "{FIX}/aws/offer-AmazonEC2-us-east-1-sample.json"
# a git command killed inside the checkout (a file-size limit) must not leave its lock behind
NO_GIT_LOCK = 'test ! -e "$(git rev-parse --git-path index.lock)"'


def at(spec: str) -> str:
    """Ctrl-C at an exact moment (sigint_at.so): "open:SUFFIX[:N]" or "rename:SUFFIX[:N]"."""
    return f"SIGINT_AT={spec} LD_PRELOAD={{SHIM}} "


def round_five(py):
    """Round five: the cases of issue 49's list that rounds 1-4 did not run, and the five Ctrl-C
    cases that finished before a timed signal came, now signalled at a moment of their work."""
    P = py
    out = []
    def add(tool, fault, cmd, expect="error", keep=(), setup=None, timeout=120, **more):
        out.append(dict(tool=tool, fault=fault, cmd=cmd, expect=expect, keep=keep, setup=setup,
                        timeout=timeout, new=True, **more))
    json_ok = lambda f: f"{P} -c \"import json,sys; d=json.load(open('{f}')); sys.exit(bool(d.get('partial')) if isinstance(d, dict) else 0)\""
    # -- the five unscored Ctrl-C cases: signalled mid-work, whatever the machine's speed
    add("refresh_prices", "Ctrl-C as it opens its offer file", at("open:offer-AmazonEC2-us-east-1-sample.json") + f"{P} snippets/aws/refresh_prices.py --offer {OFFER} --out {{T}}/big/p.csv", expect="130", keep=("big/p.csv",))
    add("make_dataset", "Ctrl-C as it writes its 3rd image", at("open:cat.2.jpg") + f"{P} snippets/keras/make_dataset.py {{T}}/ci5 --images 400 --size 64", expect="130")
    add("train.py", "Ctrl-C as epoch 2 is committed (history.json renamed)", at("rename:history.json:2") + f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/trc5 --image-size 16 --epochs 50", expect="130", timeout=300,
        check=json_ok("{T}/trc5/history.json"))
    add("choose_instance", "Ctrl-C as it opens its instance table", at("open:aws-instances.csv") + f"{P} snippets/aws/choose_instance.py --memory-gib 40 --hours 10", expect="130")
    add("structure_logs", "Ctrl-C as it opens a raw log", at("open:saxpy-ncu.txt") + f"{P} tools/structure_logs.py", expect="130")
    # -- Ctrl-C inside the final rename: the output is whole; the answer must not say otherwise
    for tool, out_name, cmd, check in [
            ("run.py", "fr.json", f"{P} snippets/bench/run.py mandelbrot --cases smoke --output {{T}}/fr.json", json_ok("{T}/fr.json")),
            ("gpu_doctor", "frd.json", f"{P} snippets/doctor/gpu_doctor.py --no-compile --timeout 5 --json {{T}}/frd.json", json_ok("{T}/frd.json")),
            ("refresh_prices", "frp.csv", f"{P} snippets/aws/refresh_prices.py --offer {OFFER} --out {{T}}/frp.csv", "test -s {T}/frp.csv"),
            ("register_intel_cpu", "intel-cpu.icd", f"{P} snippets/opencl/register_intel_cpu.py --dir {{T}}/fricd --optional", "test -s {T}/fricd/intel-cpu.icd"),
            ("mandelbrot_image", "frm.png", f"{P} tools/mandelbrot_image.py {{T}}/frm.png", f"{P} -c \"import sys; sys.exit(not open('{{T}}/frm.png','rb').read().startswith(bytes([137,80,78,71])))\""),
            ("timeline_trace", "frt.json", f"{P} tools/timeline_trace.py --label x --output {{T}}/frt.json {{T}}/trace.json", json_ok("{T}/frt.json")),
            ("train.py", "history.json, the last epoch's commit", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/frtr --image-size 16 --epochs 1", json_ok("{T}/frtr/history.json")),
    ]:
        add(tool, f"Ctrl-C inside the final rename ({out_name})", at(f"rename:{out_name.split(',')[0]}") + cmd, expect="held", check=check, timeout=300)
    # -- run.py --resume / --finish: a partial file that does not hold what it says
    for fault, edit in [
            ("completed names pairs without rows", "d['completed'] += [[c, v] for c in d['case_params'] for v in d['variants'] if [c, v] not in d['completed']]"),
            ("completed holds a string", "d['completed'] = ['smoke']"),
            ("rows of pairs completed does not name", "d['completed'] = []"),
            ("a row's median Infinity", "d['measurements'][0]['median_s'] = float('inf')"),
            ("measurements a dict", "d['measurements'] = {}"),
    ]:
        for how in ("--resume", "--finish"):
            expect = "ok" if fault.startswith("rows of pairs") else "error"
            add("run.py", f"{how}: partial whose {fault}", f"{P} snippets/bench/run.py mandelbrot --cases smoke --output {{T}}/rp.json {how}",
                expect=expect, setup=f"{P} -c \"import json; d=json.load(open('{{T}}/pc.partial.json')); {edit}; json.dump(d, open('{{T}}/rp.partial.json','w'))\"; rm -f {{T}}/rp.json",
                timeout=300, **({"check": f"{P} {{T}}/check_rows.py {{T}}/rp.json"} if expect == "ok" else {}))
    add("run.py", "--finish deeply nested partial", f"{P} snippets/bench/run.py mandelbrot --output {{T}}/r.json --finish", setup="cp {T}/deep.json {T}/r.partial.json")
    # -- run.py's streams and outputs
    add("run.py", "--output /dev/null (nothing beside it in /dev)", f"{P} snippets/bench/run.py mandelbrot --cases smoke --output /dev/null >/dev/null && test ! -e /dev/null.partial.json && test ! -e /dev/null.lock", expect="ok", timeout=300)
    add("run.py", "stdout closed, a real run", f"{P} snippets/bench/run.py mandelbrot --cases smoke --output {{T}}/sc.json >&-", timeout=300)
    add("run.py", "stderr /dev/full (progress lines fail)", f"{P} snippets/bench/run.py mandelbrot --cases smoke --output {{T}}/se.json 2>/dev/full", expect="ok", check=json_ok("{T}/se.json"), timeout=300)
    add("run.py", "2>&1 | head -1 (progress to a reader gone)", f"{P} snippets/bench/run.py mandelbrot --cases smoke --output {{T}}/sh.json 2>&1 | head -1 >/dev/null; exit ${{PIPESTATUS[0]}}", expect="quiet", check=json_ok("{T}/sh.json"), timeout=300)
    add("run.py", "stdout /dev/full, a real run (results still written)", f"{P} snippets/bench/run.py mandelbrot --cases smoke --output {{T}}/sf.json >/dev/full", check=json_ok("{T}/sf.json"), timeout=300)
    add("run.py", "--output a dangling symlink (written through it)", f"{P} snippets/bench/run.py mandelbrot --cases smoke --output {{T}}/link.json >/dev/null", expect="ok", setup="ln -sf {T}/target.json {T}/link.json",
        check=f"test -L {{T}}/link.json && " + json_ok("{T}/target.json"), timeout=300)
    # -- structure_logs writes tracked files in docs/data: a fault must leave them as they were
    unchanged = "git diff --quiet -- docs/data && test -z \"$(git status --porcelain -- docs/data)\""
    add("structure_logs", "ulimit -f 1 (keeps the tracked JSON)", f"ulimit -f 1; {P} tools/structure_logs.py", check=unchanged + " && " + NO_GIT_LOCK)
    add("structure_logs", "Ctrl-C inside one output's rename (mid-run)", at("rename:saxpy-ncu-h200.json") + f"{P} tools/structure_logs.py", expect="held", check=unchanged)
    # -- gpu/run_all.sh packing on a full disk (a topic fails here: no GPU; its logs are packed)
    add("run_all.sh", "ulimit -f 1 (the archive: the earlier one or a whole new one; no git lock left)", "ulimit -f 1; OUT={T}/ra5 bash gpu/run_all.sh saxpy", expect="batch",
        setup="mkdir -p {T}/ra5 && head -c 3000 /dev/urandom > {T}/ra5/results.tgz && cp {T}/ra5/results.tgz {T}/ra5-earlier.tgz",
        check="(tar tzf {T}/ra5/results.tgz >/dev/null 2>&1 || cmp -s {T}/ra5/results.tgz {T}/ra5-earlier.tgz) && " + NO_GIT_LOCK, timeout=300)
    add("run_all.sh", "file system full while packing (keeps the earlier archive)", "OUT={T}/full bash gpu/run_all.sh saxpy", expect="batch",
        keep=("full/results.tgz", "full/summary.txt"), timeout=300)
    add("run.py", "ulimit -f 4, a real run (keeps earlier; no git lock left)", f"ulimit -f 4; {P} snippets/bench/run.py mandelbrot --cases smoke --output {{T}}/big/r.json", keep=("big/r.json",),
        setup="cp {T}/big/d.json {T}/big/r.json", check=NO_GIT_LOCK, timeout=300)
    # -- timeline_trace: the other trace formats damaged; two plain runs on one output
    add("timeline_trace", "trace .json.gz truncated", f"{P} tools/timeline_trace.py --label x --output {{T}}/tl.json {{T}}/trunc.json.gz")
    add("timeline_trace", "trace SQLite header, then garbage", f"{P} tools/timeline_trace.py --label x --output {{T}}/tl.json {{T}}/fake.sqlite")
    add("timeline_trace", "two runs, one output (no --add)", f"{P} tools/timeline_trace.py --label x --output {{T}}/two-tl5.json {{T}}/trace.json", twice=True,
        check=f"{P} -c \"import json; json.load(open('{{T}}/two-tl5.json'))\"")
    add("run.py", "file system remounted read-only mid-run", f"{P} snippets/bench/run.py mandelbrot --cases smoke --output {{T}}/mnt/r.json & pid=$!; for i in $(seq 600); do test -e {{T}}/mnt/r.partial.json && break; sleep 0.05; done; mount -o remount,ro {{T}}/mnt; wait $pid",
        setup="mkdir -p {T}/mnt && mount -t tmpfs -o size=4m tmpfs {T}/mnt", teardown="umount {T}/mnt", timeout=300)
    add("train.py", "file system remounted read-only mid-run", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/mnt/tr --image-size 16 --epochs 50 & pid=$!; for i in $(seq 2400); do test -e {{T}}/mnt/tr/history.json && break; sleep 0.05; done; mount -o remount,ro {{T}}/mnt; wait $pid",
        setup="mkdir -p {T}/mnt && mount -t tmpfs -o size=16m tmpfs {T}/mnt", teardown="umount {T}/mnt", timeout=300)
    # -- a full file system (tmpfs filled: ENOSPC, not a file-size limit), earlier outputs in place
    FULL = [("refresh_prices", f"{P} snippets/aws/refresh_prices.py --offer {OFFER} --out {{T}}/full/p.csv", "p.csv"),
            ("gpu_doctor", f"{P} snippets/doctor/gpu_doctor.py --no-compile --timeout 5 --json {{T}}/full/d.json", "d.json"),
            ("mandelbrot_image", f"{P} tools/mandelbrot_image.py {{T}}/full/m.png", "m.png"),
            ("timeline_trace", f"{P} tools/timeline_trace.py --label x --output {{T}}/full/tl.json {{T}}/trace.json", "tl.json"),
            ("run.py", f"{P} snippets/bench/run.py mandelbrot --cases smoke --output {{T}}/full/r.json", "r.json"),
            ("register_intel_cpu", f"{P} snippets/opencl/register_intel_cpu.py --dir {{T}}/full/icd --optional", "icd/intel-cpu.icd"),
            ("make_dataset", f"{P} snippets/keras/make_dataset.py {{T}}/full/ds --images 4 --size 64", None),
            ("train.py", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/full/tr --image-size 16 --epochs 1", None)]
    for tool, cmd, keep in FULL:
        add(tool, "file system full (tmpfs, keeps earlier)", cmd, keep=(f"full/{keep}",) if keep else (), timeout=300)
    add("(all writers)", "no temporary left on the full file system", "! find {T}/full -name '*.tmp*' -o -name '.*.tmp' | grep .", expect="ok")
    # -- train.py / predict.py: resume that must check what it resumes; damaged inputs; streams
    tr = f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/trr --image-size 16"
    add("train.py", "resume with another --learning-rate", tr + " --epochs 2 --learning-rate 0.01", keep=("trr/history.json",), timeout=300)
    add("train.py", "resume with another --batch-size", tr + " --epochs 2 --batch-size 2", keep=("trr/history.json",), timeout=300)
    add("train.py", "resume on another data folder", f"{P} snippets/keras/train.py {{T}}/data2 --output-dir {{T}}/trr --image-size 16 --epochs 2", keep=("trr/history.json",), timeout=300)
    add("train.py", "history with NaN val_accuracy", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/trn --image-size 16 --epochs 2", keep=("trn/history.json",), timeout=300,
        setup=f"rm -rf {{T}}/trn; cp -r {{T}}/trr {{T}}/trn; {P} -c \"import json; p='{{T}}/trn/history.json'; d=json.load(open(p)); [e.update(val_accuracy=float('nan')) for e in d['epochs']] if isinstance(d, dict) and 'epochs' in d else None; json.dump(d, open(p,'w'))\"")
    add("train.py", "a decompression-bomb PNG in the data", f"{P} snippets/keras/train.py {{T}}/databomb --output-dir {{T}}/trb --image-size 16 --epochs 1", timeout=300)
    add("predict.py", "a decompression-bomb PNG", f"{P} snippets/keras/predict.py {{T}}/trr/best.keras {{T}}/databomb/cats/bomb.png", timeout=300)
    add("train.py", "stdout /dev/full", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/trf --image-size 16 --epochs 1 >/dev/full", timeout=300)
    add("train.py", "| head -1 (training goes on)", f"{P} snippets/keras/train.py {{T}}/data --output-dir {{T}}/trh --image-size 16 --epochs 2 | head -1; exit ${{PIPESTATUS[0]}}", expect="quiet", timeout=300,
        check=f"{P} -c \"import json,sys; sys.exit(len(json.load(open('{{T}}/trh/history.json'))['epochs']) != 2)\"")
    add("predict.py", "stdout /dev/full", f"{P} snippets/keras/predict.py {{T}}/trr/best.keras {{T}}/data >/dev/full", timeout=300)
    add("predict.py", "| head -1", f"{P} snippets/keras/predict.py {{T}}/trr/best.keras {{T}}/data | head -1; exit ${{PIPESTATUS[0]}}", expect="quiet", timeout=300)
    add("predict.py", "image a folder of folders (wrong kind)", f"{P} snippets/keras/predict.py {{T}}/trr/best.keras {{T}}/trr", timeout=300)
    # -- JSON of the right syntax and the wrong values
    for name in ("inf", "nan", "neg", "bigint", "strs"):
        add("gpu_doctor_replay", f"--replay: every number in facts {name}", f"{P} snippets/doctor/gpu_doctor.py --replay {{T}}/doc-{name}.json", expect="verdict-or-error")
    for name in ("inf", "nan", "neg", "1e400", "list"):
        add("refresh_prices", f"--offer: every price {name}", f"{P} snippets/aws/refresh_prices.py --offer {{T}}/offer-{name}.json --out {{T}}/op.csv", keep=("op.csv",))
    add("refresh_prices", "--offer: products a list", f"{P} snippets/aws/refresh_prices.py --offer {{T}}/offer-plist.json --out {{T}}/op.csv", keep=("op.csv",))
    for name in ("inf", "nan"):
        add("timeline_trace", f"trace whose durations are {name}", f"{P} tools/timeline_trace.py --label x --output {{T}}/tl5.json {{T}}/trace-{name}.json")
    # -- two runs on one output at once
    add("register_intel_cpu", "two runs, one --dir", f"{P} snippets/opencl/register_intel_cpu.py --dir {{T}}/two-icd --optional", twice=True,
        check="test -s {T}/two-icd/intel-cpu.icd")
    return out

def prepare(T: Path, repo: Path):
    (T / "deep.json").write_text("[" * 100000 + "]" * 100000)
    (T / "deep2.json").write_text("{\"a\":" * 50000 + "1" + "}" * 50000)
    (T / "trunc.json").write_text('{"checks": [{"name": "x", ')
    (T / "trunc2.json").write_text('{"label": [')
    (T / "garbage.bin").write_bytes(os.urandom(4096))
    (T / "list.json").write_text("[1, 2, 3]")
    (T / "strs.json").write_text('["a", "b"]')
    (T / "shape.json").write_text('{"checks": "none", "summary": 3}')
    (T / "trace.json").write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
        {"ph": "X", "cat": "cpu_op", "name": "h", "ts": 0, "dur": 20, "pid": 2, "tid": 1}]}))
    (T / "args.json").write_text('{"traceEvents": [{"ph": "M", "name": "process_name", "args": [1]}]}')
    (T / "tlist.json").write_text('{"traces": [1]}')
    (T / "nosite").mkdir()
    for sub in ("ro", "big"):
        (T / sub).mkdir()
        for name in ("p.csv", "d.json", "m.png"):
            (T / sub / name).write_text(f"earlier good {name}\n" * 400)
    (T / "trdeep").mkdir()
    (T / "trdeep" / "history.json").write_text("[" * 100000 + "]" * 100000)
    os.chmod(T / "ro", 0o555)
    prepare_round_five(T, repo)


CHECK_ROWS = """import json, sys
doc = json.load(open(sys.argv[1]))  # a final results file: whole, each row once, and no row
rows = [(m["case"], m["variant"], m["phase"]) for m in doc["measurements"]]  # of a pair its
lacking = set()  # notes call not measured
for note in doc["notes"]:
    if "not measured: " in note:
        lacking |= set(note.rsplit("not measured: ", 1)[1].split(", "))
bad = doc.get("partial") or len(rows) != len(set(rows)) or any(f"{c}/{v}" in lacking for c, v, _ in rows)
sys.exit(1 if bad else 0)
"""


def numbers_replaced(doc, value):
    """doc with every number (not a bool) in it replaced by value."""
    if isinstance(doc, dict):
        return {k: numbers_replaced(v, value) for k, v in doc.items()}
    if isinstance(doc, list):
        return [numbers_replaced(v, value) for v in doc]
    if isinstance(doc, (int, float)) and not isinstance(doc, bool):
        return value
    return doc


def prepare_round_five(T: Path, repo: Path):
    py = str(repo / ".venv/bin/python")
    env = {**os.environ, "PYTHONPATH": f"{repo}/snippets:{repo}/hooks"}
    env.pop("KERAS_BACKEND", None)
    (T / "sigint_at.c").write_text(SIGINT_AT_C)
    shim = T / "sigint_at.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", shim, T / "sigint_at.c", "-ldl"],
                   check=True)
    # a partial results file: a smoke run stopped at its second partial write
    subprocess.run(["bash", "-c", f"SIGINT_AT=rename:pc.partial.json:2 LD_PRELOAD={shim} {py} "
                    f"snippets/bench/run.py mandelbrot --cases smoke --output {T}/pc.json"],
                   cwd=repo, env=env, capture_output=True)
    # a report with numbers of every wrong kind
    good = json.loads((repo / "docs/data/doctor-h200.json").read_text())
    for name, value in {"inf": float("inf"), "nan": float("nan"), "neg": -1, "bigint": 10**400,
                        "strs": "7"}.items():
        (T / f"doc-{name}.json").write_text(json.dumps(good | {"facts": numbers_replaced(good["facts"], value)}))
    offer = json.loads((repo / "tests/fixtures/aws/offer-AmazonEC2-us-east-1-sample.json").read_text())
    for name, price in {"inf": "Infinity", "nan": "NaN", "neg": "-1", "1e400": "1e400", "list": ["1"]}.items():
        o = json.loads(json.dumps(offer))
        for terms in o["terms"]["OnDemand"].values():
            for term in terms.values():
                for dim in term["priceDimensions"].values():
                    dim["pricePerUnit"]["USD"] = price
        (T / f"offer-{name}.json").write_text(json.dumps(o))
    (T / "offer-plist.json").write_text(json.dumps(offer | {"products": list(offer["products"].values())}))
    (T / "op.csv").write_text("earlier good op.csv\n")
    (T / "check_rows.py").write_text(CHECK_ROWS)
    import gzip
    (T / "trunc.json.gz").write_bytes(gzip.compress((T / "trace.json").read_bytes())[:30])
    (T / "fake.sqlite").write_bytes(b"SQLite format 3\0" + os.urandom(4000))
    trace = json.loads((T / "trace.json").read_text())
    for name, v in {"inf": float("inf"), "nan": float("nan")}.items():
        (T / f"trace-{name}.json").write_text(json.dumps({"traceEvents": [e | {"dur": v} for e in trace["traceEvents"]]}))
    # a full file system holding earlier good outputs
    full = T / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", full], check=True)
    (full / "icd").mkdir()
    for name in ("p.csv", "d.json", "m.png", "tl.json", "r.json", "icd/intel-cpu.icd",
                 "results.tgz", "summary.txt"):
        (full / name).write_text(f"earlier good {name}\n" * 40)
    subprocess.run(["dd", "if=/dev/zero", f"of={full}/filler", "bs=4k"], capture_output=True)
    # data sets: a small one for train/predict, a second one (another seed), one with a decompression-bomb PNG; a trained run
    subprocess.run([py, "snippets/keras/make_dataset.py", str(T / "data"), "--images", "4", "--size", "32"],
                   cwd=repo, env=env, capture_output=True)
    subprocess.run([py, "snippets/keras/make_dataset.py", str(T / "data2"), "--images", "4", "--size", "32",
                    "--seed", "1"], cwd=repo, env=env, capture_output=True)
    shutil.copytree(T / "data", T / "databomb")
    (T / "databomb/cats/bomb.png").write_bytes(bomb_png(40000, 40000))
    subprocess.run([py, "snippets/keras/train.py", str(T / "data"), "--output-dir", str(T / "trr"),
                    "--image-size", "16", "--epochs", "1"], cwd=repo, env=env, capture_output=True)


def bomb_png(w: int, h: int) -> bytes:
    """A few hundred bytes that say w x h pixels (Pillow refuses past 2 x MAX_IMAGE_PIXELS)."""
    import struct, zlib
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b""))

# stderr lines that are not the tool's answer: TensorFlow/XLA start-up noise and progress lines
NOISE = re.compile(r"^(WARNING: All log|[IWE]0000 |\d{4}-\d\d-\d\d \d\d:|To enable the following|"
                   r"\[\s*[\d.]+ s\]|.*(oneDNN|TF_ENABLE_ONEDNN_OPTS|cuda|absl|computation placer|"
                   r"rebuild TensorFlow|Unable to register)|\s*$)")


def answer_lines(err: str) -> list[str]:
    lines = [l for l in err.splitlines()
             if l.strip() and (l.startswith("error: ") or not NOISE.match(l))]  # "cuda_major"
    if lines and lines[0].startswith("usage:") and ": error: " in lines[-1]:
        lines = lines[-1:]  # argparse's usage block + its one error line (lessons use plain argparse)
    return lines


def digest(p: Path):
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None

def run_case(c, T, repo, env):
    cmd = (c["cmd"].replace("{T}", str(T)).replace("{FIX}", str(repo / "tests/fixtures"))
           .replace("{SHIM}", str(T / "sigint_at.so")))
    if "read-only" in c["fault"]:  # root ignores a folder's mode: drop the capability that lets it
        cmd = "exec setpriv --bounding-set=-dac_override,-dac_read_search bash -c " + shlex.quote(cmd)
    if c["setup"]:
        subprocess.run(["bash", "-c", c["setup"].replace("{T}", str(T))], cwd=repo, env=env)
    before = {k: digest(T / k) for k in c["keep"]}
    t0 = time.time()
    try:
        if c.get("sigint") is not None:  # Ctrl-C: SIGINT to the process group, as a terminal does
            p = subprocess.Popen(["bash", "-c", "exec " + cmd], cwd=repo, env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 start_new_session=True)
            time.sleep(c["sigint"])
            try:
                os.killpg(p.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            said, err = p.communicate(timeout=c["timeout"])
            rc = p.returncode
            if rc == -signal.SIGINT and said.strip() and not answer_lines(err):
                # its work was done and said; the signal came while the interpreter exited
                # (Python puts the default SIGINT action back then): the shell sees 130
                c = dict(c, expect="130-at-exit")
        elif c.get("twice"):  # two runs on the same output at once
            ps = [subprocess.Popen(["bash", "-c", cmd], cwd=repo, env=env, text=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   start_new_session=True) for _ in range(2)]
            errs = [q.communicate(timeout=c["timeout"])[1] for q in ps]
            rcs = [q.returncode for q in ps]
            rc, err = "/".join(map(str, rcs)), "\n".join(e for e in errs if e.strip())
            check = c.get("check")
            valid = subprocess.run(["bash", "-c", check.replace("{T}", str(T))]).returncode == 0 \
                if check else True
            lines = answer_lines(err)
            good = ("Traceback" not in err and valid and 0 in rcs
                    and all(l.startswith("error: ") for l in lines)
                    and len(lines) == sum(r != 0 for r in rcs))  # the loser: one line
            if not good:
                (LOGS / f"{c['tool']}-twice.err").write_text(err)
            return dict(c, rc=rc, tb="Traceback" in err, nlines=len(lines), silent0=False,
                        lost=[] if valid else ["output invalid"], first=lines[0] if lines else "",
                        good=good, secs=round(time.time() - t0, 1))
        else:
            p = subprocess.run(["bash", "-c", cmd], cwd=repo, env=env, capture_output=True,
                               text=True, timeout=c["timeout"], start_new_session=True)
            rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, err = "timeout", (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    if c.get("teardown"):
        subprocess.run(["bash", "-c", c["teardown"].replace("{T}", str(T))])
    lost = [k for k, d in before.items() if digest(T / k) != d]
    if c.get("check") and subprocess.run(["bash", "-c", c["check"].replace("{T}", str(T))],
                                         cwd=repo, env=env).returncode != 0:
        lost.append("output invalid or missing")
    lines = answer_lines(err)
    tb = "Traceback" in err
    failure = c["expect"] == "error"
    silent0 = failure and rc == 0
    if c["expect"] == "quiet":
        good = not lines and not tb
    elif c["expect"] == "ok":
        good = rc == 0 and not tb
    elif c["expect"] == "verdict":  # the doctor's report names the fault; exit 1 is its verdict
        good = rc in (0, 1) and not tb
    elif c["expect"] == "verdict-or-error":  # a diagnosis (0/1) or one line, exit 2
        good = not tb and ((rc in (0, 1) and not lines) or (rc == 2 and len(lines) == 1))
    elif c["expect"] == "held":  # Ctrl-C inside the final rename: the output is whole, and the
        # answer is success, or one line that says it was written (not a bare "interrupted")
        msg = lines[0] if lines else ""
        good = (not tb and not lost and len(lines) <= 1
                and (rc in (0, 1) and "interrupt" not in msg or rc == 130 and "written" in msg))
    elif c["expect"] == "batch":  # run_all.sh: the topics' own logs come first; its verdict last
        good = rc not in (0, "timeout") and not lost and bool(lines) and lines[-1].startswith("error: ")
    elif c["expect"] == "130-at-exit":
        good = "n/a"
    elif c["expect"] == "130" and rc == 0 and not lines:
        good = "n/a"  # it finished before the signal came
    elif c["expect"] == "130":
        good = rc == 130 and not tb and len(lines) == 1 and not lost
    else:
        good = rc not in (0, "timeout") and not tb and len(lines) == 1 and not lost
    if c["expect"] == "ok" and lost:
        good = False
    if good is not True and good != "n/a":
        (LOGS / f"{c['tool']}-{re.sub(r'[^a-z0-9]+', '-', c['fault'].lower())}.err").write_text(err)
    return dict(c, rc=rc, tb=tb, nlines=len(lines), silent0=silent0, lost=lost,
                first=(lines[-1] if tb or c["expect"] == "batch" else (lines[0] if lines else "")), good=good,
                secs=round(time.time() - t0, 1))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo", type=Path)
    ap.add_argument("--table", type=Path)
    ap.add_argument("--only")
    ap.add_argument("--python", default=None)
    ap.add_argument("--new", action="store_true", help="only the cases round five added")
    a = ap.parse_args()
    repo = a.repo.resolve()
    py = a.python or str(repo / ".venv/bin/python")
    env = {**os.environ, "PYTHONPATH": f"{repo}/snippets:{repo}/hooks"}
    env.pop("KERAS_BACKEND", None)
    T = Path(tempfile.mkdtemp(prefix="faults-"))
    rows = []
    try:
        prepare(T, repo)
        for c in cases(py):
            if a.only and c["tool"] != a.only or a.new and not c.get("new"):
                continue
            r = run_case(c, T, repo, env)
            rows.append(r)
            print(f"{'n/a' if r['good'] == 'n/a' else 'ok ' if r['good'] else 'BAD'} {r['tool']:20} {r['fault']:42} rc={r['rc']} "
                  f"tb={int(r['tb'])} lines={r['nlines']} lost={r['lost'] or ''} | {r['first'][:110]}",
                  flush=True)
    finally:  # a crash or Ctrl-C of the campaign itself leaves no mount behind
        if (T / "ro").exists():
            os.chmod(T / "ro", 0o755)
        for mount in ("mnt", "full"):
            subprocess.run(["umount", str(T / mount)], stderr=subprocess.DEVNULL)
    if a.table:
        with a.table.open("w") as f:
            f.write("| tool | fault | expect | exit | traceback | stderr lines | data lost | message (first line; last for a traceback) | verdict |\n")
            f.write("|---|---|---|---|---|---|---|---|---|\n")
            for r in rows:
                msg = r["first"][:140].replace("|", "\\|")
                fault = r["fault"].replace("|", "\\|")
                f.write(f"| {r['tool']} | {fault} | {r['expect']} | {r['rc']} | "
                        f"{'yes' if r['tb'] else 'no'} | {r['nlines']} | {', '.join(r['lost']) or 'no'} | "
                        f"{msg} | {'n/a (done before the signal)' if r['good'] == 'n/a' else 'pass' if r['good'] else 'FAIL'} |\n")
    shutil.rmtree(T, ignore_errors=True)
    bad = sum(not r["good"] for r in rows)
    na = sum(r["good"] == "n/a" for r in rows)
    print(f"{len(rows)} cases, {len(rows) - bad - na} pass, {bad} fail, {na} not scored")

if __name__ == "__main__":
    main()
