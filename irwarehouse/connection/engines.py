"""The engine protocol (:class:`Engine`) and its DuckDB implementation (:class:`DuckDBEngine`).
"""

from __future__ import annotations

import duckdb

from ..result import Result
from ..sql import used
from .settings import settle


class Engine:
    """What irw's engine-independent work -- catalogue look-ups, run specs, evaluation,
    derived qrels, pool statistics -- asks of an SQL engine. DuckDB (:class:`DuckDBEngine`)
    and Spark (irwarehouse.spark.SparkEngine) implement it; a third engine is a branch of
    each macro of ``sql/_dialect.sql`` and one class.

    - ``dialect``: the branch of the templates it runs (irwarehouse.sql.DIALECTS);
    - ``caches_base``: whether the warehouse's materialized base relation (``irw_base``) may
      be used (DuckDB, but in a throw-away warehouse) or the base is computed from the tables
      (Spark);
    - ``rows(sql, params)``: run a query, its rows as tuples;
    - ``relation(sql, params)``: a query's result as the engine's own relation (a DuckDB
      relation, a Spark DataFrame), computed when it is read or written;
    - ``keep(name, sql, params)`` / ``drop(name)``: an intermediate result that later
      queries use by name (a temporary table; a cached temporary view);
    - ``write(table, relation)``: store a relation's rows in the table ``table`` of the
      warehouse (DuckDB) or of the results (Spark: written as Parquet);
    - ``read(sql, params)``: a query's result, read (an irwarehouse.result.Result).

    Queries name their parameters ``$name`` (the dialect's ``param`` macro renders them for
    the engine; hand-written look-ups use ``$name``, which other engines translate)."""

    dialect = "duckdb"
    caches_base = False

    def rows(self, sql: str, params: dict | None = None) -> list[tuple]:
        raise NotImplementedError

    def relation(self, sql: str, params: dict | None = None):
        raise NotImplementedError

    def keep(self, name: str, sql: str, params: dict | None = None) -> None:
        raise NotImplementedError

    def drop(self, name: str) -> None:
        raise NotImplementedError

    def write(self, table: str, relation) -> None:
        raise NotImplementedError

    def read(self, sql: str, params: dict | None = None):
        """A query's result, read: an irwarehouse.result.Result."""
        raise NotImplementedError

    def one(self, sql: str, params: dict | None = None):
        """The first row of a query (None when there is none)."""
        rows = self.rows(sql, params)
        return rows[0] if rows else None


class DuckDBEngine(Engine):
    """The engine protocol over a DuckDB connection (the warehouse's, or a staging one)."""

    dialect = "duckdb"

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    @property
    def caches_base(self) -> bool:
        """True but in a throw-away warehouse (:func:`mark_throwaway`)."""
        return not is_throwaway(self.con)

    def rows(self, sql: str, params: dict | None = None) -> list[tuple]:
        bound = used(params, sql) if isinstance(params, dict) else params
        return self.con.execute(sql, bound or []).fetchall()

    def relation(self, sql: str, params: dict | None = None):
        settle(self.con)
        bound = used(params or {}, sql)
        return self.con.sql(sql, params=bound) if bound else self.con.sql(sql)

    def keep(self, name: str, sql: str, params: dict | None = None) -> None:
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}", used(params or {}, sql))

    def drop(self, name: str) -> None:
        self.con.execute(f"DROP TABLE IF EXISTS temp.{name}")

    def write(self, table: str, relation) -> None:
        relation.insert_into(table)

    def read(self, sql: str, params: dict | None = None) -> Result:
        cursor = self.con.execute(sql, used(params or {}, sql))
        columns = [d[0] for d in cursor.description]
        return Result(columns, cursor.fetchall())


# A DuckDB variable that marks a connection as a throw-away warehouse.
_THROWAWAY = "irw_throwaway"


def mark_throwaway(con: duckdb.DuckDBPyConnection) -> None:
    """Mark ``con`` as a throw-away warehouse: one in memory that serves one evaluation and is
    closed (files in, scores out: Warehouse.eval_files). Caches written there would be read
    once, so the engine computes the base relation within its query instead of
    materializing it first (the same rows, by the same template)."""
    con.execute(f"SET VARIABLE {_THROWAWAY} = true")


def is_throwaway(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute(f"SELECT getvariable('{_THROWAWAY}')").fetchone()[0])


def engine_of(source) -> Engine:
    """The engine of ``source``: an Engine as it is, a DuckDB connection wrapped, the engine of
    a warehouse (an object with an ``engine``: irwarehouse.api.Warehouse, SparkWarehouse)."""
    if isinstance(source, Engine):
        return source
    if isinstance(getattr(source, "engine", None), Engine):
        return source.engine
    return DuckDBEngine(source)
