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
    at a time, the one of largest intent-aware gain (ties: largest docno). One recursion
    computes them all, a ranking per alpha (v: its number) as deep as its measures need
    (NULL: to the end); ia_ideal aggregates every measure's intent_ideal(m) per topic, over
    the gains of its alpha's ranking (m.ideal_gain, NULL on the rows of another). -#}
{% macro ideal_rankings(ideal_ia, P) -%}
{% set alphas = [] %}
{% for m in ideal_ia %}{% if m.alpha not in alphas %}{% set _ = alphas.append(m.alpha) %}{% endif %}{% endfor %}
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
ia_alphas AS (
    -- each alpha of the measures (v) with the depth its ranking needs
{% for alpha in alphas %}
{% set ms = ideal_ia | selectattr('alpha', 'equalto', alpha) | list %}
{% set deep = ms | rejectattr('module.ideal_depth', 'defined') | list %}
    {{ 'UNION ALL ' if not loop.first }}SELECT {{ loop.index0 }} AS v, {{ alpha }} AS alpha, {% if deep %}{{ d.cast('NULL', 'INTEGER') }}{% elif ms | length == 1 %}{{ d.cast(ms[0].module.ideal_depth(ms[0]), 'INTEGER') }}{% else %}{{ d.cast('greatest(' ~ depth_list(ms) ~ ')', 'INTEGER') }}{% endif %} AS depth
{% endfor %}
),
ia_greedy AS (
    -- the greedy ideal rankings, one position per step
    WITH RECURSIVE {{ d.recursive('greedy(v, alpha, depth, topic, irank, remaining, counts, gain)') }} AS (
        SELECT a.v, a.alpha, a.depth, s.topic, 0, s.remaining, s.counts, {{ d.cast('0.0', 'DOUBLE') }}
        FROM ia_start AS s CROSS JOIN ia_alphas AS a
        UNION ALL
        SELECT v, alpha, depth, topic, irank + 1, {{ d.list_without('remaining', 'p') }},
               {{ d.list_transform(d.list_indexes('counts'), 'j',
                                   d.list_at('counts', 'j') ~ ' + CASE WHEN '
                                   ~ d.list_contains(d.list_at('remaining', 'p') ~ '.i', 'j') ~ ' THEN 1 ELSE 0 END') }},
               {{ d.list_at('scores', 'p') }}
        FROM (SELECT *, {{ d.list_position('scores', d.list_max('scores')) }} AS p
              FROM (SELECT *, {{ d.list_transform('remaining', 'x', d.list_sum(d.list_transform(
                        'x.i', 'j', 'pow(1 - alpha, ' ~ d.list_at('counts', 'j') ~ ')'))) }} AS scores
                    FROM greedy
                    WHERE {{ d.list_len('remaining') }} > 0 AND (depth IS NULL OR irank < depth)) AS scored) AS picked
    )
    SELECT v, topic, irank, gain FROM greedy WHERE irank > 0
),
ia_ideal AS (
    SELECT topic
{% for m in ideal_ia %}
         , {{ m.module.intent_ideal(m) }}
{% endfor %}
    FROM (SELECT topic, irank
{% for m in ideal_ia %}
               , CASE WHEN v = {{ alphas.index(m.alpha) }} THEN gain END AS {{ m.ideal_gain }}
{% endfor %}
          FROM ia_greedy) AS ideal
    GROUP BY topic
),
{%- endmacro %}

{# The depths of the measures `ms` (each with ideal_depth), as SQL arguments. #}
{% macro depth_list(ms) -%}
{% for m in ms %}{{ m.module.ideal_depth(m) }}{{ ', ' if not loop.last }}{% endfor %}
{%- endmacro %}
