"""Cats vs dogs: bad input gives one line on stderr and exit status 2, before TensorFlow starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from pathlib import Path

from PIL import Image

from helpers import SNIPPETS, load_snippet, run_snippet

TRAIN = "keras/train.py"
PREDICT = "keras/predict.py"
MAKE = "keras/make_dataset.py"


@pytest.fixture(autouse=True)
def beside_the_scripts(monkeypatch):
    """model.py is imported by train.py from its own folder, as when a reader runs the script."""
    monkeypatch.syspath_prepend(str(SNIPPETS / "keras"))


@pytest.fixture
def run(capsys):
    """Call a snippet's main() in this process (fast: no interpreter start) like the CLI would."""
    def call(relpath: str, *args) -> subprocess.CompletedProcess:
        capsys.readouterr()
        try:
            code = load_snippet(relpath).main([str(a) for a in args])
        except SystemExit as exc:  # argparse errors exit
            code = exc.code
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)
    return call


def one_line_error(out, *fragments: str) -> None:
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: "), out.stderr
    for fragment in fragments:
        assert fragment in out.stderr, out.stderr


@pytest.fixture
def dataset(tmp_path):
    make = load_snippet(MAKE)
    make.write_dataset(tmp_path / "data", images=4, size=32)
    return tmp_path / "data"


def test_dataset_maker_writes_the_kaggle_layouts(tmp_path):
    make = load_snippet(MAKE)
    assert make.write_dataset(tmp_path / "a", images=3, size=32) == 6
    assert sorted(p.relative_to(tmp_path / "a").as_posix() for p in (tmp_path / "a").rglob("*.jpg")) == [
        "cats/cat.0.jpg", "cats/cat.1.jpg", "cats/cat.2.jpg",
        "dogs/dog.0.jpg", "dogs/dog.1.jpg", "dogs/dog.2.jpg"]
    make.write_dataset(tmp_path / "b", images=5, size=32, validation=0.4)
    assert len(list((tmp_path / "b/validation/dogs").glob("dog.*.jpg"))) == 2
    assert len(list((tmp_path / "b/train/cats").glob("cat.*.jpg"))) == 3
    make.write_dataset(tmp_path / "c", images=2, size=32, flat=True)
    assert sorted(p.name for p in (tmp_path / "c/train").iterdir()) == [
        "cat.0.jpg", "cat.1.jpg", "dog.0.jpg", "dog.1.jpg"]
    for path in (tmp_path / "a").rglob("*.jpg"):
        with Image.open(path) as image:
            assert image.format == "JPEG" and min(image.size) >= 32


def test_dataset_maker_refuses_a_full_folder(dataset, run):
    one_line_error(run(MAKE, dataset), "not empty")


@pytest.mark.parametrize("args", [["--images", "0"], ["--size", "8"], ["--validation", "1"],
                                  ["--flat", "--validation", "0.2"], ["--images", "-3"],
                                  ["--images", "99999999999999999999"], ["--images", "x"],
                                  ["--validation", "nan"], ["--validation", "0.9", "--images", "1"],
                                  ["--validation", "0.01", "--images", "10"]])
def test_dataset_maker_rejects_bad_arguments(tmp_path, args, run):
    one_line_error(run(MAKE, tmp_path / "x", *args))


def test_missing_data_folder(tmp_path):
    one_line_error(run_snippet(TRAIN, tmp_path / "nowhere"), "does not exist", "nowhere")


def test_empty_data_folder(tmp_path, run):
    one_line_error(run(TRAIN, tmp_path), "is empty")


def test_missing_class_folder(dataset, run):
    for path in (dataset / "dogs").iterdir():
        path.unlink()
    (dataset / "dogs").rmdir()
    one_line_error(run(TRAIN, dataset), f"class folder {dataset / 'dogs'} is missing")


def test_class_folder_without_images(dataset, run):
    for path in (dataset / "cats").iterdir():
        path.unlink()
    (dataset / "cats" / "notes.txt").write_text("not an image, and not counted as one")
    one_line_error(run(TRAIN, dataset), f"{dataset / 'cats'} holds no images")


