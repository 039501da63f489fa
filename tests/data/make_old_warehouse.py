"""Write ``tests/data/warehouse-v6.duckdb.xz``: a warehouse written by the landed irwarehouse
of schema version 6, for the test that an older warehouse opens, migrates and keeps what it
holds (tests/test_migrations.py).

    python tests/data/make_old_warehouse.py [--commit 912c9f4]

The commit's package (``irwarehouse/`` and ``sql/``, by ``git archive``) is extracted into a
temporary directory and run, in a process of its own, with the bundled fixtures: the runs,
metadata and qrels loaded, scores for two qrels, a derived qrels, a factor set, and saved
discriminative power, pair tests and a correlation matrix -- something in every table the
schema's later versions change. The file is compressed with xz (10 MB of DuckDB blocks, 64 KB
compressed). The commands are written here, not taken from the tests, so that the file can
be made again the same way whatever the tests later become.
"""

from __future__ import annotations

import argparse
import lzma
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
OUT = Path(__file__).resolve().parent / "warehouse-v6.duckdb.xz"
LANDED = "912c9f4"  # the last commit of schema version 6

COMMANDS = [
    ["load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture"],
    ["load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv"],
    ["eval", "-m", "AP", "-m", "P@10", "-m", "nDCG(discount=jk)@10", "-m", "RBP(p=0.8)", "-m", "Bpref"],
    ["pool", "leave-out", "--team", "alpha", "--runs", "pooled", "--depth", "10"],
    ["eval", "-m", "AP", "-m", "P@10", "--qrels", "fixture-lo-alpha"],
    ["standardize", "factors", "-m", "AP", "--name", "self"],
    ["discpower", "-m", "AP", "--test", "t", "--save", "fixture-t"],
    ["pvalues", "-m", "AP", "--save", "fixture-ap"],
    ["correlate", "--matrix", "-m", "AP", "-m", "P@10", "--save", "fixture-matrix"],
]

RUN = """
import sys
from irwarehouse.cli import app
for args in %r:
    try:
        app(["--db", sys.argv[1], *args], prog_name="irw")
    except SystemExit as exc:
        if exc.code:
            raise
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", default=LANDED)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "code.tar"
        subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), args.commit,
                        "irwarehouse", "sql"], check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(Path(tmp) / "code", filter="data")
        db = Path(tmp) / "warehouse.duckdb"
        script = RUN % ([[str(a) for a in c] for c in COMMANDS],)
        env = {"PYTHONPATH": str(Path(tmp) / "code"), "PATH": "/usr/bin:/bin"}
        subprocess.run([sys.executable, "-c", script, str(db)], check=True, cwd=tmp, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(db, "rb") as src, lzma.open(OUT, "wb", preset=9 | lzma.PRESET_EXTREME) as dst:
            shutil.copyfileobj(src, dst)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes) with irwarehouse at {args.commit}")


if __name__ == "__main__":
    main()
