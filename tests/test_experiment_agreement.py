"""``irw experiment agreement`` (Shokouhi et al. 2009) and the vectorized measures on binary
relevance vectors it uses.

The hand case, N = 3 (AP with R = N = 3; DCG with 1/log2(i+1); P@10 divides by 10;
RBP(p) = (1 − p)(r1 + p r2 + p² r3)):

    vector  P@10  RBP(0.5)  AP      DCG                  RBP(0.8)
    000     0     0         0       0                    0
    100     1/10  1/2       1/3     1                    0.2
    010     1/10  1/4       1/6     1/log2(3) = .6309    0.16
    001     1/10  1/8       1/9     1/2                  0.128
    110     2/10  3/4       2/3     1 + .6309            0.36
    101     2/10  5/8       5/9     1.5                  0.328
    011     2/10  3/8       7/18    .6309 + .5           0.288
    111     3/10  7/8       1       2.1309               0.488

AP, DCG and RBP(0.8) order the 8 vectors identically: 000 < 001 < 010 < 100 < 011 < 101 <
110 < 111 -- they agree on all 28 pairs. RBP(0.5) orders them as binary numbers: it differs
from AP only on (100, 011) -> 27/28. P@10 ties the 3 pairs among one-relevant vectors and the
3 among two-relevant ones (6 disagreements with every measure without ties); against RBP(0.5)
also 100 (P .1, RBP .5) vs 011 (P .2, RBP .375) -> 21/28, against AP 22/28.
With Δ = 0.05: ties never disagree; P@10 vs RBP(0.5) disagree on (100, 011) only, both
differences (.1 and .125) exceed Δ -> 27/28; with Δ = 0.11 the P@10 difference .1 does not
-> 28/28. AP vs RBP(0.5) at Δ = 0.05: |ΔAP| = 1/18 > .05 -> 27/28; at Δ = 0.06 -> 28/28.
"""

from __future__ import annotations

import csv
import itertools
import json
import math

import numpy as np
import pytest

from conftest import FIXTURES
from irwarehouse import evaluate, loader
from irwarehouse.errors import IrwError
from irwarehouse.experiments import agreement as ag
from irwarehouse.experiments.vector_measures import all_vectors, binary_scores
from irwarehouse.measures import parse, parse_all

L3 = 1 / math.log2(3)
HAND = {  # vector: (P@10, RBP(0.5), AP, DCG, RBP(0.8))
    "000": (0.0, 0.0, 0.0, 0.0, 0.0),
    "100": (0.1, 1 / 2, 1 / 3, 1.0, 0.2),
    "010": (0.1, 1 / 4, 1 / 6, L3, 0.16),
    "001": (0.1, 1 / 8, 1 / 9, 0.5, 0.128),
    "110": (0.2, 3 / 4, 2 / 3, 1 + L3, 0.36),
    "101": (0.2, 5 / 8, 5 / 9, 1.5, 0.328),
    "011": (0.2, 3 / 8, 7 / 18, L3 + 0.5, 0.288),
    "111": (0.3, 7 / 8, 1.0, 1 + L3 + 0.5, 0.488),
}
NAMES = ["P@10", "RBP(p=0.5)", "AP", "DCG", "RBP(p=0.8)"]


def by_hand(a: int, b: int, delta: float) -> float:
    """The agreement rate of measures a and b (indices into NAMES) over the 28 pairs."""
    agree = 0
    pairs = list(itertools.combinations(HAND.values(), 2))
    for x, y in pairs:
        da, db = x[a] - y[a], x[b] - y[b]
        sa = 0 if abs(da) < 1e-12 else (1 if da > 0 else -1)
        sb = 0 if abs(db) < 1e-12 else (1 if db > 0 else -1)
        if delta == 0:
            agree += sa == sb
        else:
            agree += not (sa * sb < 0 and abs(da) > delta and abs(db) > delta)
    return agree / len(pairs)


