"""forestlab: reproduce and extend tree-ensemble studies from the command line."""

from forestlab._version import __version__

__all__ = ["__version__", "read_results"]


def read_results(experiment: str, *overrides: str):  # -> forestlab.results.ExperimentResults
    """The stored results of an experiment, as ``forestlab tables EXPERIMENT OVERRIDES`` reads them; their
    ``.to_frame()`` is one row per run (metrics, parameters, seeds, dataset, algorithm, fold): see
    :func:`forestlab.report.read_results`."""
    from forestlab.report import read_results as read  # local: numpy, pandas and Hydra load only when asked for

    return read(experiment, *overrides)
