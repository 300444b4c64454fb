"""forestlab's installed version (``0.0.0+unknown`` from a source tree that is not installed), for the modules that
record or show it; ``forestlab.__version__`` is this."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("forestlab")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"
