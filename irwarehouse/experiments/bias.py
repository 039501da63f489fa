"""System bias and pool-depth bias (Sakai, JIP 2009; SPEC §6).

One run per team is drawn at random (with a seed) from the evaluated runs; every analysis
works on these runs. Nine measures by default: AP, Q, nDCG (Järvelin–Kekäläinen discount,
@1000), RBP(p=0.95), their condensed (judged-only) versions, and Bpref.

(a) Leave-one-team-out: each selected run is evaluated with ``J − U_t`` of its own team
    (U_t from the pool runs at the pool depth), as if its team had not contributed to the
    pool; its score change (%) and its rank change among the selected runs -- the others
    keep their full-qrels scores: the run is the "new team" joining the existing ones.
(b) Take-one-team ``J ∩ D_t`` for every pool team whose D_t holds a relevant document for
    every topic of the topic set, and take-three-teams ``J ∩ (D_a ∪ D_b ∪ D_c)`` of the three
    pool teams with the fewest unique contributions; per condition and measure Kendall's τ
    of the selected runs' ranking against the full-qrels ranking, and discriminative power
    by the paired bootstrap test with misses and false alarms against the full qrels.
(c) Shallow pools ``J ∩ pool(all runs, pd)``: the same statistics.

Every qrels is a derived qrels in the warehouse (``{qrels}-bias-lo-TEAM``,
``{qrels}-bias-take-TEAM``, ``{qrels}-bias-take3``, ``{qrels}-bias-pdN``, rebuilt with
replace); each condition's per-topic scores and its statistics are resumable cells.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import catalogue, measures, runsets, significance, stats
from ..engine import evaluation, pools
from .base import Experiment, ExperimentContext, Outcome, execute, require, split_values

DEFAULT_MEASURES = ["AP", "Q", "nDCG(discount=jk)@1000", "RBP(p=0.95)",
                    "AP'", "Q'", "nDCG'(discount=jk)@1000", "RBP'(p=0.95)", "Bpref"]
SHALLOW = [50, 10, 1]
PARTS = ("a", "b", "c")
FULL = "full"


# --------------------------------------------------------------------------- selection

def select_runs(con, run_ids: list[str], seed: int, collection: str) -> pd.DataFrame:
    """One run per team among ``run_ids`` of ``collection``, at random: teams in name order,
    each draws one of its runs (in name order) uniformly with ``numpy.random.default_rng(seed)``."""
    rng = stats.rng_of(seed)
    rows = []
    for team, runs in sorted(catalogue.teams_of(con, run_ids, collection).items()):
        runs = sorted(runs)
        rows.append({"team": team, "run_id": runs[int(rng.integers(len(runs)))],
                     "team_runs": len(runs)})
    return pd.DataFrame(rows)


def team_table(con, qrels: str, pool_ids: list[str], depth: int) -> pd.DataFrame:
    """Per pool team (summed over topics): |D_t|, |D_t^rel|, |U_t|, |U_t^rel|, and the number
    of topics of the topic set where D_t^rel is empty."""
    bind = {"q": qrels, "runs": pool_ids, "depth": depth}
    return con.execute("""
        WITH ts AS (SELECT topic FROM topic_sets WHERE qrels = $q),
             c AS (SELECT team, count(*) AS contributed,
                          count(*) FILTER (WHERE rel >= 1) AS contributed_relevant
                   FROM team_contributions($q, $runs, $depth) GROUP BY team),
             u AS (SELECT team, count(*) AS "unique", count(*) FILTER (WHERE rel >= 1) AS unique_relevant
                   FROM unique_contributions($q, $runs, $depth) GROUP BY team),
             r AS (SELECT DISTINCT team, topic FROM team_contributions($q, $runs, $depth)
                   WHERE rel >= 1)
        SELECT c.team, c.contributed, c.contributed_relevant,
               coalesce(u."unique", 0) AS "unique", coalesce(u.unique_relevant, 0) AS unique_relevant,
               (SELECT count(*) FROM ts WHERE NOT EXISTS (
                    SELECT 1 FROM r WHERE r.team = c.team AND r.topic = ts.topic)) AS topics_without_relevant
        FROM c LEFT JOIN u USING (team)
        ORDER BY c.team""", bind).df()


def fewest_unique(teams: pd.DataFrame, k: int = 3) -> list[str]:
    """The k teams with the fewest unique contributions |U_t| (ties: fewer unique relevant,
    then team name)."""
    order = teams.sort_values(["unique", "unique_relevant", "team"])
    return list(order["team"].head(k))


# --------------------------------------------------------------------------- statistics

def matrix(per: pd.DataFrame, label: str, run_ids: list[str]) -> tuple[np.ndarray, list[str]]:
    """X[run, topic] of one measure: runs in the given order, topics sorted; all present."""
    X, topics = significance.matrix(per, label, run_ids)
    require(not np.isnan(X).any(), f"missing scores for {label}")
    return X, topics


def means(per: pd.DataFrame) -> pd.DataFrame:
    """Mean per run and measure over the topics."""
    return per.groupby(["run_id", "measure"], as_index=False)["value"].mean()


def rank_among(value: float, others: np.ndarray) -> int:
    """1 + the number of other runs scoring strictly higher (ties share the better rank)."""
    return 1 + int(np.sum(others > value))


def condition_stats(per: pd.DataFrame, full: pd.DataFrame, labels: list[str], run_ids: list[str],
                    B: int, seed: int, alpha: float, reference: dict) -> pd.DataFrame:
    """Per measure: Kendall's τ-b against the full-qrels ranking; bootstrap discriminative
    power; agreement (misses, false alarms, TP/FP/FN/TN) with the full qrels' decisions."""
    rows = []
    for label in labels:
        X, topics = matrix(per, label, run_ids)
        R, ref_topics = matrix(full, label, run_ids)
        require(topics == ref_topics, f"the condition and the full qrels differ in topics ({label})")
        result = significance.run_test(X, "bootstrap", B, seed, alpha)
        if label not in reference:
            reference[label] = significance.run_test(R, "bootstrap", B, seed, alpha)
        power = stats.discriminative_power(result, alpha)
        agree = stats.compare_to_reference(result, reference[label], alpha)
        estimate = stats.estimated_difference_summary(result)
        rows.append({"measure": label, "runs": len(run_ids), "topics": len(topics),
                     "kendall_tau": stats.kendall_tau(R.mean(axis=1), X.mean(axis=1)),
                     "discriminative_power": power["discriminative_power"],
                     "significant": power["significant"], "pairs": power["pairs"],
                     "undefined": power["undefined"],
                     "misses": agree["misses"], "false_alarms": agree["false_alarms"],
                     "tp": agree["tp"], "fp": agree["fp"], "fn": agree["fn"], "tn": agree["tn"],
                     "opposite": agree["opposite"],
                     "estimated_difference_max": estimate["max"]})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the experiment

