{#- The runs $ids of collection $collection ranked afresh under their ranking policies (state.py, after `runs` was
    changed outside irw). -#}
{% import '_base.sql' as b %}
{{ b.reranked_runs('r.collection = $collection AND list_contains($ids, r.run_id)') }}
