"""The forms of a measure compared across collections (raw, R-normalized, standardized) and
their matrices of scores."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import measures as ms
from .applying import standardize_frame
from .factors import compute_factors
from .scores import score_matrix

# R-normalized measure -> its raw (unnormalized) form; the normalizer is a per-topic constant
# (the catalogue's raw_form).
RAW_FORM = {m.name: m.raw_form for m in ms.CATALOGUE.values() if m.raw_form}
# Raw measure -> the R-normalized form offered when a raw measure is asked for (normalized_form).
NORMALIZED_FORM = {m.name: m.normalized_form for m in ms.CATALOGUE.values() if m.normalized_form}


@dataclass
class Form:
    form: str  # raw | normalized | standardized
    measure: ms.Measure


def _convert(measure: ms.Measure, name: str) -> ms.Measure:
    return ms.Measure(name, (), measure.cutoff).with_params(**dict(measure.params))


def forms_of(measure, raw=None) -> list[Form]:
    """The forms compared across collections: raw, R-normalized (when the measure has one)
    and standardized (Phi(z) of the measure; identical for its raw and normalized forms)."""
    m = ms.parse(measure) if isinstance(measure, str) else measure
    raw_m = ms.parse(raw) if isinstance(raw, str) else raw
    if m.name in RAW_FORM:
        normalized = m
        raw_m = raw_m or _convert(m, RAW_FORM[m.name])
    elif m.name in NORMALIZED_FORM:
        normalized = _convert(m, NORMALIZED_FORM[m.name])
        raw_m = raw_m or m
    else:
        normalized = None
        raw_m = raw_m or m
    out = [Form("raw", raw_m)]
    if normalized is not None:
        out.append(Form("normalized", normalized))
    out.append(Form("standardized", normalized or m))
    return out


def form_matrices(con, qrels: str, forms: list[Form], run_ids: list[str],
                   reference_runs: list[str] | None, factors: str | None,
                   reference_spec: str) -> tuple[dict, list[str]]:
    """Per form: the (runs x topics) matrix of the values compared (phi for standardized)."""
    out, topics = {}, None
    for f in forms:
        X, t = score_matrix(con, qrels, f.measure, run_ids)
        if topics is None:
            topics = t
        if f.form == "standardized":
            if factors:
                fac = factors
            else:
                fac = compute_factors(con, qrels, [f.measure], reference_runs, spec=reference_spec)
            per = pd.DataFrame({"run_id": np.repeat(run_ids, len(t)), "topic": np.tile(t, len(run_ids)),
                                "measure": str(f.measure), "value": X.ravel()})
            std = standardize_frame(con, per, fac, name=factors)
            wide = std.pivot(index="run_id", columns="topic", values="phi").reindex(index=run_ids, columns=t)
            X = wide.to_numpy(dtype=float)
        out[f.form] = X
    return out, topics
