{# nDCGRel (trec_eval ndcg_rel, experimental): nDCG averaged over the L documents of
   positive gain: at each one retrieved, at rank i, DCG@i / IDCG@min(i, L); for each one not
   retrieved, DCG of the whole ranking / IDCG; divided by L. running(m) is DCG@i,
   ideal_rows(m) IDCG at each ideal position. #}
{% import '_dialect.sql' as d %}
{% macro running(m) -%}
{{ d.running_fsum('(' ~ m.gain ~ ') * ' ~ m.disc(m.pos)) }}
{%- endmacro %}
{% macro ideal_rows(m) -%}
SELECT topic, irank, {{ d.running_fsum('gain * ' ~ m.disc('irank'), 'irank', 'topic') }} AS v
FROM {{ m.ideal_ranking }}
{%- endmacro %}
{% macro ideal(m) -%}
{{ d.fsum() }}(gain * {{ m.disc('irank') }}) AS {{ m.id }}_idcg
{%- endmacro %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ d.div(m.run, m.iv) }}) FILTER (WHERE ({{ m.gain }}) > 0) AS {{ m.id }}_s,
    count(*) FILTER (WHERE ({{ m.gain }}) > 0) AS {{ m.id }}_npos,
    {{ d.fsum() }}(({{ m.gain }}) * {{ m.disc(m.pos) }}) AS {{ m.id }}_dcg
{%- endmacro %}
{% macro value(m) -%}
{% set L = m.ideal_len %}
CASE WHEN {{ L }} > 0
     THEN {{ d.div('coalesce(' ~ m.id ~ '_s, 0) + ' ~ d.div('(' ~ L ~ ' - coalesce(' ~ m.id ~ '_npos, 0)) * coalesce(' ~ m.id ~ '_dcg, 0)', m.id ~ '_idcg'), L) }}
     ELSE 0 END
{%- endmacro %}