@dataclass
class _Setting:
    """What every part of the experiment works on: the selected runs (one per team), the pool
    teams, the full qrels's scores, and the cells of per-topic scores."""
    ectx: ExperimentContext
    qrels: str
    parsed: list
    labels: list[str]
    pool_runs: str
    pool_ids: list[str]
    depth: int
    selected: pd.DataFrame
    teams: pd.DataFrame
    tag: str
    full: pd.DataFrame | None = None

    @property
    def con(self):
        return self.ectx.con

    @property
    def sel_ids(self) -> list[str]:
        return list(self.selected["run_id"])

    @property
    def pool_teams(self) -> set:
        return set(self.teams["team"])

    def scores(self, key: str, name: str, build, run_list: list[str]) -> pd.DataFrame:
        """The per-topic scores of ``run_list`` on qrels ``name`` (built first by ``build``
        when given), a resumable cell."""
        def compute():
            if build is not None:
                build()
            per = evaluation.evaluate(self.con, name, self.parsed, run_list, store=False).df()
            return per[["run_id", "topic", "measure", "value"]].assign(qrels=name)
        return self.ectx.cell(f"{self.tag}-scores-{key}", compute)


def _setting(ectx: ExperimentContext, qrels: str, run_ids: list[str], pool_runs: str, depth: int,
             labels: list[str], seed: int) -> _Setting:
    """Select one run per team, find the pool teams, score the full qrels and describe them."""
    con = ectx.con
    parsed = measures.parse_all(labels)
    labels = [str(m) for m in parsed]
    pool_ids = runsets.resolve(con, pool_runs, qrels=qrels)

    selected = select_runs(con, run_ids, seed, catalogue.collection_of(con, qrels))
    require(len(selected) >= 2, f"the run set has {len(selected)} team(s): the bias experiment "
            "needs at least two (one run per team)")
    sel_ids = list(selected["run_id"])
    teams = team_table(con, qrels, pool_ids, depth)
    # Cells also depend on what the defaults resolved to (the run selection, the pools).
    tag = hashlib.sha1(json.dumps([qrels, sel_ids, pool_ids, labels]).encode()).hexdigest()[:8]
    s = _Setting(ectx, qrels, parsed, labels, pool_runs, pool_ids, depth, selected, teams, tag)
    s.full = s.scores(FULL, qrels, None, sel_ids)

    selected["team_in_pool"] = selected["team"].isin(s.pool_teams)
    selected = selected.merge(teams[["team", "unique", "unique_relevant"]], on="team", how="left")
    selected[["unique", "unique_relevant"]] = selected[["unique", "unique_relevant"]].fillna(0).astype(int)
    s.selected = selected
    ectx.text(
        f"Qrels `{qrels}`; evaluated runs: {len(run_ids)} from {len(selected)} teams, of which one "
        f"run per team is drawn at random (seed {seed}): these {len(selected)} runs are ranked in "
        f"every condition. Pools: the `{pool_runs}` runs ({len(pool_ids)} runs, {len(s.pool_teams)} "
        f"teams) at depth {depth}; D_t is a team's pool, U_t the part of it no other team "
        "contributed. Measures: " + ", ".join(f"`{m}`" for m in labels) + ".")
    ectx.table("selected_runs", selected,
               "The selected runs (one per team) with their team's unique contributions "
               "|U_t| and |U_t^rel| (summed over topics)")
    return s