def test_kaggle_flat_layout_is_explained(tmp_path, run):
    load_snippet(MAKE).write_dataset(tmp_path / "k", images=2, size=32, flat=True)
    one_line_error(run(TRAIN, tmp_path / "k" / "train"), "Kaggle's flat layout")


def test_train_without_validation_folder(dataset, tmp_path, run):
    split = tmp_path / "split"
    split.mkdir()
    dataset.rename(split / "train")
    one_line_error(run(TRAIN, split), "validation is missing")


def test_corrupt_and_foreign_images_are_rejected_by_name(dataset, run):
    # The data set is rejected, not silently trimmed: the message names the first bad file.
    (dataset / "cats" / "cat.90.jpg").write_bytes(b"")  # empty, like PetImages' Cat/666.jpg
    Image.new("RGB", (40, 40)).save(dataset / "dogs" / "dog.91.jpg", format="TIFF")
    out = run(TRAIN, dataset)
    one_line_error(out, "2 file(s) are not readable images", "cat.90.jpg", "and 1 more")
    (dataset / "cats" / "cat.90.jpg").unlink()
    one_line_error(run(TRAIN, dataset), "dog.91.jpg (TIFF data under a .jpg name)")


def test_too_few_images_to_hold_some_out(tmp_path, run):
    load_snippet(MAKE).write_dataset(tmp_path / "d", images=1, size=32)
    one_line_error(run(TRAIN, tmp_path / "d"), "too few")


def test_resume_with_another_image_size_is_refused(dataset, tmp_path, run):
    out = tmp_path / "run"
    out.mkdir()
    (out / "history.json").write_text(json.dumps({"image_size": 32, "epochs": []}))
    one_line_error(run(TRAIN, dataset, "--output-dir", out, "--image-size", "64"),
                   "32-pixel images")


def test_finished_run_is_not_repeated(dataset, tmp_path, run):
    out = tmp_path / "run"
    out.mkdir()
    (out / "last.keras").write_bytes(b"stands in for a model")
    epochs = [{"epoch": i, "val_accuracy": 0.5} for i in (1, 2)]
    (out / "history.json").write_text(json.dumps({"image_size": 64, "epochs": epochs}))
    done = run(TRAIN, dataset, "--output-dir", out, "--epochs", "2")
    assert done.returncode == 0 and "already holds 2 trained epochs" in done.stdout
    (out / "last.keras").unlink()
    one_line_error(run(TRAIN, dataset, "--output-dir", out, "--epochs", "3"),
                   "last.keras is missing")


@pytest.mark.parametrize("args", [["--epochs", "0"], ["--image-size", "4"],
                                  ["--learning-rate", "2"], ["--batch-size", "x"]])
def test_train_rejects_bad_arguments(dataset, args, run):
    one_line_error(run(TRAIN, dataset, *args))


def test_predict_missing_model(dataset, tmp_path, run):
    one_line_error(run(PREDICT, tmp_path / "best.keras", dataset), "does not exist")


def test_predict_rejects_other_model_formats(dataset, tmp_path, run):
    (tmp_path / "trained_model.h5").write_bytes(b"HDF")
    one_line_error(run(PREDICT, tmp_path / "trained_model.h5", dataset), "not a .keras")


def test_predict_missing_image(tmp_path):
    (tmp_path / "m.keras").write_bytes(b"")
    one_line_error(run_snippet(PREDICT, tmp_path / "m.keras", tmp_path / "cat.jpg"),
                   f"image {tmp_path / 'cat.jpg'} does not exist")


def test_predict_non_image_and_empty_folder(tmp_path, run):
    (tmp_path / "m.keras").write_bytes(b"")
    (tmp_path / "photo.jpg").write_text("text")
    one_line_error(run(PREDICT, tmp_path / "m.keras", tmp_path / "photo.jpg"),
                   "photo.jpg is not a readable image")
    (tmp_path / "empty").mkdir()
    one_line_error(run(PREDICT, tmp_path / "m.keras", tmp_path / "empty"), "holds no images")


