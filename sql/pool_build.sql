{#- Building derived qrels (irwarehouse.engine.pools): the statements around the selection of
    sql/derived_qrels.sql. P: the SQL of the bound inputs (parent, runs, depth). -#}

{# Every team's unique contributions, computed once for all the leave-out qrels of a build. #}
{% macro unique(P) -%}
SELECT * FROM unique_contributions({{ P.parent }}, {{ P.runs }}, {{ P.depth }})
{%- endmacro %}

{# Store the judgments `select` chooses as qrels $name. #}
{% macro insert(select) -%}
INSERT INTO qrels SELECT $name, topic, docno, rel FROM ({{ select }}) AS chosen
{%- endmacro %}

{# Judged and relevant documents of a qrels (bound by position). #}
{% macro counts() -%}
SELECT count(*) FILTER (WHERE rel >= 0), count(*) FILTER (WHERE rel >= 1) FROM qrels WHERE qrels = ?
{%- endmacro %}
