{#-
  Rank validated staged run lines (irw_staged) under the chosen policy, each (run, topic)
  on its own: the rows the warehouse's `runs` table will hold. Runs in the staging
  connection, before the warehouse is locked. Context: policy (a policy name, see
  _ranking.sql).
-#}
{% import '_ranking.sql' as rk %}
CREATE OR REPLACE TEMP TABLE irw_ranked AS
SELECT run_id, topic, docno,
       row_number() OVER (PARTITION BY run_id, topic ORDER BY {{ rk.order_by(policy) }})::INTEGER AS rank,
       score, given_rank
FROM irw_staged;