def test_dataset_maker_checks_the_output_before_writing(tmp_path, run):
    (tmp_path / "file").write_text("a file, not a folder")
    one_line_error(run(MAKE, tmp_path / "file"), "not a folder")
    one_line_error(run(MAKE, tmp_path / "file" / "sub"), "cannot write in")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root may write into read-only folders")
def test_dataset_maker_refuses_a_read_only_folder(tmp_path, run):
    (tmp_path / "ro").mkdir(mode=0o555)
    one_line_error(run(MAKE, tmp_path / "ro" / "data"), "cannot write in")


def test_train_refuses_an_unknown_backend(dataset, monkeypatch, run):
    monkeypatch.setenv("KERAS_BACKEND", "bogus")  # Keras itself would stop with a ValueError traceback
    one_line_error(run(TRAIN, dataset), "KERAS_BACKEND='bogus' is not one of")
    monkeypatch.setenv("KERAS_BACKEND", "tensorflow")


def test_predict_refuses_an_unknown_backend(dataset, tmp_path, monkeypatch, run):
    (tmp_path / "m.keras").write_bytes(b"")
    monkeypatch.setenv("KERAS_BACKEND", "bogus")
    one_line_error(run(PREDICT, tmp_path / "m.keras", dataset), "KERAS_BACKEND='bogus'")


def test_train_checks_the_output_folder_first(dataset, tmp_path, run):
    (tmp_path / "out").write_text("a file")
    one_line_error(run(TRAIN, dataset, "--output-dir", tmp_path / "out"), "is not a folder")
    one_line_error(run(TRAIN, dataset, "--output-dir", tmp_path / "out" / "run"),
                   "cannot write in")


@pytest.mark.parametrize("args", [["--batch-size", "0"], ["--batch-size", "99999999999"],
                                  ["--epochs", "-1"], ["--learning-rate", "nan"],
                                  ["--learning-rate", "inf"], ["--image-size", "1e3"]])
def test_train_rejects_bad_numbers(dataset, args, run):
    one_line_error(run(TRAIN, dataset, *args))


@pytest.mark.parametrize("rate", ["1e-310", "1e-39"])
def test_train_refuses_a_learning_rate_that_float32_holds_as_0_or_subnormal(dataset, tmp_path,
                                                                           rate, run):
    """1e-310 is above 0 as a Python float but 0 in the optimizer's float32: a run that learns
    nothing and says OK."""
    one_line_error(run(TRAIN, dataset, "--output-dir", tmp_path / "out", "--epochs", "1",
                       "--image-size", "8", "--learning-rate", rate), "float32")
    assert not (tmp_path / "out").exists()


def test_damaged_last_keras_on_resume_is_one_line(dataset, tmp_path, run):
    out = tmp_path / "run"
    out.mkdir()
    (out / "last.keras").write_bytes(b"PK\x03\x04 not really a zip file")
    epochs = [{"epoch": 1, "val_accuracy": 0.5}]
    (out / "history.json").write_text(json.dumps({"image_size": 32, "epochs": epochs}))
    result = run(TRAIN, dataset, "--output-dir", out, "--image-size", "32", "--epochs", "2")
    one_line_error(result, f"cannot load {out / 'last.keras'}", "damaged", "delete it")
    assert "File not found" not in result.stderr  # what Keras says of a file that is there


@pytest.mark.parametrize("content,why", [
    (b"PK\x03\x04 damaged", "damaged: not a readable zip archive"),
    (b"", "damaged: not a readable zip archive"), ("no config", "no config.json")])
def test_predict_damaged_model_says_damaged(dataset, tmp_path, run, content, why):
    import zipfile

    if content == "no config":
        with zipfile.ZipFile(tmp_path / "m.keras", "w") as archive:
            archive.writestr("notes.txt", "a zip, not a model")
    else:
        (tmp_path / "m.keras").write_bytes(content)
    result = run(PREDICT, tmp_path / "m.keras", dataset)
    one_line_error(result, f"cannot load {tmp_path / 'm.keras'}", why)
    assert "File not found" not in result.stderr


