{% import '_state.sql' as st %}
{% import '_expected.sql' as ex %}
{#- Keeping the caches (irwarehouse.engine.base, irwarehouse.state): the materialized base
    relation (irw_base, irw_base_built; the ties of its documents: irw_base_ties_built) and
    the fingerprints of what irw last wrote
    (irw_state, irw_run_state, temp.irw_session; sql/state.sql defines them). Bound: $q (a
    qrels), $ids (run ids), $fp (a runs fingerprint), $name. -#}

{# Build the base relation of the loaded qrels $q anew, as of the runs fingerprint $fp. #}
{% macro rebuild_base() -%}
{{ forget_ties() }}
DELETE FROM irw_base WHERE qrels = $q;
DELETE FROM irw_base_built WHERE qrels = $q;
INSERT INTO irw_base BY NAME SELECT * FROM irw_base_rows($q);
INSERT INTO irw_base_built VALUES ($q, current_timestamp, $fp, irw_qrels_fp($q));
{%- endmacro %}

{# The loaded qrels with a materialized base, of collection $c. #}
{% macro built_bases() -%}
SELECT b.qrels FROM irw_base_built b JOIN qrels_info i ON i.qrels = b.qrels
WHERE i.collection = $c ORDER BY b.qrels
{%- endmacro %}

{# Recompute the base rows of the runs $ids in the base of $q. #}
{% macro update_base() -%}
{{ forget_ties() }}
DELETE FROM irw_base WHERE qrels = $q AND list_contains($ids, run_id);
INSERT INTO irw_base BY NAME SELECT * FROM irw_base_rows($q) WHERE run_id IN (SELECT unnest($ids::VARCHAR[]));
{%- endmacro %}

{# Forget the base of qrels $q, or (one=false) every base. #}
{% macro forget_bases(one) -%}
DELETE FROM irw_base{% if one %} WHERE qrels = $q{% endif %};
DELETE FROM irw_base_built{% if one %} WHERE qrels = $q{% endif %};
DELETE FROM irw_base_ties_built{% if one %} WHERE qrels = $q{% endif %};
{%- endmacro %}

{# Forget that the base of $q records its ties (irw_base.tie_a, tie_n): they are recorded
   again when next needed. #}
{% macro forget_ties() -%}
DELETE FROM irw_base_ties_built WHERE qrels = $q;
{%- endmacro %}

{# Record the ties of the judged documents of the current base of $q (irw_base.tie_a, tie_n).
   A row written since is NULL, and a row kept is of a run unchanged, so its ties hold. #}
{% macro build_ties() -%}
{{ forget_ties() }}
UPDATE irw_base SET tie_a = t.a, tie_n = t.n
FROM ({{ ex.base_ties('$q') }}) AS t
WHERE irw_base.qrels = $q AND irw_base.run_id = t.run_id AND irw_base.topic = t.topic AND irw_base.rank = t.rank;
INSERT INTO irw_base_ties_built VALUES ($q);
{%- endmacro %}

{# Whether the ties of the base of $q are recorded. #}
{% macro ties_built() -%}
SELECT count(*) > 0 FROM irw_base_ties_built WHERE qrels = $q
{%- endmacro %}

{# The runs fingerprint this connection checked (or irw left). #}
{% macro set_session() -%}
CREATE OR REPLACE TEMP TABLE irw_session AS SELECT $fp::UBIGINT AS runs_fp
{%- endmacro %}

{# Forget what irw recorded of runs: of all of them (every=true), or of runs no longer loaded. #}
{% macro forget_runs(every) -%}
{% if every %}
DELETE FROM irw_run_state;
{% endif %}
DELETE FROM irw_run_state WHERE NOT EXISTS (SELECT 1 FROM run_loads l
    WHERE l.collection = irw_run_state.collection AND l.run_id = irw_run_state.run_id);
{%- endmacro %}

{# Record the runs tables' version $fp (irw_runs_fp()) as irw's own. #}
{% macro record_runs_fp() -%}
INSERT OR REPLACE INTO irw_state VALUES ('runs', $fp)
{%- endmacro %}

{# Every materialized base stands for the runs as recorded ($fp). #}
{% macro bases_current() -%}
UPDATE irw_base_built SET runs_fp = $fp
{%- endmacro %}

{# Record the judgments of qrels $q as irw wrote them, or forget them (gone=true, with what
   it lacked of its root). #}
{% macro record_qrels(gone) -%}
{% if gone %}
DELETE FROM irw_derived_removed WHERE qrels = $q;
DELETE FROM irw_derived_built WHERE qrels = $q;
DELETE FROM irw_state WHERE name = 'qrels:' || $q;
{% else %}
INSERT OR REPLACE INTO irw_state VALUES ('qrels:' || $q, irw_qrels_fp($q))
{% endif %}
{%- endmacro %}

{# Record what each qrels of $qs, derived from the loaded qrels $root, lacks of it
   (irw_derived_built, irw_derived_removed), if it is a subset of the root with the same
   grades: their judgments joined with the root's once. #}
{% macro record_derived() -%}
DELETE FROM irw_derived_removed WHERE list_contains($qs, qrels);
DELETE FROM irw_derived_built WHERE list_contains($qs, qrels);
CREATE OR REPLACE TEMP TABLE irw_derived_held AS
SELECT d.qrels, j.jid FROM qrels AS d
LEFT JOIN irw_judgment_ids($root) AS j ON j.topic = d.topic AND j.docno = d.docno AND j.rel = d.rel
WHERE list_contains($qs, d.qrels) AND d.rel >= 0;
INSERT INTO irw_derived_built
SELECT n.q, $root, irw_qrels_fp(n.q), irw_qrels_fp($root) FROM (SELECT unnest($qs::VARCHAR[]) AS q) AS n
WHERE n.q <> $root AND NOT EXISTS (SELECT 1 FROM irw_derived_held AS h WHERE h.qrels = n.q AND h.jid IS NULL);
INSERT INTO irw_derived_removed
SELECT b.qrels, j.jid, j.topic, j.rel FROM irw_derived_built AS b CROSS JOIN irw_judgment_ids($root) AS j
WHERE list_contains($qs, b.qrels)
  AND NOT EXISTS (SELECT 1 FROM irw_derived_held AS h WHERE h.qrels = b.qrels AND h.jid = j.jid);
DROP TABLE irw_derived_held;
{%- endmacro %}

{# The derived qrels with no record of what they lack of their root, as irw last recorded
   them (a warehouse written before irw kept such records). #}
{% macro unrecorded_derived() -%}
SELECT i.qrels FROM qrels_info AS i JOIN irw_state AS s ON s.name = 'qrels:' || i.qrels
WHERE i.parent IS NOT NULL AND i.qrels NOT IN (SELECT qrels FROM irw_derived_built)
  AND s.fp = irw_qrels_fp(i.qrels)
ORDER BY i.qrels
{%- endmacro %}


{# The qrels of $qrels whose record of what they lack of their root $root stands: both
   fingerprints as recorded (one scan of their judgments). #}
{% macro recorded_subsets() -%}
WITH fp AS (
    SELECT qrels, {{ st.judgments_fp('qj') }} AS fp FROM qrels AS qj
    WHERE list_contains($qrels, qrels) OR qrels = $root GROUP BY qrels
)
SELECT b.qrels FROM irw_derived_built AS b
JOIN fp AS f ON f.qrels = b.qrels AND f.fp = b.qrels_fp
JOIN fp AS r ON r.qrels = b.root AND r.fp = b.root_fp
WHERE b.root = $root AND list_contains($qrels, b.qrels)
{%- endmacro %}

{# The derived qrels whose root is the loaded qrels $q. #}
{% macro descendants() -%}
SELECT qrels FROM qrels_info WHERE parent IS NOT NULL AND irw_root_qrels(qrels) = $q ORDER BY qrels
{%- endmacro %}