def run(ectx: ExperimentContext, qrels: str, run_ids: list[str], pool_runs: str, depth: int,
        labels: list[str], seed: int, shallow: list[int], B: int, alpha: float,
        parts: tuple[str, ...] = PARTS) -> str:
    s = _setting(ectx, qrels, run_ids, pool_runs, depth, labels, seed)
    main = "selected_runs"
    if "a" in parts:
        _leave_one_team_out(s)
        main = "leave_out_summary"
    conditions = []  # (key, condition, kind, teams, depth, qrels name, build or None)
    if "b" in parts:
        conditions += _team_conditions(s)
    if "c" in parts:
        conditions += _shallow_conditions(s, shallow)
    if conditions:
        _compare_conditions(s, conditions, B, seed, alpha)
        main = "summary"
    return main


# --------------------------------------------------------------------------- (a) leave-one-team-out

def _leave_out_rows(s: _Setting) -> pd.DataFrame:
    """Per selected run and measure: its score and rank with the full qrels and with ``J − U_t``
    of its own team (the other runs keep their full-qrels scores)."""
    con, qrels, labels, pool_teams, sel_ids = s.con, s.qrels, s.labels, s.pool_teams, s.sel_ids
    full_means = means(s.full).set_index(["run_id", "measure"])["value"]
    lo_teams = [t for t in s.selected["team"] if t in pool_teams]
    lo_name = {t: f"{qrels}-bias-lo-{t}" for t in lo_teams}
    built = []

    def build_leave_out():
        if not built:  # all missing leave-out qrels at once: U_t is computed once
            pools.build_many(con, "leave-out", qrels, [(lo_name[t], [t]) for t in lo_teams],
                             runs=s.pool_runs, depth=s.depth, replace=True,
                             description="bias experiment: leave-one-team-out")
            built.append(True)

    rows = []
    for rec in s.ectx.progress(list(s.selected.itertuples(index=False)), "leave-one-team-out"):
        if rec.team in pool_teams:
            per = s.scores(f"lo-{rec.team}", lo_name[rec.team], build_leave_out, [rec.run_id])
            lo_means = means(per).set_index("measure")["value"]
            name = lo_name[rec.team]
        else:  # the team did not contribute to the pool: J − U_t = J
            lo_means = full_means.xs(rec.run_id, level="run_id")
            name = qrels
        others = [r for r in sel_ids if r != rec.run_id]
        for label in labels:
            before, after = float(full_means[(rec.run_id, label)]), float(lo_means[label])
            other = np.array([full_means[(r, label)] for r in others])
            rank_full, rank_lo = rank_among(before, other), rank_among(after, other)
            rows.append({"run_id": rec.run_id, "team": rec.team, "measure": label,
                         "qrels": name, "team_in_pool": rec.team in pool_teams,
                         "full": before, "left_out": after,
                         "change_pct": 100.0 * (after - before) / before if before else np.nan,
                         "rank_full": rank_full, "rank_left_out": rank_lo,
                         "rank_change": rank_lo - rank_full})
    return pd.DataFrame(rows)


