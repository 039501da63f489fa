"""Results: one type for every table irw computes, given as a DataFrame or as rows on
demand (as DuckDB's relations are).

A :class:`Result` holds columns and rows, or a pandas DataFrame; ``.df()`` gives the
DataFrame, ``.rows()`` tuples and ``.records()`` dicts, converting only when asked, so a
command that prints rows never imports pandas. In a notebook a Result shows as its table,
and DataFrame methods (``.pivot``, ``.round``, ``[...]``) reach ``.df()``.

A query's result too large to hold is :class:`Batches`: its columns at once, its rows in
batches as DuckDB produces them (``Warehouse.sql(query, batches=True)``).
"""

from __future__ import annotations

import math
from typing import Any

from .errors import IrwError


class Result:
    """A table: ``columns`` and ``rows`` (tuples), or a pandas DataFrame ``frame``; ``info``
    says what the command that made it did, when it did more than compute the table (the
    factor set :meth:`Warehouse.standardize` stored, say)."""

    def __init__(self, columns=None, rows=None, frame=None, arrays=None, info: dict | None = None,
                 codes: dict | None = None):
        if frame is None and columns is None:
            raise ValueError("a Result needs columns and rows (or arrays), or a frame")
        self._columns = [str(c) for c in (frame.columns if frame is not None else columns)]
        self._rows = None if rows is None else list(rows)
        self._frame = frame
        self._arrays = arrays  # one numpy array per column (a masked one where values are NULL)
        # with arrays: column -> integer numpy array numbering its values (equal values, equal
        # numbers), so that grouping (aggregate) need not compare strings
        self._codes = dict(codes or {})
        self.info = dict(info or {})
        if rows is None and frame is None and arrays is None:
            self._rows = []

    @classmethod
    def of(cls, data, info: dict | None = None) -> "Result":
        """A Result of a DataFrame, a list of dicts (their keys in order), or a Result."""
        if isinstance(data, Result):
            if info:
                data.info.update(info)
            return data
        if isinstance(data, list):
            columns = list(data[0]) if data else []
            return cls(columns, [tuple(r[c] for c in columns) for r in data], info=info)
        return cls(frame=data, info=info)

    @property
    def columns(self) -> list[str]:
        return list(self._columns)

    def rows(self) -> list[tuple]:
        """The rows as tuples (numpy scalars as Python numbers; NULL as None)."""
        if self._rows is None:
            if self._arrays is not None:
                self._rows = list(zip(*(a.tolist() for a in self._arrays)))
            else:
                self._rows = [tuple(_plain(v) for v in row)
                              for row in self._frame.itertuples(index=False, name=None)]
        return self._rows

    def records(self) -> list[dict]:
        """The rows as dicts of column -> value."""
        return [dict(zip(self._columns, row)) for row in self.rows()]

    def df(self):
        """The table as a pandas DataFrame."""
        if self._frame is None:
            import pandas as pd

            if self._arrays is not None:
                import numpy as np

                self._frame = pd.DataFrame({c: (a.filled(np.nan) if np.ma.isMaskedArray(a) else a)
                                            for c, a in zip(self._columns, self._arrays)})
            else:
                self._frame = pd.DataFrame(self._rows, columns=self._columns)
        return self._frame

    def column(self, name: str) -> list:
        i = self._columns.index(name)
        if self._rows is None and self._arrays is not None:
            return self._arrays[i].tolist()
        return [row[i] for row in self.rows()]

    def __len__(self) -> int:
        if self._rows is not None:
            return len(self._rows)
        return len(self._arrays[0]) if self._arrays is not None else len(self._frame)

    def __repr__(self) -> str:
        from .output import to_table

        return to_table(self._frame if self._frame is not None else self.records())

    def _repr_html_(self) -> str:
        return self.df()._repr_html_()

    def __getitem__(self, key):
        return self.df()[key]

    def equals(self, other) -> bool:
        """The same table as ``other`` (a Result or a DataFrame), as DataFrame.equals."""
        return self.df().equals(other.df() if isinstance(other, Result) else other)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.df(), name)

    def aggregate(self, how: str = "mean") -> "Result":
        """Per-topic scores (columns [qrels,] run_id, topic, measure, value) aggregated over
        the topics: [qrels,] run_id, measure, value, n_topics, in order of first appearance
        (:func:`summarize`)."""
        check_aggregate(how)
        keys = (["qrels"] if self._columns[0] == "qrels" else []) + ["run_id", "measure"]
        if self._arrays is not None and all(k in self._codes for k in keys):
            rows = self._aggregate_coded(keys, how)
        else:
            width = len(keys)
            groups: dict[tuple, list] = {}
            for row in self.rows():
                values = groups.setdefault(row[:width - 2] + (row[width - 2], row[width]), [])
                if row[-1] is not None and not math.isnan(row[-1]):
                    values.append(row[-1])
            rows = [(*key, *summarize(values, how)) for key, values in groups.items()]
        return Result(keys[:-2] + list(MEAN_COLUMNS), rows)

    def _aggregate_coded(self, keys: list[str], how: str) -> list[tuple]:
        """:meth:`aggregate` by the columns' codes: the rows are grouped by numbers, not strings."""
        import numpy as np

        key = combined_key([self._codes[k] for k in keys])
        _, first, group = np.unique(key, return_index=True, return_inverse=True)
        values = self._arrays[self._columns.index("value")]
        values = np.ma.filled(values, np.nan) if np.ma.isMaskedArray(values) else np.asarray(values, float)
        present = ~np.isnan(values)  # missing values (NULL, NaN) are left out
        sizes = np.bincount(group[present], minlength=len(first))
        chunks = np.split(values[present][np.argsort(group[present], kind="stable")], np.cumsum(sizes)[:-1])
        arrays = [self._arrays[self._columns.index(k)] for k in keys]
        return [(*(a[first[g]] for a in arrays), *summarize(chunks[g].tolist(), how))
                for g in np.argsort(first, kind="stable")]

