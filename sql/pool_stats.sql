{#- The pool statistics of `irw pool stats` (irwarehouse.engine.pools.stats), for every engine:
    macros over P, the SQL of the bound parameters (q: the qrels; runs: the run set; depth:
    the pool depth; a, b: the labels of the judged measures). -#}
{% import '_dialect.sql' as d %}

{% macro args(P) %}{{ P.q }}, {{ P.runs }}, {{ P.depth }}{% endmacro %}

{% macro topics(P) -%}
SELECT * FROM pool_topic_stats({{ args(P) }}) ORDER BY topic
{%- endmacro %}

{# The multiplicity bands, with a `total` row. #}
{% macro multiplicity(P) -%}
SELECT CASE WHEN grouping(band) = 1 THEN 'total' ELSE band END AS band,
       CAST(sum(documents) AS BIGINT) AS documents, CAST(sum(judged) AS BIGINT) AS judged,
       CAST(sum(relevant) AS BIGINT) AS relevant, {{ d.div('sum(relevant)', 'sum(documents)') }} AS fraction_relevant
FROM multiplicity_bands({{ args(P) }})
GROUP BY GROUPING SETS ((band, band_order), ()) ORDER BY band_order NULLS LAST
{%- endmacro %}

{% macro teams(P) -%}
SELECT * FROM team_unique_stats({{ args(P) }}) ORDER BY team
{%- endmacro %}

{% macro unique(P) -%}
SELECT team, topic, docno, rel FROM unique_contributions({{ args(P) }}) ORDER BY team, topic, docno
{%- endmacro %}

{# Per run and topic, the first unjudged rank and Judged@depth, from the scores of the
   measures P.a (FirstUnjudged) and P.b (Judged@depth) kept as irw_judged. #}
{% macro judged(P) -%}
SELECT run_id, topic, max(CASE WHEN measure = {{ P.a }} THEN value END) AS first_unjudged,
       max(CASE WHEN measure = {{ P.b }} THEN value END) AS judged_at_depth
FROM irw_judged GROUP BY run_id, topic ORDER BY run_id, topic
{%- endmacro %}

{% macro collection(P) -%}
SELECT * FROM qrels_stats WHERE qrels = {{ P.q }}
{%- endmacro %}

{# The qrels_stats row of a qrels (bound by position), its counts as integers. #}
{% macro qrels_row() -%}
SELECT qrels, topics, mean_judged, mean_relevant, CAST(judged AS BIGINT) AS judged,
       CAST(relevant AS BIGINT) AS relevant
FROM qrels_stats WHERE qrels = ?
{%- endmacro %}
