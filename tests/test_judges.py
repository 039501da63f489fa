"""Judging the judges (irwarehouse.judges; ``irw qrels compare``, ``irw qrels rankings``):
two judgment sets compared as assessors and as rankings of the runs.

The agreement statistics are checked against an independent computation written here from
their definitions (SPEC §5) -- Cohen's kappa from proportions, weighted kappa from the
expected proportions, Krippendorff's alpha from a coincidence matrix built unit by unit with
the ordinal distances summed category by category -- on a hand-computed case, on the
fixtures' two judgment sets and on TREC-8's official qrels against a simulated automatic
judge; the bootstrap intervals against a loop over the same samples; the rankings against
``irw eval``, ``irw correlate`` and ``irw discpower --reference-qrels``; the permutation test
of a group's mean shift against an exact enumeration and a loop over the same draws. On
TREC-8, the team the simulated judge favours shows the largest rank gain and a significant
bias, and it is the only team flagged.
"""

from __future__ import annotations

import itertools
import shutil

import numpy as np
import pandas as pd
import pytest

from conftest import FIXTURES
from irwarehouse import Warehouse, judges, stats
from irwarehouse.errors import IrwError
from irwarehouse.measures import parse_all

TOL = 1e-9
STATISTICS = ("agreement", "kappa", "kappa_linear", "kappa_quadratic", "alpha_nominal", "alpha_ordinal")


# ------------------------------------------------------------------ the definitions, independently

def _kappa(ga: np.ndarray, gb: np.ndarray, L: int) -> float:
    """Cohen's kappa on the binary labels, from proportions."""
    a, b = ga >= L, gb >= L
    po = np.mean(a == b)
    pe = np.mean(a) * np.mean(b) + np.mean(~a) * np.mean(~b)
    return np.nan if pe == 1 else (po - pe) / (1 - pe)


def _weighted_kappa(ga: np.ndarray, gb: np.ndarray, power: int) -> float:
    """Weighted kappa: 1 - sum w p_o / sum w p_e, w = |i - j|^power of the grades."""
    cats = sorted(set(ga) | set(gb))
    po = np.zeros((len(cats), len(cats)))
    for x, y in zip(ga, gb):
        po[cats.index(x), cats.index(y)] += 1 / len(ga)
    pe = np.outer(po.sum(axis=1), po.sum(axis=0))
    w = np.array([[abs(i - j) ** power for j in cats] for i in cats], dtype=float)
    expected = (w * pe).sum()
    return np.nan if expected == 0 else 1 - (w * po).sum() / expected


def _alpha(ga: np.ndarray, gb: np.ndarray, metric: str) -> float:
    """Krippendorff's alpha for two coders: the coincidence matrix built unit by unit (each
    unit adds its two ordered pairs with weight 1/(m_u - 1) = 1), D_o / D_e with the
    nominal or the ordinal distance (Krippendorff 2011, the sum over the categories between
    c and k written out)."""
    cats = sorted(set(ga) | set(gb))
    O = np.zeros((len(cats), len(cats)))
    for x, y in zip(ga, gb):
        O[cats.index(x), cats.index(y)] += 1
        O[cats.index(y), cats.index(x)] += 1
    n = O.sum(axis=1)
    N = n.sum()
    d2 = np.zeros_like(O)
    for c in range(len(cats)):
        for k in range(len(cats)):
            if metric == "nominal":
                d2[c, k] = float(c != k)
            else:
                lo, hi = min(c, k), max(c, k)
                d2[c, k] = (sum(n[g] for g in range(lo, hi + 1)) - (n[c] + n[k]) / 2) ** 2
    Do = (O * d2).sum() / N
    De = sum(n[c] * n[k] * d2[c, k] for c in range(len(cats)) for k in range(len(cats))) / (N * (N - 1))
    return np.nan if De == 0 else 1 - Do / De


def definitions(ga, gb, L: int) -> dict:
    """Every agreement statistic of the documents judged by both (their grades ga, gb)."""
    ga, gb = np.asarray(ga), np.asarray(gb)
    if ga.size == 0:
        return {name: np.nan for name in STATISTICS}
    a, b = (ga >= L).astype(int), (gb >= L).astype(int)
    out = {"agreement": np.mean(a == b), "kappa": _kappa(ga, gb, L),
           "kappa_linear": _weighted_kappa(ga, gb, 1), "kappa_quadratic": _weighted_kappa(ga, gb, 2),
           "alpha_nominal": _alpha(a, b, "nominal"), "alpha_ordinal": _alpha(ga, gb, "ordinal")}
    # SPEC's closed form of nominal alpha on binary data
    N, n1 = 2 * a.size, a.sum() + b.sum()
    if 0 < n1 < N:
        closed = 1 - (N - 1) * np.sum(a != b) / ((N - n1) * n1)
        assert abs(closed - out["alpha_nominal"]) < TOL
    return out


