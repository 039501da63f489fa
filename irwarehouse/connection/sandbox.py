"""DuckDB's own sandbox for users' SQL (:class:`Sandbox`).
"""

from __future__ import annotations

import os

import duckdb

from ..errors import IrwError
from ..sql import quote_literal
from .settings import is_configuration_locked, settle


class Sandbox:
    """DuckDB's own sandbox for users' SQL (irw sql, Warehouse.sql): external access off
    (``enable_external_access``), so that the SQL reads and writes the warehouse and nothing
    else -- no file read or written, no ATTACH, no INSTALL or LOAD -- but for the
    directories and files the user allowed (``allowed_directories`` / ``allowed_paths``),
    and the configuration locked (``lock_configuration``), so that no statement can undo
    it. DuckDB checks every path itself, however it is spelled (literal, variable, glob,
    ``..``): no parser of irw's decides. DuckDB's own files (the warehouse, its journal,
    the spill directory) stay reachable to DuckDB, and to nothing else. The settings are
    DuckDB's database instance's: every connection of this process to the same file shares
    them, until the last one closes."""

    def __init__(self, directories=(), paths=()):
        self.directories = tuple(sorted(set(directories)))
        self.paths = tuple(sorted(set(paths)))

    def __eq__(self, other):
        return (isinstance(other, Sandbox) and self.directories == other.directories
                and self.paths == other.paths)

    def __hash__(self):
        return hash((self.directories, self.paths))

    def __repr__(self):
        return f"Sandbox(directories={self.directories!r}, paths={self.paths!r})"

    def apply(self, con: duckdb.DuckDBPyConnection) -> None:
        """Put ``con`` in the sandbox, for as long as it lives (DuckDB turns external access
        back on only in a new database instance)."""
        settle(con)
        if is_configuration_locked(con):  # the file's DuckDB, shared with another connection
            if in_sandbox(con) and self._within(con):
                return
            raise IrwError("another connection of this process to the warehouse keeps DuckDB's "
                           "sandbox of an earlier sql call, which allows other files: close it first")
        listed = lambda items: "[" + ", ".join(quote_literal(i) for i in items) + "]"  # noqa: E731
        if self.directories:
            con.execute(f"SET allowed_directories = {listed(self.directories)}")
        if self.paths:
            con.execute(f"SET allowed_paths = {listed(self.paths)}")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")


    def _within(self, con) -> bool:
        """Does the sandbox ``con`` is in allow what this one allows?"""
        dirs, paths = con.execute("SELECT current_setting('allowed_directories'), "
                                  "current_setting('allowed_paths')").fetchone()
        held = {os.path.abspath(str(x)) for x in list(dirs or []) + list(paths or [])}
        return all(os.path.abspath(str(x)) in held for x in self.directories + self.paths)


def in_sandbox(con) -> bool:
    """Is ``con``'s database in DuckDB's sandbox (external access off)?"""
    return not con.execute("SELECT current_setting('enable_external_access')").fetchone()[0]
