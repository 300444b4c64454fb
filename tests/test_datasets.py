"""Datasets: every registered config loads as documented; files are verified; errors are single and clear.

Offline: files come from the mirror (``FORESTLAB_DATA_MIRROR`` or ../shared/datasets, the ``mirror`` fixture of
conftest.py, which skips when there is none) into a temporary cache; downloads are off or pointed at a closed
local port.
"""

from __future__ import annotations

import csv
import functools
import gzip
import hashlib
import http.server
import threading
from pathlib import Path

import numpy as np
import pytest

from forestlab.config import group_options, load_group_option, to_container
from forestlab.datasets import Dataset, _mnist, clear_cache, dataset_files, load_dataset, verify_dataset
from forestlab.datasets._synthetic import ringnorm, twonorm
from forestlab.errors import DatasetError

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf" / "dataset"
CONFIGS = group_options("dataset")  # the selectable options (a `_base.yaml` shared through `defaults:` is none)
REQUIRED = ("name", "task", "description", "studies", "shape", "source")
CLOSED_PORT = "http://127.0.0.1:9/"  # connection refused at once: "downloading" without any network

# Positives of each binary dataset: the rates of DATASETS.md / the studies' digests (e.g. wdbc 212 of 569,
# depecker2010 Table 5.2), the UCI documentation for the others.
POSITIVES = {
    "adult": 11687, "adult_data": 7841, "australian": 307, "autompg": 206, "breastw": 239, "chess": 1669,
    "credit_a": 296,
    "german": 700, "glass": 87, "glass_float": 87, "glass_window": 163, "haberman": 81, "heart": 137,
    "heart_statlog": 120, "hepatitis": 19,
    "ionosphere": 225, "japanese": 307, "letter_ab": 789, "letter_do": 805, "letter_oq": 753, "liver": 200,
    "mnist_08": 6903, "mnist_17": 7877, "mnist_18": 7877, "mnist_23": 6990, "mushroom": 3916, "parkinsons": 147,
    "pima": 268, "sonar": 111, "spambase": 1813, "tictactoe": 626, "usvotes": 267, "vote": 267,
    "vote_complete": 124, "wbc": 239, "wdbc": 212, "wdbc_sklearn": 212,
}
CLASS_COUNTS = {
    "image": [330] * 7,
    "mnist": [6903, 7877, 6990, 7141, 6824, 6313, 6876, 7293, 6825, 6958],  # the 70000 images, digits 0..9
    "satimage": [1533, 703, 1358, 626, 707, 1508],
    "vehicle": [218, 212, 217, 199],
    "vowel": [90] * 11,
    "soybean": [16, 91, 44, 20, 20, 92, 44, 20, 14, 15, 20, 20, 91, 8, 20, 88, 20, 20, 20],
    "letters": [789, 766, 736, 805, 768, 775, 773, 734, 755, 747, 739, 761, 792, 783, 753, 803, 783, 758, 748,
                796, 813, 764, 752, 787, 786, 734],
}
GENERATED = {"ringnorm", "twonorm",  # and depecker2010's simulated problems (tests/test_ranking_data.py)
             "unif2d", "gauss_croix2d", "gauss_lin2d", "gauss_quad2d",
             "gauss_easy20d", "gauss_med20d", "gauss_hard20d",
             *(f"gauss_shift_q{q}_d{d}" for q in (10, 30) for d in ("020", "010", "008", "005", "000", "015", "030"))}


def cfg_of(name: str) -> dict:
    """The dataset config as forestlab reads it (through ``load_group_option``, so a ``defaults:`` base applies)."""
    return to_container(load_group_option("dataset", name))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One dataset cache for this module (files are copied from the mirror once)."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def mnist_raw(mirror: Path, cache: Path) -> tuple[np.ndarray, np.ndarray]:
    """The 70000 pooled MNIST images and labels, decoded once for the module."""
    images, labels, _ = _mnist.load_raw("mnist", data_dir=cache, mirror=mirror, download=False)
    return images, labels


