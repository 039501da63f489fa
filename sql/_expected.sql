{#- Tie policy `expected` (SPEC section 2, "Ties"): the mean of a measure over every ordering
    of each tie, every ordering equally likely, computed exactly (McSherry & Najork, ECIR 2008),
    never by sampling.

  rows(P, sel, thresholds, gainsets, ties): CTEs ending in `x_alone` and `x_rows`, from the
  base rows `brows` (judged documents, with the running counts of every threshold) of the
  runs in `sel`. `x_alone`: each judged document alone in its tie, the base row it is: its
  rank, and the counts above it, are the same in every ordering of the ties, so its
  contribution to a measure's aggregates aggs(m) is its own. `x_rows`: a row per position
  whose expectation can differ from 0 of each tie (two or more documents of a ranking that
  its order does not tell apart: _ranking.sql's tie_value, among the rankings of `runs`,
  ranked afresh first with `ties.rerank`) that holds a judged document -- the ties as the
  materialized base records them (irw_base.tie_a, tie_n) when `ties.cached`, else found in
  the runs; a tie holding no relevant document (at any threshold) and no gain has its first
  place only, unless `every_position` (a measure reads the judged fraction, judged(), the
  one expectation not 0 at its other places). A tie fills ranks
  a..a+n-1 in any order. Columns:
    run_id, topic, rank   the position i
    x_n, x_j              the tie's size n (1 alone) and the position's place in it, j = i - a + 1
    x_nj, x_judged        the tie's judged documents; x_judged sums to the ranking's judged
                          documents (the tie's on its first place)
    per threshold t (key k): x_r_k, x_q_k  the tie's documents of grade >= t, and its judged
                          ones below t; x_c0_k, x_nn0_k  the same counts over the ranks above
                          the tie
    per gain map g (key k): x_g_k  the sum of the tie's gains
    per measure m with tie_aggs(m) (`tied`): its aggregates over the tie's judged documents
  `running`: the measures whose running(m) windows (over each ranking's judged documents in
  the stored order) the rows carry, as m.run; a tie's rows carry them through tie_aggs(m).
  `tied`: the measures with tie_aggs(m), whose tie_holds(m) says when a tie holding no
  relevant document at the thresholds still needs its every place.
  A measure's expected_aggs(m) (sql/evaluate.sql) aggregates the expectations below over
  `x_rows`, its aggs(m) over `x_alone`; the engine adds the two, and value(m) turns the sums
  into the score. Every tie's
  ordering is independent of the others', and each expectation is over the orderings of the
  position's own tie.
-#}
{% import '_dialect.sql' as d %}
{% import '_ranking.sql' as rk %}
{% import '_base.sql' as b %}
{# The ties of two or more documents of the rankings of `runs` (ranked afresh with `rerank`)
   chosen by `where` (on their rows `r`): (run_id, topic, a, n), their first rank and size. #}
{% macro tie_extents(where, rerank=False) -%}
SELECT r.run_id, r.topic, min(r.rank) AS a, count(*) AS n
FROM {{ b.reranked_runs(where) if rerank else 'runs' }} AS r
LEFT JOIN run_loads AS l ON l.collection = r.collection AND l.run_id = r.run_id
WHERE {{ where }}
GROUP BY r.run_id, r.topic, {{ rk.tie_value("coalesce(l.ranking_policy, 'trec_eval')", 'r') }}
HAVING count(*) > 1
{%- endmacro %}

{# Each judged document of the base of qrels `q` (an SQL expression) in a tie, with the tie's
   first rank and size: (run_id, topic, rank, a, n). #}
{% macro base_ties(q) -%}
SELECT jb.run_id, jb.topic, jb.rank, t.a, t.n
FROM irw_base AS jb ASOF JOIN ({{ tie_extents('r.collection = collection_of(' ~ q ~ ')') }}) AS t
  ON t.run_id = jb.run_id AND t.topic = jb.topic AND jb.rank >= t.a
WHERE jb.qrels = {{ q }} AND jb.rank < t.a + t.n
{%- endmacro %}

{% macro rows(P, sel, thresholds, gainsets, ties, every_position=false, running=[], tied=[]) -%}
{% set chosen = 'r.collection = ' ~ P.collection ~ ' AND r.run_id IN (SELECT run_id FROM ' ~ sel ~ ')' %}
{% set source = 'brows' %}
{% if running %}
x_run AS (
    -- the measures' running(m) windows over each ranking's judged documents, in its stored
    -- order: at a document alone in its tie, and over the documents above a tie, they are
    -- the same in every ordering of the ties
    SELECT brows.*
{% for m in running %}
         , {{ m.module.running(m) }} AS {{ m.run }}
{% endfor %}
    FROM brows
),
{% set source = 'x_run' %}
{% endif %}
{% if ties.cached %}
x_in AS (
    -- each judged document with the tie it is in (x_a NULL: alone), as the base records it
    SELECT jb.*, jb.tie_a AS x_a, jb.tie_n AS x_tn FROM {{ source }} AS jb
),
{% else %}
x_ties AS (
    {{ tie_extents(chosen, ties.rerank) | indent(4) }}
),
x_in AS (
    -- each judged document with the tie it is in (x_a NULL: alone)
    SELECT jb.*, CASE WHEN jb.rank < t.a + t.n THEN t.a END AS x_a, CASE WHEN jb.rank < t.a + t.n THEN t.n END AS x_tn
    FROM {{ source }} AS jb ASOF LEFT JOIN x_ties AS t
      ON t.run_id = jb.run_id AND t.topic = jb.topic AND jb.rank >= t.a
),
{% endif %}
x_tied AS (
    -- per tie holding a judged document: its counts, and those above it (the running counts
    -- of its first judged document, less that document's own)
    SELECT run_id, topic, x_a, x_tn, count(*) AS x_nj
{% for t in thresholds %}
         , count(*) FILTER (WHERE grade >= {{ t.value }}) AS x_r_{{ t.key }}
         , count(*) FILTER (WHERE grade < {{ t.value }}) AS x_q_{{ t.key }}
         , min({{ t.c_rel }} - CASE WHEN grade >= {{ t.value }} THEN 1 ELSE 0 END) AS x_c0_{{ t.key }}
         , min({{ t.c_nonrel }} - CASE WHEN grade < {{ t.value }} THEN 1 ELSE 0 END) AS x_nn0_{{ t.key }}
{% endfor %}
{% for g in gainsets %}
         , {{ d.fsum() }}({{ g.expr }}) AS x_g_{{ g.key }}
{% endfor %}
{% for m in tied %}
         , {{ m.module.tie_aggs(m) }}
{% endfor %}
    FROM x_in WHERE x_a IS NOT NULL
    GROUP BY run_id, topic, x_a, x_tn
),
x_alone AS (
    SELECT * FROM x_in WHERE x_a IS NULL
),
x_rows AS (
    SELECT x_tied.*, {{ d.cast('x_a + p.j - 1', 'INTEGER') }} AS rank, x_tn AS x_n, p.j AS x_j,
           CASE WHEN p.j = 1 THEN x_nj ELSE 0 END AS x_judged
{% set held = [] %}{% for t in thresholds %}{% set _ = held.append('x_r_' ~ t.key ~ ' > 0') %}{% endfor %}{% for g in gainsets %}{% set _ = held.append('x_g_' ~ g.key ~ ' <> 0') %}{% endfor %}{% for m in tied %}{% set _ = held.append('(' ~ m.module.tie_holds(m) ~ ')') %}{% endfor %}
    -- a tie holding no relevant document and no gain adds 0 at each of its places to every
    -- expectation but the judged fraction's: its first place alone, unless `every_position`
    FROM x_tied, LATERAL (SELECT unnest(range(1, {{ 'x_tn' if every_position or not held else 'CASE WHEN ' ~ held | join(' OR ') ~ ' THEN x_tn ELSE 1 END' }} + 1)) AS j) AS p
)
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
{{ d.div(r, 'x_n') }} * ({{ c0 }} + 1 + {{ d.div('(x_j - 1) * (' ~ r ~ ' - 1)', 'x_n - 1') }})
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

{# The elementary symmetric polynomials e_0..e_r of the numbers of the list `values` (SQL; r
   its length): the coefficients of prod (1 + y t), [1] for an empty list. #}
{% macro symmetric(values) -%}
CASE WHEN len({{ values }}) = 0 THEN [1.0::DOUBLE]
     ELSE list_reduce(list_transform({{ values }}, lambda y: [1.0::DOUBLE, y::DOUBLE]),
                      lambda p, q: list_transform(range(len(p) + 1), lambda k: coalesce(p[k + 1], 0) + q[2] * coalesce(p[k], 0)))
END
{%- endmacro %}

{# E[x_i prod_{documents above i in its tie} y], at place j of a tie of n whose r documents
   with x > 0 have y = 1 - x (e: symmetric(those y's), e_0..e_r) and whose others x = 0,
   y = 1: the document at i is any of the n, and the j - 1 above it a uniform subset of the
   others, so with u = n - r it is (1/n) sum_{b=0..r-1} C(u, j-1-b) / C(n-1, j-1)
   ((r - b) e_b - (b + 1) e_{b+1}) (sum_d x_d e_b(y without d) = (r - b) e_b - (b + 1) e_{b+1}). #}
{% macro weighted_before(e) -%}
{% set r = '(len(' ~ e ~ ') - 1)' %}
coalesce(list_sum(list_transform(range(0, {{ r }}), lambda b:
    CASE WHEN x_j - 1 - b >= 0 AND x_j - 1 - b <= x_n - {{ r }}
         THEN exp(lgamma(x_n - {{ r }} + 1) - lgamma(x_j - b) - lgamma(x_n - {{ r }} - x_j + b + 2)
                  - lgamma(x_n) + lgamma(x_j) + lgamma(x_n - x_j + 1))
              * (({{ r }} - b) * {{ e }}[b + 1] - (b + 1) * {{ e }}[b + 2])
         ELSE 0 END)), 0) / x_n
{%- endmacro %}