def test_hand_table_and_counts():
    assert by_hand(0, 1, 0) == 21 / 28
    assert by_hand(0, 2, 0) == 22 / 28
    assert by_hand(1, 2, 0) == 27 / 28
    assert by_hand(2, 3, 0) == by_hand(2, 4, 0) == by_hand(3, 4, 0) == 1.0
    assert by_hand(0, 1, 0.05) == 27 / 28 and by_hand(0, 1, 0.11) == 1.0
    assert by_hand(1, 2, 0.05) == 27 / 28 and by_hand(1, 2, 0.06) == 1.0


def test_binary_scores_n3_by_hand():
    V = np.array([[int(c) for c in key] for key in HAND])
    S = binary_scores(V, parse_all(NAMES))
    expected = np.array(list(HAND.values())).T
    np.testing.assert_allclose(S, expected, atol=1e-12)


def test_all_vectors():
    V = all_vectors(3)
    assert V.shape == (8, 3)
    assert len({tuple(v) for v in V}) == 8


def test_vector_measures_equal_sql(con, tmp_path):
    """Synthetic rankings loaded as a run + qrels (R = N per topic: the relevant documents
    not in the ranking are judged but not retrieved) score the same under the SQL engine."""
    N = 6
    V = all_vectors(N)
    run, qrels = [], []
    for t, v in enumerate(V):
        topic = f"t{t:02d}"
        for i, rel in enumerate(v, 1):
            run.append(f"{topic} Q0 d{i} {i} {N + 1 - i} synth")
            qrels.append(f"{topic} 0 d{i} {rel}")
        for x in range(N - int(v.sum())):
            qrels.append(f"{topic} 0 extra{x} 1")
    (tmp_path / "run").write_text("\n".join(run) + "\n")
    (tmp_path / "qrels").write_text("\n".join(qrels) + "\n")
    loader.load_qrels(con, [str(tmp_path / "qrels")], "synth")
    loader.load_runs(con, [str(tmp_path / "run")])
    names = NAMES + ["P@4", "P", "R@3", "SP", "AP@4", "RR", "RR@2", "Success@2", "nDCG@4", "nDCG",
                     "DCG(discount=jk)@5", "RBP(p=0.95)@4"]
    parsed = parse_all(names)
    sql = evaluate.evaluate(con, "synth", parsed, ["synth"], store=False)
    assert sql["topic"].nunique() == len(V)
    S = binary_scores(V, parsed)
    for k, m in enumerate(parsed):
        got = sql[sql["measure"] == str(m)].set_index("topic")["value"]
        want = {f"t{t:02d}": S[k, t] for t in range(len(V))}
        assert got.to_dict() == pytest.approx(want, abs=1e-12), str(m)


def test_unsupported_measure():
    with pytest.raises(IrwError, match="cannot be computed on synthetic"):
        binary_scores(np.zeros((1, 3)), parse("Bpref"))
    with pytest.raises(IrwError, match="no meaning"):
        binary_scores(np.zeros((1, 3)), parse("DCG(gains={1:2})"))


def test_exact_rates_weights_are_pair_multiplicities():
    """A vector of multiplicity 2 counts like two copies of it (pairs of the copies excluded)."""
    S = np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 1.0]])
    rates, total = ag.exact_rates(S, [0.0], np.array([1, 2, 1]))
    # pairs: (0,1) x2 agree, (0,2) x1 agree, (1,2) x2 disagree -> 3/5
    assert total == 5 and rates[0][0] == pytest.approx(3 / 5)


def _rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