def _write_truncated(src: Path, dest: Path) -> bytes:
    dest.parent.mkdir(parents=True, exist_ok=True)
    data = src.read_bytes()[:-100]
    dest.write_bytes(data)
    return data


# ---------------------------------------------------------------------------------------------------------------
# Every registered config
# ---------------------------------------------------------------------------------------------------------------
def test_every_expected_dataset_is_registered():
    assert set(POSITIVES) | set(CLASS_COUNTS) | GENERATED == set(CONFIGS)


@pytest.mark.parametrize("name", CONFIGS)
def test_config_schema(name):
    cfg = cfg_of(name)
    for key in REQUIRED:
        assert key in cfg, f"{name}.yaml lacks `{key}`"
    assert cfg["name"] == name and cfg["task"] in ("binary", "multiclass")
    assert len(cfg["shape"]) == 2 and isinstance(cfg["studies"], list)
    if cfg["source"]["kind"] == "uci":
        for entry in cfg["source"]["files"]:
            assert len(entry["sha256"]) == 64
        assert cfg["source"]["url"].startswith("https://archive.ics.uci.edu/ml/machine-learning-databases/")


def test_zirakiza2013_splits_match_annex_a():
    with open(REPO / "experiments" / "zirakiza2013" / "published" / "annex_a_splits.csv") as fh:
        annex = {row["dataset"]: row for row in csv.DictReader(fh)}
    for name, row in annex.items():
        cfg = cfg_of(name)
        assert "zirakiza2013" in cfg["studies"]
        split = cfg["splits"]["zirakiza2013"]
        n, d = cfg["shape"]
        assert split["train"] == int(row["train"]) and d == int(row["n_features"]), name
        # test: the annex's size, or null (the rest) where the rest is the annex's size (letter pairs)
        assert split["test"] == int(row["test"]) or (split["test"] is None and n - split["train"] == int(row["test"]))


#: configs whose full load takes seconds (MNIST's 70,000 images as float64): run by `make test-full`
SLOW_LOADS = ("mnist",)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_LOADS else n
                                  for n in CONFIGS])
def test_config_loads_as_documented(name, mirror, cache):
    cfg = cfg_of(name)
    ds = load_dataset(cfg, data_dir=cache, mirror=mirror, download=False)
    assert isinstance(ds, Dataset) and ds.name == name
    assert (ds.n_samples, ds.n_features) == tuple(cfg["shape"])
    assert ds.X.dtype == np.float64 and ds.X.flags.c_contiguous and np.isfinite(ds.X).all()
    assert ds.y.dtype == np.int64 and ds.y.shape == (ds.n_samples,)
    assert len(ds.feature_names) == ds.n_features and ds.categorical.shape == (ds.n_features,)
    assert not ds.X.flags.writeable  # the in-process cache hands out the same arrays: nobody may change them
    listed = cfg.get("categorical")
    assert int(ds.categorical.sum()) == (ds.n_features if listed == "all" else len(listed or []))
    if ds.task == "binary":
        assert set(np.unique(ds.y)) == {-1, 1} and len(ds.classes) == 2
        if name in POSITIVES:
            assert int((ds.y == 1).sum()) == POSITIVES[name]
    else:
        assert np.bincount(ds.y).tolist() == CLASS_COUNTS[name]
        assert len(ds.classes) == len(CLASS_COUNTS[name])


def test_positive_classes_are_the_documented_ones(mirror, cache):
    def classes(name):
        return load_dataset(cfg_of(name), data_dir=cache, mirror=mirror, download=False).classes

    assert classes("wdbc") == ("B", "M") and classes("wdbc_sklearn") == ("benign", "malignant")
    assert classes("adult") == ("<=50K", ">50K")  # adult.test's "<=50K." labels lost their dot
    assert classes("letter_ab") == ("B", "A") and classes("mnist_08") == ("8", "0")
    assert classes("glass") == ("2|5|6|7", "1|3")
    assert classes("glass_float") == ("2|5|6|7", "1|3") and classes("glass_window") == ("5|6|7", "1|2|3")


