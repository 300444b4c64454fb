"""`make bench`: run every benchmark and write bench/results.json and bench/results.md.

    python tests/benchmarks/run.py --out bench [--only runner,forest]

With --only, the sections of the other benchmarks are kept from the previous results.json. The whole
reproduction (``reproduction``, about 45 min on 2 cores) runs only when named: ``make bench-reproduction``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

MODULES = {"runner": "bench_runner", "forest": "bench_forest", "pacbayes": "bench_pacbayes",
           "pacbayes_successors": "bench_pacbayes_successors", "kernel": "bench_kernel",
           "table1": "bench_table1", "ops": "bench_ops", "plan": "bench_plan",
           "treerank": "bench_treerank", "depecker": "bench_depecker", "ranksvm": "bench_ranksvm",
           "modern_rankers": "bench_modern_rankers", "modern_tests": "bench_modern_tests",
           "modern_experiments": "bench_modern_experiments",
           "svm_leafrank": "bench_svm_leafrank", "svm_workload": "bench_svm_workload",
           "heavy_learners": "bench_heavy_learners",
           "courses": "bench_courses", "cli": "bench_cli", "wu2021": "bench_wu2021",
           "report": "bench_report", "scaleout": "bench_scaleout", "reproduction": "bench_reproduction"}
#: Left out of a bare `make bench` (run with --only): the whole reproduction takes about 45 min on 2 cores.
ON_REQUEST = ("reproduction",)
DEFAULT = ",".join(name for name in MODULES if name not in ON_REQUEST)


def write(results: dict, out_dir: Path) -> None:
    """bench/results.json, and its sections as bench/results.md."""
    (out_dir / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [f"# forestlab benchmarks ({results['when']})", ""]
    for key, value in results.items():
        if isinstance(value, dict):
            lines.append(f"## {key}")
            lines += [f"- {k}: {v}" for k, v in value.items()]
            lines.append("")
    (out_dir / "results.md").write_text("\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="bench")
    parser.add_argument("--only", default=DEFAULT, help="comma-separated: " + ", ".join(MODULES)
                        + f" (default: all but {', '.join(ON_REQUEST)})")
    args = parser.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    # --only updates its sections of an earlier results.json and keeps the others.
    previous = out_dir / "results.json"
    results: dict = json.loads(previous.read_text()) if previous.is_file() and args.only != DEFAULT else {}
    results.update({"when": time.strftime("%Y-%m-%d %H:%M:%S"), "python": platform.python_version(),
                    "machine": platform.machine(), "processor": platform.processor()})
    for name in args.only.split(","):
        module = importlib.import_module(MODULES[name.strip()])
        t0 = time.perf_counter()
        module.run(results)
        print(f"{name}: {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    write(results, out_dir)
    print((out_dir / "results.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