def judged_pairs(w: Warehouse, a: str, b: str) -> pd.DataFrame:
    """The documents judged (rel >= 0) by both qrels: topic, docno, ga, gb."""
    frames = [w.sql(f"SELECT topic, docno, rel FROM qrels WHERE qrels = '{q}' AND rel >= 0").df() for q in (a, b)]
    return frames[0].merge(frames[1], on=["topic", "docno"], suffixes=("_a", "_b")).rename(
        columns={"rel_a": "ga", "rel_b": "gb"})


def assert_agreement_is_the_definition(w: Warehouse, a: str, b: str, L: int) -> pd.DataFrame:
    table = w.compare_qrels(a, b, rel_level=L).df().set_index("topic")
    pairs = judged_pairs(w, a, b)
    groups = {t: part for t, part in pairs.groupby("topic")}
    for topic, row in table.iterrows():
        part = pairs if topic == "all" else groups.get(topic, pairs.iloc[0:0])
        expected = definitions(part["ga"].to_numpy(), part["gb"].to_numpy(), L)
        assert row["both"] == len(part)
        for name in STATISTICS:
            got, want = row[name], expected[name]
            assert (np.isnan(got) and np.isnan(want)) or abs(got - want) <= TOL, (topic, name, got, want)
    return table


# ------------------------------------------------------------------ warehouses

def frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["topic", "docno", "rel"])


# A: topic 1 grades 0, 1, 2, 0 and d5 pooled but not assessed; topic 2 grades 1, 0.
# B: topic 1 grades 0, 2, 1, 1, assesses d5 and judges d6; topic 2 grades 1, 0 and e3.
HAND_A = frame([("1", "d1", 0), ("1", "d2", 1), ("1", "d3", 2), ("1", "d4", 0), ("1", "d5", -1),
                ("2", "e1", 1), ("2", "e2", 0)])
HAND_B = frame([("1", "d1", 0), ("1", "d2", 2), ("1", "d3", 1), ("1", "d4", 1), ("1", "d5", 1),
                ("1", "d6", 0), ("2", "e1", 1), ("2", "e2", 0), ("2", "e3", 1)])


@pytest.fixture(scope="module")
def hand():
    w = Warehouse(":memory:")
    w.load_qrels(HAND_A, "a")
    w.load_qrels(HAND_B, "b")
    yield w
    w.close()


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    """The fixtures with their second judgment set (auto) and the leave-alpha-out qrels."""
    path = str(tmp_path_factory.mktemp("judges") / "fx.duckdb")
    with Warehouse(path) as w:
        w.load_qrels(str(FIXTURES / "qrels.txt"), "fixture")
        w.load_qrels(str(FIXTURES / "auto-qrels.txt"), "auto")
        w.load_runs(str(FIXTURES / "runs"), meta=str(FIXTURES / "runs.tsv"))
        w.pool("leave-out", qrels="fixture", teams=["alpha"], runs="pooled", depth=10)
        w.pool("depth", "fixture-d5", qrels="fixture", depth=5)
    w = Warehouse(path, read_only=True)
    yield w
    w.close()


# ------------------------------------------------------------------ as assessors

