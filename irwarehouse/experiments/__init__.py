"""The papers' analyses (SPEC §6) as experiments: each module here defines one.

An experiment writes its tables (CSV, and a table in the warehouse with the parameters that
produced it), its figures (PNG) and one section of ``report.md`` into an output directory.
Work is split into *cells* (e.g. one pool depth x evaluation depth); a finished cell is kept
in ``DIR/cells/`` so an interrupted run resumes without recomputing it.
"""

from .base import Experiment, ExperimentContext  # noqa: F401
