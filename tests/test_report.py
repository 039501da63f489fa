"""``irw report``: the HTML page parses and holds every section, its numbers are those of
``irw eval``, ``irw ci``, ``irw pvalues``, ``irw correlate`` and ``irw compare``, the paper
table's significance marks are ``irw pvalues``' significant pairs, nothing is fetched from a
network, and a headless browser renders the page."""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import FIXTURES, cli_for, unavailable
from irwarehouse import schema, significance, stats
from irwarehouse.measures import parse_all
from irwarehouse.report import SECTIONS, Report, build_report
from irwarehouse.report.sections import mark_list as _mark_list

MEASURES = ["AP", "P@10", "nDCG(discount=jk)@10"]
VOID = {"meta", "img", "br", "hr", "link", "input", "wbr"}


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    """The fixtures loaded into a warehouse (read by the tests, never changed)."""
    invoke = cli_for(str(tmp_path_factory.mktemp("report") / "fx.duckdb"))
    invoke("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    invoke("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    return invoke


@pytest.fixture(scope="module")
def page(fx, tmp_path_factory):
    out = tmp_path_factory.mktemp("page") / "report.html"
    args = [a for m in MEASURES for a in ("-m", m)]
    result = fx("report", *args, "--out", out)
    assert "wrote the html report on 8 runs and 3 measures (qrels fixture)" in result.output
    return out


class Page(HTMLParser):
    """The page's structure: sections, their tables (cell text, superscripts), images; and
    every element closed in order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.sections, self.tables, self.images, self.refs = [], [], {}, {}, []
        self.classes = {}  # section: the class of each of its tables
        self.section = None
        self.cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href"):
            if name in attrs:
                self.refs.append(attrs[name])
        if tag not in VOID:
            self.stack.append(tag)
        if tag == "section":
            self.section = attrs["id"]
            self.sections.append(self.section)
        elif tag == "table":
            self.tables.setdefault(self.section, []).append([])
            self.classes.setdefault(self.section, []).append(attrs.get("class"))
        elif tag == "tr":
            self.tables[self.section][-1].append([])
        elif tag in ("td", "th"):
            self.cell = {"text": "", "sup": ""}
        elif tag == "img":
            self.images.setdefault(self.section, []).append(attrs["src"])

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1:]}>"
        self.stack.pop()
        if tag in ("td", "th"):
            self.tables[self.section][-1][-1].append(self.cell)
            self.cell = None
        elif tag == "section":
            self.section = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell["text"] += data
            if self.stack[-1] == "sup":
                self.cell["sup"] += data


def parse_page(text: str) -> Page:
    parser = Page()
    parser.feed(text)
    parser.close()
    assert parser.stack == [], f"unclosed elements: {parser.stack}"
    return parser


def table_of(doc: Page, section: str, cls: str):
    """The table of class ``cls`` in ``section``."""
    return doc.tables[section][doc.classes[section].index(cls)]


def rows_of(table) -> tuple[list[str], list[dict]]:
    """Header texts and the body rows as {header: cell}."""
    header = [c["text"] for c in table[0]]
    return header, [dict(zip(header, row)) for row in table[1:]]


def test_page_parses_with_every_section(page):
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    doc = parse_page(text)
    assert doc.sections == list(SECTIONS)
    # figures: one leaderboard, a heat map, a groups figure and a box plot per measure, the measures' tau
    # matrix, the coverage; each an SVG document inline
    counts = {key: len(doc.images.get(key, [])) for key in SECTIONS}
    assert counts == {"leaderboard": 1, "significance": 6, "distributions": 3, "correlation": 1,
                      "coverage": 1, "ties": 0}
    for images in doc.images.values():
        for src in images:
            prefix = "data:image/svg+xml;base64,"
            assert src.startswith(prefix)
            root = ET.fromstring(base64.b64decode(src[len(prefix):]))
            assert root.tag.endswith("svg") and len(list(root.iter())) > 50
    assert set(doc.tables) == set(SECTIONS) - {"distributions"}  # the box plots are figures only


def test_page_fetches_nothing(page):
    text = page.read_text(encoding="utf-8")
    for needle in ("http://", "https://", "<script", "<link", "@import", "url("):
        assert needle not in text.lower(), needle
    doc = parse_page(text)
    assert doc.refs and all(r.startswith(("data:", "#")) for r in doc.refs)


def test_leaderboard_is_eval_and_ci(fx, page):
    doc = parse_page(page.read_text(encoding="utf-8"))
    header, rows = rows_of(table_of(doc, "leaderboard", "leaderboard"))
    assert header == ["#", "run"] + [h for m in MEASURES for h in (m, f"{m} 95% CI")]
    args = [a for m in MEASURES for a in ("-m", m)]
    means = {(r["run_id"], r["measure"]): r["value"]
             for r in json.loads(fx("eval", *args, "--no-store", "--format", "json").stdout)}
    runs = [row["run"]["text"] for row in rows]
    assert sorted(runs) == sorted({run for run, _ in means})
    # the runs by the first measure's mean, best first, lettered
    assert [means[(run, "AP")] for run in runs] == sorted((means[(run, "AP")] for run in runs), reverse=True)
    assert [row["#"]["text"] for row in rows] == list("abcdefgh")
    for m in MEASURES:
        ci = {r["run_id"]: r for r in json.loads(fx("ci", "-m", m, "--format", "json").stdout)}
        for row in rows:
            run = row["run"]["text"]
            assert row[m]["text"] == f"{means[(run, m)]:.4f}"
            assert row[f"{m} 95% CI"]["text"] == f"[{ci[run]['ci_low']:.4f}, {ci[run]['ci_high']:.4f}]"


def test_summary_is_the_best_run_and_its_ties(fx, page):
    """The summary above the leaderboard: per measure the best run (irw eval), its interval
    (irw ci), the runs not significantly different from it and the significant pairs
    (irw pvalues)."""
    doc = parse_page(page.read_text(encoding="utf-8"))
    _, rows = rows_of(table_of(doc, "leaderboard", "summary"))
    assert [row["measure"]["text"] for row in rows] == MEASURES
    for row in rows:
        m = row["measure"]["text"]
        ci = json.loads(fx("ci", "-m", m, "--format", "json").stdout)
        best = max(ci, key=lambda r: (r["mean"], [-ord(c) for c in r["run_id"]]))
        assert row["best run"]["text"] == best["run_id"]
        assert row["mean"]["text"] == f"{best['mean']:.4f}"
        assert row["95% CI"]["text"] == f"[{best['ci_low']:.4f}, {best['ci_high']:.4f}]"
        pairs = json.loads(fx("pvalues", "-m", m, "--format", "json").stdout)
        ties = {r["run_b"] if r["run_a"] == best["run_id"] else r["run_a"] for r in pairs
                if best["run_id"] in (r["run_a"], r["run_b"]) and not r["significant"]}
        count, _, names = row["not significantly different from the best"]["text"].partition(": ")
        assert int(count) == len(ties) and set(names.split(", ")) == ties
        assert row["significant pairs"]["text"] == f"{sum(r['significant'] for r in pairs)} of 28"


def significant_wins(fx, measure, *options) -> set[tuple[str, str]]:
    """(better, worse) for every significant pair of ``irw pvalues``."""
    rows = json.loads(fx("pvalues", "-m", measure, *options, "--format", "json").stdout)
    return {(r["run_a"], r["run_b"]) if r["diff"] > 0 else (r["run_b"], r["run_a"])
            for r in rows if r["significant"]}


def marks_of(label_of: dict, cells: dict[str, str], numbered=False) -> set[tuple[str, str]]:
    """(run, run it beats) from each run's superscript."""
    run_of = {label: run for run, label in label_of.items()}
    out = set()
    for run, sup in cells.items():
        if numbered:
            labels = []
            for part in filter(None, sup.split(",")):
                lo, _, hi = part.partition("–")
                labels += [str(k) for k in range(int(lo), int(hi or lo) + 1)]
        else:
            labels = list(sup)
        out |= {(run, run_of[label]) for label in labels}
    return out


def md_table(text: str) -> tuple[str, dict, dict]:
    """Caption, label of each run, and {measure: {run: superscript}} of a markdown table."""
    lines = text.strip().splitlines()
    caption, header = lines[0], [c.strip() for c in lines[2].strip("|").split("|")]
    labels, sups = {}, {m: {} for m in header[2:]}
    for line in lines[4:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        labels[cells[1]] = cells[0]
        for m, cell in zip(header[2:], cells[2:]):
            found = re.fullmatch(r"(\*\*)?(\d\.\d{4})(\*\*)?(?:<sup>(.*)</sup>)?", cell)
            assert found, cell
            sups[m][cells[1]] = found.group(4) or ""
    return caption, labels, sups


def latex_table(text: str) -> tuple[str, dict, dict]:
    caption = re.search(r"\\caption\{(.*)\}\n", text).group(1)
    body = text.split("\\midrule\n")[1].split("\\bottomrule")[0]
    header = [c.strip() for c in text.split("\\toprule\n")[1].split("\\\\")[0].split("&")]
    labels, sups = {}, {m: {} for m in header[2:]}
    for line in body.strip().splitlines():
        cells = [c.strip() for c in line.rstrip("\\ ").split("&")]
        labels[cells[1]] = cells[0]
        for m, cell in zip(header[2:], cells[2:]):
            found = re.fullmatch(r"(?:\\textbf\{)?(\d\.\d{4})\}?(?:\\textsuperscript\{(.*)\})?", cell)
            assert found, cell
            sups[m][cells[1]] = (found.group(2) or "").replace("--", "–")
    return caption, labels, sups


@pytest.mark.parametrize("options, names", [
    ((), ("paired t-test", "no correction")),
    (("--correction", "holm"), ("paired t-test", "Holm correction")),
    (("--test", "bootstrap", "--correction", "bh", "--alpha", "0.1"),
     ("paired bootstrap test (B = 1000, seed 0)", "Benjamini")),
])
def test_paper_table_marks_are_pvalues_significant_pairs(fx, options, names):
    measures = ["AP", "P@10"]
    args = [a for m in measures for a in ("-m", m)]
    md = md_table(fx("report", *args, *options, "--format", "markdown").stdout)
    tex = latex_table(fx("report", *args, *options, "--format", "latex").stdout)
    for caption, labels, sups in (md, tex):
        assert labels == dict(zip(labels, "abcdefgh"))
        for name in names:
            assert name in caption
        assert ("8 runs over 5 topics (qrels fixture, topic set qrels, ranking trec_eval, ties trec_eval)"
                in caption.replace("\\_", "_"))  # LaTeX escapes the underscores
        assert ("0.1" if "--alpha" in options else "0.05") in caption
        for m in measures:
            expected = significant_wins(fx, m, *options)
            assert marks_of(labels, sups[m]) == expected
    assert md[2] == tex[2] and md[1] == tex[1]
    # some pairs are significant, some not: the comparison means something
    assert 0 < sum(len(s) for s in md[2]["AP"].values()) < 28


def test_html_significance_table_has_the_same_marks(fx, page):
    doc = parse_page(page.read_text(encoding="utf-8"))
    header, rows = rows_of(doc.tables["significance"][0])
    labels = {row["run"]["text"]: row["#"]["text"] for row in rows}
    for m in MEASURES:
        cells = {row["run"]["text"]: row[m]["sup"] for row in rows}
        wins = significant_wins(fx, m)
        assert marks_of(labels, cells) == wins
        for row in rows:  # better / worse counts
            run = row["run"]["text"]
            better = sum(1 for a, _ in wins if a == run)
            worse = sum(1 for _, b in wins if b == run)
            assert row[f"{m} better / worse"]["text"] == f"{better} / {worse}"
        # groups: runs sharing a letter are not significantly different, and every pair
        # that is not shares one
        groups = {row["run"]["text"]: set(row[f"{m} groups"]["text"]) for row in rows}
        different = {frozenset(pair) for pair in wins}
        assert_groups(groups, different)
    # AP by hand from the marks (docs/commands.md): alpha2 beats gamma1 and the last three,
    # beta1, alpha1, beta2 and gamma1 the last three, delta1 gamma2; so the largest sets of
    # runs no two of which differ are {alpha2, beta1, alpha1, beta2} (a), {beta1, alpha1,
    # beta2, gamma1} (b), {delta1, delta2} (c) and {delta2, gamma2} (d)
    cells = {row["run"]["text"]: row["AP groups"]["text"] for row in rows}
    assert cells == {"alpha2": "a", "beta1": "ab", "alpha1": "ab", "beta2": "ab", "gamma1": "b",
                     "delta1": "c", "delta2": "cd", "gamma2": "d"}


def assert_groups(groups: dict[str, set], different: set[frozenset]) -> None:
    """``groups`` (run: its group names) is a letter display of the pairs not in
    ``different``: two runs share a group exactly when they are not significantly
    different, every run has a group, and no group could take one more run."""
    runs = sorted(groups)
    assert all(groups[r] for r in runs)
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            assert bool(groups[a] & groups[b]) == (frozenset((a, b)) not in different), (a, b)
    for name in set().union(*groups.values()):
        members = {r for r in runs if name in groups[r]}
        for outsider in set(runs) - members:
            assert any(frozenset((outsider, m)) in different for m in members), (name, outsider)


def test_bold_is_the_best_mean(fx):
    md = fx("report", "-m", "AP", "-m", "P@10", "--format", "markdown").stdout
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines()[4:]]
    assert [run for _, run, ap, _ in rows if ap.startswith("**")] == ["alpha2"]  # AP 0.6999
    assert [run for _, run, _, p10 in rows if p10.startswith("**")] == ["alpha1"]  # P@10 0.8000


def test_correlation_and_coverage_are_correlate_and_compare(fx, page):
    doc = parse_page(page.read_text(encoding="utf-8"))
    square, pairs = doc.tables["correlation"]
    _, rows = rows_of(pairs)
    assert len(rows) == 3
    for row in rows:
        a, b = row["measure A"]["text"], row["measure B"]["text"]
        expected = json.loads(fx("correlate", "-m", a, "-m", b, "--format", "json").stdout)[0]
        for column, key in (("τ-b", "kendall_tau"), ("τ_AP (A the reference)", "tau_ap"),
                            ("RBO (p = 0.9)", "rbo"), ("Pearson", "pearson")):
            assert row[column]["text"] == f"{expected[key]:.4f}"
    header, rows = rows_of(square)
    assert [row["τ-b"]["text"] for row in rows] == MEASURES
    assert all(row[m]["text"] == "1.0000" for row, m in zip(rows, MEASURES))
    # coverage: irw compare's residual and Judged@10 (alpha1 against gamma2)
    _, rows = rows_of(doc.tables["coverage"][0])
    cov = {row["run"]["text"]: row for row in rows}
    compare = json.loads(fx("compare", "alpha1", "gamma2", "-m", "AP", "--format", "json").stdout)[0]
    for run, tag in (("alpha1", "a"), ("gamma2", "b")):
        assert cov[run]["RBPres(p=0.8)"]["text"] == f"{compare[f'residual_{tag}']:.4f}"
        assert cov[run]["Judged@10"]["text"] == f"{compare[f'judged_{tag}']:.4f}"
    assert cov["gamma2"]["Judged@10"]["text"] == "0.5000"  # half its top 10 unjudged
    low, high = cov["gamma2"]["RBP(p=0.8) range"]["text"].strip("[]").split(", ")
    assert low == cov["gamma2"]["RBP(p=0.8)"]["text"]
    assert float(high) - float(low) == pytest.approx(compare["residual_b"], abs=1.5e-4)


def test_report_api_without_the_command_line(fx):
    con = schema.connect(fx.db_path, read_only=True)
    try:
        report = build_report(con, ["P@10", "AP", "P_10"], runs="team:alpha,team:beta,gamma2",
                              test="t", correction="holm")
        ap = significance.mean_intervals(con, "fixture", parse_all(["AP"])[0], report.run_ids)
    finally:
        con.close()
    assert report.measures == ["P@10", "AP"]  # P_10 is P@10
    assert report.run_ids == ["alpha1", "alpha2", "beta1", "beta2", "gamma2"]  # by P@10
    assert report.labels == dict(zip(report.run_ids, "abcde"))
    mine = report.leaderboard[report.leaderboard["measure"] == "AP"].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine.set_index("run_id").loc[report.run_ids].reset_index(),
                                  ap.set_index("run_id").loc[report.run_ids].reset_index())
    assert len(report.pairs) == 2 * 10 and set(report.pairs["measure"]) == {"P@10", "AP"}
    for fmt in ("html", "latex", "markdown"):
        assert report.render(fmt)


