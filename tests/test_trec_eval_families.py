"""Every trec_eval 10.0 measure irw computes, against trec_eval 10.0's C code (the
``trec_eval_10`` fixture builds it from the shared tools).

For each test, trec_eval runs with ``-q`` and ``-m`` arguments; irwarehouse.trec_names reads
the same arguments into catalogue measures, the engine evaluates them, and every value
trec_eval prints -- per topic, and the ``all`` line formed by the family's declared
aggregate (mean, sum, trec_eval's geometric mean) -- must equal irw's to trec_eval's 4
printed decimals (counts exactly). On TREC-8: all 129 runs at every ``all_trec`` family's
defaults (one trec_eval call per run), and parameter variants of every family that takes
parameters on a sample of runs. On trec_eval's own test files: judgments in the pool but
not assessed (grade -1: infAP), graded judgments with ``-l 2``, and parameters; and trec_eval's
relstring.
"""

from __future__ import annotations

import gzip
import math
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from irwarehouse import result, schema
from irwarehouse.engine import evaluation, loading
from irwarehouse.measures import BY_JUDGMENT_GROUP, PREFS_MEASURES, TREC_FAMILIES
from irwarehouse.trec_names import trec_eval_measures, trec_eval_order

# Every family that takes parameters, at settings other than its defaults (trec_eval reads a
# family's parameters from its first -m argument with parameters, so these go in a call of
# their own). dcg with parameters has a call of its own: trec_eval's dcg and ndcg share one
# parameter block, and given parameters with both requested it aborts (double free). Gains
# differ by 1 or more: trec_eval sorts gains by their difference truncated to an integer, so
# its ideal ranking may put a gain of 2 before one of 2.5 (irw ranks by gain).
VARIANTS = ["P.3,12", "recall.7", "iprec_at_recall..05,.25,.55", "Rprec_mult.0.33,1.5",
            "utility.2,-1,-0.5,0.01", "11pt_avg.0.2,0.5,0.8", "G.1=2,0=0.5", "ndcg.1=3",
            "ndcg_rel.1=5.5", "Rndcg.1=4", "ndcg_cut.3,50", "map_cut.2,40",
            "relative_P.3,70", "success.2,50", "set_F.0.25", "rbp.p=0.5", "rbp_resid.p=0.95",
            "unj.1,3,50"]


def run_trec_eval(binary: str, qrels, run, specs: list[str], *flags: str) -> str:
    args = [binary, "-q", *flags]
    for spec in specs:
        args += ["-m", spec]
    return subprocess.run([*args, str(qrels), str(run)], capture_output=True, text=True,
                          check=True, timeout=300).stdout


def trec_lines(output: str) -> dict[tuple[str, str], str]:
    out = {}
    for line in output.splitlines():
        label, topic, value = line.split("\t")
        out[(label.strip(), topic)] = value
    return out


def wanted(specs: list[str]):
    """The values of ``specs`` as trec_eval prints them, with a catalogue measure."""
    measures = trec_eval_order([m for s in specs for m in trec_eval_measures(s)])
    return [m for m in measures if m.measure is not None]


def with_level(measure, rel_level, judged_only=False):
    """The measure under trec_eval's -l (rel_level) and -J (judged_only)."""
    if rel_level is not None and measure.definition.takes_rel_level and not measure.has("rel"):
        measure = measure.with_params(rel=rel_level)
    if judged_only and measure.definition.param("judged_only"):
        measure = measure.with_params(judged_only=True)
    return measure


def compare(printed: dict, scores: dict, measures, run_id: str, rel_level=None,
            judged_only: bool = False) -> tuple[int, list[str]]:
    """(values compared, differences) of trec_eval's output ``printed`` against irw's
    ``scores`` {(run, topic, measure label): value} of one run."""
    checked, wrong = 0, []
    topics = sorted({t for (_, t) in printed if t != "all"})
    for tm in measures:
        label = str(with_level(tm.measure, rel_level, judged_only))
        ours = [scores[(run_id, t, label)] for t in topics]
        pairs = list(zip(topics, ours)) if tm.per_query else []
        if tm.aggregate == "sum":
            pairs.append(("all", math.fsum(ours)))
        elif tm.aggregate == "gm":
            pairs.append(("all", result.summarize(ours, "gm_trec")[0]))
        else:
            pairs.append(("all", result.summarize(ours, "mean")[0]))
        for topic, value in pairs:
            want = printed[(tm.label, topic)]
            checked += 1
            same = (int(want) == round(value) if tm.value_kind == "long"
                    else math.isclose(value, float(want), abs_tol=0.5e-4 + 1e-9))
            if not same:
                wrong.append(f"{run_id} {tm.label} {topic}: irw {value:.6f}, trec_eval {want}")
    return checked, wrong


