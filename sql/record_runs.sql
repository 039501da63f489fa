{#- Record what irw wrote of the runs $ids (irw_run_state): from the tables `rows` and
    `topics` -- runs and run_topics, or the staged tables a load has just copied there. -#}
{% import '_state.sql' as st %}
DELETE FROM irw_run_state WHERE list_contains($ids, run_id);

INSERT INTO irw_run_state
{{ st.run_parts(rows, topics) }};
