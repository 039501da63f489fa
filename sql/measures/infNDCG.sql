{# infNDCG (Yilmaz, Kanoulas & Aslam, SIGIR 2008), as sample_eval computes it: the DCG (gain =
   grade, discount 1/log2(i + 1)) of the relevant sampled documents retrieved at ranks
   i <= 1,000, each weighted by its stratum's retrieved documents over its retrieved and
   sampled ones, divided by the DCG of the estimated ideal ranking (0 when that is 0). #}
{% import '_dialect.sql' as d %}
{% macro strata_aggs(m) -%}
{{ d.fsum() }}(CASE WHEN grade > 0 THEN s_ret_weight * {{ d.div('grade', '(ln(rank + 1) / ln(2))') }} END) AS {{ m.id }}_g
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN coalesce(est_idcg, 0) <> 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_g, 0)', 'est_idcg') }} ELSE 0 END
{%- endmacro %}
