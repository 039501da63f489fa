{#- The ranking policies (SPEC section 1), defined once: the loader ranks staged lines with
    them, and the engine re-ranks runs with them when `runs` was changed outside irw.

  order_by(policy, column): the ORDER BY list that ranks the documents of one (run, topic).
    policy: a policy name (trec_eval | given | score_then_rank) known when rendering, or
    None: then `column` is an SQL expression naming each row's policy, and the list orders
    every run under its own policy (a run's rows all carry the same policy).
  trec_eval 9 (and pytrec_eval) keeps scores as 32-bit floats, so scores that differ only
  beyond float precision tie there (and are then ordered by docno); the trec_eval policy
  compares them the same way. trec_eval 10.0 keeps them as doubles: policy trec_eval_10.
-#}
{% import '_dialect.sql' as d %}
{% macro order_by(policy, column=None) -%}
{% if policy == 'trec_eval' %}
{{ d.cast('score', 'REAL') }} DESC, docno DESC
{%- elif policy == 'trec_eval_10' %}
score DESC, docno DESC
{%- elif policy == 'given' %}
given_rank ASC, score DESC, docno DESC
{%- elif policy == 'score_then_rank' %}
score DESC, given_rank ASC, docno ASC
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
