"""What every report and the run that stores it share, without the statistics: the digest of
inputs and parameters, JSON safety and the progress callback's type.

Apart from ``common`` (which imports ``evalstats`` and through it ``scipy.stats``) so that
``analysis.reports`` and the run bookkeeping load at app start-up without the statistics;
numpy too is imported by the functions, when they run.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import fields, is_dataclass

Progress = Callable[[str], None]


def canonical_digest(value) -> str:
    """sha256 of the canonical JSON of a dataclass or JSON-like value (sorted keys).

    The JSON is the same as of ``dataclasses.asdict(value)``, but dataclasses are turned into
    dicts as the encoder meets them, without asdict's deep copy of every tuple (a study's
    inputs hold a few hundred thousand values: 0.1 s instead of 0.3 s per digest here).
    An array is written as its ``tolist()``, the JSON of the tuple it replaced, so that a
    dataclass holding arrays has the digest it had holding tuples.
    """
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=_fields_of
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _fields_of(value):
    import numpy as np  # not at app start-up (module docstring)

    if is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name) for field in fields(value)}
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def json_safe(value):
    """The value with numpy types made plain and NaN/infinity replaced by None."""
    import numpy as np  # not at app start-up (module docstring)

    def safe(value):
        if isinstance(value, dict):
            return {str(k): safe(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [safe(v) for v in value]
        if isinstance(value, np.ndarray):
            return [safe(v) for v in value.tolist()]
        if isinstance(value, np.bool_ | bool):
            return bool(value)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, float | np.floating):
            return float(value) if math.isfinite(value) else None
        return value

    return safe(value)
