"""Read an experiment's runs back from the store, and aggregate them over seeds and folds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from omegaconf import DictConfig

from forestlab.config import resolve_path, to_container
from forestlab.errors import ConfigError
from forestlab.store import Store


@dataclass
class ExperimentResults:
    """The planned runs of one experiment and the records the store holds for them.

    ``runs`` has one row per *done* run with the columns key, dataset, algorithm, repetition, fold and one column
    per metric (NaN where a run did not measure it).
    """

    cfg: DictConfig
    store: Store
    planned: pd.DataFrame
    runs: pd.DataFrame
    _arrays: dict[str, dict[str, np.ndarray]] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return str(self.cfg.experiment.name)

    @property
    def study(self) -> str | None:
        return self.cfg.experiment.get("study")

    @cached_property
    def datasets(self) -> list[str]:
        return list(dict.fromkeys(self.planned["dataset"]))

    @cached_property
    def algorithms(self) -> list[str]:
        return list(dict.fromkeys(self.planned["algorithm"]))

    @property
    def results_dir(self) -> Path:
        return resolve_path(self.cfg.paths.results_dir)

    def arrays(self, key: str) -> dict[str, np.ndarray]:
        if key not in self._arrays:
            self._arrays[key] = self.store.load_arrays(key)
        return self._arrays[key]

    def values(self, algorithm: str, metric: str, dataset: str | None = None) -> pd.DataFrame:
        """Per-run values of a metric: columns dataset, repetition, fold, value."""
        df = self.runs[self.runs["algorithm"] == algorithm]
        if dataset is not None:
            df = df[df["dataset"] == dataset]
        col = df[metric] if metric in df.columns else pd.Series(np.nan, index=df.index)
        return pd.DataFrame({"dataset": df["dataset"], "repetition": df["repetition"], "fold": df["fold"],
                             "key": df["key"], "value": col.astype(float)})

    def curve(self, algorithm: str, name: str, dataset: str) -> np.ndarray:
        """Stacked curves of one dataset, shape (n_runs, n_trees) (empty if none stored)."""
        keys = self.runs[(self.runs["algorithm"] == algorithm) & (self.runs["dataset"] == dataset)]["key"]
        curves = [self.arrays(k)[name] for k in keys if name in self.arrays(k)]
        if not curves:
            return np.empty((0, 0))
        n = min(len(c) for c in curves)
        return np.vstack([np.asarray(c[:n], dtype=float) for c in curves])

    def cell_values(self, cell: Mapping[str, Any], dataset: str) -> np.ndarray:
        """Per-run values of one table cell: a stored metric, or a curve read at a number of trees."""
        algorithm = str(cell["algorithm"])
        if "metric" in cell:
            return self.values(algorithm, str(cell["metric"]), dataset)["value"].to_numpy()
        if "curve" in cell:
            curves = self.curve(algorithm, str(cell["curve"]), dataset)
            at = int(cell["at"])
            if curves.size == 0 or curves.shape[1] < at:
                return np.empty(0)
            return curves[:, at - 1]
        raise ConfigError(f"table cell {dict(cell)} needs a 'metric' or a 'curve' with 'at'")


def cell_label(cell: Mapping[str, Any]) -> str:
    if "metric" in cell:
        return f"{cell['algorithm']} {cell['metric']}"
    return f"{cell['algorithm']} {cell['curve']}@{cell['at']}"


def load_results(cfg: DictConfig) -> ExperimentResults:
    """Plan the experiment and read its done runs from the store (readonly)."""
    from forestlab.runner import plan

    specs = plan(cfg)
    planned = pd.DataFrame([{"key": s.key, "dataset": s.dataset, "algorithm": s.algorithm,
                             "repetition": s.repetition, "fold": s.fold} for s in specs],
                           columns=["key", "dataset", "algorithm", "repetition", "fold"])
    store = Store(resolve_path(cfg.paths.results_dir), readonly=True)
    try:
        records = store.records(planned["key"].tolist())
    finally:
        store.close()  # what reports need afterwards (the arrays) are files; a long-lived reader would see stale pages
    records = records[records["status"] == "done"]
    # selected hyperparameters (SORF's c, MinCq's mu) read like metrics; a metric of the same name wins
    selected = [{k: float(v) for k, v in (sel or {}).items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
                for sel in records["selected"]] if "selected" in records else [{} for _ in range(len(records))]
    metrics = pd.DataFrame([{**sel, **met} for sel, met in zip(selected, records["metrics"], strict=True)],
                           index=records.index)
    runs = pd.concat([records[["key", "dataset", "algorithm", "repetition", "fold"]], metrics], axis=1)
    return ExperimentResults(cfg=cfg, store=store, planned=planned, runs=runs.reset_index(drop=True))


def summarise(values: np.ndarray) -> tuple[float, float, int]:
    """Mean, sample standard deviation (0 for one value) and count of the finite values."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan"), 0
    std = float(v.std(ddof=1)) if v.size > 1 else 0.0
    return float(v.mean()), std, int(v.size)


def tables_spec(cfg: DictConfig) -> list[dict[str, Any]]:
    return [dict(t) for t in to_container(cfg.experiment.get("tables") or [])]


def figures_spec(cfg: DictConfig) -> list[dict[str, Any]]:
    return [dict(f) for f in to_container(cfg.experiment.get("figures") or [])]
