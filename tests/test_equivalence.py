"""Nothing changes that should not (issue 20, part 9): every table, comparison, claim verdict and report page
rendered from a fixed store is the same as the goldens rendered by the code before the refactor.

The store (tests/fixtures/equivalence/store: runs.sqlite + arrays/) holds real runs made by
tests/fixtures/equivalence/build.sh: quickstart at full size, and the experiments listed in experiments.txt at
smoke size. The test copies it to a temporary folder, renders through the public CLI (`forestlab figures`,
`tables`, `compare`, `report`, with and without debug=smoke; see tests/equivalence_goldens.py), normalises what
legitimately varies between renders (timestamps, durations, version, commit, machine, paths: one function,
``normalise``) and compares file by file with tests/fixtures/equivalence/golden/.

When an output changes on purpose (a defect fixed), regenerate the goldens deliberately and list the change in the
commit message:

    FORESTLAB_UPDATE_GOLDENS=1 python -m pytest tests/test_equivalence.py

Figures (PNG/PDF) are compared by their list of files (FILES.txt), not byte for byte.

Both sizes are slow tests (`make test-full`): the smoke size (279 files: every renderer the fixture's experiments
reach) runs four commands over eleven experiments, about a minute of a 2-core machine, the full size (quickstart at
full size, 21 files) more; `make test` keeps each renderer's own tests. Regenerating rewrites the goldens of each
size the run renders (the command above renders both).
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.equivalence_goldens import FIXTURE, diff_trees, render

STORE = FIXTURE / "store"
GOLDEN = FIXTURE / "golden"


def _mirror() -> str | None:
    from tests.conftest import mirror_path  # noqa: F401  (the suite's one rule for where the UCI mirror is)

    found = mirror_path()
    return str(found) if found is not None else None


UPDATE = os.environ.get("FORESTLAB_UPDATE_GOLDENS") == "1"


pytestmark = pytest.mark.slow  # long end to end: `make test-full`


@pytest.fixture(scope="module", params=["smoke", "full"])
def size(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory, size: str) -> Path:
    """The outputs of ``size`` under ``rendered / size``; with FORESTLAB_UPDATE_GOLDENS=1, copied over that size's
    goldens."""
    if not (STORE / "runs.sqlite").is_file():
        pytest.fail(f"the fixture store is missing: run {FIXTURE / 'build.sh'}")
    out = tmp_path_factory.mktemp("equivalence") / "now"
    # the report's rerun commands name the mirror when one is set, as FORESTLAB_DATA_MIRROR=<MIRROR> once
    # normalised: without one here (a machine without the data files), an empty folder stands in, so the outputs
    # do not depend on the machine (the rendering reads the store, never a data file)
    mirror = _mirror() or str(tmp_path_factory.mktemp("no-mirror"))
    env = {"FORESTLAB_DATA_MIRROR": mirror}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        render(STORE, out, python=sys.executable, sizes=(size,))
    if UPDATE:
        shutil.rmtree(GOLDEN / size, ignore_errors=True)
        shutil.copytree(out / size, GOLDEN / size)
    return out


def test_every_command_succeeds(rendered: Path, size: str) -> None:
    """Each command of the size exits 0 (a crash would otherwise only show as a diff of its error text)."""
    statuses = sorted(rendered.glob(f"{size}/stdout/*.txt"))
    assert statuses, f"nothing rendered for {size}"
    for status in statuses:
        first = status.read_text(encoding="utf-8").splitlines()[0]
        assert first == "exit 0", f"{status.relative_to(rendered)}: {status.read_text(encoding='utf-8')[-2000:]}"


def test_outputs_match_the_goldens(rendered: Path, size: str) -> None:
    """Every rendered file of the size equals its golden, after normalisation; none appears or disappears."""
    assert (GOLDEN / size).is_dir(), "no goldens: FORESTLAB_UPDATE_GOLDENS=1 python -m pytest tests/test_equivalence.py"
    diff = diff_trees(GOLDEN / size, rendered / size)
    assert not diff, ("the rendered outputs differ from tests/fixtures/equivalence/golden/ (if on purpose, "
                      "FORESTLAB_UPDATE_GOLDENS=1 python -m pytest tests/test_equivalence.py):\n" + diff)
