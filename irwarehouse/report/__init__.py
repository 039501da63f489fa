"""``irw report``: what a set of runs scored under a qrels, on one page or in one paper table;
or, with ``--against``, a page judging a second judgment set.

:func:`build_report` computes the report's data from a warehouse connection with the same
functions as the commands that print each part (``irw eval``/``irw ci``: means and
confidence intervals; ``irw pvalues``: tests and corrections over all run pairs;
``irw correlate``: rank correlations; ``irw compare``: RBP residual and Judged@k), and a
:class:`Report` renders it:

- :meth:`Report.to_html`: one self-contained HTML page (inline CSS, figures as inline SVG
  data, no scripts, nothing fetched from a network) with the sections of :data:`SECTIONS`,
  rendered from the Jinja2 templates of ``irwarehouse/templates`` (:mod:`irwarehouse.pages`,
  autoescaped): it opens on what is read first (each measure's best run and the runs not
  significantly different from it, the means with their intervals, the significance heat
  maps) and folds the long tables below;
- :meth:`Report.to_latex` / :meth:`Report.to_markdown`: the paper table, runs x measures,
  with superscripts marking the runs each run is significantly better than (runs lettered
  a-z, or numbered when there are more than 26), the best mean per measure in bold, and a
  caption naming the test, correction, alpha and topics.

:func:`build_judges_report` and :class:`JudgesReport` are the page of two judgment sets
(sections :data:`JUDGES_SECTIONS`).

The modules: :mod:`.sections` (what both pages share: their section tables, the test's
name, significance marks), :mod:`.figures` (drawing and inlining figures), :mod:`.runs` and
:mod:`.runs_figures` (the runs' report), :mod:`.judges` (the page of two judgment sets).
"""

from .judges import JUDGES_SECTIONS, JudgesReport, build_judges_report
from .runs import SECTIONS, Report, build_report
from .sections import FORMATS, SMALL
from .figures import MANY

__all__ = ["FORMATS", "JUDGES_SECTIONS", "MANY", "SECTIONS", "SMALL", "JudgesReport", "Report",
           "build_judges_report", "build_report"]
