{# INST(T) (Moffat et al. ADCS 2015; cwl_eval's INST), a C/W/L measure (sql/_cwl.sql):
   C(i) = ((x_i - 1) / x_i)^2 with x_i = i + 2T - cg(i), cg(i) the gain of ranks 1..i.
   Between two gains x grows by 1 a rank and the product telescopes: with
   L_j = 2 ln((x_{j-1} - g_j) / x_{j-1}) at each rank of gain g_j > 0 and E_j = exp(sum_{i<=j} L_i),
   P(j) = 4T^2 E_{j-1} / x_{j-1}^2, and the sum of P over ranks 1..N is, in trigamma terms,
   S / 4T^2 = psi1(2T) + sum_j (E_j psi1(x_j - 1) - E_{j-1} psi1(x_{j-1})) - E_N psi1(x_N).
   The score is sum_j P(j) g_j / S. #}
{% import '_dialect.sql' as d %}
{% import '_cwl.sql' as cwl %}
{% macro xprev(m) -%}
({{ m.pos }} - 1 + 2 * {{ m.T }} - {{ m.id }}_cg + {{ m.id }}_g)
{%- endmacro %}
{% macro step(m) -%}
(CASE WHEN {{ m.id }}_g > 0 THEN 2 * ln({{ d.div(xprev(m) ~ ' - ' ~ m.id ~ '_g', xprev(m)) }}) ELSE 0.0 END)
{%- endmacro %}
{% macro prepare(m) -%}
{{ cwl.prepare(m, ['g', 'cg']) }}
{%- endmacro %}
{% macro running(m) -%}
{{ d.running_fsum(step(m)) }}
{%- endmacro %}
{% macro aggs(m) -%}
{% set within = m.id ~ '_g > 0 AND ' ~ m.pos ~ ' <= ' ~ m.max_depth %}
{% set before = 'exp(' ~ m.run ~ ' - ' ~ step(m) ~ ')' %}
{{ d.fsum() }}({{ before }} * {{ d.div(m.id ~ '_g', xprev(m) ~ ' * ' ~ xprev(m)) }}) FILTER (WHERE {{ within }}) AS {{ m.id }}_s1,
{{ d.fsum() }}(exp({{ m.run }}) * {{ cwl.trigamma(xprev(m) ~ ' - ' ~ m.id ~ '_g') }} - {{ before }} * {{ cwl.trigamma(xprev(m)) }}) FILTER (WHERE {{ within }}) AS {{ m.id }}_s2,
{{ d.fsum() }}({{ step(m) }}) FILTER (WHERE {{ within }}) AS {{ m.id }}_sl,
{{ d.fsum() }}({{ m.id }}_g) FILTER (WHERE {{ within }}) AS {{ m.id }}_sg
{%- endmacro %}
{% macro value(m) -%}
{% set norm = cwl.trigamma('2 * ' ~ m.T) ~ ' + coalesce(' ~ m.id ~ '_s2, 0.0) - exp(coalesce(' ~ m.id ~ '_sl, 0.0)) * '
              ~ cwl.trigamma(m.max_depth ~ ' + 2 * ' ~ m.T ~ ' - coalesce(' ~ m.id ~ '_sg, 0.0)') %}
{{ d.div('coalesce(' ~ m.id ~ '_s1, 0.0)', norm) }}
{%- endmacro %}
