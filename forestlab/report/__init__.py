"""Reports from the store: tables, figures, and the comparison with the published numbers.

Reports read only the store (:func:`forestlab.results.load_results`): which runs belong to an experiment (the plan
``forestlab run`` recorded), their values and arrays. They never plan runs, load a dataset or compose another
experiment, and they work on a results folder they cannot write to (their output goes to ``paths.reports_dir``).
No module here knows a study by name: what is specific to a study lives in :mod:`forestlab.studies`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from forestlab.config import is_registered, load_experiment, resolve_path
from forestlab.experiment import Experiment
from forestlab.report.compare import compare_experiment
from forestlab.report.figures import render_figures
from forestlab.report.tables import render_tables
from forestlab.results import ExperimentResults, load_results

__all__ = ["compare_experiment", "experiment_results", "output_dir", "read_results", "render_figures",
           "render_tables"]


def experiment_results(experiment: Experiment) -> ExperimentResults:
    """The stored results of a resolved experiment (read only); one of your own (``experiment.name=``, not in
    ``conf/experiment/``) is marked so (:attr:`ExperimentResults.named`). For shrunk runs (debug=smoke), the titles
    of its tables and figures say the sizes the runs had (:func:`forestlab.report.model.shrunk_spec`)."""
    res = load_results(experiment, resolve_path(experiment.paths.results_dir), metrics=experiment.metrics,
                       named=not is_registered(experiment.name))
    if experiment.shrunk is None:
        return res
    from forestlab.report.model import shrunk_spec

    return replace(res, spec=shrunk_spec(res.spec, experiment.shrunk, experiment.limits.as_dict(), res.seeds))


def read_results(experiment: str, *overrides: str) -> ExperimentResults:
    """The stored results of experiment ``experiment`` (registered in ``conf/experiment/``, or one of your own named
    by ``experiment.name=``), composed with ``overrides`` as ``forestlab tables NAME OVERRIDES`` reads them:
    ``read_results("mine").to_frame()`` is its runs as a DataFrame (:meth:`ExperimentResults.to_frame`).
    ``forestlab.read_results`` is this function."""
    return experiment_results(load_experiment([f"experiment={experiment}", *overrides]))


def output_dir(experiment: Experiment, kind: str) -> Path:
    """``<reports_dir>/<kind>/<experiment>`` (``<experiment>-<label>`` for shrunk runs, ``-smoke`` for
    ``debug=smoke``'s: they never overwrite the experiment's own tables and figures)."""
    root = resolve_path(experiment.paths.reports_root)
    shrunk = experiment.shrunk
    return root / kind / (experiment.name if shrunk is None else f"{experiment.name}-{shrunk.label}")
