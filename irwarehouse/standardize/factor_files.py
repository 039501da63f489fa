"""Factor sets written to and read from files (CSV or Parquet), all or nothing."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .. import catalogue, connection, files
from .. import measures as ms
from ..errors import IrwError
from .factors import check_new_name, delete_set, factor_set_info, insert_factors
from .shared import listed, named_statement

EXPORT_COLUMNS = ["factors", "qrels", "measure", "topic", "mu", "sigma", "n_ref", "reference",
                  "description"]
REQUIRED_IMPORT_COLUMNS = ["qrels", "measure", "topic", "mu", "sigma", "n_ref", "reference"]
FILE_FORMATS = ("csv", "parquet")


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
            con.execute(named_statement("export", str(tmp), fmt), {"f": name})
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
            raise IrwError(f"{path}: the file holds several values of {col} ({listed(values)}); "
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
    check_new_name(con, name, replace)
    file_qrels = clean["qrels"].iloc[0]
    target = qrels or file_qrels
    if target not in catalogue.qrels_names(con):
        raise IrwError(f"qrels {target!r} is not loaded in this warehouse: load it, or map the "
                       f"factors to a loaded qrels with --qrels (loaded: {listed(catalogue.qrels_names(con))}); "
                       "nothing imported")
    if description is None and "description" in frame.columns:
        first = frame["description"].iloc[0]
        description = None if first is None or (isinstance(first, float) and math.isnan(first)) else str(first)
    labels = list(dict.fromkeys(clean["measure"]))
    reference = clean["reference"].iloc[0]
    n_ref = int(clean["n_ref"].max())
    source = str(Path(path).resolve()) + (f" (qrels {file_qrels})" if file_qrels != target else "")
    with connection.transaction(con):
        delete_set(con, name)
        con.execute(named_statement("insert_set", False),
                    [name, target, ", ".join(labels), reference, n_ref, description, source])
        insert_factors(con, name, target, clean)
    return {"factors": name, "qrels": target, "measures": labels, "rows": len(clean),
            "topics": int(clean["topic"].nunique()), "reference": reference}
