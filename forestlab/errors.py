"""User-facing errors.

Every error a user can cause (an unknown name, a bad override, a missing or corrupt file, a solver that fails) is
raised as a :class:`ForestlabError` whose message is complete on its own: the CLI prints it on one line and exits
with status 2, without a traceback.
"""

from __future__ import annotations

import enum


class ForestlabError(Exception):
    """An error caused by the user's input or environment, with a message that says how to fix it."""


class ConfigError(ForestlabError):
    """A config name, key or value is invalid."""


class DatasetError(ForestlabError):
    """A dataset cannot be had, or its file is corrupt or of the wrong shape."""


class StoreError(ForestlabError):
    """The result store cannot be opened or written."""


class StoreBusy(StoreError):
    """Another ``forestlab run`` holds the store's run lock, and the caller asked not to wait for it."""


class SolverError(ForestlabError):
    """A learner's optimisation (a quadratic program, a bound's minimisation) did not reach a solution."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: the fan-out stops, workers are stopped, finished runs are kept. Raised by
    the signal handler the command line installs; the runner tells it from Ctrl-C by its class."""


class FailureKind(enum.StrEnum):
    """Why a run failed: a closed vocabulary, decided where the exception is caught (by its type) and stored with
    the run (the store's ``failure`` column)."""

    ERROR = "error"  # an unexpected exception in the learner or the evaluation (its traceback is stored)
    DATA = "data"  # the run's data cannot serve it (a training part of one class, a dataset that cannot be had)
    CONFIG = "config"  # a parameter the learner refuses
    SOLVER = "solver"  # an optimisation that did not converge
    MEMORY = "memory"  # the worker ran out of memory (MemoryError)
    WORKER_DIED = "worker_died"  # the worker process died running it, also when run alone
    CONNECTION = "connection"  # a connection lost or timed out (a cluster, a network file system)

    @property
    def transient(self) -> bool:
        """Whether a rerun may not meet the cause again (a killed worker, lack of memory, a lost connection), as
        opposed to a learner refusing its data or parameters, which fails again the same way."""
        return self in (FailureKind.MEMORY, FailureKind.WORKER_DIED, FailureKind.CONNECTION)

    @classmethod
    def of(cls, exc: BaseException) -> FailureKind:
        """The kind of failure an exception caught around a run stands for."""
        if isinstance(exc, SolverError):
            return cls.SOLVER
        if isinstance(exc, DatasetError):
            return cls.DATA
        if isinstance(exc, ConfigError):
            return cls.CONFIG
        if isinstance(exc, MemoryError):
            return cls.MEMORY
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return cls.CONNECTION
        return cls.ERROR


def one_line(exc: BaseException | None, *, with_type: bool = False) -> str:
    """An exception's message on one line: its first line, white space folded (OmegaConf, PyYAML and loky append
    detail blocks on further lines); ``with_type`` prefixes the exception's class name (for errors that are not
    forestlab's own, where the class says what went wrong)."""
    import re

    if exc is None:
        return "unknown error"
    text = str(exc).strip()
    first = re.sub(r"\s+", " ", text.splitlines()[0]) if text else ""
    if with_type:
        return f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return first or type(exc).__name__
