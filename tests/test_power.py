"""How many topics are enough (SPEC §5, "Topic set size design"; Sakai 2016): checked against
published sample sizes (G*Power's paired t-test and one-way ANOVA tables) and against an
independent exact computation -- V_E from the ANOVA's sums of squares, the power of each
topic set size from scipy's noncentral t (or F), one n at a time."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as sps

from irwarehouse import Warehouse
from irwarehouse import power as P


def exact_t_power(n: int, delta: float, ve: float, alpha: float = 0.05) -> float:
    df, lam = n - 1, math.sqrt(n) * delta / math.sqrt(2 * ve)
    critical = sps.t.isf(alpha / 2, df)  # = ppf(1 - alpha / 2), exact for a tiny alpha too
    return sps.nct.sf(critical, df, lam) + sps.nct.cdf(-critical, df, lam)


def exact_topics(delta: float, ve: float, alpha: float = 0.05, beta: float = 0.2) -> int:
    n = 2
    while exact_t_power(n, delta, ve, alpha) < 1 - beta:
        n += 1
    return n


def exact_anova_power(n: int, m: int, d: float, ve: float, alpha: float = 0.05) -> float:
    df1, df2 = m - 1, m * (n - 1)
    return sps.ncf.sf(sps.f.ppf(1 - alpha, df1, df2), df1, df2, n * d * d / (2 * ve))


def residual_variance(X) -> float:
    a, b = X.shape
    grand = X.mean()
    ss = ((X - grand) ** 2).sum() - b * ((X.mean(axis=1) - grand) ** 2).sum() \
        - a * ((X.mean(axis=0) - grand) ** 2).sum()
    return ss / ((a - 1) * (b - 1))


def test_published_sample_sizes():
    # G*Power, matched pairs, d_z = 0.5 (sigma_d^2 = 2 V_E = 1), two-sided 0.05, power 0.8:
    # 34 pairs, actual power 0.8078
    assert P.topics_needed(0.5, 0.5) == 34
    assert P.t_power(34, 0.5, 0.5) == pytest.approx(0.8078, abs=1e-4)
    # G*Power, one-way ANOVA, f = 0.25, 4 groups, 0.05, power 0.8: 45 per group (180 in all);
    # f^2 = D^2 / (2 k sigma^2) for the minimum-range configuration
    assert P.anova_topics_needed(4, math.sqrt(0.5), 1.0) == 45


@pytest.mark.parametrize("delta, ve, alpha, beta", [(0.05, 0.01, 0.05, 0.2), (0.1, 0.03, 0.01, 0.1),
                                                    (0.3, 0.02, 0.05, 0.5), (0.3, 0.01, 0.05, 0.2)])
def test_topics_needed_and_detectable_difference_are_exact(delta, ve, alpha, beta):
    n = P.topics_needed(delta, ve, alpha, beta)
    assert n == exact_topics(delta, ve, alpha, beta)
    mdd = P.min_detectable_difference(n, ve, alpha, beta)
    assert exact_t_power(n, mdd, ve, alpha) == pytest.approx(1 - beta, abs=1e-9)
    assert mdd <= delta  # n topics are enough for delta, so they detect at most delta
    m = 6
    k = P.anova_topics_needed(m, delta, ve, alpha, beta)
    assert exact_anova_power(k, m, delta, ve, alpha) >= 1 - beta
    assert k == 2 or exact_anova_power(k - 1, m, delta, ve, alpha) < 1 - beta
    rng = P.anova_min_detectable_range(k, m, ve, alpha, beta)
    assert exact_anova_power(k, m, rng, ve, alpha) == pytest.approx(1 - beta, abs=1e-9)


def test_bad_parameters():
    for call in (lambda: P.topics_needed(0, 0.01), lambda: P.topics_needed(0.1, 0.0),
                 lambda: P.topics_needed(0.1, 0.01, alpha=1.0), lambda: P.topics_needed(0.1, 0.01, beta=0),
                 lambda: P.anova_topics_needed(1, 0.1, 0.01)):
        with pytest.raises(ValueError):
            call()
    assert P.topics_needed(1e-7, 1.0) is None  # more than MAX_TOPICS


def test_power_command(cli):
    from conftest import FIXTURES

    cli("load", "collection", FIXTURES, "--name", "fx", "--qrels-name", "fixture")
    rows = json.loads(cli("power", "-m", "AP", "--delta", "0.1", "--anova", "--systems", "4",
                          "--format", "json").stdout)
    assert len(rows) == 1 and rows[0]["anova_systems"] == 4 and rows[0]["topics"] == 5
    assert rows[0]["topics_needed"] == exact_topics(0.1, rows[0]["residual_variance"])
    bad = cli("power", "-m", "AP", "--delta", "-0.1", ok=False)
    assert bad.exit_code == 1 and "positive" in bad.stderr
    bad = cli("power", "-m", "AP", "--delta", "0.1", "--systems", "4", ok=False)
    assert "--anova" in bad.stderr


def test_power_command_extreme_values(cli):
    """A difference too small for any topic set leaves topics_needed blank and says why in
    ``note``; a huge one needs the smallest design; error rates out of reach are one line."""
    from conftest import FIXTURES

    cli("load", "collection", FIXTURES, "--name", "fx", "--qrels-name", "fixture")
    for anova in ([], ["--anova"]):
        rows = json.loads(cli("power", "-m", "AP", "--delta", "1e-300", "--delta", "0.1", *anova,
                              "--format", "json").stdout)
        tiny, fine = rows
        assert tiny["topics_needed"] is None and fine["topics_needed"] > 2
        assert isinstance(fine["topics_needed"], int)  # a count, even beside a blank
        assert f"more than {P.MAX_TOPICS:,} topics" in tiny["note"] and "1e-300" in tiny["note"]
        assert fine["note"] == ""
        if anova:
            assert tiny["anova_topics_needed"] is None and "the ANOVA" in tiny["note"]
        huge = json.loads(cli("power", "-m", "AP", "--delta", "1e300", *anova, "--format", "json").stdout)[0]
        assert huge["topics_needed"] == 2 and huge["power"] == 1.0 and "note" not in huge
        if anova:
            assert huge["anova_topics_needed"] == 2 and huge["anova_power"] == 1.0
    for option, value in (("--alpha", "1e-13"), ("--beta", "0"), ("--alpha", "1"), ("--delta", "inf")):
        bad = cli("power", "-m", "AP", "--delta", "0.1", option, value, "--anova", ok=False)
        assert bad.exit_code == 1 and "unexpected" not in bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    # power wanted below alpha: any test has it, with two topics and no difference at all
    weak = json.loads(cli("power", "-m", "AP", "--delta", "0.1", "--beta", "0.99", "--anova",
                          "--format", "json").stdout)[0]
    assert weak["topics_needed"] == 2 and weak["min_detectable_diff"] == 0.0
    assert weak["anova_topics_needed"] == 2 and weak["anova_min_detectable_range"] == 0.0


def test_extreme_error_rates_are_exact():
    """A tiny alpha is a large but finite critical value (not 1 - alpha rounded to 1)."""
    ve = 0.01
    n = P.topics_needed(0.1, ve, alpha=1e-12)

    def upper_tail(n):  # scipy's lower tail is NaN out here, and below 1e-16 anyway
        df = n - 1
        return sps.nct.sf(sps.t.isf(5e-13, df), df, math.sqrt(n) * 0.1 / math.sqrt(2 * ve))

    assert upper_tail(n - 1) < 0.8 <= upper_tail(n) and 100 < n < 1000
    assert P.topics_needed(1e-300, ve) is None and P.anova_topics_needed(4, 1e-300, ve) is None
    assert P.anova_power(5, 4, 1e300, ve)[()] == 1.0 and P.t_power(5, 1e300, ve)[()] == 1.0
    with pytest.raises(ValueError, match="at least 1e-12"):
        P.topics_needed(0.1, ve, alpha=1e-13)


def test_trec8_ap(trec8_db):
    """Done when: irw power on TREC-8 AP at delta 0.02, 0.05 and 0.1 is within one topic of an
    independent exact computation."""
    with Warehouse(trec8_db) as w:  # for writing: its cached base relation is used
        rows = w.power("AP", [0.02, 0.05, 0.1], anova=True).records()
        per = w.eval("AP", store=False).df()
    X = per.pivot(index="run_id", columns="topic", values="value").to_numpy()
    ve = residual_variance(X)
    assert X.shape == (129, 50)
    for row in rows:
        assert row["residual_variance"] == pytest.approx(ve, rel=1e-12)
        assert abs(row["topics_needed"] - exact_topics(row["delta"], ve)) <= 1
        assert row["power"] == pytest.approx(exact_t_power(50, row["delta"], ve), abs=1e-9)
        assert row["anova_systems"] == 129
        assert exact_anova_power(row["anova_topics_needed"], 129, row["delta"], ve) >= 0.8
    mdd = rows[0]["min_detectable_diff"]
    assert optimize.brentq(lambda d: exact_t_power(50, d, ve) - 0.8, mdd / 2, mdd * 2) == pytest.approx(mdd, abs=1e-9)
    assert [r["topics_needed"] for r in rows] == sorted((r["topics_needed"] for r in rows), reverse=True)
    assert np.isclose(rows[1]["power"], exact_t_power(50, 0.05, ve))


def test_trec8_output_in_the_statistics_guide(trec8_db):
    """The guide's TREC-8 table is what irw power prints on TREC-8."""
    from conftest import ROOT, cli_for

    text = (ROOT / "docs" / "statistics.md").read_text()
    start = text.index("<!-- trec8-power-output -->\n```\n") + len("<!-- trec8-power-output -->\n```\n")
    shown = text[start:text.index("```\n<!-- /trec8-power-output -->")]
    printed = cli_for(trec8_db)("power", "-m", "AP", "--delta", "0.02", "--delta", "0.05", "--delta", "0.1").stdout
    assert [line.rstrip() for line in printed.splitlines()] == [line.rstrip() for line in shown.splitlines()]
