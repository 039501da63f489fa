"""`irw correlate --matrix`: every cell equals the single-cell `irw correlate` of its two
conditions (fixtures and TREC-8), and `--of pvalues` equals an independent scipy computation."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
import shlex
import shutil
import warnings

import numpy as np
import pytest
from scipy import stats as sps

from conftest import FIXTURES, ROOT, cli_for, strict_orders, tie_breakings, yilmaz_tau_ap
from irwarehouse import measures, runsets, schema, significance
from irwarehouse.engine import evaluation

STATISTICS = ["kendall_tau", "kendall_tau_a", "tau_ap", "rbo", "pearson"]
MEASURES = ["AP", "P@10", "nDCG(discount=jk)@10"]


@pytest.fixture()
def pools(cli):
    """The fixtures with two depth pools: depth 5 of all runs, depth 3 of the pooled runs."""
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fx")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    cli("pool", "depth", "--name", "fx-d5", "--depth", "5")
    cli("pool", "depth", "--name", "fx-d3", "--depth", "3", "--runs", "pooled")
    return cli


def matrix_cells(cli, *args) -> list[dict]:
    return json.loads(cli("correlate", "--matrix", *args, "--format", "json").stdout)


@pytest.fixture()
def evaluated_once(monkeypatch):
    """Let the single-cell `correlate` reuse each (qrels, measure)'s scores once computed:
    the scores come from the engine, one measure at a time, exactly as a fresh call would
    compute them; everything after the evaluation is the command's own code."""
    original = significance.score_matrices
    cache = {}

    def score_matrices(con, qrels, wanted, run_ids, topics="qrels", store=True, by="run", ties=None):
        assert by == "run" and ties is None
        out = {}
        for m in wanted:
            key = (qrels, str(m), tuple(run_ids), topics)
            if key not in cache:
                cache[key] = original(con, qrels, [m], run_ids, topics, store=False)[str(m)]
            out[str(m)] = cache[key]
        return out

    monkeypatch.setattr(significance, "score_matrices", score_matrices)


def check_against_single_cells(db_path, cells, qrels, run_spec="all"):
    con = schema.connect(db_path)
    try:
        run_ids = runsets.resolve(con, run_spec)
        by_cell = {}
        for c in cells:
            by_cell.setdefault((c["measure_a"], c["qrels_a"], c["measure_b"], c["qrels_b"]), {})[c["statistic"]] = c
        conditions = [(str(measures.parse(m)), q) for m in MEASURES for q in qrels]
        assert set(by_cell) == {(*a, *b) for a, b in itertools.product(conditions, repeat=2)}
        for (ma, qa), (mb, qb) in itertools.product(conditions, repeat=2):
            single = significance.correlate(con, measures.parse(ma), qa, measures.parse(mb), qb, run_ids)
            for name, cell in by_cell[(ma, qa, mb, qb)].items():
                assert cell["value"] == pytest.approx(single[name], abs=1e-12, nan_ok=True), (ma, qa, mb, qb, name)
                assert (cell["topics"], cell["items"]) == (single["topics"], single["n_systems"])
    finally:
        con.close()


def test_every_cell_equals_the_single_command(pools, evaluated_once):
    """3 measures x 3 qrels: all 81 cells of every statistic."""
    qrels = ["fx", "fx-d5", "fx-d3"]
    args = [a for m in MEASURES for a in ("-m", m)] + [a for q in qrels for a in ("-q", q)]
    cells = matrix_cells(pools, *args, *[a for s in STATISTICS for a in ("-s", s)])
    assert len(cells) == 5 * 81
    check_against_single_cells(pools.db_path, cells, qrels)


