"""Where the command line keeps what it computed and can reuse (``$FORESTLAB_CACHE_DIR``, else forestlab/ under
``$XDG_CACHE_HOME`` or ~/.cache), and a memo on disk for pure functions of their input's bytes."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path


def cache_dir() -> Path:
    """The folder of the command line's caches (not created here)."""
    env = os.environ.get("FORESTLAB_CACHE_DIR")
    return Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "forestlab"


def keep(path: Path, data: bytes) -> None:
    """Write a cache entry atomically; an unwritable cache folder keeps nothing (the next call computes again)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
    except OSError:
        pass


def memo_float(kind: str, key: bytes, compute: Callable[[], float]) -> float:
    """``compute()``, kept under ``kind`` for the exact ``key`` (the input's bytes and everything else the result
    depends on, versions included): a pure function's result, served again only for the same input."""
    digest = hashlib.sha256(kind.encode() + b"\0" + key).hexdigest()[:40]
    path = cache_dir() / kind / f"{digest}.json"
    try:
        return float(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        pass
    value = float(compute())
    keep(path, json.dumps(value).encode())  # json keeps a float's every bit (repr round-trips); nan as NaN
    return value
