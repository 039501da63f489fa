"""Score standardization (Webber, Moffat & Zobel, SIGIR 2008; SPEC section 4).

The data and the formulas live in SQL (``sql/standardize_*.sql``):

- a **factor set** is rows of ``std_factors(factors, qrels, measure, topic, mu, sigma,
  n_ref)`` with a catalogue row in ``std_factor_sets`` and, when computed here, its reference
  runs in ``std_reference_runs``;
- ``std_z(x, mu, sigma)`` and ``std_normal_cdf(z)`` are SQL macros stored in the warehouse;
- the views ``std_scores`` / ``std_score_means`` standardize every stored score.

Python computes what SQL is bad at: the cross-collection statistics (RMSE, dRMSE, two-sample
t-tests) and the randomized experiments of the paper, vectorized over splits and samples.
There Phi is ``scipy.special.ndtr`` (the SQL macro agrees with it to ~1e-15).

Conventions (documented in the README):

- sigma is the sample standard deviation (n - 1); sigma = 0 gives z = 0 (phi = 0.5).
- A factor set needs at least two reference runs, and every topic at least two scores.
- Cross-collection false positive: Student's two-sample t-test with *equal variances*
  (``scipy.stats.ttest_ind`` default), two-tailed, p < alpha (0.05). Two samples that are
  constant and equal up to rounding give an undefined test (NaN), never a false positive.
- dRMSE = 2 RMSE / (sd(M^C) + sd(M^D)), sd over systems with n - 1.
- Percentiles use numpy's default (linear interpolation). "tau_95" is the tau that 95 % of
  the samples reach or exceed (the 5th percentile); "tau_99" the 1st percentile.
- Kendall's tau is tau-b (equal to ``scipy.stats.kendalltau``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from scipy import special as _special
from scipy import stats as _sps

from . import catalogue, connection, files, runsets, significance, sql, state, stats
from .engine import evaluation
from .engine.loading import drop_qrels
from . import measures as ms
from .errors import IrwError

Progress = Callable[[int, int], None] | None

EXPORT_COLUMNS = ["factors", "qrels", "measure", "topic", "mu", "sigma", "n_ref", "reference",
                  "description"]
REQUIRED_IMPORT_COLUMNS = ["qrels", "measure", "topic", "mu", "sigma", "n_ref", "reference"]
FILE_FORMATS = ("csv", "parquet")

# R-normalized measure -> its raw (unnormalized) form; the normalizer is a per-topic constant
# (the catalogue's raw_form).
RAW_FORM = {m.name: m.raw_form for m in ms.CATALOGUE.values() if m.raw_form}
# Raw measure -> the R-normalized form offered when a raw measure is asked for (normalized_form).
NORMALIZED_FORM = {m.name: m.normalized_form for m in ms.CATALOGUE.values() if m.normalized_form}


def _names(values, limit: int = 20) -> str:
    values = list(values)
    if len(values) > limit:
        return ", ".join(map(str, values[:limit])) + f", ... ({len(values) - limit} more)"
    return ", ".join(map(str, values)) or "none"


def _statement(name: str, *args) -> str:
    """The named statement ``name`` of sql/standardize_queries.sql."""
    return sql.statement("standardize_queries.sql", name, *args)


def phi(z):
    """The standard normal CDF (numpy; the SQL macro ``std_normal_cdf`` is the same)."""
    return _special.ndtr(z)


# ------------------------------------------------------------------------------ scores

def _parsed(measures) -> list[ms.Measure]:
    """Measures given as names or as parsed objects."""
    out: list[ms.Measure] = []
    for m in measures:
        for p in (ms.parse_all([m]) if isinstance(m, str) else [m]):
            if p not in out:
                out.append(p)
    return out


def ensure_scores(con, qrels: str, measures: list[ms.Measure], run_ids: list[str]) -> list[str]:
    """Evaluate (and store) the runs whose stored scores for ``measures`` do not cover the
    qrels's topic set exactly; return the run ids that were evaluated."""
    labels = [str(m) for m in measures]
    missing = con.execute(sql.render("standardize_coverage.sql"),
                          {"qrels": qrels, "measures": labels, "runs": list(run_ids),
                           "collection": catalogue.collection_of(con, qrels)}).fetchall()
    if not missing:
        return []
    runs = sorted({r for r, _ in missing})
    wanted = {m for _, m in missing}
    todo = [m for m in measures if str(m) in wanted]
    evaluation.evaluate(con, qrels, todo, runs, store=True)
    return runs


def score_matrix(con, qrels: str, measure: ms.Measure, run_ids: list[str]) -> tuple[np.ndarray, list[str]]:
    """Per-topic scores (runs in the order given x topics of the qrels's topic set)."""
    m = significance.score_matrix(con, qrels, measure, list(run_ids))
    return m.X, m.topics


# ------------------------------------------------------------------------------ factors

def _check_reference(run_ids: list[str], spec: str) -> None:
    if len(run_ids) < 2:
        raise IrwError(f"standardization needs at least two reference runs; the reference "
                       f"{spec!r} selects {len(run_ids)} ({_names(run_ids)})")


