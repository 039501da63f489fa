"""The HTML pages of irw: Jinja2 templates in ``irwarehouse/templates``, rendered with
autoescaping.

A page is ``templates/page.html`` (the document, its style, header, table of contents and
footer) around a list of :class:`Section`: each one template, rendered with the plain data
(numbers, strings, figure URIs) a Python function built for it. The templates format that
data: every value they print is escaped unless it is marked safe (a figure's ``data:`` URI
needs no marking: base64 has nothing to escape), so a run id, a qrels name or a measure
parameter cannot open an element. ``templates/macros.html`` holds the pieces sections share
(a figure with its caption, a folded block, an interval, significance marks).

The templates ship inside the package (they are package data of the wheel) and are found
with :func:`importlib.resources`, as installed or from a checkout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from .errors import IrwError
from .version import __version__

TEMPLATES = "templates"  # the folder of irwarehouse that holds the page templates


@dataclass(frozen=True)
class Section:
    """One section of a page: ``<section id="key">`` with the heading ``title``, its body the
    template ``template`` (a path under ``irwarehouse/templates``) rendered with ``data`` as
    ``d``."""

    key: str
    title: str
    template: str
    data: dict[str, Any] = field(default_factory=dict)


def templates_dir():
    """The page templates (a :class:`importlib.resources` traversable), installed or not."""
    here = resources.files("irwarehouse") / TEMPLATES
    if not (here / "page.html").is_file():
        raise IrwError(f"page templates not found in {here}: the installation is incomplete")
    return here


def number(value, digits: int = 4) -> str:
    """A score as the tables print it (four decimals); a missing one as an en dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"


@lru_cache(maxsize=1)
def environment() -> "jinja2.Environment":
    """The Jinja2 environment of the pages: autoescaping on for every template, undefined
    names an error, the filters ``num`` (:func:`number`) and ``count`` (thousands
    separated)."""
    import jinja2

    templates_dir()  # a clear error when they are missing
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("irwarehouse", TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = number
    env.filters["count"] = lambda n: f"{n:,}"
    env.globals["version"] = __version__
    return env


def render(template: str, **context) -> str:
    """Render the template ``template`` (under ``irwarehouse/templates``) with ``context``."""
    return environment().get_template(template).render(**context)


def page(title: str, meta: list[str], sections: list[Section], made_by: str) -> str:
    """One self-contained HTML document: ``title`` as its heading, ``meta`` (facts about what
    it shows) below it, a table of contents, the ``sections`` in order, and a footer naming
    the command that made it (``made_by``)."""
    return render("page.html", title=title, meta=meta, sections=sections, made_by=made_by)
