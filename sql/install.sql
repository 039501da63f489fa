{#- Installing and upgrading the schema (irwarehouse.schema.ensure_schema): the statements
    around the schema's own templates (SCHEMA_TEMPLATES). -#}
{% import '_state.sql' as st %}

{# What the warehouse holds: its tables, views, macros and sequences (for the schema check). #}
{% macro objects() -%}
SELECT 'TABLE', schema_name, table_name FROM duckdb_tables()
WHERE NOT temporary AND database_name = current_database()
UNION ALL
SELECT 'SEQUENCE', schema_name, sequence_name FROM duckdb_sequences()
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
DROP TABLE IF EXISTS irw_base_ties_built;
DROP TABLE IF EXISTS irw_run_state;
DROP TABLE IF EXISTS irw_derived_built;
DROP TABLE IF EXISTS irw_derived_removed;
{%- endmacro %}

{# The warehouse's tables with their columns, in order (for the migrations' steps). #}
{% macro table_columns() -%}
SELECT c.table_name, c.column_name FROM information_schema.columns c
JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
WHERE c.table_catalog = current_database() AND c.table_schema = 'main' AND t.table_type = 'BASE TABLE'
ORDER BY c.table_name, c.ordinal_position
{%- endmacro %}

{# Does the warehouse hold a table runs that does not count its writes (of an older layout,
   or put in its place outside irw)? #}
{% macro runs_uncounted() -%}
SELECT EXISTS (SELECT 1 FROM duckdb_tables()
               WHERE database_name = current_database() AND schema_name = 'main' AND table_name = 'runs')
       AND NOT {{ st.runs_counted() }}
{%- endmacro %}

{# Set a table aside, to be created anew, and copy its rows back into the new one (with
   `collection`: a table of an older layout without that column, its rows of collection
   $collection; the migrations' steps, sql/migrations/, use these). #}
{% macro set_aside(table) -%}
ALTER TABLE {{ table | ident }} RENAME TO {{ (table ~ '_irw_aside') | ident }}
{%- endmacro %}

{% macro copy_back(table, collection) -%}
INSERT INTO {{ table | ident }} BY NAME SELECT *{% if collection %}, $collection AS collection{% endif %} FROM {{ (table ~ '_irw_aside') | ident }};
DROP TABLE {{ (table ~ '_irw_aside') | ident }};
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

{# ------------------------------------------------------------------ irw's objects kept true #}

{# An empty database file `path` of the storage version `storage` (a scratch database). #}
{# The schemas other than main of the current database (a new one has none). #}
{% macro own_schemas() -%}
SELECT schema_name FROM duckdb_schemas()
WHERE database_name = current_database() AND NOT internal AND schema_name <> 'main'
{%- endmacro %}

{#- The schema's template (irwarehouse.schema.schema_template) copied into the database
    `current`; schema._copy_template detaches it (drop_template) once the transaction has
    ended, as DuckDB 1.5 refuses within it. -#}
{% macro copy_template(path, current) -%}
ATTACH {{ path | literal }} AS irw_schema_template (READ_ONLY);
COPY FROM DATABASE irw_schema_template TO {{ current | ident }};
{%- endmacro %}

{% macro drop_template() -%}
DETACH DATABASE IF EXISTS irw_schema_template
{%- endmacro %}

{% macro create_file(path, storage) -%}
ATTACH {{ path | literal }} AS irw_scratch (STORAGE_VERSION {{ storage | literal }});
DETACH irw_scratch;
{%- endmacro %}

{# Every table, sequence, view and macro of the warehouse: views and macros with the digest
   of their definition as DuckDB reads it back (a macro's overloads together), tables and
   sequences with none. #}
{% macro definitions() -%}
SELECT 'VIEW' AS kind, schema_name, view_name AS name, md5(sql) AS definition FROM duckdb_views()
WHERE NOT internal AND NOT temporary AND database_name = current_database()
UNION ALL
SELECT 'MACRO', schema_name, function_name, md5(string_agg(overload, chr(10) ORDER BY overload))
FROM (SELECT schema_name, function_name,
             function_type || '(' || coalesce(array_to_string(parameters, ','), '') || ') '
             || coalesce(macro_definition, '') AS overload
      FROM duckdb_functions()
      WHERE NOT internal AND database_name = current_database() AND function_type IN ('macro', 'table_macro'))
GROUP BY schema_name, function_name
UNION ALL
SELECT 'TABLE', schema_name, table_name, NULL FROM duckdb_tables()
WHERE NOT temporary AND database_name = current_database()
UNION ALL
SELECT 'SEQUENCE', schema_name, sequence_name, NULL FROM duckdb_sequences()
WHERE NOT temporary AND database_name = current_database()
{%- endmacro %}
