"""Commands for score standardization and topic splits: ``irw standardize ...`` and
``irw splits ...`` (Webber, Moffat & Zobel, SIGIR 2008; SPEC section 4). A topic split is a
qrels of kind 'topics' -- a subset of a parent qrels's topics with its own topic set, called
a "collection" in the paper; the test collections of the warehouse are ``irw collections``."""

from __future__ import annotations

from typing import List, Optional

import typer

from .. import api, output
from ..errors import IrwError
from .app import (FormatOpt, QrelsOpt, app, check_format, collections_app, command,
                  open_warehouse, progress_callback, remove, say, show)

standardize_app = typer.Typer(
    help="Score standardization: factor sets (per-topic mean and sd of reference runs), "
         "standardized scores Phi(z), export/import, and the reference-size experiment.",
    no_args_is_help=True)
splits_app = typer.Typer(
    help="Topic splits (named topic subsets of a qrels, the paper's 'collections') and the "
         "comparison of runs across two qrels.",
    no_args_is_help=True)
app.add_typer(standardize_app, name="standardize")
app.add_typer(splits_app, name="splits")

RunsOpt = typer.Option("all", "--runs", "-r", help="Run spec of the evaluated runs: all, pooled, team:NAME, @FILE or run ids.")
ReferenceOpt = typer.Option(None, "--reference", help="Run spec of the reference (standardizing) runs (default: the evaluated runs).")
FactorsOpt = typer.Option(None, "--factors", help="Standardize with this stored factor set instead of self-standardizing.")
RawOpt = typer.Option(None, "--raw", help="The raw form of the measure (default: SP for AP, DCG for nDCG, NumRelRet for R).")
AlphaOpt = typer.Option(0.05, "--alpha", help="Significance level of the two-sample t-tests.")
FileFormatOpt = typer.Option(None, "--file-format", help="csv | parquet (default: from the file name).")


# ----------------------------------------------------------------------------- factor sets

@command(standardize_app, "factors")
def factors_cmd(
    ctx: typer.Context,
    measure: List[str] = typer.Option(..., "--measure", "-m", help="Measure(s) to compute factors for. Repeatable."),
    name: str = typer.Option(..., "--name", "-n", help="Name of the factor set."),
    qrels: Optional[str] = QrelsOpt,
    reference: str = typer.Option("all", "--reference", help="Run spec of the reference runs (default all: self-standardization)."),
    description: Optional[str] = typer.Option(None, "--description", help="Free text for the catalogue."),
    replace: bool = typer.Option(False, "--replace", help="Replace a factor set of that name."),
    fmt: str = FormatOpt,
):
    """Compute a factor set: per measure and topic, mean and sample sd of the reference runs' scores."""
    check_format(fmt)
    api.measure_labels(measure)  # a bad measure is reported before the warehouse is opened
    with open_warehouse(ctx) as w:
        summary = w.standardize(name, measure, qrels, reference=reference, description=description,
                                replace=replace)
    info = summary.info
    say(f"factor set {info['factors']}: {', '.join(info['measures'])} on qrels {info['qrels']}, "
        f"{info['topics']} topics, reference {info['reference']}")
    output.emit(summary, fmt)


@command(standardize_app, "list")
def list_cmd(ctx: typer.Context, fmt: str = FormatOpt):
    """The factor sets in the warehouse."""
    show(ctx, fmt, lambda w: w.factor_sets())


@command(standardize_app, "show")
def show_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The factor set."),
    measure: Optional[str] = typer.Option(None, "--measure", "-m", help="Only this measure."),
    fmt: str = FormatOpt,
):
    """The factors of a set: per measure and topic, mu, sigma and n_ref."""
    show(ctx, fmt, lambda w: w.factors(name, measure), digits=6)


@command(standardize_app, "scores")
def scores_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The factor set."),
    measure: List[str] = typer.Option([], "--measure", "-m", help="Measure(s) (default: all of the set's)."),
    runs: str = RunsOpt,
    per_topic: bool = typer.Option(False, "--per-topic", help="One row per topic: value, mu, sigma, z, phi."),
    fmt: str = FormatOpt,
):
    """Standardized scores (views std_scores / std_score_means); evaluates runs not yet scored."""
    check_format(fmt)
    with open_warehouse(ctx) as w:
        result = w.standardized_scores(name, list(measure) or None, runs, per_topic=per_topic)
    output.emit(result, fmt)