class Batches:
    """A query's result streamed: ``columns`` and their DuckDB ``types`` (names such as
    ``BIGINT``, ``VARCHAR``) at once, the rows in batches of up to ``size`` tuples as DuckDB
    produces them, so that memory holds one batch whatever the result's size. Iterate it
    (``for batch in result: ...``), or its rows one by one (:meth:`rows`); it can be read
    once. It holds its query's transaction open (``finish``, called once: with None when
    every row was read, with the exception when reading failed or stopped early), so read
    it to the end -- or :meth:`close` it, or use it as a context manager -- before using the
    warehouse again. ``fetch(n)``: the next rows (an empty list at the end); ``failed(exc)``:
    the error to raise for one raised while reading (DuckDB's, say)."""

    SIZE = 10_000

    def __init__(self, columns, types, fetch, finish, size: int | None = None, failed=None):
        self.columns = [str(c) for c in columns]
        self.types = [str(t) for t in types]
        self.size = int(size or self.SIZE)
        if self.size < 1:
            raise IrwError(f"a batch holds at least one row, not {size}")
        self._fetch, self._finish, self._failed = fetch, finish, failed
        self._done = False

    def __iter__(self):
        if self._done:
            raise IrwError("these batches were read already: run the query again")
        try:
            while True:
                try:
                    batch = self._fetch(self.size)
                except Exception as exc:
                    if self._failed is None:
                        raise
                    raise self._failed(exc) from None
                if not batch:
                    break
                yield batch
        except BaseException as exc:  # an error, or the reader stopped early (GeneratorExit)
            self._end(exc)
            raise
        self._end(None)

    def rows(self):
        """The rows one by one (tuples)."""
        for batch in self:
            yield from batch

    def result(self) -> Result:
        """Every row, held in memory: the :class:`Result` the query gives without batches."""
        return Result(self.columns, list(self.rows()))

    def _end(self, error: BaseException | None) -> None:
        if not self._done:
            self._done = True
            self._finish(error)

    def close(self) -> None:
        """Stop reading: the rows not read are dropped, and the transaction is rolled back."""
        self._end(GeneratorExit())

    def __enter__(self) -> "Batches":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        if not getattr(self, "_done", True):
            self.close()

    def __repr__(self) -> str:
        return f"Batches(columns={self.columns!r}, size={self.size})"


MEAN_COLUMNS = ("run_id", "measure", "value", "n_topics")


def combined_key(codes: list, sizes: list[int] | None = None):
    """Several columns of codes (non-negative integers) as one int64 numpy array that orders
    and groups the rows as the columns do, first column first; ``sizes``: how many codes
    each column may take (default: its largest code + 1)."""
    import numpy as np

    key = np.zeros(len(codes[0]) if codes else 0, dtype=np.int64)
    for i, column in enumerate(codes):
        column = np.asarray(column, dtype=np.int64)
        size = sizes[i] if sizes is not None else int(column.max(initial=0)) + 1
        key = key * size + column
    return key


def _plain(value):
    return value.item() if hasattr(value, "item") else value  # a numpy scalar: a Python one


GM_EPSILON = 1e-5


AGGREGATES = ("mean", "gm", "gm_trec")


def _log(x: float) -> float:
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def check_aggregate(how: str) -> None:
    if how not in AGGREGATES:
        raise IrwError(f"unknown aggregate {how!r}; valid: {', '.join(AGGREGATES)}")


def summarize(values, how: str = "mean") -> tuple[float, int]:
    """(aggregate, n) of one run's values of one measure over topics. ``mean`` (arithmetic,
    the exactly rounded sum divided by n); ``gm`` the geometric mean
    exp(mean(log(x + eps))) - eps (SPEC); ``gm_trec`` trec_eval's gm_map form
    exp(mean(log(max(x, eps)))). eps = 1e-5. ``values``: the values present (no None, NaN)."""
    if how == "gm":
        values = [_log(v + GM_EPSILON) for v in values]
    elif how == "gm_trec":
        values = [_log(max(v, GM_EPSILON)) for v in values]
    mean = math.fsum(values) / len(values) if values else math.nan
    if how == "gm":
        mean = math.exp(mean) - GM_EPSILON
    elif how == "gm_trec":
        mean = math.exp(mean)
    return mean, len(values)
