"""Connections: opening a warehouse file (and waiting for it), DuckDB's settings,
transactions, the storage version of new files, and the engine protocol.

This is the lowest floor that touches a database. It knows nothing of the schema: a
warehouse is opened and checked here (:func:`connect`), and made ready for commands --
schema set up, changes made outside irw reconciled -- one floor up (irwarehouse.schema).

DuckDB lets one process write a file, or several read it: a file another process holds is
retried for ``wait`` seconds, then reported with the process that holds it. A load reads
and ranks its files in a connection of its own (:class:`Staging`), which attaches the
warehouse only for its final transaction -- or a copy of it, renamed onto it afterwards,
so that readers are not refused at all (:func:`swapped`).

Every DuckDB connection irw opens is made by :func:`open_duckdb`, with DuckDB's extension
auto-loading off; users' SQL runs in DuckDB's own sandbox (:class:`Sandbox`).

Its modules:

- ``settings``: paths and versions, the memory limit, :func:`open_duckdb`, :func:`configure`,
  and look-ups of a connection (:func:`has_table`, :func:`stored_meta`, ...);
- ``sandbox``: :class:`Sandbox`;
- ``locks``: waiting for a file another process holds (:class:`Deadline`), the directory's
  lock (:func:`directory_lock`);
- ``opening``: :func:`connect`, :func:`check_path`, :func:`create_file`;
- ``swap``: a load written into a copy of the warehouse (:func:`swapped`);
- ``staging``: a load's connection (:class:`Staging`);
- ``transactions``: :func:`transaction`, :func:`unordered`;
- ``engines``: the engine protocol (:class:`Engine`, :class:`DuckDBEngine`, :func:`engine_of`).

Every name the rest of irwarehouse uses is re-exported here (``connection.X``).
"""

from . import engines, locks, opening, sandbox, settings, staging, swap, transactions
from .engines import DuckDBEngine, Engine, engine_of, is_throwaway, mark_throwaway
from .locks import Deadline, directory_lock, is_locked, lock_holder, open_problem
from .opening import check_path, check_warehouse, connect, create_file
from .sandbox import Sandbox, in_sandbox
from .settings import (DEFAULT_DB, DEFAULT_WAIT, DUCKDB_CONFIG, MEMORY_CAP, MEMORY_SHARE, OLDEST_READER,
                       PUBLISHED_KEY, SCHEMA_VERSION, STORAGE_VERSION, configure, database_path, has_table,
                       interrupt_all, is_configuration_locked, memory_bytes, memory_limit, memory_limit_text, open_duckdb,
                       register, resolve_path, settle, storage_version, stored_meta, unregister)
from .staging import Staging
from .swap import SWAP_BYTES_PER_ROW, swapped
from .transactions import after_transaction, in_transaction, transaction, unordered, without_order

__all__ = [
    "engines", "locks", "opening", "sandbox", "settings", "staging", "swap", "transactions",
    "DuckDBEngine", "Engine", "engine_of", "is_throwaway", "mark_throwaway",
    "Deadline", "directory_lock", "is_locked", "lock_holder", "open_problem",
    "check_path", "check_warehouse", "connect", "create_file",
    "Sandbox", "in_sandbox",
    "DEFAULT_DB", "DEFAULT_WAIT", "DUCKDB_CONFIG", "MEMORY_CAP", "MEMORY_SHARE", "OLDEST_READER",
    "PUBLISHED_KEY", "SCHEMA_VERSION", "STORAGE_VERSION", "configure", "database_path", "has_table",
    "interrupt_all", "is_configuration_locked", "memory_bytes", "memory_limit", "memory_limit_text", "open_duckdb",
    "register", "resolve_path", "settle", "storage_version", "stored_meta", "unregister",
    "Staging", "SWAP_BYTES_PER_ROW", "swapped",
    "after_transaction", "in_transaction", "transaction", "unordered", "without_order",
]
