{#- The runs $ids ranked afresh under their ranking policies (state.py, after `runs` was
    changed outside irw). -#}
{% import '_base.sql' as b %}
{{ b.reranked_runs('list_contains($ids, r.run_id)') }}
