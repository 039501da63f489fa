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
                 are ranked afresh first (`rerank`); or, for tie policy expected, `expected`
                 (true), `rerank` and `cached` (see _expected.sql's rows): the rows are then
                 _expected.sql's, the judged documents alone in their tie (aggregated with
                 aggs(m)) and a row per position of each tie holding one (with
                 expected_aggs(m)), the two sums added; else None (each tie in the stored
                 order)

  Each sql/measures/<Name>.sql defines macros over one row of the base:
    aggs(m)      aggregate expressions per (run, topic), aliased <m.id>_<x> (none: a measure
                 computed from its hooks alone)
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
    prepare(m)   select-list items over one base row, aliased <m.id>_<x>, computed before
                 running(m): plain expressions and window functions over the rows of one
                 ranking (a gain of the measure's own and its running sum), available to
                 running(m) and aggs(m) as columns
    running(m)   a window function over the rows of one ranking (PARTITION BY run_id, topic;
                 d.running_sum orders by rank), available to aggs(m) per row as m.run
    many, many_aggs(m)  how many derived qrels are evaluated in one pass (evaluate_many.sql)
    expected_every_position  set where expected_aggs(m) reads the judged fraction (see
                 _expected.sql's rows)
    tie_aggs(m), tie_holds(m)  aggregates over a tie's judged documents that expected_aggs(m)
                 reads at the tie's places, and when a tie holding no relevant document at the
                 thresholds needs them (_expected.sql's rows)
    expected_aggs(m)  the aggregates of aggs(m), each the exact expectation over every
                 ordering of the ties (tie policy expected), over _expected.sql's rows of
                 the ties' positions with its expectations per position. Every aggregate of
                 such a measure is a sum (fsum, count), and its score value(m) of their
                 expectations, so that the documents alone in their tie add their aggs(m);
                 expected_cutoff = false where the expectation holds for the whole ranking
                 only. A measure without expected_aggs has no exact expectation built: the
                 engine refuses it.
  and may use, when the catalogue entry declares them in `needs` (measures.NEEDS):
    m.top_grade      the largest grade judged in the qrels (one value per qrels)
    m.pool_unjudged  per row, the documents ranked above it that the qrels lists with a
                     grade below 0 (in the pool, not assessed); 0 for a condensed list
    (`intents`: a qrels of kind diversity, table qrels_intents; relevant to an intent:
    grade >= 1, as ndeval)
    m.intent_counts  per row, a list: for each intent the document is relevant to (in the
                     order of the intents), how many documents ranked above it are relevant
                     to that intent (NULL: relevant to none)
    m.intent_ap      per row, the sum over those intents of (count + 1) / the intent's
                     relevant documents (an intent's AP is the sum of its terms / rank)
    m.n_intents      per topic, its intents with a relevant document (ndeval's actual
                     subtopics; the others are ignored), in value(m)
    (`intent_ideal`, with `intents`: the ideal ranking of a diversity topic)
    intent_ideal(m)  aggregates per topic over rows (topic, irank, m.ideal_gain): ndeval's
                     greedy ideal ranking at intent-aware redundancy m.alpha (m.ideal_gain
                     NULL on rows of another ranking: aggregates skip them), each position
                     taking the document of largest gain sum_j (1 - alpha)^(count of intent j
                     above), a tie to the larger docno, until no relevant document is left
                     (or m.ideal_depth positions, if the module defines ideal_depth(m));
                     available to value(m)
    m.grade_above    per row of grade >= 1, the documents of the topic the qrels judges at
                     a higher grade (where the ideal ranking's documents of its grade begin)
    strata           sampled judgments (a prels qrels, table qrels_strata; sample_eval's
                     estimators, Yilmaz, Kanoulas & Aslam SIGIR 2008). The measure's
                     strata_aggs(m) aggregates per (run, topic) over `sp_rows`: the documents
                     of a ranking the prels list (sampled or not) at ranks <= sample_depth
                     (sample_eval's 1,000, or max_docs if smaller), each with
                       rank, grade (-1: pooled, not sampled), stratum;
                       s_weight   the inverse of its stratum's inclusion probability: the
                                  stratum's size over its sampled documents (NULL: none sampled);
                       s_ret_weight  the same over the stratum's documents in this ranking
                                  (within sample_depth): retrieved over retrieved and sampled;
                       est, est_above  the estimated relevant retrieved at and above the row,
                                  and above it: the sum over strata of
                                  docs (relevant + 1e-5) / (sampled + 3e-5), counts of the
                                  stratum's documents in the ranking so far;
                       n_ranked   the ranking's length within sample_depth;
                     its strata_query(m), a query over sp_rows and sp_topics giving
                     (run_id, topic, <m.id>_sq), one value per ranking with rows in sp_rows;
                     and value(m) has those values, and per topic est_R (the estimated number of relevant
                     documents: the sum over sampled strata of relevant x size / sampled) and
                     est_idcg (the DCG, gain = grade, of the estimated ideal ranking: each
                     grade's estimated count rounded half up, grades in descending order
                     of their text, within sample_depth -- sample_eval adds one more
                     position for each grade that starts beyond it); NULL where the topic has
                     no sampled judgments.
  The measure's own parameters are m.<name> (a list parameter through m.list_count(name,
  condition) and m.list_length(name)). m.by_cutoff(at_k, whole) and m.by_judged(condensed,
  full) choose between two SQL forms by the cut-off and the condensed flag (at render time,
  or in SQL in a measure macro).
-#}
{% import '_dialect.sql' as d %}
{% import '_base.sql' as b %}
{% import '_state.sql' as st %}
{% import '_diversity.sql' as dv %}
{% import '_expected.sql' as ex %}
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
{% if 'intents' in needed %}
ia_n AS (
    -- the topic's intents with a relevant document, and how many each has (ndeval's nrelSub)
    SELECT qi.topic, qi.intent, count(*) AS nrel
    FROM qrels_intents AS qi WHERE qi.qrels = {{ P.qrels }} AND qi.rel >= 1 GROUP BY qi.topic, qi.intent
),
ia_t AS (
    -- m.n_intents
    SELECT topic, count(*) AS n_intents FROM ia_n GROUP BY topic
),
{% endif %}
{% set ideal_ia = measures | selectattr('module.intent_ideal', 'defined') | list %}
{% if ideal_ia %}
{{ dv.ideal_rankings(ideal_ia, P) }}
{% endif %}
{% if 'grade_above' in needed %}
gabove AS (
    -- m.grade_above: per topic and grade >= 1, the documents judged at a higher grade
    SELECT topic, grade, sum(c) OVER (PARTITION BY topic ORDER BY grade DESC ROWS UNBOUNDED PRECEDING) - c AS c_above
    FROM (SELECT topic, grade, count(*) AS c FROM judg WHERE grade >= 1 GROUP BY topic, grade) AS per_grade
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
{% set expected = ties is not none and ties.get('expected', False) %}
brel AS {{ d.not_materialized() if expected }}(
{% if auto %}
    -- a measure macro: the base rows of the source irw_flags chose (_base.sql's measure_base)
    SELECT * FROM irw_measure_base({{ P.qrels }}, {{ P.collection }}, (SELECT list(run_id) FROM sel),
                                   (SELECT src FROM irw_flags), (SELECT root FROM irw_flags))
{% else %}
    {{ b.base_rows(sources, P, 'sel', {}, none if expected else ties, expected and ties.cached) | indent(4) }}
{% endif %}
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
{% if 'intents' in needed %}
ia_l AS (
    -- the retrieved documents' relevant intents
{% if auto %}
    {{ b.intent_rows(P, 'sel', False, st.guards.ranked) | indent(4) }}
    UNION ALL
    {{ b.intent_rows(P, 'sel', True, st.guards.rerank) | indent(4) }}
{% else %}
    {{ b.intent_rows(P, 'sel', 'rerank' in sources) | indent(4) }}
{% endif %}
),
{{ dv.intent_counts() }}
{% endif %}
{% set sampled = 'strata' in needed %}
{% if sampled %}
{% set sample_depth = [max_docs or 1000, 1000] | min %}
{% set e1, e3 = 0.00001 | num, 0.00003 | num %}
sp_strata AS (
    -- per topic and stratum: its documents, those sampled, those sampled and relevant
    SELECT topic, stratum, count(*) AS n_all, sum(CASE WHEN rel >= 0 THEN 1 ELSE 0 END) AS n_sampled,
           sum(CASE WHEN rel > 0 THEN 1 ELSE 0 END) AS n_rel
    FROM qrels_strata WHERE qrels = {{ P.qrels }} GROUP BY topic, stratum
),
sp_grades AS (
    -- the estimated documents of each grade >= 1, rounded half up, placed in the ideal
    -- ranking after the grades above it (by their text, descending)
    SELECT topic, grade, cnt,
           coalesce(sum(cnt) OVER (PARTITION BY topic ORDER BY {{ d.cast('grade', 'VARCHAR') }} DESC
                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS start
    FROM (SELECT g.topic, g.grade, floor(sum({{ d.div('g.cnt * c.n_all', 'c.n_sampled') }}) + {{ 0.5 | num }}) AS cnt
          FROM (SELECT topic, stratum, rel AS grade, count(*) AS cnt FROM qrels_strata
                WHERE qrels = {{ P.qrels }} AND rel > 0 GROUP BY topic, stratum, rel) AS g
          JOIN sp_strata AS c ON c.topic = g.topic AND c.stratum = g.stratum
          GROUP BY g.topic, g.grade) AS counted
),
sp_positions AS (
    SELECT a.x + 10 * b.x + 100 * c.x + 1 AS r
    FROM (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS a(x)
    CROSS JOIN (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS b(x)
    CROSS JOIN (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS c(x)
),
sp_topics AS (
    SELECT s.topic, s.est_R, coalesce(i.est_idcg, 0) AS est_idcg
    FROM (SELECT topic, sum(CASE WHEN n_sampled > 0 THEN {{ d.div('n_rel * n_all', 'n_sampled') }} ELSE 0 END) AS est_R
          FROM sp_strata GROUP BY topic) AS s
    LEFT JOIN (SELECT topic, {{ d.fsum() }}(v) AS est_idcg
               FROM (SELECT g.topic, {{ d.div('g.grade', '(ln(x.r + 1) / ln(2))') }} AS v
                     FROM sp_grades AS g JOIN sp_positions AS x
                       ON x.r > g.start AND x.r <= least(g.start + g.cnt, {{ sample_depth | num }})
                     UNION ALL
                     SELECT topic, {{ d.div('grade', '(ln(start + 2) / ln(2))') }} AS v
                     FROM sp_grades WHERE start >= {{ sample_depth | num }} AND cnt >= 1) AS terms
               GROUP BY topic) AS i ON i.topic = s.topic
),
sp_ranked AS (
{% if auto %}
    {{ b.sampled_rows(P, 'sel', sample_depth | num, False, st.guards.ranked) | indent(4) }}
    UNION ALL
    {{ b.sampled_rows(P, 'sel', sample_depth | num, True, st.guards.rerank) | indent(4) }}
{% else %}
    {{ b.sampled_rows(P, 'sel', sample_depth | num, 'rerank' in sources) | indent(4) }}
{% endif %}
),
sp_counted AS (
    -- per row, its stratum's documents, sampled and relevant at and above it in the ranking,
    -- and in the whole ranking
    SELECT x.*, {{ d.div('c.n_all', 'nullif(c.n_sampled, 0)') }} AS s_weight,
           {{ d.div('count(*) OVER (PARTITION BY run_id, x.topic, x.stratum)',
                    'nullif(sum(CASE WHEN grade >= 0 THEN 1 ELSE 0 END) OVER (PARTITION BY run_id, x.topic, x.stratum), 0)') }} AS s_ret_weight,
           {{ d.running_count('TRUE', 'rank', 'run_id, x.topic, x.stratum') }} AS k_docs,
           {{ d.running_count('grade >= 0', 'rank', 'run_id, x.topic, x.stratum') }} AS k_sampled,
           {{ d.running_count('grade > 0', 'rank', 'run_id, x.topic, x.stratum') }} AS k_rel
    FROM sp_ranked AS x JOIN sp_strata AS c ON c.topic = x.topic AND c.stratum = x.stratum
),
sp_rows AS (
    -- est: the running sum of each row's change of its stratum's term
    SELECT z.run_id, z.topic, rank, stratum, grade, s_weight, s_ret_weight, est, est - step AS est_above,
           least(rt.n_docs, {{ sample_depth | num }}) AS n_ranked
    FROM (SELECT y.*, {{ d.running_fsum('step') }} AS est
          FROM (SELECT sp_counted.*,
                       {{ d.div('k_docs * (k_rel + ' ~ e1 ~ ')', 'k_sampled + ' ~ e3) }}
                       - {{ d.div('(k_docs - 1) * (k_rel - (CASE WHEN grade > 0 THEN 1 ELSE 0 END) + ' ~ e1 ~ ')',
                                  'k_sampled - (CASE WHEN grade >= 0 THEN 1 ELSE 0 END) + ' ~ e3) }} AS step
                FROM sp_counted) AS y) AS z
    JOIN rt ON rt.run_id = z.run_id AND rt.topic = z.topic
),
{% for m in measures if m.module.strata_query is defined %}
{{ m.id }}_sq AS (
    {{ m.module.strata_query(m) | indent(4) }}
),
{% endfor %}
sp_agg AS (
    SELECT run_id, topic
{% for m in measures if m.module.strata_aggs is defined %}
         , {{ m.module.strata_aggs(m) }}
{% endfor %}
    FROM sp_rows GROUP BY run_id, topic
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
{% if expected %}
{{ ex.rows(P, 'sel', thresholds, gainsets, ties,
           measures | selectattr('module.expected_every_position', 'defined') | list | length > 0,
           measures | selectattr('module.running', 'defined') | list,
           measures | selectattr('module.tie_aggs', 'defined') | list) }},
{% endif %}
{% set at_ideal = measures | selectattr('module.ideal_rows', 'defined') | list %}
{% for name, source in ([('rows_alone', 'x_alone')] if expected else []) + [('rows', 'x_rows' if expected else 'brows')] %}
{{ name }} AS (
    SELECT b.*
{% for t in thresholds %}
         , coalesce(ts.{{ t.R }}, 0) AS {{ t.R }}, coalesce(ts.{{ t.N }}, 0) AS {{ t.N }}
{% endfor %}
{% if unassessed %}
         , pu_c.c_pu
{% endif %}
{% if 'intents' in needed %}
         , ia_r.ia_counts, ia_r.ia_ap
{% endif %}
{% if 'grade_above' in needed %}
         , ga.c_above
{% endif %}
{% for m in at_ideal %}
         , {{ m.id }}_i.v AS {{ m.iv }}, {{ m.id }}_i.irank AS {{ m.ipos }}
{% endfor %}
    FROM {{ source }} b
    LEFT JOIN tstats ts ON ts.topic = b.topic
{% if unassessed %}
    LEFT JOIN pu_c ON pu_c.run_id = b.run_id AND pu_c.topic = b.topic AND pu_c.rank = b.rank
{% endif %}
{% if 'intents' in needed %}
    LEFT JOIN ia_r ON ia_r.run_id = b.run_id AND ia_r.topic = b.topic AND ia_r.rank = b.rank
{% endif %}
{% if 'grade_above' in needed %}
    LEFT JOIN gabove ga ON ga.topic = b.topic AND ga.grade = b.grade
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
{% endfor %}
{# (tie policy expected: _expected.sql's rows carry the running windows; no measure it
   computes prepares its rows) #}
{% set prepared = [] if expected else measures | selectattr('module.prepare', 'defined') | list %}
{% if prepared %}
prows AS (
    -- the measures' prepare(m) items over each row
    SELECT rows.*
{% for m in prepared %}
         , {{ m.module.prepare(m) | indent(9) }}
{% endfor %}
    FROM rows
),
{% endif %}
{% set running = [] if expected else measures | selectattr('module.running', 'defined') | list %}
{% if running %}
wrows AS (
    -- the measures' running(m) windows over each ranking
    SELECT {{ 'prows' if prepared else 'rows' }}.*
{% for m in running %}
         , {{ m.module.running(m) }} AS {{ m.run }}
{% endfor %}
    FROM {{ 'prows' if prepared else 'rows' }}
),
{% endif %}
{% if expected %}
agg_alone AS (
    -- the judged documents alone in their tie: each adds what it adds in every ordering
    SELECT run_id, topic, count(*) AS n_judged
{% for m in measures if m.module.aggs is defined %}
         , {{ m.module.aggs(m) }}
{% endfor %}
    FROM rows_alone GROUP BY run_id, topic
),
agg_tied AS (
    -- the positions of the ties: the expectations over their orderings
    SELECT run_id, topic, sum(x_judged) AS n_judged
{% for m in measures if m.module.aggs is defined %}
         , {{ m.module.expected_aggs(m) }}
{% endfor %}
    FROM rows GROUP BY run_id, topic
),
agg AS (
    -- every expected aggregate is a sum: the two parts add up
    SELECT run_id, topic, sum(COLUMNS(* EXCLUDE (run_id, topic)))
    FROM (SELECT * FROM agg_alone UNION ALL BY NAME SELECT * FROM agg_tied) AS parts
    GROUP BY run_id, topic
),
{% else %}
agg AS (
    SELECT run_id, topic, count(*) AS n_judged
{% for m in measures if m.module.aggs is defined %}
         , {{ m.module.aggs(m) }}
{% endfor %}
    FROM {{ 'wrows' if running else ('prows' if prepared else 'rows') }} GROUP BY run_id, topic
),
{% endif %}
{% call b.topic_context(max_docs, thresholds, gainsets) %}
        LEFT JOIN agg USING (run_id, topic)
{% if 'intents' in needed %}
        LEFT JOIN ia_t USING (topic)
{% endif %}
{% if ideal_ia %}
        LEFT JOIN ia_ideal USING (topic)
{% endif %}
{% if sampled %}
        LEFT JOIN sp_agg USING (run_id, topic)
        LEFT JOIN sp_topics USING (topic)
{% for m in measures if m.module.strata_query is defined %}
        LEFT JOIN {{ m.id }}_sq USING (run_id, topic)
{% endfor %}
{% endif %}
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