@pytest.mark.parametrize("doc,why", [
    ([], "a list, not an object"), ("text", "a str, not an object"),
    ({"image_size": 32, "epochs": 5}, '"epochs" is not a list'),
    ({"image_size": 32, "epochs": [3]}, "entry 1 of"),
    ({"image_size": 32, "epochs": [{"epoch": 2, "val_accuracy": 0.5}]}, "entry 1 of"),
    ({"image_size": 32, "epochs": [{"epoch": 1, "val_accuracy": "high"}]}, "numeric"),
    ({"image_size": 32, "epochs": [{"epoch": 1, "val_accuracy": 0.5}], "models": []},
     '"models" is not an object'),
    ({"image_size": 32, "epochs": [{"epoch": 1, "val_accuracy": 0.5}],
      "models": {"last.keras": {"epoch": 9, "sha256": "0"}}}, "'last.keras' is not")])
def test_history_of_the_wrong_shape_is_one_line(dataset, tmp_path, run, doc, why):
    out = tmp_path / "run"
    out.mkdir()
    (out / "last.keras").write_bytes(b"stands in for a model")
    (out / "history.json").write_text(json.dumps(doc))
    one_line_error(run(TRAIN, dataset, "--output-dir", out, "--image-size", "32"),
                   f"{out / 'history.json'} is not a history written by train.py", why)


class Tagged:
    """Stands in for a Keras model: its saved file says which epoch it is."""
    epoch = 0

    def save(self, path):
        Path(path).write_text(f"model after epoch {self.epoch}")


def epoch_record(epoch: int, val_accuracy: float) -> dict:
    return {"epoch": epoch, "val_accuracy": val_accuracy}


# The writes of an epoch that improves: last.next.keras, best.next.keras, history.json, then the
# renames to best.keras and last.keras. Stop after each in turn, then resume.
@pytest.mark.parametrize("improves", [True, False])
@pytest.mark.parametrize("stop_after", range(6))
def test_saves_agree_after_a_stop_between_any_two_writes(tmp_path, monkeypatch, improves,
                                                          stop_after):
    train = load_snippet(TRAIN)
    out, model = tmp_path / "run", Tagged()
    out.mkdir()
    doc = {"image_size": 32, "epochs": []}
    for epoch, accuracy in [(1, 0.6), (2, 0.7 if improves else 0.5)]:
        model.epoch = epoch
        new = {**doc, "epochs": [*doc["epochs"], epoch_record(epoch, accuracy)]}
        if epoch == 1:
            doc = train.commit_epoch(model, out, new, improved=True)
            continue
        writes, real_replace = [], os.replace

        def replace(src, dst):  # every write ends in a rename: stop after the Nth
            real_replace(src, dst)
            writes.append(Path(dst).name)
            if len(writes) == stop_after:
                raise KeyboardInterrupt

        monkeypatch.setattr(train.os, "replace", replace)
        try:
            train.commit_epoch(model, out, new, improved=improves)
        except KeyboardInterrupt:
            pass
        monkeypatch.setattr(train.os, "replace", real_replace)
    epochs, models = train.read_history(out, 32)  # what a resume does first
    done = len(epochs)
    assert done in (1, 2)
    best_epoch = max(epochs, key=lambda e: e["val_accuracy"])["epoch"]
    assert (out / "last.keras").read_text() == f"model after epoch {done}"
    assert (out / "best.keras").read_text() == f"model after epoch {best_epoch}"
    assert {name: record["epoch"] for name, record in models.items()} == {
        "last.keras": done, "best.keras": best_epoch}
    assert sorted(p.name for p in out.iterdir()) == ["best.keras", "history.json", "last.keras"]