def test_a_hand_computed_case(hand):
    """Worked out by hand: topic 1 has kappa 1/2 (p_o 3/4, p_e 1/2), linear weighted kappa
    1 - 4*3/14 = 1/7, quadratic 1 - 4*3/20 = 2/5, nominal alpha 1 - 7*1/(3*5) = 8/15 and
    ordinal alpha 1 - 7*43/600 = 299/600 (value counts 3, 3, 2: distances 9, 6.25 and
    30.25); topic 2 agrees perfectly; over both topics kappa 2/3, nominal alpha 24/35."""
    table = hand.compare_qrels("a", "b").df().set_index("topic")
    assert list(table.index) == ["1", "2", "all"]
    assert table[["both", "only_a", "only_b", "relevant_a", "relevant_b"]].values.tolist() == \
        [[4, 0, 2, 2, 3], [2, 0, 1, 1, 1], [6, 0, 3, 3, 4]]
    expected = {"1": [3 / 4, 1 / 2, 1 / 7, 2 / 5, 8 / 15, 299 / 600], "2": [1, 1, 1, 1, 1, 1]}
    for topic, values in expected.items():
        assert np.allclose(table.loc[topic, list(STATISTICS)].to_numpy(float), values, atol=TOL, rtol=0)
    assert abs(table.loc["all", "kappa"] - 2 / 3) < TOL
    assert abs(table.loc["all", "alpha_nominal"] - 24 / 35) < TOL
    assert_agreement_is_the_definition(hand, "a", "b", 1)
    # at grade >= 2 topic 1 disagrees on both relevant documents: kappa (4*2 - 10)/(16 - 10)
    at2 = hand.compare_qrels("a", "b", rel_level=2).df().set_index("topic")
    assert abs(at2.loc["1", "kappa"] + 1 / 3) < TOL
    assert_agreement_is_the_definition(hand, "a", "b", 2)
    # B as the reference: the same agreement, the counts of one set only swapped
    swapped = hand.compare_qrels("b", "a").df().set_index("topic")
    assert (swapped["only_a"] == table["only_b"]).all() and (swapped["relevant_b"] == table["relevant_a"]).all()
    assert np.allclose(swapped[list(STATISTICS)].to_numpy(float), table[list(STATISTICS)].to_numpy(float))


def test_confusion_and_the_documents_one_set_judged(hand):
    rows = hand.compare_qrels("a", "b", "confusion", per_topic=True).records()
    overall = {r["grade_a"]: r for r in rows if r["topic"] == "all"}
    assert list(overall) == ["0", "1", "2", "unjudged"]
    assert [overall["0"][c] for c in ("b=0", "b=1", "b=2", "b=unjudged")] == [2, 1, 0, 0]
    assert [overall["1"][c] for c in ("b=0", "b=1", "b=2", "b=unjudged")] == [0, 1, 1, 0]
    assert [overall["unjudged"][c] for c in ("b=0", "b=1", "b=2", "b=unjudged")] == [1, 2, 0, None]
    assert [r["topic"] for r in rows] == ["1"] * 4 + ["2"] * 4 + ["all"] * 4
    assert hand.compare_qrels("a", "b", "only-a").records() == []
    only_b = hand.compare_qrels("a", "b", "only-b").records()
    assert only_b == [{"topic": "1", "docno": "d5", "grade_b": 1, "rel_a": -1},
                      {"topic": "1", "docno": "d6", "grade_b": 0, "rel_a": None},
                      {"topic": "2", "docno": "e3", "grade_b": 1, "rel_a": None}]
    assert [r["docno"] for r in hand.compare_qrels("b", "a", "only-a").records()] == ["d5", "d6", "e3"]


def test_the_fixtures_two_judgment_sets(fx):
    """Per topic and overall, at both relevance levels, the statistics are their definitions;
    the counts are those of the judgments."""
    for L in (1, 2):
        table = assert_agreement_is_the_definition(fx, "fixture", "auto", L)
    a = fx.sql("SELECT topic, docno FROM qrels WHERE qrels = 'fixture' AND rel >= 0").df()
    b = fx.sql("SELECT topic, docno FROM qrels WHERE qrels = 'auto' AND rel >= 0").df()
    both = a.merge(b, on=["topic", "docno"])
    assert table.loc["all", "both"] == len(both)
    assert table.loc["all", "only_a"] == len(a) - len(both) and table.loc["all", "only_b"] == len(b) - len(both)
    listed = fx.compare_qrels("fixture", "auto", "only-a").df()
    assert len(listed) == len(a) - len(both)
    confusion = pd.DataFrame(fx.compare_qrels("fixture", "auto", "confusion").records()).set_index("grade_a")
    assert confusion["b=unjudged"].sum() == len(a) - len(both)
    assert confusion.loc["unjudged"].drop(["topic", "b=unjudged"]).sum() == len(b) - len(both)