# trec_eval's measures the catalogue gained with irw trec-eval, at a setting each
TREC_EVAL_MEASURES = ["infAP", "IPrec@0.3", "IPrecAvg", "SetAP", "SetF(beta=0.5)", "RelP@5", "G",
                      "binG", "RnDCG", "nDCGRel", "ERR@20", "Utility", "Unjudged@5",
                      "NumNonRelJudgedRet", "RPrec(mult=0.6)"]


def test_report_of_trec_eval_measures(fx):
    """The report's leaderboard of trec_eval's measures is irw eval's means, and it renders."""
    con = schema.connect(fx.db_path, read_only=True)
    try:
        report = build_report(con, TREC_EVAL_MEASURES, test="t")
    finally:
        con.close()
    means = json.loads(fx("eval", *[a for m in TREC_EVAL_MEASURES for a in ("-m", m)], "--no-store",
                          "--format", "json").stdout)
    assert report.measures == [str(m) for m in parse_all(TREC_EVAL_MEASURES)]
    assert len(means) == len(report.measures) * len(report.run_ids)
    for row in means:
        assert report.means(row["measure"])[row["run_id"]] == pytest.approx(row["value"], abs=1e-12), row
    for fmt in ("html", "latex", "markdown"):
        assert report.render(fmt)


