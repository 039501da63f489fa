{#- What a load will write of its runs, for irw_run_state (state.record_runs): computed from
    the ranked rows before the warehouse is locked. Bound: $ids (the runs), $collection, $policy. -#}
{% import '_state.sql' as st %}
CREATE OR REPLACE TEMP TABLE irw_staged_parts AS
{{ st.run_parts('(SELECT $collection AS collection, * FROM irw_ranked)',
                '(SELECT $collection AS collection, * FROM irw_staged_topics)',
                '(SELECT DISTINCT $collection AS collection, run_id, $policy AS ranking_policy FROM irw_staged_topics)') }};
