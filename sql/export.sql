{#- Copies of the warehouse (irwarehouse.export): the tables' files, the statements of the
    exported load.sql (which publish also runs), and what a published copy holds. -#}

{# Every public table of the warehouse (schema, table, CREATE TABLE statement): all its tables
   but the internal irw_* ones (and temporary tables). #}
{% macro public_tables() -%}
SELECT schema_name, table_name, sql FROM duckdb_tables()
WHERE database_name = current_database() AND NOT temporary AND NOT internal
  AND NOT starts_with(table_name, 'irw_')
ORDER BY schema_name <> 'main', schema_name, table_name
{%- endmacro %}

{# The schema `name` of exported tables (a line of the exported schema.sql). #}
{% macro create_schema(name) -%}
CREATE SCHEMA IF NOT EXISTS {{ name | ident }};
{%- endmacro %}

{# The schema version of the tables exported (the last line of the exported schema.sql): the
   database IMPORT DATABASE makes is then a warehouse of that version to irw, whose
   bookkeeping (the irw_* tables, not exported) irw rebuilds from the tables. #}
{% macro schema_version(version) -%}
INSERT OR REPLACE INTO irw_meta VALUES ('schema_version', {{ version | literal }});
{%- endmacro %}

{# How the data files are written and read back, by format: CSV keeps NULL (empty, unquoted)
   apart from the empty string (written "") only when quoted values are never read as NULL. #}
{% macro options(fmt, reading) -%}
{% if fmt == "csv" %}FORMAT csv, HEADER{% if reading %}, ALLOW_QUOTED_NULLS false{% endif %}{% else %}FORMAT parquet{% endif %}
{%- endmacro %}

{# Write the table `table` (quoted, qualified) to `file` as `fmt`; gives the rows written. #}
{% macro write_table(table, file, fmt) -%}
COPY (SELECT * FROM {{ table }}) TO {{ file | literal }} ({{ options(fmt, false) }})
{%- endmacro %}

{# Read the table `table` (quoted, qualified) back from `file` (a line of the exported load.sql). #}
{% macro load_table(table, file, fmt) -%}
COPY {{ table }} FROM {{ file | literal }} ({{ options(fmt, true) }});
{%- endmacro %}

{# What a published copy holds besides its tables: its views, and its macros. #}
{% macro count_views() -%}
SELECT count(*) FROM duckdb_views() WHERE NOT internal AND database_name = current_database()
{%- endmacro %}

{% macro count_macros() -%}
SELECT count(*) FROM duckdb_functions() WHERE NOT internal AND database_name = current_database()
  AND function_type IN ('macro', 'table_macro')
{%- endmacro %}

{# Write the published copy out in full. #}
{% macro checkpoint() -%}
CHECKPOINT
{%- endmacro %}