def hand_report(means: dict, significant: list[tuple[str, str]]) -> Report:
    """A report over one measure with the given means and significant pairs (winner first)."""
    runs = sorted(means, key=lambda r: -means[r])
    pairs = [{"measure": "AP", "run_a": a, "run_b": b, "diff": means[a] - means[b],
              "significant": (a, b) in significant or (b, a) in significant}
             for i, a in enumerate(runs) for b in runs[i + 1:]]
    leaderboard = pd.DataFrame({"run_id": runs, "measure": "AP", "mean": [means[r] for r in runs]})
    matrix = significance.Matrix("q", "AP", runs, ["1", "2", "3"], np.zeros((len(runs), 3)))
    return Report(qrels="q", measures=["AP"], run_ids=runs, topic_set="qrels", test="t",
                  correction="none", alpha=0.05, B=None, seed=0, level=0.95, matrices={"AP": matrix},
                  leaderboard=leaderboard, pairs=pd.DataFrame(pairs), correlations=pd.DataFrame(),
                  coverage=pd.DataFrame())


def test_paper_table_by_hand():
    # x and y tie at 4 decimals (both bold); x beats z, y beats w and z; w beats nothing
    report = hand_report({"x": 0.50004, "y": 0.49996, "z": 0.2, "w|1": 0.3},
                         [("x", "z"), ("y", "z"), ("y", "w|1")])
    assert report.to_markdown().splitlines()[2:] == [
        "|  | run | AP |",
        "| --- | --- | ---: |",
        "| a | x | **0.5000**<sup>d</sup> |",
        "| b | y | **0.5000**<sup>cd</sup> |",
        "| c | w\\|1 | 0.3000 |",
        "| d | z | 0.2000 |",
    ]
    latex = report.to_latex()
    assert "a & x & \\textbf{0.5000}\\textsuperscript{d} \\\\" in latex
    assert "c & w\\textbar{}1 & 0.3000 \\\\" in latex
    assert ("paired t-test on the 6 run pairs of each measure, no correction for multiple "
            "comparisons, $\\alpha = 0.05$") in latex