def test_glass_readings(mirror, cache):
    """glass.yaml is the float-processed reading: glass_float loads the same arrays under its own name."""
    glass, float_, window = (load_dataset(cfg_of(n), data_dir=cache, mirror=mirror, download=False)
                             for n in ("glass", "glass_float", "glass_window"))
    np.testing.assert_array_equal(glass.X, float_.X)
    np.testing.assert_array_equal(glass.y, float_.y)
    np.testing.assert_array_equal(glass.X, window.X)
    assert float_.name == "glass_float" and window.name == "glass_window"
    assert cfg_of("glass_float")["splits"] == cfg_of("glass_window")["splits"] == cfg_of("glass")["splits"]


def test_sklearn_copy_of_wdbc_equals_the_uci_file(mirror, cache):
    uci = load_dataset(cfg_of("wdbc"), data_dir=cache, mirror=mirror, download=False)
    skl = load_dataset(cfg_of("wdbc_sklearn"), data_dir=cache)
    np.testing.assert_array_equal(uci.X, skl.X)
    np.testing.assert_array_equal(uci.y, skl.y)


def test_categorical_coding_choices(mirror, cache):
    ttt = load_dataset(cfg_of("tictactoe"), data_dir=cache, mirror=mirror, download=False)
    # first row of the file: x,x,x,x,o,o,x,o,o -> b=0 < o=1 < x=2
    assert ttt.X[0].tolist() == [2, 2, 2, 2, 1, 1, 2, 1, 1]
    votes = load_dataset(cfg_of("usvotes"), data_dir=cache, mirror=mirror, download=False)
    # first row: republican,n,y,n,y,y,y,n,n,n,y,?,y,y,y,n,y -> n=0, y=1, ?=2 (its own value, last)
    assert votes.X[0].tolist() == [0, 1, 0, 1, 1, 1, 0, 0, 0, 1, 2, 1, 1, 1, 0, 1]
    japanese = load_dataset(cfg_of("japanese"), data_dir=cache, mirror=mirror, download=False)
    a14 = japanese.feature_names.index("A14")
    assert not japanese.categorical[a14] and np.isfinite(japanese.X[:, a14]).all()


def test_loading_is_deterministic_and_cached(mirror, cache):
    cfg = cfg_of("adult")
    first = load_dataset(cfg, data_dir=cache, mirror=mirror, download=False)
    assert load_dataset(cfg, data_dir=cache, mirror=mirror, download=False) is first  # in-process cache
    clear_cache()
    second = load_dataset(cfg, data_dir=cache, mirror=mirror, download=False)
    assert second is not first
    np.testing.assert_array_equal(first.X, second.X)
    np.testing.assert_array_equal(first.y, second.y)
    assert first.feature_names == second.feature_names and first.classes == second.classes


