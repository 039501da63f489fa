"""The everyday question straight from files: irw compare QRELS RUN_A RUN_B and irw pvalues
QRELS RUN... give what they give on a warehouse the files were loaded into, and write
nothing."""

from __future__ import annotations

import os

from conftest import FIXTURES


def _single_runs(tmp_path):
    """alpha.txt split into one file per run."""
    lines = (FIXTURES / "runs" / "alpha.txt").read_text().splitlines(keepends=True)
    paths = []
    for run in ("alpha1", "alpha2"):
        path = tmp_path / f"{run}.txt"
        path.write_text("".join(line for line in lines if line.split()[5] == run))
        paths.append(path)
    return paths


def test_compare_from_files_equals_loaded(cli, tmp_path):
    a, b = _single_runs(tmp_path)
    qrels = FIXTURES / "qrels.txt"
    args = ("-m", "AP", "-m", "P@10", "--test", "t", "--test", "wilcoxon", "--format", "csv")
    direct = cli("compare", qrels, a, b, *args).stdout
    assert not os.path.exists(cli.db_path)  # no warehouse written
    cli("load", "qrels", qrels, "--name", "qrels.txt")
    cli("load", "runs", a, b)
    loaded = cli("compare", "alpha1", "alpha2", *args).stdout
    assert direct == loaded
    assert "alpha1,alpha2" in direct


def test_pvalues_from_files_equals_loaded(cli):
    qrels = FIXTURES / "qrels.txt"
    runs = sorted((FIXTURES / "runs").iterdir())
    args = ("-m", "AP", "--correction", "holm", "--format", "csv")
    direct = cli("pvalues", qrels, *runs, *args).stdout
    assert not os.path.exists(cli.db_path)
    cli("load", "qrels", qrels, "--name", "qrels.txt")
    cli("load", "runs", *runs)
    assert direct == cli("pvalues", *args).stdout
    assert direct.count("\n") > 10


def test_compare_from_a_file_of_several_runs_names_them(cli):
    result = cli("compare", FIXTURES / "qrels.txt", FIXTURES / "runs" / "alpha.txt",
                 FIXTURES / "runs" / "beta1.txt", "-m", "AP", ok=False)
    assert result.exit_code != 0
    assert "alpha.txt holds 2 runs (alpha1, alpha2)" in result.output
    assert not os.path.exists(cli.db_path)


def test_compare_takes_two_or_three_arguments(cli):
    result = cli("compare", "a", "-m", "AP", ok=False)
    assert result.exit_code != 0 and "irw compare QRELS RUN_A RUN_B" in result.output


def test_trec_eval_given_two_runs_points_to_eval_and_compare(capsys):
    from irwarehouse.cli import trec_eval

    runs = FIXTURES / "runs"
    status = trec_eval.run([str(FIXTURES / "qrels.txt"), str(runs / "alpha.txt"), str(runs / "beta1.txt")])
    err = capsys.readouterr().err
    assert status == 1
    assert "irw eval QRELS RUN..." in err and "irw compare QRELS RUN_A RUN_B" in err
    assert err.splitlines()[0].startswith("error: expected a qrels file and a results file, got 3")


def test_common_measure_spellings_resolve():
    from irwarehouse import measures

    for typed, meant in (("MRR", "RR"), ("MRR@10", "RR@10"), ("mrr@10", "RR@10"), ("map", "AP"),
                         ("ndcg@10", "nDCG@10"), ("NDCG@10", "nDCG@10"), ("recall@100", "R@100"),
                         ("Recall@100", "R@100"), ("P_10", "P@10"), ("ndcg_cut_10", "nDCG@10"),
                         ("precision@5", "P@5")):
        assert str(measures.parse(typed)) == meant, typed


def test_an_ambiguous_spelling_is_one_line_with_both_meanings():
    import pytest

    from irwarehouse import measures
    from irwarehouse.errors import IrwError

    with pytest.raises(IrwError) as bad:
        measures.parse("hits@10")
    assert "could mean Success@10 or NumRelRet@10" in str(bad.value) and "\n" not in str(bad.value)


def test_qrels_help_mentions_comparing_judgment_sets(cli):
    out = cli("qrels", "--help").stdout
    assert "compare two judgment sets" in " ".join(out.split())


def test_compare_help_explains_the_columns(cli):
    out = " ".join(cli("compare", "--help").stdout.split())
    for words in ("Cohen's d_z", "residual_a", "judged_a", "QRELS RUN_A RUN_B"):
        assert words in out, words


