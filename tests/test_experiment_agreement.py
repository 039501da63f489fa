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
Those are the absolute reading (a difference exceeds Δ); under the relative one (it exceeds
Δ · the larger score) the cases above come out the same, but at Δ = 0.15 they part: on
(100, 011) P@10's .1 does not exceed .15 but does exceed .15 · .2 = .03, and RBP(0.5)'s .125
exceeds .15 · .5 = .075 -> P@10 vs RBP(0.5) 28/28 absolute, 27/28 relative; likewise
RBP(0.8)'s .088 (.2 vs .288) exceeds .15 · .288 = .0432 -> RBP(0.5) vs RBP(0.8) 28/28 and
27/28; AP's 1/18 = .0556 does not exceed .15 · 7/18 = .0583 -> AP vs RBP(0.5) 28/28 in both.
"""

from __future__ import annotations

import csv
import gzip
import itertools
import json
import math

import numpy as np
import pytest

from conftest import FIXTURES
from irwarehouse import schema
from irwarehouse.engine import evaluation, loading
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


def by_hand(a: int, b: int, delta: float, fuzziness: str = "absolute") -> float:
    """The agreement rate of measures a and b (indices into NAMES) over the 28 pairs."""
    agree = 0
    pairs = list(itertools.combinations(HAND.values(), 2))
    for x, y in pairs:
        da, db = x[a] - y[a], x[b] - y[b]
        sa = 0 if abs(da) < 1e-12 else (1 if da > 0 else -1)
        sb = 0 if abs(db) < 1e-12 else (1 if db > 0 else -1)
        if fuzziness == "relative":
            ta, tb = delta * max(x[a], y[a]), delta * max(x[b], y[b])  # scores are >= 0
        else:
            ta = tb = delta
        if delta == 0:
            agree += sa == sb
        else:
            agree += not (sa * sb < 0 and abs(da) > ta and abs(db) > tb)
    return agree / len(pairs)


def test_hand_table_and_counts():
    assert by_hand(0, 1, 0) == 21 / 28
    assert by_hand(0, 2, 0) == 22 / 28
    assert by_hand(1, 2, 0) == 27 / 28
    assert by_hand(2, 3, 0) == by_hand(2, 4, 0) == by_hand(3, 4, 0) == 1.0
    assert by_hand(0, 1, 0.05) == 27 / 28 and by_hand(0, 1, 0.11) == 1.0
    assert by_hand(1, 2, 0.05) == 27 / 28 and by_hand(1, 2, 0.06) == 1.0
    for a, b in itertools.combinations(range(5), 2):  # Δ = 0.05: the readings coincide
        assert by_hand(a, b, 0.05, "relative") == by_hand(a, b, 0.05), (a, b)
    assert by_hand(0, 1, 0.15) == 1.0 and by_hand(0, 1, 0.15, "relative") == 27 / 28
    assert by_hand(1, 4, 0.15) == 1.0 and by_hand(1, 4, 0.15, "relative") == 27 / 28
    assert by_hand(1, 2, 0.15) == by_hand(1, 2, 0.15, "relative") == 1.0


def test_binary_scores_n3_by_hand():
    V = np.array([[int(c) for c in key] for key in HAND])
    S = binary_scores(V, parse_all(NAMES))
    expected = np.array(list(HAND.values())).T
    np.testing.assert_allclose(S, expected, atol=1e-12)


def test_all_vectors():
    V = all_vectors(3)
    assert V.shape == (8, 3)
    assert len({tuple(v) for v in V}) == 8


@pytest.mark.parametrize("ap_r", ["n", "retrieved"])
def test_vector_measures_equal_sql(con, tmp_path, ap_r):
    """Synthetic rankings loaded as a run + qrels score the same under the SQL engine. R = N
    per topic: the relevant documents not in the ranking are judged but not retrieved; R = the
    relevant documents in the vector: no others (the vector 000000 then has no relevant
    document: not in the topic set)."""
    N = 6
    V = all_vectors(N)
    run, qrels = [], []
    for t, v in enumerate(V):
        topic = f"t{t:02d}"
        for i, rel in enumerate(v, 1):
            run.append(f"{topic} Q0 d{i} {i} {N + 1 - i} synth")
            qrels.append(f"{topic} 0 d{i} {rel}")
        for x in range(N - int(v.sum()) if ap_r == "n" else 0):
            qrels.append(f"{topic} 0 extra{x} 1")
    (tmp_path / "run").write_text("\n".join(run) + "\n")
    (tmp_path / "qrels").write_text("\n".join(qrels) + "\n")
    loading.load_qrels(con, [str(tmp_path / "qrels")], "synth")
    loading.load_runs(con, [str(tmp_path / "run")])
    names = NAMES + ["P@4", "P", "R@3", "SP", "AP@4", "RR", "RR@2", "Success@2", "nDCG@4", "nDCG",
                     "DCG(discount=jk)@5", "RBP(p=0.95)@4", "RBP(depth=3)"]
    parsed = parse_all(names)
    sql = evaluation.evaluate(con, "synth", parsed, ["synth"], store=False).df()
    topics = range(len(V)) if ap_r == "n" else range(1, len(V))
    assert sql["topic"].nunique() == len(topics)
    S = ag.scores_of(V, parsed, ap_r)
    if ap_r == "retrieved":
        assert (S[:, 0] == 0).all()  # R = 0: nothing relevant, every score 0
    for k, m in enumerate(parsed):
        got = sql[sql["measure"] == str(m)].set_index("topic")["value"]
        want = {f"t{t:02d}": S[k, t] for t in topics}
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


def _rates(V, names, delta, fuzziness, ap_r="n"):
    """The exact agreement rates of the rows of V under measures ``names``."""
    S = ag.scores_of(np.array(V), parse_all(names), ap_r)
    return ag.exact_rates(S, [delta], fuzziness=fuzziness)[0][0]


def test_readings_differ_dcg_in_the_hundreds():
    """N = 1000. u: every rank relevant but 2 and 3; v: every rank relevant but 1.
    DCG(v) − DCG(u) = 1/log2(3) + 1/2 − 1 = .1309 with DCG(v) = Σ_{i=2..1000} 1/log2(i+1)
    (≈ 121): v preferred. RBP(0.5)(u) = .5 (1 + Σ_{i>=4} .5^(i−1)) = .625, RBP(0.5)(v) =
    .5 Σ_{i>=2} .5^(i−1) = .5 (to 1e-300): u preferred by .125. At Δ = 0.01 the absolute
    reading: both differences exceed .01 -> disagree; the relative one: .1309 is below
    .01 · 121 -> agree (RBP's .125 exceeds .01 · .625 either way)."""
    u, v = np.ones(1000, dtype=np.uint8), np.ones(1000, dtype=np.uint8)
    u[[1, 2]] = 0
    v[0] = 0
    dcg_v = sum(1 / math.log2(i + 1) for i in range(2, 1001))
    assert 100 < dcg_v < 200
    S = binary_scores(np.array([u, v]), parse_all(["DCG", "RBP(p=0.5)"]))
    assert S[0, 1] == pytest.approx(dcg_v, rel=1e-12)
    assert S[0, 1] - S[0, 0] == pytest.approx(1 / math.log2(3) + 0.5 - 1, abs=1e-9)
    assert S[1] == pytest.approx([0.625, 0.5], abs=1e-12)
    assert _rates([u, v], ["DCG", "RBP(p=0.5)"], 0.01, "absolute") == [0.0]
    assert _rates([u, v], ["DCG", "RBP(p=0.5)"], 0.01, "relative") == [1.0]
    assert _rates([u, v], ["DCG", "RBP(p=0.5)"], 0.0, "relative") == [0.0]  # Δ = 0: no reading


def test_readings_differ_ap_near_one_half():
    """N = 7, R = 7. u = 1001111: AP = (1 + 2/4 + 3/5 + 4/6 + 5/7) / 7 = 731/1470 = .49728;
    v = 1101010: AP = (1 + 1 + 3/4 + 4/6) / 7 = 41/84 = .48810; u preferred by .00918.
    RBP(0.5): u = .5 (1 + 1/8 + 1/16 + 1/32 + 1/64) = 79/128 = .6172, v = .5 (1 + 1/2 + 1/8
    + 1/32) = 53/64 = .8281; v preferred by .2109. At Δ = 0.01 the absolute reading: AP's
    .00918 does not exceed .01 -> agree; the relative one: it exceeds .01 · .49728 = .00497
    (and RBP's .2109 exceeds .01 · .8281) -> disagree."""
    u, v = [1, 0, 0, 1, 1, 1, 1], [1, 1, 0, 1, 0, 1, 0]
    S = binary_scores(np.array([u, v]), parse_all(["AP", "RBP(p=0.5)"]))
    np.testing.assert_allclose(S, [[731 / 1470, 41 / 84], [79 / 128, 53 / 64]], atol=1e-15)
    assert _rates([u, v], ["AP", "RBP(p=0.5)"], 0.01, "absolute") == [1.0]
    assert _rates([u, v], ["AP", "RBP(p=0.5)"], 0.01, "relative") == [0.0]


def test_difference_of_exactly_the_fuzziness_does_not_exceed_it():
    """N = 10, R = N: AP(1010000000) = (1 + 2/3) / 10 = 1/6 and AP(0001110100) = (1/4 + 2/5
    + 3/6 + 4/8) / 10 = .165 differ by 1/600 = 0.01 · 1/6 exactly: at Δ = 0.01 (relative) the
    difference does not exceed the fuzziness, though in floating point it comes out above
    the product. Likewise .4 − .3 and .8 − .7 at Δ = 0.1 (absolute)."""
    ap = binary_scores(np.array([[1, 0, 1, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 1, 1, 0, 1, 0, 0]]),
                       parse("AP"))
    assert ap == pytest.approx([1 / 6, 0.165], abs=1e-15)
    assert abs(ap[0] - ap[1]) > 0.01 * ap[0]  # what a bare comparison would conclude
    for x, y, delta, fuzziness in [(ap[0], ap[1], 0.01, "relative"), (0.4, 0.3, 0.1, "absolute"),
                                   (0.8, 0.7, 0.1, "absolute")]:
        a = ag.differences(np.array([x]), np.array([y]), fuzziness)
        b = ag.differences(np.array([0.0]), np.array([1.0]), fuzziness)  # opposite, large
        assert ag.agree(a, b, delta).all(), (x, y, delta)
        assert not ag.agree(a, b, delta * 0.999).any(), (x, y, delta)


def test_ap_r_by_hand():
    """AP of 0101 (relevant at ranks 2 and 4: precisions 1/2 and 2/4): with R = N = 4,
    (1/2 + 1/2) / 4 = 1/4; with R = 2 retrieved relevant, 1/2. 0000 scores 0 under both;
    1111 scores 1 under both. The measures that do not use R do not change."""
    V = np.array([[0, 1, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1]])
    names = parse_all(["AP", "DCG", "RBP(p=0.5)"])
    n, retrieved = ag.scores_of(V, names, "n"), ag.scores_of(V, names, "retrieved")
    assert n[0] == pytest.approx([1 / 4, 0, 1]) and retrieved[0] == pytest.approx([1 / 2, 0, 1])
    np.testing.assert_array_equal(n[1:], retrieved[1:])
    with pytest.raises(IrwError, match="--ap-r"):
        ag.scores_of(V, names, "all")
    with pytest.raises(IrwError, match="fuzziness"):
        ag.differences(n[0], retrieved[0], "percent")


# The exact N = 10 enumeration, recomputed independently: every score as an integer (the
# measure times a constant, so that ties and comparisons are exact), all pairs at once.
AP_L = 2520  # lcm(1..10): C(i) / i = C(i) · (2520 / i) / 2520


def _integer_scores(v, ap_r):
    """(AP, P@10, RBP(0.5), RBP(0.8)) of the 0/1 tuple v (N = 10) times (2520 · 10 or
    2520², 10, 2^10, 5^10), and the DCG as a float."""
    c = ap = 0
    for i, r in enumerate(v, 1):
        if r:
            c += 1
            ap += c * (AP_L // i)  # AP · R · 2520
    if ap_r == "retrieved":
        ap = ap * (AP_L // c) if c else 0  # AP · 2520²
    p10 = sum(v)
    rbp5 = sum(r * 2 ** (10 - i) for i, r in enumerate(v, 1))  # (1/2) Σ r_i (1/2)^(i−1) · 2^10
    rbp8 = sum(r * 4 ** (i - 1) * 5 ** (10 - i) for i, r in enumerate(v, 1))  # ... · 5^10
    dcg = sum(r / math.log2(i + 1) for i, r in enumerate(v, 1))
    return (ap, p10, rbp5, rbp8), dcg


def _independent_n10(delta_num, delta_den, fuzziness, ap_r):
    """Agreement rates over the 523,776 pairs, per pair of DEFAULT_MEASURES (in the order of
    itertools.combinations), at Δ = delta_num / delta_den; and how many score differences
    equal Δ · scale exactly (they do not exceed it)."""
    vectors = list(itertools.product([0, 1], repeat=10))
    ints, dcgs = zip(*(_integer_scores(v, ap_r) for v in vectors))
    ints = np.array(ints, dtype=np.int64).T
    units = [AP_L * 10 if ap_r == "n" else AP_L ** 2, 10, 2 ** 10, 5 ** 10]  # score 1
    i, j = np.triu_indices(len(vectors), 1)
    sign, exceeds, at_threshold = {}, {}, 0
    for name, x, unit in zip(["AP", "P@10", "RBP(p=0.5)", "RBP(p=0.8)"], ints, units):
        d = x[i] - x[j]
        scale = np.maximum(x[i], x[j]) if fuzziness == "relative" else unit
        sign[name] = np.sign(d)
        exceeds[name] = delta_den * np.abs(d) > delta_num * scale  # exact in integers
        at_threshold += int((delta_den * np.abs(d) == delta_num * scale).sum()) if delta_num else 0
    dcg = np.array(dcgs)
    d = dcg[i] - dcg[j]
    sign["DCG"] = np.where(np.abs(d) < 1e-9, 0, np.sign(d))
    scale = np.maximum(dcg[i], dcg[j]) if fuzziness == "relative" else 1.0
    exceeds["DCG"] = np.abs(d) > delta_num / delta_den * scale
    rates = []
    for a, b in itertools.combinations(ag.DEFAULT_MEASURES, 2):
        if delta_num == 0:
            ok = sign[a] == sign[b]
        else:
            ok = ~((sign[a] * sign[b] < 0) & exceeds[a] & exceeds[b])
        rates.append(ok.mean())
    return rates, at_threshold


@pytest.mark.parametrize("ap_r", ["n", "retrieved"])
def test_exact_n10_both_readings_against_independent(ap_r):
    deltas = [(0, 1), (1, 100), (3, 100), (1, 20)]
    got = {f: ag.uniform_cell(parse_all(ag.DEFAULT_MEASURES), 10, [n / d for n, d in deltas],
                              ag.DEFAULT_SAMPLES, 0, f, ap_r) for f in ag.FUZZINESS}
    at_threshold = 0
    for fuzziness, frame in got.items():
        assert set(frame["fuzziness"]) == {fuzziness} and set(frame["ap_r"]) == {ap_r}
        assert set(frame["pairs"]) == {523776} and set(frame["method"]) == {"exact"}
        for num, den in deltas:
            want, exact_ties = _independent_n10(num, den, fuzziness, ap_r)
            at_threshold += exact_ties
            rows = frame[frame["delta"] == num / den]
            assert list(zip(rows["measure_a"], rows["measure_b"])) == list(
                itertools.combinations(ag.DEFAULT_MEASURES, 2))
            np.testing.assert_allclose(rows["agreement"], want, rtol=0, atol=1e-15,
                                       err_msg=f"{fuzziness}, Δ = {num}/{den}")
    assert at_threshold > 0  # differences of exactly Δ · max(...) occur, and were counted right
    # the readings do differ at N = 10 (and coincide at Δ = 0)
    rel, ab = got["relative"], got["absolute"]
    assert (rel["agreement"] != ab["agreement"]).any()
    assert (rel[rel["delta"] == 0]["agreement"].to_numpy()
            == ab[ab["delta"] == 0]["agreement"].to_numpy()).all()


def _rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


def test_agreement_n3_cli(cli, tmp_path):
    """Both readings of the fuzziness through the CLI, into one output directory: the second
    run must not reuse the cells of the first (its rates differ at Δ = 0.15)."""
    out = tmp_path / "out"
    args = ["experiment", "agreement", "--n", "3", "--delta", "0", "--delta", "0.05,0.15",
            "--out", out, "--format", "json", *sum((["-m", n] for n in NAMES), [])]
    for fuzziness in ("relative", "absolute"):
        option = [] if fuzziness == "relative" else ["--fuzziness", "absolute"]  # the default
        rows = json.loads(cli(*args, *option).stdout)
        assert len(rows) == 3 * 10
        assert set(rows[0]) == set(ag.MAIN_COLUMNS)
        for r in rows:
            a, b = NAMES.index(r["measure_a"]), NAMES.index(r["measure_b"])
            want = by_hand(a, b, r["delta"], fuzziness)
            assert r["agreement"] == pytest.approx(want, abs=1e-12), r
            assert (r["n"], r["mode"], r["pairs"], r["method"]) == (3, "uniform", 28, "exact")
            assert (r["fuzziness"], r["ap_r"]) == (fuzziness, "n")
        report = (out / "report.md").read_text()
        assert f"`--fuzziness {fuzziness}`" in report and "`--ap-r n`" in report
        assert "fuzziness = " + fuzziness in report  # the parameters line
        stored = cli("sql", "SELECT DISTINCT fuzziness FROM exp_agreement_agreement",
                     "--format", "json")
        assert json.loads(stored.stdout) == [{"fuzziness": fuzziness}]
    assert len(list((out / "cells" / "agreement").glob("*.parquet"))) == 2
    assert "Δ · max(|A(l_i)|, |A(l_j)|)" not in report  # the absolute run's text
    assert (out / "agreement_agreement.csv").exists()
    png = (out / "agreement_matrix.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert "## Metric agreement (Shokouhi et al. 2009)" in report
    assert "agreement_matrix.png" in report
    # the table is in the warehouse too
    stored = cli("sql", "SELECT count(*) AS n FROM exp_agreement_agreement", "--format", "json")
    assert json.loads(stored.stdout) == [{"n": 30}]


def test_agreement_n10_exact_and_monte_carlo(cli, tmp_path):
    rows = json.loads(cli("experiment", "agreement", "--n", "10", "--out", tmp_path / "a",
                          "--format", "json").stdout)
    assert {r["pairs"] for r in rows} == {523776}
    assert {(r["measure_a"], r["measure_b"]) for r in rows} == set(
        itertools.combinations(ag.DEFAULT_MEASURES, 2))
    # Monte Carlo over random pairs converges to the exact rate
    exact = {(r["measure_a"], r["measure_b"]): r["agreement"] for r in rows}
    mc = ag.uniform_cell(parse_all(ag.DEFAULT_MEASURES), 10, [0.0], 40000, 3, exact_limit=0)
    for r in mc.itertuples():
        assert r.method == "monte-carlo" and 39900 < r.pairs <= 40000
        assert abs(r.agreement - exact[(r.measure_a, r.measure_b)]) < 5 * r.std_error
    again = ag.uniform_cell(parse_all(ag.DEFAULT_MEASURES), 10, [0.0], 40000, 3, exact_limit=0)
    assert again.equals(mc)  # deterministic given the seed


def _in_memory_rates(Si, Sj, deltas, fuzziness):
    """Agreement rates over all the pairs at once (the scores of every pair in memory)."""
    M = Si.shape[0]
    diffs = [ag.differences(Si[m], Sj[m], fuzziness) for m in range(M)]
    return np.array([[ag.agree(diffs[a], diffs[b], d).mean() for a, b in itertools.combinations(range(M), 2)]
                     for d in deltas])


@pytest.mark.parametrize("fuzziness", ag.FUZZINESS)
def test_monte_carlo_in_batches_equals_all_pairs_in_memory(fuzziness, tmp_path):
    """The Monte Carlo cells keep running sums over batches of pairs; the rates are those of
    every pair drawn at once with the same seed -- to the last bit -- for the uniform mode (N =
    12, three batches) and the sampled mode (the fixtures' rankings, four batches, the pairs'
    rankings drawn as numpy's Generator.choice draws them)."""
    measures, deltas = parse_all(ag.DEFAULT_MEASURES), [0.0, 0.01, 0.1]
    n, samples, seed = 12, 150_000, 7
    got = ag.uniform_cell(measures, n, deltas, samples, seed, fuzziness, exact_limit=0)
    rng = np.random.default_rng(seed)
    step = int(np.clip((1 << 22) // n, 1024, 1 << 16))
    assert samples // step == 2  # three batches
    A, B = [], []
    for s in range(0, samples, step):
        size = min(step, samples - s)
        bits = np.unpackbits(rng.integers(0, 256, size=(2 * size, 2), dtype=np.uint8), axis=1, count=n)
        distinct = (bits[:size] != bits[size:]).any(axis=1)
        A.append(bits[:size][distinct])
        B.append(bits[size:][distinct])
    A, B = np.vstack(A), np.vstack(B)
    want = _in_memory_rates(ag.scores_of(A, measures), ag.scores_of(B, measures), deltas, fuzziness)
    assert got["agreement"].tolist() == want.ravel().tolist()
    assert set(got["pairs"]) == {len(A)} and set(got["method"]) == {"monte-carlo"}

    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(FIXTURES / "qrels.txt")], "fixture")
    loading.load_runs(con, [str(FIXTURES / "runs")])
    run_ids = [r[0] for r in con.execute("SELECT DISTINCT run_id FROM runs ORDER BY 1").fetchall()]
    vectors = ag.real_vectors(con, "fixture", run_ids, 10)
    con.close()
    samples = 4 * ag.MC_BATCH - 5
    got = ag.sampled_cell(measures, 10, deltas, samples, seed, vectors, fuzziness, exact_limit=0)
    counts = vectors["rankings"].to_numpy()
    rng = np.random.default_rng(seed)
    i = rng.choice(len(counts), size=samples, p=counts / counts.sum())
    j = rng.choice(len(counts), size=samples, p=counts / counts.sum())
    keep = i != j
    S = ag.scores_of(ag.vectors_from_ranks(vectors["relevant_ranks"].tolist(), 10), measures)
    want = _in_memory_rates(S[:, i[keep]], S[:, j[keep]], deltas, fuzziness)
    assert got["agreement"].tolist() == want.ravel().tolist()
    assert set(got["pairs"]) == {int(keep.sum())}


def test_samples_apply_to_monte_carlo_cells_only(cli, tmp_path):
    """--samples sets the pairs of the cells that cannot be enumerated (N = 14: 16,384
    vectors); the cells that can (N = 10, and the fixtures' real rankings) stay exact, with
    the same rates as without --samples."""
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    cli("load", "runs", FIXTURES / "runs")
    args = ["experiment", "agreement", "--mode", "uniform,sampled", "-m", "P@10", "-m", "RBP(p=0.5)",
            "--format", "json"]
    plain = json.loads(cli(*args, "--n", "10", "--out", tmp_path / "a").stdout)
    rows = json.loads(cli(*args, "--n", "10,14", "--samples", "3000", "--seed", "5",
                          "--out", tmp_path / "b").stdout)
    by = {(r["mode"], r["n"]): r for r in rows}
    assert [by[("uniform", 10)], by[("sampled", 10)]] == plain
    assert by[("uniform", 10)]["method"] == "exact" and by[("uniform", 10)]["pairs"] == 523776
    assert by[("sampled", 10)]["method"] == "exact" and by[("sampled", 14)]["method"] == "exact"
    assert by[("uniform", 14)]["method"] == "monte-carlo" and 2990 < by[("uniform", 14)]["pairs"] <= 3000
    result = cli(*args, "--samples", "0", "--out", tmp_path / "c", ok=False)
    assert result.exit_code == 1 and "--samples must be at least 1" in result.output


def test_ap_r_and_fuzziness_options(cli, tmp_path):
    """--ap-r and --fuzziness through the CLI, one after the other into one directory: each
    run computes its own cells (a cell of another reading is not reused)."""
    out = tmp_path / "out"
    seen = {}
    for ap_r, fuzziness in [("retrieved", "absolute"), ("n", "absolute"), ("retrieved", "relative")]:
        rows = json.loads(cli("experiment", "agreement", "--n", "10", "--delta", "0.01",
                              "--ap-r", ap_r, "--fuzziness", fuzziness, "--out", out,
                              "--format", "json").stdout)
        assert {(r["ap_r"], r["fuzziness"]) for r in rows} == {(ap_r, fuzziness)}
        want, _ = _independent_n10(1, 100, fuzziness, ap_r)
        np.testing.assert_allclose([r["agreement"] for r in rows], want, rtol=0, atol=1e-15)
        seen[ap_r, fuzziness] = [r["agreement"] for r in rows]
        report = (out / "report.md").read_text()
        assert f"`--ap-r {ap_r}`" in report and f"`--fuzziness {fuzziness}`" in report
    assert "R = the number of relevant documents in the vector" in report
    assert len(set(map(tuple, seen.values()))) == 3
    assert len(list((out / "cells" / "agreement").glob("*.parquet"))) == 3


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


def _negated_runs(dst):
    """The fixture runs with every score negated (reversed rankings): a second collection."""
    dst.mkdir()
    for path in sorted((FIXTURES / "runs").iterdir()):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as fh:
            lines = [" ".join(f[:4] + [repr(-float(f[4])), f[5]]) for f in map(str.split, fh) if len(f) == 6]
        (dst / path.name.removesuffix(".gz")).write_text("\n".join(lines) + "\n")
    return dst


def test_sampled_mode_pools_several_qrels(cli, tmp_path):
    """Two collections (the fixtures and their runs reversed), each with its qrels: the
    rankings under both are pooled -- pair by pair from `irw eval`, as in the test above --
    whether the qrels are repeated or comma-separated; each alone gives its own rate."""
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture", "--collection", "fx")
    cli("load", "runs", FIXTURES / "runs", "--collection", "fx")
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "reversed", "--collection", "rev")
    cli("load", "runs", _negated_runs(tmp_path / "rev"), "--collection", "rev")
    items = {}
    for q in ("fixture", "reversed"):
        per = json.loads(cli("eval", "-m", "P@10", "-m", "RBP(p=0.5,rel=1)@10", "--qrels", q,
                             "--per-topic", "--topics", "run", "--format", "json").stdout)
        for r in per:
            if r["topic"] != "106":  # no relevant document: not in the topic set
                items.setdefault((q, r["run_id"], r["topic"]), {})[r["measure"]] = r["value"]
    assert len(items) == 2 * 39

    def by_eval(keys):
        agree = pairs = 0
        for x, y in itertools.combinations([items[k] for k in keys], 2):
            rx, ry = x["RBP(p=0.5,rel=1)@10"], y["RBP(p=0.5,rel=1)@10"]
            if rx != ry:  # rankings with the same relevance vector are not a pair
                pairs += 1
                agree += np.sign(round(x["P@10"] - y["P@10"], 12)) == np.sign(rx - ry)
        return agree / pairs, pairs

    def rate(*qrels_args):
        out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
        rows = json.loads(cli("experiment", "agreement", "--mode", "sampled", "--n", "10", "-m", "P@10",
                              "-m", "RBP(p=0.5)", *qrels_args, "--out", out, "--format", "json").stdout)
        assert len(rows) == 1 and rows[0]["method"] == "exact"
        return rows[0]["agreement"], rows[0]["pairs"], out

    pooled, pairs, out = rate("--qrels", "fixture", "--qrels", "reversed")
    want, want_pairs = by_eval(list(items))
    assert pairs == want_pairs and pooled == pytest.approx(want, abs=1e-12)
    assert rate("--qrels", "fixture,reversed")[:2] == (pooled, pairs)
    assert rate("--qrels", "fix*,rev*")[:2] == (pooled, pairs)
    alone = {q: rate("--qrels", q)[:2] for q in ("fixture", "reversed")}
    for q in alone:
        assert alone[q][0] == pytest.approx(by_eval([k for k in items if k[0] == q])[0], abs=1e-12)
    assert len({alone["fixture"], alone["reversed"], (pooled, pairs)}) == 3
    assert _rows(out / "agreement_vectors.csv")[0]["rankings"] == "78"
    report = (out / "report.md").read_text()
    assert "the rankings under the qrels fixture, reversed pooled" in report
    assert "qrels = fixture,reversed" in report
    # one qrels that does not exist, and a single-value option given twice, are errors
    result = cli("experiment", "agreement", "--mode", "sampled", "--qrels", "fixture,nope",
                 "--out", tmp_path / "bad", ok=False)
    assert result.exit_code == 1 and "unknown qrels 'nope'" in result.output
    for option, values in [("--runs", ("all", "pooled")), ("--samples", ("10", "20")), ("--seed", ("1", "2"))]:
        result = cli("experiment", "agreement", "--mode", "sampled", option, values[0], option, values[1],
                     "--out", tmp_path / "bad", ok=False)
        assert result.exit_code == 2 and f"option {option} is given twice" in result.output


def test_bad_options(cli, tmp_path):
    result = cli("experiment", "agreement", "--mode", "nope", "--out", tmp_path, ok=False)
    assert result.exit_code == 1 and "unknown mode" in result.output
    result = cli("experiment", "agreement", "-m", "Bpref", "-m", "AP", "--out", tmp_path, ok=False)
    assert result.exit_code == 1 and "synthetic" in result.output
    result = cli("experiment", "agreement", "--mode", "sampled", "--out", tmp_path, ok=False)
    assert result.exit_code == 1 and "no qrels" in result.output
    result = cli("experiment", "agreement", "--fuzziness", "percent", "--out", tmp_path, ok=False)
    assert result.exit_code == 1 and "unknown --fuzziness 'percent'" in result.output
    assert "relative, absolute" in result.output
    result = cli("experiment", "agreement", "--ap-r", "R", "--out", tmp_path, ok=False)
    assert result.exit_code == 1 and "unknown --ap-r 'R'; valid: n, retrieved" in result.output
