{#-
  The engine of the measures reading preference judgments (MeasureDef.reads 'prefs': a
  qrels loaded as prefs, or as jg -- each judgment group one sub-group), as trec_eval 10.0
  computes them (its form_prefs_counts.c): every requested measure for every selected run
  and topic, in one query over the table qrels_prefs and the rankings.

  P: the inputs (bound parameters for the engine; a measure macro's parameters, as in
  sql/evaluate.sql): P.qrels, P.collection, P.runs (a list of run ids; with P.all_runs, NULL
  selects every run of the collection).
  Context (irwarehouse/engine/rendering.py, validated values only): measures (id, label,
  module), shared (a measure macro: jgs and pairs are read from the table macros
  irw_prefs_jgs and irw_prefs_pairs, _prefs.sql's shared), topics (the topic-set policy: 'run' the topics a run answers that have
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
{% import '_prefs.sql' as pf %}
{% set jg_measures = measures | selectattr('module.jg_aggs', 'defined') | list %}
{% set pair_measures = measures | selectattr('module.pair_aggs', 'defined') | list %}
WITH
{{ pf.selection(P, topics) }},
{% if shared %}
{% for rel, used in [('jgs', jg_measures), ('pairs', pair_measures)] if used %}
{{ rel }} AS (
    SELECT * FROM irw_prefs_{{ rel }}({{ P.qrels }}, {{ P.collection }}, (SELECT list(run_id) FROM sel))
),
{% endfor %}
{% else %}
{{ pf.counts(P, max_docs) }},
{% endif %}
{% if jg_measures %}
jt AS (
    SELECT run_id, topic, count(*) AS n_jgs
{% for m in jg_measures %}
         , {{ m.module.jg_aggs(m) }}
{% endfor %}
    FROM jgs GROUP BY run_id, topic
),
{% endif %}
{% if pair_measures %}
pt AS (
    SELECT run_id, topic, count(*) AS n_pairs
{% for m in pair_measures %}
         , {{ m.module.pair_aggs(m) }}
{% endfor %}
    FROM pairs GROUP BY run_id, topic
),
{% endif %}
wide AS (
    SELECT ts.run_id, ts.topic
{% for m in measures %}
         , {{ d.cast('coalesce(' ~ m.module.value(m) ~ ', 0)', 'DOUBLE') }} AS {{ m.id }}
{% endfor %}
    FROM topicset AS ts
{% if jg_measures %}
    LEFT JOIN jt USING (run_id, topic)
{% endif %}
{% if pair_measures %}
    LEFT JOIN pt USING (run_id, topic)
{% endif %}
)
{% set columns = [] %}
{% for m in measures %}{% set _ = columns.append([m.label, m.id]) %}{% endfor %}
{{ d.unpivot('wide', ['run_id', 'topic'], columns) }}
