{#- Evaluating many qrels in one pass (irwarehouse.engine.many): the table the scores of every
    qrels gather in (irw_many_result, qi the qrels's position in $names), and reading it back
    in order. The passes themselves are sql/evaluate_many.sql. -#}

{% macro result_table() -%}
CREATE OR REPLACE TEMP TABLE irw_many_result (qi INTEGER, run_id VARCHAR, topic VARCHAR, measure VARCHAR,
                                              value DOUBLE)
{%- endmacro %}

{# A part of the pass over one root (judgments, removed), kept for the scores query. #}
{% macro keep(part, query) -%}
CREATE OR REPLACE TEMP TABLE irw_many_{{ part }} AS {{ query }}
{%- endmacro %}

{# The scores of the pass (qrels, run_id, topic, measure, value). #}
{% macro add_pass(query) -%}
INSERT INTO irw_many_result
SELECT n.qi, p.run_id, p.topic, p.measure, p.value FROM ({{ query }}) AS p
JOIN (SELECT unnest($names) AS qrels, generate_subscripts($names, 1) - 1 AS qi) AS n USING (qrels)
{%- endmacro %}

{# The qrels of the list `names` (an SQL list) numbered 1.. in name order (qid), with the
   qrels whose topics they take. #}
{% macro qrels_numbers(names) -%}
SELECT qi.qrels, qi.topic_qrels, row_number() OVER (ORDER BY qi.qrels) AS qid
FROM qrels_info AS qi WHERE list_contains({{ names }}, qi.qrels)
{%- endmacro %}

{# The qrels of `names` whose every judgment is the root's, with its grade (`judgments`: the
   pass's table of them, sql/evaluate_many.sql): their scores are complete. #}
{% macro subsets(names, judgments='irw_many_judgments') -%}
SELECT n.qrels, n.topic_qrels, n.qid FROM ({{ qrels_numbers(names) }}) AS n
WHERE NOT EXISTS (SELECT 1 FROM {{ judgments }} AS x
                  WHERE x.qid = n.qid AND x.topic IS NOT NULL AND x.jid IS NULL)
{%- endmacro %}

{# The names of the pass's qrels $qrels that are subsets of the root. #}
{% macro complete() -%}
SELECT qrels FROM ({{ subsets('$qrels') }}) AS s
{%- endmacro %}

{# The scores of qrels $q (position $qi) evaluated on its own (irw_eval_result). #}
{% macro add_one() -%}
INSERT INTO irw_many_result SELECT $qi, * FROM irw_eval_result
{%- endmacro %}

{% macro distinct(column) -%}
SELECT DISTINCT {{ column }} FROM irw_many_result ORDER BY {{ column }}
{%- endmacro %}

{# The scores by number: the run, topic and measure as positions in the sorted lists $a, $b
   and $c (unordered: the caller sorts the numbers). #}
{% macro coded() -%}
SELECT r.qi, a.i AS ri, b.i AS ti, c.i AS mi, r.value FROM irw_many_result AS r
JOIN (SELECT unnest($a) AS s, generate_subscripts($a, 1) - 1 AS i) AS a ON a.s = r.run_id
JOIN (SELECT unnest($b) AS s, generate_subscripts($b, 1) - 1 AS i) AS b ON b.s = r.topic
JOIN (SELECT unnest($c) AS s, generate_subscripts($c, 1) - 1 AS i) AS c ON c.s = r.measure
{%- endmacro %}

{# The collection of each qrels of $qrels. #}
{% macro collections() -%}
SELECT qrels, collection FROM qrels_info WHERE list_contains($qrels, qrels)
{%- endmacro %}