def test_bootstrap_intervals_over_topics(fx):
    """The intervals are the percentiles of the statistics over the same resampled topic
    sets, computed here one sample at a time from the definitions."""
    B, seed = 200, 7
    got = fx.compare_qrels("fixture", "auto", "intervals", B=B, seed=seed, level=0.9).df().set_index("statistic")
    pairs = judged_pairs(fx, "fixture", "auto")
    topics = sorted(set(pairs["topic"]))
    parts = {t: part for t, part in pairs.groupby("topic")}
    draws = np.random.default_rng(seed).integers(0, len(topics), size=(B, len(topics)))
    samples = []
    for row in draws:
        sample = pd.concat([parts[topics[i]] for i in row])
        samples.append(definitions(sample["ga"].to_numpy(), sample["gb"].to_numpy(), 1))
    overall = definitions(pairs["ga"].to_numpy(), pairs["gb"].to_numpy(), 1)
    for name in STATISTICS:
        values = np.array([s[name] for s in samples])
        low, high = np.quantile(values[~np.isnan(values)], [0.05, 0.95])
        assert abs(got.loc[name, "ci_low"] - low) < TOL and abs(got.loc[name, "ci_high"] - high) < TOL, name
        assert abs(got.loc[name, "value"] - overall[name]) < TOL
        assert got.loc[name, "ci_low"] <= got.loc[name, "value"] <= got.loc[name, "ci_high"]
    again = fx.compare_qrels("fixture", "auto", "intervals", B=B, seed=seed, level=0.9).df().set_index("statistic")
    assert again.equals(got)


def test_a_derived_qrels(fx):
    """A leave-out qrels keeps its parent's grades: perfect agreement over the documents both
    judged, and the left-out documents are exactly those only the parent judged."""
    table = fx.compare_qrels("fixture", "fixture-lo-alpha").df().set_index("topic")
    for name in ("agreement", "kappa", "kappa_linear", "kappa_quadratic", "alpha_ordinal"):
        assert np.allclose(table.loc["all", name], 1.0)
    removed = fx.sql("""SELECT topic, docno FROM qrels WHERE qrels = 'fixture' AND rel >= 0
                        EXCEPT SELECT topic, docno FROM qrels WHERE qrels = 'fixture-lo-alpha' AND rel >= 0
                        ORDER BY 1, 2""").rows()
    assert table.loc["all", "only_a"] == len(removed) > 0 and table.loc["all", "only_b"] == 0
    listed = fx.compare_qrels("fixture", "fixture-lo-alpha", "only-a").df()
    assert list(zip(listed["topic"], listed["docno"])) == removed


def test_statistics_undefined_and_at_the_limits():
    grades = [0, 1, 2]
    same = np.diag([5.0, 3.0, 2.0])
    out = stats.agreement(same, grades)
    assert all(abs(out[name] - 1) < TOL for name in STATISTICS)
    one_label = np.zeros((3, 3))
    one_label[0, 0] = 4  # both sets call every document non-relevant: nothing to correct for
    out = stats.agreement(one_label, grades)
    assert out["agreement"] == 1 and all(np.isnan(out[name]) for name in STATISTICS[1:])
    nothing = stats.agreement(np.zeros((2, 3, 3)), grades)
    assert all(np.isnan(nothing[name]).all() for name in STATISTICS)
    # ordinal distances: counts 3, 3, 2 give 9, 6.25 and 30.25
    assert np.allclose(stats.ordinal_distances([3, 3, 2]), [[0, 9, 30.25], [9, 0, 6.25], [30.25, 6.25, 0]])


# ------------------------------------------------------------------ as rankings

MEASURES = ["AP", "nDCG@10"]


def test_rankings_are_the_evaluations(fx):
    runs = fx.compare_rankings("fixture", "auto", MEASURES).df()
    means = {q: fx.eval(MEASURES, q, per_topic=True, store=False).df() for q in ("fixture", "auto")}
    shared = sorted(set(means["fixture"]["topic"]) & set(means["auto"]["topic"]))
    for (label, part) in runs.groupby("measure", sort=False):
        for q, score, rank in (("fixture", "score_a", "rank_a"), ("auto", "score_b", "rank_b")):
            per = means[q][(means[q]["measure"] == label) & means[q]["topic"].isin(shared)]
            expected = per.groupby("run_id")["value"].mean()
            assert np.allclose(part.set_index("run_id")[score].sort_index(), expected.sort_index(), atol=TOL)
            values = part[score].to_numpy()
            assert (part[rank].to_numpy() == [1 + np.sum(values > v) for v in values]).all()
        assert (part["shift"] == part["rank_a"] - part["rank_b"]).all()
        assert list(part["rank_a"]) == sorted(part["rank_a"])
        assert set(part["topics"]) == {len(shared)}
    teams = fx.teams(qrels="fixture")
    assert set(runs["team"]) == set(teams)


