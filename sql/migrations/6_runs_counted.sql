{#- Schema version 6: the table runs counts its writes (its check draws from the sequence
    irw_runs_writes), so that the measure macros check it without reading it. A table runs
    of an older warehouse is set aside before the schema creates it anew, and its rows
    copied back (unless version 5's step set it aside already). -#}
{% import 'install.sql' as install %}

{% macro before(columns) -%}
{% if 'runs' in columns and 'collection' in columns['runs'] %}
{{ install.set_aside('runs') }};
{% endif %}
{%- endmacro %}

{% macro after(columns) -%}
{% if 'runs' in columns and 'collection' in columns['runs'] %}
{{ install.copy_back('runs', false) }}
{% endif %}
{%- endmacro %}
