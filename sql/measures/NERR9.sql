{# NERR9@k (Azzopardi, Mackenzie & Moffat ICTIR 2021, equation 9; cwl_eval's NERReq9), a
   C/W/L measure (sql/_cwl.sql): C(i) = (i / (i + 1)) (1 - g_i) for i < k, 0 from k on. With
   K = min(k, N) and R(i) = prod_{j<i} (1 - g_j), P(i) = R(i) / i for i <= K, and by parts
   S = R(K+1) H(K) + sum_{i<=K} H(i) R(i) g_i, H the harmonic numbers.
   The score is sum_{i<=K} R(i) g_i / i / S. #}
{% import '_dialect.sql' as d %}
{% import '_cwl.sql' as cwl %}
{% macro prepare(m) -%}
{{ cwl.prepare(m, ['g', 'stop', 'lq']) }}
{%- endmacro %}
{% macro aggs(m) -%}
{% set within = m.pos ~ ' <= ' ~ cwl.depth(m) %}
{{ d.fsum() }}({{ d.div(cwl.kept(m) ~ ' * ' ~ m.id ~ '_g', m.pos) }}) FILTER (WHERE {{ m.id }}_g > 0 AND {{ within }}) AS {{ m.id }}_a,
{{ d.fsum() }}({{ cwl.harmonic(m.pos) }} * {{ cwl.kept(m) }} * {{ m.id }}_g) FILTER (WHERE {{ m.id }}_g > 0 AND {{ within }}) AS {{ m.id }}_b,
{{ cwl.kept_all(m, within) }} AS {{ m.id }}_r
{%- endmacro %}
{% macro value(m) -%}
{{ d.div('coalesce(' ~ m.id ~ '_a, 0.0)', 'coalesce(' ~ m.id ~ '_b, 0.0) + coalesce(' ~ m.id ~ '_r, 1.0) * ' ~ cwl.harmonic(cwl.depth(m))) }}
{%- endmacro %}