def test_cells_equal_real_single_calls(pools):
    """A few cells against the real `irw correlate` command: a diagonal cell, the same qrels,
    the same measure and both different, in both directions (tau_AP is asymmetric)."""
    cells = matrix_cells(pools, "-m", "AP", "-m", "P@10", "-q", "fx", "-q", "fx-d3",
                         *[a for s in STATISTICS for a in ("-s", s)])
    value = {(c["measure_a"], c["qrels_a"], c["measure_b"], c["qrels_b"], c["statistic"]): c["value"] for c in cells}
    for ma, qa, mb, qb in [("AP", "fx", "AP", "fx"), ("AP", "fx", "P@10", "fx"), ("P@10", "fx-d3", "P@10", "fx"),
                           ("P@10", "fx", "P@10", "fx-d3"), ("AP", "fx-d3", "P@10", "fx")]:
        row = json.loads(pools("correlate", "-m", ma, "-m", mb, "--qrels", qa, "--qrels-b", qb,
                               "--format", "json").stdout)[0]
        for name in STATISTICS:
            assert value[(ma, qa, mb, qb, name)] == pytest.approx(row[name], abs=1e-12), (ma, qa, mb, qb, name)
    assert value[("AP", "fx", "P@10", "fx-d3", "tau_ap")] != value[("P@10", "fx-d3", "AP", "fx", "tau_ap")]


def per_topic(db_path, measure, qrels):
    con = schema.connect(db_path, read_only=True)
    runs = runsets.resolve(con, "all")
    per = evaluation.evaluate(con, qrels, [measures.parse(measure)], runs, store=False).df()
    con.close()
    return per.pivot(index="run_id", columns="topic", values="value").reindex(runs).to_numpy()


def independent_pvalue_cells(db_path, wanted, qrels) -> dict:
    p = {}
    for m, q in itertools.product(wanted, qrels):
        X = per_topic(db_path, m, q)
        values = []
        for i, j in itertools.combinations(range(len(X)), 2):
            d = X[i] - X[j]
            if d.std() <= 1e-10 * max(np.abs(X[i]).max(), np.abs(X[j]).max()):
                values.append(np.nan)  # SPEC: zero variance, no p-value
            else:
                values.append(sps.ttest_rel(X[i], X[j]).pvalue)
        p[(m, q)] = np.array(values)
    return p


def test_pvalue_orderings_equal_scipy(pools):
    """tau-b between the orderings of the 28 run pairs by paired t-test p-value; P@3 has
    pairs whose differences have zero variance (undefined, left out) and ties."""
    qrels, wanted = ["fx", "fx-d3"], ["AP", "P@10", "P@3"]
    cells = matrix_cells(pools, *[a for m in wanted for a in ("-m", m)], *[a for q in qrels for a in ("-q", q)],
                         "--of", "pvalues")
    assert len(cells) == 36 and {c["statistic"] for c in cells} == {"kendall_tau"}
    p = independent_pvalue_cells(pools.db_path, wanted, qrels)
    assert np.isnan(p[("P@3", "fx")]).sum() == 3
    for c in cells:
        a, b = p[(c["measure_a"], c["qrels_a"])], p[(c["measure_b"], c["qrels_b"])]
        keep = ~(np.isnan(a) | np.isnan(b))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = sps.kendalltau(a[keep], b[keep]).statistic
        assert c["value"] == pytest.approx(expected, abs=1e-12), c
        assert c["items"] == keep.sum() and c["topics"] == 5 and c["of"] == "pvalues"


