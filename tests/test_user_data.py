"""A user's data file (``source.kind: file``) is read as written, or refused with one line that names the file.

Each case of data/README.md "What forestlab refuses": a numeric column with non-numeric cells, non-finite numbers,
byte-order marks, unmapped binary labels, datasets too small to learn from, and dataset config files that are empty
or whose ``name:`` is not their file name. No network, no mirror: small files written in ``tmp_path``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from forestlab.datasets import clear_cache, load_dataset
from forestlab.datasets._base import MIN_ROWS_PER_CLASS
from forestlab.datasets._load import check_name_matches_file
from forestlab.errors import DatasetError

GOOD = "age,score,label\n31,2.5,yes\n45,1.0,no\n27,4.0,yes\n52,1.5,no\n38,3.0,no\n"


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_cache()  # the in-process cache is keyed by the config: files rewritten under one path must be re-read
    yield
    clear_cache()


def _cfg(path: Path, **extra) -> dict:
    cfg = {"name": "mine", "task": "binary", "description": "my own data", "studies": [],
           "source": {"kind": "file", "path": str(path)}, "target": {"column": "label", "positive": "yes"}}
    cfg.update(extra)
    return cfg


def _write(tmp_path: Path, text: str, name: str = "mine.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _refused(cfg: dict, tmp_path: Path, pattern: str) -> str:
    """Load ``cfg``, expect one single-line DatasetError matching ``pattern``; return its message."""
    with pytest.raises(DatasetError, match=pattern) as err:
        load_dataset(cfg, data_dir=tmp_path)
    message = str(err.value)
    assert "\n" not in message
    return message


# ---------------------------------------------------------------------------------------------------------------
# A numeric column with a few non-numeric cells
# ---------------------------------------------------------------------------------------------------------------
MIXED = "age,score,label\n31,2.5,yes\n45,n/a2,no\n27,4.0,yes\n52,twelve,no\n38,3.0,no\n"


def test_numeric_column_with_text_cells_is_refused_with_column_lines_and_values(tmp_path):
    path = _write(tmp_path, MIXED)
    message = _refused(_cfg(path), tmp_path, r"column 'score' of mine\.csv has 2 non-numeric cells")
    assert "line 3: 'n/a2'" in message and "line 5: 'twelve'" in message  # the header is line 1
    assert "its other 3 cells are numbers" in message and "`categorical:`" in message


def test_a_declared_missing_marker_or_a_categorical_column_is_accepted(tmp_path):
    path = _write(tmp_path, MIXED)
    declared = load_dataset(_cfg(path, parse={"na_values": ["n/a2", "twelve"]}, missing={"numeric": "median"}),
                            data_dir=tmp_path)
    assert not declared.categorical[1] and declared.X[:, 1].tolist() == [2.5, 3.0, 4.0, 3.0, 3.0]
    listed = load_dataset(_cfg(path, categorical=["score"]), data_dir=tmp_path)
    # declared nominal: codes in (string) sorted order of the values: "2.5" < "3" < "4" < "n/a2" < "twelve"
    assert listed.categorical.tolist() == [False, True]
    assert listed.X[:, 1].tolist() == [0, 3, 2, 4, 1]


def test_a_text_column_is_still_categorical(tmp_path):
    # words only, "Inf" and "Nan" among them (names, not numbers): categories, as documented
    path = _write(tmp_path, "name,label\nNan,yes\nBob,no\nAl,yes\nInf,no\n")
    ds = load_dataset(_cfg(path), data_dir=tmp_path)
    assert ds.categorical.tolist() == [True] and ds.X[:, 0].tolist() == [3, 1, 0, 2]  # Al < Bob < Inf < Nan


def test_the_numeric_check_only_reads_the_rows_kept(tmp_path):
    # the bad cell is in a row whose label is neither positive nor negative: that row is not part of the data
    path = _write(tmp_path, "x,label\n1,a\n2,b\noops,c\n3,a\n4,b\n")
    ds = load_dataset(_cfg(path, target={"column": "label", "positive": "a", "negative": "b"}), data_dir=tmp_path)
    assert ds.X[:, 0].tolist() == [1, 2, 3, 4]


# ---------------------------------------------------------------------------------------------------------------
# Non-finite numbers
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("token", ["inf", "-inf", "Infinity"])
def test_infinite_numbers_are_refused(tmp_path, token):
    path = _write(tmp_path, GOOD.replace("1.0", token))
    message = _refused(_cfg(path), tmp_path, r"column 'score' of mine\.csv has 1 non-finite number")
    assert f"line 3: {token!r}" in message


def test_nan_is_missing_only_where_declared(tmp_path):
    path = _write(tmp_path, GOOD.replace("1.0", "nan"))
    # the default markers of a user's file include nan: a missing value, then the `missing` policy applies
    _refused(_cfg(path), tmp_path, r"numeric column 'score' has 1 missing values .* in mine\.csv")
    assert load_dataset(_cfg(path, missing={"numeric": "median"}), data_dir=tmp_path).X[1, 1] == 2.75
    # declared markers without nan: a non-finite number, refused
    message = _refused(_cfg(path, parse={"na_values": ["?"]}), tmp_path, r"has 1 non-finite number")
    assert "line 3: 'nan'" in message


def test_parquet_infinity_and_nan(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"age": [31, 45, 27, 52], "score": [2.5, np.inf, 4.0, 1.5], "label": ["yes", "no"] * 2})
    frame.to_parquet(tmp_path / "mine.parquet")
    message = _refused(_cfg(tmp_path / "mine.parquet"), tmp_path, r"column 'score' of mine\.parquet has 1 non-finite")
    assert "row 2: inf" in message
    frame["score"] = [2.5, np.nan, 4.0, 1.5]  # NaN is Parquet's missing value: the `missing` policy decides
    frame.to_parquet(tmp_path / "mine.parquet")
    _refused(_cfg(tmp_path / "mine.parquet"), tmp_path, r"numeric column 'score' has 1 missing values \(NaN or null\)")
    ds = load_dataset(_cfg(tmp_path / "mine.parquet", missing={"numeric": "median"}), data_dir=tmp_path)
    assert ds.X[1, 1] == 2.5


# ---------------------------------------------------------------------------------------------------------------
# Byte-order marks
# ---------------------------------------------------------------------------------------------------------------
def test_utf8_bom_is_removed_and_never_hides_the_first_column(tmp_path):
    plain = load_dataset(_cfg(_write(tmp_path, "label,age\nyes,31\nno,45\nyes,27\nno,52\n", "plain.csv")),
                         data_dir=tmp_path)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + (tmp_path / "plain.csv").read_bytes())
    ds = load_dataset(_cfg(bom), data_dir=tmp_path)  # the target is the first column: found
    np.testing.assert_array_equal(ds.X, plain.X)
    np.testing.assert_array_equal(ds.y, plain.y)
    assert ds.feature_names == ("age",)


def test_utf8_bom_before_a_first_value_or_a_comment(tmp_path):
    no_header = tmp_path / "rows.csv"
    no_header.write_bytes(b"\xef\xbb\xbf31,yes\n45,no\n27,yes\n52,no\n")
    ds = load_dataset(_cfg(no_header, columns=["age", "label"]), data_dir=tmp_path)
    assert not ds.categorical[0] and ds.X[:, 0].tolist() == [31, 45, 27, 52]  # 31 stays a number
    commented = tmp_path / "commented.csv"
    commented.write_bytes(b"\xef\xbb\xbf# exported\nage,label\n31,yes\n45,no\n27,yes\n52,no\n")
    ds = load_dataset(_cfg(commented, parse={"comment": "#", "header": True}), data_dir=tmp_path)
    assert ds.feature_names == ("age",) and ds.n_samples == 4


def test_utf8_bom_in_an_arff_file(tmp_path):
    arff = tmp_path / "mine.arff"
    arff.write_bytes(b"\xef\xbb\xbf@relation mine\n@attribute age numeric\n@attribute label {no,yes}\n@data\n"
                     b"31,yes\n45,no\n27,yes\n52,no\n")
    assert load_dataset(_cfg(arff), data_dir=tmp_path).X[:, 0].tolist() == [31, 45, 27, 52]


def test_other_byte_order_marks_are_refused(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_bytes("label,age\nyes,31\nno,45\n".encode("utf-16"))
    _refused(_cfg(path), tmp_path, r"mine\.csv is UTF-16 LE text .* save it as UTF-8")


def test_invisible_characters_in_column_names_are_shown(tmp_path):
    path = _write(tmp_path, "age,lab\u00a0el\n31,yes\n45,no\n")
    message = _refused(_cfg(path), tmp_path, r"names column 'label', which mine\.csv does not have")
    assert r"'lab\xa0el'" in message


# ---------------------------------------------------------------------------------------------------------------
# Labels: more classes than the task allows, too few rows
# ---------------------------------------------------------------------------------------------------------------
THREE = "age,label\n1,yes\n2,no\n3,maybe\n4,yes\n5,no\n6,maybe\n"


def test_binary_task_with_three_labels_needs_the_mapping_spelled_out(tmp_path):
    path = _write(tmp_path, THREE)
    message = _refused(_cfg(path), tmp_path, r"column 'label' of mine\.csv has 3 labels but the task is binary")
    assert "(maybe, no)" in message and "`target.negative`" in message
    kept = load_dataset(_cfg(path, target={"column": "label", "positive": "yes", "negative": "no"}),
                        data_dir=tmp_path)
    assert kept.X[:, 0].tolist() == [1, 2, 4, 5] and kept.classes == ("no", "yes")
    grouped = load_dataset(_cfg(path, target={"column": "label", "positive": ["yes", "maybe"]}), data_dir=tmp_path)
    assert grouped.y.tolist() == [1, -1, 1, 1, -1, 1] and grouped.classes == ("no", "yes|maybe")
    multi = load_dataset(_cfg(path, task="multiclass", target={"column": "label"}), data_dir=tmp_path)
    assert multi.classes == ("maybe", "no", "yes")


def test_one_class_target_is_refused(tmp_path):
    path = _write(tmp_path, "age,label\n1,yes\n2,yes\n3,yes\n")
    _refused(_cfg(path), tmp_path, r"too small to learn from: all 3 rows of mine\.csv are of one class \('yes', \+1\)")


def test_too_few_rows_per_class_are_refused(tmp_path):
    assert MIN_ROWS_PER_CLASS == 2
    path = _write(tmp_path, "age,label\n1,yes\n2,no\n3,no\n")
    message = _refused(_cfg(path), tmp_path, r"too small to learn from: 3 rows of mine\.csv")
    assert "'yes': 1 row" in message
    path = _write(tmp_path, "age,label\n1,yes\n2,no\n3,no\n4,yes\n")  # 2 per class: enough
    assert load_dataset(_cfg(path), data_dir=tmp_path).n_samples == 4


def test_rows_dropped_for_missing_values_count(tmp_path):
    path = _write(tmp_path, "age,label\n1,yes\n?,yes\n2,no\n3,no\n")
    _refused(_cfg(path, missing="drop"), tmp_path, r"3 rows of mine\.csv after preprocessing.*'yes': 1 row")


def test_multiclass_class_with_one_row_or_none(tmp_path):
    path = _write(tmp_path, "age,label\n1,a\n2,a\n3,b\n4,b\n5,c\n")
    _refused(_cfg(path, task="multiclass", target={"column": "label"}), tmp_path, r"'c': 1 row")
    path = _write(tmp_path, "age,label\n1,a\n2,a\n3,b\n4,b\n")
    _refused(_cfg(path, task="multiclass", target={"column": "label", "classes": ["a", "b", "c"]}), tmp_path,
             r"'c': 0 rows")


# ---------------------------------------------------------------------------------------------------------------
# The config file itself
# ---------------------------------------------------------------------------------------------------------------
def _yaml(tmp_path: Path, stem: str, text: str) -> tuple[object, Path]:
    path = tmp_path / "conf" / "dataset" / f"{stem}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return OmegaConf.load(path), path


def test_config_name_must_match_its_file_name(tmp_path):
    node, path = _yaml(tmp_path, "glass2", "name: glass\ntask: binary\n")
    with pytest.raises(DatasetError, match=r"glass2\.yaml says `name: glass` but its file name is 'glass2'") as err:
        check_name_matches_file(node, path)
    assert "\n" not in str(err.value)
    node, path = _yaml(tmp_path, "glass2", "name: glass2\ntask: binary\n")
    check_name_matches_file(node, path)  # no error
    check_name_matches_file({"name": "glass2"}, str(path))  # a plain dict and a str path work too


@pytest.mark.parametrize("text", ["", "# only a comment\n"])
def test_empty_config_file_is_refused(tmp_path, text):
    node, path = _yaml(tmp_path, "mine", text)
    with pytest.raises(DatasetError, match=r"mine\.yaml is empty: a dataset config needs at least `name: mine`"):
        check_name_matches_file(node, path)
    with pytest.raises(DatasetError, match=r"mine\.yaml is empty"):
        check_name_matches_file(None, path)
    with pytest.raises(DatasetError, match=r"the dataset config is empty"):
        load_dataset({}, data_dir=tmp_path)


def test_config_without_name_or_not_a_mapping(tmp_path):
    node, path = _yaml(tmp_path, "mine", "task: binary\n")
    with pytest.raises(DatasetError, match=r"mine\.yaml has no `name:`; add `name: mine`"):
        check_name_matches_file(node, path)
    with pytest.raises(DatasetError, match=r"mine\.yaml must hold a mapping"):
        check_name_matches_file(["name", "mine"], path)


def test_registered_configs_are_named_after_their_files():
    from forestlab.config import conf_dir, group_options, load_group_option

    for name in group_options("dataset"):
        check_name_matches_file(load_group_option("dataset", name), conf_dir() / "dataset" / f"{name}.yaml")
