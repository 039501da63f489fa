{#- The base relation of the measure engine, defined once.

  running_sums(rows, key): `rows` is a query yielding the judged retrieved documents
  (run_id, topic, rank, <key>, grade >= 0), `key` naming the column that identifies the
  document (docno, or jid in the materialized cache). The result adds, per (run, topic) in
  rank order:
    crank     condensed rank: position among the judged documents
    c_rel     relevant documents (grade >= 1) so far, this one included
    cg        cumulative gain so far under the default gain map (gain = grade for grade >= 1)
  The judged non-relevant documents so far are crank - c_rel (the `c_nonrel` columns).
  Unjudged documents are absent: they add nothing to any running sum, and the measures that
  need them (RBPres, Judged, FirstUnjudged, NumRet) get them from ranks and ranking lengths.
-#}
{% import '_dialect.sql' as d %}
{% macro running_sums(rows, key='docno') -%}
SELECT run_id, topic, rank, {{ key }}, grade,
       row_number() OVER (PARTITION BY run_id, topic ORDER BY rank)::INTEGER AS crank,
       ({{ d.running_count('grade >= 1') }})::INTEGER AS c_rel,
       {{ d.running_sum('CASE WHEN grade >= 1 THEN grade ELSE 0 END') }} AS cg
FROM ({{ rows }}) AS judged_rows
{%- endmacro %}

{# Judged retrieved documents of every run under qrels `q` (an SQL expression). #}
{% macro judged_rows(q) -%}
SELECT r.run_id, r.topic, r.rank, r.docno, j.rel AS grade
FROM runs r
JOIN (SELECT topic, docno, rel FROM qrels WHERE qrels = {{ q }} AND rel >= 0) AS j
  ON j.topic = r.topic AND j.docno = r.docno
{%- endmacro %}

{# The same, the document identified by its judgment id (see irw_judgment_ids). #}
{% macro judged_ids(q) -%}
SELECT r.run_id, r.topic, r.rank, j.jid, j.rel AS grade
FROM runs r
JOIN irw_judgment_ids({{ q }}) AS j ON j.topic = r.topic AND j.docno = r.docno
{%- endmacro %}