def _leave_out_summary(counted: pd.DataFrame, labels: list[str]) -> pd.DataFrame:
    """Per measure: the mean and largest score and rank changes of the runs counted."""
    summary = []
    for label in labels:
        sub = counted[counted["measure"] == label]
        pct = sub["change_pct"].dropna()
        ranks = sub["rank_change"].abs()
        summary.append({"measure": label, "runs": len(sub),
                        "mean_change_pct": pct.mean() if len(pct) else np.nan,
                        "mean_abs_change_pct": pct.abs().mean() if len(pct) else np.nan,
                        "max_abs_change_pct": pct.abs().max() if len(pct) else np.nan,
                        "mean_abs_rank_change": ranks.mean() if len(sub) else np.nan,
                        "max_abs_rank_change": int(ranks.max()) if len(sub) else 0,
                        "rank_changed": int((ranks > 0).sum())})
    return pd.DataFrame(summary)


def _leave_one_team_out(s: _Setting) -> None:
    """Part (a): the score and rank changes, their summary over the pool teams' runs, a figure."""
    ectx, labels = s.ectx, s.labels
    leave = _leave_out_rows(s)
    counted = leave[leave["team_in_pool"]]
    leave_summary = _leave_out_summary(counted, labels)
    dropped = sorted(set(s.selected["team"]) - s.pool_teams)
    ectx.text(
        "(a) Leave-one-team-out (Zobel 1998; Sakai 2009). Each selected run is evaluated with "
        "`J − U_t` of its own team t — the team's unique contributions become unjudged — and "
        "compared with its full-qrels score: change % = 100 (left-out − full) / full. Its rank "
        f"is its position among the {len(s.selected)} selected runs (1 = best; ties share the "
        "better rank) where the other runs keep their full-qrels scores, so the run plays a new "
        "team joining a fully judged collection; rank change = rank left out − rank full "
        "(positive: the run drops). The summary is over the runs whose team contributed to the "
        "pool" + (f" (not: {', '.join(dropped)}, whose U_t is empty)" if dropped else "") + ".")
    ectx.table("leave_out", leave, "Leave-one-team-out: score and rank change per selected run and measure")
    ectx.table("leave_out_summary", leave_summary,
               "Leave-one-team-out per measure: mean signed and absolute % change, largest "
               "absolute % change, mean and largest |rank change|, runs whose rank changes")
    if len(leave_summary):
        worst = leave_summary.sort_values("mean_abs_change_pct", ascending=False)
        ectx.text(f"Largest mean absolute change under leave-one-team-out: "
                  f"`{worst.iloc[0]['measure']}` ({worst.iloc[0]['mean_abs_change_pct']:.2f}%); "
                  f"smallest: `{worst.iloc[-1]['measure']}` ({worst.iloc[-1]['mean_abs_change_pct']:.2f}%).")
    _leave_out_figure(ectx, counted, labels)


# --------------------------------------------------------------------------- (b) and (c)

