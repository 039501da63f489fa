{#- Schema version 5: runs, run metadata, qrels and saved results belong to a test collection.
    The tables of an older warehouse that lack the column `collection` are set aside before
    the schema creates them anew, and their rows copied back as collection $collection
    ('default'). `columns`: table -> its columns, as the warehouse held them before any step. -#}
{% import 'install.sql' as install %}
{% set TABLES = ['runs', 'run_topics', 'run_loads', 'run_meta', 'qrels_info', 'scores',
                 'evaluations', 'discpower_results', 'pair_tests'] %}

{% macro before(columns) -%}
{% for t in TABLES if t in columns and 'collection' not in columns[t] %}
{{ install.set_aside(t) }};
{% endfor %}
{%- endmacro %}

{% macro after(columns) -%}
{% for t in TABLES if t in columns and 'collection' not in columns[t] %}
{{ install.copy_back(t, true) }}
{% endfor %}
{%- endmacro %}