def test_mark_lists():
    assert _mark_list(["b", "d", "e"], numbered=False) == "bde"
    assert _mark_list(["1", "2", "3", "5", "7", "8", "10", "11", "12", "13"], numbered=True) == "1–3,5,7,8,10–13"
    assert _mark_list([], numbered=True) == ""


def test_many_runs_are_numbered():
    report = hand_report({f"r{k:02d}": 1 - k / 100 for k in range(30)},
                         [("r00", f"r{k:02d}") for k in (3, 4, 5, 6, 9)])
    assert report.labels["r29"] == "30"
    row = next(line for line in report.to_markdown().splitlines() if "| r00 |" in line)
    assert row == "| 1 | r00 | **1.0000**<sup>4–7,10</sup> |"
    assert "\\textsuperscript{4--7,10}" in report.to_latex()


def test_errors(fx, tmp_path):
    def error(*args):
        result = fx("report", *args, ok=False)
        assert result.exit_code == 1
        return result.output.strip()

    assert error("-m", "AP") == ("error: the html report is a page: give a file with --out "
                                 "(latex and markdown print on stdout without it)")
    assert error("-m", "AP", "--format", "pdf").startswith("error: unknown format 'pdf'; valid: html, latex, markdown")
    assert error("-m", "AP", "--format", "latex", "--test", "z").startswith("error: unknown test 'z'")
    assert error("-m", "AP", "--format", "latex", "--correction", "x").startswith("error: unknown correction 'x'")
    assert error("-m", "AP", "--format", "latex", "--runs", "alpha1") == "error: need at least two runs, got 1"
    assert error("-m", "AP", "--format", "latex", "--rbp-p", "1.5").startswith("error: parameter p of 'RBP(p=1.5)'")
    assert error("-m", "AP", "--format", "latex", "--level", "95").startswith("error: the confidence level")
    missing = tmp_path / "no" / "such" / "dir" / "r.html"
    assert error("-m", "AP", "--out", missing).startswith(f"error: {missing}")
    assert not missing.parent.exists()


def browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    path = Path("/usr/lib/chromium/chromium")
    return str(path) if path.exists() else None


# Appended to a copy of the page: once it has loaded, what the browser made of it -- every
# image decoded (its own size) and laid out (its size on the page), and every section's box.
LAYOUT_PROBE = """<script>
window.addEventListener("load", () => {
  const box = e => { const r = e.getBoundingClientRect();
                     return [Math.round(r.top + window.scrollY), Math.round(r.width), Math.round(r.height)]; };
  const out = {
    images: [...document.images].map(i => ({complete: i.complete, natural: [i.naturalWidth, i.naturalHeight],
                                             shown: box(i).slice(1)})),
    sections: [...document.querySelectorAll("section")].map(s => [s.id, ...box(s)]),
    height: document.documentElement.scrollHeight,
  };
  const pre = document.createElement("pre");
  pre.id = "irw-layout";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""

# Colours only the figures of each section paint in large areas (irwarehouse/report/runs_figures.py):
# the CI plot's dots and intervals; the significance maps' cells (better, worse, not
# significant) and the groups' runs; the box plots' boxes and mean markers; the tau
# matrix's diagonal (1.0, the top of viridis); the coverage bars; the ties section is text.
# And the body text's colour, in every section.
TEXT = "#222222"


def signatures() -> dict[str, list[str]]:
    import matplotlib

    top = "#%02x%02x%02x" % tuple(matplotlib.colormaps["viridis"](1.0, bytes=True)[:3])
    return {"leaderboard": ["#2f6fae", "#7fa7cf"],
            "significance": ["#2f6fae", "#c2413b", "#ececec", "#2f4f7f"],
            "distributions": ["#dbe7f3", "#c2413b"],
            "correlation": [top],
            "coverage": ["#2f6fae", "#b9cfe6", "#6a8f3a"],
            "ties": []}


def test_page_renders_in_a_browser(page, tmp_path):
    """Chromium, headless, lays the page out (every figure decoded, shown at its size, every
    section a box) and paints it: each section's stretch of a screenshot of the whole page
    holds the colours of its figures and of the text."""
    exe = browser()
    if exe is None:
        unavailable("no headless browser (chromium, chromium-browser or google-chrome on PATH, "
                     "or /usr/lib/chromium): install one (Debian: apt-get install chromium) to "
                     "render the report")
    import matplotlib.image

    chrome = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              f"--user-data-dir={tmp_path / 'profile'}"]
    width = 1280
    text = page.read_text(encoding="utf-8")
    probe = tmp_path / "probe.html"
    probe.write_text(text.replace("</body>", LAYOUT_PROBE + "</body>"), encoding="utf-8")
    dom = subprocess.run([*chrome, f"--window-size={width},1000", "--dump-dom", probe.as_uri()],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'<pre id="irw-layout">(.*?)</pre>', dom, re.S)
    assert found, "the browser did not run the page to its end"
    layout = json.loads(html.unescape(found.group(1)))
    doc = parse_page(text)
    assert len(layout["images"]) == sum(len(v) for v in doc.images.values()) == 12
    for image in layout["images"]:
        assert image["complete"] and min(image["natural"]) > 50, image  # decoded
        assert image["shown"] == image["natural"], image  # laid out at its own size
    assert [s[0] for s in layout["sections"]] == list(SECTIONS)

    png = tmp_path / "report.png"
    height = layout["height"]
    subprocess.run([*chrome, f"--window-size={width},{height}", f"--screenshot={png}", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    image = matplotlib.image.imread(str(png))
    assert image.shape[:2] == (height, width)
    rgb = (image[..., :3] * 255).round().astype(np.uint32)
    colour = (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]
    wanted = signatures()
    for name, top, box_width, box_height in layout["sections"]:
        assert box_width > 0 and box_height > 100, name
        band = colour[top:top + box_height]
        for hex_colour in wanted[name] + [TEXT]:
            pixels = int((band == int(hex_colour[1:], 16)).sum())
            assert pixels >= 50, f"{name}: {hex_colour} painted on {pixels} pixels"


def test_trec8_report(trec8_db):
    """All 129 TREC-8 runs: the whole page in reasonable time, and the paper table's marks
    (numbered: more than 26 runs) are irw pvalues' significant pairs."""
    con = schema.connect(trec8_db, read_only=True)
    try:
        start = time.perf_counter()
        report = build_report(con, ["AP", "P@10", "nDCG@10"], correction="holm")
        text = report.to_html()
        elapsed = time.perf_counter() - start
        pairs = significance.pvalues(con, "trec8", parse_all(["P@10"])[0], report.run_ids,
                                     correction="holm")
    finally:
        con.close()
    print(f"TREC-8 report: {elapsed:.1f} s, {len(text) / 1e6:.1f} MB")
    assert elapsed < 60, f"the TREC-8 report took {elapsed:.1f} s"
    doc = parse_page(text)
    assert doc.sections == list(SECTIONS)
    _, rows = rows_of(table_of(doc, "leaderboard", "leaderboard"))
    assert len(rows) == 129 and rows[-1]["#"]["text"] == "129"
    caption, labels, sups = md_table(report.to_markdown())
    assert "129 runs over 50 topics" in caption and "by number" in caption
    expected = {(r.run_a, r.run_b) if r.diff > 0 else (r.run_b, r.run_a)
                for r in pairs.itertuples() if r.significant}
    assert marks_of(labels, sups["P@10"], numbered=True) == expected
    assert len(expected) > 1000
    # the groups of runs not significantly different, as irw pvalues decides
    groups = report.groups("P@10")
    assert 26 < len(groups) < 129  # numbered, and far fewer than one per run
    names = {run: {k for k, g in enumerate(groups) if run in g} for run in report.run_ids}
    assert_groups(names, {frozenset(pair) for pair in expected})
    assert groups[0][0] == report.order("P@10")[0]