def _team_conditions(s: _Setting) -> list[tuple]:
    """Part (b): the take-one-team conditions of the teams whose pool has a relevant document
    for every topic, and take-three-teams of the three with the fewest unique contributions."""
    con, qrels, teams, depth = s.con, s.qrels, s.teams, s.depth
    eligible = list(teams.loc[teams["topics_without_relevant"] == 0, "team"])
    excluded = list(teams.loc[teams["topics_without_relevant"] > 0, "team"])
    take_name = {t: f"{qrels}-bias-take-{t}" for t in eligible}
    built_take = []

    def build_take():
        if not built_take:
            pools.build_many(con, "take", qrels, [(take_name[t], [t]) for t in eligible],
                             runs=s.pool_runs, depth=depth, replace=True,
                             description="bias experiment: take-one-team")
            built_take.append(True)

    conditions = [(f"take-{t}", f"take-one-team {t}", "take-one-team", t, depth, take_name[t], build_take)
                  for t in eligible]
    three = fewest_unique(teams) if len(teams) >= 3 else []
    if three:
        name3 = f"{qrels}-bias-take3"
        conditions.append(("take3", "take-three-teams", "take-three-teams", ",".join(three), depth,
                           name3, lambda: pools.build(con, "take", qrels, name3, runs=s.pool_runs,
                                                      depth=depth, teams=three, replace=True,
                                                      description="bias experiment: take-three-teams")))
    teams["take_one_team"] = teams["team"].isin(eligible)
    teams["take_three_teams"] = teams["team"].isin(three)
    s.ectx.text(
        "(b) System bias (Büttcher et al. 2007; Sakai 2009). Take-one-team qrels `J ∩ D_t` keep "
        f"only the judgments of team t's pool; {len(eligible)} of the {len(teams)} pool teams "
        "qualify — a team whose D_t holds no relevant document for some topic of the topic set "
        "is excluded" + (f" ({', '.join(excluded)})" if excluded else "") + ". Take-three-teams "
        "keeps the union of the pools of the three teams with the fewest unique contributions "
        "|U_t| (ties: fewer unique relevant, then name)"
        + (f": {', '.join(three)}" if three else " (skipped: fewer than three pool teams)") + ".")
    s.ectx.table("teams", teams, "Pool teams: |D_t|, |D_t^rel|, |U_t|, |U_t^rel| (summed over topics), "
                 "topics where D_t^rel is empty, and the conditions the team forms")
    return conditions


def _shallow_conditions(s: _Setting, shallow: list[int]) -> list[tuple]:
    """Part (c): the shallow pools of every run at each depth of ``shallow``."""
    con, qrels = s.con, s.qrels
    conditions = []
    for pd_ in shallow:
        name = f"{qrels}-bias-pd{pd_}"
        conditions.append((f"pd{pd_}", f"shallow pd={pd_}", "shallow", "", pd_, name,
                           lambda pd_=pd_, name=name: pools.build(
                               con, "shallow", qrels, name, runs="all", depth=pd_, replace=True,
                               description="bias experiment: shallow pool")))
    s.ectx.text(
        "(c) Pool-depth bias (Sakai 2009). Shallow-pool qrels `J ∩ pool(all runs, pd)` for pd ∈ {"
        + ", ".join(map(str, shallow)) + "}: only documents that some run ranks in its top pd "
        "keep their judgments.")
    return conditions


def _condition_rows(s: _Setting, conditions: list[tuple], B: int, seed: int, alpha: float) -> pd.DataFrame:
    """Per condition (the full qrels first) and measure: τ and the bootstrap decisions."""
    reference: dict = {}
    summary_rows = []
    specs = [(FULL, "full", "full", "", None, s.qrels, None), *conditions]
    for key, condition, kind, team_list, d, name, build in s.ectx.progress(specs, "conditions"):
        per = s.full if key == FULL else s.scores(key, name, build, s.sel_ids)

        def compute(per=per):
            return condition_stats(per, s.full, s.labels, s.sel_ids, B, seed, alpha, reference)

        frame = s.ectx.cell(f"{s.tag}-stats-{key}", compute)
        info = _qrels_counts(s.con, name)
        for row in frame.to_dict(orient="records"):
            summary_rows.append({"condition": condition, "kind": kind, "teams": team_list,
                                 "depth": d, "qrels": name, **info, **row})
    summary = pd.DataFrame(summary_rows)
    summary["depth"] = summary["depth"].astype("Int64")
    return summary