def evaluate(con, qrels, measures, run_ids, rel_level=None, topics="run", judged_only=False, max_docs=None):
    parsed = list(dict.fromkeys(with_level(m.measure, rel_level, judged_only) for m in measures))
    per = evaluation.evaluate(con, qrels, parsed, run_ids, topics=topics, rel_level=rel_level,
                              max_docs=max_docs, store=False)
    return {(r.run_id, r.topic, r.measure): r.value for r in per.itertuples()}


@pytest.fixture(scope="module")
def trec8_files(trec8, tmp_path_factory):
    """TREC-8's qrels and runs, uncompressed for trec_eval."""
    out = tmp_path_factory.mktemp("trec8_plain")
    (out / "qrels").write_bytes(gzip.decompress((trec8 / "qrels.trec8.gz").read_bytes()))
    runs = {}
    for path in sorted((trec8 / "runs").glob("input.*.gz")):
        run_id = path.name[len("input."):-len(".gz")]
        target = out / run_id
        target.write_bytes(gzip.decompress(path.read_bytes()))
        runs[run_id] = target
    return out / "qrels", runs


@pytest.fixture(scope="module")
def trec8_db_order(trec8_db) -> str:
    """The order of the TREC-8 warehouse's runs: trec_eval 10.0's, the default, for all."""
    con = schema.connect(trec8_db, read_only=True)
    orders = con.execute("SELECT DISTINCT ranking_policy FROM run_loads").fetchall()
    con.close()
    assert orders == [("trec_eval",)]
    return orders[0][0]


# Families compared in a trec_eval run of their own: asking trec_eval 10.0 for more measures
# changes its rbp values (m_rbp.c reads its min and max before setting them).
ALONE = ("ideal_dcg", "yaap")


def test_ideal_dcg_and_yaap_on_trec8_runs(trec_eval_10, trec8_files, trec8_db, trec8_db_order):
    """ideal_dcg and yaap, trec_eval measures in no nickname, on a dozen TREC-8 runs."""
    qrels, runs = trec8_files
    chosen = sorted(runs)[::11]
    measures = wanted(list(ALONE))
    con = schema.connect(trec8_db, read_only=True)
    scores = evaluate(con, "trec8", measures, chosen)
    con.close()
    checked, wrong = 0, []
    for run_id in chosen:
        output = run_trec_eval(trec_eval_10, qrels, runs[run_id], list(ALONE))
        c, w = compare(trec_lines(output), scores, measures, run_id)
        checked, wrong = checked + c, wrong + w
    assert checked > 1000
    assert not wrong, f"{len(wrong)} of {checked} differ:\n" + "\n".join(wrong[:40])


def test_every_all_trec_family_on_all_trec8_runs(trec_eval_10, trec8_files, trec8_db, trec8_db_order):
    """All 129 TREC-8 runs x 50 topics, every all_trec family (and dcg) at its defaults
    (every ranking: the warehouse's default order is trec_eval 10.0's); ideal_dcg and yaap on
    their own (ALONE)."""
    qrels, runs = trec8_files
    specs = ["all_trec", "dcg"]
    measures = wanted(specs)
    # every family of a qrels file (-R qrels); those of -R prefs and -R qrels_jg are checked in
    # tests/test_trec_eval_prefs.py
    other_files = {name for name, _ in PREFS_MEASURES} | set(BY_JUDGMENT_GROUP)
    assert {m.family for m in measures} | set(ALONE) == \
        {f.name for f in TREC_FAMILIES if f.measure and f.name not in other_files}
    with ThreadPoolExecutor(2) as pool:
        outputs = dict(zip(runs, pool.map(lambda p: run_trec_eval(trec_eval_10, qrels, p, specs), runs.values())))
    con = schema.connect(trec8_db, read_only=True)
    scores = evaluate(con, "trec8", measures, sorted(runs))
    con.close()
    checked, wrong = 0, []
    for run_id, output in outputs.items():
        c, w = compare(trec_lines(output), scores, measures, run_id)
        checked, wrong = checked + c, wrong + w
    assert not wrong, f"{len(wrong)} of {checked} differ:\n" + "\n".join(wrong[:40])
    assert checked > 129 * 50 * 80


