"""Groups of runs not significantly different from one another (a compact letter display).
"""

from __future__ import annotations


import numpy as np

# --------------------------------------------------------------------------------------
# Groups of runs not significantly different (a compact letter display)
# --------------------------------------------------------------------------------------


def _split_groups(S: np.ndarray, max_groups: int) -> np.ndarray | None:
    """The maximal sets of runs no two of which are significantly different (the maximal
    cliques of the graph of not significantly different pairs), as rows of a boolean
    groups x runs matrix; None beyond ``max_groups`` sets.

    One group of all runs is split at each run ``i`` in turn: a group holding ``i`` and some
    run significantly different from it becomes the group without ``i`` and the group
    without ``i``'s significant partners. Every not significantly different pair stays in
    some group, and after run ``i``'s step no group holds ``i`` with such a partner. A new
    group contained in another is dropped (the groups untouched by a step cannot be: they
    were not contained in the groups it splits). One step per run, each vectorized over the
    groups."""
    n = S.shape[0]
    G = np.ones((1, n), dtype=bool)
    for i in range(n):
        hit = G[:, i] & (G & S[i]).any(axis=1)
        if not hit.any():
            continue
        without_i = G[hit].copy()
        without_i[:, i] = False
        new = np.unique(np.vstack([without_i, G[hit] & ~S[i]]), axis=0)
        kept = G[~hit]
        every = np.vstack([kept, new]).astype(np.int32)
        size = new.sum(axis=1)
        inside = new.astype(np.int32) @ every.T == size[:, None]  # new row within a group
        inside[np.arange(len(new)), len(kept) + np.arange(len(new))] = False  # not itself
        new = new[~inside.any(axis=1) & (size > 0)]
        G = np.vstack([kept, new])
        if len(G) > max_groups:
            return None
    return G


MAX_GROUPS = 4096  # letter_groups gives up beyond this many maximal sets


def letter_groups(significant, max_groups: int = MAX_GROUPS) -> np.ndarray | None:
    """Groups of runs that are not significantly different from each other, from the
    pairwise decisions: a compact letter display (runs sharing a letter are not significantly
    different).

    ``significant`` is a runs x runs boolean matrix of the decisions (symmetric; the diagonal
    is ignored). Returns a boolean groups x runs matrix such that no two runs of a group are
    significantly different, every pair of runs that is not shares a group (a run different
    from all others is a group of its own), and no group can take one more run. Groups are
    ordered by their first, then their last run (so with the runs best first, the first
    group holds the best run).

    The groups are chosen among the maximal sets of mutually not significantly different
    runs (:func:`_split_groups`), greedily: each time the set that covers the most pairs not
    yet covered (ties: the first in the sets' order), until every pair is covered. The
    display is small, not always the smallest. Returns None when there are more than
    ``max_groups`` maximal sets (then no display is small)."""
    S = np.array(significant, dtype=bool)
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"significant must be a square matrix, got shape {S.shape}")
    if not np.array_equal(S, S.T):
        raise ValueError("significant must be symmetric")
    np.fill_diagonal(S, False)
    G = _split_groups(S, max_groups)
    if G is None:
        return None
    cliques = G.astype(np.int64)
    uncovered = (~S).astype(np.int64)  # with the diagonal: every run is covered too
    chosen = []
    while uncovered.any():
        k = int(np.argmax(((cliques @ uncovered) * cliques).sum(axis=1)))
        chosen.append(k)
        uncovered[np.ix_(G[k], G[k])] = 0
    out = G[chosen]
    first = out.argmax(axis=1)
    last = out.shape[1] - 1 - out[:, ::-1].argmax(axis=1)
    return out[np.lexsort((last, first))]