def test_sql_guide_opens_with_the_views_to_start_from_and_what_fills_them():
    from conftest import ROOT

    text = (ROOT / "docs" / "sql-and-bi.md").read_text()
    opening = text[:text.index("**Tables**")]
    for view in ("score_means", "scores", "run_info", "qrels_stats", "pair_tests"):
        assert f"`{view}`" in opening, view
    assert "`irw report`" in opening and "empty `score_means`" in opening


def test_trec8_group_counts_quoted_in_the_guide(trec8_db):
    """docs/commands.md quotes the groups TREC-8's runs form under the default correction
    (Holm) and without one."""
    import duckdb

    from conftest import ROOT
    from irwarehouse.report import build_report

    text = " ".join((ROOT / "docs" / "commands.md").read_text().split())
    con = duckdb.connect(trec8_db, read_only=True)
    try:
        holm = build_report(con, ["AP"], qrels="trec8")
        none = build_report(con, ["AP"], qrels="trec8", correction="none")
        counts = len(holm.groups("AP")), len(none.groups("AP"))
    finally:
        con.close()
    assert counts == (59, 82)
    assert "Holm's, form 59, 48 and 53 groups by AP, P@10 and nDCG@10; with `--correction none`, 82," in text


# --------------------------------------------------------------- --rel-level where it matters

THRESHOLD_NOTE = "grade >= 1 as relevant (TREC DL passages: --rel-level 2)"


def _notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if THRESHOLD_NOTE in line]


def test_graded_qrels_at_the_default_threshold_say_so_once(cli):
    """The fixture qrels grade 0-3: binary measures at threshold 1 bring one note (one line,
    on stderr: the JSON on stdout stays JSON); graded measures alone do not."""
    import json

    qrels, runs = FIXTURES / "qrels.txt", FIXTURES / "runs"
    result = cli("eval", qrels, runs, "-m", "AP", "-m", "P@10", "-m", "nDCG@10", "-f", "json")
    assert _notes(result.stderr) == [
        "note: qrels qrels.txt grades up to 3 and AP, P@10 count grade >= 1 as relevant "
        "(TREC DL passages: --rel-level 2)"]
    assert json.loads(result.stdout)
    assert _notes(cli("eval", qrels, runs, "-m", "nDCG@10").stderr) == []
    for measure in ("AP", "RR", "P@5", "R@10", "NumRel"):
        assert len(_notes(cli("eval", qrels, runs / "beta1.txt", "-m", measure).stderr)) == 1, measure


def test_a_threshold_given_silences_the_note(cli):
    qrels, run = FIXTURES / "qrels.txt", FIXTURES / "runs" / "beta1.txt"
    for args in (("--rel-level", "1"), ("--rel-level", "2"), ()):
        measure = "AP(rel=2)" if not args else "AP"
        result = cli("eval", qrels, run, "-m", measure, *args)
        assert _notes(result.stderr) == [], args


def test_binary_qrels_bring_no_note(cli, tmp_path):
    binary = tmp_path / "binary.txt"
    binary.write_text("".join(f"{t} 0 {d} {min(int(g), 1)}\n" for t, _, d, g in
                              (line.split() for line in (FIXTURES / "qrels.txt").read_text().splitlines())))
    assert _notes(cli("eval", binary, FIXTURES / "runs", "-m", "AP").stderr) == []


def test_the_note_in_a_warehouse_once_for_several_qrels(cli):
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    cli("load", "runs", FIXTURES / "runs")
    cli("pool", "leave-out", "--all-teams", "--depth", "10")
    result = cli("eval", "-m", "AP", "--qrels", "fixture*")
    assert result.stdout.count("fixture-lo-") > 1  # several qrels evaluated
    assert len(_notes(result.stderr)) == 1 and "qrels fixture" in result.stderr
    assert _notes(cli("eval", "-m", "AP", "--rel-level", "1").stderr) == []