def test_agreement_n3_cli(cli, tmp_path):
    out = tmp_path / "out"
    result = cli("experiment", "agreement", "--n", "3", "--delta", "0", "--delta", "0.05",
                 "--out", out, "--format", "json", *sum((["-m", n] for n in NAMES), []))
    rows = json.loads(result.stdout)
    assert len(rows) == 2 * 10
    assert set(rows[0]) == set(ag.MAIN_COLUMNS)
    for r in rows:
        a, b = NAMES.index(r["measure_a"]), NAMES.index(r["measure_b"])
        assert r["agreement"] == pytest.approx(by_hand(a, b, r["delta"]), abs=1e-12), r
        assert (r["n"], r["mode"], r["pairs"], r["method"]) == (3, "uniform", 28, "exact")
    assert (out / "agreement_agreement.csv").exists()
    png = (out / "agreement_matrix.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    report = (out / "report.md").read_text()
    assert "## Metric agreement (Shokouhi et al. 2009)" in report
    assert "agreement_matrix.png" in report
    # the table is in the warehouse too
    stored = cli("sql", "SELECT count(*) AS n FROM exp_agreement_agreement", "--format", "json")
    assert json.loads(stored.stdout) == [{"n": 20}]


def test_agreement_n10_exact_and_monte_carlo(cli, tmp_path):
    rows = json.loads(cli("experiment", "agreement", "--n", "10", "--out", tmp_path / "a",
                          "--format", "json").stdout)
    assert {r["pairs"] for r in rows} == {523776}
    assert {(r["measure_a"], r["measure_b"]) for r in rows} == set(
        itertools.combinations(ag.DEFAULT_MEASURES, 2))
    # Monte Carlo over random pairs converges to the exact rate
    exact = {(r["measure_a"], r["measure_b"]): r["agreement"] for r in rows}
    mc = json.loads(cli("experiment", "agreement", "--n", "10", "--samples", "40000", "--seed", "3",
                        "--out", tmp_path / "b", "--format", "json").stdout)
    for r in mc:
        assert r["method"] == "monte-carlo" and 39900 < r["pairs"] <= 40000
        assert abs(r["agreement"] - exact[(r["measure_a"], r["measure_b"])]) < 5 * r["std_error"]
    again = json.loads(cli("experiment", "agreement", "--n", "10", "--samples", "40000", "--seed", "3",
                           "--out", tmp_path / "c", "--format", "json").stdout)
    assert again == mc  # deterministic given the seed


def test_sampled_mode_against_irw_eval(cli, tmp_path):
    """Sampled mode over the fixture runs, recomputed pair by pair from `irw eval` per-topic
    scores (RBP(0.5) over the top 10, binary, identifies the vector uniquely)."""
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    out = tmp_path / "out"
    rows = json.loads(cli("experiment", "agreement", "--mode", "sampled", "--n", "10", "-m", "P@10",
                          "-m", "RBP(p=0.5)", "-m", "AP", "--out", out, "--format", "json").stdout)
    per = json.loads(cli("eval", "-m", "P@10", "-m", "RBP(p=0.5,rel=1)@10", "--per-topic",
                         "--topics", "run", "--format", "json").stdout)
    scores: dict = {}
    for r in per:
        if r["topic"] != "106":  # no relevant document: not in the topic set
            scores.setdefault((r["run_id"], r["topic"]), {})[r["measure"]] = r["value"]
    items = list(scores.values())
    assert len(items) == 39  # 8 runs x 5 topics, delta2 lacks 104
    agree = pairs = 0
    for x, y in itertools.combinations(items, 2):
        rx, ry = x["RBP(p=0.5,rel=1)@10"], y["RBP(p=0.5,rel=1)@10"]
        if rx == ry:
            continue  # same relevance vector: not a pair
        pairs += 1
        dp = x["P@10"] - y["P@10"]
        agree += np.sign(round(dp, 12)) == np.sign(rx - ry)
    row = next(r for r in rows if (r["measure_a"], r["measure_b"]) == ("P@10", "RBP(p=0.5)"))
    assert row["pairs"] == pairs and row["method"] == "exact"
    assert row["agreement"] == pytest.approx(agree / pairs, abs=1e-12)
    vectors = _rows(out / "agreement_vectors.csv")
    assert vectors[0]["rankings"] == "39"
    frequent = _rows(out / "agreement_frequent_vectors.csv")
    assert frequent and sum(int(r["rankings"]) for r in frequent) <= 39


def test_bad_options(cli, tmp_path):
    result = cli("experiment", "agreement", "--mode", "nope", "--out", tmp_path, ok=False)
    assert result.exit_code == 1 and "unknown mode" in result.output
    result = cli("experiment", "agreement", "-m", "Bpref", "-m", "AP", "--out", tmp_path, ok=False)
    assert result.exit_code == 1 and "synthetic" in result.output
    result = cli("experiment", "agreement", "--mode", "sampled", "--out", tmp_path, ok=False)
    assert result.exit_code == 1 and "no qrels" in result.output
