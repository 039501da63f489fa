"""The papers' analyses (SPEC §6) as experiments, and their registry.

An experiment writes its tables (CSV, and a table in the warehouse with the parameters that
produced them), its figures (PNG) and one section of ``report.md`` into an output directory.
Work is split into *cells* (e.g. one pool depth x evaluation depth); a finished cell is kept
in ``DIR/cells/`` so an interrupted run resumes without recomputing it.

:data:`REGISTRY` declares each experiment -- its name, title, paper and options (name,
flags, type, default, help) -- without importing it: the command line builds ``irw
experiment NAME`` from these declarations, and :func:`run` (``Warehouse.experiment``)
imports the experiment's module only when it runs. A new experiment is a module with a
``main(con, out, replace, **options)`` function and an entry here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from ..errors import IrwError


@dataclass(frozen=True)
class Option:
    """An option of an experiment: ``name`` (its parameter), ``flags`` on the command line,
    ``kind`` (str, int, float, or "list": repeatable, each value possibly comma-separated;
    its default None: the experiment's own, which ``help`` states), ``default`` and ``help``."""

    name: str
    flags: tuple[str, ...]
    kind: object
    default: object
    help: str


@dataclass(frozen=True)
class ExperimentSpec:
    name: str
    title: str
    summary: str
    module: str
    options: tuple[Option, ...]


def _qrels(what: str = "") -> Option:
    return Option("qrels", ("--qrels", "-q"), str, None,
                  f"The {what}qrels (default: the only one loaded).".replace("  ", " "))


def _runs(help: str) -> Option:
    return Option("runs", ("--runs", "-r"), str, "all", help)


SEED = Option("seed", ("--seed",), int, 0, "Random seed.")
ALPHA = Option("alpha", ("--alpha",), float, 0.05, "Significance level.")

REGISTRY: dict[str, ExperimentSpec] = {spec.name: spec for spec in [
    ExperimentSpec(
        "depth-grid", "Evaluation depth × pooling depth",
        "Evaluation depth x pooling depth: discriminative power and tau (Webber et al. 2010).",
        "depth_grid", (
            _qrels("full "),
            _runs("Evaluated runs."),
            Option("pool_runs", ("--pool-runs",), str, "all",
                   "Runs forming the pools: all (the paper's setting), pooled, or any run spec."),
            Option("pool_depths", ("--pool-depths",), str, "5,10,20,50,100", "Pool depths d."),
            Option("eval_depths", ("--eval-depths",), str, "5,10,20,50,100,200,500,1000",
                   "Evaluation depths k."),
            ALPHA)),
    ExperimentSpec(
        "bias", "System bias and pool-depth bias (Sakai 2009)",
        "System bias and pool-depth bias: leave-one-team-out, take-one/three-teams, shallow pools (Sakai 2009).",
        "bias", (
            _qrels("full "),
            _runs("Evaluated runs; one per team is drawn at random."),
            Option("pool_runs", ("--pool-runs",), str, None,
                   "Runs forming the pool, D_t and U_t (default: pooled if known, else all)."),
            Option("pool_depth", ("--pool-depth", "-d"), int, 100, "Pool depth d of D_t and U_t."),
            Option("measure", ("--measure", "-m"), "list", None,
                   "Measures (repeatable; default: Sakai's nine: AP, Q, nDCG(discount=jk)@1000, "
                   "RBP(p=0.95) and their condensed forms, and bpref)."),
            Option("seed", ("--seed",), int, 0, "Seed of the run selection and of the bootstrap."),
            Option("shallow", ("--shallow",), str, "50,10,1", "Shallow pool depths pd (pool of all runs)."),
            Option("samples", ("--samples", "-B"), int, 1000, "Bootstrap samples B."),
            ALPHA,
            Option("parts", ("--parts",), str, "a,b,c",
                   "Which analyses: a (leave-one-team-out), b (take teams), c (shallow pools)."))),
    ExperimentSpec(
        "uncertainty", "Measurement uncertainty (Moffat, Scholer, Yang 2018)",
        "Measurement uncertainty: RBP residuals, best-fitting φ, deeply-judged runs (Moffat et al. 2018).",
        "uncertainty", (
            _qrels(),
            _runs("Run spec (default all)."),
            Option("phis", ("--phis",), "list", None,
                   "Persistences of parts (a) and (b), comma-separated or repeated (default "
                   "0.5,0.8,0.9,0.95,0.98,0.99,0.995)."),
            Option("reference", ("--reference", "-m"), "list", None,
                   "Reference measures of part (b) (repeatable; default P@10, RR, RPrec, R@1000, "
                   "AP@1000, nDCG@1000)."),
            Option("fit_reference", ("--fit-reference",), "list", None,
                   "Reference measures of the best fit (c) (repeatable; default AP, nDCG)."),
            Option("fit_step", ("--fit-step",), float, 0.001, "Step of the φ grid 0.5 … 0.999 of part (c)."),
            Option("rbo_p", ("--rbo-p",), float, 0.9, "Persistence of RBO in part (c)."),
            Option("deep_m", ("--deep-m",), int, 50,
                   "Depth m judged on every topic for a run to be deeply judged (d)."),
            Option("deep_depths", ("--deep-depths",), "list", None,
                   "Pool depths d' of part (d); the largest is the reference (default "
                   "5,10,15,20,25,50)."),
            Option("alpha", ("--alpha",), float, 0.05, "Significance level of part (d)."),
            Option("parts", ("--parts",), "list", None,
                   "Parts to run: a,b,c,d (comma-separated or repeated; does not change the cells; "
                   "default all)."))),
    ExperimentSpec(
        "agreement", "Metric agreement (Shokouhi et al. 2009)",
        "Metric agreement on binary relevance vectors (Shokouhi et al. 2009).",
        "agreement", (
            Option("n", ("--n",), "list", None,
                   "Length N of the relevance vectors (comma-separated or repeated; default 10)."),
            Option("delta", ("--delta",), "list", None,
                   "Fuzziness Δ >= 0 (comma-separated or repeated; default 0)."),
            Option("fuzziness", ("--fuzziness",), str, "relative",
                   "relative: a difference exceeds Δ when |A(l_i) − A(l_j)| > Δ · max(|A(l_i)|, "
                   "|A(l_j)|); absolute: when |A(l_i) − A(l_j)| > Δ."),
            Option("ap_r", ("--ap-r",), str, "n",
                   "R of AP on the vectors: n (R = N) | retrieved (the number of relevant "
                   "documents in the vector)."),
            Option("mode", ("--mode",), "list", None,
                   "uniform | sampled (comma-separated or repeated; default uniform)."),
            Option("measure", ("--measure", "-m"), "list", None,
                   "Measures (repeatable; default AP, DCG, P@10, RBP(p=0.5), RBP(p=0.8))."),
            Option("seed", ("--seed",), int, 0, "Random seed of the Monte Carlo samples."),
            Option("samples", ("--samples",), int, 200_000,
                   "Monte Carlo pairs of a cell with more than 8192 distinct vectors; a cell with "
                   "fewer is enumerated exactly, whatever --samples."),
            Option("qrels", ("--qrels", "-q"), "list", None,
                   "The sampled mode's qrels (repeatable or comma-separated, names and glob "
                   "patterns; default: the only one loaded): the rankings of the runs under "
                   "every one of them are pooled."),
            _runs("Runs of the sampled mode (run spec), in the collection of each qrels."))),
    ExperimentSpec(
        "standardization", "Score standardization",
        "Score standardization: random topic splits and the number of standardizing runs (Webber et al. 2008).",
        "standardization", (
            Option("measure", ("--measure", "-m"), str, "AP",
                   "The R-normalized measure (its raw form is derived: AP→SP, nDCG→DCG)."),
            _qrels(),
            _runs("Runs compared and used as the reference."),
            Option("splits", ("--splits",), int, 2000, "Random topic splits."),
            Option("sizes", ("--sizes",), str, "2,5,10,20", "Numbers of standardizing runs sampled."),
            Option("samples", ("--samples",), int, 1000, "Samples per number of standardizing runs."),
            SEED,
            Option("alpha", ("--alpha",), float, 0.05, "Level of the two-sample t-test."))),
    ExperimentSpec(
        "judges", "Judging the judges",
        "Judging the judges: a judgment set against a reference, as assessors and as rankings of the runs.",
        "judges", (
            _qrels("reference "),
            Option("against", ("--against", "-b"), str, None,
                   "The judgment set judged (e.g. an automatic judge's qrels)."),
            _runs("Runs ranked under both sets."),
            Option("measure", ("--measure", "-m"), "list", None,
                   "Measures (repeatable; default AP, nDCG@10, P@10)."),
            Option("by", ("--by",), str, "team",
                   "The run metadata column that groups the runs for the bias test (team, kind, ...)."),
            Option("rel_level", ("--rel-level", "-l"), int, 1,
                   "Binary labels of kappa and nominal alpha: relevant at grade >= L."),
            Option("samples", ("--samples", "-B"), int, 1000,
                   "Bootstrap samples of the agreement intervals (topics resampled)."),
            Option("permutations", ("--permutations",), int, 10000,
                   "Random groups drawn by the permutation test of the mean rank shift."),
            Option("test", ("--test",), str, "t",
                   "Significance test of the decisions (t | bootstrap | randomization | wilcoxon | tukey)."),
            ALPHA,
            Option("bias_correction", ("--bias-correction",), str, "holm",
                   "Correction of the bias test over the groups: none | bonferroni | holm | bh."),
            Option("top_k", ("--top-k", "-k"), int, 10, "Kendall's tau over the runs A ranks within its top k."),
            Option("rbo_p", ("--rbo-p",), float, 0.9, "Persistence of RBO."),
            SEED)),
]}


def values(spec: ExperimentSpec, params: dict) -> dict:
    """The options of ``spec`` with ``params`` given (by name), the rest at their defaults; a
    list option's values as a list of strings."""
    known = {o.name for o in spec.options}
    unknown = sorted(set(params) - known)
    if unknown:
        raise IrwError(f"experiment {spec.name} has no option {unknown[0]!r}; options: {', '.join(sorted(known))}")
    out = {}
    for option in spec.options:
        value = params.get(option.name, option.default)
        if option.kind == "list" and value is not None and isinstance(value, str):
            value = [value]
        out[option.name] = value
    return out


def run(con, name: str, out: str, params: dict, replace: bool = False):
    """Run the experiment ``name`` on the warehouse connection ``con`` into the directory
    ``out``; its outcome (base.Outcome)."""
    spec = REGISTRY.get(name)
    if spec is None:
        raise IrwError(f"unknown experiment {name!r}; experiments: {', '.join(REGISTRY)}")
    module = importlib.import_module(f"{__name__}.{spec.module}")
    return module.main(con, out, replace=replace, **values(spec, params))