def test_compare_and_pvalues_take_rel_level_and_note_the_default(cli, tmp_path):
    import csv
    import io

    a, b = _single_runs(tmp_path)
    qrels = FIXTURES / "qrels.txt"
    plain = cli("compare", qrels, a, b, "-m", "AP", "-f", "csv")
    assert len(_notes(plain.stderr)) == 1
    two = cli("compare", qrels, a, b, "-m", "AP", "--rel-level", "2", "-f", "csv")
    written = cli("compare", qrels, a, b, "-m", "AP(rel=2)", "-f", "csv")
    assert _notes(two.stderr) == [] and _notes(written.stderr) == []
    assert two.stdout == written.stdout != plain.stdout
    assert next(csv.DictReader(io.StringIO(two.stdout)))["measure"] == "AP(rel=2)"
    assert _notes(cli("compare", qrels, a, b, "-m", "AP", "--rel-level", "1").stderr) == []
    runs = sorted((FIXTURES / "runs").iterdir())
    assert len(_notes(cli("pvalues", qrels, *runs, "-m", "AP").stderr)) == 1
    two = cli("pvalues", qrels, *runs, "-m", "AP", "--rel-level", "2", "-f", "csv")
    assert _notes(two.stderr) == []
    assert two.stdout == cli("pvalues", qrels, *runs, "-m", "AP(rel=2)", "-f", "csv").stdout
    cli("load", "qrels", qrels, "--name", "fixture")
    cli("load", "runs", *runs)
    assert len(_notes(cli("pvalues", "-m", "P@10").stderr)) == 1
    assert len(_notes(cli("compare", "alpha1", "alpha2", "-m", "P@10").stderr)) == 1
    assert _notes(cli("compare", "alpha1", "alpha2", "-m", "P@10", "--rel-level", "1").stderr) == []


def test_trec_eval_prints_what_trec_eval_prints(capsys):
    """irw trec-eval adds no note: its output and messages are trec_eval's."""
    from irwarehouse.cli import trec_eval

    assert trec_eval.run([str(FIXTURES / "qrels.txt"), str(FIXTURES / "runs" / "beta1.txt")]) == 0
    assert "--rel-level" not in capsys.readouterr().err


# --------------------------------------------------------------- the pair table explained

def test_compare_table_heads_d_z_and_explains_its_columns_below(cli, tmp_path):
    a, b = _single_runs(tmp_path)
    qrels = FIXTURES / "qrels.txt"
    out = cli("compare", qrels, a, b, "-m", "AP", "--rel-level", "1", "--level", "0.9",
              "--judged-k", "5", "--rbp-p", "0.95", "--test", "t", "--test", "wilcoxon").stdout
    table, footer = out.split("\n\n")
    header = table.splitlines()[0].split()
    assert "effect_size(d_z)" in header and "effect_size" not in header
    lines = footer.splitlines()
    assert lines[0] == "diff: mean_a - mean_b; ci_low, ci_high: its 90% interval (the test's)"
    assert lines[1].startswith("effect_size(d_z): Cohen's d_z, the mean per-topic difference over its "
                               "standard deviation; effect_low, effect_high: its exact 90% interval")
    assert "p_t, p_wilcoxon: the p-value of each test" in lines
    assert "residual_a, residual_b: RBP's residual at p = 0.95, what unjudged documents could still add" in lines
    assert lines[-1] == "judged_a, judged_b: Judged@5, the judged fraction of the top 5"


def test_pvalues_table_explains_its_columns_below(cli):
    runs = sorted((FIXTURES / "runs").iterdir())
    out = cli("pvalues", FIXTURES / "qrels.txt", *runs, "-m", "AP", "--rel-level", "1").stdout
    table, footer = out.split("\n\n")
    assert "effect_size(d_z)" in table.splitlines()[0]
    assert footer.splitlines()[2].startswith("effect_size_residual: Sakai's effect size")
    assert footer.splitlines()[-1].startswith("statistic, p_value: the test's; p_adjusted: under --correction")


def test_csv_and_json_keep_the_public_column_names_without_a_footer(cli, tmp_path):
    import csv
    import io
    import json

    a, b = _single_runs(tmp_path)
    qrels = FIXTURES / "qrels.txt"
    text = cli("compare", qrels, a, b, "-m", "AP", "-m", "P@10", "-f", "csv").stdout
    rows = list(csv.reader(io.StringIO(text)))
    assert "effect_size" in rows[0] and len(rows) == 3 and all(len(r) == len(rows[0]) for r in rows)
    records = json.loads(cli("pvalues", qrels, a, b, "-m", "AP", "-f", "json").stdout)
    assert "effect_size" in records[0] and "effect_size(d_z)" not in records[0]


def test_help_names_every_column_the_footer_explains(cli, tmp_path):
    """What a table's footer explains, --help explains too."""
    from irwarehouse.output import PAIR_FOOTER

    a, b = _single_runs(tmp_path)
    qrels = FIXTURES / "qrels.txt"
    for command, args in (("compare", (qrels, a, b)), ("pvalues", (qrels, a, b))):
        columns = cli(command, *args, "-m", "AP", "-f", "csv").stdout.splitlines()[0].split(",")
        helped = " ".join(cli(command, "--help").stdout.split())
        explained = {c for group, _ in PAIR_FOOTER for c in group if c in columns}
        assert explained and "Cohen's d_z" in helped
        for column in explained:
            assert f"{column}:" in helped or f"{column}," in helped, (command, column)
