"""What every part of standardization uses: names listed in a message, the named statements
of ``sql/standardize_queries.sql``, Phi, and the sample standard deviation."""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy import special as _special

from .. import sql

Progress = Callable[[int, int], None] | None


def listed(values, limit: int = 20) -> str:
    """``values`` for a message: comma-separated, the first ``limit`` and how many more."""
    values = list(values)
    if len(values) > limit:
        return ", ".join(map(str, values[:limit])) + f", ... ({len(values) - limit} more)"
    return ", ".join(map(str, values)) or "none"


def named_statement(name: str, *args) -> str:
    """The named statement ``name`` of sql/standardize_queries.sql."""
    return sql.statement("standardize_queries.sql", name, *args)


def phi(z):
    """The standard normal CDF (numpy; the SQL macro ``std_normal_cdf`` is the same)."""
    return _special.ndtr(z)


def sample_sd(values: np.ndarray, axis: int) -> np.ndarray:
    """The sample standard deviation (n - 1) along ``axis``."""
    return np.std(values, axis=axis, ddof=1)