def test_mirror_defaults_to_the_environment(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("FORESTLAB_DATA_MIRROR", str(mirror))
    ds = load_dataset(cfg_of("sonar"), data_dir=tmp_path, download=False)
    assert ds.n_samples == 208
    cached = tmp_path / "uci" / "sonar" / "sonar.all-data"
    assert cached.read_bytes() == (mirror / "uci" / "sonar" / "sonar.all-data").read_bytes()


def test_dataset_files():
    assert dataset_files(cfg_of("sonar")) == ["uci/sonar/sonar.all-data"]
    assert dataset_files(cfg_of("adult")) == ["uci/adult/adult.data", "uci/adult/adult.test"]
    assert len(dataset_files(cfg_of("vehicle"))) == 9
    assert dataset_files(cfg_of("mnist_17")) == ["mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz",
                                                 "mnist/train-labels-idx1-ubyte.gz",
                                                 "mnist/train-images-idx3-ubyte.gz"]
    assert dataset_files(cfg_of("ringnorm")) == [] and dataset_files(cfg_of("wdbc_sklearn")) == []


# ---------------------------------------------------------------------------------------------------------------
# Checksums, missing files, shapes
# ---------------------------------------------------------------------------------------------------------------
def test_corrupt_cached_file_is_rejected_and_kept(mirror, tmp_path):
    cached = tmp_path / "uci" / "sonar" / "sonar.all-data"
    data = _write_truncated(mirror / "uci" / "sonar" / "sonar.all-data", cached)
    actual = hashlib.sha256(data).hexdigest()
    with pytest.raises(DatasetError) as err:
        load_dataset(cfg_of("sonar"), data_dir=tmp_path, mirror=mirror, download=False)
    msg = str(err.value)
    assert str(cached) in msg and actual in msg and cfg_of("sonar")["source"]["files"][0]["sha256"] in msg
    assert "delete it" in msg.lower() and "\n" not in msg
    assert cached.read_bytes() == data  # neither used nor overwritten


def test_corrupt_mirror_file_is_rejected_and_not_copied(mirror, tmp_path):
    fake = tmp_path / "mirror"
    _write_truncated(mirror / "uci" / "sonar" / "sonar.all-data", fake / "uci" / "sonar" / "sonar.all-data")
    with pytest.raises(DatasetError, match=r"mirror's file .*sonar\.all-data does not match its checksum"):
        load_dataset(cfg_of("sonar"), data_dir=tmp_path / "cache", mirror=fake, download=False)
    assert not (tmp_path / "cache" / "uci" / "sonar" / "sonar.all-data").exists()


def test_corrupt_mnist_png_in_the_mirror_is_rejected(mirror, tmp_path):
    fake = tmp_path / "mirror"
    (fake / "mnist" / "convnetjs-train-png").mkdir(parents=True)
    for src in (mirror / "mnist").rglob("*"):
        if src.is_file() and src.name != "mnist_batch_7.png":
            (fake / src.relative_to(mirror)).symlink_to(src)
    png = "mnist/convnetjs-train-png/mnist_batch_7.png"
    _write_truncated(mirror / png, fake / png)
    with pytest.raises(DatasetError, match=r"mnist_batch_7\.png does not match its checksum"):
        load_dataset(cfg_of("mnist_08"), data_dir=tmp_path / "cache", mirror=fake, download=False)


def test_missing_files_give_one_clear_error(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DatasetError) as err:
        load_dataset(cfg_of("adult"), data_dir=tmp_path / "cache", mirror=empty, download=False)
    msg = str(err.value)
    assert "dataset 'adult'" in msg and "uci/adult/adult.data" in msg and "uci/adult/adult.test" in msg
    assert "FORESTLAB_DATA_MIRROR=DIR" in msg and "go online" in msg and "place the file" in msg
    assert "\n" not in msg


def test_missing_file_without_any_mirror(tmp_path, monkeypatch):
    monkeypatch.delenv("FORESTLAB_DATA_MIRROR", raising=False)
    with pytest.raises(DatasetError, match=r"no mirror set .*FORESTLAB_DATA_MIRROR=DIR.*sonar\.all-data"):
        load_dataset(cfg_of("sonar"), data_dir=tmp_path, download=False)


def test_failed_download_is_reported_with_the_two_ways(tmp_path):
    cfg = cfg_of("sonar")
    cfg["source"]["url"] = CLOSED_PORT
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DatasetError, match=r"download failed .*127\.0\.0\.1.*FORESTLAB_DATA_MIRROR=DIR"):
        load_dataset(cfg, data_dir=tmp_path / "cache", mirror=empty, download=True)
    assert not list((tmp_path / "cache").rglob("*.part"))  # no temporary file left behind


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output clean
        pass


