"""Conformance with trec_eval's own test suite (expected outputs of trec_eval 10.0).

For every measure both define, the per-topic values and the ``all`` line must equal what
trec_eval printed, to its 4 printed decimals.
"""

from __future__ import annotations

import math
import re

import pytest

from irwarehouse import measures, schema
from irwarehouse.engine import evaluation, loading

# trec_eval name -> our measure (None: compared specially below)
MAPPING = {
    "num_ret": "NumRet", "num_rel": "NumRel", "num_rel_ret": "NumRelRet",
    "map": "AP", "gm_map": None, "Rprec": "RPrec", "bpref": "Bpref", "gm_bpref": None,
    "recip_rank": "RR", "ndcg": "nDCG", "rbp": "RBP(p=0.9)", "rbp_resid": "RBPres(p=0.9,zero_if_judged=True)",
}
for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000):
    MAPPING[f"P_{k}"] = f"P@{k}"
    MAPPING[f"recall_{k}"] = f"R@{k}"
    MAPPING[f"ndcg_cut_{k}"] = f"nDCG@{k}"
    MAPPING[f"map_cut_{k}"] = f"AP@{k}"
for k in (1, 5, 10):
    MAPPING[f"success_{k}"] = f"Success@{k}"
SUMMED = {"num_ret", "num_rel", "num_rel_ret"}  # trec_eval's `all` is a sum, ours a mean
# gm_map / gm_bpref: trec_eval's geometric mean, exp(mean(log(max(x, 1e-5)))) (`gm_trec`).


def read_expected(path):
    out = {}
    for line in path.read_text().splitlines():
        parts = re.split(r"\s+", line.strip())
        if len(parts) == 3:
            out[(parts[0], parts[1])] = parts[2]
    return out


CASES = {
    # expected file: (qrels, results, options)
    "out.test.aq": ("qrels.test", "results.test", dict(topics="run")),
    "out.test.aqc": ("qrels.test", "results.trunc", dict(topics="all")),
    "out.test.aqcM": ("qrels.test", "results.trunc", dict(topics="all", max_docs=100)),
    "out.test.aql": ("qrels.rel_level", "results.test", dict(topics="run", rel_level=2)),
}


@pytest.mark.parametrize("expected_file", sorted(CASES))
def test_reproduces_trec_eval(trec_eval_suite, expected_file):
    qrels_file, results_file, options = CASES[expected_file]
    expected = read_expected(trec_eval_suite / expected_file)
    con = schema.connect(":memory:")
    loading.load_qrels(con, [str(trec_eval_suite / qrels_file)], "q")
    loading.load_runs(con, [str(trec_eval_suite / results_file)], extra_fields=True)
    names = [n for n in MAPPING.values() if n]
    parsed = measures.parse_all(names + ["Bpref"], rel_level=options.get("rel_level"))
    label = {n: str(p) for n, p in zip(names, parsed)}
    per = evaluation.evaluate(con, "q", parsed, ["STANDARD"], store=False, **options)
    ours = {(r.measure, r.topic): r.value for r in per.itertuples()}
    topics = sorted(per["topic"].unique())
    assert topics == sorted({t for (_, t) in expected if t != "all"})
    means = per.aggregate().df().set_index("measure")["value"]
    gm = per.aggregate("gm_trec").df().set_index("measure")["value"]

    checked, wrong = 0, []
    for te_name, our_name in MAPPING.items():
        if (te_name, "all") not in expected:
            continue
        if our_name is None:
            base = {"gm_map": "AP", "gm_bpref": "Bpref"}[te_name]
            pairs = [("all", gm[label.get(base, str(measures.parse_all([base], options.get('rel_level'))[0]))])]
        else:
            lab = label[our_name]
            pairs = [(t, ours[(lab, t)]) for t in topics]
            mean = means[lab] * (len(topics) if te_name in SUMMED else 1)
            pairs.append(("all", mean))
        for topic, value in pairs:
            want = float(expected[(te_name, topic)])
            checked += 1
            if not math.isclose(value, want, abs_tol=0.5e-4 + 1e-9):
                wrong.append(f"{te_name} {topic}: ours {value:.6f}, trec_eval {want:.4f}")
    assert not wrong, "\n".join(wrong)
    assert checked > 100