def test_resume_refuses_a_model_that_history_does_not_record(tmp_path, run, dataset):
    train = load_snippet(TRAIN)
    out, model = tmp_path / "run", Tagged()
    out.mkdir()
    model.epoch = 1
    train.commit_epoch(model, out, {"image_size": 32, "epochs": [epoch_record(1, 0.6)]}, True)
    (out / "best.keras").write_text("a model from somewhere else")
    one_line_error(run(TRAIN, dataset, "--output-dir", out, "--image-size", "32"),
                   f"{out / 'best.keras'} is not the epoch-1 model", "records")


def test_best_model_survives_an_interrupted_save(tmp_path):
    train = load_snippet(TRAIN)
    best = tmp_path / "best.keras"
    best.write_bytes(b"the previous best model")

    class StoppedWhileSaving:  # writes half a file, then the user presses Ctrl-C
        def save(self, path):
            with open(path, "wb") as f:
                f.write(b"half a mod")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train.save_model(StoppedWhileSaving(), best)
    assert best.read_bytes() == b"the previous best model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.keras"]  # no temporary left


def test_train_notes_images_that_are_not_rgb(dataset, capsys):
    Image.new("RGBA", (40, 40)).save(dataset / "cats" / "alpha.png")
    Image.new("L", (40, 40)).save(dataset / "dogs" / "grey.png")
    train = load_snippet(TRAIN)
    assert train.check_images({"train": dataset}) == 10
    err = capsys.readouterr().err
    assert "1 L, 1 RGBA" in err and "alpha dropped" in err


def make_image(path, mode: str) -> None:
    if mode == "I;16":
        pixels = np.full((20, 30), 65535, np.uint16)
        pixels[0, 0] = 256
        Image.fromarray(pixels).save(path)
    elif mode == "CMYK":
        Image.new("CMYK", (30, 20), (0, 255, 255, 0)).save(path)  # red in CMYK
    elif mode == "P":
        Image.new("RGB", (30, 20), (200, 10, 10)).convert("P").save(path)
    else:
        Image.new(mode, (30, 20)).save(path)


@pytest.mark.parametrize("mode,suffix,note", [
    ("RGBA", ".png", "alpha dropped"), ("LA", ".png", "grey + alpha"),
    ("L", ".png", "grey repeated"), ("I;16", ".png", "16-bit grey"),
    ("CMYK", ".jpg", "CMYK converted"), ("P", ".png", "palette"), ("RGB", ".png", "")])
def test_predict_converts_images_explicitly(tmp_path, mode, suffix, note):
    path = tmp_path / f"image{suffix}"
    make_image(path, mode)
    pixels, said = load_snippet(PREDICT).load_rgb(path)
    assert pixels.shape == (20, 30, 3) and pixels.dtype == np.uint8
    assert (note in said) if note else said == ""
    if mode == "I;16":
        assert pixels[0, 0].tolist() == [1, 1, 1] and pixels[5, 5].tolist() == [255, 255, 255]
    if mode == "CMYK":
        assert pixels[5, 5, 0] > 200 and pixels[5, 5, 1] < 50


