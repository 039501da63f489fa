{#- Two judgment sets of one collection side by side (`irw qrels compare`,
    irwarehouse.judges), for every engine: macros over P, the SQL of the bound parameters
    (a, b: the two qrels). A document is judged by a qrels when it has a grade >= 0 there
    (rel < 0: in the pool but not assessed, so unjudged). -#}
{% import '_dialect.sql' as d %}

{% macro judged(P, side) -%}
SELECT topic, docno, rel FROM qrels WHERE qrels = {{ P[side] }} AND rel >= 0
{%- endmacro %}

{# Every (topic, grade under a, grade under b) with its number of documents, over the
   documents either set judged: a grade is NULL where its set did not judge the document.
   The confusion matrices of the documents both judged and the counts of those only one
   judged, per topic, in one pass. #}
{% macro cells(P) -%}
WITH a AS ({{ judged(P, 'a') }}),
     b AS ({{ judged(P, 'b') }})
SELECT coalesce(a.topic, b.topic) AS topic, a.rel AS grade_a, b.rel AS grade_b,
       count(*) AS documents
FROM a FULL OUTER JOIN b ON a.topic = b.topic AND a.docno = b.docno
GROUP BY coalesce(a.topic, b.topic), a.rel, b.rel
ORDER BY topic, grade_a NULLS LAST, grade_b NULLS LAST
{%- endmacro %}

{# The documents judged by set `side` ('a' or 'b') only, with their grade there and the
   other set's rel where it lists the document without assessing it (rel < 0). #}
{% macro only(P, side) -%}
{% set other = 'b' if side == 'a' else 'a' %}
WITH mine AS ({{ judged(P, side) }}),
     theirs AS (SELECT topic, docno, rel FROM qrels WHERE qrels = {{ P[other] }})
SELECT mine.topic, mine.docno, mine.rel AS grade, theirs.rel AS rel_other
FROM mine LEFT JOIN theirs ON mine.topic = theirs.topic AND mine.docno = theirs.docno
WHERE theirs.rel IS NULL OR theirs.rel < 0
ORDER BY mine.topic, mine.docno
{%- endmacro %}
