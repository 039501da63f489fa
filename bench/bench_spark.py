"""Spark in local mode against DuckDB: the same evaluation and pools, as the commands a user types.

Each step is an `irw` command in a subprocess of its own, timed (wall clock). On a warehouse holding an archive (TREC-8 by
default, or one written by bench/make_synthetic.py, loaded first unless --db):

    irw export DIR                                       the Parquet files Spark reads
    irw eval -m (seven measures), twice                  DuckDB: first (materializes the base), warm
    irw spark pool stats collection --data DIR           Spark: start, read the tables, one small job
    irw spark eval --data DIR -m (seven measures)        Spark: the same scores, as Parquet
    irw pool leave-out --all-teams --depth 100           DuckDB: every team's leave-out qrels
    irw spark pool leave-out --all-teams --depth 100     Spark: the same, as Parquet

and checks that Spark's scores equal DuckDB's (largest difference per topic) and its qrels
are DuckDB's.

    python bench/bench_spark.py [--data DIR] [--db FILE] [--master local[2]] [--conf K=V] [--dir TMPDIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_DATA, machine  # noqa: E402

MEASURES = ["AP", "P@10", "nDCG@10", "nDCG(discount=jk)@1000", "RBP(p=0.8)", "Bpref", "RPrec"]


def run(cmd: list[str], env: dict) -> float:
    """Wall seconds of one command; its failure stops the benchmark."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed: {err.read().decode(errors='replace').strip()[-2000:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="archive: qrels.trec8.gz, runs/, runs.tsv")
    parser.add_argument("--db", help="a warehouse already holding the archive as qrels 'trec8' (not changed)")
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    parser.add_argument("--conf", action="append", default=[], help="a Spark property KEY=VALUE for irw spark")
    parser.add_argument("--dir", help="where the temporary files go (default: the system's)")
    args = parser.parse_args()
    print(machine())
    import pyspark

    print(f"pyspark {pyspark.__version__}, master {args.master} {' '.join(args.conf)}")
    irw = str(Path(sys.executable).with_name("irw"))
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        tmp = Path(tmp)
        path = tmp / "bench.duckdb"
        env = {**os.environ, "IRW_DB": str(path)}
        if args.db:
            shutil.copy(args.db, path)
        else:
            data = Path(args.data)
            wall = run([irw, "load", "qrels", str(data / "qrels.trec8.gz"), "--name", "trec8"], env)
            wall2 = run([irw, "load", "runs", str(data / "runs"), "--meta", str(data / "runs.tsv")], env)
            print(f"setup: loaded {data} in {wall + wall2:.1f} s")
        export = tmp / "export"
        m = [a for name in MEASURES for a in ("-m", name)]
        spark = ["--master", args.master, *[a for c in args.conf for a in ("--conf", c)]]
        steps = [
            ("irw export", [irw, "export", str(export)]),
            ("DuckDB: irw eval (first)", [irw, "eval", *m, "--format", "csv"]),
            ("DuckDB: irw eval (warm)", [irw, "eval", *m, "--format", "csv"]),
            ("Spark: start and read (pool stats collection)",
             [irw, "spark", "pool", "stats", "collection", "--data", str(export), *spark]),
            ("Spark: irw spark eval", [irw, "spark", "eval", *m, "--data", str(export),
                                       "--out", str(tmp / "scores"), *spark]),
            ("DuckDB: irw pool leave-out --all-teams",
             [irw, "pool", "leave-out", "--all-teams", "--runs", "pooled", "--depth", "100", "--prefix", "lo-"]),
            ("Spark: irw spark pool leave-out --all-teams",
             [irw, "spark", "pool", "leave-out", "--all-teams", "--runs", "pooled", "--depth", "100",
              "--prefix", "lo-", "--data", str(export), "--out", str(tmp / "pools"), *spark]),
        ]
        for label, cmd in steps:
            print(f"{label:48s} {run(cmd, env):7.1f} s", flush=True)
        import duckdb

        con = duckdb.connect(str(path), read_only=True)
        diff, n = con.execute(
            f"SELECT max(abs(s.value - d.value)), count(*) FROM read_parquet('{tmp}/scores/scores.parquet/*.parquet') s "
            "JOIN scores d USING (qrels, run_id, topic, measure)").fetchone()
        total = con.execute(f"SELECT count(*) FROM read_parquet('{tmp}/scores/scores.parquet/*.parquet')").fetchone()[0]
        print(f"scores: {total:,} from Spark, {n:,} matched in the warehouse, largest difference {diff:.3g}")
        only = con.execute(
            f"SELECT count(*) FROM (SELECT qrels, topic, docno, rel FROM read_parquet('{tmp}/pools/qrels.parquet/*.parquet') "
            "EXCEPT ALL SELECT qrels, topic, docno, rel FROM qrels WHERE starts_with(qrels, 'lo-')) "
            "UNION ALL SELECT count(*) FROM (SELECT qrels, topic, docno, rel FROM qrels WHERE starts_with(qrels, 'lo-') "
            f"EXCEPT ALL SELECT qrels, topic, docno, rel FROM read_parquet('{tmp}/pools/qrels.parquet/*.parquet'))").fetchall()
        print(f"leave-out qrels: {'identical' if only == [(0,), (0,)] else f'DIFFERENT {only}'}")
        con.close()


if __name__ == "__main__":
    main()