def compute_factors(con, qrels: str, measures, reference_runs: list[str],
                    spec: str | None = None) -> pd.DataFrame:
    """Factors (measure, topic, mu, sigma, n_ref) of the reference runs, from the stored
    scores (evaluated first where missing). Nothing is stored."""
    parsed = _parsed(measures)
    labels = [str(m) for m in parsed]
    qrels, _ = catalogue.qrels_info(con, qrels)
    _check_reference(reference_runs, spec or ",".join(reference_runs))
    ensure_scores(con, qrels, parsed, reference_runs)
    frame = con.execute(sql.render("standardize_factors.sql"),
                        {"qrels": qrels, "measures": labels, "runs": list(reference_runs)}).df()
    if frame.empty:
        raise IrwError(f"qrels {qrels!r} has no topic with a relevant document: nothing to standardize")
    thin = frame[frame["n_ref"] < 2]
    if not thin.empty:
        raise IrwError("fewer than two reference scores for topic(s) "
                       f"{_names(thin['topic'].unique())}: the factors need at least two")
    return frame


def factor_sets(con) -> list[str]:
    return [r[0] for r in con.execute("SELECT factors FROM std_factor_sets ORDER BY factors").fetchall()]


def factor_set_info(con, name: str) -> dict:
    """The catalogue row of a factor set, or an error listing the known sets."""
    row = con.execute(_statement("info"), [name]).fetchone()
    if row is None:
        known = factor_sets(con)
        hint = (f"known: {_names(known)}" if known else
                "none exists yet: create one with `irw standardize factors` or `irw standardize import`")
        raise IrwError(f"unknown factor set {name!r}; {hint}")
    keys = ["factors", "qrels", "measures", "reference", "n_ref", "description", "source"]
    return dict(zip(keys, row))


def _check_new_name(con, name: str, replace: bool) -> None:
    if not name or not name.strip():
        raise IrwError("a factor set needs a non-empty name (--name)")
    if name in factor_sets(con) and not replace:
        raise IrwError(f"factor set {name!r} exists; use --replace to overwrite it")


def _delete_set(con, name: str) -> None:
    sql.run(con, "standardize_queries.sql", "delete_set", {"f": name})


def create_factor_set(con, name: str, measures, qrels: str | None = None,
                      reference: str = "all", description: str | None = None,
                      replace: bool = False) -> dict:
    """Compute and store a factor set; ``reference`` is a run spec (default: all runs, i.e.
    self-standardization of everything loaded)."""
    parsed = _parsed(measures)
    labels = [str(m) for m in parsed]
    _check_new_name(con, name, replace)
    qrels = qrels or catalogue.default_qrels(con)
    qrels, _ = catalogue.qrels_info(con, qrels)
    ref_runs = runsets.resolve(con, reference, qrels=qrels)
    _check_reference(ref_runs, reference)
    frame = compute_factors(con, qrels, parsed, ref_runs, spec=reference)
    described = f"{reference} ({len(ref_runs)} runs)"
    with connection.transaction(con):
        _delete_set(con, name)
        con.execute(_statement("insert_set", True),
                    [name, qrels, ", ".join(labels), described, len(ref_runs), description])
        _insert_factors(con, name, qrels, frame)
        con.executemany(_statement("insert_reference_run"), [(name, r) for r in ref_runs])
    return {"factors": name, "qrels": qrels, "measures": labels, "reference": described,
            "n_ref": len(ref_runs), "topics": int(frame["topic"].nunique()), "rows": len(frame)}


def _insert_factors(con, name: str, qrels: str, frame: pd.DataFrame) -> None:
    connection.register(con, "irw_std_new", frame[["measure", "topic", "mu", "sigma", "n_ref"]])
    try:
        con.execute(_statement("insert_factors"), [name, qrels])
    finally:
        connection.unregister(con, "irw_std_new")


def drop_factor_set(con, name: str) -> None:
    factor_set_info(con, name)
    with connection.transaction(con):
        _delete_set(con, name)


def factor_summary(con, name: str) -> pd.DataFrame:
    """Per measure of a factor set: topics, n_ref, mean mu and sigma, topics with sigma 0."""
    return con.execute(_statement("summary"), [name]).df()


def list_factor_sets(con) -> pd.DataFrame:
    return con.execute(_statement("factor_sets")).df()


def factors_frame(con, name: str, measure: str | None = None) -> pd.DataFrame:
    factor_set_info(con, name)
    label = str(ms.parse(measure)) if measure else None
    frame = con.execute(_statement("factors"), {"f": name, "m": label}).df()
    if frame.empty and label:
        raise IrwError(f"factor set {name!r} has no factors for measure {label}")
    return frame


# ------------------------------------------------------------------------------ applying

def _check_coverage(have: pd.DataFrame, per: pd.DataFrame, name: str) -> None:
    """Every (measure, topic) of ``per`` must have factors in ``have``: else an error naming
    the missing measure(s) or topic(s)."""
    measures_have = set(have["measure"])
    missing_m = [m for m in dict.fromkeys(per["measure"]) if m not in measures_have]
    if missing_m:
        raise IrwError(f"factor set {name} has no factors for measure(s) {_names(missing_m)}; "
                       f"it has: {_names(sorted(measures_have))}")
    keys = set(zip(have["measure"], have["topic"]))
    for measure, topics in per.groupby("measure", sort=False)["topic"]:
        lacking = sorted({t for t in topics if (measure, t) not in keys})
        if lacking:
            raise IrwError(f"factor set {name} lacks topic(s) {_names(lacking)} for measure {measure}")


