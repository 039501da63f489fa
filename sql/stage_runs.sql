{#-
  The tables a load of run files fills batch by batch (loader._stage_runs, rank_runs.sql):
    irw_ranked         the ranked rows the warehouse's `runs` table will hold
    irw_staged_topics  ranking length per (run, topic)
    irw_staged_files   the files each run came from, with their line counts
    irw_staged_sums    the ranked rows' part of each run's fingerprint (_state.sql, row_sums),
                       per batch: summed over the batches (run_parts_staged.sql)
  `batch` numbers the batch a file was read in.
-#}
CREATE OR REPLACE TEMP TABLE irw_ranked (
    run_id VARCHAR, topic VARCHAR, docno VARCHAR, rank INTEGER, score DOUBLE, given_rank BIGINT);
CREATE OR REPLACE TEMP TABLE irw_staged_topics (
    run_id VARCHAR, topic VARCHAR, n_docs INTEGER);
CREATE OR REPLACE TEMP TABLE irw_staged_files (
    run_id VARCHAR, filename VARCHAR, lines BIGINT, batch INTEGER);
CREATE OR REPLACE TEMP TABLE irw_staged_sums (
    collection VARCHAR, run_id VARCHAR, n_rows BIGINT, rows_sum HUGEINT);
