"""Shared fixtures: the dataset mirror, an isolated results/data folder, a CLI runner, and the small generated
problems several learners' tests share."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

#: The OpenBLAS kernels under which the suite's bit-pinned numbers were computed. OpenBLAS picks its kernels by CPU
#: (Haswell's on an AVX2 machine, SkylakeX's on an AVX-512 one, ...), and kernels sum in other orders: the same code
#: gives other last bits (MinCq's test AUC on quickstart's first split: 0.965338 under Haswell's, 0.959874 under
#: Sandybridge's, on one machine; 0.965606 on the machines it was first pinned on, before 2026-11-27, whose kernels
#: or packages differed from this one's). Tests, and the forestlab commands they start, use Haswell's on every x86-64
#: machine that can run them (AVX2 and FMA), so a pinned number checks the code, not the CPU.
REFERENCE_BLAS = "Haswell"


def _cpu_flags() -> set[str]:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return set()
    try:
        return set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return set()


def _is_avx512_target(target: str) -> bool:
    """One of numpy's AVX-512 dispatch targets (X86_V4, AVX512_*; their names differ between numpy versions)."""
    return target == "X86_V4" or target.startswith("AVX512")


def _numpy_avx512_targets() -> str:
    """numpy's own AVX-512 code paths, read from numpy in a child process: this one must not load numpy before the
    environment says which paths to leave out."""
    code = ("try:\n    from numpy._core._multiarray_umath import __cpu_dispatch__ as targets\n"
            "except ImportError:\n    from numpy.core._multiarray_umath import __cpu_dispatch__ as targets\n"
            "print(' '.join(targets))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return " ".join(t for t in done.stdout.split() if _is_avx512_target(t)) if done.returncode == 0 else ""


_CPU_FLAGS = _cpu_flags()
CAN_RUN_REFERENCE_BLAS = {"avx2", "fma"} <= _CPU_FLAGS
if CAN_RUN_REFERENCE_BLAS:  # before numpy and scipy load their OpenBLAS (read at load time, inherited by children)
    os.environ.setdefault("OPENBLAS_CORETYPE", REFERENCE_BLAS)
    # numpy picks its own loops by CPU too: on an AVX-512 machine its exp (the RBF kernels) and other loops take
    # AVX-512 paths whose last bits differ from the AVX2 ones the pinned numbers were computed with (RankRLS's and
    # RankSVM's test scores in test_inner_cv_numbers, on 2026-11-27's AVX-512 EPYC); the tests leave those paths out
    if "avx512f" in _CPU_FLAGS and "NPY_DISABLE_CPU_FEATURES" not in os.environ:
        os.environ["NPY_DISABLE_CPU_FEATURES"] = _numpy_avx512_targets()

import pytest  # noqa: E402

import forestlab.studies  # noqa: E402, F401 - the studies' plug-ins (their figure kinds), loaded as the CLI loads them


def blas_kernels() -> set[str]:
    """The kernels of the BLAS libraries numpy and scipy loaded (threadpoolctl's ``architecture``)."""
    import scipy.linalg  # noqa: F401 - loads scipy's own OpenBLAS
    from threadpoolctl import threadpool_info

    return {str(i.get("architecture")) for i in threadpool_info() if i.get("user_api") == "blas"}


def numpy_avx512_on() -> list[str]:
    """numpy's AVX-512 dispatch targets that this process's numpy uses."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    return [t for t in __cpu_dispatch__ if _is_avx512_target(t) and __cpu_features__.get(t)]


def pinned_blas(test):
    """Mark a test whose expected numbers are pinned bit for bit under :data:`REFERENCE_BLAS` and numpy's AVX2 loops:
    skipped on a machine that cannot run those kernels (not x86-64 with AVX2); where it can, they must be the ones
    loaded (and numpy's AVX-512 loops left out)."""
    if not CAN_RUN_REFERENCE_BLAS:
        return pytest.mark.skip(reason=f"numbers pinned under OpenBLAS's {REFERENCE_BLAS} kernels, which this "
                                       "machine cannot run (x86-64 with AVX2 and FMA)")(test)
    return pytest.mark.usefixtures("reference_blas")(test)


@pytest.fixture(scope="session")
def reference_blas() -> None:
    kernels = blas_kernels()
    assert kernels == {REFERENCE_BLAS}, (
        f"BLAS kernels {sorted(kernels)}, not {REFERENCE_BLAS}: numpy was loaded before tests/conftest.py set "
        f"OPENBLAS_CORETYPE={REFERENCE_BLAS} (set it in the environment), or OPENBLAS_CORETYPE names another")
    simd_on = numpy_avx512_on()
    assert not simd_on, (
        f"numpy's AVX-512 loops {simd_on} are on: numpy was loaded before tests/conftest.py set "
        "NPY_DISABLE_CPU_FEATURES (set it in the environment to the names it lists)")


REPO = Path(__file__).resolve().parents[1]
DEFAULT_MIRROR = REPO.parent / "shared" / "datasets"


def mirror_path() -> Path | None:
    env = os.environ.get("FORESTLAB_DATA_MIRROR")
    path = Path(env).resolve() if env else DEFAULT_MIRROR
    return path if path.is_dir() else None


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The dataset mirror (``FORESTLAB_DATA_MIRROR`` or ../shared/datasets); tests that need it skip without it."""
    path = mirror_path()
    if path is None:
        pytest.skip("no dataset mirror: set FORESTLAB_DATA_MIRROR to a folder laid out like ../shared/datasets")
    return path


@pytest.fixture(scope="session")
def shared_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One dataset cache for the whole session, so parsed datasets are reused across tests."""
    return tmp_path_factory.mktemp("data")


@pytest.fixture(autouse=True)
def _forestlab_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line's caches (forestlab.config.experiment_facts, the p-value memo) in the session's
    temporary folder, never the user's ~/.cache; one for the session: its keys hold what each entry depends on."""
    monkeypatch.setenv("FORESTLAB_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "forestlab-cache"))


@pytest.fixture
def workdir(tmp_path: Path, shared_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated results folder (and the session's data cache), set through forestlab's environment variables."""
    results = tmp_path / "results"
    monkeypatch.setenv("FORESTLAB_RESULTS_DIR", str(results))
    monkeypatch.setenv("FORESTLAB_DATA_DIR", str(shared_data_dir))
    mp = mirror_path()
    if mp is not None:
        monkeypatch.setenv("FORESTLAB_DATA_MIRROR", str(mp))
    else:
        monkeypatch.delenv("FORESTLAB_DATA_MIRROR", raising=False)
    return tmp_path


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 600,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m forestlab ARGS`` in a subprocess (the real entry point, real exit codes)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "forestlab", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, cwd=cwd or REPO)


def count_done(db: Path) -> int:
    """Done runs in a store that another process may be writing (0 while it does not exist yet)."""
    import sqlite3

    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db, timeout=30)
        n = con.execute("SELECT COUNT(*) FROM runs WHERE status='done'").fetchone()[0]
        con.close()
        return n
    except sqlite3.OperationalError:
        return 0


FAILING_LEARNER = '''
"""A test-only learner whose every fit fails (a run that fails inside the learner, after the config is valid)."""
from forestlab.learners import BreimanForestClassifier, register


class FailingForest(BreimanForestClassifier):
    def fit(self, X, y):
        raise ValueError("deliberate failure of the test-only 'failing' learner")


register("failing", FailingForest, task="classifier")
'''


@pytest.fixture
def failing_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An algorithm ``failing`` whose runs always fail: a copy of conf/ with ``algorithm/failing.yaml``, the learner
    registered in this process, and (through a sitecustomize on PYTHONPATH, in the returned environment) in every
    forestlab process and loky worker started with it."""
    conf = tmp_path / "conf-failing"
    shutil.copytree(REPO / "conf", conf)
    (conf / "algorithm" / "failing.yaml").write_text(
        "name: failing\nestimator: failing\nseed_tag: failing\nparams: {n_estimators: 5}\ngrid: {}\n")
    site = tmp_path / "site-failing"
    site.mkdir()
    (site / "failing_learner.py").write_text(FAILING_LEARNER)
    (site / "sitecustomize.py").write_text("import failing_learner  # noqa: F401\n")
    namespace: dict[str, object] = {}
    exec(compile(FAILING_LEARNER, "failing_learner.py", "exec"), namespace)  # registers it in this process
    from forestlab.learners import REGISTRY

    monkeypatch.setitem(REGISTRY, "failing", REGISTRY.pop("failing"))  # the same entry, removed after the test
    monkeypatch.setenv("FORESTLAB_CONF_DIR", str(conf))
    return {"FORESTLAB_CONF_DIR": str(conf),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


@pytest.fixture(scope="session")
def multi_data():
    """A 4-class problem (10 features, 10% of labels flipped): 200 training and 100 test points."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=300, n_features=10, n_informative=6, n_classes=4, n_clusters_per_class=1,
                               flip_y=0.1, random_state=1)
    return X[:200], y[:200], X[200:], y[200:]


def shifted_samples(seed: int, n_a: int = 100, n_b: int = 100, q: int = 3, shift: float = 0.0):
    """Two Gaussian samples for the two-sample tests: ``n_a`` points of N(shift, I_q) and ``n_b`` of N(0, I_q)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng.normal(shift, 1.0, (n_a, q)), rng.normal(0.0, 1.0, (n_b, q))
