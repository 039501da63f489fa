"""Write a synthetic archive K times the size of TREC-8, derived deterministically from it.

    python bench/make_synthetic.py --scale 10 --out /data/trec8x10 [--data ../shared/data/trec8]

For measuring loading and evaluation at scale. The archive has K x 129 runs and K x 6.28 M
lines, laid out like TREC-8 (``DIR/runs/input.<run_id>.gz``, ``DIR/qrels.trec8.gz``,
``DIR/runs.tsv``), so ``irw load qrels DIR/qrels.trec8.gz --name trec8`` and
``irw load runs DIR/runs --meta DIR/runs.tsv`` take it as they take TREC-8:

- copy 0 is the 129 real run files, copied unchanged;
- copy k = 1 .. K-1 of run R is run ``R-sk``: the same topics and documents, each topic's
  ranking locally shuffled (every document moves by a Gaussian displacement of sd 5 ranks
  before re-sorting), ranks renumbered 1, 2, ... and the run's score column kept in place
  (so scores stay descending down the ranking, ties included); lines are tab separated;
- every copy keeps its original's team and kind; only copy 0 is marked pooled, so the
  qrels (the official ones, unchanged) are still exactly the depth-100 pool of the pooled
  runs.

The shuffle of (run, copy, topic) is seeded from those names: the same command writes the
same archive, byte for byte. The output directory must not be inside this repository.

``--shape dl`` and ``--shape msmarco`` write instead one run file and its qrels shaped like
the two collections people evaluate single runs on most (plain text, space separated, as
Anserini and Pyserini write them; generated from seeded random numbers, no input data):

- ``dl`` (TREC Deep Learning 2019 passage ranking): ``DIR/qrels.dl.txt`` and
  ``DIR/run.dl.txt``: 43 topics x 1,000 documents; about 9,300 graded judgments (0-3,
  roughly the track's proportions), most of them of documents the run ranks high;
- ``msmarco`` (MS MARCO passage dev, small): ``DIR/qrels.msmarco.txt`` and
  ``DIR/run.msmarco.txt``: 6,980 queries x 1,000 documents (6,980,000 lines, about 270
  MB); about 7,440 judgments, all of grade 1 (one relevant passage per query, a few with
  two or three), the run retrieving 86 % of them at log-uniform ranks.

Query ids and passage ids are integers as in MS MARCO; scores have four decimals, so some
tie. The same command writes the same files, byte for byte.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import shutil
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "trec8"
DISPLACEMENT_SD = 5.0  # ranks


def _seed(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def read_run(path: Path) -> tuple[str, list[tuple[str, list[str], list[str]]]]:
    """(run id, [(topic, docnos, scores)]) in file order; the topics in order of first line."""
    topics: dict[str, tuple[list[str], list[str]]] = {}
    run_id = None
    with gzip.open(path, "rt") as f:
        for line in f:
            fields = line.split()
            if not fields:
                continue
            topic, _q0, docno, _rank, score, rid = fields[:6]
            run_id = run_id or rid
            docs, scores = topics.setdefault(topic, ([], []))
            docs.append(docno)
            scores.append(score)
    if run_id is None:
        raise SystemExit(f"{path}: empty run file")
    return run_id, [(t, d, s) for t, (d, s) in topics.items()]


def perturbed_lines(run_id: str, copy: int, topics) -> str:
    """The lines of copy ``copy`` >= 1 of a run."""
    new_id = f"{run_id}-s{copy}"
    out = []
    for topic, docs, scores in topics:
        rng = np.random.default_rng(_seed(run_id, copy, topic))
        key = np.arange(len(docs)) + rng.normal(0.0, DISPLACEMENT_SD, len(docs))
        order = np.argsort(key, kind="stable").tolist()
        out.extend(f"{topic}\tQ0\t{docs[d]}\t{r}\t{scores[r - 1]}\t{new_id}\n"
                   for r, d in enumerate(order, start=1))
    return "".join(out)


# --shape dl / msmarco: (topics, documents per topic)
SHAPES = {"dl": (43, 1000), "msmarco": (6980, 1000)}
DL_GRADES = (0.62, 0.16, 0.16, 0.06)  # shares of grades 0-3 among judgments ranked low
DL_GRADES_HIGH = (0.40, 0.20, 0.27, 0.13)  # ... among those the run ranks in its top 100
N_PASSAGES = 8_841_823  # MS MARCO's passage ids: 0 .. 8,841,822


def _topic_ids(rng, n: int) -> np.ndarray:
    """``n`` distinct query ids, in a random order (as in a query file)."""
    ids = np.unique(rng.integers(1, 1_200_000, int(n * 1.2)))
    rng.shuffle(ids)
    return ids[:n]


def _ranking(rng, n: int) -> tuple[np.ndarray, list[str]]:
    """``n`` distinct passage ids and their scores (descending, four decimals: some tie)."""
    docs = np.unique(rng.integers(0, N_PASSAGES, n + n // 4 + 16))
    rng.shuffle(docs)
    top = rng.uniform(12.0, 30.0)
    scores = top - np.cumsum(rng.exponential(8.0 / n, n))
    return docs[:n], [f"{s:.4f}" for s in scores]


def single_run(shape: str, out: Path) -> None:
    """The run and qrels files of ``--shape dl`` or ``msmarco`` (see the module's doc)."""
    n_topics, depth = SHAPES[shape]
    rng = np.random.default_rng(_seed(shape, "topics"))
    topics = _topic_ids(rng, n_topics)
    run_id = f"synthetic-{shape}"
    start = time.perf_counter()
    lines = judgments = 0
    with open(out / f"run.{shape}.txt", "w") as run, open(out / f"qrels.{shape}.txt", "w") as qrels:
        for topic in topics:
            rng = np.random.default_rng(_seed(shape, topic))
            docs, scores = _ranking(rng, depth)
            run.write("".join(f"{topic} Q0 {d} {r} {s} {run_id}\n"
                              for r, (d, s) in enumerate(zip(docs.tolist(), scores), start=1)))
            lines += depth
            if shape == "dl":
                # judged: about 130 of the top 200 (the higher, the likelier), 80 the run lacks
                n_in = int(rng.integers(60, 200))
                weights = 1.0 / np.arange(1, 201) ** 0.5
                picked = rng.choice(200, size=n_in, replace=False, p=weights / weights.sum())
                outside = np.setdiff1d(rng.integers(0, N_PASSAGES, int(rng.integers(30, 130))), docs)
                judged = np.concatenate([docs[picked], outside])
                # grades: documents the run ranks in its top 100 are likelier relevant
                high = np.concatenate([picked < 100, np.zeros(len(outside), bool)])
                grade = np.where(high, rng.choice(4, len(high), p=DL_GRADES_HIGH),
                                 rng.choice(4, len(high), p=DL_GRADES)).tolist()
            else:
                # one relevant passage (7 % of queries two or three); 86 % of them retrieved
                n_rel = 1 + int(rng.random() < 0.065) + int(rng.random() < 0.005)
                judged, grade = [], []
                for _ in range(n_rel):
                    if rng.random() < 0.857:
                        rank = min(int(np.exp(rng.uniform(0.0, np.log(depth + 1)))), depth)
                        doc = docs[rank - 1]
                    else:
                        doc = int(rng.integers(0, N_PASSAGES))
                    if doc not in judged:
                        judged.append(doc)
                        grade.append(1)
                judged = np.array(judged)
            qrels.write("".join(f"{topic} 0 {d} {g}\n" for d, g in zip(np.asarray(judged).tolist(), grade)))
            judgments += len(grade)
    print(f"wrote {run_id}: {lines:,} lines, and {judgments:,} judgments of {len(topics):,} "
          f"topics to {out} in {time.perf_counter() - start:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, help="K: the archive holds K x 129 runs (--shape trec8)")
    parser.add_argument("--shape", choices=("trec8", *SHAPES), default="trec8",
                        help="trec8: K x TREC-8's archive (the default); dl, msmarco: one run and its qrels")
    parser.add_argument("--out", required=True, help="output directory (created; outside the repository)")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="TREC-8 data directory")
    parser.add_argument("--compresslevel", type=int, default=1, help="gzip level of the run files (1-9)")
    args = parser.parse_args()
    out = Path(args.out).resolve()
    if out == ROOT or ROOT in out.parents:
        parser.error(f"--out {out} is inside the repository: choose a directory elsewhere")
    if args.shape != "trec8":
        out.mkdir(parents=True, exist_ok=True)
        single_run(args.shape, out)
        return
    if args.scale is None or args.scale < 1:
        parser.error("--scale K (at least 1) is needed for --shape trec8")
    data = Path(args.data)
    runs_dir = data / "runs"
    if not (data / "qrels.trec8.gz").is_file() or not runs_dir.is_dir():
        parser.error(f"no TREC-8 data at {data} (use --data)")
    (out / "runs").mkdir(parents=True, exist_ok=True)

    with open(data / "runs.tsv", newline="") as f:
        meta = {row["run_id"]: row for row in csv.DictReader(f, delimiter="\t")}
    start = time.perf_counter()
    files = sorted(runs_dir.glob("input.*.gz"))
    rows, lines = [], 0
    for n, path in enumerate(files, start=1):
        run_id, topics = read_run(path)
        m = meta.get(run_id, {})
        per_copy = sum(len(docs) for _, docs, _ in topics)
        for copy in range(args.scale):
            new_id = run_id if copy == 0 else f"{run_id}-s{copy}"
            target = out / "runs" / f"input.{new_id}.gz"
            if copy == 0:
                shutil.copyfile(path, target)
            else:
                # mtime=0: the same archive byte for byte on every run of the script
                with open(target, "wb") as raw, \
                        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=args.compresslevel,
                                      mtime=0, filename="") as gz:
                    gz.write(perturbed_lines(run_id, copy, topics).encode())
            lines += per_copy
            rows.append([new_id, m.get("team", run_id), m.get("kind", ""),
                         m.get("pooled", "false") if copy == 0 else "false"])
        if sys.stderr.isatty():
            print(f"\r{n}/{len(files)} runs, {lines:,} lines, {time.perf_counter() - start:.0f} s",
                  end="", file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    shutil.copyfile(data / "qrels.trec8.gz", out / "qrels.trec8.gz")
    with open(out / "runs.tsv", "w", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(["run_id", "team", "kind", "pooled"])
        writer.writerows(rows)
    print(f"wrote {len(rows):,} runs ({lines:,} lines) and the qrels to {out} "
          f"in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
