{#- Schema version 9: judgment kinds. qrels_info records the kind each qrels was loaded as
    (judgments, 'trec' for every qrels loaded before), and the lines of the other kinds are
    kept in the new tables qrels_intents, qrels_strata and qrels_prefs, which the schema's
    statements create where they are missing. The column is added before the schema's views,
    which read it. -#}

{% macro before(columns) -%}
ALTER TABLE IF EXISTS qrels_info ADD COLUMN IF NOT EXISTS judgments VARCHAR DEFAULT 'trec';
{%- endmacro %}

{% macro after(columns) -%}
{%- endmacro %}