# ------------------------------------------------------------------ groups, escaping, packaging

def test_letter_groups_by_hand():
    none = np.zeros((4, 4), dtype=bool)
    assert stats.letter_groups(none).tolist() == [[True] * 4]  # one group of all
    every = ~np.eye(4, dtype=bool)
    assert stats.letter_groups(every).tolist() == np.eye(4, dtype=bool).tolist()  # alone each
    # a chain: only the ends differ, so the middle run is in both groups
    chain = np.zeros((3, 3), dtype=bool)
    chain[0, 2] = chain[2, 0] = True
    assert stats.letter_groups(chain).astype(int).tolist() == [[1, 1, 0], [0, 1, 1]]
    # runs 0-3 of which only 0 and 3 differ, run 4 differs from all but 3
    S = np.zeros((5, 5), dtype=bool)
    S[0, 3] = S[3, 0] = True
    S[4, :3] = S[:3, 4] = True
    assert stats.letter_groups(S).astype(int).tolist() == [[1, 1, 1, 0, 0], [0, 1, 1, 1, 0],
                                                           [0, 0, 0, 1, 1]]
    with pytest.raises(ValueError, match="symmetric"):
        stats.letter_groups(np.triu(every))
    assert stats.letter_groups(every, max_groups=2) is None


def test_letter_groups_are_maximal_sets_covering_every_pair():
    """On random decisions (7 to 9 runs), every group is one of the maximal sets of runs no
    two of which differ (found here by trying every subset), and the groups cover every pair
    that does not differ."""
    import itertools

    rng = np.random.default_rng(7)
    for trial in range(60):
        n = int(rng.integers(7, 10))
        upper = np.triu(rng.random((n, n)) < rng.uniform(0.1, 0.7), 1)
        S = upper | upper.T
        same = [c for k in range(1, n + 1) for c in itertools.combinations(range(n), k)
                if not S[np.ix_(c, c)].any()]
        maximal = {c for c in same if not any(set(c) < set(d) for d in same)}
        G = stats.letter_groups(S)
        found = [tuple(np.flatnonzero(g)) for g in G]
        assert set(found) <= maximal and len(found) == len(set(found)), trial
        covered = G.T.astype(int) @ G.astype(int) > 0
        assert np.array_equal(covered, ~S | np.eye(n, dtype=bool)), trial
        assert found == sorted(found, key=lambda c: (c[0], c[-1])), trial


HOSTILE_QRELS = """q</title><script>alert('q')</script>&amp;"""
HOSTILE_RUNS = ["""<img/src=x/onerror=alert("r")>""", """r&amp;'"</td></tr><b>"""]
HOSTILE_MEASURES = ["AP", "P'@10", "nDCG'(gains={1:1,2:3})@10"]  # the condensed lists, a quote


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A report on a warehouse whose qrels name and two run ids are HTML."""
    folder = tmp_path_factory.mktemp("hostile")
    invoke = cli_for(str(folder / "h.duckdb"))
    invoke("load", "qrels", FIXTURES / "qrels.txt", "--name", HOSTILE_QRELS)
    runs = folder / "runs"
    runs.mkdir()
    for name, run_id in zip(("beta1.txt", "beta2.txt"), HOSTILE_RUNS):
        text = (FIXTURES / "runs" / name).read_text(encoding="utf-8")
        (runs / name).write_text(text.replace(name[:-4], run_id), encoding="utf-8")
    invoke("load", "runs", runs, FIXTURES / "runs" / "alpha.txt")
    out = folder / "report.html"
    invoke("report", *[a for m in HOSTILE_MEASURES for a in ("-m", m)], "--out", out)
    return out.read_text(encoding="utf-8")


class Elements(HTMLParser):
    """Every element and attribute of a page, and the text inside ``title``, ``h1`` and
    table cells."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.texts, self.open = set(), [], {"title": "", "h1": "", "td": []}, []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs += attrs
        self.open.append(tag)
        if tag == "td":
            self.texts["td"].append("")

    def handle_endtag(self, tag):
        while self.open and self.open.pop() != tag:
            pass

    def handle_data(self, data):
        for tag in ("title", "h1"):
            if tag in self.open:
                self.texts[tag] += data
        if "td" in self.open:
            self.texts["td"][-1] += data