@pytest.fixture
def local_server(tmp_path):
    """A web server on localhost serving ``tmp_path / "www"``: downloads without any outside network."""
    root = tmp_path / "www"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_download_is_verified_then_renamed_into_the_cache(mirror, tmp_path, local_server):
    root, url = local_server
    (root / "sonar.all-data").write_bytes((mirror / "uci" / "sonar" / "sonar.all-data").read_bytes())
    cfg = cfg_of("sonar")
    cfg["source"]["url"] = url
    empty = tmp_path / "empty"
    empty.mkdir()
    ds = load_dataset(cfg, data_dir=tmp_path / "cache", mirror=empty, download=True)
    assert ds.n_samples == 208
    cached = tmp_path / "cache" / "uci" / "sonar" / "sonar.all-data"
    assert cached.is_file() and (cached.stat().st_mode & 0o777) == 0o644


def test_corrupt_download_is_discarded_before_parsing(mirror, tmp_path, local_server):
    root, url = local_server
    _write_truncated(mirror / "uci" / "sonar" / "sonar.all-data", root / "sonar.all-data")
    cfg = cfg_of("sonar")
    cfg["source"]["url"] = url
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DatasetError, match=r"downloaded from http://127\.0\.0\.1.*sonar\.all-data has SHA-256 .*"
                                           r"discarded.*FORESTLAB_DATA_MIRROR=DIR"):
        load_dataset(cfg, data_dir=tmp_path / "cache", mirror=empty, download=True)
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]  # nothing kept, no .part file


def test_wrong_shape_is_rejected(mirror, tmp_path):
    cfg = cfg_of("sonar")
    cfg["shape"] = [208, 61]
    with pytest.raises(DatasetError, match=r"got shape 208 x 60 .* expects 208 x 61"):
        load_dataset(cfg, data_dir=tmp_path, mirror=mirror, download=False)


def test_verify_reports_instead_of_raising(mirror, tmp_path):
    ok = verify_dataset(cfg_of("sonar"), data_dir=tmp_path, mirror=mirror)
    assert ok["ok"] and ok["shape"] == (208, 60) and ok["files"] == ["uci/sonar/sonar.all-data"]
    assert ok["message"] == "R: 97, M: 111"
    cached = tmp_path / "uci" / "sonar" / "sonar.all-data"
    cached.write_bytes(cached.read_bytes()[:-1])
    bad = verify_dataset(cfg_of("sonar"), data_dir=tmp_path, mirror=mirror)
    assert not bad["ok"] and bad["shape"] is None and "SHA-256" in bad["message"]
    assert bad["files"] == ["uci/sonar/sonar.all-data"] and bad["name"] == "sonar"


@pytest.mark.parametrize("change, message", [
    ({"categorcal": ["a01"]}, "unknown key 'categorcal' in dataset .* did you mean 'categorical'"),
    ({"target": {"column": "class"}}, r"needs `target.positive`.*M, R"),
    ({"target": {"column": "class", "positive": "X"}}, r"none of which is a label"),
    ({"target": {"column": "klass", "positive": "M"}}, r"names column 'klass'"),
    ({"task": "regression"}, r"`task` must be binary or multiclass"),
])
def test_config_mistakes_are_one_line_errors(mirror, cache, change, message):
    cfg = {**cfg_of("sonar"), **change}
    with pytest.raises(DatasetError, match=message) as err:
        load_dataset(cfg, data_dir=cache, mirror=mirror, download=False)
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------------------------------------------------------
# MNIST: the PNG batches are the IDX training images
# ---------------------------------------------------------------------------------------------------------------
def test_png_batches_rebuild_the_idx_training_images(mnist_raw):
    images, labels = mnist_raw
    assert images.shape == (70000, 784) and images.dtype == np.uint8
    idx = _mnist.reconstructed_train_idx(images)
    assert len(idx) == 47040016
    assert hashlib.md5(idx).hexdigest() == "6bbc9ace898e44ae57da46a324031adb"  # noqa: S324 - the published md5
    assert labels[:10].tolist() == [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]  # first training labels
    assert labels[60000:60010].tolist() == [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]  # first test labels
    assert np.bincount(labels).tolist() == [6903, 7877, 6990, 7141, 6824, 6313, 6876, 7293, 6825, 6958]


