{#- Record what irw wrote of the runs $ids of collection $collection (irw_run_state): computed from runs and run_topics,
    or (`parts`) copied from a table of the same columns that a load computed from what it
    has just inserted, before it locked the warehouse. -#}
{% import '_state.sql' as st %}
DELETE FROM irw_run_state WHERE collection = $collection AND list_contains($ids, run_id);

INSERT INTO irw_run_state
{% if parts %}
SELECT * FROM {{ parts }};
{% else %}
{{ st.run_parts() }};
{% endif %}
