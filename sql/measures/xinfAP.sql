{# xinfAP (Yilmaz, Kanoulas & Aslam, SIGIR 2008), as sample_eval computes it (it prints it as
   infAP): over the relevant sampled documents retrieved at rank i <= 1,000, the estimated
   precision above and at them, (1 + est_above) / i, each weighted by the inverse of its
   stratum's inclusion probability (size / sampled), summed and divided by the estimated R
   (0 when that is 0). #}
{% import '_dialect.sql' as d %}
{% macro strata_aggs(m) -%}
{{ d.fsum() }}(CASE WHEN grade > 0 THEN s_weight * {{ d.div('1 + est_above', 'rank') }} END) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN coalesce(est_R, 0) <> 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_s, 0)', 'est_R') }} ELSE 0 END
{%- endmacro %}
