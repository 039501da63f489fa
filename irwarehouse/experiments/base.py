"""What every experiment shares: output directory, tables, figures, cells and the report."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from .. import catalogue, connection, files, output, sql
from ..engine import evaluation, many
from ..errors import IrwError

REPORT = "report.md"
# parameters that choose what to run, not what a cell holds: left out of the cell key
NOT_IN_CELL_KEY = {"parts"}
_SAFE = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass
class Outcome:
    """What an experiment run gives: its tables (by name), the name of its main one, and the
    report it rewrote."""

    experiment: str
    title: str
    out: Path
    tables: dict
    main: str
    report: Path

    def main_table(self):
        """The main table, as a Result (empty when the run wrote none)."""
        from ..result import Result

        frame = self.tables.get(self.main)
        return Result([], []) if frame is None else Result.of(frame)


def execute(con, experiment: "Experiment", out: str, body: Callable[["ExperimentContext"], str],
            replace: bool = False) -> Outcome:
    """Run ``body`` (which returns the name of its main table) in a context writing to
    ``out``, then write the report."""
    ectx = ExperimentContext(con, experiment, out, replace=replace)
    main = body(ectx)
    report = ectx.finish()
    return Outcome(experiment.name, experiment.title, ectx.out, ectx.tables, main, report)


@dataclass
class Experiment:
    """One analysis: ``name`` (a CLI command), a title, and the parameters it ran with."""

    name: str
    title: str
    params: dict = field(default_factory=dict)


class ExperimentContext:
    """Where an experiment puts its results.

    - ``table(name, frame, caption)``: DIR/<experiment>_<name>.csv, and the warehouse table
      ``exp_<experiment>_<name>`` (catalogued in ``experiment_tables`` with the parameters);
    - ``figure(name, fig, caption)``: DIR/<experiment>_<name>.png;
    - ``text(paragraph)``: prose for the report section;
    - ``cell(key, compute)``: a resumable unit of work returning a DataFrame.
    """

    def __init__(self, con, experiment: Experiment, out: str | Path, progress: bool | None = None,
                 replace: bool = False):
        self.con = con
        self.experiment = experiment
        warehouse = connection.database_path(con)
        # every file goes through the output guard: never onto a database, never over a file
        # irw did not write there (unless replace), each written whole or not at all
        self.dir = files.OutputDirectory(str(out), replace=replace, what="experiment output",
                                         protected=(warehouse,) if warehouse else (),
                                         adopt=_written_by_irw)
        self.out = self.dir.path
        self.cells_dir = self.out / "cells" / experiment.name
        self.cells_dir.mkdir(parents=True, exist_ok=True)
        self._blocks: list[str] = []
        self.tables: dict[str, pd.DataFrame] = {}
        self.show_progress = sys.stderr.isatty() if progress is None else progress
        # when runs or loaded qrels change, earlier cells no longer describe the data
        self._data_stamp = str(con.execute(sql.statement("experiments.sql", "data_stamp")).fetchall()[0])

    @property
    def _params_key(self) -> str:
        """Cells are kept per parameter set (the parameters as they are when a cell runs) and
        per state of the loaded data."""
        params = {k: v for k, v in self.experiment.params.items() if k not in NOT_IN_CELL_KEY}
        text = json.dumps([params, self._data_stamp], sort_keys=True, default=str)
        return hashlib.sha1(text.encode()).hexdigest()[:12]

    # ---------------------------------------------------------------- cells
    def _cell_path(self, key: str):
        safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", key)
        return self.cells_dir / f"{self._params_key}-{safe}.parquet"

    def has_cell(self, key: str) -> bool:
        """Is the cell ``key`` already computed (for these parameters)?"""
        return self._cell_path(key).exists()

    def scores_together(self, cells: dict[str, tuple[str, Callable[[], None]]], measures,
                        run_ids: list[str]) -> dict[str, pd.DataFrame]:
        """Per-topic scores for the cells ``cells`` ({cell key: (derived qrels name, build)})
        not computed yet, keyed as ``cells``: each qrels is built (``build()``) and all are
        evaluated together, in one pass over their root's base (engine.many.evaluate_many); a
        single one on its own."""
        missing = {key: (name, build) for key, (name, build) in cells.items() if not self.has_cell(key)}
        for _, build in missing.values():
            build()
        names = [name for name, _ in missing.values()]
        if len(names) < 2:
            return {key: evaluation.evaluate(self.con, name, measures, run_ids, store=False).df()
                    for key, (name, _) in missing.items()}
        frame = many.evaluate_many(self.con, names, measures, run_ids, store=False).df()
        parts = {name: part.drop(columns="qrels").reset_index(drop=True)
                 for name, part in frame.groupby("qrels", sort=False)}
        empty = frame.iloc[0:0].drop(columns="qrels")
        return {key: parts.get(name, empty) for key, (name, _) in missing.items()}

    def cell(self, key: str, compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
        """Compute a cell once: its result is kept under DIR/cells/ for these parameters."""
        path = self._cell_path(key)
        if path.exists():
            return self.con.execute("SELECT * FROM read_parquet(?)", [str(path)]).df()
        frame = compute()
        # written whole or not at all: an interrupted cell is simply recomputed
        with self.dir.file(str(path.relative_to(self.out))) as tmp:
            connection.register(self.con, "irw_cell", frame)
            try:
                self.con.execute(sql.statement("experiments.sql", "write_cell", str(tmp)))
            finally:
                connection.unregister(self.con, "irw_cell")
        return frame

    def progress(self, items, label: str):
        """Iterate with a progress bar on a terminal."""
        items = list(items)
        if not self.show_progress:
            return iter(items)
        return output.iterate(items, label)

    # ---------------------------------------------------------------- outputs
    def text(self, paragraph: str) -> None:
        self._blocks.append(paragraph.strip())

    def table(self, name: str, frame: pd.DataFrame, caption: str, show: int = 30) -> None:
        if not _SAFE.match(name):
            raise AssertionError(f"bad table name {name!r}")
        self.tables[name] = frame
        stem = f"{self.experiment.name.replace('-', '_')}_{name}"
        with self.dir.file(f"{stem}.csv") as tmp:
            frame.to_csv(tmp, index=False)
        self._store(stem, frame)
        shown = frame.head(show)
        more = f"\n\n({len(frame)} rows; all in `{stem}.csv`.)" if len(frame) > show else ""
        self._blocks.append(f"**{caption}** (`{stem}.csv`, table `exp_{stem}`)\n\n"
                            + _markdown(shown) + more)

    def figure(self, name: str, fig, caption: str) -> Path:
        stem = f"{self.experiment.name.replace('-', '_')}_{name}"
        path = self.out / f"{stem}.png"
        import matplotlib.pyplot as plt

        try:
            with self.dir.file(path.name) as tmp:
                fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
        finally:
            plt.close(fig)
        self._blocks.append(f"![{caption}]({path.name})\n\n*{caption}*")
        return path

    def _store(self, stem: str, frame: pd.DataFrame) -> None:
        table = f"exp_{stem}"
        qrels = self.experiment.params.get("qrels")
        if "run_id" in frame.columns and "collection" not in frame.columns and isinstance(qrels, str):
            # a stored table naming runs carries their collection
            frame = frame.copy()
            frame.insert(list(frame.columns).index("run_id"), "collection", catalogue.collection_of(self.con, qrels))
        with connection.transaction(self.con):
            connection.register(self.con, "irw_exp_frame", frame)
            try:
                self.con.execute(sql.statement("experiments.sql", "store_table", table))
            finally:
                connection.unregister(self.con, "irw_exp_frame")
            self.con.execute(sql.statement("experiments.sql", "forget_table"), [table])
            self.con.execute(sql.statement("experiments.sql", "record_table"),
                             [self.experiment.name, table, len(frame),
                              json.dumps(self.experiment.params, default=str)])

    def finish(self) -> Path:
        """Write this experiment's section and rebuild report.md from all sections in DIR."""
        e = self.experiment
        params = ", ".join(f"{k} = {v}" for k, v in e.params.items())
        section = f"## {e.title}\n\nParameters: {params}.\n\n" + "\n\n".join(self._blocks) + "\n"
        self.dir.write_text(f"sections/{e.name}.md", section)
        return write_report(self.dir)


