{#-
  The measure engine: every requested measure for every selected run and topic, in one
  aggregate pass over the base relation (judged retrieved documents with running sums).
  The same template is the body of the measure table macros (schema `measure`, see
  measure_macros.sql), so the engine and SQL users compute with one definition.

  P: the SQL expressions for the inputs -- bound parameters for the engine ($qrels, $runs,
  ...), the macro's parameters in a measure macro:
    P.qrels        the qrels name
    P.topic_qrels  the qrels defining the topic set
    P.base_qrels   the root qrels whose materialized base a derived qrels is a subset of
    P.collection   the collection whose runs are evaluated
    P.runs         a list of run ids; P.all_runs: true when every run of the collection is
                   selected
  Context (built by irwarehouse/engine/rendering.py from validated values only):
    measures     one entry per measure: id, label (canonical name), module (template file)
                 and the SQL fragments its file uses (pos, within, rel, c_rel, R, gain, ...)
    thresholds   relevance thresholds in use: value, key, R, N, c_rel, c_nonrel, window
    gainsets     gain maps in use: key, expr, cg (column), window (cumulative gain needed)
    topics       topic-set policy: qrels | run | all
    topic_threshold  relevance threshold defining the 'qrels' topic set
    max_docs     trec_eval -M: only ranks <= max_docs count (None: all)
    window_guard None for the engine; in a measure macro the SQL condition (on its parameters)
                 under which the running sums of the thresholds and gains marked `window` are
                 computed, rather than taken from the base (threshold 1, default gains)
    sources      where the base rows come from (see base_rows in _base.sql): one of cache,
                 subset, fresh, rerank, ties; or the first four in a measure macro, each guarded
                 by a condition on the warehouse's state (_state.sql) so that one is used
    ties         with source ties: the tie policy's sort keys `within` and whether the runs
                 are ranked afresh first (`rerank`); else None (each tie in the stored order)

  Each sql/measures/<Name>.sql defines macros over one row of the base:
    aggs(m)      aggregate expressions per (run, topic), aliased <m.id>_<x>
    value(m)     the per-topic score from those aggregates and the per-topic context:
                 n (ranking length), n_judged, R/N columns of the thresholds, gmax_g,
                 total_<key> (ideal total gain), len_<key> (m.ideal_len: the length of the
                 ideal ranking). Aggregates and ideal values are NULL where a run has no
                 judged document for the topic: value(m) coalesces them.
  and optionally (the hooks; a measure uses those it needs, and only those are computed)
    ideal(m)     aggregates per topic over its ideal ranking (m.ideal_ranking: topic, gain,
                 irank, cgi -- the ideal's running gain), available to value(m)
    ideal_rows(m)  a query over m.ideal_ranking giving (topic, irank, v): a value per ideal
                 position (window functions over the ideal allowed). Each base row then has
                 it at its position as m.iv, from the ideal's last position beyond its end;
                 m.ipos says which position (least(pos, ideal length); NULL: no ideal)
    running(m)   a window function over the rows of one ranking (PARTITION BY run_id, topic;
                 d.running_sum orders by rank), available to aggs(m) per row as m.run
    many, many_aggs(m)  how many derived qrels are evaluated in one pass (evaluate_many.sql)
  and may use, when the catalogue entry declares them in `needs` (measures.NEEDS):
    m.top_grade      the largest grade judged in the qrels (one value per qrels)
    m.pool_unjudged  per row, the documents ranked above it that the qrels lists with a
                     grade below 0 (in the pool, not assessed); 0 for a condensed list
  The measure's own parameters are m.<name> (a list parameter through m.list_count(name,
  condition) and m.list_length(name)). m.by_cutoff(at_k, whole) and m.by_judged(condensed,
  full) choose between two SQL forms by the cut-off and the condensed flag (at render time,
  or in SQL in a measure macro).