def test_mnist_test_images_match_their_published_md5(mirror):
    raw = gzip.decompress((mirror / "mnist" / "t10k-images-idx3-ubyte.gz").read_bytes())
    assert hashlib.md5(raw).hexdigest() == "2646ac647ad5339dbf082846283269ea"  # noqa: S324
    images = _mnist.read_idx(raw, 0x803, 10000, "t10k")
    assert images.shape == (10000, 784)


def test_mnist_pair_is_the_pooled_digits(mnist_raw, mirror, cache):
    images, labels = mnist_raw
    ds = load_dataset(cfg_of("mnist_17"), data_dir=cache, mirror=mirror, download=False)
    mask = np.isin(labels, [1, 7])
    np.testing.assert_array_equal(ds.X, images[mask].astype(np.float64))
    np.testing.assert_array_equal(ds.y, np.where(labels[mask] == 1, 1, -1))
    assert ds.X.max() == 255 and ds.X.min() == 0


# ---------------------------------------------------------------------------------------------------------------
# Generated data
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("generate", [ringnorm, twonorm])
def test_generators_shape_balance_and_seed(generate):
    X, y = generate(4000, 20, random_state=3)
    assert X.shape == (4000, 20) and set(np.unique(y)) == {-1, 1}
    assert abs((y == 1).mean() - 0.5) < 4 * np.sqrt(0.25 / 4000)
    X2, y2 = generate(4000, 20, random_state=3)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(X, generate(4000, 20, random_state=4)[0])


def test_generators_follow_breiman():
    a = 2 / np.sqrt(20)
    X, y = ringnorm(20000, 20, random_state=0)
    pos, neg = X[y == 1], X[y == -1]
    assert np.allclose(pos.mean(axis=0), 0, atol=0.06) and np.allclose(pos.var(axis=0), 4, rtol=0.06)
    assert np.allclose(neg.mean(axis=0), a, atol=0.04) and np.allclose(neg.var(axis=0), 1, rtol=0.06)
    X, y = twonorm(20000, 20, random_state=0)
    assert np.allclose(X[y == 1].mean(axis=0), a, atol=0.04) and np.allclose(X[y == -1].mean(axis=0), -a, atol=0.04)


def test_synthetic_size_override_needs_the_shape_too(cache):
    cfg = cfg_of("ringnorm")
    cfg["source"]["n_samples"] = 300
    with pytest.raises(DatasetError, match=r"set `shape` to \[300, 20\]"):
        load_dataset(cfg, data_dir=cache)
    cfg["shape"] = [300, 20]
    assert load_dataset(cfg, data_dir=cache).n_samples == 300


# ---------------------------------------------------------------------------------------------------------------
# A user's own file, and OpenML without network
# ---------------------------------------------------------------------------------------------------------------
USER_CSV = "age,city,score,label\n31,Lyon,2.5,yes\n45,Paris,?,no\n27,Lyon,4.0,yes\n52,?,1.5,no\n38,Nice,3.0,no\n"


def _user_cfg(path: Path, **extra) -> dict:
    cfg = {"name": "mine", "task": "binary", "description": "my own data", "studies": [], "shape": [5, 3],
           "source": {"kind": "file", "path": str(path)}, "target": {"column": "label", "positive": "yes"},
           "missing": {"categorical": "category", "numeric": "median"}}
    cfg.update(extra)
    return cfg


