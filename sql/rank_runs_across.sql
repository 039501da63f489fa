{#-
  Runs whose lines came in files of several batches ($ids; checked for duplicates across
  the batches): their rows ranked again over all their lines, each (run, topic) on its own,
  their fingerprint sums taken again, and their ranking lengths summed over the batches.
  Context: policy (see _ranking.sql). Bound: $collection.
-#}
{% import '_ranking.sql' as rk %}
{% import '_state.sql' as st %}
CREATE OR REPLACE TEMP TABLE irw_reranked AS
{{ rk.ranked('irw_staging.irw_ranked', policy, 'list_contains($ids, run_id)') }};

DELETE FROM irw_staging.irw_ranked WHERE list_contains($ids, run_id);
INSERT INTO irw_staging.irw_ranked SELECT * FROM irw_reranked;

DELETE FROM irw_staged_sums WHERE list_contains($ids, run_id);
INSERT INTO irw_staged_sums
{{ st.row_sums('(SELECT $collection AS collection, * FROM irw_reranked)') }};
DROP TABLE irw_reranked;

CREATE OR REPLACE TEMP TABLE irw_topics_across AS
SELECT run_id, topic, sum(n_docs)::INTEGER AS n_docs
FROM irw_staged_topics WHERE list_contains($ids, run_id) GROUP BY run_id, topic;
DELETE FROM irw_staged_topics WHERE list_contains($ids, run_id);
INSERT INTO irw_staged_topics SELECT * FROM irw_topics_across;
DROP TABLE irw_topics_across;