-#}
{% import '_dialect.sql' as d %}
{% import '_base.sql' as b %}
{% import '_state.sql' as st %}
{% set mods = {} %}
{% for m in measures %}{% set _ = mods.update({m.id: m.module}) %}{% endfor %}
WITH
{% set auto = sources | length > 1 %}
{% if auto %}
{{ st.guard_ctes(P, checks) }},
{% endif %}
rt AS (
{% if auto %}
    {{ b.ranking_lengths(P.collection, False, st.guards.ranked) | indent(4) }}
    UNION ALL
    {{ b.ranking_lengths(P.collection, True, st.guards.rerank) | indent(4) }}
{% else %}
    {{ b.ranking_lengths(P.collection, 'rerank' in sources) | indent(4) }}
{% endif %}
),
sel AS (
{% if P.all_runs %}
    SELECT DISTINCT run_id FROM rt WHERE {{ P.runs }} IS NULL OR {{ d.list_contains(P.runs, 'run_id') }}
{% else %}
    SELECT DISTINCT {{ d.unnest_list(P.runs) }} AS run_id
{% endif %}
),
judg AS (
    SELECT qj.topic, qj.rel AS grade FROM qrels AS qj WHERE qj.qrels = {{ P.qrels }} AND qj.rel >= 0
),
{% set needed = [] %}
{% for m in measures %}{% set _ = needed.extend(m.needs) %}{% endfor %}
{% if 'top_grade' in needed %}
qtop AS (
    -- m.top_grade: the largest grade judged in the qrels
    SELECT greatest(coalesce(max(grade), 0), 0) AS top_grade FROM judg
),
{% endif %}
tstats AS (
    SELECT topic
{% for t in thresholds %}
         , count(*) FILTER (WHERE grade >= {{ t.value }}) AS {{ t.R }}
         , count(*) FILTER (WHERE grade < {{ t.value }}) AS {{ t.N }}
{% endfor %}
    FROM judg GROUP BY topic
),
gstats AS (
    -- g_max of the default gain map (gain = grade): the largest grade judged for the topic
    -- in the qrels defining the topic set (trec_eval's normalization of rbp)
    SELECT qj.topic, greatest(max(qj.rel), 0) AS gmax_g
    FROM qrels AS qj WHERE qj.qrels = {{ P.topic_qrels }} AND qj.rel >= 0 GROUP BY qj.topic
),
{% for g in gainsets %}
ideal_{{ g.key }} AS (
    SELECT topic, gain, irank,
           sum(gain) OVER (PARTITION BY topic ORDER BY irank ROWS UNBOUNDED PRECEDING) AS cgi
    FROM (SELECT topic, gain,
                 row_number() OVER (PARTITION BY topic ORDER BY gain DESC) AS irank
          FROM (SELECT topic, {{ g.expr }} AS gain FROM judg) AS gj
          WHERE gain > 0) AS ranked
),
itot_{{ g.key }} AS (
    SELECT topic, max(cgi) AS total_{{ g.key }}, count(*) AS len_{{ g.key }}
{% for m in measures if m.gkey == g.key %}
{% set mod = m.module %}
{% if mod.ideal is defined %}
         , {{ mod.ideal(m) | indent(9) }}
{% endif %}
{% endfor %}
    FROM ideal_{{ g.key }} GROUP BY topic
),
{% endfor %}
{% for m in measures if m.module.ideal_rows is defined %}
{{ m.id }}_ir AS (
    {{ m.module.ideal_rows(m) | indent(4) }}
),
{% endfor %}
topicset AS (
{% if topics == 'qrels' %}
    SELECT s.run_id, t.topic
    FROM sel s CROSS JOIN (
        SELECT qj.topic FROM qrels AS qj WHERE qj.qrels = {{ P.topic_qrels }} AND qj.rel >= 0
        GROUP BY qj.topic HAVING count(*) FILTER (WHERE qj.rel >= {{ topic_threshold | num }}) >= 1
    ) AS t
{% elif topics == 'all' %}
    SELECT s.run_id, t.topic
    FROM sel s CROSS JOIN (SELECT DISTINCT qj.topic FROM qrels AS qj WHERE qj.qrels = {{ P.topic_qrels }}) AS t
{% else %}
    SELECT rt.run_id, rt.topic
    FROM rt
    WHERE rt.run_id IN (SELECT run_id FROM sel)
      AND rt.topic IN (SELECT DISTINCT qj.topic FROM qrels AS qj WHERE qj.qrels = {{ P.topic_qrels }})
{% endif %}
),
brel AS (
    {{ b.base_rows(sources, P, 'sel', st.guards if auto else {}, ties) | indent(4) }}
),
{% set unassessed = 'pool_unjudged' in needed %}
{% if unassessed %}
pu AS (
    -- the retrieved documents the qrels lists with a grade below 0 (pooled, not assessed)
{% if auto %}
    {{ b.unassessed_rows(P, 'sel', False, st.guards.ranked) | indent(4) }}
    UNION ALL
    {{ b.unassessed_rows(P, 'sel', True, st.guards.rerank) | indent(4) }}
{% else %}
    {{ b.unassessed_rows(P, 'sel', 'rerank' in sources, ties=ties) | indent(4) }}
{% endif %}
),
pu_c AS (
    -- m.pool_unjudged: per base row of a ranking with such documents, how many are above it
    SELECT run_id, topic, rank, c_pu
    FROM (SELECT run_id, topic, rank, src, {{ d.running_count('src = 1') }} AS c_pu
          FROM (SELECT x.run_id, x.topic, x.rank, 0 AS src FROM brel AS x
                WHERE EXISTS (SELECT 1 FROM pu WHERE pu.run_id = x.run_id AND pu.topic = x.topic)
                UNION ALL
                SELECT run_id, topic, rank, 1 AS src FROM pu) AS both_rows) AS counted
    WHERE src = 0
),
{% endif %}
brows AS (
{% if window_guard %}
    -- a measure macro called with the default threshold and gains: the base's running sums
    SELECT brel.*, crank - c_rel AS c_nonrel
{% for t in thresholds if t.window %}
         , c_rel AS {{ t.c_rel }}, crank - c_rel AS {{ t.c_nonrel }}
{% endfor %}
{% for g in gainsets if g.window %}
         , cg AS {{ g.cg }}
{% endfor %}
    FROM brel WHERE NOT {{ window_guard }}
    UNION ALL
{% endif %}
    SELECT brel.*, crank - c_rel AS c_nonrel
{% for t in thresholds if t.window %}
         , {{ d.running_count('grade >= ' ~ t.value) }} AS {{ t.c_rel }}
         , {{ d.running_count('grade < ' ~ t.value) }} AS {{ t.c_nonrel }}
{% endfor %}
{% for g in gainsets if g.window %}
         , {{ d.running_sum(g.expr) }} AS {{ g.cg }}
{% endfor %}
    FROM brel{% if window_guard %} WHERE {{ window_guard }}{% endif %}

),
{% set at_ideal = measures | selectattr('module.ideal_rows', 'defined') | list %}
rows AS (
    SELECT b.*
{% for t in thresholds %}
         , coalesce(ts.{{ t.R }}, 0) AS {{ t.R }}, coalesce(ts.{{ t.N }}, 0) AS {{ t.N }}
{% endfor %}
{% if unassessed %}
         , pu_c.c_pu
{% endif %}
{% for m in at_ideal %}
         , {{ m.id }}_i.v AS {{ m.iv }}, {{ m.id }}_i.irank AS {{ m.ipos }}
{% endfor %}
    FROM brows b
    LEFT JOIN tstats ts ON ts.topic = b.topic
{% if unassessed %}
    LEFT JOIN pu_c ON pu_c.run_id = b.run_id AND pu_c.topic = b.topic AND pu_c.rank = b.rank
{% endif %}
{% for m in at_ideal %}
    LEFT JOIN itot_{{ m.gkey }} AS {{ m.id }}_t ON {{ m.id }}_t.topic = b.topic
    LEFT JOIN {{ m.id }}_ir AS {{ m.id }}_i
      ON {{ m.id }}_i.topic = b.topic AND {{ m.id }}_i.irank = least({{ m.pos_in('b') }}, {{ m.id }}_t.len_{{ m.gkey }})
{% endfor %}
{% if max_docs %}
    WHERE b.rank <= {{ max_docs | num }}
{% endif %}
),
{% set running = measures | selectattr('module.running', 'defined') | list %}
{% if running %}
wrows AS (
    -- the measures' running(m) windows over each ranking
    SELECT rows.*
{% for m in running %}
         , {{ m.module.running(m) }} AS {{ m.run }}
{% endfor %}
    FROM rows
),
{% endif %}
agg AS (
    SELECT run_id, topic, count(*) AS n_judged
{% for m in measures %}
         , {{ m.module.aggs(m) }}
{% endfor %}
    FROM {{ 'wrows' if running else 'rows' }} GROUP BY run_id, topic
),
{% call b.topic_context(max_docs, thresholds, gainsets) %}
        LEFT JOIN agg USING (run_id, topic)
{%- endcall %},
wide AS (
    SELECT run_id, topic
{% for m in measures %}
         , {{ d.cast(m.module.value(m), 'DOUBLE') }} AS {{ m.id }}
{% endfor %}
    FROM ctx
)
{% set columns = [] %}
{% for m in measures %}{% set _ = columns.append([m.label, m.id]) %}{% endfor %}
{{ d.unpivot('wide', ['run_id', 'topic'], columns) }}
