"""Seed derivation: every random stream of a run (splits, resamples, inner cross-validation, learners) is seeded
from the canonical JSON of what names it, so the same experiment draws the same numbers on any machine, in any
order, with any number of workers. Protocols and model selection both derive seeds; neither imports the other."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def derive_seed(*parts: Any) -> int:
    """A 32-bit seed from the canonical JSON of ``parts`` (stable across runs, machines and Python versions)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:4], "little")