@command(standardize_app, "export")
def export_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The factor set."),
    path: str = typer.Argument(..., help="Output file: .csv or .parquet."),
    file_format: Optional[str] = FileFormatOpt,
    replace: bool = typer.Option(False, "--replace", help="Overwrite PATH if it exists (never a database)."),
):
    """Write a factor set to CSV or Parquet.

    Columns: factors, qrels, measure, topic, mu, sigma, n_ref, reference, description.
    """
    with open_warehouse(ctx, read_only=True) as w:
        n = w.export_factors(name, path, file_format=file_format, replace=replace)
    say(f"wrote {n} factors of {name} to {path}")


@command(standardize_app, "import")
def import_cmd(
    ctx: typer.Context,
    path: str = typer.Argument(..., help="A factor file written by `irw standardize export` (CSV or Parquet)."),
    name: Optional[str] = typer.Option(None, "--name", "-n", help="Name of the set here (default: the file's)."),
    qrels: Optional[str] = typer.Option(None, "--qrels", "-q", help="The local qrels the factors standardize (default: the file's qrels name)."),
    description: Optional[str] = typer.Option(None, "--description", help="Free text (default: the file's)."),
    replace: bool = typer.Option(False, "--replace", help="Replace a factor set of that name."),
    file_format: Optional[str] = FileFormatOpt,
):
    """Import a published factor set (all or nothing)."""
    with open_warehouse(ctx) as w:
        info = w.import_factors(path, name=name, qrels=qrels, replace=replace,
                                description=description, file_format=file_format)
    say(f"imported factor set {info['factors']}: {info['rows']} factors "
            f"({', '.join(info['measures'])}; {info['topics']} topics) for qrels {info['qrels']}, "
            f"reference {info['reference']}")


@command(standardize_app, "drop")
def drop_cmd(ctx: typer.Context, name: str = typer.Argument(..., help="The factor set to remove.")):
    """Remove a factor set."""
    remove(ctx, f"factor set {name}", lambda w: w.drop_factors(name))


