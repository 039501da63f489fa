{# NERR8@k (Azzopardi, Mackenzie & Moffat ICTIR 2021, equation 8; cwl_eval's NERReq8), a
   C/W/L measure (sql/_cwl.sql): C(i) = 1 - g_i for i < k, 0 from k on. With K = min(k, N)
   and R(i) = prod_{j<i} (1 - g_j), P(i) = R(i) for i <= K, and
   S = sum_{i<=K} R(i) = sum_{i<=K} i R(i) g_i + K R(K+1) (R(i) - R(i+1) = R(i) g_i).
   The score is sum_{i<=K} R(i) g_i / S. #}
{% import '_dialect.sql' as d %}
{% import '_cwl.sql' as cwl %}
{% macro prepare(m) -%}
{{ cwl.prepare(m, ['g', 'stop', 'lq']) }}
{%- endmacro %}
{% macro aggs(m) -%}
{% set within = m.pos ~ ' <= ' ~ cwl.depth(m) %}
{{ d.fsum() }}({{ cwl.kept(m) }} * {{ m.id }}_g) FILTER (WHERE {{ m.id }}_g > 0 AND {{ within }}) AS {{ m.id }}_a,
{{ d.fsum() }}({{ m.pos }} * {{ cwl.kept(m) }} * {{ m.id }}_g) FILTER (WHERE {{ m.id }}_g > 0 AND {{ within }}) AS {{ m.id }}_b,
{{ cwl.kept_all(m, within) }} AS {{ m.id }}_r
{%- endmacro %}
{% macro value(m) -%}
{{ d.div('coalesce(' ~ m.id ~ '_a, 0.0)', 'coalesce(' ~ m.id ~ '_b, 0.0) + ' ~ cwl.depth(m) ~ ' * coalesce(' ~ m.id ~ '_r, 1.0)') }}
{%- endmacro %}
