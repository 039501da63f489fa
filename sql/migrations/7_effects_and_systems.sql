{#- Schema version 7: runs name their system; saved pair tests keep the interval of the
    difference, the effect sizes and, for systems, the runs behind each and whether the
    difference is within their spread; saved discriminative power keeps the systems, the
    residual variance and effect summaries. Columns are added where they are missing (a
    table set aside by an earlier step is created anew with them), before the schema's
    views, which read them, are created. -#}
{% set COLUMNS = {
    'run_meta': [('system', 'VARCHAR')],
    'pair_tests': [('system_a', 'VARCHAR'), ('system_b', 'VARCHAR'), ('runs_a', 'INTEGER'),
                   ('runs_b', 'INTEGER'), ('within_spread', 'BOOLEAN'), ('ci_low', 'DOUBLE'),
                   ('ci_high', 'DOUBLE'), ('effect_size', 'DOUBLE'), ('effect_low', 'DOUBLE'),
                   ('effect_high', 'DOUBLE'), ('effect_size_residual', 'DOUBLE')],
    'discpower_results': [('systems', 'INTEGER'), ('residual_variance', 'DOUBLE'),
                          ('smallest_significant_diff', 'DOUBLE'), ('median_effect_size', 'DOUBLE')],
} %}

{% macro before(columns) -%}
{% for table, added in COLUMNS.items() %}
{% for name, type in added %}
ALTER TABLE IF EXISTS {{ table | ident }} ADD COLUMN IF NOT EXISTS {{ name | ident }} {{ type }};
{% endfor %}
{% endfor %}
{%- endmacro %}

{% macro after(columns) -%}
{%- endmacro %}
