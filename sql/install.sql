{#- Installing and upgrading the schema (irwarehouse.schema.ensure_schema): the statements
    around the schema's own templates (SCHEMA_TEMPLATES). -#}

{# What the warehouse holds: its tables, views and macros (for the schema check). #}
{% macro objects() -%}
SELECT 'TABLE', schema_name, table_name FROM duckdb_tables()
WHERE NOT temporary AND database_name = current_database()
UNION ALL
SELECT 'VIEW', schema_name, view_name FROM duckdb_views()
WHERE NOT temporary AND database_name = current_database()
UNION ALL
SELECT 'MACRO', schema_name, function_name FROM duckdb_functions()
WHERE NOT internal AND database_name = current_database() AND function_type IN ('macro', 'table_macro')
{%- endmacro %}

{# Caches are rebuilt on demand: a new layout simply drops them. #}
{% macro drop_caches() -%}
DROP TABLE IF EXISTS irw_base;
DROP TABLE IF EXISTS irw_base_built;
DROP TABLE IF EXISTS irw_run_state;
{%- endmacro %}

{# Of the tables $tables, whether each has a collection column. #}
{% macro has_collection() -%}
SELECT table_name, bool_or(column_name = 'collection') FROM information_schema.columns
WHERE table_catalog = current_database() AND table_schema = 'main' AND list_contains($tables, table_name)
GROUP BY table_name
{%- endmacro %}

{# Set a table of an older layout aside, and copy its rows back into the new one (their
   collection: $collection). #}
{% macro set_aside(table) -%}
ALTER TABLE {{ table | ident }} RENAME TO {{ (table ~ '_irw_v4') | ident }}
{%- endmacro %}

{% macro copy_back(table) -%}
INSERT INTO {{ table | ident }} BY NAME SELECT *, $collection AS collection FROM {{ (table ~ '_irw_v4') | ident }};
DROP TABLE {{ (table ~ '_irw_v4') | ident }};
{%- endmacro %}

{# The measure catalogue (table measures), rows bound by position. #}
{% macro clear_measures() -%}
DELETE FROM measures
{%- endmacro %}

{% macro measure_row(columns) -%}
INSERT INTO measures VALUES ({% for c in columns %}?{{ ", " if not loop.last }}{% endfor %})
{%- endmacro %}

{# The warehouse's own settings (irw_meta), bound by position. #}
{% macro set_meta() -%}
INSERT OR REPLACE INTO irw_meta VALUES (?, ?)
{%- endmacro %}

{% macro forget_meta() -%}
DELETE FROM irw_meta WHERE key = ?
{%- endmacro %}