def _compare_conditions(s: _Setting, conditions: list[tuple], B: int, seed: int, alpha: float) -> None:
    """Parts (b) and (c): every condition against the full qrels, in tables and figures."""
    ectx, labels, n = s.ectx, s.labels, len(s.sel_ids)
    summary = _condition_rows(s, conditions, B, seed, alpha)
    ectx.text(
        f"For every condition and measure: Kendall's τ (τ-b) between the ranking of the "
        f"{n} selected runs by mean score under the condition and under the full "
        f"qrels; discriminative power — the fraction of the {n * (n - 1) // 2} "
        f"run pairs that the paired bootstrap test (Sakai 2006; B = {B}, seed {seed}, topics in "
        f"sorted order) finds significant at α = {alpha}; and against the full qrels' decisions "
        "by the same test: misses (significant with full qrels only), false alarms (significant "
        "here only, or in both but in opposite directions), TP/FP/FN/TN. "
        "`estimated_difference_max` is Sakai's largest estimated difference required.")
    ectx.table("summary", summary, "Kendall's τ and bootstrap discriminative power per condition and "
               "measure, with misses and false alarms against the full qrels", show=60)
    take_one = summary[summary["kind"] == "take-one-team"]
    if len(take_one):
        agg = (take_one.groupby("measure", sort=False)
               .agg(conditions=("condition", "count"), mean_tau=("kendall_tau", "mean"),
                    min_tau=("kendall_tau", "min"), median_tau=("kendall_tau", "median"),
                    mean_discriminative_power=("discriminative_power", "mean"),
                    mean_misses=("misses", "mean"), mean_false_alarms=("false_alarms", "mean"))
               .reset_index())
        ectx.table("take_one_summary", agg, "Take-one-team conditions per measure: τ (mean, "
                   "smallest, median), mean discriminative power, mean misses and false alarms")
    ectx.table("overview", overview(summary, labels),
               "Overview per measure: τ and discriminative power (dp) per condition; "
               "take-one-team as the mean over its conditions")
    _condition_figures(ectx, summary, labels)


def overview(summary: pd.DataFrame, labels: list[str]) -> pd.DataFrame:
    """One row per measure: ``tau_X`` and ``dp_X`` for every condition X (take-one-team:
    the mean over its conditions, ``..._mean``)."""
    frame = summary.copy()
    take = frame["kind"] == "take-one-team"
    frame["column"] = frame["condition"].str.replace(" ", "_").str.replace("=", "").str.replace("-", "_")
    frame.loc[take, "column"] = "take_one_team_mean"
    order = list(dict.fromkeys(frame["column"]))
    grouped = frame.groupby(["measure", "column"], sort=False)[["kendall_tau", "discriminative_power"]].mean()
    out = pd.DataFrame({"measure": labels})
    for metric, prefix in (("kendall_tau", "tau"), ("discriminative_power", "dp")):
        wide = grouped[metric].unstack("column").reindex(index=labels, columns=order)
        for column in order:
            if prefix == "tau" and column == "full":
                continue
            out[f"{prefix}_{column}"] = wide[column].to_numpy()
    return out


def _qrels_counts(con, name: str) -> dict:
    judged, relevant = con.execute(
        "SELECT count(*) FILTER (WHERE rel >= 0), count(*) FILTER (WHERE rel >= 1) "
        "FROM qrels WHERE qrels = ?", [name]).fetchone()
    return {"judged": int(judged), "relevant": int(relevant)}


# --------------------------------------------------------------------------- figures

