"""Render every output of a store through the public CLI, normalised, so two checkouts can be compared.

Used by tests/test_equivalence.py (the fixture store under tests/fixtures/equivalence/) and, as a script, by the
one-off check on a large store (issue 20, part 9):

    PYTHONPATH=<checkout> python tests/equivalence_goldens.py STORE OUT [--python PY]

renders STORE's outputs with the checkout on PYTHONPATH (the store is copied first: rendering never writes into
it) and writes the normalised text files under OUT (``OUT/<size>/<command output>``).

What is rendered, per size (``full``: no override; ``smoke``: ``debug=smoke``), in one reports folder per size and
in this order, as a user would: ``forestlab figures``, ``forestlab tables``, ``forestlab compare`` (its stdout, and
the compare.txt it writes beside the tables: the claims' verdicts) and ``forestlab report`` (the HTML pages and the
CSS). Figures and the report's CD diagrams (PNG/PDF) are not compared byte for byte: ``FILES.txt`` lists every
file written, so a figure that disappears or appears is caught. Each command's stdout and stderr are kept too
(``<size>/stdout/<command>.txt``) with its exit status.

:func:`normalise` is the one place that removes what legitimately varies between two renders of the same store.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "equivalence"
SIZES: dict[str, tuple[str, ...]] = {"full": (), "smoke": ("debug=smoke",)}
COMMANDS = ("figures", "tables", "compare", "report")
TEXT_SUFFIXES = {".md", ".csv", ".tex", ".txt", ".html", ".css", ".json"}

_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?( ?(UTC|Z|[+-]\d{2}:?\d{2}))?")
_DURATION = re.compile(r"(?P<pre>\b(in|took|after)\s+|\()\d+(\.\d+)?\s?(s|ms|min)\b")
_COMMIT = re.compile(r"commit [0-9a-f]{7,40}( \(\+ uncommitted changes\))?|commit unknown")
_ROW = r"(<tr><th>{}</th><td>)[^<]*(</td></tr>)"
_PACKAGES = re.compile(_ROW.format("(?:packages|packages of the build|package versions that ran them)"))
_COMMITS_ROW = re.compile(_ROW.format("forestlab commits that ran them"))  # hex commits with their run counts
_BUILT_ON = re.compile(r" on [^<\n]*\d+ CPUs")
_CONFIG_HASH = re.compile(r"\b([a-z0-9_]+) [0-9a-f]{12}\b")
_HASHES_ROW = re.compile(_ROW.format("config hashes").replace("[^<]*", "([^<]*)"))


def normalise(text: str, *, paths: Mapping[str, str] = ()) -> str:
    """``text`` without what varies between two renders of one store by two checkouts, and nothing else.

    Replaced: each absolute path in ``paths`` (the copied store, the reports folder, the repository) by its
    placeholder; local timestamps (YYYY-MM-DD HH:MM[:SS]) by <TIME> (they are printed in the machine's timezone);
    durations ("in 8.6 s", "(0.6s)") by <DURATION>; forestlab's version and git commit, the machine and the
    package versions of the report's provenance by <VERSION>, <COMMIT>, <MACHINE>, <PACKAGES> (an experiment's
    commits by <COMMITS>); the 12-hex config
    hashes of the provenance footer by <HASH> (the typed spec of issue 20 may compose the same experiment into a
    differently shaped config; the run keys, which decide the numbers, are not hashed there).
    """
    from forestlab import __version__

    for path, token in sorted(dict(paths).items(), key=lambda kv: -len(kv[0])):
        text = text.replace(path, token)
    text = _TIME.sub("<TIME>", text)
    text = _DURATION.sub(lambda m: f"{m.group('pre')}<DURATION>", text)
    text = _COMMIT.sub("commit <COMMIT>", text)
    text = _PACKAGES.sub(r"\1<PACKAGES>\2", text)
    text = _COMMITS_ROW.sub(r"\1<COMMITS>\2", text)
    text = _BUILT_ON.sub(" on <MACHINE>", text)
    text = _HASHES_ROW.sub(lambda m: m.group(1) + _CONFIG_HASH.sub(r"\1 <HASH>", m.group(2)) + m.group(3), text)
    text = re.sub(rf"(?<![\d.]){re.escape(__version__)}(?![\d.])", "<VERSION>", text)
    return text


def _env(store: Path, python_path: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORESTLAB_")}
    env.update({"FORESTLAB_RESULTS_DIR": str(store), "PYTHONPATH": python_path, "MPLBACKEND": "Agg",
                "FORESTLAB_LOG_FILE": "null", "TZ": env.get("TZ", "UTC")})
    if os.environ.get("FORESTLAB_DATA_MIRROR"):
        env["FORESTLAB_DATA_MIRROR"] = os.environ["FORESTLAB_DATA_MIRROR"]
    return env


def _render_size(size: str, store: Path, reports: Path, python: str, python_path: str) -> dict[str, str]:
    """Runs the commands of one size, in order, into ``reports``; returns {name: 'exit N' + output}."""
    env = _env(store, python_path)
    outputs = {}
    for command in COMMANDS:
        args = [python, "-m", "forestlab", command, *SIZES[size], f"paths.reports_dir={reports}",
                "paths.log_file=null"]
        res = subprocess.run(args, env=env, capture_output=True, text=True, cwd=python_path.split(os.pathsep)[0])
        outputs[command] = f"exit {res.returncode}\n-- stdout\n{res.stdout}-- stderr\n{res.stderr}"
    return outputs


def render(store: Path, out: Path, *, python: str = sys.executable, python_path: str | None = None,
           sizes: Sequence[str] | None = None) -> Path:
    """Copies ``store`` to a temporary folder, renders ``sizes`` (None: both) from the copy with the checkout on
    ``python_path`` (default: this repository), and writes the normalised outputs under ``out``; returns ``out``."""
    python_path = python_path or str(REPO)
    sizes = tuple(SIZES) if sizes is None else tuple(sizes)
    unknown = set(sizes) - set(SIZES)
    if unknown:
        raise ValueError(f"unknown sizes {sorted(unknown)}: {sorted(SIZES)}")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="forestlab-equiv-") as tmp:
        work = Path(tmp)
        copy = work / "store"
        shutil.copytree(store, copy, ignore=shutil.ignore_patterns("logs", "run.lock", "tables", "figures",
                                                                      "report", "report-smoke"))
        reports = {size: work / f"reports-{size}" for size in sizes}
        with ThreadPoolExecutor(max_workers=len(sizes)) as pool:  # the two sizes write to different folders
            futures = {size: pool.submit(_render_size, size, copy, reports[size], python, python_path)
                       for size in sizes}
            outputs = {size: f.result() for size, f in futures.items()}
        for size in sizes:
            paths = {str(reports[size]): "<REPORTS>", str(copy): "<STORE>", str(work): "<TMP>",
                     str(Path(python_path.split(os.pathsep)[0]).resolve()): "<REPO>", python: "<PYTHON>"}
            if os.environ.get("FORESTLAB_DATA_MIRROR"):  # in the rerun commands, as an absolute path
                paths[str(Path(os.environ["FORESTLAB_DATA_MIRROR"]).resolve())] = "<MIRROR>"
            dest = out / size
            if dest.exists():
                shutil.rmtree(dest)
            dest.mkdir(parents=True)
            for command, text in outputs[size].items():
                _write(dest / "stdout" / f"{command}.txt", normalise(text, paths=paths))
            listing = []
            for f in sorted(p for p in reports[size].rglob("*") if p.is_file()):
                rel = f.relative_to(reports[size])
                listing.append(rel.as_posix())
                # rendered text is compared; the site's stylesheet is the package's file copied as is (listed only)
                if f.suffix in TEXT_SUFFIXES and "assets" not in rel.parts:
                    _write(dest / rel, normalise(f.read_text(encoding="utf-8"), paths=paths))
            _write(dest / "FILES.txt", "".join(f"{p}\n" for p in listing))
    return out


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def read_tree(root: Path) -> dict[str, str]:
    """{relative path: text} of every file under ``root``."""
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*")) if p.is_file()}


def diff_trees(expected: Path, actual: Path, *, max_lines: int = 400) -> str:
    """A readable unified diff of two rendered trees ('' when they are the same)."""
    import difflib

    want, got = read_tree(expected), read_tree(actual)
    out: list[str] = []
    for name in sorted(set(want) - set(got)):
        out.append(f"missing (in the goldens, not rendered): {name}")
    for name in sorted(set(got) - set(want)):
        out.append(f"new (rendered, not in the goldens): {name}")
    for name in sorted(set(want) & set(got)):
        if want[name] != got[name]:
            # HTML pages are one long line each: split on tags so the diff points at the cell that changed
            a, b = (re.sub(r"(<(?:tr|p|li|h\d|div|table|details|figure)\b)", r"\n\1", t).splitlines(keepends=True)
                    for t in (want[name], got[name]))
            out.extend(line.rstrip("\n") for line in difflib.unified_diff(a, b, f"golden/{name}", f"now/{name}", n=1))
    if len(out) > max_lines:
        out = out[:max_lines] + [f"... ({len(out) - max_lines} more diff lines)"]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--python-path", default=os.environ.get("PYTHONPATH") or str(REPO),
                    help="the checkout whose code renders (default: $PYTHONPATH, else this repository)")
    args = ap.parse_args(argv)
    render(args.store, args.out, python=args.python, python_path=args.python_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
