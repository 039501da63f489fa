{#-
  The engine of the measures reading preference judgments (MeasureDef.reads 'prefs': a
  qrels loaded as prefs, or as jg -- each judgment group one sub-group), as trec_eval 10.0
  computes them (its form_prefs_counts.c): every requested measure for every selected run
  and topic, in one query over the table qrels_prefs and the rankings.

  P: the inputs (bound parameters for the engine; a measure macro's parameters, as in
  sql/evaluate.sql): P.qrels, P.collection, P.runs (a list of run ids; with P.all_runs, NULL
  selects every run of the collection).
  Context (irwarehouse/engine/rendering.py, validated values only): measures (id, label,
  module), topics (the topic-set policy: 'run' the topics a run answers that have
  preferences; 'qrels' and 'all' every topic with preferences, a topic a run lacks ranked
  empty), max_docs (trec_eval -M: only ranks <= max_docs count).

  The named relations a measure file reads (its hooks):
    jgs    one row per run, topic and judgment group (jg), with
             ful_ret, poss_ret   preferences a > b with both retrieved: fulfilled (a above b),
                                 and all of them
             ful_imp, poss_imp   preferences with one of a, b retrieved: fulfilled (a is the
                                 retrieved one), and all of them
             notoccur            preferences with neither retrieved
             n_rel, n_rel_ret, n_nonrel, n_nonrel_ret  the group's documents with a level
                                 above 0 (relevant) and the others (non-relevant), all and
                                 retrieved
             cut_ful, cut_poss, cut_ful_ret, cut_poss_ret  the counts (all; both retrieved)
                                 once only the first n_rel (n_rel_ret) non-relevant documents
                                 are kept, as trec_eval recounts them for prefs_avgjg_Rnonrel
    pairs  one row per run, topic and pair of documents preferred one over the other in some
           group: lo, hi their places (lo < hi), fwd the groups preferring lo, back those
           preferring hi, ret the retrieved ones among the two (0, 1, 2)
  A document's place: the retrieved judged documents in rank order (0, 1, ...), then the
  judged documents not retrieved in the order of their docnos. A group's preferences: within
  each sub-group (jsg), every document over those of a lower level; with more than one
  sub-group, also their transitive consequences.

  Each sql/measures/<name>.sql of such a measure defines
    jg_aggs(m)    (optional) aggregates over the rows of jgs of a run and topic, <m.id>_<x>
    pair_aggs(m)  (optional) aggregates over the rows of pairs of a run and topic
    value(m)      the per-topic value from them (NULL where a run and topic have no row)
-#}
{% import '_dialect.sql' as d %}
WITH RECURSIVE
sel AS (
{% if P.all_runs %}
    SELECT DISTINCT run_id FROM runs
    WHERE collection = {{ P.collection }} AND ({{ P.runs }} IS NULL OR {{ d.list_contains(P.runs, 'run_id') }})
{% else %}
    SELECT DISTINCT {{ d.unnest_list(P.runs) }} AS run_id
{% endif %}
),
pj AS (
    -- the preference lines of the qrels; a jg line is the one sub-group of its group
    SELECT topic, jg, coalesce(jsg, '') AS jsg, docno, rel
    FROM qrels_prefs WHERE qrels = {{ P.qrels }}
),
jdocs AS (
    SELECT DISTINCT topic, docno FROM pj
),
topicset AS (
{% if topics == 'run' %}
    SELECT DISTINCT r.run_id, r.topic
    FROM runs AS r JOIN sel USING (run_id)
    WHERE r.collection = {{ P.collection }} AND r.topic IN (SELECT topic FROM jdocs)
{% else %}
    SELECT s.run_id, t.topic FROM sel AS s CROSS JOIN (SELECT DISTINCT topic FROM jdocs) AS t
{% endif %}
),
ranked AS (
    -- a ranking as trec_eval ranks it for preferences: score descending, ties by docno
    -- ascending (not the order of the run's load policy)
    SELECT r.run_id, r.topic, r.docno,
           row_number() OVER (PARTITION BY r.run_id, r.topic ORDER BY r.score DESC, r.docno) AS rank
    FROM runs AS r
    JOIN topicset AS ts ON ts.run_id = r.run_id AND ts.topic = r.topic
    WHERE r.collection = {{ P.collection }}
),
retrieved AS (
    -- the judged documents retrieved, numbered in rank order from 0
    SELECT r.run_id, r.topic, r.docno,
           row_number() OVER (PARTITION BY r.run_id, r.topic ORDER BY r.rank) - 1 AS place
    FROM ranked AS r
    JOIN jdocs AS j ON j.topic = r.topic AND j.docno = r.docno
{% if max_docs %}
    WHERE r.rank <= {{ max_docs | num }}
{% endif %}
),
njr AS (
    SELECT ts.run_id, ts.topic, count(rt.docno) AS njr
    FROM topicset AS ts LEFT JOIN retrieved AS rt ON rt.run_id = ts.run_id AND rt.topic = ts.topic
    GROUP BY ts.run_id, ts.topic
),
places AS (
    -- every judged document's place: the retrieved ones first, then the others by docno
    SELECT ts.run_id, ts.topic, j.docno, n.njr,
           coalesce(rt.place, n.njr - 1 + row_number() OVER (
               PARTITION BY ts.run_id, ts.topic, rt.place IS NULL ORDER BY j.docno)) AS place
    FROM topicset AS ts
    JOIN jdocs AS j ON j.topic = ts.topic
    JOIN njr AS n ON n.run_id = ts.run_id AND n.topic = ts.topic
    LEFT JOIN retrieved AS rt ON rt.run_id = ts.run_id AND rt.topic = ts.topic AND rt.docno = j.docno
),
lines AS (
    SELECT p.run_id, p.topic, q.jg, q.jsg, q.rel, p.place, p.njr
    FROM pj AS q JOIN places AS p ON p.topic = q.topic AND p.docno = q.docno
),
groups AS (
    -- a group of one sub-group orders its documents by level; of several, partially
    SELECT run_id, topic, jg, count(DISTINCT jsg) > 1 AS partial, min(rel) AS lowest, max(njr) AS njr
    FROM lines GROUP BY run_id, topic, jg
),
docs AS (
    -- a group's documents, relevant when their level is above 0
    SELECT l.run_id, l.topic, l.jg, l.place, max(l.rel) AS rel, max(l.rel) > 0 AS relevant,
           bool_or(l.rel = g.lowest) AS lowest
    FROM lines AS l JOIN groups AS g USING (run_id, topic, jg)
    GROUP BY l.run_id, l.topic, l.jg, l.place
),
direct AS (
    SELECT a.run_id, a.topic, a.jg, a.place AS i, b.place AS j
    FROM lines AS a
    JOIN lines AS b ON b.run_id = a.run_id AND b.topic = a.topic AND b.jg = a.jg AND b.jsg = a.jsg
                   AND a.rel > b.rel
),
prefs AS (
    -- the preferences of each group, with the transitive ones of a partial order
    SELECT run_id, topic, jg, i, j FROM direct
    UNION
    SELECT p.run_id, p.topic, p.jg, p.i, t.j
    FROM prefs AS p
    JOIN direct AS t ON t.run_id = p.run_id AND t.topic = p.topic AND t.jg = p.jg AND t.i = p.j
    JOIN groups AS g ON g.run_id = p.run_id AND g.topic = p.topic AND g.jg = p.jg
    WHERE g.partial
),
counted AS (
    SELECT p.run_id, p.topic, p.jg,
           count(*) FILTER (WHERE p.i < p.j AND p.j < g.njr) AS ful_ret,
           count(*) FILTER (WHERE p.i < g.njr AND p.j < g.njr) AS poss_ret,
           count(*) FILTER (WHERE p.i < g.njr AND p.j >= g.njr) AS ful_imp,
           count(*) FILTER (WHERE (p.i < g.njr) <> (p.j < g.njr)) AS poss_imp,
           count(*) FILTER (WHERE p.i >= g.njr AND p.j >= g.njr) AS notoccur
    FROM prefs AS p JOIN groups AS g USING (run_id, topic, jg)
    GROUP BY p.run_id, p.topic, p.jg
),
sized AS (
    SELECT d.run_id, d.topic, d.jg, g.partial, g.njr,
           count(*) FILTER (WHERE d.relevant) AS n_rel,
           count(*) FILTER (WHERE d.relevant AND d.place < g.njr) AS n_rel_ret,
           count(*) FILTER (WHERE NOT d.relevant) AS n_nonrel,
           count(*) FILTER (WHERE NOT d.relevant AND d.place < g.njr) AS n_nonrel_ret
    FROM docs AS d JOIN groups AS g USING (run_id, topic, jg)
    GROUP BY d.run_id, d.topic, d.jg, g.partial, g.njr
),
kept AS (
    -- the documents kept when non-relevant ones are cut to R = n_rel: cut (not kept) of all
    -- of them, kept_ret of the retrieved ones
    SELECT d.*, s.partial, s.njr,
           NOT d.relevant AND row_number() OVER (
               PARTITION BY d.run_id, d.topic, d.jg, d.relevant ORDER BY d.place) > s.n_rel AS cut,
           -- (of a partial order trec_eval keeps the first n_rel retrieved, not n_rel_ret)
           d.place < s.njr AND NOT (NOT d.relevant AND row_number() OVER (
               PARTITION BY d.run_id, d.topic, d.jg, d.relevant, d.place < s.njr ORDER BY d.place)
               > s.n_rel) AS kept_ret,
           -- one sub-group: trec_eval keeps the first R of its lowest level
           d.lowest AND row_number() OVER (
               PARTITION BY d.run_id, d.topic, d.jg, d.lowest ORDER BY d.place) <= s.n_rel AS low_r,
           d.lowest AND d.place < s.njr AND row_number() OVER (
               PARTITION BY d.run_id, d.topic, d.jg, d.lowest, d.place < s.njr ORDER BY d.place)
               <= s.n_rel_ret AS low_r_ret
    FROM docs AS d JOIN sized AS s USING (run_id, topic, jg)
),
recount AS (
    -- a partial order: its preferences between kept documents; one sub-group: those above
    -- its lowest level, and every document against the first R of the lowest level (each
    -- of them against itself too: trec_eval counts so)
    SELECT p.run_id, p.topic, p.jg,
           count(*) FILTER (WHERE NOT a.cut AND NOT b.cut AND p.i < g.njr AND p.i < p.j) AS ful,
           count(*) FILTER (WHERE NOT a.cut AND NOT b.cut) AS poss,
           count(*) FILTER (WHERE a.kept_ret AND b.kept_ret AND p.i < p.j) AS ful_ret,
           count(*) FILTER (WHERE a.kept_ret AND b.kept_ret) AS poss_ret
    FROM prefs AS p
    JOIN groups AS g ON g.run_id = p.run_id AND g.topic = p.topic AND g.jg = p.jg AND g.partial
    JOIN kept AS a ON a.run_id = p.run_id AND a.topic = p.topic AND a.jg = p.jg AND a.place = p.i
    JOIN kept AS b ON b.run_id = p.run_id AND b.topic = p.topic AND b.jg = p.jg AND b.place = p.j
    GROUP BY p.run_id, p.topic, p.jg
    UNION ALL
    SELECT run_id, topic, jg, sum(ful), sum(poss), sum(ful_ret), sum(poss_ret)
    FROM (
        SELECT p.run_id, p.topic, p.jg,
               count(*) FILTER (WHERE p.i < g.njr AND p.i < p.j) AS ful, count(*) AS poss,
               count(*) FILTER (WHERE p.j < g.njr AND p.i < p.j) AS ful_ret,
               count(*) FILTER (WHERE p.j < g.njr AND p.i < g.njr) AS poss_ret
        FROM prefs AS p
        JOIN groups AS g ON g.run_id = p.run_id AND g.topic = p.topic AND g.jg = p.jg AND NOT g.partial
        JOIN docs AS b ON b.run_id = p.run_id AND b.topic = p.topic AND b.jg = p.jg AND b.place = p.j
        WHERE NOT b.lowest
        GROUP BY p.run_id, p.topic, p.jg
        UNION ALL
        SELECT a.run_id, a.topic, a.jg,
               count(*) FILTER (WHERE a.place < a.njr AND a.place < b.place AND b.low_r),
               count(*) FILTER (WHERE b.low_r),
               count(*) FILTER (WHERE a.place < a.njr AND a.place < b.place AND b.low_r_ret),
               count(*) FILTER (WHERE a.place < a.njr AND b.low_r_ret)
        FROM kept AS a
        JOIN kept AS b ON b.run_id = a.run_id AND b.topic = a.topic AND b.jg = a.jg
                      AND (b.low_r OR b.low_r_ret)
        WHERE NOT a.partial
        GROUP BY a.run_id, a.topic, a.jg
    ) AS parts
    GROUP BY run_id, topic, jg
),
jgs AS (
    SELECT s.run_id, s.topic, s.jg, s.n_rel, s.n_rel_ret, s.n_nonrel, s.n_nonrel_ret,
           coalesce(c.ful_ret, 0) AS ful_ret, coalesce(c.poss_ret, 0) AS poss_ret,
           coalesce(c.ful_imp, 0) AS ful_imp, coalesce(c.poss_imp, 0) AS poss_imp,
           coalesce(c.notoccur, 0) AS notoccur,
           coalesce(r.ful, 0) AS cut_ful, coalesce(r.poss, 0) AS cut_poss,
           coalesce(r.ful_ret, 0) AS cut_ful_ret, coalesce(r.poss_ret, 0) AS cut_poss_ret
    FROM sized AS s
    LEFT JOIN counted AS c USING (run_id, topic, jg)
    LEFT JOIN recount AS r USING (run_id, topic, jg)
),
pairs AS (
    SELECT p.run_id, p.topic, least(p.i, p.j) AS lo, greatest(p.i, p.j) AS hi,
           count(*) FILTER (WHERE p.i < p.j) AS fwd, count(*) FILTER (WHERE p.i > p.j) AS back,
           (least(p.i, p.j) < max(g.njr))::INTEGER + (greatest(p.i, p.j) < max(g.njr))::INTEGER AS ret
    FROM prefs AS p JOIN groups AS g USING (run_id, topic, jg)
    GROUP BY p.run_id, p.topic, least(p.i, p.j), greatest(p.i, p.j)
),
{% set jg_measures = measures | selectattr('module.jg_aggs', 'defined') | list %}
{% set pair_measures = measures | selectattr('module.pair_aggs', 'defined') | list %}
jt AS (
    SELECT run_id, topic, count(*) AS n_jgs
{% for m in jg_measures %}
         , {{ m.module.jg_aggs(m) }}
{% endfor %}
    FROM jgs GROUP BY run_id, topic
),
pt AS (
    SELECT run_id, topic, count(*) AS n_pairs
{% for m in pair_measures %}
         , {{ m.module.pair_aggs(m) }}
{% endfor %}
    FROM pairs GROUP BY run_id, topic
),
wide AS (
    SELECT ts.run_id, ts.topic
{% for m in measures %}
         , {{ d.cast('coalesce(' ~ m.module.value(m) ~ ', 0)', 'DOUBLE') }} AS {{ m.id }}
{% endfor %}
    FROM topicset AS ts
    LEFT JOIN jt USING (run_id, topic)
    LEFT JOIN pt USING (run_id, topic)
)
{% set columns = [] %}
{% for m in measures %}{% set _ = columns.append([m.label, m.id]) %}{% endfor %}
{{ d.unpivot('wide', ['run_id', 'topic'], columns) }}
