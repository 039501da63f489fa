{# IPrec@r: interpolated precision at recall level r (trec_eval iprec_at_recall). The level
   needs c = round(r R) relevant documents retrieved (rounded half up, trec_eval 10.0's
   lround; 9.x added 0.9 and truncated); the value is the best precision at or below the
   c-th relevant document retrieved -- the largest C(i)/i over relevant ranks i with
   C(i) >= max(c, 1) -- and 0 if fewer than c are retrieved. #}
{% import '_dialect.sql' as d %}
{# C's lround(x) for x >= 0: halves away from zero (x - floor(x) is exact). #}
{% macro lround(x) -%}
(CASE WHEN ({{ x }}) - floor({{ x }}) >= {{ 0.5 | num }} THEN floor({{ x }}) + 1 ELSE floor({{ x }}) END)
{%- endmacro %}
{# The relevant documents recall level r needs of R: max(lround(r R), 1). #}
{% macro needed(r, R) -%}
greatest({{ lround(r ~ ' * ' ~ R) }}, 1)
{%- endmacro %}
{% macro aggs(m) -%}
max({{ d.div(m.c_rel, m.pos) }}) FILTER (WHERE {{ m.rel }} AND {{ m.c_rel }} >= {{ needed(m.k, m.R) }}) AS {{ m.id }}_ip
{%- endmacro %}
{% macro value(m) -%}
coalesce({{ m.id }}_ip, 0)
{%- endmacro %}
