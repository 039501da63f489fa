{#-
  The tables a load of run files fills batch by batch (loader._stage_runs, rank_runs.sql):
    irw_staging.irw_ranked  the ranked rows the warehouse's `runs` table will hold, in the
                       load's staging database (a file when the load has several batches,
                       see loader._attach_staging). Its docno is stored uncompressed: the
                       rows are written once and read once, and compressing the docnos
                       would make the file a third smaller (TREC-8: 107 MB against 168)
                       but writing it take 75 % more CPU (4.6 s against 2.6).
    irw_staged_topics  ranking length per (run, topic)
    irw_staged_files   the files each run came from, with their line counts
    irw_staged_sums    the ranked rows' part of each run's fingerprint (_state.sql, row_sums),
                       per batch: summed over the batches (run_parts_staged.sql)
  `batch` numbers the batch a file was read in.
-#}
CREATE OR REPLACE TABLE irw_staging.irw_ranked (
    run_id VARCHAR, topic VARCHAR, docno VARCHAR USING COMPRESSION uncompressed, rank INTEGER,
    score DOUBLE, given_rank BIGINT);
CREATE OR REPLACE TEMP TABLE irw_staged_topics (
    run_id VARCHAR, topic VARCHAR, n_docs INTEGER);
CREATE OR REPLACE TEMP TABLE irw_staged_files (
    run_id VARCHAR, filename VARCHAR, lines BIGINT, batch INTEGER);
CREATE OR REPLACE TEMP TABLE irw_staged_sums (
    collection VARCHAR, run_id VARCHAR, n_rows BIGINT, rows_sum HUGEINT);