@command(standardize_app, "reference-size")
def reference_size_cmd(
    ctx: typer.Context,
    measure: str = typer.Option(..., "--measure", "-m", help="The measure standardized."),
    qrels: Optional[str] = QrelsOpt,
    runs: str = RunsOpt,
    reference: Optional[str] = ReferenceOpt,
    sizes: str = typer.Option("2,5,10,20", "--sizes", help="Numbers n of standardizing runs, comma-separated."),
    samples: int = typer.Option(1000, "--samples", help="Random reference samples per n."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    fmt: str = FormatOpt,
):
    """How many standardizing systems: tau of n sampled reference runs vs all of them.

    Kendall's tau-b between the ranking by mean Phi(z) with factors from n sampled reference
    runs and the ranking with factors from all of them: median, tau_95 and tau_99 (the 95th-
    and 99th-percentile-lowest tau), minimum and mean per n.
    """
    check_format(fmt)
    try:
        ns = [int(s) for s in sizes.split(",") if s.strip()]
    except ValueError:
        raise IrwError(f"--sizes must be integers separated by commas, not {sizes!r}") from None
    if not ns:
        raise IrwError("--sizes is empty")
    with open_warehouse(ctx) as w, progress_callback("sampling reference sets") as progress:
        result = w.reference_size(measure, qrels, runs, reference=reference, sizes=ns, samples=samples,
                                  seed=seed, progress=progress)
    output.emit(result, fmt)


# ----------------------------------------------------------------------------- topic splits
# (formerly `irw collections split|compare|random-splits`: still accepted, hidden)

@command(splits_app, "make", aliases=((collections_app, "split"),))
def split_cmd(
    ctx: typer.Context,
    qrels: str = typer.Argument(..., help="The parent qrels."),
    name: str = typer.Option(..., "--name", "-n", help="Name of the new topic split."),
    topics: Optional[str] = typer.Option(None, "--topics", help="Its topics: ids and ranges, e.g. 401-425,430, or @FILE."),
    half: Optional[int] = typer.Option(None, "--half", help="Instead: a random half of the parent's topic set, with this seed."),
    rest: Optional[str] = typer.Option(None, "--rest", help="Also create the complement (the parent's other topics) under this name."),
    description: Optional[str] = typer.Option(None, "--description", help="Free text for the catalogue."),
    replace: bool = typer.Option(False, "--replace", help="Replace topic splits of those names."),
):
    """Create a topic split: the parent's judgments for chosen topics, with its own topic set."""
    with open_warehouse(ctx) as w:
        made = w.split(qrels, name, topics=topics, half=half, rest=rest, description=description,
                       replace=replace)
    for row in made.records():
        say(f"created topic split {row['qrels']} of {row['parent']}: {row['topics']} topics "
                f"({row['topic_set']} with a relevant document)")


@command(splits_app, "list")
def splits_list_cmd(ctx: typer.Context, fmt: str = FormatOpt):
    """The topic splits (qrels of kind 'topics') with their topic counts."""
    show(ctx, fmt, lambda w: w.splits())


@command(splits_app, "compare", aliases=((collections_app, "compare"),))
def compare_cmd(
    ctx: typer.Context,
    c: str = typer.Argument(..., help="Qrels C (a topic split, or any qrels)."),
    d: str = typer.Argument(..., help="Qrels D (a topic split, or a qrels of another test collection)."),
    measure: str = typer.Option(..., "--measure", "-m", help="The measure, e.g. AP or nDCG@10 (its raw form is compared too)."),
    raw: Optional[str] = RawOpt,
    runs: str = RunsOpt,
    reference: Optional[str] = ReferenceOpt,
    factors: Optional[str] = FactorsOpt,
    alpha: float = AlphaOpt,
    per_run: bool = typer.Option(False, "--per-run", help="One row per run and form: means on C and D, t, p."),
    fmt: str = FormatOpt,
):
    """Compare the same runs on two qrels: RMSE, dRMSE, t-test false positives.

    For the raw, R-normalized and standardized forms of the measure; a false positive is a
    run whose per-topic scores on C and D differ significantly (Student's two-sample t-test,
    equal variances, two-tailed). The runs are those of C's test collection (--runs); when D
    belongs to another test collection, its runs of the same ids are compared.
    """
    check_format(fmt)
    with open_warehouse(ctx) as w:
        result = w.compare_splits(c, d, measure, raw=raw, runs=runs, reference=reference,
                                  factors=factors, alpha=alpha, per_run=per_run)
    output.emit(result, fmt)


@command(splits_app, "random", aliases=((collections_app, "random-splits"),))
def random_splits_cmd(
    ctx: typer.Context,
    qrels: Optional[str] = typer.Argument(None, help="The qrels whose topic set is split (default: the only one loaded)."),
    measure: str = typer.Option(..., "--measure", "-m", help="The measure, e.g. AP (its raw form is compared too)."),
    raw: Optional[str] = RawOpt,
    runs: str = RunsOpt,
    reference: Optional[str] = ReferenceOpt,
    factors: Optional[str] = FactorsOpt,
    splits: int = typer.Option(2000, "--splits", help="Number of random splits."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    size: Optional[int] = typer.Option(None, "--size", help="Topics per half (default: half the topic set)."),
    alpha: float = AlphaOpt,
    fmt: str = FormatOpt,
):
    """Random topic-set splits: mean and upper percentiles of dRMSE and false positives.

    Each split draws two disjoint halves of the topic set (--size topics each) and compares
    the runs on them as `splits compare` does, per form of the measure.
    """
    check_format(fmt)
    with open_warehouse(ctx) as w, progress_callback("random splits") as progress:
        result = w.random_splits(measure, qrels, raw=raw, runs=runs, reference=reference,
                                 factors=factors, splits=splits, seed=seed, size=size, alpha=alpha,
                                 progress=progress)
    output.emit(result, fmt)