def test_correlation_and_decisions_reuse_correlate_and_discpower(fx):
    correlation = fx.compare_rankings("fixture", "auto", MEASURES, what="correlation", top_k=4).df()
    for row in correlation.to_dict("records"):
        single = fx.correlate(row["measure"], qrels="fixture", qrels_b="auto").records()[0]
        for name in ("kendall_tau", "kendall_tau_a", "tau_ap", "rbo", "pearson"):
            assert abs(row[name] - single[name]) < TOL, name
        runs = fx.compare_rankings("fixture", "auto", [row["measure"]]).df()
        top = runs[runs["rank_a"] <= 4]
        assert abs(row["kendall_tau_top"] - stats.kendall_tau(top["score_a"], top["score_b"])) < TOL
    for test, B in (("t", None), ("bootstrap", 200)):
        decisions = fx.compare_rankings("fixture", "auto", MEASURES, what="decisions", test=test, B=B).df()
        reference = fx.discpower(MEASURES, "auto", test=test, B=B, reference_qrels="fixture").df()
        alone = fx.discpower(MEASURES, "fixture", test=test, B=B).df()
        for d, r, a in zip(decisions.to_dict("records"), reference.to_dict("records"), alone.to_dict("records")):
            for name in ("misses", "false_alarms", "tp", "fp", "fn", "tn", "pairs"):
                assert d[name] == r[name], name
            assert d["significant_b"] == r["significant"] and d["significant_a"] == a["significant"]
            assert d["agreement"] == (r["tp"] + r["tn"]) / r["pairs"]
            assert d["opposite"] <= d["false_alarms"]


def _exact_p(shifts: np.ndarray, members: np.ndarray) -> float:
    """The permutation p-value over every subset of the group's size (two-sided about the
    mean of all runs)."""
    mu = shifts.mean()
    observed = abs(shifts[members].mean() - mu)
    subsets = list(itertools.combinations(range(shifts.size), int(members.sum())))
    return np.mean([abs(shifts[list(s)].mean() - mu) >= observed - 1e-12 for s in subsets])


def test_the_bias_test_of_the_groups(fx):
    groups = fx.compare_rankings("fixture", "auto", MEASURES, what="groups", permutations=20000, seed=3).df()
    runs = fx.compare_rankings("fixture", "auto", MEASURES).df()
    for label, part in groups.groupby("measure", sort=False):
        r = runs[runs["measure"] == label]
        shifts, teams = r["shift"].to_numpy(float), r["team"].to_numpy()
        for row in part.to_dict("records"):
            mine = teams == row["team"]
            assert row["runs"] == mine.sum()
            assert abs(row["mean_shift"] - shifts[mine].mean()) < TOL
            assert abs(row["mean_score_b"] - r["score_b"][mine].mean()) < TOL
            # Monte Carlo against the exact enumeration of the 28 pairs of runs
            assert abs(row["p_value"] - _exact_p(shifts, mine)) < 0.015, row
        assert np.allclose(part["p_adjusted"], stats.adjust(part["p_value"].to_numpy(), "holm"))
        assert list(part["mean_shift"]) == sorted(part["mean_shift"], reverse=True)


def test_the_permutation_test_against_a_loop():
    """The vectorized test equals a loop over the same draws, group sizes 1 to all."""
    rng = np.random.default_rng(5)
    values = rng.integers(-6, 7, size=(2, 9)).astype(float)
    labels = np.array(list("aabbbcdde"))
    labels[-1] = "z"
    got = stats.group_mean_test(values, labels, B=300, seed=11)
    draw = np.random.default_rng(11)
    hits = np.zeros((2, len(got["labels"])))
    for _ in range(300):
        perm = np.argsort(draw.random(9))
        for g, label in enumerate(got["labels"]):
            size = int(np.sum(labels == label))
            for m in range(2):
                mu = values[m].mean()
                hits[m, g] += abs(values[m, perm[:size]].mean() - mu) >= abs(values[m, labels == label].mean() - mu) - 1e-9
    assert np.array_equal(got["p"], hits / 300)
    everything = stats.group_mean_test(values, ["x"] * 9, B=100)
    assert (everything["p"] == 1).all()


def test_grouping_by_another_column(fx):
    groups = fx.compare_rankings("fixture", "auto", ["AP"], what="groups", by="kind", permutations=500).df()
    assert set(groups["kind"]) == {"automatic", "manual"}
    assert groups["runs"].sum() == 8


