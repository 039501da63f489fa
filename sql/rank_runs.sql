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
  Context `judged` (files in, scores out: engine.files_in; the files are one batch): None
  for a load, which keeps every ranked row; else a relation of judgments (topic, docno), and
  irw_ranked becomes a view of the ranked rows of judged documents over the batch's lines,
  which stay (an evaluation reads nothing else -- unjudged documents enter the measures
  through ranks and ranking lengths -- and reads it once: the ranking is computed within
  the evaluation's query, not stored first); with `by_count`, each rank counted rather than
  sorted (_ranking.sql, ranked_by_count). `sums`: take the fingerprint sums (a load).
-#}
{% import '_ranking.sql' as rk %}
{% import '_state.sql' as st %}
{% if judged %}
DROP TABLE irw_staging.irw_ranked;
CREATE VIEW irw_staging.irw_ranked AS
{% if by_count %}
{{ rk.ranked_by_count('temp.irw_staged', judged, policy) }};
{% else %}
SELECT * FROM ({{ rk.ranked('temp.irw_staged', policy) }}) AS ranked
WHERE (topic, docno) IN (SELECT topic, docno FROM {{ judged }});
{% endif %}
{% else %}
INSERT INTO irw_staging.irw_ranked
{{ rk.ranked('irw_staged', policy) }};
{% endif %}

{% if sums %}
INSERT INTO irw_staged_sums
{{ st.row_sums('(SELECT $collection AS collection, * FROM irw_staging.irw_ranked WHERE rowid >= $start)') }};
{% endif %}

INSERT INTO irw_staged_topics SELECT run_id, topic, n_docs FROM irw_batch_topics;

INSERT INTO irw_staged_files
SELECT run_id, list_extract($files, file + 1), count(*), $batch FROM irw_staged GROUP BY run_id, file;

{% if not judged %}
DROP TABLE irw_staged;
{% endif %}
DROP TABLE irw_batch_topics;
