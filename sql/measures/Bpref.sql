{# Bpref = (1/R) * sum over relevant retrieved i of 1 - min(n_i, R) / min(R, N), n_i the
   judged non-relevant documents ranked above i; a term is 1 when min(R, N) = 0. #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
sum(CASE WHEN least({{ m.R }}, {{ m.N }}) = 0 THEN 1.0
         ELSE 1.0 - {{ d.div('least(' ~ m.c_nonrel ~ ', ' ~ m.R ~ ')', 'least(' ~ m.R ~ ', ' ~ m.N ~ ')') }} END)
    FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.R }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_s, 0)', m.R) }} ELSE 0 END
{%- endmacro %}