def test_a_derived_qrels_as_a_ranking(fx):
    """Two derived qrels of one root (evaluated together), and a root against its derived
    qrels: the scores are the evaluations of each."""
    runs = fx.compare_rankings("fixture-d5", "fixture-lo-alpha", ["AP"]).df().set_index("run_id")
    for q, column in (("fixture-d5", "score_a"), ("fixture-lo-alpha", "score_b")):
        expected = fx.eval("AP", q, per_topic=False, store=False).df().set_index("run_id")["value"]
        assert np.allclose(runs[column].sort_index(), expected.sort_index(), atol=TOL)
    decisions = fx.compare_rankings("fixture", "fixture-lo-alpha", ["AP"], what="decisions").df()
    reference = fx.discpower(["AP"], "fixture-lo-alpha", reference_qrels="fixture").df()
    assert decisions.loc[0, "misses"] == reference.loc[0, "misses"]


def test_bad_input(fx, hand):
    cases = [
        (lambda: fx.compare_qrels("fixture", "fixture"), "compare two different qrels"),
        (lambda: fx.compare_qrels("fixture", "nosuch"), "unknown qrels 'nosuch'"),
        (lambda: fx.compare_qrels("fixture", "auto", "kappas"), "unknown table 'kappas'; valid: agreement"),
        (lambda: fx.compare_qrels("fixture", "auto", "intervals", B=10), "B must be at least 100"),
        (lambda: fx.compare_qrels("fixture", "auto", "intervals", level=1.5), "confidence level"),
        (lambda: fx.compare_rankings("fixture", "auto", ["AP"], what="teams"), "unknown table 'teams'"),
        (lambda: fx.compare_rankings("fixture", "auto", ["AP"], by="colour"),
         "runs cannot be grouped by 'colour': the run metadata columns are team, kind, pooled"),
        (lambda: fx.compare_rankings("fixture", "auto", ["AP"], what="groups", bias_correction="sidak"),
         "unknown bias correction 'sidak'"),
        (lambda: fx.compare_rankings("fixture", "auto", ["AP"], top_k=1), "top k must be an integer of at least 2"),
        (lambda: fx.compare_rankings("fixture", "auto", ["AP"], permutations=5), "permutations must be"),
        (lambda: fx.compare_rankings("fixture", "auto", ["AP"], runs="alpha1"), "need at least two runs"),
    ]
    for call, message in cases:
        with pytest.raises(IrwError, match=message.replace("(", r"\(")):
            call()


def test_a_set_without_a_relevant_document_names_the_empty_topic_set(cli, tmp_path):
    """Under a judgment set with no relevant document the default topic set is empty: the
    rankings (and the tests over pairs) say so in irw eval's words, not "no topic in common"."""
    zero = tmp_path / "zero.txt"
    zero.write_text("".join(" ".join(line.split()[:3] + ["0"]) + "\n"
                            for line in (FIXTURES / "qrels.txt").read_text().splitlines() if line.strip()))
    cli("load", "collection", FIXTURES, "--name", "fx", "--qrels-name", "fixture")
    cli("load", "qrels", zero, "--name", "zero")
    said = cli("eval", "-m", "AP", "--qrels", "zero").stderr.strip()
    assert said.startswith("no rows: qrels zero has no relevant document (grade >= 1)")
    for args in (("qrels", "rankings", "fixture", "zero", "-m", "AP"),
                 ("qrels", "rankings", "zero", "fixture", "-m", "AP", "--show", "decisions"),
                 ("pvalues", "-m", "AP", "--qrels", "zero")):
        bad = cli(*args, ok=False)
        assert bad.exit_code == 1 and bad.stderr.strip() == "error: " + said[len("no rows: "):], bad.stderr
    assert cli("qrels", "rankings", "fixture", "zero", "-m", "AP", "--topics", "all").exit_code == 0


# ------------------------------------------------------------------ TREC-8 and a simulated judge

FAVOURED = "utwente"


def simulated_judge(w: Warehouse, seed: int = 36) -> pd.DataFrame:
    """An automatic judge of TREC-8: a relevant document is graded 1 or 2, or missed (20%);
    a non-relevant one is called relevant 3% of the time; and every document in the top 20
    of a run of team FAVOURED is graded at least 2 (judged by the assessors or not)."""
    q = w.sql("SELECT topic, docno, rel FROM qrels WHERE qrels = 'trec8' ORDER BY topic, docno").df()
    rng = np.random.default_rng(seed)
    flip = rng.random(len(q))
    relevant = q["rel"].to_numpy() >= 1
    grade = np.where(relevant, np.where(flip < 0.2, 0, rng.integers(1, 3, len(q))), (flip < 0.03).astype(int))
    judged = q.assign(rel=grade)[["topic", "docno", "rel"]]
    top = w.sql(f"""SELECT DISTINCT r.topic, r.docno FROM runs r JOIN run_info i USING (collection, run_id)
                    WHERE i.team = '{FAVOURED}' AND r.rank <= 20""").df()
    out = judged.merge(top.assign(top=True), on=["topic", "docno"], how="outer")
    out["rel"] = np.where(out["top"].eq(True), np.maximum(out["rel"].fillna(0), 2), out["rel"]).astype(int)
    return out[["topic", "docno", "rel"]]


