{# Bpref = (1/R) * sum over relevant retrieved i of 1 - min(n_i, R) / min(R, N), n_i the
   judged non-relevant documents ranked above i; a term is 1 when min(R, N) = 0. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
{{ d.fsum() }}(CASE WHEN least({{ m.R }}, {{ m.N }}) = 0 THEN 1.0
         ELSE 1.0 - {{ d.div('least(' ~ m.c_nonrel ~ ', ' ~ m.R ~ ')', 'least(' ~ m.R ~ ', ' ~ m.N ~ ')') }} END)
    FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.R }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_s, 0)', m.R) }} ELSE 0 END
{%- endmacro %}
{# Expected (the whole ranking only): each tie's relevant documents less their expected
   min(n_i, R) / min(R, N) (_expected.sql's rel_min_nonrel). #}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}(CASE WHEN least({{ m.R }}, {{ m.N }}) = 0 THEN {{ ex.tie_rel(m) }}
         ELSE {{ ex.tie_rel(m) }} - {{ d.div(ex.rel_min_nonrel(m), 'least(' ~ m.R ~ ', ' ~ m.N ~ ')') }} END) AS {{ m.id }}_s
{%- endmacro %}
{% set expected_cutoff = false %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql), binary threshold 1, full rankings.
  For a qrels Q' of root Q, with R', N' its counts, the sum of the terms over the kept
  relevant rows is K - Z / min(R', N') (K when min(R', N') = 0): K the kept relevant rows, Z
  = sum of min(n'_i, R') over them, n'_i = n_i - j_i where n_i counts the root's judged
  non-relevant rows above i and j_i the removed ones. The removed non-relevant rows e_1 <
  e_2 < ... cut a ranking into segments; the relevant rows of segment j (between e_j and
  e_(j+1)) are those numbered lo < idx <= hi in rank order (lo: the relevant rows above e_j),
  all with j_i = j, and n_i grows with idx. Those with n_i < R' + j are the first s of them, s
  the relevant rows above the root's (R' + j)-th non-relevant row; so segment j adds
  (cn[s] - cn[lo]) - j (s - lo) + R' (hi - s), cn[x] the sum of n over the first x relevant
  rows. The removed relevant rows are then taken out one by one. All integers: exact. -#}
{% set many = 'delta' %}
{% macro many_aggs(m) -%}
WITH bp_rel AS (
    -- the root's relevant rows within the cut-off: number idx, cumulative n
    SELECT rid, c_rel AS idx, {{ d.running_sum('crank - c_rel', by='rid') }} AS cn,
           -- the non-relevant rows above (n), with idx, as one number that grows down the
           -- ranking, for bp_split's ASOF join
           (crank - c_rel) * {{ 4294967296 | num }} + c_rel AS n_idx
    FROM rbase WHERE grade >= 1 AND {{ m.within }}
),
bp_q AS (
    SELECT ts.qid, ts.rid, bt.nrel,
           coalesce(t.{{ m.R }}, 0) AS rq, least(coalesce(t.{{ m.R }}, 0), coalesce(t.{{ m.N }}, 0)) AS mq
    FROM topicset AS ts
    JOIN (SELECT rid, max(idx) AS nrel FROM bp_rel GROUP BY rid) AS bt ON bt.rid = ts.rid
    LEFT JOIN tstats AS t ON t.qid = ts.qid AND t.topic = ts.topic
),
bp_cut AS (
    -- rank 0 and the removed rows above the ranking's last relevant row within the cut-off
    -- start segments; j: the removed non-relevant rows up to the row, lo: the relevant rows
    -- up to it, hi: the relevant rows up to the next start
    SELECT qid, rid, grade, n, lo, nrel, rq,
           {{ d.running_count('grade < 1', by='qid, rid') }} AS j,
           least(coalesce(lead(lo) OVER (PARTITION BY qid, rid ORDER BY rank), nrel), nrel) AS hi
    FROM (SELECT qid, rid, 0 AS rank, 1 AS grade, 0 AS n, 0 AS lo, nrel, rq FROM bp_q
          UNION ALL
          SELECT r.qid, r.rid, r.rank, r.grade, r.crank - r.c_rel AS n, r.c_rel AS lo, q.nrel, q.rq
          FROM rem_rows AS r JOIN bp_q AS q ON q.qid = r.qid AND q.rid = r.rid
          WHERE r.c_rel < q.nrel OR (r.grade >= 1 AND r.c_rel = q.nrel)) AS cuts
),
bp_seg AS (
    SELECT qid, rid, rq, j, lo, hi FROM bp_cut WHERE hi > lo
),
bp_split AS (
    -- s: the relevant rows above the root's (R' + j)-th non-relevant row (all if none), i.e.
    -- those with fewer than R' + j non-relevant rows above: the last such row's idx, found
    -- by an ASOF join among the relevant rows (not an equality join with every
    -- non-relevant row of the rankings); clamped to the segment
    SELECT g.qid, g.rid, g.rq, g.j, g.lo, g.hi, least(greatest(coalesce(r.idx, 0), g.lo), g.hi) AS s
    FROM bp_seg AS g
    ASOF LEFT JOIN bp_rel AS r ON r.rid = g.rid AND (g.rq + g.j) * {{ 4294967296 | num }} > r.n_idx
),
bp_z AS (
    SELECT g.qid, g.rid,
           sum(coalesce(cs.cn, 0) - coalesce(cl.cn, 0) - g.j * (g.s - g.lo) + g.rq * (g.hi - g.s)) AS z
    FROM bp_split AS g
    LEFT JOIN bp_rel AS cs ON cs.rid = g.rid AND cs.idx = g.s
    LEFT JOIN bp_rel AS cl ON cl.rid = g.rid AND cl.idx = g.lo
    GROUP BY g.qid, g.rid
),
bp_out AS (
    -- the removed relevant rows within the cut-off: their number and their terms of Z
    SELECT qid, rid, count(*) AS k, sum(least(n - j, rq)) AS z
    FROM bp_cut WHERE grade >= 1 AND lo >= 1 AND lo <= nrel
    GROUP BY qid, rid
)
SELECT q.qid, q.rid,
       CASE WHEN q.mq = 0 THEN q.nrel - coalesce(o.k, 0)
            ELSE {{ d.div('(q.nrel - coalesce(o.k, 0)) * q.mq - (coalesce(z.z, 0) - coalesce(o.z, 0))', 'q.mq') }} END
       AS {{ m.id }}_s
FROM bp_q AS q
LEFT JOIN bp_z AS z ON z.qid = q.qid AND z.rid = q.rid
LEFT JOIN bp_out AS o ON o.qid = q.qid AND o.rid = q.rid
{%- endmacro %}