def test_hostile_names_are_escaped_everywhere(hostile):
    """A qrels name, run ids and measure names that are HTML reach the page as text: the
    page has only the elements irw writes, no script, no event handler, nothing fetched;
    each name reads back as itself in the title, the heading and every table that lists it,
    and inside the figures, which stay well-formed SVG."""
    doc = parse_page(hostile)  # every element closed, in order
    found = Elements()
    found.feed(hostile)
    assert found.tags <= {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2",
                          "h3", "p", "nav", "a", "section", "div", "table", "thead", "tbody", "tr",
                          "th", "td", "b", "sup", "wbr", "code", "figure", "img", "figcaption",
                          "details", "summary", "footer"}
    assert not [name for name, _ in found.attrs if name.startswith("on")]
    for raw in [HOSTILE_QRELS, *HOSTILE_RUNS]:
        assert raw not in hostile
    assert "<script" not in hostile and "<img/" not in hostile
    assert found.texts["title"] == found.texts["h1"] == f"Evaluation report: {HOSTILE_QRELS}"
    for section, cls in (("leaderboard", "leaderboard"), ("significance", "significance"),
                         ("coverage", "coverage")):
        _, rows = rows_of(table_of(doc, section, cls))
        assert set(HOSTILE_RUNS) <= {row["run"]["text"] for row in rows}, section
    header, _ = rows_of(table_of(doc, "leaderboard", "leaderboard"))
    assert header[2::2] == HOSTILE_MEASURES
    _, rows = rows_of(table_of(doc, "leaderboard", "summary"))
    assert [row["measure"]["text"] for row in rows] == HOSTILE_MEASURES
    # the figures: well-formed SVG holding the names as text
    texts = []
    for images in doc.images.values():
        for src in images:
            root = ET.fromstring(base64.b64decode(src.split(",", 1)[1]))
            texts += ["".join(e.itertext()) for e in root.iter() if e.tag.endswith("text")]
    for name in [*HOSTILE_RUNS, *HOSTILE_MEASURES]:
        assert any(name in text for text in texts), name