def standardize_frame(con, per: pd.DataFrame, factors: str | pd.DataFrame,
                      name: str | None = None) -> pd.DataFrame:
    """Standardize per-topic scores (run_id, topic, measure, value) in SQL, with a stored
    factor set (its name) or a frame of factors (measure, topic, mu, sigma). Returns
    run_id, topic, measure, value, mu, sigma, z, phi."""
    stored = isinstance(factors, str)
    if stored:
        factor_set_info(con, factors)
        have = con.execute("SELECT measure, topic FROM std_factors WHERE factors = ?", [factors]).df()
        name = factors
    else:
        have = factors
    _check_coverage(have, per, name or "(computed)")
    connection.register(con, "irw_std_scores_in", per[["run_id", "topic", "measure", "value"]])
    if not stored:
        connection.register(con, "irw_std_factors_in", factors[["measure", "topic", "mu", "sigma"]])
    try:
        return con.execute(sql.render("standardize_apply.sql", stored=stored),
                           {"factors": factors} if stored else {}).df()
    finally:
        connection.unregister(con, "irw_std_scores_in")
        if not stored:
            connection.unregister(con, "irw_std_factors_in")


def apply_factors(con, per: pd.DataFrame, factors: str) -> pd.DataFrame:
    """``irw eval --standardize``: the same frame with each value replaced by Phi(z)."""
    out = standardize_frame(con, per, factors)
    out = out[["run_id", "topic", "measure", "phi"]].rename(columns={"phi": "value"})
    return out.sort_values(["run_id", "topic", "measure"], kind="stable").reset_index(drop=True)


def standardized_scores(con, factors: str, measures=None, run_ids: list[str] | None = None,
                        per_topic: bool = False) -> pd.DataFrame:
    """Standardized scores from the views ``std_scores`` / ``std_score_means`` for the runs
    (default: all loaded), evaluating runs whose scores are not stored yet."""
    info = factor_set_info(con, factors)
    set_labels = [r[0] for r in con.execute(
        "SELECT DISTINCT measure FROM std_factors WHERE factors = ? ORDER BY measure", [factors]).fetchall()]
    labels = [str(m) for m in ms.parse_all(measures)] if measures else set_labels
    missing = [m for m in labels if m not in set_labels]
    if missing:
        raise IrwError(f"factor set {factors} has no factors for measure(s) {_names(missing)}; "
                       f"it has: {_names(set_labels)}")
    if info["qrels"] not in catalogue.qrels_names(con):
        raise IrwError(f"factor set {factors} standardizes qrels {info['qrels']!r}, "
                       "which is not loaded in this warehouse")
    run_ids = run_ids or catalogue.loaded_runs(con, catalogue.collection_of(con, info["qrels"]))
    ensure_scores(con, info["qrels"], ms.parse_all(labels), run_ids)
    params = {"f": factors, "q": info["qrels"], "labels": labels, "runs": list(run_ids)}
    rows = con.execute(_statement("scores"), params).df()
    order = {m: i for i, m in enumerate(labels)}
    rows = rows.sort_values(["run_id", "measure", "topic"], kind="stable",
                            key=lambda col: col.map(order) if col.name == "measure" else col)
    lacking = rows[rows["phi"].isna()]
    if not lacking.empty:
        measure = lacking["measure"].iloc[0]
        topics = sorted(lacking[lacking["measure"] == measure]["topic"].unique())
        raise IrwError(f"factor set {factors} lacks topic(s) {_names(topics)} for measure {measure}")
    rows = rows.reset_index(drop=True)
    if per_topic:
        return rows
    means = (rows.groupby(["run_id", "measure"], sort=False)
             .agg(mean_phi=("phi", "mean"), mean_z=("z", "mean"), mean_value=("value", "mean"),
                  n_topics=("phi", "count"), in_reference=("in_reference", "first"))
             .reset_index())
    return means.reset_index(drop=True)


# ------------------------------------------------------------------------------ export / import

def _file_format(path: str, fmt: str | None, reading: bool) -> str:
    if fmt:
        if fmt not in FILE_FORMATS:
            raise IrwError(f"unknown file format {fmt!r}; valid: {', '.join(FILE_FORMATS)}")
        return fmt
    lower = path.lower()
    if lower.endswith((".parquet", ".pq")):
        return "parquet"
    if lower.endswith((".csv", ".csv.gz")):
        return "csv"
    if reading and Path(path).is_file():
        with open(path, "rb") as fh:
            if fh.read(4) == b"PAR1":
                return "parquet"
        return "csv"
    raise IrwError(f"{path}: cannot tell the file format from the name; use .csv or .parquet "
                   "(or --file-format)")


