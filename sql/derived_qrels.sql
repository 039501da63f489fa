{#- The judgments a derived qrels keeps (SPEC section 3): always a subset of the parent's.
  select(kind, P): (topic, docno, rel) of one derived qrels of `kind`, P the SQL expressions
  of its inputs (bound parameters):
    P.parent  the parent qrels       P.runs   the run set S (a list of run ids)
    P.depth   the pool depth d       P.teams  the teams (a list)
  `unique`: a relation holding unique_contributions(parent, runs, depth), computed once
  for all the leave-out qrels of one build. -#}
{% import '_dialect.sql' as d %}
{% macro select(kind, P, unique='irw_unique') -%}
{% if kind in ('depth', 'shallow') %}
SELECT topic, docno, rel FROM pooled_qrels({{ P.parent }}, {{ P.runs }}, {{ P.depth }})
{% elif kind == 'leave-out' %}
SELECT j.topic, j.docno, j.rel FROM qrels j
WHERE j.qrels = {{ P.parent }} AND NOT EXISTS (
    SELECT 1 FROM {{ unique }} u
    WHERE {{ d.list_contains(P.teams, 'u.team') }} AND u.topic = j.topic AND u.docno = j.docno)
{% elif kind == 'take' %}
SELECT j.topic, j.docno, j.rel FROM qrels j
JOIN (SELECT DISTINCT topic, docno FROM team_contributions({{ P.parent }}, {{ P.runs }}, {{ P.depth }})
      WHERE {{ d.list_contains(P.teams, 'team') }}) AS c
  ON c.topic = j.topic AND c.docno = j.docno
WHERE j.qrels = {{ P.parent }}
{% endif %}
{%- endmacro %}
