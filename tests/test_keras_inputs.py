"""Cats vs dogs: bad input gives one line on stderr and exit status 2, before TensorFlow starts."""

from __future__ import annotations

import json
import subprocess

import pytest
from PIL import Image

from conftest import load_snippet, run_snippet

TRAIN = "keras/train.py"
PREDICT = "keras/predict.py"
MAKE = "keras/make_dataset.py"


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
                                  ["--flat", "--validation", "0.2"]])
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
    one_line_error(run(TRAIN, dataset), "dog.91.jpg (TIFF, which TensorFlow cannot decode)")


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
