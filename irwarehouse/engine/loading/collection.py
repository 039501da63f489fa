"""A test collection -- its qrels, runs and run metadata -- loaded in one transaction, and
files staged for evaluation without a warehouse (files in, scores out)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ... import catalogue
from ...catalogue import DEFAULT_COLLECTION
from ...connection import engine_of, without_order
from ...errors import IrwError
from ...judgment_kinds import GRADED, KINDS, JudgmentKind
from .metadata import _load_meta
from .paths import expand_paths
from .qrels import _insert_qrels, _qrels_summary, _stage_qrels
from .runs import _batches, _insert_runs, _stage_runs, _staged_run_ids, no_run_lines
from .staging import _STAGED, _detach_staging, _phase, _progress_bar, stage_and_write


def stage_files(con, qrels_file: str, runs: Iterable[str], name: str, policy: str = "trec_eval",
                extra_fields: bool = False, encoding: str = "utf-8",
                kind: JudgmentKind = KINDS[GRADED]) -> None:
    """Files in, scores out (engine.files_in): read and check a qrels file (named ``name``)
    and run files into temporary tables of ``con`` with every check of
    :func:`load_collection`, and rank the runs under ``policy``, keeping of the ranked rows
    those of judged documents (see :func:`_stage_runs`). What is staged stays in ``con``
    (sql/files_in.sql reads it); :func:`release_staging` removes the staging file. ``kind``:
    the qrels file's judgment kind."""
    qrels_files = expand_paths([qrels_file])
    run_files = expand_paths(runs, runs=True, encoding=encoding)
    _stage_qrels(con, qrels_files, name, encoding, kind)
    with _progress_bar(run_files, "reading runs", phases=2) as bar:
        _stage_runs(con, run_files, policy, extra_fields, encoding, DEFAULT_COLLECTION, bar,
                    judged="temp.irw_staged_qrels")
        _phase(bar, "done")


def staged_batches(con, qrels_file: str, runs: Iterable[str], name: str, share: float,
                   policy: str = "trec_eval", extra_fields: bool = False, encoding: str = "utf-8",
                   kind: JudgmentKind = KINDS[GRADED]):
    """Files in, scores out in batches: the qrels file staged as :func:`stage_files` stages
    it, then the run files in consecutive batches of about ``share`` of the memory limit in
    text, each read, checked and ranked as :func:`stage_files` ranks them, what the batch
    before staged dropped first; so the memory the runs need is bounded by the batch. Yields
    ``(run_ids, again)`` for each batch once it is staged: the ids of its runs, and whether
    the batches so far are to be forgotten -- when a run's lines are in files of two
    batches, every file is then staged at once (as :func:`stage_files` does, ranking such
    runs over all their lines) and ``again`` is True. Files without any run line are an
    error, as they are for :func:`stage_files`."""
    qrels_files = expand_paths([qrels_file])
    run_files = expand_paths(runs, runs=True, encoding=encoding)
    _stage_qrels(con, qrels_files, name, encoding, kind)
    batches = _batches(con, run_files, share)
    seen: set[str] = set()
    with _progress_bar(run_files, "reading runs", phases=len(batches) + 1) as bar:
        for batch in batches:
            _drop_staged_runs(con)
            _stage_runs(con, batch, policy, extra_fields, encoding, DEFAULT_COLLECTION, bar,
                        judged="temp.irw_staged_qrels", lines_required=False)
            run_ids = _staged_run_ids(con)
            if seen & set(run_ids):  # a run in files of two batches: all files at once
                _drop_staged_runs(con)
                _stage_runs(con, run_files, policy, extra_fields, encoding, DEFAULT_COLLECTION,
                            judged="temp.irw_staged_qrels")
                yield _staged_run_ids(con), True
                break
            seen.update(run_ids)
            if run_ids:
                yield run_ids, False
        else:
            if not seen:
                raise no_run_lines(run_files)
        _phase(bar, "done")


