{#- Every catalogue measure as a table macro in the schema `measure`, named as in the catalogue
    and rendered from the same sql/measures/<Name>.sql file and sql/evaluate.sql as the engine:

        SELECT * FROM measure.nDCG('trec8', k := 10, discount := 'jk');

    Columns run_id, topic, value: every loaded run (or those of `runs := [...]`) over the
    qrels's default topic set, as `irw eval --per-topic`. The base relation comes from the
    materialized cache while it is current, and is computed from the tables otherwise.
    Context: macros, one per measure: name, args (the parameter list), body (evaluate.sql
    rendered for the macro's parameters); base_sources, the sources of the base rows they
    share (irw_measure_base, _base.sql's measure_base); topics, their topic policy, which the
    preference measures' shared counts follow (irw_prefs_jgs, irw_prefs_pairs: _prefs.sql's
    shared). -#}
{% import '_dialect.sql' as d %}
{% import '_base.sql' as b %}
{% import '_prefs.sql' as pf %}
{{ b.measure_base(base_sources) }};
{{ pf.shared(topics) }};

CREATE SCHEMA IF NOT EXISTS measure;
{% for mm in macros %}

{{ d.table_function('measure.' ~ (mm.name | ident), mm.args) }}
{{ mm.body }};
{% endfor %}