def test_pvalue_orderings_tau_a_and_tau_ap(pools):
    """tau-a and tau_AP between p-value orderings (the smallest p-value on top), against
    pair-by-pair counts and the definition of tau_AP on strict orderings, averaged over every
    way to break the ties of both orderings where there are few."""
    qrels, wanted = ["fx", "fx-d3"], ["AP", "nDCG@10", "P@3"]
    cells = matrix_cells(pools, *[a for m in wanted for a in ("-m", m)], *[a for q in qrels for a in ("-q", q)],
                         "--of", "pvalues", "-s", "kendall_tau_a", "-s", "tau_ap")
    assert len(cells) == 72 and {c["statistic"] for c in cells} == {"kendall_tau_a", "tau_ap"}
    p = independent_pvalue_cells(pools.db_path, wanted, qrels)
    checked = 0
    for c in cells:
        a, b = p[(c["measure_a"], c["qrels_a"])], p[(c["measure_b"], c["qrels_b"])]
        keep = ~(np.isnan(a) | np.isnan(b))
        a, b = a[keep], b[keep]
        assert c["items"] == keep.sum()
        if c["statistic"] == "kendall_tau_a":
            concordance = sum(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j])
                              for i, j in itertools.combinations(range(a.size), 2))
            assert c["value"] == pytest.approx(concordance / (a.size * (a.size - 1) / 2), abs=1e-12), c
        elif tie_breakings(a) * tie_breakings(b) <= 5000:
            # scipy's p-values may differ from irw's in the last bits: equal within 1e-12 is a tie
            ra, rb = np.round(-a, 12), np.round(-b, 12)
            expected = np.mean([yilmaz_tau_ap(x, y) for x in strict_orders(ra) for y in strict_orders(rb)])
            assert c["value"] == pytest.approx(expected, abs=1e-9), c
            checked += 1
    assert checked >= 16  # every cell without P@3's tied p-values, and some with
    value = {(c["measure_a"], c["qrels_a"], c["measure_b"], c["qrels_b"], c["statistic"]): c["value"] for c in cells}
    assert value[("AP", "fx", "nDCG@10", "fx", "tau_ap")] != value[("nDCG@10", "fx", "AP", "fx", "tau_ap")]


def test_save_and_read_only(pools):
    def count(table):
        return json.loads(pools("sql", f"SELECT count(*) AS n FROM {table}", "--format", "json").stdout)[0]["n"]

    scores = count("scores")
    table = pools("correlate", "--matrix", "-m", "AP", "-m", "P@10", "-q", "fx", "-q", "fx-d5").stdout
    assert table.splitlines()[0].split() == ["statistic", "#", "condition", "1", "2", "3", "4"]
    assert "AP | fx-d5" in table and count("correlation_matrices") == 0 and count("scores") == scores
    saved = pools("correlate", "--matrix", "-m", "AP", "-m", "P@10", "-q", "fx", "-q", "fx-d5", "--save", "m1")
    assert "saved 48 cells in correlation_matrices as 'm1'" in saved.stderr
    rows = json.loads(pools("sql", "SELECT * FROM correlation_matrices ORDER BY statistic, measure_a, qrels_a, "
                                   "measure_b, qrels_b", "--format", "json").stdout)
    cells = matrix_cells(pools, "-m", "AP", "-m", "P@10", "-q", "fx", "-q", "fx-d5")
    key = ("of", "measure_a", "qrels_a", "measure_b", "qrels_b", "statistic", "value", "topics", "items")
    assert sorted([tuple(r[k] for k in key) for r in rows]) == sorted([tuple(c[k] for k in key) for c in cells])
    assert rows[0]["name"] == "m1" and json.loads(rows[0]["params"])["qrels"] == ["fx", "fx-d5"]
    pools("correlate", "--matrix", "-m", "AP", "--of", "pvalues", "--save", "m1")  # replaces m1
    assert count("correlation_matrices") == 1


def test_conditions_with_other_topics(pools, tmp_path):
    """A qrels with fewer topics: every cell uses the topics all conditions share, and says so."""
    lines = [line for line in (FIXTURES / "qrels.txt").read_text().splitlines() if line.split()[0] <= "103"]
    (tmp_path / "q3").write_text("\n".join(lines) + "\n")
    pools("load", "qrels", tmp_path / "q3", "--name", "three")
    result = pools("correlate", "--matrix", "-m", "AP", "-q", "fx", "-q", "three", "--format", "json")
    assert "every cell uses the 3 topics they all share (up to 2 left out of a condition)" in result.stderr
    cell = [c for c in json.loads(result.stdout) if c["qrels_a"] == "fx" and c["qrels_b"] == "three"
            and c["statistic"] == "kendall_tau"][0]
    # the same as the single command, whose pair shares those 3 topics
    single = json.loads(pools("correlate", "-m", "AP", "-q", "fx", "--qrels-b", "three", "--format", "json").stdout)[0]
    assert cell["topics"] == single["topics"] == 3 and cell["value"] == pytest.approx(single["kendall_tau"])