def export_factor_set(con, name: str, path: str, fmt: str | None = None,
                      replace: bool = False) -> int:
    """Write a factor set, one row per (measure, topic) with EXPORT_COLUMNS, as CSV or
    Parquet; an existing file is overwritten only with ``replace`` (never a database:
    files.output_file)."""
    import duckdb

    factor_set_info(con, name)
    fmt = _file_format(path, fmt, reading=False)
    warehouse = connection.database_path(con)
    with files.output_file(path, replace=replace, what="factor file",
                           protected=(warehouse,) if warehouse else ()) as tmp:
        try:
            con.execute(_statement("export", str(tmp), fmt), {"f": name})
        except duckdb.Error as exc:
            raise IrwError(f"{path}: cannot write the factor set: {str(exc).splitlines()[0]}") from None
    return con.execute("SELECT count(*) FROM std_factors WHERE factors = ?", [name]).fetchall()[0][0]


def _read_factor_file(con, path: str, fmt: str) -> tuple[pd.DataFrame, Callable[[int], str]]:
    try:
        if fmt == "parquet":
            frame = con.execute("SELECT * FROM read_parquet(?)", [path]).df()
            where = lambda i: f"{path}, row {i + 1}"  # noqa: E731
        else:
            frame = con.execute("SELECT * FROM read_csv(?, header = true, all_varchar = true)", [path]).df()
            where = lambda i: f"{path}, line {i + 2}"  # noqa: E731
    except Exception as exc:
        raise IrwError(f"{path}: cannot read the file as {fmt}: {str(exc).splitlines()[0]}") from None
    return frame, where