def test_trec8_against_a_simulated_judge(trec8_db, tmp_path):
    path = str(tmp_path / "trec8.duckdb")
    shutil.copy(trec8_db, path)  # the session's warehouse stays as the other tests expect it
    with Warehouse(path) as w:
        w.load_qrels(simulated_judge(w), "judge")
        table = assert_agreement_is_the_definition(w, "trec8", "judge", 1)
        assert len(table) == 51 and table.loc["all", "both"] == 86830 and table.loc["all", "only_b"] > 0
        r = judges.rankings(w.con, "trec8", "judge", parse_all(["AP", "P@10"]), w.run_ids(qrels="trec8"))
        groups, runs = judges.groups_frame(r), judges.runs_frame(r)  # irw qrels rankings' tables
    for label, part in groups.groupby("measure", sort=False):
        assert part.iloc[0]["team"] == FAVOURED, part.head(3)  # the largest mean rank gain
        assert part.iloc[0]["mean_shift"] > part.iloc[1]["mean_shift"]
        assert part.iloc[0]["p_adjusted"] < 0.01 and part.iloc[0]["flag"] == "favoured"
        assert list(part.loc[part["flag"] == "favoured", "team"]) == [FAVOURED], label
    mine = runs[runs["team"] == FAVOURED]
    assert (mine["shift"] > 0).all() and len(mine) == 10


# ------------------------------------------------------------------ the page: irw report --against

PAGE_MEASURES = ["AP", "nDCG@10"]


@pytest.fixture(scope="module")
def judges_page(fx, tmp_path_factory):
    from conftest import cli_for

    out = tmp_path_factory.mktemp("judges-page") / "judges.html"
    args = [a for m in PAGE_MEASURES for a in ("-m", m)]
    result = cli_for(fx.path)("report", "--qrels", "fixture", "--against", "auto", *args, "--top-k", "4",
                              "--permutations", "2000", "--out", out)
    assert "wrote the html report on 8 runs and 2 measures (qrels fixture against auto)" in result.output
    return out


