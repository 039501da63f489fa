{#- The experiments' bookkeeping (irwarehouse.experiments.base): the cells kept as files, and
    the tables the experiments store in the warehouse (listed in experiment_tables). -#}

{# The state of the loaded data: when runs were last loaded, and root qrels last created. #}
{% macro data_stamp() -%}
SELECT (SELECT max(loaded_at) FROM run_loads),
       (SELECT max(created_at) FROM qrels_info WHERE parent IS NULL)
{%- endmacro %}

{# Write a cell (the registered relation irw_cell) to the Parquet file `file`. #}
{% macro write_cell(file) -%}
COPY irw_cell TO {{ file | literal }} (FORMAT PARQUET)
{%- endmacro %}

{# Store the table `table` of an experiment: the registered relation irw_exp_frame. #}
{% macro store_table(table) -%}
CREATE OR REPLACE TABLE {{ table | ident }} AS SELECT * FROM irw_exp_frame
{%- endmacro %}

{# The catalogue row of a stored table: forget table ?, then record experiment, table_name,
   rows and params bound by position. #}
{% macro forget_table() -%}
DELETE FROM experiment_tables WHERE table_name = ?
{%- endmacro %}

{% macro record_table() -%}
INSERT INTO experiment_tables VALUES (?, ?, ?, ?, current_timestamp)
{%- endmacro %}
