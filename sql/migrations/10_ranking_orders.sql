{#- Schema version 10: the default ranking order becomes trec_eval 10.0's (scores compared
    at full precision). The runs an older irw loaded under its order `trec_eval` (scores
    compared as 32-bit floats) were ranked so, and their stored ranks and scores stay as they
    are: their policy is renamed trec_eval_9, the name of that order now, and a run loaded
    under trec_eval_10 is a run of `trec_eval`. The evaluations log gains the column
    ranking_policy (the orders of the runs an evaluation scored); an older evaluation's is
    filled from the runs whose scores it stored, as they are ranked. Scores and evaluations
    gain the column ties, the tie policy: trec_eval (the stored ranking) for those stored
    before. -#}

{% macro before(columns) -%}
ALTER TABLE IF EXISTS evaluations ADD COLUMN IF NOT EXISTS ranking_policy VARCHAR;
ALTER TABLE IF EXISTS evaluations ADD COLUMN IF NOT EXISTS ties VARCHAR DEFAULT 'trec_eval';
ALTER TABLE IF EXISTS scores ADD COLUMN IF NOT EXISTS ties VARCHAR DEFAULT 'trec_eval';
{%- endmacro %}

{% macro after(columns) -%}
UPDATE run_loads
SET ranking_policy = CASE ranking_policy WHEN 'trec_eval' THEN 'trec_eval_9' ELSE 'trec_eval' END
WHERE ranking_policy IN ('trec_eval', 'trec_eval_10');
UPDATE evaluations
SET ranking_policy = o.policies
FROM (SELECT s.qrels, s.collection, s.measure,
             string_agg(DISTINCT l.ranking_policy, ', ' ORDER BY l.ranking_policy) AS policies
      FROM (SELECT DISTINCT qrels, collection, measure, run_id FROM scores) AS s
      JOIN run_loads AS l ON l.collection = s.collection AND l.run_id = s.run_id
      GROUP BY s.qrels, s.collection, s.measure) AS o
WHERE evaluations.ranking_policy IS NULL AND o.qrels = evaluations.qrels
  AND o.collection = evaluations.collection AND o.measure = evaluations.measure;
{%- endmacro %}