def test_conditions_in_the_papers_layout(pools):
    """A list of conditions (a measure at a qrels each, in the order given) gives the cells of
    the full matrix for those pairs; --layout lower prints them below the diagonal, rows and
    columns the conditions, in table, csv, markdown and latex."""
    conditions = ["AP@5:fx-d5", "P@10:fx", "AP:fx", "nDCG(discount=jk)@10:fx-d3"]
    args = [a for c in conditions for a in ("-c", c)]
    cells = matrix_cells(pools, *args, *[a for s in STATISTICS for a in ("-s", s)])
    full = matrix_cells(pools, "-m", "AP@5", "-m", "P@10", "-m", "AP", "-m", "nDCG(discount=jk)@10",
                        "-q", "fx", "-q", "fx-d5", "-q", "fx-d3", *[a for s in STATISTICS for a in ("-s", s)])
    key = ("measure_a", "qrels_a", "measure_b", "qrels_b", "statistic")
    by_key = {tuple(c[k] for k in key): c for c in full}
    pairs = [tuple(c.split(":")) for c in conditions]
    assert [(c["measure_a"], c["qrels_a"]) for c in cells[::len(pairs)]][:len(pairs)] == pairs
    assert len(cells) == len(STATISTICS) * len(pairs) ** 2
    for c in cells:
        # the same numbers: each condition over the topics all conditions share (here all)
        assert c["value"] == pytest.approx(by_key[tuple(c[k] for k in key)]["value"], abs=1e-12, nan_ok=True)
    value = {tuple(c[k] for k in key): c["value"] for c in cells}
    names = ["AP@5 | fx-d5", "P@10 | fx", "AP | fx", "nDCG(discount=jk)@10 | fx-d3"]

    def cell(statistic, a, b):
        return value[(*pairs[a], *pairs[b], statistic)]

    # the table: one statistic, so no statistic column; rows 2..4, columns 1..3
    table = pools("correlate", "--matrix", *args, "-s", "tau_ap", "--layout", "lower").stdout.splitlines()
    assert table[0].split("  ")[0] == "condition" and [n in table[0] for n in names] == [True, True, True, False]
    assert [line.split("  ")[0].strip() for line in table[2:]] == names[1:]
    assert table[2].split()[-1] == f"{cell('tau_ap', 1, 0):.4f}"  # row 2, column 1; the rest blank
    assert table[4].split()[-3:] == [f"{cell('tau_ap', 3, b):.4f}" for b in range(3)]
    csv_rows = list(csv.reader(io.StringIO(pools("correlate", "--matrix", *args, "-s", "kendall_tau", "-s", "tau_ap",
                                                  "--layout", "lower", "--format", "csv").stdout)))
    assert csv_rows[0] == ["statistic", "condition", *names[:3]]
    assert len(csv_rows) == 1 + 2 * 3
    for r, row in enumerate(csv_rows[1:]):
        statistic, a = row[0], r % 3 + 1
        assert row[1] == names[a] and statistic == ("kendall_tau" if r < 3 else "tau_ap")
        for b in range(3):
            assert row[2 + b] == ("" if b >= a else repr(cell(statistic, a, b)))
    md = pools("correlate", "--matrix", *args, "-s", "rbo", "--layout", "lower", "--format", "markdown").stdout
    lines = md.splitlines()
    assert lines[0] == r"| condition | AP@5 \| fx-d5 | P@10 \| fx | AP \| fx |"
    assert lines[1] == "| --- | ---: | ---: | ---: |"
    assert lines[2] == rf"| P@10 \| fx | {cell('rbo', 1, 0):.4f} |  |  |"
    assert lines[4] == r"| nDCG(discount=jk)@10 \| fx-d3 | " + " | ".join(f"{cell('rbo', 3, b):.4f}" for b in range(3)) + " |"
    tex = pools("correlate", "--matrix", *args, "-s", "kendall_tau", "--layout", "lower", "--format", "latex").stdout
    lines = tex.splitlines()
    assert lines[:2] == [r"\begin{tabular}{lrrr}", r"\toprule"]
    assert lines[2] == r"condition & AP@5 \textbar{} fx-d5 & P@10 \textbar{} fx & AP \textbar{} fx \\"
    assert lines[4] == rf"P@10 \textbar{{}} fx & {cell('kendall_tau', 1, 0):.4f} &  &  \\"
    assert lines[-2:] == [r"\bottomrule", r"\end{tabular}"] and len(lines) == 4 + 3 + 2
    # json stays one row per cell; the full layout in markdown is the matrix of the table format
    assert matrix_cells(pools, *args, "--layout", "lower") == matrix_cells(pools, *args)
    md_full = pools("correlate", "--matrix", *args, "-s", "kendall_tau", "--format", "markdown").stdout.splitlines()
    assert md_full[0] == r"| statistic | \# | condition | 1 | 2 | 3 | 4 |" and len(md_full) == 2 + 4


