{# NERR11(T) (Azzopardi, Mackenzie & Moffat ICTIR 2021, the INST form; cwl_eval's NERReq11),
   a C/W/L measure (sql/_cwl.sql): C(i) = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i). With
   R(i) = prod_{j<i} (1 - g_j), P(i) = R(i) (2T / (i + 2T - 1))^2, and by parts
   S / 4T^2 = psi1(2T) - R(N+1) psi1(N + 2T) - sum_{j<=N} R(j) g_j psi1(j + 2T).
   The score is sum_i P(i) g_i / S. #}
{% import '_dialect.sql' as d %}
{% import '_cwl.sql' as cwl %}
{% macro prepare(m) -%}
{{ cwl.prepare(m, ['g', 'stop', 'lq']) }}
{%- endmacro %}
{% macro aggs(m) -%}
{% set within = m.pos ~ ' <= ' ~ m.max_depth %}
{% set x = '(' ~ m.pos ~ ' + 2 * ' ~ m.T ~ ' - 1)' %}
{{ d.fsum() }}({{ d.div(cwl.kept(m) ~ ' * ' ~ m.id ~ '_g', x ~ ' * ' ~ x) }}) FILTER (WHERE {{ m.id }}_g > 0 AND {{ within }}) AS {{ m.id }}_a,
{{ d.fsum() }}({{ cwl.kept(m) }} * {{ m.id }}_g * {{ cwl.trigamma(m.pos ~ ' + 2 * ' ~ m.T) }}) FILTER (WHERE {{ m.id }}_g > 0 AND {{ within }}) AS {{ m.id }}_b,
{{ cwl.kept_all(m, within) }} AS {{ m.id }}_r
{%- endmacro %}
{% macro value(m) -%}
{% set norm = cwl.trigamma('2 * ' ~ m.T) ~ ' - coalesce(' ~ m.id ~ '_r, 1.0) * ' ~ cwl.trigamma(m.max_depth ~ ' + 2 * ' ~ m.T)
              ~ ' - coalesce(' ~ m.id ~ '_b, 0.0)' %}
{{ d.div('coalesce(' ~ m.id ~ '_a, 0.0)', norm) }}
{%- endmacro %}
