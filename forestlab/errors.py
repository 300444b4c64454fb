"""User-facing errors.

Every error a user can cause (an unknown name, a bad override, a missing or corrupt file, a solver that fails) is
raised as a :class:`ForestlabError` whose message is complete on its own: the CLI prints it on one line and exits
with status 2, without a traceback.
"""

from __future__ import annotations


class ForestlabError(Exception):
    """An error caused by the user's input or environment, with a message that says how to fix it."""


class ConfigError(ForestlabError):
    """A config name, key or value is invalid."""


class DatasetError(ForestlabError):
    """A dataset cannot be had, or its file is corrupt or of the wrong shape."""


class StoreError(ForestlabError):
    """The result store cannot be opened or written."""


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
