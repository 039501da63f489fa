{#- The base rows (run_id, topic, rank, crank, grade, c_rel, cg) of qrels $qrels for the runs
    $runs of collection $collection, from the source the engine would use (irwarehouse.engine.base.base_query). -#}
{% import '_base.sql' as b %}
{% import '_dialect.sql' as d %}
WITH sel AS (SELECT DISTINCT {{ d.unnest_list(P.runs) }} AS run_id)
{{ b.base_rows([source], P, 'sel') }}
