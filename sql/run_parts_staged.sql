{#- What a load will write of its runs, for irw_run_state (state.record_runs): computed from
    the staged tables before the warehouse is locked -- the rows' part from the sums taken
    batch by batch (irw_staged_sums). Bound: $ids (the runs), $collection, $policy. -#}
{% import '_state.sql' as st %}
CREATE OR REPLACE TEMP TABLE irw_staged_parts AS
{{ st.run_parts(topics='(SELECT $collection AS collection, * FROM irw_staged_topics)',
                loads='(SELECT DISTINCT $collection AS collection, run_id, $policy AS ranking_policy FROM irw_staged_topics)',
                sums='SELECT collection, run_id, sum(n_rows) AS n_rows, sum(rows_sum) AS rows_sum
                      FROM irw_staged_sums GROUP BY collection, run_id') }};
