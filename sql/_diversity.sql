{#- The diversity family (ndeval, TREC Web 2009-2014; irwarehouse.measures_diversity): what
    its measure files share. A document relevant to intents j gains sum_j (1 - alpha)^c_j,
    c_j the documents ranked above it relevant to j (m.intent_counts: the `intents` hook of
    sql/evaluate.sql); the discount of rank i is log 2 / log(i + 1); n_intents counts a
    topic's intents with a relevant document (ndeval ignores the others). -#}

{% macro gain(m) -%}
coalesce(list_sum(list_transform({{ m.intent_counts }}, lambda c: pow(1 - {{ m.alpha }}, c))), 0)
{%- endmacro %}

{% macro disc(pos) -%}
(ln(2) / ln({{ pos }} + 1))
{%- endmacro %}

{# ndeval's "ideal ideal" normalizer at cut-off k: sum over ranks i <= k of
   n_intents (1 - alpha)^(i - 1) w(i), w(i) given as SQL in i. #}
{% macro ideal_ideal(m, weight) -%}
({{ m.n_intents }} * (SELECT sum(pow(1 - {{ m.alpha }}, i - 1) * {{ weight }}) FROM range(1, {{ m.k }} + 1) AS ideal_ranks(i)))
{%- endmacro %}

{# ndeval's collection-independent normalization: 0 for a topic without intents; at k = 1 the
   sum itself (ndeval leaves its first position unnormalized); else the sum over the ideal
   ideal. #}
{% macro by_ideal_ideal(m, total, weight) -%}
CASE WHEN {{ m.n_intents }} = 0 THEN 0
     WHEN {{ m.k }} = 1 THEN coalesce({{ total }}, 0)
     ELSE coalesce({{ total }}, 0) / {{ ideal_ideal(m, weight) }} END
{%- endmacro %}

{# The run's sum over the ideal ranking's (0 when the run's is 0, as ndeval). #}
{% macro by_ideal(total, ideal) -%}
CASE WHEN coalesce({{ total }}, 0) = 0 THEN 0 ELSE {{ total }} / {{ ideal }} END
{%- endmacro %}
