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