@pytest.mark.parametrize("args, message", [
    (("--matrix", "-c", "AP:fx", "-c", "AP:fx"), "the condition AP:fx is given twice"),
    (("--matrix", "-c", "AP:fx", "-c", "AP"), "cannot read the condition 'AP': expected MEASURE:QRELS"),
    (("--matrix", "-c", "AP:fx", "-c", "AP:nope"), "unknown qrels 'nope'"),
    (("--matrix", "-c", "AP:fx", "-m", "P@10"), "give the conditions or -m and --qrels, not both"),
    (("--matrix", "-c", "Foo:fx"), "unknown measure 'Foo'"),
    (("--matrix", "-m", "AP", "--layout", "upper"), "unknown --layout 'upper'; valid: full, lower"),
    (("--matrix", "-m", "AP", "--format", "html"), "unknown format 'html'; valid: table, csv, json, markdown, latex"),
    (("-m", "AP", "--layout", "lower"), "--condition and --layout go with --matrix"),
    (("-m", "AP", "--format", "latex"), "unknown format 'latex'; valid: table, csv, json"),
    (("--matrix",), "no measure given"),
    (("--matrix", "-m", "AP", "--qrels-b", "fx"), "--qrels-b names the second qrels of one cell"),
    (("--matrix", "-m", "AP", "--of", "ranks"), "unknown --of 'ranks'; valid: scores, pvalues"),
    (("--matrix", "-m", "AP", "--of", "pvalues", "-s", "rbo"), "unknown statistic 'rbo' for --of pvalues"),
    (("--matrix", "-m", "AP", "-s", "spearman"), "unknown statistic 'spearman' for --of scores"),
    (("--matrix", "-m", "AP", "-q", "nope"), "unknown qrels 'nope'"),
    (("-m", "AP", "--of", "pvalues"), "--of, --statistic, --save, --condition and --layout go with --matrix"),
    (("-m", "AP", "-m", "P@10", "-m", "RR"), "one or two measures (more with --matrix)"),
    (("-m", "AP", "-q", "fx", "-q", "fx-d5"), "one --qrels and one --qrels-b (more with --matrix)"),
])
def test_bad_input(pools, args, message):
    result = pools("correlate", *args, ok=False)
    assert result.exit_code == 1 and message in result.stderr, result.stderr


