{#- The ranking policies (SPEC section 1), defined once: the loader ranks staged lines with
    them, and the engine re-ranks runs with them when `runs` was changed outside irw.

  order_by(policy, column): the ORDER BY list that ranks the documents of one (run, topic).
    policy: a policy name (trec_eval | trec_eval_9 | given | score_then_rank) known when
    rendering, or None: then `column` is an SQL expression naming each row's policy, and the list orders
    every run under its own policy (a run's rows all carry the same policy).
  trec_eval (the default) is trec_eval 10.0's order: scores compared as doubles, at full
  precision. trec_eval_9 is the order of trec_eval 9 and earlier (the 1999 official TREC-8
  results) and of pytrec_eval: scores kept as 32-bit floats, so scores that differ only
  beyond float precision tie there (and are then ordered by docno). The name trec_eval_10 is
  taken as trec_eval (irwarehouse.engine.loading.runs.ORDER_ALIASES) and never stored.
-#}
{% import '_dialect.sql' as d %}
{# Each policy as its sort keys: (column, type it is compared as or none, direction). #}
{% set POLICY_KEYS = {
    'trec_eval': [('score', none, 'DESC'), ('docno', none, 'DESC')],
    'trec_eval_9': [('score', 'REAL', 'DESC'), ('docno', none, 'DESC')],
    'given': [('given_rank', none, 'ASC'), ('score', none, 'DESC'), ('docno', none, 'DESC')],
    'score_then_rank': [('score', none, 'DESC'), ('given_rank', none, 'ASC'), ('docno', none, 'ASC')]} %}

{# A sort key's SQL expression for the row named `r` ('' for an unnamed row). #}
{% macro _key(key, r='') -%}
{{ d.cast(r ~ key[0], key[1]) if key[1] else r ~ key[0] }}
{%- endmacro %}

{% macro order_by(policy, column=None) -%}
{% if policy in POLICY_KEYS %}
{% for key in POLICY_KEYS[policy] %}{{ _key(key) }} {{ key[2] }}{{ ", " if not loop.last }}{% endfor %}
{%- else %}
CASE WHEN {{ column }} = 'given' THEN given_rank END ASC,
CASE WHEN {{ column }} = 'trec_eval_9' THEN {{ d.cast(d.cast('score', 'REAL'), 'DOUBLE') }} ELSE score END DESC,
CASE WHEN {{ column }} = 'score_then_rank' THEN given_rank END ASC,
CASE WHEN {{ column }} = 'score_then_rank' THEN docno END ASC,
CASE WHEN {{ column }} <> 'score_then_rank' THEN docno END DESC
{%- endif %}
{%- endmacro %}

{# The loader's ranked rows (run_id, topic, docno, rank, score, given_rank) of the staged
   lines `rows` (a relation, with a condition `where`) under `policy`. #}
{% macro ranked(rows, policy, where='TRUE') -%}
SELECT run_id, topic, docno,
       {{ d.cast('row_number() OVER (PARTITION BY run_id, topic ORDER BY ' ~ order_by(policy) ~ ')', 'INTEGER') }} AS rank,
       score, given_rank
FROM {{ rows }} WHERE {{ where }}
{%- endmacro %}

{# The condition that row `a` is ranked above row `b` of the same (run, topic) under
   `policy` (a name): the order of order_by(policy), as a comparison. #}
{% macro above(policy, a, b) -%}
{% set keys = POLICY_KEYS[policy] %}
{% for i in range(keys | length) %}({% for k in keys[:i] %}{{ _key(k, a ~ '.') }} = {{ _key(k, b ~ '.') }} AND {% endfor %}{{ _key(keys[i], a ~ '.') }} {{ '>' if keys[i][2] == 'DESC' else '<' }} {{ _key(keys[i], b ~ '.') }}){{ " OR " if not loop.last }}{% endfor %}
{%- endmacro %}

{# The same rows as ranked(rows, policy, where) restricted to those of judged documents
   (`judged`: a relation of (topic, docno)), each rank counted as 1 + the rows of its (run,
   topic) ranked above it instead of by sorting every ranking: cheaper when the rankings
   hold few judged documents (MS MARCO's one or two in 1,000). The documents of a (run, topic)
   are distinct (the loader checks it first), so the ranks are those of ranked(). #}
{% macro ranked_by_count(rows, judged, policy, where='TRUE') -%}
SELECT j.run_id, j.topic, j.docno, {{ d.cast('1 + count(*) FILTER (WHERE ' ~ above(policy, 'o', 'j') ~ ')', 'INTEGER') }} AS rank,
       j.score, j.given_rank
FROM (SELECT * FROM {{ rows }} WHERE {{ where }} AND (topic, docno) IN (SELECT topic, docno FROM {{ judged }})) AS j
JOIN (SELECT * FROM {{ rows }} WHERE {{ where }}) AS o ON o.run_id = j.run_id AND o.topic = j.topic
GROUP BY j.run_id, j.topic, j.docno, j.score, j.given_rank
{%- endmacro %}

{# ---------------------------------------------------------------- tie policies
   A tie is the documents of one ranking that its order does not tell apart by score: equal
   scores (as 32-bit floats under trec_eval_9), equal given ranks under `given`. They hold
   consecutive ranks a..b, which the ranking's order fills by docno (or given rank); a tie
   policy (irwarehouse.options.TIE_POLICIES) fills them otherwise, at evaluation time, by
   its sort keys `within` ((column, direction) pairs over the rows' columns given_rank,
   gain: the document's gain under the qrels being evaluated, 0 unless judged relevant),
   the stored rank last. #}

{# The value that ties the rows (named `r`) of a ranking under its order (`policy`: an SQL
   expression naming the run's order). #}
{% macro tie_value(policy, r) -%}
CASE WHEN {{ policy }} = 'trec_eval_9' THEN {{ d.cast(d.cast(r ~ '.score', 'REAL'), 'DOUBLE') }}
     WHEN {{ policy }} = 'given' THEN {{ d.cast(r ~ '.given_rank', 'DOUBLE') }} ELSE {{ r }}.score END
{%- endmacro %}

{# The rows (collection, run_id, topic, docno, score, given_rank, rank) of the rankings
   `rows` (a relation like runs) where `where` holds (on its rows `r`), each tie's ranks
   a..b given to its documents in the order of `within` under qrels `q` (an SQL
   expression). #}
{% macro tie_ranked(rows, within, q, where='TRUE') -%}
(SELECT t.collection, t.run_id, t.topic, t.docno, t.score, t.given_rank,
        {{ d.cast('min(t.rank) OVER (PARTITION BY t.collection, t.run_id, t.topic, t.tie) - 1
          + row_number() OVER (PARTITION BY t.collection, t.run_id, t.topic, t.tie
                               ORDER BY ' ~ within_keys(within, 't.') ~ 't.rank)', 'INTEGER') }} AS rank
 FROM (SELECT r.collection, r.run_id, r.topic, r.docno, r.score, r.given_rank, r.rank,
              {{ tie_value("coalesce(l.ranking_policy, 'trec_eval')", 'r') | indent(14) }} AS tie,
              coalesce(g.gain, 0) AS gain
       FROM {{ rows }} AS r
       LEFT JOIN run_loads AS l ON l.collection = r.collection AND l.run_id = r.run_id
       LEFT JOIN (SELECT qg.topic, qg.docno, CASE WHEN qg.rel >= 1 THEN qg.rel ELSE 0 END AS gain
                  FROM qrels AS qg WHERE qg.qrels = {{ q }} AND qg.rel >= 0) AS g
         ON g.topic = r.topic AND g.docno = r.docno
       WHERE {{ where }}) AS t)
{%- endmacro %}

{# The base rows (run_id, topic, rank, crank, grade, c_rel, cg: _base.sql's running_sums) of
   a tie policy ordering each tie by gain alone (`within`: [['gain', 'DESC' or 'ASC']]) --
   the ranks tie_ranked gives -- computed from a materialized base alone: `rows`, a relation
   of its rows with the tie each is in (tie_a, its first rank, and tie_n, its size; NULL:
   alone), as irw_base records them. The unjudged documents of a tie have gain 0 and keep
   their stored order among those of gain 0, so a judged document's new rank follows from
   the judged ones of its tie; with g its gain:
      by gain DESC: a + (judged of higher gain) + (judged of gain g above it)     if g > 0,
                    (documents of gain > 0) + rank - (those above it)             if g = 0;
      by gain ASC:  rank - (documents of gain > 0 above it)                       if g = 0,
                    a + n - (judged of gain >= g) + (judged of gain g above it)   if g > 0.
   The running sums change only within a tie: those above it (the smallest of each row's
   own less its own part) plus the tie's rows up to the row in the new order. #}
{% macro tie_ranked_base(rows, within) -%}
{% set desc = within[0][1] == 'DESC' %}
SELECT run_id, topic, rank, crank, grade, c_rel, cg FROM {{ rows }} AS alone WHERE tie_a IS NULL
UNION ALL
SELECT run_id, topic, rank,
       {{ d.cast('k0 + row_number() OVER (PARTITION BY run_id, topic, tie_a ORDER BY rank)', 'INTEGER') }} AS crank,
       grade,
       {{ d.cast('c0 + ' ~ d.running_count('grade >= 1', 'rank', 'run_id, topic, tie_a'), 'INTEGER') }} AS c_rel,
       g0 + {{ d.running_sum('g', 'rank', 'run_id, topic, tie_a') }} AS cg
FROM (SELECT run_id, topic, grade, g, tie_a, k0, c0, g0,
             {{ d.cast('CASE WHEN g > 0 THEN tie_a + ' ~ ('higher' if desc else 'tie_n - at_least') ~ ' + same_above
                       ELSE ' ~ ('n_pos + ' if desc else '') ~ 'rank - pos_above END', 'INTEGER') }} AS rank
      FROM (SELECT t.*,
                   rank() OVER (PARTITION BY run_id, topic, tie_a ORDER BY g DESC) - 1 AS higher,
                   count(*) OVER (PARTITION BY run_id, topic, tie_a ORDER BY g DESC
                                  RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS at_least,
                   row_number() OVER (PARTITION BY run_id, topic, tie_a, g ORDER BY rank) - 1 AS same_above,
                   sum(CASE WHEN g > 0 THEN 1 ELSE 0 END) OVER (PARTITION BY run_id, topic, tie_a) AS n_pos,
                   {{ d.running_count('g > 0', 'rank', 'run_id, topic, tie_a') }}
                       - CASE WHEN g > 0 THEN 1 ELSE 0 END AS pos_above,
                   min(crank - 1) OVER (PARTITION BY run_id, topic, tie_a) AS k0,
                   min(c_rel - CASE WHEN grade >= 1 THEN 1 ELSE 0 END) OVER (PARTITION BY run_id, topic, tie_a) AS c0,
                   min(cg - g) OVER (PARTITION BY run_id, topic, tie_a) AS g0
            FROM (SELECT x.*, CASE WHEN x.grade >= 1 THEN x.grade ELSE 0 END AS g
                  FROM {{ rows }} AS x WHERE x.tie_a IS NOT NULL) AS t) AS reranked) AS tied
{%- endmacro %}

{% macro within_keys(within, t) -%}
{% for column, direction in within %}{{ t }}{{ column }} {{ direction }}, {% endfor %}
{%- endmacro %}
