"""Loading runs, qrels and run metadata.

The bulk work happens inside DuckDB (``sql/stage_lines.sql``: read, split, cast), so a
whole TREC archive loads in seconds. Every load is one transaction: lines are staged,
checked, and only then moved into the public tables; any problem raises an
:class:`IrwError` naming the file, the line and the problem, and nothing is loaded.
Line numbers are found by re-reading the offending file in Python, only on that error path.

The parts: :mod:`.reading` (compression, encodings, lines, number syntax), :mod:`.paths`
(files named, globbed or found in directories), :mod:`.frames` (DataFrames loaded as
data), :mod:`.checks` (naming a bad line), :mod:`.staging` (reading into temporary tables,
and the skeleton every load shares), :mod:`.runs`, :mod:`.qrels`, :mod:`.metadata` and
:mod:`.collection` (a test collection at once; files staged for evaluation without a
warehouse).
"""

from .collection import collection_layout, load_collection, stage_files, staged_batches
from .frames import Frame, Named, _frames as frames_in
from .metadata import META_COLUMNS, load_meta
from .paths import expand_paths
from .qrels import QRELS_COLUMNS, drop_qrels, load_qrels
from .reading import ENCODINGS, MAX_LINE, compression, encoding_name, is_comment
from .reading import _open_binary as open_binary  # a file (compressed or not) as bytes
from .runs import ORDER_ALIASES, POLICIES, RUN_COLUMNS, drop_runs, load_runs, ranking_policy
from .staging import release_staging, stage_and_write

__all__ = ["ENCODINGS", "open_binary", "Frame", "Named", "frames_in", "MAX_LINE", "META_COLUMNS", "ORDER_ALIASES", "POLICIES", "QRELS_COLUMNS", "RUN_COLUMNS",
           "collection_layout", "compression", "drop_qrels", "drop_runs", "encoding_name",
           "expand_paths", "is_comment", "load_collection", "load_meta", "load_qrels", "load_runs",
           "ranking_policy", "release_staging", "stage_and_write", "stage_files", "staged_batches"]
