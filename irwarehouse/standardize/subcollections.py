"""Test collections made of a qrels's topics: a chosen list, or a random half, and the rest."""

from __future__ import annotations

import json
import re

from .. import catalogue, connection, runsets, state, stats
from ..engine.loading import drop_qrels
from ..errors import IrwError
from .shared import listed, named_statement

COLLECTION_KIND = "topics"


def _topic_key(topic: str):
    return (0, int(topic), topic) if re.fullmatch(r"-?\d+", topic) else (1, 0, topic)


def parent_topics(con, qrels: str) -> tuple[list[str], list[str]]:
    """(topic set, all judged topics) of a qrels."""
    tset = [r[0] for r in con.execute("SELECT topic FROM topic_sets WHERE qrels = ?", [qrels]).fetchall()]
    every = [r[0] for r in con.execute("SELECT DISTINCT topic FROM qrels WHERE qrels = ?", [qrels]).fetchall()]
    return sorted(tset, key=_topic_key), sorted(every, key=_topic_key)


def parse_topic_spec(spec: str, available: list[str]) -> list[str]:
    """Topics from ``401-425,430,@file``: a range selects the available topics whose integer id
    lies in it (an error if none does); a single id must exist."""
    have = set(available)
    out: list[str] = []
    for item in (i.strip() for i in spec.split(",")):
        if not item:
            continue
        if item.startswith("@"):
            out.extend(runsets.read_id_file(item[1:], have, "topic"))
            continue
        m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", item)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo > hi:
                raise IrwError(f"topic range {item!r} is empty (low > high)")
            chosen = [t for t in available if re.fullmatch(r"\d+", t) and lo <= int(t) <= hi]
            if not chosen:
                raise IrwError(f"no topic of the qrels lies in the range {item!r}")
            out.extend(chosen)
        elif item in have:
            out.append(item)
        else:
            raise IrwError(f"topic {item!r} is not in the qrels; topics: {listed(available)}")
    out = list(dict.fromkeys(out))
    if not out:
        raise IrwError(f"the topic list {spec!r} selects no topic")
    return out


def random_half(topics: list[str], seed: int) -> tuple[list[str], list[str]]:
    """Split a topic set at random (numpy default_rng(seed)) into halves of n//2 and the rest."""
    rng = stats.rng_of(seed)
    order = rng.permutation(len(topics))
    k = len(topics) // 2
    first = sorted((topics[i] for i in order[:k]), key=_topic_key)
    rest = sorted((topics[i] for i in order[k:]), key=_topic_key)
    return first, rest


def _create_collection(con, parent: str, name: str, topics: list[str], params: dict,
                       description: str | None) -> None:
    catalogue.register_qrels(con, name, source=None, kind=COLLECTION_KIND, parent=parent,
                          params=json.dumps(params), description=description, own_topics=True)
    con.execute(named_statement("split_judgments"), [name, parent, topics])
    state.record_qrels(con, name)


def split_collection(con, parent: str, name: str, topics: str | None = None,
                     half_seed: int | None = None, rest: str | None = None,
                     description: str | None = None, replace: bool = False) -> list[dict]:
    """Create collection ``name`` (a qrels of kind 'topics': the parent's judgments for chosen
    topics, with its own topic set) and, with ``rest``, the complement. Topics: a spec
    (``401-425,430,@file``) or a random half of the parent's topic set (``half_seed``)."""
    parent, _ = catalogue.qrels_info(con, parent)
    if (topics is None) == (half_seed is None):
        raise IrwError("choose the topics of the collection: --topics LIST or --half SEED")
    names = [n for n in (name, rest) if n]
    if len(set(names)) != len(names) or parent in names:
        raise IrwError("the collections need distinct names, different from the parent's")
    tset, every = parent_topics(con, parent)
    if topics is not None:
        chosen = parse_topic_spec(topics, every)
        remaining = [t for t in tset if t not in set(chosen)]
        params = {"topics": chosen}
    else:
        if len(tset) < 2:
            raise IrwError(f"qrels {parent!r} has {len(tset)} topic(s) with a relevant document: too few to split")
        chosen, remaining = random_half(tset, half_seed)
        params = {"half_seed": half_seed, "topics": chosen}
    if rest and not remaining:
        raise IrwError(f"no topic is left for the rest collection {rest!r}")
    existing = set(catalogue.qrels_names(con))
    with connection.transaction(con):
        for n in names:
            if n in existing:
                if not replace:
                    raise IrwError(f"qrels {n!r} exists; use --replace to overwrite it")
                kind = con.execute("SELECT kind FROM qrels_info WHERE qrels = ?", [n]).fetchone()[0]
                if kind != COLLECTION_KIND:
                    raise IrwError(f"qrels {n!r} is not a collection (kind {kind}); not replacing it")
                drop_qrels(con, n)
        _create_collection(con, parent, name, chosen, params, description)
        made = [{"qrels": name, "parent": parent, "topics": len(chosen)}]
        if rest:
            rest_params = {"rest_of": name, "topics": remaining}
            _create_collection(con, parent, rest, remaining, rest_params, description)
            made.append({"qrels": rest, "parent": parent, "topics": len(remaining)})
    for row in made:
        row["topic_set"] = con.execute("SELECT count(*) FROM topic_sets WHERE qrels = ?",
                                       [row["qrels"]]).fetchone()[0]
    return made
