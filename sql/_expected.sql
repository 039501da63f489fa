{#- Tie policy `expected` (SPEC section 2, "Ties"): the mean of a measure over every ordering
    of each tie, every ordering equally likely, computed exactly (McSherry & Najork, ECIR 2008),
    never by sampling.

  rows(P, sel, thresholds, gainsets, rerank): a row per position of every tie that holds a
  judged document (a document alone is a tie of one), for the runs in `sel` of collection
  P.collection under qrels P.qrels, ranked afresh first with `rerank`. A tie is the documents
  of a ranking that its order does not tell apart (_ranking.sql's tie_value); it fills ranks
  a..a+n-1, in any order. Columns:
    run_id, topic, rank   the position i
    x_n, x_j              the tie's size n and the position's place in it, j = i - a + 1
    x_nj, x_judged        the tie's judged documents; whether the stored document at i is judged
    per threshold t (key k): x_r_k, x_q_k  the tie's documents of grade >= t, and its judged
                          ones below t; x_c0_k, x_nn0_k  the same counts over the ranks above
                          the tie
    per gain map g (key k): x_g_k  the sum of the tie's gains
  A measure's expected_aggs(m) (sql/evaluate.sql) aggregates the expectations below over
  these rows; its value(m), or expected_value(m), turns them into the score. Every tie's
  ordering is independent of the others', and each expectation is over the orderings of the
  position's own tie.
-#}
{% import '_dialect.sql' as d %}
{% import '_ranking.sql' as rk %}
{% import '_base.sql' as b %}
{% macro rows(P, sel, thresholds, gainsets, rerank=False) -%}
{% set chosen = 'r.collection = ' ~ P.collection ~ ' AND r.run_id IN (SELECT run_id FROM ' ~ sel ~ ')' %}
WITH x_all AS (
    -- every document of the chosen rankings, with its tie and grade (NULL: unjudged)
    SELECT r.run_id, r.topic, r.rank, j.rel AS grade,
           {{ rk.tie_value("coalesce(l.ranking_policy, 'trec_eval')", 'r') | indent(11) }} AS tie
    FROM {{ b.reranked_runs(chosen) if rerank else 'runs' }} AS r
    LEFT JOIN run_loads AS l ON l.collection = r.collection AND l.run_id = r.run_id
    LEFT JOIN (SELECT qj.topic, qj.docno, qj.rel FROM qrels AS qj
               WHERE qj.qrels = {{ P.qrels }} AND qj.rel >= 0) AS j
      ON j.topic = r.topic AND j.docno = r.docno
    WHERE {{ chosen }}
)
SELECT z.run_id, z.topic, z.rank, z.x_n, z.rank - z.x_a + 1 AS x_j, z.x_nj, z.x_judged
{% for t in thresholds %}
     , z.x_r_{{ t.key }}, z.x_q_{{ t.key }}
     , sum(CASE WHEN z.rank = z.x_a THEN z.x_r_{{ t.key }} ELSE 0 END) OVER above - z.x_r_{{ t.key }} AS x_c0_{{ t.key }}
     , sum(CASE WHEN z.rank = z.x_a THEN z.x_q_{{ t.key }} ELSE 0 END) OVER above - z.x_q_{{ t.key }} AS x_nn0_{{ t.key }}
{% endfor %}
{% for g in gainsets %}
     , z.x_g_{{ g.key }}
{% endfor %}
FROM (SELECT y.run_id, y.topic, y.rank, y.grade, CASE WHEN y.grade IS NULL THEN 0 ELSE 1 END AS x_judged,
             min(y.rank) OVER tie AS x_a, count(*) OVER tie AS x_n, count(y.grade) OVER tie AS x_nj
{% for t in thresholds %}
           , count(*) FILTER (WHERE y.grade >= {{ t.value }}) OVER tie AS x_r_{{ t.key }}
           , count(*) FILTER (WHERE y.grade < {{ t.value }}) OVER tie AS x_q_{{ t.key }}
{% endfor %}
{% for g in gainsets %}
           , coalesce(sum(CASE WHEN y.grade IS NOT NULL THEN {{ g.expr }} END) OVER tie, 0) AS x_g_{{ g.key }}
{% endfor %}
      -- only the ties holding a judged document: the others add nothing to any measure
      FROM x_all AS y
      WHERE (y.run_id, y.topic, y.tie) IN (SELECT run_id, topic, tie FROM x_all WHERE grade IS NOT NULL)
      WINDOW tie AS (PARTITION BY y.run_id, y.topic, y.tie)) AS z
-- the counts over the ties above: each tie's counts, on its first row, summed down the ranking
WINDOW above AS (PARTITION BY z.run_id, z.topic ORDER BY z.rank ROWS UNBOUNDED PRECEDING)
{%- endmacro %}

{# ---- Expectations at a position i (place j in a tie of n with r relevant, c0 relevant above
   it), under measure m's threshold and gains. #}

{# E[rel_i] = r / n: every document of the tie is equally likely at i. #}
{% macro rel(m) -%}
{{ d.div('x_r_' ~ m.tkey, 'x_n') }}
{%- endmacro %}

{# E[g_i]: the tie's mean gain. #}
{% macro gain(m) -%}
{{ d.div('x_g_' ~ m.gkey, 'x_n') }}
{%- endmacro %}

{# E[judged_i]: the tie's judged fraction. #}
{% macro judged() -%}
{{ d.div('x_nj', 'x_n') }}
{%- endmacro %}

{# E[rel_i * C_i], C_i the relevant documents at ranks <= i: given a relevant document at i,
   the other r - 1 of the tie fill its other n - 1 places uniformly, so j - 1 places above i
   hold (j - 1)(r - 1)/(n - 1) of them on average: (r/n)(c0 + 1 + (j - 1)(r - 1)/(n - 1)). #}
{% macro rel_count(m) -%}
{% set r, c0 = 'x_r_' ~ m.tkey, 'x_c0_' ~ m.tkey %}
CASE WHEN x_n = 1 THEN {{ r }} * ({{ c0 }} + 1)
     ELSE {{ d.div(r, 'x_n') }} * ({{ c0 }} + 1 + {{ d.div('(x_j - 1) * (' ~ r ~ ' - 1)', 'x_n - 1') }}) END
{%- endmacro %}

{# P(the first relevant document of the ranking is at i): 0 unless the tie is the first
   holding a relevant document (c0 = 0, r > 0); then the tie's first relevant place is j
   with probability C(n - j, r - 1) / C(n, r) (the other r - 1 in the n - j places below). #}
{% macro first(m) -%}
{% set r, c0 = 'x_r_' ~ m.tkey, 'x_c0_' ~ m.tkey %}
CASE WHEN {{ c0 }} = 0 AND {{ r }} > 0 AND x_n - x_j >= {{ r }} - 1
     THEN exp(lgamma(x_n - x_j + 1) - lgamma({{ r }}) - lgamma(x_n - x_j - {{ r }} + 2)
              - lgamma(x_n + 1) + lgamma({{ r }} + 1) + lgamma(x_n - {{ r }} + 1))
     ELSE 0 END
{%- endmacro %}

{# Per tie, on its first place (0 elsewhere): E[sum over its relevant documents of
   min(c_nonrel, R)], c_nonrel the judged non-relevant documents above one. Only the
   document's place among the tie's q judged non-relevant ones matters, uniform on 0..q, so
   each relevant document adds (1/(q + 1)) sum_{x=0..q} min(nn0 + x, R) = (s (nn0) + s (s - 1)/2
   + (q + 1 - s) R) / (q + 1), s = the x with nn0 + x < R: min(max(R - nn0, 0), q + 1). Exact
   for the whole ranking only (no cut-off). #}
{% macro rel_min_nonrel(m) -%}
{% set r, q, nn0 = 'x_r_' ~ m.tkey, 'x_q_' ~ m.tkey, 'x_nn0_' ~ m.tkey %}
{% set s = 'least(greatest(' ~ m.R ~ ' - ' ~ nn0 ~ ', 0), ' ~ q ~ ' + 1)' %}
CASE WHEN x_j = 1 THEN {{ r }} * {{ d.div(s ~ ' * ' ~ nn0 ~ ' + ' ~ s ~ ' * (' ~ s ~ ' - 1) / 2 + (' ~ q ~ ' + 1 - ' ~ s ~ ') * ' ~ m.R, q ~ ' + 1') }} ELSE 0 END
{%- endmacro %}

{# Per tie, on its first place (0 elsewhere): its relevant documents, r. #}
{% macro tie_rel(m) -%}
CASE WHEN x_j = 1 THEN x_r_{{ m.tkey }} ELSE 0 END
{%- endmacro %}