def test_predict_truncated_jpeg_is_one_line(tmp_path, run):
    (tmp_path / "m.keras").write_bytes(b"")
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64, 3), np.uint8)).save(
        tmp_path / "cat.1.jpg", quality=95)
    data = (tmp_path / "cat.1.jpg").read_bytes()
    (tmp_path / "cat.1.jpg").write_bytes(data[: len(data) // 2])
    one_line_error(run(PREDICT, tmp_path / "m.keras", tmp_path / "cat.1.jpg"),
                   "cat.1.jpg is not a readable image", "truncated")


@pytest.mark.parametrize("shape,why", [((10,), "not RGB images"), ((32, 32, 1), "not RGB images"),
                                       ("two outputs", "not one probability")])
def test_predict_rejects_models_of_another_shape(dataset, tmp_path, run, shape, why):
    import keras

    if shape == "two outputs":
        model = keras.Sequential([keras.Input((32, 32, 3)), keras.layers.Flatten(),
                                  keras.layers.Dense(2)])
    else:
        model = keras.Sequential([keras.Input(shape), keras.layers.Flatten(),
                                  keras.layers.Dense(1)])
    model.save(tmp_path / "other.keras")
    one_line_error(run(PREDICT, tmp_path / "other.keras", dataset), why)


def test_predict_damaged_model_is_one_line(dataset, tmp_path, run):
    (tmp_path / "m.keras").write_bytes(b"PK\x03\x04 damaged")
    one_line_error(run(PREDICT, tmp_path / "m.keras", dataset), "cannot load")


# The frameworks hidden, as on a machine where they are not installed: --help still works, and a
# real run names what to install in one line with exit status 2.
HIDE = ("import os, runpy, sys\n"
        "for name in ('keras', 'tensorflow', 'jax', 'torch'):\n"
        "    sys.modules[name] = None  # import fails as if not installed\n"
        "sys.argv = sys.argv[1:]\n"
        "sys.path.insert(0, os.path.dirname(sys.argv[0]))  # as `python FILE` does\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n")


def without_frameworks(relpath: str, *args, env: dict | None = None):
    return subprocess.run([sys.executable, "-c", HIDE, str(SNIPPETS / relpath), *map(str, args)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("relpath", [TRAIN, PREDICT, MAKE])  # the tools
def test_help_works_without_the_frameworks(relpath):
    out = without_frameworks(relpath, "--help")
    assert out.returncode == 0 and out.stdout.startswith("usage:"), out.stderr


def test_runs_without_the_frameworks_name_what_to_install(dataset, tmp_path):
    out = without_frameworks(TRAIN, dataset, "--output-dir", tmp_path / "run", "--epochs", 1)
    one_line_error(out, "keras is not installed", "pip install")
    (tmp_path / "m.keras").write_bytes(b"")
    one_line_error(without_frameworks(PREDICT, tmp_path / "m.keras", dataset),
                   "keras is not installed")


# Ctrl-C while an image is read (the first slow import is tests/test_cli_habit.py's case).
CTRL_C = "import os, signal\nos.kill(os.getpid(), signal.SIGINT)  # as a terminal's Ctrl-C does\n"
INTERRUPT = ("import os, runpy, sys, PIL.Image\n"
             f"PIL.Image.open = lambda *args, **kwargs: exec({CTRL_C!r})\n"
             "sys.argv = sys.argv[1:]\n"
             "sys.path.insert(0, os.path.dirname(sys.argv[0]))  # as `python FILE` does\n"
             "runpy.run_path(sys.argv[0], run_name='__main__')\n")


@pytest.mark.parametrize("relpath,args,message", [
    (TRAIN, ["DATA"], "interrupted: run the same command to resume"),
    (PREDICT, ["M", "DATA"], "interrupted"),
    (MAKE, ["OUT", "--images", "2"], "interrupted: OUT is incomplete; delete it")])
def test_ctrl_c_is_one_line_and_exit_130(dataset, tmp_path, relpath, args, message):
    (tmp_path / "m.keras").write_bytes(b"")
    names = {"DATA": dataset, "M": tmp_path / "m.keras", "OUT": tmp_path / "new"}
    done = subprocess.run([sys.executable, "-c", INTERRUPT, str(SNIPPETS / relpath),
                           *[str(names.get(a, a)) for a in args]],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (130, message.replace("OUT", str(names["OUT"])) + "\n")


@pytest.mark.parametrize("stdout", ["/dev/full", "closed pipe"])
def test_make_dataset_to_a_full_device_or_a_closed_pipe_is_one_line_or_quiet(tmp_path, stdout):
    from helpers import FULL, run_to

    proc = run_to(stdout, "keras/make_dataset.py", tmp_path / "data", "--images", "2",
                  "--size", "16")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr == ("error: cannot write to standard output: No space left on device\n"
                           if stdout == "/dev/full" else "")
    assert len(list((tmp_path / "data").rglob("*.*"))) == 4  # the images are written all the same
    assert FULL.startswith("error: cannot write to standard output")


@pytest.mark.parametrize("stdout", ["/dev/full", "closed pipe"])
def test_run_py_usage_to_a_full_device_or_a_closed_pipe(stdout):
    from helpers import run_to

    proc = run_to(stdout, "bench/run.py", "--help")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert ("No space left on device" in proc.stderr) == (stdout == "/dev/full")


def file_size_limit(limit: int):
    """preexec_fn: files the child writes stop at `limit` bytes (`ulimit -f`), as on a full disk."""
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_make_dataset_on_a_full_disk_is_an_error_not_ok(tmp_path):
    proc = run_snippet(MAKE, tmp_path / "data", "--images", "3",
                       preexec_fn=file_size_limit(2048))  # each JPEG is larger than that
    assert proc.returncode == 1 and "OK" not in proc.stdout, (proc.stdout, proc.stderr)
    assert proc.stderr.count("\n") == 1 and "File too large" in proc.stderr, proc.stderr


def test_make_dataset_self_check_decodes_every_pixel(tmp_path):
    make = load_snippet(MAKE)
    make.write_dataset(tmp_path / "data", images=1, size=32)
    whole = next((tmp_path / "data").rglob("*.jpg"))
    assert make.decodes(whole, 32)
    whole.write_bytes(whole.read_bytes()[:len(whole.read_bytes()) // 2])  # header intact
    assert Image.open(whole).size  # the header alone still opens
    assert not make.decodes(whole, 32)


def test_one_run_per_output_folder(dataset, tmp_path, run):
    out = tmp_path / "run"
    out.mkdir()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (out / "run.lock").write_text(f"{other.pid}\n")  # a live run holds the folder
        one_line_error(run(TRAIN, dataset, "--output-dir", out, "--image-size", "32"),
                       f"another run (process {other.pid}) is writing {out}", "run.lock")
        assert sorted(p.name for p in out.iterdir()) == ["run.lock"]  # nothing of it touched
    finally:
        other.kill()
        other.wait()
    (out / "last.keras").write_bytes(b"stands in for a model")
    (out / "history.json").write_text(json.dumps({"image_size": 32,
                                                  "epochs": [epoch_record(1, 0.5)]}))
    done = run(TRAIN, dataset, "--output-dir", out, "--image-size", "32", "--epochs", "1")
    assert done.returncode == 0 and "nothing to do" in done.stdout  # the lock's process is gone
    assert not (out / "run.lock").exists()  # and this run released it


def history_of(out: Path, dataset: Path, **settings) -> None:
    """One finished epoch in `out`, recorded with these settings and dataset's fingerprint."""
    train = load_snippet(TRAIN)
    out.mkdir()
    (out / "last.keras").write_bytes(b"stands in for a model")
    doc = {"image_size": 32, "batch_size": 32, "learning_rate": 0.001, "seed": 1337,
           "mixed_precision": False, "data": train.data_fingerprint(train.find_folders(dataset)),
           "epochs": [epoch_record(1, 0.5)], "models": {}}
    (out / "history.json").write_text(json.dumps(doc | settings))


@pytest.mark.parametrize("args,why", [
    (["--learning-rate", "0.01"], "was trained with --learning-rate 0.001, not 0.01"),
    (["--batch-size", "8"], "was trained with --batch-size 32, not 8"),
    (["--seed", "3"], "was trained with --seed 1337, not 3"),
    (["--mixed-precision"], "was trained with --mixed-precision False, not True")])
def test_resume_with_other_settings_is_refused(dataset, tmp_path, run, args, why):
    history_of(tmp_path / "run", dataset)
    one_line_error(run(TRAIN, dataset, "--output-dir", tmp_path / "run", "--image-size", "32",
                       "--epochs", "2", *args), why)


def test_resume_on_another_data_set_is_refused(dataset, tmp_path, run):
    history_of(tmp_path / "run", dataset)
    Image.new("RGB", (40, 40)).save(dataset / "cats" / "one-more.jpg")
    one_line_error(run(TRAIN, dataset, "--output-dir", tmp_path / "run", "--image-size", "32",
                       "--epochs", "2"), "was trained on another data set")


@pytest.mark.parametrize("text,why", [
    ('{"image_size": 32, "epochs": [{"epoch": 1, "val_accuracy": NaN}]}', '"val_accuracy" nan'),
    ("[" * 100_000 + "]" * 100_000, "nested too deep")])
def test_nan_or_deeply_nested_history_is_damage(dataset, tmp_path, run, text, why):
    out = tmp_path / "run"
    out.mkdir()
    (out / "last.keras").write_bytes(b"stands in for a model")
    (out / "history.json").write_text(text)
    one_line_error(run(TRAIN, dataset, "--output-dir", out, "--image-size", "32"),
                   str(out / "history.json"), why)


def test_decompression_bomb_is_one_line(dataset, tmp_path, run):
    bomb = dataset / "cats" / "bomb.png"
    Image.new("1", (20_000, 20_000)).save(bomb)  # 400 million pixels in a small file
    one_line_error(run(TRAIN, dataset, "--image-size", "32"), f"{bomb} (DecompressionBombError)")
    predict = load_snippet(PREDICT)
    with pytest.raises(predict.InputError, match="is not a readable image"):
        predict.load_rgb(bomb)


def finished_run(dataset: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    out.mkdir()
    (out / "last.keras").write_bytes(b"stands in for a model")
    (out / "history.json").write_text(json.dumps({"image_size": 32,
                                                  "epochs": [epoch_record(1, 0.5)]}))
    return out


@pytest.mark.parametrize("stdout", ["/dev/full", "closed pipe"])
def test_train_stdout_full_or_gone_does_not_blame_the_output_folder(dataset, tmp_path, stdout):
    from helpers import run_to

    out = finished_run(dataset, tmp_path)  # says "nothing to do" on stdout, and ends
    proc = run_to(stdout, TRAIN, dataset, "--output-dir", out, "--image-size", "32",
                  "--epochs", "1")
    assert "Traceback" not in proc.stderr and str(out) not in proc.stderr, proc.stderr
    if stdout == "/dev/full":
        assert proc.returncode == 1 and proc.stderr == (
            "error: cannot write to standard output: No space left on device (the run's files "
            "are written all the same)\n")
    else:  # | head: a quiet end
        assert (proc.returncode, proc.stderr) == (0, "")


@pytest.mark.parametrize("relpath,args", [(TRAIN, ["DATA", "--output-dir", "OUT"]),
                                          (PREDICT, ["M", "DATA"]), (MAKE, ["OUT"])])
def test_closed_stdout_is_one_line_before_any_work(dataset, tmp_path, relpath, args):
    names = {"DATA": dataset, "M": tmp_path / "m.keras", "OUT": tmp_path / "new"}
    command = " ".join([sys.executable, str(SNIPPETS / relpath),
                        *[str(names.get(a, a)) for a in args]])
    proc = subprocess.run(["bash", "-c", command + " >&-"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1 and proc.stderr == (
        "error: standard output is closed; give it a file (> FILE) or /dev/null\n"), proc.stderr
    assert not (tmp_path / "new").exists()


def test_progress_lines_that_cannot_be_written_are_dropped():
    habit = load_snippet("keras/tool_habit.py")
    with open("/dev/full", "w") as full:
        progress = habit.ProgressThatMayFail(full)
        print("epoch 1/3", file=progress)  # fails: kept, not raised
        print("epoch 2/3", file=progress)
        assert progress.error.strerror == "No space left on device" and not progress.isatty()


def test_a_path_of_the_wrong_kind_is_not_said_missing(dataset, tmp_path, run):
    one_line_error(run(TRAIN, dataset / "cats" / "cat.0.jpg"), "is not a folder")
    one_line_error(run(PREDICT, tmp_path, dataset), f"{tmp_path} is not a file")
    predict = load_snippet(PREDICT)
    with pytest.raises(predict.InputError, match="is neither an image file nor a folder"):
        predict.image_paths([Path("/dev/null")])  # exists, a device