def test_the_page_holds_every_table(fx, judges_page):
    from irwarehouse.report import JUDGES_SECTIONS
    from test_report import parse_page, rows_of, table_of

    text = judges_page.read_text(encoding="utf-8")
    for needle in ("http://", "https://", "<script", "<link", "@import", "url("):
        assert needle not in text.lower(), needle
    doc = parse_page(text)
    assert doc.sections == list(JUDGES_SECTIONS)
    assert {k: len(v) for k, v in doc.images.items()} == {"agreement": 1, "scores": 2, "groups": 1}
    assert all(src.startswith("data:image/svg+xml;base64,") for v in doc.images.values() for src in v)
    # agreement: irw qrels compare's intervals and confusion matrix
    _, rows = rows_of(table_of(doc, "agreement", "intervals"))
    intervals = fx.compare_qrels("fixture", "auto", "intervals").records()
    assert [r["value"]["text"] for r in rows] == [f"{x['value']:.4f}" for x in intervals]
    assert [r["95% interval"]["text"] for r in rows] == [f"[{x['ci_low']:.4f}, {x['ci_high']:.4f}]" for x in intervals]
    _, rows = rows_of(table_of(doc, "agreement", "confusion"))
    confusion = fx.compare_qrels("fixture", "auto", "confusion").records()
    assert [[c["text"] for c in r.values()] for r in rows] == \
        [[x["grade_a"]] + ["–" if v is None else f"{v:,}" for k, v in x.items() if k.startswith("b=")]
         for x in confusion]
    # the two leaderboards: irw qrels rankings' runs, ordered by each set
    runs = fx.compare_rankings("fixture", "auto", PAGE_MEASURES).df()
    for table, label in zip(doc.tables["leaderboards"], PAGE_MEASURES):
        part = runs[runs["measure"] == label]
        cells = [[c["text"] for c in row] for row in table[1:]]
        by_a = part.sort_values(["rank_a", "run_id"])
        by_b = part.sort_values(["rank_b", "run_id"])
        assert [c[1] for c in cells] == list(by_a["run_id"]) and [c[5] for c in cells] == list(by_b["run_id"])
        assert [c[3] for c in cells] == [f"{v:.4f}" for v in by_a["score_a"]]
        assert [int(c[8]) for c in cells] == list(by_b["shift"])
    # scores: irw qrels rankings' correlations; decisions: its decisions
    _, rows = rows_of(table_of(doc, "scores", "correlation"))
    correlation = fx.compare_rankings("fixture", "auto", PAGE_MEASURES, what="correlation", top_k=4).records()
    for row, c in zip(rows, correlation):
        assert row["τ-b"]["text"] == f"{c['kendall_tau']:.4f}" and row["τ-b, top 4"]["text"] == f"{c['kendall_tau_top']:.4f}"
    _, rows = rows_of(table_of(doc, "decisions", "decisions"))
    decisions = fx.compare_rankings("fixture", "auto", PAGE_MEASURES, what="decisions").records()
    for row, d in zip(rows, decisions):
        assert [row[k]["text"] for k in ("misses", "false alarms", "agreement")] == \
            [str(d["misses"]), str(d["false_alarms"]), f"{d['agreement']:.4f}"]
    groups = fx.compare_rankings("fixture", "auto", PAGE_MEASURES, what="groups", permutations=2000).df()
    tables = [t for t, cls in zip(doc.tables["groups"], doc.classes["groups"]) if cls == "groups"]
    for table, label in zip(tables, PAGE_MEASURES):
        part = groups[groups["measure"] == label]
        assert [[c["text"] for c in row][:1] + [row[6]["text"]] for row in table[1:]] == \
            [[g, f"{p:.4f}"] for g, p in zip(part["team"], part["p_adjusted"])]
    assert "No team is flagged." in text


def test_the_page_escapes_names_and_a_browser_lays_it_out(fx, tmp_path):
    """A qrels and a team named with markup are printed as text; Chromium decodes every
    figure and lays out every section."""
    import json
    import re
    import subprocess
    import html as html_module

    from irwarehouse.report import JUDGES_SECTIONS
    from test_report import LAYOUT_PROBE, browser, parse_page

    path = str(tmp_path / "w.duckdb")
    shutil.copy(fx.path, path)
    hostile = 'a<i>&"judge'
    with Warehouse(path) as w:
        w.load_qrels(str(FIXTURES / "auto-qrels.txt"), hostile)
        w.sql("UPDATE run_meta SET team = '<b>gamma</b>' WHERE team = 'gamma'")
        page = tmp_path / "p.html"
        rep = w.report(["AP"], "fixture", against=hostile, permutations=500, format="html", out=page)
    text = page.read_text(encoding="utf-8")
    assert "<i>" not in text and "<b>gamma" not in text
    assert "a&lt;i&gt;&amp;&#34;judge" in text and "&lt;b&gt;gamma&lt;/b&gt;" in text
    assert rep.against == hostile and len(rep.runs) == 8
    doc = parse_page(text)
    exe = browser()
    if exe is None:
        pytest.skip("no headless browser (chromium): the layout is not checked")
    probe = tmp_path / "probe.html"
    probe.write_text(text.replace("</body>", LAYOUT_PROBE + "</body>"), encoding="utf-8")
    dom = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,1000",
                          f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", probe.as_uri()],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    layout = json.loads(html_module.unescape(re.search(r'<pre id="irw-layout">(.*?)</pre>', dom, re.S).group(1)))
    assert len(layout["images"]) == sum(len(v) for v in doc.images.values()) == 3
    for image in layout["images"]:
        assert image["complete"] and min(image["natural"]) > 50 and image["shown"] == image["natural"], image
    assert [s[0] for s in layout["sections"]] == list(JUDGES_SECTIONS)
    assert all(s[3] > 100 for s in layout["sections"])


def test_report_options_of_the_other_kind(fx):
    with pytest.raises(IrwError, match="--by: only with --against"):
        fx.report(["AP"], "fixture", by="kind", format="markdown")
    with pytest.raises(IrwError, match="--judged-k, --rbp-p: not with --against"):
        fx.report(["AP"], "fixture", against="auto", rbp_p=0.5, judged_k=5)
    with pytest.raises(IrwError, match="an html page, not 'latex'"):
        fx.report(["AP"], "fixture", against="auto", format="latex")