def _drop_staged_runs(con) -> None:
    """Remove what staging run files left (the staged qrels stay)."""
    _detach_staging(con)
    engine = engine_of(con)
    for table in _STAGED:
        if table != "irw_staged_qrels":
            engine.drop(table)


def collection_layout(directory: str, qrels: str | None = None, runs: str | None = None,
                      meta: str | None = None) -> dict:
    """The files of a collection directory in the common layout: one qrels file (its name
    starts with 'qrels'), a directory 'runs' of run files, and optionally one metadata TSV
    (a file ending in .tsv). ``qrels``, ``runs`` and ``meta`` name them instead."""
    root = Path(directory)
    if not root.is_dir():
        raise IrwError(f"{directory}: no such directory")
    entries = sorted(p for p in root.iterdir() if not p.name.startswith("."))
    if qrels is None:
        found = [p for p in entries if p.is_file() and p.name.lower().startswith("qrels")]
        if len(found) != 1:
            raise IrwError(f"{directory}: expected one qrels file (a file whose name starts with "
                           f"'qrels'), found {len(found)}"
                           f"{': ' + ', '.join(p.name for p in found) if found else ''}; "
                           "name it with --qrels-file")
        qrels = str(found[0])
    if runs is None:
        if not (root / "runs").is_dir():
            raise IrwError(f"{directory}: expected a directory 'runs' holding the run files; "
                           "name it with --runs-dir")
        runs = str(root / "runs")
    if meta is None:
        found = [p for p in entries if p.is_file() and p.name.lower().endswith(".tsv")]
        if len(found) > 1:
            raise IrwError(f"{directory}: several metadata files "
                           f"({', '.join(p.name for p in found)}); name one with --meta")
        meta = str(found[0]) if found else None
    return {"qrels": qrels, "runs": runs, "meta": meta}


@without_order
def load_collection(con, name: str, qrels_file: str, runs: Iterable[str], meta: str | None = None,
                    qrels_name: str | None = None, policy: str = "trec_eval", replace: bool = False,
                    extra_fields: bool = False, final=None, encoding: str = "utf-8",
                    description: str | None = None, implicit: bool = False, then=None,
                    kind: JudgmentKind = KINDS[GRADED]) -> dict:
    """Load a test collection -- its qrels, runs and run metadata -- as collection ``name``, in
    one final transaction (all or nothing). The qrels is named ``qrels_name`` (default:
    ``name``), its file of judgment kind ``kind``. ``con``, ``final`` and ``implicit`` as for
    :func:`load_runs`. ``then(con)``:
    work done in the same transaction once they are in (its result: the summary's ``then``),
    which a failure of it undoes with the load."""
    catalogue.check_collection_name(name)
    qrels_name = qrels_name or name
    qrels_files = expand_paths([qrels_file])
    run_files = expand_paths(runs, runs=True, encoding=encoding)

    def stage(bar) -> tuple[int, int]:
        qrels_comments = _stage_qrels(con, qrels_files, qrels_name, encoding, kind)
        return qrels_comments, _stage_runs(con, run_files, policy, extra_fields, encoding, name, bar)

    def write(staged: tuple[int, int]) -> dict:
        _insert_qrels(con, qrels_files, qrels_name, replace, description, name, kind)
        summary = _insert_runs(con, run_files, policy, replace, name)
        summary["comments"] = staged[1]
        summary["meta"] = _load_meta(con, meta, name) if meta else 0
        if then is not None:
            summary["then"] = then(con)
        summary["qrels"] = {"comments": staged[0]}
        return summary

    def after(summary: dict) -> dict:
        summary["qrels"] = {**_qrels_summary(con, qrels_name, name, kind), **summary["qrels"]}
        return summary

    return stage_and_write(con, stage, write, final=final, implicit=implicit, collection=name,
                           progress=run_files, after=after)
