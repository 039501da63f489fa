{# RnDCG (trec_eval Rndcg, experimental): the mean of nDCG@b over the R levels b -- the
   ideal positions after which the ideal gain changes (its last one included) -- and over
   n, the ranking's length, when n > L + 1 (L the ideal ranking's length); 0 when R = 0.
   nDCG@b = DCG@b / IDCG@b, so the sum over the levels is the sum over the rows at i <= L
   of g_i disc(i) times w(i), the sum of 1/IDCG@b over the levels b >= i (ideal_rows). #}
{% import '_dialect.sql' as d %}
{% macro ideal_rows(m) -%}
SELECT topic, irank,
       {{ d.running_fsum('CASE WHEN boundary = 1 THEN ' ~ d.div('1', 'idcg') ~ ' ELSE 0 END', 'irank DESC', 'topic') }} AS v
FROM (SELECT topic, irank,
             {{ d.running_fsum('gain * ' ~ m.disc('irank'), 'irank', 'topic') }} AS idcg,
             CASE WHEN lead(gain) OVER (PARTITION BY topic ORDER BY irank) = gain THEN 0 ELSE 1 END AS boundary
      FROM {{ m.ideal_ranking }}) AS levels
{%- endmacro %}
{% macro ideal(m) -%}
{{ d.fsum() }}(gain * {{ m.disc('irank') }}) AS {{ m.id }}_idcg, count(DISTINCT gain) AS {{ m.id }}_levels
{%- endmacro %}
{% macro aggs(m) -%}
{{ d.fsum() }}(({{ m.gain }}) * {{ m.disc(m.pos) }} * (CASE WHEN {{ m.pos }} <= {{ m.ipos }} THEN {{ m.iv }} ELSE 0 END)) AS {{ m.id }}_s,
    {{ d.fsum() }}(({{ m.gain }}) * {{ m.disc(m.pos) }}) AS {{ m.id }}_dcg
{%- endmacro %}
{% macro value(m) -%}
{% set levels = 'coalesce(' ~ m.id ~ '_levels, 0)' %}
{% set at_n = '(CASE WHEN ' ~ m.n ~ ' > ' ~ m.ideal_len ~ ' + 1 AND coalesce(' ~ m.id ~ '_idcg, 0) > 0 THEN 1 ELSE 0 END)' %}
CASE WHEN {{ m.R }} > 0 AND {{ levels }} + {{ at_n }} > 0
     THEN {{ d.div('coalesce(' ~ m.id ~ '_s, 0) + (CASE WHEN ' ~ at_n ~ ' = 1 THEN ' ~ d.div('coalesce(' ~ m.id ~ '_dcg, 0)', m.id ~ '_idcg') ~ ' ELSE 0 END)', levels ~ ' + ' ~ at_n) }}
     ELSE 0 END
{%- endmacro %}
