{#- The diversity family (ndeval, TREC Web 2009-2014; irwarehouse.measures_diversity): what
    its measure files share. A document relevant to intents j gains sum_j (1 - alpha)^c_j,
    c_j the documents ranked above it relevant to j (m.intent_counts: the `intents` hook of
    sql/evaluate.sql); the discount of rank i is log 2 / log(i + 1); n_intents counts a
    topic's intents with a relevant document (ndeval ignores the others). Every engine: the
    lists, their functions and the recursion are the macros of _dialect.sql. -#}
{% import '_dialect.sql' as d %}

{% macro gain(m) -%}
coalesce({{ d.list_sum(d.list_transform(m.intent_counts, 'c', 'pow(1 - ' ~ m.alpha ~ ', c)')) }}, 0)
{%- endmacro %}

{% macro disc(pos) -%}
({{ d.div('ln(2)', 'ln(' ~ pos ~ ' + 1)') }})
{%- endmacro %}

{# ndeval's "ideal ideal" normalizer at cut-off k: sum over ranks i <= k of
   n_intents (1 - alpha)^(i - 1) w(i), w(i) given as SQL in i. #}
{% macro ideal_ideal(m, weight) -%}
({{ m.n_intents }} * (SELECT sum(pow(1 - {{ m.alpha }}, i - 1) * {{ weight }}) FROM ({{ d.integers(m.k) }}) AS ideal_ranks))
{%- endmacro %}

{# ndeval's collection-independent normalization: 0 for a topic without intents; at k = 1 the
   sum itself (ndeval leaves its first position unnormalized); else the sum over the ideal
   ideal. #}
{% macro by_ideal_ideal(m, total, weight) -%}
CASE WHEN {{ m.n_intents }} = 0 THEN 0
     WHEN {{ m.k }} = 1 THEN coalesce({{ total }}, 0)
     ELSE {{ d.div('coalesce(' ~ total ~ ', 0)', ideal_ideal(m, weight)) }} END
{%- endmacro %}

{# The run's sum over the ideal ranking's (0 when the run's is 0, as ndeval). #}
{% macro by_ideal(total, ideal) -%}
CASE WHEN coalesce({{ total }}, 0) = 0 THEN 0 ELSE {{ d.div(total, ideal) }} END
{%- endmacro %}

{#- The CTE ia_r (followed by a comma): m.intent_counts and m.intent_ap per retrieved document
    relevant to an intent, from ia_l (its relevant intents) and ia_n (sql/evaluate.sql). -#}
{% macro intent_counts() -%}
ia_r AS (
    -- m.intent_counts and m.intent_ap per retrieved document relevant to an intent
    SELECT run_id, topic, rank, {{ d.ordered_list('c', 'intent') }} AS ia_counts, {{ d.fsum() }}({{ d.div('c + 1', 'nrel') }}) AS ia_ap
    FROM (SELECT l.run_id, l.topic, l.rank, l.intent, n.nrel,
                 row_number() OVER (PARTITION BY l.run_id, l.topic, l.intent ORDER BY l.rank) - 1 AS c
          FROM ia_l AS l JOIN ia_n AS n ON n.topic = l.topic AND n.intent = l.intent) AS counted
    GROUP BY run_id, topic, rank
),
{%- endmacro %}

{#- The CTEs (each followed by a comma) of the greedy ideal rankings of `ideal_ia` (the
    measures with the hook intent_ideal; sql/evaluate.sql): per topic, one relevant document
    at a time, the one of largest intent-aware gain (ties: largest docno). -#}
{% macro ideal_rankings(ideal_ia, P) -%}
ia_start AS (
    -- the ideal rankings' start: per topic its relevant documents, largest docno first, each
    -- with the positions of its intents (1..n_intents), and no intent covered yet
    SELECT topic, {{ d.ordered_list(d.struct([['d', 'docno'], ['i', 'ints']]), 'docno', desc=True) }} AS remaining,
           {{ d.zeros('max(n_intents)') }} AS counts
    FROM (SELECT qi.topic, qi.docno, {{ d.sorted_list('ix.j') }} AS ints, max(ix.n_intents) AS n_intents
          FROM qrels_intents AS qi
          JOIN (SELECT topic, intent, {{ d.cast('dense_rank() OVER (PARTITION BY topic ORDER BY intent)', 'INTEGER') }} AS j,
                       count(*) OVER (PARTITION BY topic) AS n_intents FROM ia_n) AS ix
            ON ix.topic = qi.topic AND ix.intent = qi.intent
          WHERE qi.qrels = {{ P.qrels }} AND qi.rel >= 1
          GROUP BY qi.topic, qi.docno) AS docs
    GROUP BY topic
),
{% for m in ideal_ia %}
{{ m.intent_ideal }} AS (
    -- m.intent_ideal: the greedy ideal ranking at m.alpha, one position per step
    WITH RECURSIVE {{ d.recursive('greedy(topic, irank, remaining, counts, gain)') }} AS (
        SELECT topic, 0, remaining, counts, {{ d.cast('0.0', 'DOUBLE') }} FROM ia_start
        UNION ALL
        SELECT topic, irank + 1, {{ d.list_without('remaining', 'p') }},
               {{ d.list_transform(d.list_indexes('counts'), 'j',
                                   d.list_at('counts', 'j') ~ ' + CASE WHEN '
                                   ~ d.list_contains(d.list_at('remaining', 'p') ~ '.i', 'j') ~ ' THEN 1 ELSE 0 END') }},
               {{ d.list_at('scores', 'p') }}
        FROM (SELECT *, {{ d.list_position('scores', d.list_max('scores')) }} AS p
              FROM (SELECT *, {{ d.list_transform('remaining', 'x', d.list_sum(d.list_transform(
                        'x.i', 'j', 'pow(1 - ' ~ m.alpha ~ ', ' ~ d.list_at('counts', 'j') ~ ')'))) }} AS scores
                    FROM greedy
                    WHERE {{ d.list_len('remaining') }} > 0{% if m.module.ideal_depth is defined %} AND irank < {{ m.module.ideal_depth(m) }}{% endif %}) AS scored) AS picked
    )
    SELECT topic, irank, gain FROM greedy WHERE irank > 0
),
{{ m.id }}_dvt AS (
    SELECT topic, {{ m.module.intent_ideal(m) }} FROM {{ m.intent_ideal }} GROUP BY topic
),
{% endfor %}
{%- endmacro %}