def test_templates_ship_in_the_wheel(fx, tmp_path):
    """pip installs irwarehouse from the source tree (a wheel, not editable) with the page
    templates, and the installed copy writes the same page as the checkout."""
    from conftest import ROOT, _pip
    from irwarehouse import pages

    assert pages.templates_dir().joinpath("page.html").is_file()
    target = tmp_path / "installed"
    _pip("install", "--quiet", "--no-deps", "--target", str(target), str(ROOT),
         what="build and install irwarehouse")
    shipped = {p.relative_to(target / "irwarehouse").as_posix()
               for p in (target / "irwarehouse" / "templates").rglob("*.html")}
    ours = {p.relative_to(ROOT / "irwarehouse").as_posix()
            for p in (ROOT / "irwarehouse" / "templates").rglob("*.html")}
    assert shipped == ours and "templates/report/leaderboard.html" in shipped
    script = ("import sys, irwarehouse\n"
              "from irwarehouse import schema\n"
              "from irwarehouse.report import build_report\n"
              "assert irwarehouse.__file__.startswith(sys.argv[1]), irwarehouse.__file__\n"
              "con = schema.connect(sys.argv[2], read_only=True)\n"
              "sys.stdout.write(build_report(con, ['AP', 'P@10']).to_html())\n")
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run([sys.executable, "-c", script, str(target), fx.db_path], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    con = schema.connect(fx.db_path, read_only=True)
    try:
        assert out.stdout == build_report(con, ["AP", "P@10"]).to_html()
    finally:
        con.close()


# ----------------------------------------------------------- the size of differences, power, systems


def test_pairs_table_is_pvalues_with_intervals_and_effect_sizes(fx, page):
    """The significance section's table of pairs is irw pvalues' rows: the difference and its
    interval, d_z and its interval, Sakai's effect size, the p-value (bold when significant)."""
    doc = parse_page(Path(page).read_text())
    tables = [t for t, c in zip(doc.tables["significance"], doc.classes["significance"]) if c == "pairs"]
    assert len(tables) == len(MEASURES)
    for measure, table in zip(MEASURES, tables):
        expected = json.loads(fx("pvalues", "-m", measure, "--format", "json").stdout)
        header, rows = rows_of(table)
        assert header[0] == f"{measure}: a" and len(rows) == len(expected) == 28
        for row, want in zip(rows, expected):
            assert (row[header[0]]["text"], row["b"]["text"]) == (want["run_a"], want["run_b"])
            assert row["a − b"]["text"] == f"{want['diff']:.4f}"
            assert row["95% interval"]["text"] == f"[{want['ci_low']:.4f}, {want['ci_high']:.4f}]"
            assert row["d_z"]["text"] == f"{want['effect_size']:.2f}"
            assert row["d_z 95% interval"]["text"] == f"[{want['effect_low']:.2f}, {want['effect_high']:.2f}]"
            assert row["effect size (V_E)"]["text"] == f"{want['effect_size_residual']:.2f}"
            assert row["p"]["text"] == f"{want['p_adjusted']:.4f}"


def test_power_line_is_irw_power(fx, page):
    text = html.unescape(re.sub(r"<[^>]+>", "", Path(page).read_text()))
    rows = json.loads(fx("power", *[a for m in MEASURES for a in ("-m", m)], "--delta", "0.1",
                         "--format", "json").stdout)
    parts = ", ".join(f"{r['min_detectable_diff']:.4f} in {r['measure']}" for r in rows)
    assert f"With 5 topics, differences of {parts} can be detected with 80% power" in " ".join(text.split())


def test_paper_table_with_intervals_and_effect_sizes(fx):
    table = fx("report", "-m", "AP", "--format", "markdown", "--intervals", "--effect-sizes").stdout
    lines = [line for line in table.splitlines() if line.startswith("| ")]
    assert lines[0] == "| | run | AP | AP d\\_z |".replace("| |", "|  |")
    ci = {r["run_id"]: r for r in json.loads(fx("ci", "-m", "AP", "--format", "json").stdout)}
    pairs = json.loads(fx("pvalues", "-m", "AP", "--format", "json").stdout)
    best = max(ci, key=lambda r: ci[r]["mean"])
    for line in lines[2:]:
        run, cell, effect = [c.strip() for c in line.strip("|").split("|")][1:]
        low, high = ci[run]["ci_low"], ci[run]["ci_high"]
        assert cell.endswith(f"[{low:.3f}, {high:.3f}]".replace("-", "−"))
        if run == best:
            assert effect == "–"
            continue
        pair = next(p for p in pairs if {p["run_a"], p["run_b"]} == {run, best})
        d = pair["effect_size"] if pair["run_a"] == run else -pair["effect_size"]
        assert effect.startswith(f"{d:.2f}".replace("-", "−"))
    bad = fx("report", "-m", "AP", "--intervals", "--out", "x.html", ok=False)
    assert "paper table" in bad.stderr


def test_report_by_system(fx, tmp_path):
    """A report on systems: its leaderboard is irw ci --by system's, its pairs irw pvalues --by
    system's, and the paper table names systems."""
    path = str(tmp_path / "systems.duckdb")
    shutil.copy(fx.db_path, path)
    w = cli_for(path)
    meta = tmp_path / "systems.tsv"
    meta.write_text("run_id\tsystem\nalpha1\talpha\nalpha2\talpha\nbeta1\tbeta\nbeta2\tbeta\n")
    w("load", "meta", meta)
    out = tmp_path / "systems.html"
    assert "on 6 systems and 1 measure" in w("report", "-m", "AP", "--by", "system", "--out", out).output
    doc = parse_page(out.read_text())
    header, rows = rows_of(table_of(doc, "leaderboard", "leaderboard"))
    ci = {r["system"]: r for r in json.loads(w("ci", "-m", "AP", "--by", "system", "--format", "json").stdout)}
    assert header[:3] == ["#", "system", "runs"] and len(rows) == 6
    for row in rows:
        want = ci[row["system"]["text"]]
        assert row["runs"]["text"] == str(want["runs"]) and row["AP"]["text"] == f"{want['mean']:.4f}"
    pairs = json.loads(w("pvalues", "-m", "AP", "--by", "system", "--format", "json").stdout)
    table = next(t for t, c in zip(doc.tables["significance"], doc.classes["significance"]) if c == "pairs")
    header, rows = rows_of(table)
    assert [r["within spread"]["text"] == "yes" for r in rows] == [p["within_spread"] for p in pairs]
    paper = w("report", "-m", "AP", "--by", "system", "--format", "markdown").stdout
    assert paper.startswith("Mean AP of 6 systems") and "| a | alpha |" in paper
    bad = w("report", "-m", "AP", "--by", "team", "--format", "markdown", ok=False)
    assert "--by: only with --against" in bad.stderr and "run or system" in bad.stderr


# --------------------------------------------------------------- the first screen of many runs

MANY_RUNS = 45  # more than SMALL (the table folds) and MANY (the figures lay the runs along x)
FIRST_SCREEN = (1400, 900)  # a laptop's window


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """A warehouse of MANY_RUNS generated runs (seeded) on 12 topics: run k finds the
    relevant documents less often the larger k, so the ranking is known roughly."""
    root = tmp_path_factory.mktemp("many")
    rng = np.random.default_rng(7)
    topics, docs = [str(t) for t in range(401, 413)], [f"D{d:03d}" for d in range(60)]
    relevant = {t: set(rng.choice(docs, 12, replace=False)) for t in topics}
    (root / "qrels.txt").write_text("".join(f"{t} 0 {d} {int(d in relevant[t])}\n"
                                            for t in topics for d in docs), encoding="utf-8")
    (root / "runs").mkdir()
    for k in range(MANY_RUNS):
        lines = []
        for t in topics:
            skill = 1.0 - k / MANY_RUNS
            score = {d: rng.random() + (skill * 1.5 if d in relevant[t] else 0.0) for d in docs}
            ranked = sorted(docs, key=lambda d: -score[d])[:30]
            lines += [f"{t} Q0 {d} {i + 1} {30 - i} run{k:02d}\n" for i, d in enumerate(ranked)]
        (root / "runs" / f"run{k:02d}.txt").write_text("".join(lines), encoding="utf-8")
    invoke = cli_for(str(root / "many.duckdb"))
    invoke("load", "qrels", root / "qrels.txt", "--name", "gen")
    invoke("load", "runs", root / "runs")
    invoke.root = root
    return invoke


# What a browser shows in its first screen: the rows of the ranked table's top and the
# highlighted rows, each with its box in the window (the page not scrolled).
FIRST_SCREEN_PROBE = """<script>
window.addEventListener("load", () => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom, r.left, r.right]; };
  const rows = sel => [...document.querySelectorAll(sel)].map(tr => ({text: tr.innerText, box: box(tr)}));
  const out = {top: rows("#leaderboard table.top tbody tr:not(.gap)"),
               highlighted: rows("#leaderboard table.top tr.hl"),
               folded: [...document.querySelectorAll("#leaderboard details")].map(d => d.open),
               window: [window.innerWidth, window.innerHeight]};
  const pre = document.createElement("pre");
  pre.id = "irw-first-screen";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def test_first_screen_of_many_runs_in_a_browser(many, tmp_path):
    """45 runs, one highlighted far down the ranking: in a 1400 x 900 window, Chromium shows
    the ranked table's top rows (the best runs in order) and the highlighted run's row,
    without unfolding anything; the whole table stays folded below."""
    exe = browser()
    if exe is None:
        unavailable("no headless browser (chromium, chromium-browser or google-chrome on PATH, "
                     "or /usr/lib/chromium): install one (Debian: apt-get install chromium) to "
                     "render the report")
    out = tmp_path / "many.html"
    many("report", "-m", "AP", "-m", "P@10", "--highlight", "run40", "--out", out)
    text = out.read_text(encoding="utf-8")
    probe = tmp_path / "probe.html"
    probe.write_text(text.replace("</body>", FIRST_SCREEN_PROBE + "</body>"), encoding="utf-8")
    width, height = FIRST_SCREEN
    chrome = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={width},{height}"]
    dom = subprocess.run([*chrome, "--dump-dom", probe.as_uri()], check=True, capture_output=True,
                         text=True, timeout=120).stdout
    found = re.search(r'<pre id="irw-first-screen">(.*?)</pre>', dom, re.S)
    assert found, "the browser did not run the page to its end"
    screen = json.loads(html.unescape(found.group(1)))
    shown_w, shown_h = screen["window"]  # the window less what the browser keeps of it
    assert shown_w == width and shown_h >= 700, screen["window"]

    def visible(row):
        top, bottom, left, right = row["box"]
        return 0 <= top and bottom <= shown_h and 0 <= left and right <= shown_w

    con = schema.connect(many.db_path, read_only=True)
    try:
        report = build_report(con, ["AP", "P@10"], highlight="run40")
    finally:
        con.close()
    top = screen["top"]
    assert len(top) == 10 + 1  # the top ten, then the highlighted run below them
    for rank, row in enumerate(top[:10], start=1):  # the best runs, in order, on screen
        assert visible(row), row
        assert row["text"].split("\t")[:2] == [str(rank), report.run_ids[rank - 1]]
    [marked] = screen["highlighted"]
    rank = report.run_ids.index("run40") + 1
    assert rank > 10 and marked["text"].split("\t")[:2] == [str(rank), "run40"]
    assert visible(marked), marked
    assert screen["folded"] and not any(screen["folded"])  # the whole table: folded, not shown

    # a screenshot of that first screen: the highlighted row's orange is painted in it
    import matplotlib.image

    png = tmp_path / "first.png"
    subprocess.run([*chrome, f"--screenshot={png}", out.as_uri()], check=True, capture_output=True,
                   timeout=120)
    image = (matplotlib.image.imread(str(png))[..., :3] * 255).round().astype(int)
    assert image.shape[:2] == (height, width)
    row_colour = np.array([0xfd, 0xeb, 0xd3])  # tr.hl's background
    assert (np.abs(image - row_colour).sum(axis=2) == 0).sum() > 1000


def test_highlight_marks_runs_everywhere(many, tmp_path):
    """--highlight (repeatable, comma-separated) marks the runs' rows in every table and
    names them in the figures; an id that is not a run of the report: one line, no page."""
    out = tmp_path / "many.html"
    many("report", "-m", "AP", "--highlight", "run40,run03", "--highlight", "run41", "--out", out)
    doc = parse_page(out.read_text(encoding="utf-8"))
    text = out.read_text(encoding="utf-8")
    marked = set(re.findall(r'<tr class="hl"><td>\d+</td><td>([^<]*)</td>', text))
    assert marked == {"run03", "run40", "run41"}
    # the rows of the top table, the whole leaderboard, the significance and coverage tables
    for section in ("leaderboard", "significance", "coverage"):
        part = text[text.index(f'<section id="{section}"'):]
        part = part[:part.index("</section>")]
        assert {"run03", "run40", "run41"} <= set(re.findall(r'<tr class="hl"><td>\d+</td><td>([^<]*)</td>', part)), section
    assert "highlighted: run03, run40, run41" in text
    # the figures name the highlighted runs in orange (the top one among the first ten, the
    # others below them, with their ranks)
    figure = base64.b64decode(doc.images["leaderboard"][0].split(",", 1)[1]).decode("utf-8")
    assert all(re.search(rf">\d+\. {run}<", figure) for run in ("run03", "run40", "run41"))
    assert "#d9822b" in figure
    overview = base64.b64decode(doc.images["leaderboard"][1].split(",", 1)[1]).decode("utf-8")
    assert "run40" in overview and "run41" in overview and "#d9822b" in overview  # in orange

    # with TREC-8's 129 runs along x, a name would be too small to read: ranks, and the
    # highlighted runs named at theirs
    from irwarehouse.report import figures

    assert figures.runs_along(MANY_RUNS)[1] == figures.READABLE and figures.runs_along(129)[1] is None
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    figures.runs_xaxis([ax], [f"r{k}" for k in range(129)], None, [84])
    svg = base64.b64decode(figures.svg(ax.figure).split(",", 1)[1]).decode("utf-8")
    assert ">r84 (85)<" in svg and ">r83" not in svg

    missing = tmp_path / "none.html"
    result = many("report", "-m", "AP", "--highlight", "run40,nosuch", "--out", missing, ok=False)
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert lines == ["error: --highlight: no run 'nosuch' in this report (45 runs: run00, run01, "
                     "run02, run03, run04, ...)"]
    assert not missing.exists()


def test_many_runs_are_corrected_by_default(many, fx, tmp_path):
    """Without --correction: Holm's over the pairs of more than 10 runs (the subtitle says
    so, and how to turn it off), none with 10 runs or fewer; --correction none turns it off.
    The groups are described in words."""
    def meta(invoke, *options):
        out = tmp_path / "page.html"
        invoke("report", "-m", "AP", "--out", out, "--replace", *options)
        text = out.read_text(encoding="utf-8")
        return html.unescape(re.search(r'<p class="meta">(.*?)</p>', text, re.S).group(1)), text

    subtitle, text = meta(many)
    assert ("Holm correction (the default with more than 10 runs: 990 pairs; --correction none for "
            "none)") in subtitle
    con = schema.connect(many.db_path, read_only=True)
    try:
        holm = build_report(con, ["AP"])
        pairs = significance.pvalues(con, "gen", parse_all(["AP"])[0], holm.run_ids, correction="holm")
    finally:
        con.close()
    assert holm.correction == "holm" and holm.correction_chosen
    def decided(frame):
        return {frozenset((a, b)): (round(p, 10), bool(sig)) for a, b, p, sig in
                zip(frame["run_a"], frame["run_b"], frame["p_adjusted"].fillna(-1), frame["significant"])}

    assert decided(holm.pairs) == decided(pairs)
    groups = len(holm.groups("AP"))
    assert f"Overlapping groups of runs that are not significantly different: {groups} under AP<" in text
    subtitle, _ = meta(many, "--correction", "none")
    assert "no correction for multiple comparisons" in subtitle and "default" not in subtitle
    subtitle, _ = meta(many, "--correction", "holm")
    assert "Holm correction, α" in subtitle  # asked for: nothing to explain
    subtitle, _ = meta(fx)  # 8 runs: no correction by default
    assert "no correction for multiple comparisons" in subtitle


@pytest.mark.parametrize("kind, qrels, runs, measures", [
    ("diversity", "diversity/qrels.txt", ["diversity/runs"], ["alpha_nDCG@10", "ERR_IA@20"]),
    ("prels", "sampled/prels.txt", ["sampled/runA.txt", "sampled/runB.txt", "sampled/runC.txt"], ["xinfAP", "infNDCG"]),
    ("prefs", "prefs/prefs.txt", ["prefs/run_a.txt", "prefs/run_b.txt"], ["prefs_simp", "prefs_pair"]),
])
def test_the_report_takes_every_kind_of_judgments(kind, qrels, runs, measures, tmp_path):
    """A report on a qrels of each kind of judgments: its measures in the leaderboard, equal
    to irw eval's means; coverage (graded measures) where the kind gives graded judgments, and
    for preferences, which give none, a paragraph saying so."""
    w = cli_for(str(tmp_path / "k.duckdb"))
    w("load", "qrels", FIXTURES / qrels, "--name", "k", "--format", kind)
    w("load", "runs", *[FIXTURES / r for r in runs])
    args = [a for m in measures for a in ("-m", m)]
    out = tmp_path / "k.html"
    result = w("report", *args, "--out", out)
    assert f"and {len(measures)} measures (qrels k)" in result.output
    doc = parse_page(out.read_text())
    assert {"leaderboard", "coverage"} <= set(doc.sections)
    means = {(r["run_id"], r["measure"]): r["value"]
             for r in json.loads(w("eval", *args, "--no-store", "--format", "json").stdout)}
    _, rows = rows_of(table_of(doc, "leaderboard", "leaderboard"))
    assert sorted(row["run"]["text"] for row in rows) == sorted({run for run, _ in means})
    for row in rows:
        for m in measures:
            assert row[m]["text"] == f"{means[(row['run']['text'], m)]:.4f}"
    graded = kind != "prefs"
    assert ("no coverage to show" in out.read_text()) != graded
    assert ("holds no graded judgments" in result.output) != graded
