{#- The counting of trec_eval's preference measures (sql/evaluate_prefs.sql), defined once.

  selection(P, topics): the CTEs sel (the runs), pj (the qrels's preference lines), jdocs
  (their documents) and topicset (the evaluated runs and topics, under the topic policy).
  counts(P, max_docs): over them, the CTEs that end in jgs and pairs (evaluate_prefs.sql
  says what these hold).
  shared(topics): the table macros irw_prefs_jgs(q, c, ids) and irw_prefs_pairs(q, c, ids),
  the rows of jgs and of pairs of qrels q for the runs `ids` (a list) of collection c. Every
  preference measure macro reads them (measure_macros.sql), so that each holds only its own
  part and the warehouse's catalogue stays small.
-#}
{% import '_dialect.sql' as d %}
{% macro selection(P, topics) -%}
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
)
{%- endmacro %}

{% macro counts(P, max_docs) -%}
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
places AS (
    -- every judged document's place: the retrieved ones first, then the others by docno,
    -- and njr, the judged documents retrieved
    SELECT ts.run_id, ts.topic, j.docno, count(rt.place) OVER (PARTITION BY ts.run_id, ts.topic) AS njr,
           coalesce(rt.place, count(rt.place) OVER (PARTITION BY ts.run_id, ts.topic) - 1 + row_number() OVER (
               PARTITION BY ts.run_id, ts.topic, rt.place IS NULL ORDER BY j.docno)) AS place
    FROM topicset AS ts
    JOIN jdocs AS j ON j.topic = ts.topic
    LEFT JOIN retrieved AS rt ON rt.run_id = ts.run_id AND rt.topic = ts.topic AND rt.docno = j.docno
),
pgroups AS (
    -- a group of several sub-groups orders its documents partially
    -- (its lowest level: the lowest of its lines)
    SELECT topic, jg, count(DISTINCT jsg) > 1 AS partial, min(rel) AS lowest FROM pj GROUP BY topic, jg
),
stated AS (
    -- the preferences a group's lines state: within each sub-group, every document over those
    -- of a lower level
    SELECT a.topic, a.jg, g.partial, a.docno AS a, b.docno AS b
    FROM pj AS a
    JOIN pj AS b ON b.topic = a.topic AND b.jg = a.jg AND b.jsg = a.jsg AND a.rel > b.rel
    JOIN pgroups AS g ON g.topic = a.topic AND g.jg = a.jg
),
pnodes AS (
    -- a partial order's documents, numbered 1, 2, ... by docno
    SELECT DISTINCT q.topic, q.jg, q.docno, {{ d.cast('dense_rank() OVER (PARTITION BY q.topic, q.jg ORDER BY q.docno)', 'INTEGER') }} AS x
    FROM pj AS q JOIN pgroups AS g ON g.topic = q.topic AND g.jg = q.jg WHERE g.partial
),
nexts AS (
    -- each of them with the numbers of the documents it is stated to be preferred to
    SELECT n.topic, n.jg, n.x, {{ d.list_filter(d.distinct_list('t.x'), 'v', 'v IS NOT NULL') }} AS next
    FROM pnodes AS n
    LEFT JOIN stated AS s ON s.topic = n.topic AND s.jg = n.jg AND s.a = n.docno
    LEFT JOIN pnodes AS t ON t.topic = s.topic AND t.jg = s.jg AND t.docno = s.b
    GROUP BY n.topic, n.jg, n.x
),
reach AS (
    -- per partial order, each document's list of those preferred below it, transitively: the
    -- stated lists, each joined with the lists of its members ceil(log2(n)) times (each time
    -- doubling the length of the chains covered)
    SELECT topic, jg,
           {{ d.repeat_apply('steps', 'stated', 'acc', 'step',
                             d.list_transform('acc', 's', d.list_distinct(d.list_concat('s', 'flatten(' ~ d.list_transform('s', 'y', d.list_at('acc', 'y')) ~ ')')))) }} AS below
    FROM (SELECT topic, jg, {{ d.ordered_list('next', 'x') }} AS stated,
                 {{ d.cast('ceil(log2(count(*)))', 'INTEGER') }} AS steps
          FROM nexts GROUP BY topic, jg) AS per_order
),
closed AS (
    -- every group's preferences: those of one sub-group as stated, a partial order's with
    -- the transitive ones (each once)
    SELECT topic, jg, a, b FROM stated WHERE NOT partial
    UNION ALL
    SELECT n.topic, n.jg, n.docno, t.docno
    FROM (SELECT p.topic, p.jg, p.docno, {{ d.unnest_list(d.list_at('r.below', 'p.x'), 'INTEGER') }} AS y
          FROM pnodes AS p JOIN reach AS r ON r.topic = p.topic AND r.jg = p.jg) AS n
    JOIN pnodes AS t ON t.topic = n.topic AND t.jg = n.jg AND t.x = n.y
),
gdocs AS (
    -- a group's documents, relevant when their level is above 0; lowest: judged at the
    -- group's lowest level (in some sub-group)
    SELECT q.topic, q.jg, q.docno, g.partial, max(q.rel) > 0 AS relevant, bool_or(q.rel = g.lowest) AS lowest
    FROM pj AS q JOIN pgroups AS g ON g.topic = q.topic AND g.jg = q.jg
    GROUP BY q.topic, q.jg, q.docno, g.partial
),
sized AS (
    -- each ranking's group documents at their places, with the group's relevant ones (all, and
    -- retrieved)
    SELECT p.run_id, p.topic, d.jg, d.docno, p.place, p.njr, d.partial, d.relevant, d.lowest,
           sum(CASE WHEN d.relevant THEN 1 ELSE 0 END) OVER (PARTITION BY p.run_id, p.topic, d.jg) AS n_rel,
           sum(CASE WHEN d.relevant AND p.place < p.njr THEN 1 ELSE 0 END) OVER (PARTITION BY p.run_id, p.topic, d.jg) AS n_rel_ret
    FROM gdocs AS d JOIN places AS p ON p.topic = d.topic AND p.docno = d.docno
),
kept AS (
    -- the documents kept when non-relevant ones are cut to R = n_rel: cut (not kept) of all
    -- of them, kept_ret of the retrieved ones
    SELECT s.*,
           NOT s.relevant AND row_number() OVER (
               PARTITION BY s.run_id, s.topic, s.jg, s.relevant ORDER BY s.place) > s.n_rel AS cut,
           -- (of a partial order trec_eval keeps the first n_rel retrieved, not n_rel_ret)
           s.place < s.njr AND NOT (NOT s.relevant AND row_number() OVER (
               PARTITION BY s.run_id, s.topic, s.jg, s.relevant, s.place < s.njr ORDER BY s.place)
               > s.n_rel) AS kept_ret,
           -- one sub-group: trec_eval keeps the first R of its lowest level
           s.lowest AND row_number() OVER (
               PARTITION BY s.run_id, s.topic, s.jg, s.lowest ORDER BY s.place) <= s.n_rel AS low_r,
           s.lowest AND s.place < s.njr AND row_number() OVER (
               PARTITION BY s.run_id, s.topic, s.jg, s.lowest, s.place < s.njr ORDER BY s.place)
               <= s.n_rel_ret AS low_r_ret
    FROM sized AS s
),
prefs AS (
    -- the preferences between places, i preferred to j, with what is counted of them
    SELECT a.run_id, a.topic, a.jg, a.partial, a.njr, a.place AS i, b.place AS j,
           a.cut AS a_cut, b.cut AS b_cut, a.kept_ret AS a_kept_ret, b.kept_ret AS b_kept_ret,
           b.lowest AS b_lowest
    FROM closed AS c
    JOIN kept AS a ON a.topic = c.topic AND a.jg = c.jg AND a.docno = c.a
    JOIN kept AS b ON b.run_id = a.run_id AND b.topic = c.topic AND b.jg = c.jg AND b.docno = c.b
),
counted AS (
    -- the preferences of each group: with the ranking's places (i before j: fulfilled), and
    -- recounted once non-relevant documents are cut: of a partial order its preferences
    -- between kept documents; of one sub-group those above its lowest level (and, in lowest
    -- low_level, every document against the first R of the lowest level)
    SELECT run_id, topic, jg,
           count(*) FILTER (WHERE i < j AND j < njr) AS ful_ret,
           count(*) FILTER (WHERE i < njr AND j < njr) AS poss_ret,
           count(*) FILTER (WHERE i < njr AND j >= njr) AS ful_imp,
           count(*) FILTER (WHERE (i < njr) <> (j < njr)) AS poss_imp,
           count(*) FILTER (WHERE i >= njr AND j >= njr) AS notoccur,
           count(*) FILTER (WHERE CASE WHEN partial THEN NOT a_cut AND NOT b_cut AND i < njr AND i < j
                                       ELSE NOT b_lowest AND i < njr AND i < j END) AS cut_ful,
           count(*) FILTER (WHERE CASE WHEN partial THEN NOT a_cut AND NOT b_cut
                                       ELSE NOT b_lowest END) AS cut_poss,
           count(*) FILTER (WHERE CASE WHEN partial THEN a_kept_ret AND b_kept_ret AND i < j
                                       ELSE NOT b_lowest AND j < njr AND i < j END) AS cut_ful_ret,
           count(*) FILTER (WHERE CASE WHEN partial THEN a_kept_ret AND b_kept_ret
                                       ELSE NOT b_lowest AND j < njr AND i < njr END) AS cut_poss_ret
    FROM prefs GROUP BY run_id, topic, jg
),
low_level AS (
    -- one sub-group: every document against the first R of the lowest level (each of them
    -- against itself too: trec_eval counts so)
    SELECT a.run_id, a.topic, a.jg,
           count(*) FILTER (WHERE a.place < a.njr AND a.place < b.place AND b.low_r) AS cut_ful,
           count(*) FILTER (WHERE b.low_r) AS cut_poss,
           count(*) FILTER (WHERE a.place < a.njr AND a.place < b.place AND b.low_r_ret) AS cut_ful_ret,
           count(*) FILTER (WHERE a.place < a.njr AND b.low_r_ret) AS cut_poss_ret
    FROM kept AS a
    JOIN kept AS b ON b.run_id = a.run_id AND b.topic = a.topic AND b.jg = a.jg
                  AND (b.low_r OR b.low_r_ret)
    WHERE NOT a.partial
    GROUP BY a.run_id, a.topic, a.jg
),
jgs AS (
    SELECT s.run_id, s.topic, s.jg, s.n_rel, s.n_rel_ret, s.n_nonrel, s.n_nonrel_ret,
           coalesce(c.ful_ret, 0) AS ful_ret, coalesce(c.poss_ret, 0) AS poss_ret,
           coalesce(c.ful_imp, 0) AS ful_imp, coalesce(c.poss_imp, 0) AS poss_imp,
           coalesce(c.notoccur, 0) AS notoccur,
           coalesce(c.cut_ful, 0) + coalesce(l.cut_ful, 0) AS cut_ful,
           coalesce(c.cut_poss, 0) + coalesce(l.cut_poss, 0) AS cut_poss,
           coalesce(c.cut_ful_ret, 0) + coalesce(l.cut_ful_ret, 0) AS cut_ful_ret,
           coalesce(c.cut_poss_ret, 0) + coalesce(l.cut_poss_ret, 0) AS cut_poss_ret
    FROM (SELECT run_id, topic, jg,
                 count(*) FILTER (WHERE relevant) AS n_rel,
                 count(*) FILTER (WHERE relevant AND place < njr) AS n_rel_ret,
                 count(*) FILTER (WHERE NOT relevant) AS n_nonrel,
                 count(*) FILTER (WHERE NOT relevant AND place < njr) AS n_nonrel_ret
          FROM sized GROUP BY run_id, topic, jg) AS s
    LEFT JOIN counted AS c ON c.run_id = s.run_id AND c.topic = s.topic AND c.jg = s.jg
    LEFT JOIN low_level AS l ON l.run_id = s.run_id AND l.topic = s.topic AND l.jg = s.jg
),
pairs AS (
    SELECT run_id, topic, least(i, j) AS lo, greatest(i, j) AS hi,
           count(*) FILTER (WHERE i < j) AS fwd, count(*) FILTER (WHERE i > j) AS back,
           {{ d.cast('least(i, j) < max(njr)', 'INTEGER') }} + {{ d.cast('greatest(i, j) < max(njr)', 'INTEGER') }} AS ret
    FROM prefs
    GROUP BY run_id, topic, least(i, j), greatest(i, j)
)
{%- endmacro %}

{% macro shared(topics) -%}
{% set P = {'qrels': 'q', 'collection': 'c', 'runs': 'ids', 'all_runs': False} %}
{% for rel in ['jgs', 'pairs'] %}
{{ d.table_function('irw_prefs_' ~ rel, ['q', 'c', 'ids']) }}
WITH
{{ selection(P, topics) }},
{{ counts(P, None) }}
SELECT * FROM {{ rel }}{{ ';' if not loop.last }}
{% endfor %}
{%- endmacro %}