def test_trec8_every_cell_equals_the_single_command(trec8_db, evaluated_once):
    """3 measures x 2 depth pools of all runs and the full qrels: 81 cells, 5 statistics;
    p-value orderings that must agree."""
    cli = cli_for(trec8_db)
    for depth in (10, 20):
        cli("pool", "depth", "--name", f"trec8-cm-d{depth}", "--depth", depth, "--replace")
    cli("refresh")
    qrels = ["trec8", "trec8-cm-d10", "trec8-cm-d20"]
    args = [a for m in MEASURES for a in ("-m", m)] + [a for q in qrels for a in ("-q", q)]
    cells = matrix_cells(cli, *args, *[a for s in STATISTICS for a in ("-s", s)])
    assert len(cells) == 5 * 81 and {c["items"] for c in cells} == {129} and {c["topics"] for c in cells} == {50}
    check_against_single_cells(trec8_db, cells, qrels)
    # p-value orderings: a depth-10 pool of all runs judges every run's top 10, so P@10 and
    # its p-values are those of the full qrels (tau 1); AP's change
    pvalues = {(c["measure_a"], c["qrels_a"], c["measure_b"], c["qrels_b"]): c for c in
               matrix_cells(cli, "-m", "P@10", "-m", "AP", "-q", "trec8", "-q", "trec8-cm-d10", "--of", "pvalues")}
    assert len(pvalues) == 16 and all(c["items"] <= 129 * 128 // 2 for c in pvalues.values())
    # Mer8Adtd1/Mer8Adtd2 and isa25t/isa50t score alike on every topic: no p-value, left out
    assert pvalues[("AP", "trec8", "AP", "trec8-cm-d10")]["items"] == 129 * 128 // 2 - 2
    assert pvalues[("P@10", "trec8", "P@10", "trec8-cm-d10")]["value"] == 1
    assert pvalues[("AP", "trec8", "AP", "trec8")]["value"] == 1
    assert 0.5 < pvalues[("AP", "trec8", "AP", "trec8-cm-d10")]["value"] < 1


def test_trec8_table3_as_the_statistics_guide_shows_it(trec8_db, tmp_path):
    """The commands docs/statistics.md shows for Webber et al.'s Table 3 on TREC-8, run as
    they are written: their output is the table the guide prints, and each of its 36 cells is
    Kendall's tau-b between the orderings of the 8,256 run pairs by scipy's paired t-test
    p-values on `irw eval`'s per-topic scores (pairs without a p-value left out)."""
    text = (ROOT / "docs" / "statistics.md").read_text()
    block = text.split("<!-- trec8-table3-commands -->", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    printed = text.split("<!-- trec8-table3-output -->\n", 1)[1].split("<!-- /trec8-table3-output -->", 1)[0]
    commands = [shlex.split(line) for line in block.splitlines() if line.strip()]
    assert [c[:3] for c in commands] == [["irw", "pool", "depth"]] * 2 + [["irw", "correlate", "--matrix"]]
    path = str(tmp_path / "trec8.duckdb")
    shutil.copy(trec8_db, path)  # the session's warehouse stays as the other tests expect it
    cli = cli_for(path)
    for command in commands[:-1]:
        cli(*command[1:])
    out = cli(*commands[-1][1:]).stdout
    assert out == printed
    conditions = [c for flag, c in zip(commands[-1], commands[-1][1:]) if flag == "-c"]
    assert len(conditions) == 9
    p = {}
    for condition in conditions:
        measure, qrels = condition.rsplit(":", 1)
        X = per_topic(path, measure, qrels)
        assert X.shape == (129, 50)
        i, j = np.triu_indices(len(X), k=1)
        D = X[i] - X[j]
        zero = D.std(axis=1) <= 1e-10 * np.maximum(np.abs(X[i]).max(axis=1), np.abs(X[j]).max(axis=1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = sps.ttest_rel(X[i], X[j], axis=1).pvalue
        p[condition] = np.where(zero, np.nan, values)
    rows = [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in out.splitlines()[2:]]
    names = [f"{measures.parse(c.rsplit(':', 1)[0])} \\| {c.rsplit(':', 1)[1]}" for c in conditions]
    assert [row[0] for row in rows] == names[1:]
    cells = 0
    for a, row in enumerate(rows, 1):
        assert len(row) == 9
        values = row[1:]
        for b in range(8):
            if b >= a:
                assert values[b] == ""
                continue
            pa, pb = p[conditions[a]], p[conditions[b]]
            keep = ~(np.isnan(pa) | np.isnan(pb))
            assert keep.sum() >= 8256 - 10  # a few pairs score alike on every topic
            assert float(values[b]) == pytest.approx(sps.kendalltau(pa[keep], pb[keep]).statistic, abs=5e-5), (a, b)
            cells += 1
    assert cells == 36
