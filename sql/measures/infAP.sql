{# infAP (Yilmaz & Aslam 2006), as trec_eval computes it: (1/R) times the sum over the
   relevant rows at rank i of 1 if i = 1, else
       1/i + ((i-1)/i) * ((C(i)-1 + nonrel + pooled)/(i-1)) * ((C(i)-1 + eps)/(C(i)-1 + nonrel + 2 eps)),
   nonrel the judged non-relevant and pooled the documents the qrels lists with a grade
   below 0 (pooled, not assessed) above i; documents not in the qrels count only in i;
   eps = 1e-5. #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
{% set j = d.cast(m.pos ~ ' - 1', 'DOUBLE') %}
{% set before = '(' ~ m.c_rel ~ ' - 1)' %}
{% set eps = 0.00001 | num %}
{% set above = '(' ~ before ~ ' + ' ~ m.c_nonrel ~ ' + ' ~ m.pool_unjudged ~ ')' %}
{{ d.fsum() }}(CASE WHEN {{ m.pos }} = 1 THEN 1.0
    ELSE {{ d.div('1', j ~ ' + 1') }} + {{ d.div(j, j ~ ' + 1') }} * {{ d.div(above, j) }}
         * {{ d.div(before ~ ' + ' ~ eps, before ~ ' + ' ~ m.c_nonrel ~ ' + 2 * ' ~ eps) }} END)
    FILTER (WHERE {{ m.rel }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.R }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_s, 0)', m.R) }} ELSE 0 END
{%- endmacro %}
