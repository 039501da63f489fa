{#-
  Rank a batch's checked staged run lines (irw_staged, with its ranking lengths in
  irw_batch_topics) under the chosen policy, each (run, topic) on its own, and append them to
  the load's tables (stage_runs.sql: the ranked rows to irw_staging.irw_ranked); then drop
  the batch's lines. Runs in the staging connection, before the warehouse is locked.
  Context: policy (a policy name, see _ranking.sql). Bound: $batch (the batch's number),
  $files (its files, which the staged `file` numbers), $start (how many rows irw_ranked
  held before; rows are only appended to it until every batch is ranked, so the batch's
  rows are those of rowid >= $start), $collection.
  The fingerprint sums of the batch's rows are taken while they are fresh, not at the end
  in one more pass over all of irw_ranked.
  Context `judged` (files in, scores out: engine.files_in): None for a load, which keeps
  every ranked row; else a relation of judgments (topic, docno), and only the ranked rows of
  judged documents are kept (an evaluation reads nothing else: unjudged documents enter the
  measures through ranks and ranking lengths); with `by_count`, each rank counted rather than
  sorted (_ranking.sql, ranked_by_count). `sums`: take the fingerprint sums (a load).
-#}
{% import '_ranking.sql' as rk %}
{% import '_state.sql' as st %}
INSERT INTO irw_staging.irw_ranked
{% if judged and by_count %}
{{ rk.ranked_by_count('irw_staged', judged, policy) }};
{% elif judged %}
SELECT * FROM ({{ rk.ranked('irw_staged', policy) }}) AS ranked
WHERE (topic, docno) IN (SELECT topic, docno FROM {{ judged }});
{% else %}
{{ rk.ranked('irw_staged', policy) }};
{% endif %}

{% if sums %}
INSERT INTO irw_staged_sums
{{ st.row_sums('(SELECT $collection AS collection, * FROM irw_staging.irw_ranked WHERE rowid >= $start)') }};
{% endif %}

INSERT INTO irw_staged_topics SELECT run_id, topic, n_docs FROM irw_batch_topics;

INSERT INTO irw_staged_files
SELECT run_id, list_extract($files, file + 1), count(*), $batch FROM irw_staged GROUP BY run_id, file;

DROP TABLE irw_staged;
DROP TABLE irw_batch_topics;
