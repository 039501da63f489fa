{#- Saved analyses (irwarehouse.significance.save): the rows of a named result in one of the
    result tables of schema.sql (discpower_results, pair_tests, correlation_matrices). -#}

{# Forget the result named ? in the result table `table`. #}
{% macro forget(table) -%}
DELETE FROM {{ table | ident }} WHERE name = ?
{%- endmacro %}

{# Add the rows of the registered relation irw_result (the table's columns, in order). #}
{% macro insert(table) -%}
INSERT INTO {{ table | ident }} SELECT * FROM irw_result
{%- endmacro %}
