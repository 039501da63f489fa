"""The warehouse file's storage format, chosen so that current DuckDB clients can open it.

DuckDB 2.0 writes new files in its own storage format by default, which DuckDB 1.x (the
DuckDB CLI from the package registry, BI tools that pin ``duckdb<2``) cannot read. irw
creates every new warehouse file with :data:`STORAGE_VERSION` instead: DuckDB 1.4 and later
read and write it. DuckDB keeps a file's storage version when it writes to it later, so an
existing file keeps the version it was created with.
"""

from __future__ import annotations

import duckdb

from .db import quote_literal

# The oldest DuckDB release that can open files irw creates (DuckDB's storage_compatibility_version).
STORAGE_VERSION = "v1.4.0"


def create_file(path: str) -> None:
    """Create an empty DuckDB database file at ``path`` in :data:`STORAGE_VERSION`."""
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH {quote_literal(path)} AS irw_new_file "
                    f"(STORAGE_VERSION {quote_literal(STORAGE_VERSION)})")
        con.execute("DETACH irw_new_file")
    finally:
        con.close()


def storage_version(con: duckdb.DuckDBPyConnection) -> str | None:
    """The storage version of the connection's database file, e.g. ``'v1.4.0+'`` (None in
    memory)."""
    row = con.execute("SELECT tags['storage_version'] FROM duckdb_databases() "
                      "WHERE database_name = current_database()").fetchone()
    return row[0] if row and row[0] else None
