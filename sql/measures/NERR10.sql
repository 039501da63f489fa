{# NERR10(p) (Azzopardi, Mackenzie & Moffat ICTIR 2021, equation 10; cwl_eval's NERReq10), a
   C/W/L measure (sql/_cwl.sql): C(i) = p (1 - g_i). P(i) = p^(i-1) R(i) with
   R(i) = prod_{j<i} (1 - g_j), and as P(i) - P(i+1) = P(i) ((1 - p) + p g_i),
   S = (1 - P(N+1) - p A) / (1 - p) with A = sum_{i<=N} P(i) g_i. The score is A / S. #}
{% import '_dialect.sql' as d %}
{% import '_cwl.sql' as cwl %}
{% macro prepare(m) -%}
{{ cwl.prepare(m, ['g', 'stop', 'lq']) }}
{%- endmacro %}
{% macro aggs(m) -%}
{% set within = m.pos ~ ' <= ' ~ m.max_depth %}
{{ d.fsum() }}(pow({{ m.p }}, {{ m.pos }} - 1) * {{ cwl.kept(m) }} * {{ m.id }}_g) FILTER (WHERE {{ m.id }}_g > 0 AND {{ within }}) AS {{ m.id }}_a,
{{ cwl.kept_all(m, within) }} AS {{ m.id }}_r
{%- endmacro %}
{% macro value(m) -%}
{% set a = 'coalesce(' ~ m.id ~ '_a, 0.0)' %}
{{ d.div(a ~ ' * (1 - ' ~ m.p ~ ')', '1 - pow(' ~ m.p ~ ', ' ~ m.max_depth ~ ') * coalesce(' ~ m.id ~ '_r, 1.0) - ' ~ m.p ~ ' * ' ~ a) }}
{%- endmacro %}
