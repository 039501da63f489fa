{# Interpolated precision at recall level r (0, 0.1, ..., 1), as sample_eval computes it
   (iprec@rec0.10, ...): the estimate est at each rank i <= min(n, 1,000) (held from one
   document of the prels to the next) gives a precision est / i and a recall est / est_R.
   Walking up from the last rank, the levels are taken from the highest that the ranking's
   final estimate reaches (the others are 0): the current level is taken at the first rank
   whose estimate falls short of level x est_R -- at most one level a rank -- and gets the
   best precision at or below that rank; when the ranks run out, the levels left get the
   best precision of the ranking. The walk goes over the stretches of ranks a..b of one
   estimate e (the best precision within one is e / its first rank), one level at a time. #}
{% import '_dialect.sql' as d %}
{% macro strata_query(m) -%}
WITH st AS (
    SELECT run_id, topic, rank AS a, est AS e,
           coalesce(lead(rank) OVER (PARTITION BY run_id, topic ORDER BY rank) - 1, n_ranked) AS b
    FROM sp_rows
    UNION ALL
    SELECT run_id, topic, 1 AS a, {{ d.cast('0', 'DOUBLE') }} AS e, min(rank) - 1 AS b
    FROM sp_rows GROUP BY run_id, topic HAVING min(rank) > 1
),
sm AS (
    -- later: the best precision of the stretches below this one
    SELECT st.*, coalesce(max({{ d.div('e', 'a') }}) OVER (PARTITION BY run_id, topic ORDER BY a DESC
                                            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS later
    FROM st
),
l11 AS (
    -- r the estimated R, ef the final estimate, top the best precision, p the rank the
    -- walk has reached: a level taken at rank p, the next one is taken above it
    SELECT s.run_id, s.topic, coalesce(max(t.est_R), 0) AS r, max_by(s.e, s.a) AS ef,
           greatest(max({{ d.div('s.e', 's.a') }}), 0) AS top, max(s.b) + 1 AS p, 0 AS done
    FROM st AS s LEFT JOIN sp_topics AS t ON t.topic = s.topic
    GROUP BY s.run_id, s.topic
),
{% for j in range(10, -1, -1) %}
{% set level = '(' ~ ((j / 10) | num) ~ ' * l.r)' %}
{% set fires = 's.a <= q.p - 1 AND s.e < ' ~ ((j / 10) | num) ~ ' * q.r' %}
l{{ j }} AS (
    -- level {{ j }}: the stretch nearest below rank p whose estimate falls short of it, fa to
    -- flater, from the level before, read once
    SELECT l.run_id, l.topic, l.r, l.ef, l.top{% for i in range(10, j, -1) %}, l.v{{ i }}{% endfor %},
           CASE WHEN {{ level }} > l.ef THEN 0
                WHEN l.done = 1 OR l.fa IS NULL THEN l.top
                ELSE greatest({{ d.div('l.fe', 'least(l.fb, l.p - 1)') }}, l.flater) END AS v{{ j }},
           CASE WHEN {{ level }} > l.ef OR l.done = 1 OR l.fa IS NULL THEN l.p ELSE least(l.fb, l.p - 1) END AS p,
           CASE WHEN {{ level }} > l.ef OR l.fa IS NOT NULL THEN l.done ELSE 1 END AS done
    FROM (SELECT q.run_id, q.topic, max(q.r) AS r, max(q.ef) AS ef, max(q.top) AS top,
                 {% for i in range(10, j, -1) %}max(q.v{{ i }}) AS v{{ i }}, {% endfor %}max(q.p) AS p, max(q.done) AS done,
                 max(s.a) FILTER (WHERE {{ fires }}) AS fa, max_by(s.b, s.a) FILTER (WHERE {{ fires }}) AS fb,
                 max_by(s.e, s.a) FILTER (WHERE {{ fires }}) AS fe,
                 max_by(s.later, s.a) FILTER (WHERE {{ fires }}) AS flater
          FROM l{{ j + 1 }} AS q JOIN sm AS s ON s.run_id = q.run_id AND s.topic = q.topic
          GROUP BY q.run_id, q.topic) AS l
){{ ',' if not loop.last }}
{% endfor %}
SELECT run_id, topic,
       CASE CAST(round({{ m.k }} * 10) AS INTEGER){% for j in range(11) %} WHEN {{ j }} THEN v{{ j }}{% endfor %} END AS {{ m.id }}_sq
FROM l0
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN abs({{ m.k }} * 10 - round({{ m.k }} * 10)) < {{ 1e-9 | num }} AND {{ m.k }} <= 1 THEN coalesce({{ m.id }}_sq, 0) END
{%- endmacro %}