ORDER = ["depth-grid", "bias", "uncertainty", "agreement", "standardization", "judges"]


REPORT_HEADER = "# irwarehouse experiment report"


def _written_by_irw(directory: Path) -> bool:
    """Is ``directory`` an experiment output an irw without output manifests wrote?"""
    try:
        with open(directory / REPORT, encoding="utf-8", errors="replace") as fh:
            return fh.readline().rstrip("\n") == REPORT_HEADER
    except OSError:
        return False


def write_report(out: files.OutputDirectory) -> Path:
    """report.md: the sections of every experiment run into the directory."""
    sections = sorted((out.path / "sections").glob("*.md"),
                      key=lambda p: (ORDER.index(p.stem) if p.stem in ORDER else 99, p.stem))
    body = "\n".join(p.read_text() for p in sections)
    text = (f"{REPORT_HEADER}\n\nEach section was written by "
            "`irw experiment NAME --out DIR`; every table is also a CSV file here and a table in "
            "the warehouse (see `experiment_tables`).\n\n" + body)
    return out.write_text(REPORT, text)


def _markdown(frame: pd.DataFrame) -> str:
    def cell(v):
        if isinstance(v, float):
            return "" if v != v else f"{v:.4f}"
        return str(v)
    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


def split_values(values, kind, option: str, minimum=None) -> list:
    """The values of a comma-separated (and possibly repeated) option, converted by ``kind``,
    without repeats; an error names the option and the bad value."""
    if isinstance(values, str):
        values = [values]
    out = []
    for piece in (p.strip() for v in values for p in str(v).split(",")):
        if piece:
            try:
                out.append(kind(piece))
            except ValueError:
                raise IrwError(f"{option}: bad value {piece!r}") from None
    require(bool(out), f"{option}: no value given")
    if minimum is not None:
        require(min(out) >= minimum, f"{option}: values must be at least {minimum}")
    return list(dict.fromkeys(out))


def require(condition: bool, message: str) -> None:
    if not condition:
        raise IrwError(message)
