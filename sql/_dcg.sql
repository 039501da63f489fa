{#- The body nDCG and enDCG share (sql/measures/nDCG.sql, enDCG.sql), written once: the run's
    DCG within its depth, the ideal ranking's DCG, and their ratio (0 without relevant
    documents). They differ only in how much of the ideal ranking counts.

  aggs(m):                 the run's DCG@k, column <id>_dcg.
  expected_aggs(m):        its expectation over every ordering of the ties (tie policy expected).
  ideal(m, within=none):   the ideal ranking's DCG, column <id>_idcg; `within` an SQL condition
                           on the ideal ranks (none: the whole ideal ranking).
  value(m):                DCG / IDCG.
-#}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
{{ d.fsum() }}(({{ m.gain }}) * {{ m.disc(m.pos) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_dcg
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.gain(m) }} * {{ m.disc(m.pos) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_dcg
{%- endmacro %}
{% macro ideal(m, within=none) -%}
{{ d.fsum() }}(gain * {{ m.disc('irank') }}){% if within %} FILTER (WHERE {{ within }}){% endif %} AS {{ m.id }}_idcg
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN coalesce({{ m.id }}_idcg, 0) > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_dcg, 0)', m.id ~ '_idcg') }} ELSE 0 END
{%- endmacro %}