def test_parameters_of_every_family_on_trec8(trec_eval_10, trec8_files, trec8_db, trec8_db_order):
    """The families that take parameters, at other settings, on every tenth TREC-8 run."""
    qrels, runs = trec8_files
    sample = sorted(runs)[::10]
    measures = wanted(VARIANTS)
    con = schema.connect(trec8_db, read_only=True)
    scores = evaluate(con, "trec8", measures, sample)
    con.close()
    checked, wrong = 0, []
    for run_id in sample:
        c, w = compare(trec_lines(run_trec_eval(trec_eval_10, qrels, runs[run_id], VARIANTS)),
                       scores, measures, run_id)
        checked, wrong = checked + c, wrong + w
    assert not wrong, f"{len(wrong)} of {checked} differ:\n" + "\n".join(wrong[:40])
    assert checked > len(sample) * 50 * 25


@pytest.mark.parametrize("qrels_file, flags", [
    ("qrels.test", []),           # binary
    ("qrels.rel_level", []),      # grades 0 to 4, and 304 judgments of grade -1 (in the pool,
    ("qrels.rel_level", ["-l2"]), # not assessed: infAP)
    ("qrels.rel_level", ["-J"]),  # judged documents only (condensed lists)
    ("qrels.rel_level", ["-M", "25"]),
])
def test_trec_eval_suite_files(trec_eval_10, trec_eval_suite, qrels_file, flags):
    rel_level = int(flags[0][2:]) if flags and flags[0].startswith("-l") else None
    judged_only, max_docs = "-J" in flags, int(flags[1]) if "-M" in flags else None
    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(trec_eval_suite / qrels_file)], "q")
    loading.load_runs(con, [str(trec_eval_suite / "results.test")], extra_fields=True)
    run_id = con.execute("SELECT run_id FROM run_loads").fetchone()[0]
    checked, wrong = 0, []
    for specs in (["all_trec", "dcg"], VARIANTS, ["dcg.1=2,3=1.5"]):
        measures = wanted(specs)
        scores = evaluate(con, "q", measures, [run_id], rel_level=rel_level, judged_only=judged_only,
                          max_docs=max_docs)
        printed = trec_lines(run_trec_eval(trec_eval_10, trec_eval_suite / qrels_file,
                                           trec_eval_suite / "results.test", specs, *flags))
        c, w = compare(printed, scores, measures, run_id, rel_level, judged_only=judged_only)
        checked, wrong = checked + c, wrong + w
    con.close()
    assert not wrong, f"{len(wrong)} of {checked} differ:\n" + "\n".join(wrong[:40])
    assert checked > 400


@pytest.mark.parametrize("flags", [[], ["-J"], ["-M", "7"]])
def test_relstring(trec_eval_10, trec_eval_suite, flags):
    """evaluation.relstrings is trec_eval's relstring (grades -1 of qrels.rel_level show '.')."""
    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(trec_eval_suite / "qrels.rel_level")], "q")
    loading.load_runs(con, [str(trec_eval_suite / "results.test")], extra_fields=True)
    run_id = con.execute("SELECT run_id FROM run_loads").fetchone()[0]
    ours = evaluation.relstrings(con, "q", [run_id], 1000, max_docs=int(flags[1]) if "-M" in flags else None,
                                 judged_only="-J" in flags)
    con.close()
    printed = trec_lines(run_trec_eval(trec_eval_10, trec_eval_suite / "qrels.rel_level",
                                       trec_eval_suite / "results.test", ["relstring.1000"], *flags))
    want = {topic: value.strip("'") for (label, topic), value in printed.items()}
    assert want and {t: s for (_, t), s in ours.items()} == want
    marks = {c for s in want.values() for c in s if c in ".-"}
    if "-M" not in flags:
        assert marks == (set() if "-J" in flags else {".", "-"})
    else:
        assert max(map(len, want.values())) == 7