def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _leave_out_figure(ectx: ExperimentContext, leave: pd.DataFrame, labels: list[str]) -> None:
    data = [leave.loc[leave["measure"] == m, "change_pct"].dropna().to_numpy() for m in labels]
    if not any(len(d) for d in data):
        return
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(labels)), 4))
    ax.boxplot([d if len(d) else [np.nan] for d in data], showfliers=False)
    rng = np.random.default_rng(0)
    for i, d in enumerate(data, start=1):
        ax.scatter(i + rng.uniform(-0.15, 0.15, len(d)), d, s=10, alpha=0.6)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xticks(range(1, len(labels) + 1))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("score change (%)")
    ax.set_title("Leave-one-team-out")
    ectx.figure("leave_out_change", fig, "Score change (%) of each selected run under leave-one-team-out, "
                "per measure (boxes: quartiles; points: runs)")


def _condition_figures(ectx: ExperimentContext, summary: pd.DataFrame, labels: list[str]) -> None:
    plt = _plt()
    others = summary[~summary["kind"].isin(["full", "take-one-team"])]
    conds = list(dict.fromkeys(others["condition"]))
    markers = ["D", "s", "^", "v", "P", "X", "*"]
    for column, ylabel, name, caption in [
            ("kendall_tau", "Kendall's τ vs full qrels", "tau",
             "Kendall's τ against the full-qrels ranking per measure: boxes over the take-one-team "
             "conditions, markers for take-three-teams and the shallow pools"),
            ("discriminative_power", "discriminative power (bootstrap)", "discpower",
             "Discriminative power per measure: boxes over the take-one-team conditions, markers "
             "for the full qrels, take-three-teams and the shallow pools")]:
        fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(labels)), 4))
        take = summary[summary["kind"] == "take-one-team"]
        if len(take):
            data = [take.loc[take["measure"] == m, column].dropna().to_numpy() for m in labels]
            ax.boxplot([d if len(d) else [np.nan] for d in data], showfliers=True)
        shown = conds + (["full"] if column == "discriminative_power" else [])
        for c, marker in zip(shown, markers):
            sub = summary[summary["condition"] == c].set_index("measure").reindex(labels)
            ax.scatter(range(1, len(labels) + 1), sub[column], marker=marker, s=28, label=c, zorder=3)
        ax.set_xticks(range(1, len(labels) + 1))
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
        ax.set_ylabel(ylabel)
        if shown:
            ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
        ectx.figure(name, fig, caption)


# --------------------------------------------------------------------------- command

def _parts(text: str) -> tuple[str, ...]:
    parts = tuple(p.strip().lower() for p in text.split(",") if p.strip())
    bad = [p for p in parts if p not in PARTS]
    require(bool(parts) and not bad, f"--parts must be a comma-separated subset of a,b,c (got {text!r})")
    return tuple(p for p in PARTS if p in parts)


def main(con, out: str, replace: bool, *, qrels, runs, pool_runs, pool_depth, measure, seed,
         shallow, samples, alpha, parts) -> Outcome:
    """System bias and pool-depth bias: leave-one-team-out, take-one/three-teams, shallow
    pools (Sakai 2009)."""
    labels = [str(m) for m in measures.parse_all(list(measure) if measure else DEFAULT_MEASURES)]
    pds = split_values(shallow, int, "--shallow", minimum=1)
    chosen = _parts(parts)
    require(pool_depth >= 1, f"the pool depth must be at least 1 (got {pool_depth})")
    significance.check_test("bootstrap", alpha, samples)

    def body(ectx: ExperimentContext) -> str:
        q = qrels or catalogue.default_qrels(con)
        pr = pool_runs or catalogue.default_pool_runs(con, catalogue.collection_of(con, q))
        run_ids = runsets.resolve(con, runs, qrels=q)
        # after the cell key is fixed: --parts does not change what a cell holds
        ectx.experiment.params.update(qrels=q, pool_runs=pr, parts=",".join(chosen))
        return run(ectx, q, run_ids, pr, pool_depth, labels, seed, pds, samples, alpha, chosen)

    params = {"qrels": qrels, "runs": runs, "pool_runs": pool_runs, "pool_depth": pool_depth,
              "measures": labels, "seed": seed, "shallow": pds, "samples": samples,
              "alpha": alpha}
    return execute(con, Experiment("bias", "System bias and pool-depth bias (Sakai 2009)", params),
                   out, body, replace)