def _validate_factor_file(frame: pd.DataFrame, path: str, where) -> pd.DataFrame:
    columns = [str(c) for c in frame.columns]
    allowed = set(REQUIRED_IMPORT_COLUMNS) | {"factors", "description"}
    missing = [c for c in REQUIRED_IMPORT_COLUMNS if c not in columns]
    unknown = [c for c in columns if c not in allowed]
    if missing or unknown:
        problems = []
        if missing:
            problems.append(f"missing column(s) {', '.join(missing)}")
        if unknown:
            problems.append(f"unexpected column(s) {', '.join(unknown)}")
        raise IrwError(f"{path}: wrong columns ({'; '.join(problems)}); a factor file has the "
                       f"columns {', '.join(REQUIRED_IMPORT_COLUMNS)} (and optionally factors, "
                       "description), as written by `irw standardize export`; nothing imported")
    if frame.empty:
        raise IrwError(f"{path}: the file holds no factors; nothing imported")
    out = pd.DataFrame(index=frame.index)
    for col in ("qrels", "measure", "topic", "reference"):
        values = frame[col]
        bad = values.isna() | (values.astype(str).str.strip() == "")
        if bad.any():
            raise IrwError(f"{where(int(np.flatnonzero(bad.to_numpy())[0]))}: empty {col}; nothing imported")
        out[col] = values.astype(str).str.strip()
    for col, integer in (("mu", False), ("sigma", False), ("n_ref", True)):
        numbers = pd.to_numeric(frame[col], errors="coerce")
        bad = numbers.isna() | ~np.isfinite(numbers.to_numpy(dtype=float, na_value=np.nan))
        if integer:
            bad |= numbers.notna() & (numbers != np.round(numbers))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            kind = "an integer" if integer else "a finite number"
            raise IrwError(f"{where(i)}: {col} {frame[col].iloc[i]!r} is not {kind}; nothing imported")
        out[col] = numbers.astype("int64" if integer else "float64")
    if (out["sigma"] < 0).any():
        i = int(np.flatnonzero((out["sigma"] < 0).to_numpy())[0])
        raise IrwError(f"{where(i)}: sigma must not be negative; nothing imported")
    if (out["n_ref"] < 2).any():
        i = int(np.flatnonzero((out["n_ref"] < 2).to_numpy())[0])
        raise IrwError(f"{where(i)}: n_ref {out['n_ref'].iloc[i]} -- factors need at least two "
                       "reference runs; nothing imported")
    canonical = {}
    for raw in out["measure"].unique():
        try:
            canonical[raw] = str(ms.parse(raw))
        except IrwError as exc:
            i = int(np.flatnonzero((out["measure"] == raw).to_numpy())[0])
            raise IrwError(f"{where(i)}: {exc}; nothing imported") from None
    out["measure"] = out["measure"].map(canonical)
    dup = out.duplicated(["measure", "topic"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise IrwError(f"{where(i)}: a second row for measure {out['measure'].iloc[i]} and topic "
                       f"{out['topic'].iloc[i]}; nothing imported")
    for col in ("qrels", "reference") + (("factors",) if "factors" in frame.columns else ()):
        values = (frame[col].astype(str).unique() if col == "factors" else out[col].unique())
        if len(values) > 1:
            raise IrwError(f"{path}: the file holds several values of {col} ({_names(values)}); "
                           "a file holds one factor set; nothing imported")
    return out


def import_factor_set(con, path: str, name: str | None = None, qrels: str | None = None,
                      replace: bool = False, description: str | None = None,
                      fmt: str | None = None) -> dict:
    """Read a factor file (CSV or Parquet, as exported) into the warehouse, all or nothing.
    ``qrels`` maps the factors to a local qrels (default: the qrels named in the file)."""
    if not Path(path).is_file():
        raise IrwError(f"{path}: no such file")
    fmt = _file_format(path, fmt, reading=True)
    frame, where = _read_factor_file(con, path, fmt)
    clean = _validate_factor_file(frame, path, where)
    file_name = str(frame["factors"].iloc[0]) if "factors" in frame.columns else None
    name = name or file_name
    if not name:
        raise IrwError(f"{path}: the file names no factor set: give one with --name; nothing imported")
    _check_new_name(con, name, replace)
    file_qrels = clean["qrels"].iloc[0]
    target = qrels or file_qrels
    if target not in catalogue.qrels_names(con):
        raise IrwError(f"qrels {target!r} is not loaded in this warehouse: load it, or map the "
                       f"factors to a loaded qrels with --qrels (loaded: {_names(catalogue.qrels_names(con))}); "
                       "nothing imported")
    if description is None and "description" in frame.columns:
        first = frame["description"].iloc[0]
        description = None if first is None or (isinstance(first, float) and math.isnan(first)) else str(first)
    labels = list(dict.fromkeys(clean["measure"]))
    reference = clean["reference"].iloc[0]
    n_ref = int(clean["n_ref"].max())
    source = str(Path(path).resolve()) + (f" (qrels {file_qrels})" if file_qrels != target else "")
    with connection.transaction(con):
        _delete_set(con, name)
        con.execute(_statement("insert_set", False),
                    [name, target, ", ".join(labels), reference, n_ref, description, source])
        _insert_factors(con, name, target, clean)
    return {"factors": name, "qrels": target, "measures": labels, "rows": len(clean),
            "topics": int(clean["topic"].nunique()), "reference": reference}


# ------------------------------------------------------------------------------ collections

COLLECTION_KIND = "topics"


def _topic_key(topic: str):
    return (0, int(topic), topic) if re.fullmatch(r"-?\d+", topic) else (1, 0, topic)


def parent_topics(con, qrels: str) -> tuple[list[str], list[str]]:
    """(topic set, all judged topics) of a qrels."""
    tset = [r[0] for r in con.execute("SELECT topic FROM topic_sets WHERE qrels = ?", [qrels]).fetchall()]
    every = [r[0] for r in con.execute("SELECT DISTINCT topic FROM qrels WHERE qrels = ?", [qrels]).fetchall()]
    return sorted(tset, key=_topic_key), sorted(every, key=_topic_key)


def parse_topic_spec(spec: str, available: list[str]) -> list[str]:
    """Topics from ``401-425,430,@file``: a range selects the available topics whose integer id
    lies in it (an error if none does); a single id must exist."""
    have = set(available)
    out: list[str] = []
    for item in (i.strip() for i in spec.split(",")):
        if not item:
            continue
        if item.startswith("@"):
            out.extend(runsets.read_id_file(item[1:], have, "topic"))
            continue
        m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", item)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo > hi:
                raise IrwError(f"topic range {item!r} is empty (low > high)")
            chosen = [t for t in available if re.fullmatch(r"\d+", t) and lo <= int(t) <= hi]
            if not chosen:
                raise IrwError(f"no topic of the qrels lies in the range {item!r}")
            out.extend(chosen)
        elif item in have:
            out.append(item)
        else:
            raise IrwError(f"topic {item!r} is not in the qrels; topics: {_names(available)}")
    out = list(dict.fromkeys(out))
    if not out:
        raise IrwError(f"the topic list {spec!r} selects no topic")
    return out


def random_half(topics: list[str], seed: int) -> tuple[list[str], list[str]]:
    """Split a topic set at random (numpy default_rng(seed)) into halves of n//2 and the rest."""
    rng = stats.rng_of(seed)
    order = rng.permutation(len(topics))
    k = len(topics) // 2
    first = sorted((topics[i] for i in order[:k]), key=_topic_key)
    rest = sorted((topics[i] for i in order[k:]), key=_topic_key)
    return first, rest


def _create_collection(con, parent: str, name: str, topics: list[str], params: dict,
                       description: str | None) -> None:
    catalogue.register_qrels(con, name, source=None, kind=COLLECTION_KIND, parent=parent,
                          params=json.dumps(params), description=description, own_topics=True)
    con.execute(_statement("split_judgments"), [name, parent, topics])
    state.record_qrels(con, name)


def split_collection(con, parent: str, name: str, topics: str | None = None,
                     half_seed: int | None = None, rest: str | None = None,
                     description: str | None = None, replace: bool = False) -> list[dict]:
    """Create collection ``name`` (a qrels of kind 'topics': the parent's judgments for chosen
    topics, with its own topic set) and, with ``rest``, the complement. Topics: a spec
    (``401-425,430,@file``) or a random half of the parent's topic set (``half_seed``)."""
    parent, _ = catalogue.qrels_info(con, parent)
    if (topics is None) == (half_seed is None):
        raise IrwError("choose the topics of the collection: --topics LIST or --half SEED")
    names = [n for n in (name, rest) if n]
    if len(set(names)) != len(names) or parent in names:
        raise IrwError("the collections need distinct names, different from the parent's")
    tset, every = parent_topics(con, parent)
    if topics is not None:
        chosen = parse_topic_spec(topics, every)
        remaining = [t for t in tset if t not in set(chosen)]
        params = {"topics": chosen}
    else:
        if len(tset) < 2:
            raise IrwError(f"qrels {parent!r} has {len(tset)} topic(s) with a relevant document: too few to split")
        chosen, remaining = random_half(tset, half_seed)
        params = {"half_seed": half_seed, "topics": chosen}
    if rest and not remaining:
        raise IrwError(f"no topic is left for the rest collection {rest!r}")
    existing = set(catalogue.qrels_names(con))
    with connection.transaction(con):
        for n in names:
            if n in existing:
                if not replace:
                    raise IrwError(f"qrels {n!r} exists; use --replace to overwrite it")
                kind = con.execute("SELECT kind FROM qrels_info WHERE qrels = ?", [n]).fetchone()[0]
                if kind != COLLECTION_KIND:
                    raise IrwError(f"qrels {n!r} is not a collection (kind {kind}); not replacing it")
                drop_qrels(con, n)
        _create_collection(con, parent, name, chosen, params, description)
        made = [{"qrels": name, "parent": parent, "topics": len(chosen)}]
        if rest:
            rest_params = {"rest_of": name, "topics": remaining}
            _create_collection(con, parent, rest, remaining, rest_params, description)
            made.append({"qrels": rest, "parent": parent, "topics": len(remaining)})
    for row in made:
        row["topic_set"] = con.execute("SELECT count(*) FROM topic_sets WHERE qrels = ?",
                                       [row["qrels"]]).fetchone()[0]
    return made


# ------------------------------------------------------------------------------ forms

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


def _form_matrices(con, qrels: str, forms: list[Form], run_ids: list[str],
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


# ------------------------------------------------------------------------------ statistics

def _sd(values: np.ndarray, axis: int) -> np.ndarray:
    return np.std(values, axis=axis, ddof=1)


# Standard deviations at most this fraction of the scores' magnitude are zero (rounding),
# as in irwarehouse.stats: equal values computed along different paths differ by a few ulps.
ZERO_SD_RTOL = 1e-10


def two_sample_t(mean_c, var_c, n_c, mean_d, var_d, n_d):
    """Student's two-sample t-test with equal variances, two-tailed (vectorized): the numbers
    of ``scipy.stats.ttest_ind(c, d)``. When the pooled standard deviation is zero up to
    rounding (<= ZERO_SD_RTOL x the larger |mean|), the test is undefined (t and p NaN, never
    significant) if the means are also equal up to rounding, and t = +/-inf, p = 0 if they
    differ -- as scipy does for exactly constant samples."""
    mean_c, mean_d = np.asarray(mean_c, dtype=float), np.asarray(mean_d, dtype=float)
    df = n_c + n_d - 2
    pooled = ((n_c - 1) * np.asarray(var_c) + (n_d - 1) * np.asarray(var_d)) / df
    scale = np.maximum(np.abs(mean_c), np.abs(mean_d))
    diff = mean_c - mean_d
    zero_sd = np.sqrt(pooled) <= ZERO_SD_RTOL * scale
    same = np.abs(diff) <= ZERO_SD_RTOL * scale
    with np.errstate(divide="ignore", invalid="ignore"):
        t = diff / np.sqrt(pooled * (1.0 / n_c + 1.0 / n_d))
    t = np.where(zero_sd, np.where(same, np.nan, np.copysign(np.inf, diff)), t)
    p = 2.0 * _sps.t.sf(np.abs(t), df)
    return t, p


def rmse_drmse(means_c: np.ndarray, means_d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """RMSE and dRMSE between system means on C and D along the last axis (systems)."""
    rmse = np.sqrt(np.mean((means_c - means_d) ** 2, axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        drmse = 2.0 * rmse / (_sd(means_c, -1) + _sd(means_d, -1))
    return rmse, drmse


def _comparison_setup(con, qrels: str, measure, run_spec: str, raw, reference: str | None,
                      factors: str | None, too_few: str):
    """The runs, the forms of ``measure`` and a function qrels -> (matrices per form, topics)
    for comparing collections (standardized by ``factors`` or by the reference runs)."""
    run_ids = runsets.resolve(con, run_spec, qrels=qrels)
    if len(run_ids) < 2:
        raise IrwError(too_few)
    ref_spec = reference or run_spec
    ref_runs = runsets.resolve(con, ref_spec, qrels=qrels)
    if not factors:
        _check_reference(ref_runs, ref_spec)
    else:
        factor_set_info(con, factors)
    forms = forms_of(measure, raw)

    def matrices(q: str):
        return _form_matrices(con, q, forms, run_ids, ref_runs, factors, ref_spec)

    return run_ids, forms, matrices


def check_same_runs(con, c: str, d: str, run_ids: list[str]) -> None:
    """Comparing qrels C and D of two test collections compares the runs of C's collection
    with the runs of the same ids in D's collection: each must be loaded there."""
    cc, cd = catalogue.collection_of(con, c), catalogue.collection_of(con, d)
    if cc == cd:
        return
    there = set(catalogue.loaded_runs(con, cd))
    lacking = [r for r in run_ids if r not in there]
    if lacking:
        raise IrwError(f"{c} (collection {cc}) and {d} (collection {cd}) are compared on the same run "
                       f"ids, but collection {cd} lacks {_names(lacking)}; choose the runs with --runs")


def compare_collections(con, c: str, d: str, measure, run_spec: str = "all", raw=None,
                        reference: str | None = None, factors: str | None = None,
                        alpha: float = 0.05) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cross-collection comparison of the same runs on collections C and D, per form:
    RMSE, dRMSE and two-sample t-test false positives. Returns (summary, per_run)."""
    _check_alpha(alpha)
    c, _ = catalogue.qrels_info(con, c)
    d, _ = catalogue.qrels_info(con, d)
    run_ids, forms, matrices = _comparison_setup(
        con, c, measure, run_spec, raw, reference, factors,
        "comparing collections needs at least two runs (dRMSE divides by the spread of the run means)")
    check_same_runs(con, c, d, run_ids)
    mats_c, topics_c = matrices(c)
    mats_d, topics_d = matrices(d)
    if len(topics_c) < 2 or len(topics_d) < 2:
        raise IrwError("each collection needs at least two topics for the t-test")
    summary, per_run = [], []
    for f in forms:
        XC, XD = mats_c[f.form], mats_d[f.form]
        mc, md = XC.mean(axis=1), XD.mean(axis=1)
        t, p = two_sample_t(mc, XC.var(axis=1, ddof=1), XC.shape[1], md, XD.var(axis=1, ddof=1), XD.shape[1])
        sig = p < alpha
        rmse, drmse = rmse_drmse(mc, md)
        summary.append({"form": f.form, "measure": str(f.measure), "runs": len(run_ids),
                        "topics_c": len(topics_c), "topics_d": len(topics_d),
                        "rmse": float(rmse), "drmse": float(drmse),
                        "false_positives": int(sig.sum()), "fp_rate": float(sig.mean())})
        for i, run_id in enumerate(run_ids):
            per_run.append({"form": f.form, "measure": str(f.measure), "run_id": run_id,
                            "mean_c": float(mc[i]), "mean_d": float(md[i]),
                            "diff": float(mc[i] - md[i]), "t": float(t[i]), "p": float(p[i]),
                            "significant": bool(sig[i])})
    return pd.DataFrame(summary), pd.DataFrame(per_run)


def _check_alpha(alpha: float) -> None:
    if not (0 < alpha < 1):
        raise IrwError(f"alpha must be between 0 and 1, not {alpha}")


def split_statistics(X: np.ndarray, idx_c: np.ndarray, idx_d: np.ndarray, alpha: float = 0.05):
    """For each split s (rows of the topic index arrays ``idx_c``, ``idx_d``), compare every
    run's scores on topics C_s and D_s: returns (rmse, drmse, fp_rate), each of length
    n_splits. All splits at once: gathered (runs x splits x topics) arrays, two-pass
    variances (the numbers scipy.stats.ttest_ind computes)."""
    X = np.asarray(X, dtype=float)
    XC, XD = X[:, idx_c], X[:, idx_d]  # (runs, splits, size)
    mean_c, mean_d = XC.mean(axis=2), XD.mean(axis=2)
    _, p = two_sample_t(mean_c, XC.var(axis=2, ddof=1), idx_c.shape[1],
                        mean_d, XD.var(axis=2, ddof=1), idx_d.shape[1])
    fp = (p < alpha).mean(axis=0)
    rmse, drmse = rmse_drmse(mean_c.T, mean_d.T)
    return rmse, drmse, fp


def random_split_indices(n_topics: int, n_splits: int, size: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Random disjoint halves: C = the first ``size`` topics of a random permutation (argsort
    of uniform draws, one row per split), D = the next ``size``."""
    order = rng.random((n_splits, n_topics)).argsort(axis=1)
    return order[:, :size], order[:, size:2 * size]


def _summary(values: np.ndarray) -> dict:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return {"mean": math.nan, "p95": math.nan, "p99": math.nan, "max": math.nan}
    return {"mean": float(values.mean()), "p95": float(np.percentile(values, 95)),
            "p99": float(np.percentile(values, 99)), "max": float(values.max())}


SPLIT_CHUNK = 250


def random_splits_experiment(con, qrels: str, measure, run_spec: str = "all", raw=None,
                             reference: str | None = None, factors: str | None = None,
                             splits: int = 2000, seed: int = 0, size: int | None = None,
                             alpha: float = 0.05, progress: Progress = None) -> pd.DataFrame:
    """Webber et al.'s randomized experiment: split the topic set at random into two disjoint
    halves (``size`` topics each, default n // 2), ``splits`` times, and report per form the
    mean and the 95th / 99th percentiles (and the maximum) of dRMSE and of the false-positive
    rate. Deterministic given ``seed``."""
    _check_alpha(alpha)
    if splits < 1:
        raise IrwError("--splits must be at least 1")
    qrels, _ = catalogue.qrels_info(con, qrels)
    run_ids, forms, matrices = _comparison_setup(con, qrels, measure, run_spec, raw, reference,
                                                 factors, "the experiment needs at least two runs")
    mats, topics = matrices(qrels)
    n = len(topics)
    size = size if size is not None else n // 2
    if size < 2 or 2 * size > n:
        raise IrwError(f"each half needs at least two topics and both halves must fit in the "
                       f"{n} topics: --size {size} is not possible")
    results = {f.form: ([], [], []) for f in forms}
    rng = stats.rng_of(seed)
    done = 0
    while done < splits:
        chunk = min(SPLIT_CHUNK, splits - done)
        in_c, in_d = random_split_indices(n, chunk, size, rng)
        for f in forms:
            rmse, drmse, fp = split_statistics(mats[f.form], in_c, in_d, alpha)
            for acc, values in zip(results[f.form], (rmse, drmse, fp)):
                acc.append(values)
        done += chunk
        if progress:
            progress(done, splits)
    rows = []
    for f in forms:
        rmse, drmse, fp = (np.concatenate(a) for a in results[f.form])
        ds, fs, rs = _summary(drmse), _summary(fp), _summary(rmse)
        rows.append({"form": f.form, "measure": str(f.measure), "runs": len(run_ids), "topics": n,
                     "size": size, "splits": splits,
                     "rmse_mean": rs["mean"],
                     "drmse_mean": ds["mean"], "drmse_p95": ds["p95"], "drmse_p99": ds["p99"],
                     "drmse_max": ds["max"],
                     "fp_rate_mean": fs["mean"], "fp_rate_p95": fs["p95"], "fp_rate_p99": fs["p99"],
                     "fp_rate_max": fs["max"]})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------ reference size

def phi_z(Y: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Phi((Y - mu) / sigma) per topic (the last axis); sigma = 0 gives z = 0."""
    mu, sigma = np.asarray(mu, dtype=float), np.asarray(sigma, dtype=float)
    zero = sigma == 0
    return phi(np.where(zero, 0.0, (Y - mu) / np.where(zero, 1.0, sigma)))


def self_standardize(X: np.ndarray) -> np.ndarray:
    """Phi(z) of every run (row) of X with factors from all of X's runs."""
    return phi_z(X, X.mean(axis=0), _sd(X, 0))


def standardized_means(Y: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Mean over topics of Phi(z) of the runs ``Y`` (runs x topics) under factors mu, sigma
    (topics, or samples x topics): shape (runs,) or (samples, runs). sigma = 0 gives z = 0."""
    mu = np.asarray(mu, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    if mu.ndim == 1:
        return phi_z(Y, mu, sigma).mean(axis=1)
    return phi_z(Y[None, :, :], mu[:, None, :], sigma[:, None, :]).mean(axis=2)


def reference_size_experiment(con, qrels: str, measure, run_spec: str = "all",
                              reference: str | None = None, sizes=(2, 5, 10, 20),
                              samples: int = 1000, seed: int = 0,
                              progress: Progress = None) -> pd.DataFrame:
    """How many standardizing systems: for each n in ``sizes``, draw ``samples`` sets of n
    reference runs (without replacement), standardize the evaluated runs with their factors
    and take Kendall's tau-b between the ranking by mean Phi(z) and the ranking from the full
    reference set. Reports the median, tau_95 (5th percentile: 95 % of samples reach it),
    tau_99 (1st percentile), the minimum and the mean. Samples of size n use
    ``numpy.random.default_rng([seed, n])``, so a size's result does not depend on the others."""
    if samples < 1:
        raise IrwError("--samples must be at least 1")
    qrels, _ = catalogue.qrels_info(con, qrels)
    run_ids = runsets.resolve(con, run_spec, qrels=qrels)
    if len(run_ids) < 2:
        raise IrwError("ranking needs at least two evaluated runs")
    ref_spec = reference or run_spec
    ref_runs = runsets.resolve(con, ref_spec, qrels=qrels)
    _check_reference(ref_runs, ref_spec)
    sizes = sorted(set(int(s) for s in sizes))
    bad = [s for s in sizes if s < 2 or s > len(ref_runs)]
    if bad:
        raise IrwError(f"sample sizes must lie between 2 and the {len(ref_runs)} reference runs; "
                       f"not possible: {_names(bad)}")
    m = ms.parse(measure) if isinstance(measure, str) else measure
    everyone = list(dict.fromkeys(run_ids + ref_runs))
    X, topics = score_matrix(con, qrels, m, everyone)
    index = {r: i for i, r in enumerate(everyone)}
    Y = X[[index[r] for r in run_ids]]
    R = X[[index[r] for r in ref_runs]]
    full = standardized_means(Y, R.mean(axis=0), _sd(R, 0))
    rows = []
    total, done = len(sizes) * samples, 0
    chunk = max(1, min(samples, (1 << 22) // max(1, Y.size)))
    for n in sizes:
        rng = stats.rng_of(seed, n)
        taus = []
        left = samples
        while left > 0:
            k = min(chunk, left)
            picks = rng.random((k, len(ref_runs))).argsort(axis=1)[:, :n]
            S = R[picks]  # (k, n, topics)
            means = standardized_means(Y, S.mean(axis=1), np.std(S, axis=1, ddof=1))
            taus.append(stats.kendall_tau_many(means, full))
            left -= k
            done += k
            if progress:
                progress(done, total)
        tau = np.concatenate(taus)
        rows.append({"measure": str(m), "n": n, "samples": samples, "runs": len(run_ids),
                     "reference_runs": len(ref_runs), "topics": len(topics),
                     "tau_median": float(np.median(tau)),
                     "tau_95": float(np.percentile(tau, 5)),
                     "tau_99": float(np.percentile(tau, 1)),
                     "tau_min": float(tau.min()), "tau_mean": float(tau.mean())})
    return pd.DataFrame(rows)
