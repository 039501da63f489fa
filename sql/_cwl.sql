{#- The C/W/L measures (Moffat et al.; Azzopardi, Thomas & Moffat, SIGIR 2019), written once:
    the gain they read, the running values their continuation probabilities need, and the
    series their normalizers sum in closed form.

  A C/W/L measure is a continuation probability C(i) at each rank. The user reaches rank i
  with probability P(i) = prod_{j<i} C(j); the weight of rank i is W(i) = P(i) / S with
  S = sum_{i=1}^{N} P(i) over the first N ranks (max_depth, cwl_eval's 1,000, whatever the
  ranking's length: ranks beyond it gain 0), and the score is the expected rate of gain
  sum_i W(i) g_i (cwl_eval's EU column). Unjudged documents gain 0; cost 1 each.

  gain(m):           the gain of a judged row in [0, 1]: the grade clipped to
                     [min_rel, max_rel] and scaled, (g - min_rel) / (max_rel - min_rel);
                     max_rel defaults to the top grade of the qrels (ir_measures' mapping of
                     TREC grades onto cwl_eval's gains); 0 if max_rel <= min_rel.
  prepare(m, items): the per-row columns of the prepare(m) hook (sql/evaluate.sql), among
                     g     the gain (<id>_g)
                     cg    the running gain, this row included (<id>_cg)
                     stop  the rows so far of gain 1, whose C = 1 - g is 0 (<id>_stop)
                     lq    the running sum of ln(1 - g) over the others (<id>_lq)
  kept(m):           prod_{j<i} (1 - g_j) at the row (from stop and lq, this row left out).
  depth(m):          K = min(k, N), the ranks a measure with a cut-off k can reach.
  trigamma(x):       psi_1(x) = sum_{j>=0} 1/(x+j)^2 for x > 0: ten terms, then the
                     asymptotic series at x + 10 (error below 1e-15).
  harmonic(i):       H(i) = sum_{j=1}^{i} 1/j for an integer i >= 0, the same way.
-#}
{% import '_dialect.sql' as d %}
{% macro gain(m) -%}
{% set hi = 'coalesce(' ~ m.max_rel ~ ', ' ~ m.top_grade ~ ')' %}
(CASE WHEN {{ hi }} > {{ m.min_rel }} THEN {{ d.div('least(greatest(grade, ' ~ m.min_rel ~ '), ' ~ hi ~ ') - ' ~ m.min_rel, hi ~ ' - ' ~ m.min_rel) }} ELSE 0.0 END)
{%- endmacro %}
{#- ln(1 - g), 0 where g >= 1: the guard is inside ln's argument, since an engine may compute
    ln over rows a CASE or a FILTER leaves out (DuckDB 1.4 does, and ln(0) is an error there). -#}
{% macro ln_kept(g) -%}
ln(CASE WHEN {{ g }} < 1 THEN 1 - {{ g }} ELSE 1.0 END)
{%- endmacro %}
{% macro prepare(m, items) -%}
{% set g = gain(m) %}
{% set out = [] %}
{% if 'g' in items %}{% set _ = out.append(g ~ ' AS ' ~ m.id ~ '_g') %}{% endif %}
{% if 'cg' in items %}{% set _ = out.append(d.running_sum(g) ~ ' AS ' ~ m.id ~ '_cg') %}{% endif %}
{% if 'stop' in items %}{% set _ = out.append(d.running_count(g ~ ' >= 1') ~ ' AS ' ~ m.id ~ '_stop') %}{% endif %}
{% if 'lq' in items %}{% set _ = out.append(d.running_fsum(ln_kept(g)) ~ ' AS ' ~ m.id ~ '_lq') %}{% endif %}
{{ out | join(',\n') }}
{%- endmacro %}
{% macro kept(m) -%}
(CASE WHEN {{ m.id }}_stop - (CASE WHEN {{ m.id }}_g >= 1 THEN 1 ELSE 0 END) > 0 THEN 0.0
      ELSE exp({{ m.id }}_lq - {{ ln_kept(m.id ~ '_g') }}) END)
{%- endmacro %}
{#- The product prod_{j} (1 - g_j) over the rows where `within` holds (an aggregate). -#}
{% macro kept_all(m, within) -%}
(CASE WHEN count(*) FILTER (WHERE {{ m.id }}_g >= 1 AND {{ within }}) > 0 THEN 0.0
      ELSE exp(coalesce({{ d.fsum() }}({{ ln_kept(m.id ~ '_g') }}) FILTER (WHERE {{ m.id }}_g > 0 AND {{ m.id }}_g < 1 AND {{ within }}), 0.0)) END)
{%- endmacro %}
{% macro depth(m) %}least({{ m.k }}, {{ m.max_depth }}){% endmacro %}
{% macro trigamma(x) -%}
{% set z = d.div('1', '(' ~ x ~ ') + 10') %}
{% set z2 = '(' ~ z ~ ' * ' ~ z ~ ')' %}
({% for j in range(10) %}{{ d.div('1', '((' ~ x ~ ') + ' ~ j ~ ') * ((' ~ x ~ ') + ' ~ j ~ ')') }} + {% endfor %}{{ z }} * (1 + {{ z }} * (0.5 + {{ z }} * ({{ 1 / 6 }} + {{ z2 }} * ({{ -1 / 30 }} + {{ z2 }} * ({{ 1 / 42 }} + {{ z2 }} * ({{ -1 / 30 }} + {{ z2 }} * ({{ 5 / 66 }} + {{ z2 }} * ({{ -691 / 2730 }} + {{ z2 }} * {{ 7 / 6 }})))))))))
{%- endmacro %}
{% macro harmonic(i) -%}
{% set y = '((' ~ i ~ ') + 10)' %}
{% set z = d.div('1', y) %}
{% set z2 = '(' ~ z ~ ' * ' ~ z ~ ')' %}
(ln({{ y }}) + 0.5772156649015329 + {{ z }} * 0.5 - {{ z2 }} * ({{ 1 / 12 }} - {{ z2 }} * ({{ 1 / 120 }} - {{ z2 }} * ({{ 1 / 252 }} - {{ z2 }} * ({{ 1 / 240 }} - {{ z2 }} * {{ 1 / 132 }}))))
 {% for j in range(1, 11) %} - {{ d.div('1', '(' ~ i ~ ') + ' ~ j) }}{% endfor %})
{%- endmacro %}
