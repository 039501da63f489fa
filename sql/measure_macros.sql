{#- Every catalogue measure as a table macro in the schema `measure`, named as in the catalogue
    and rendered from the same sql/measures/<Name>.sql file and sql/evaluate.sql as the engine:

        SELECT * FROM measure.nDCG('trec8', k := 10, discount := 'jk');

    Columns run_id, topic, value: every loaded run (or those of `runs := [...]`) over the
    qrels's default topic set, as `irw eval --per-topic`. The base relation comes from the
    materialized cache while it is current, and is computed from the tables otherwise.
    Context: macros, one per measure: name, args (the parameter list), body (evaluate.sql
    rendered for the macro's parameters); base_sources, the sources of the base rows they
    share (irw_measure_base, _base.sql's measure_base). -#}
{% import '_dialect.sql' as d %}
{% import '_base.sql' as b %}
{{ b.measure_base(base_sources) }};

CREATE SCHEMA IF NOT EXISTS measure;
{% for mm in macros %}

{{ d.table_function('measure.' ~ (mm.name | ident), mm.args) }}
{{ mm.body }};
{% endfor %}
