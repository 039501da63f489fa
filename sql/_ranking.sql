{#- The ranking policies (SPEC section 1), defined once: the loader ranks staged lines with
    them, and the engine re-ranks runs with them when `runs` was changed outside irw.

  order_by(policy, column): the ORDER BY list that ranks the documents of one (run, topic).
    policy: a policy name (trec_eval | trec_eval_10 | given | score_then_rank) known when
    rendering, or None: then `column` is an SQL expression naming each row's policy, and the list orders
    every run under its own policy (a run's rows all carry the same policy).
  trec_eval 9 (and pytrec_eval) keeps scores as 32-bit floats, so scores that differ only
  beyond float precision tie there (and are then ordered by docno); the trec_eval policy
  compares them the same way. trec_eval 10.0 keeps them as doubles: policy trec_eval_10.
-#}
{% import '_dialect.sql' as d %}
{# Each policy as its sort keys: (column, type it is compared as or none, direction). #}
{% set POLICY_KEYS = {
    'trec_eval': [('score', 'REAL', 'DESC'), ('docno', none, 'DESC')],
    'trec_eval_10': [('score', none, 'DESC'), ('docno', none, 'DESC')],
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
CASE WHEN {{ column }} = 'trec_eval' THEN {{ d.cast(d.cast('score', 'REAL'), 'DOUBLE') }} ELSE score END DESC,
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
