{#- DataFrames of runs or qrels, loaded as data (irwarehouse.engine.loading.Frame): the frame,
    registered as `irw_frame`, is read by DuckDB's own DataFrame scan into the staging table
    a file's lines go to (irw_staged, irw_staged_qrels), and from there it takes the checks
    and the ranking of every load. Nothing is written as text and read back.

    `cols` maps each field (topic, docno, run_id, given_rank, score, rel) to its column of
    the frame -- (name, kind), kind one of text, integer, real, other (from DuckDB's type of
    the column) -- or to None: a run id is then bound ($run_id), a rank the order of the
    scores. A value that is missing (None, NaN), empty, or not a number of the field's
    syntax stages as NULL (or the row as nf = -1), which the load's checks refuse; so does a
    topic that would make a file's line a comment line (load.sql, comment). The locator
    below then names the row, the column and the problem. -#}
{% import 'load.sql' as load %}

{# The text of a field: NULL when missing. #}
{% macro text(col) -%}
{% set name, kind = col %}
{%- if kind == 'real' %}CASE WHEN NOT isnan({{ name | ident }}) THEN CAST({{ name | ident }} AS VARCHAR) END
{%- else %}CAST({{ name | ident }} AS VARCHAR){% endif %}
{%- endmacro %}

{# A number of SQL type `cast`: a number column's value as it is (an integer type: only an
   integral value), a text column's only when its text has the file syntax `syntax`;
   otherwise NULL. #}
{% macro number(col, cast, syntax) -%}
{% set name, kind = col %}
{%- if kind == 'text' %}CASE WHEN regexp_full_match({{ name | ident }}, {{ syntax | literal }}) THEN try_cast({{ name | ident }} AS {{ cast }}) END
{%- elif kind == 'integer' %}try_cast({{ name | ident }} AS {{ cast }})
{%- elif kind == 'real' and cast == 'DOUBLE' %}CAST({{ name | ident }} AS DOUBLE)
{%- elif kind == 'real' %}CASE WHEN {{ name | ident }} = trunc({{ name | ident }}) THEN try_cast({{ name | ident }} AS {{ cast }}) END
{%- else %}CAST(NULL AS {{ cast }}){% endif %}
{%- endmacro %}

{# The frame's values as the staged fields, with the row each came from. #}
{% macro fields(cols, numbers) -%}
SELECT r.irw_row AS irw_row
{% for field in ('topic', 'docno', 'run_id') if field in cols %}
     , {% if cols[field] %}{{ text(cols[field]) }}{% else %}CAST($run_id AS VARCHAR){% endif %} AS {{ field }}
{% endfor %}
{% for field, cast, syntax in numbers %}
     , {% if cols[field] %}{{ number(cols[field], cast, syntax) }}{% else %}CAST(NULL AS {{ cast }}){% endif %} AS {{ field }}
{% endfor %}
FROM irw_frame POSITIONAL JOIN (SELECT range AS irw_row FROM range($rows)) AS r
{%- endmacro %}

{# Stage the frame's rows into `target` (file 0). Without a rank column, the ranks are the
   order of the scores. #}
{% macro stage(target, cols, numbers, nfields) -%}
{% set texts = ('topic', 'docno', 'run_id') | select('in', cols) | list %}
INSERT INTO {{ target }}
SELECT 0 AS file,
       CASE WHEN {% for f in texts %}{{ f }} IS NULL OR {{ f }} = '' OR {% endfor %}{{ load.comment('ltrim(topic)') }}
            THEN -1 ELSE {{ nfields }} END AS nf,
       {% for f in texts if f != 'run_id' %}{{ f }}, {% endfor %}
       {% if 'run_id' in cols %}run_id,
       {% if cols.given_rank %}given_rank{% else %}row_number() OVER (PARTITION BY run_id, topic ORDER BY score DESC, docno){% endif %} AS given_rank,
       score
       {%- else %}rel{% endif %}

FROM ({{ fields(cols, numbers) }}) AS f
{%- endmacro %}

{# The first row of the frame that a load refuses, and each of its fields as staged (NULL:
   refused) beside its column's value as text ($rows: the frame's length). #}
{% macro first_bad(cols, numbers) -%}
{% set texts = ('topic', 'docno', 'run_id') | select('in', cols) | list %}
SELECT f.irw_row{% for f, c in cols.items() if c %}, f.{{ f }}, CAST(g.{{ c[0] | ident }} AS VARCHAR){% endfor %}
FROM ({{ fields(cols, numbers) }}) AS f
POSITIONAL JOIN irw_frame AS g
WHERE {% for f in texts %}f.{{ f }} IS NULL OR f.{{ f }} = '' OR {% endfor %}{{ load.comment('ltrim(f.topic)') }} OR
      {% for f, cast, syntax in numbers if cols[f] %}f.{{ f }} IS NULL OR {% if cast == 'DOUBLE' %}NOT isfinite(f.{{ f }}) OR {% endif %}{% endfor %} FALSE
ORDER BY f.irw_row LIMIT 1
{%- endmacro %}

{# The first row that repeats an earlier one's key (`key`: fields), with that earlier row. #}
{% macro repeated(cols, numbers, key) -%}
SELECT irw_row, first_row{% for k in key %}, {{ k }}{% endfor %} FROM (
    SELECT irw_row{% for k in key %}, {{ k }}{% endfor %},
           min(irw_row) OVER (PARTITION BY {{ key | join(', ') }}) AS first_row
    FROM ({{ fields(cols, numbers) }}) AS f
) WHERE irw_row > first_row ORDER BY irw_row LIMIT 1
{%- endmacro %}

{# The first row of the run `$id`. #}
{% macro run_row(cols, numbers) -%}
SELECT min(irw_row) FROM ({{ fields(cols, numbers) }}) AS f WHERE run_id = $id
{%- endmacro %}