def test_user_csv_file(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text(USER_CSV)
    ds = load_dataset(_user_cfg(path), data_dir=tmp_path)
    assert ds.feature_names == ("age", "city", "score") and ds.classes == ("no", "yes")
    assert ds.categorical.tolist() == [False, True, False]  # "city" holds words: categorical without being listed
    assert ds.y.tolist() == [1, -1, 1, -1, -1]
    assert ds.X[:, 1].tolist() == [0, 2, 0, 3, 1]  # Lyon 0 < Nice 1 < Paris 2; '?' its own code, 3
    assert ds.X[1, 2] == 2.75  # the median of 2.5, 4.0, 1.5, 3.0


def test_user_file_checksum_and_missing_policy(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text(USER_CSV)
    with pytest.raises(DatasetError, match=r"has SHA-256 .* expects 00"):
        load_dataset(_user_cfg(path, source={"kind": "file", "path": str(path), "sha256": "00" * 32}),
                     data_dir=tmp_path)
    with pytest.raises(DatasetError, match=r"numeric column 'score' has 1 missing values .*missing: \{numeric"):
        load_dataset(_user_cfg(path, missing={"categorical": "category"}), data_dir=tmp_path)
    with pytest.raises(DatasetError, match=r"does not exist"):
        load_dataset(_user_cfg(tmp_path / "nope.csv"), data_dir=tmp_path)


def test_user_arff_and_parquet_files(tmp_path):
    arff = tmp_path / "mine.arff"
    arff.write_text("@relation mine\n@attribute age numeric\n@attribute city {Lyon,Nice,Paris}\n"
                    "@attribute score numeric\n@attribute label {no,yes}\n@data\n"
                    "31,Lyon,2.5,yes\n45,Paris,?,no\n27,Lyon,4.0,yes\n52,?,1.5,no\n38,Nice,3.0,no\n")
    from_arff = load_dataset(_user_cfg(arff), data_dir=tmp_path)
    csv_path = tmp_path / "mine.csv"
    csv_path.write_text(USER_CSV)
    from_csv = load_dataset(_user_cfg(csv_path), data_dir=tmp_path)
    np.testing.assert_array_equal(from_arff.X, from_csv.X)
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"age": [31, 45, 27, 52, 38], "city": ["Lyon", "Paris", "Lyon", None, "Nice"],
                          "score": [2.5, None, 4.0, 1.5, 3.0], "label": ["yes", "no", "yes", "no", "no"]})
    frame.to_parquet(tmp_path / "mine.parquet")
    from_parquet = load_dataset(_user_cfg(tmp_path / "mine.parquet"), data_dir=tmp_path)
    np.testing.assert_array_equal(from_parquet.X, from_csv.X)
    np.testing.assert_array_equal(from_parquet.y, from_csv.y)


def test_openml_without_network_is_a_clean_error(tmp_path):
    cfg = {"name": "credit_g", "task": "binary", "source": {"kind": "openml", "id": 31},
           "target": {"positive": "good"}}
    with pytest.raises(DatasetError, match=r"not in the cache .* downloading is off"):
        load_dataset(cfg, data_dir=tmp_path, download=False)
    pytest.importorskip("openml")
    offline = {**cfg, "source": {**cfg["source"], "server": CLOSED_PORT + "api/v1/xml"}}
    with pytest.raises(DatasetError, match=r"cannot get OpenML dataset 31 .*need the network"):
        load_dataset(offline, data_dir=tmp_path, download=True)


@pytest.mark.network
def test_openml_download(tmp_path):  # pragma: no cover - needs the internet, never run in CI
    cfg = {"name": "credit_g", "task": "binary", "source": {"kind": "openml", "id": 31},
           "target": {"positive": "good"}, "shape": [1000, 20]}
    ds = load_dataset(cfg, data_dir=tmp_path)
    assert int((ds.y == 1).sum()) == 700


def test_unwritable_cache_serves_the_verified_mirror_file_in_place(mirror, tmp_path):
    (tmp_path / "uci").write_text("a file where the cache wants a folder")
    ds = load_dataset(cfg_of("sonar"), data_dir=tmp_path, mirror=mirror, download=False)
    assert ds.n_samples == 208 and (tmp_path / "uci").is_file()
