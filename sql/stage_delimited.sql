{#-
  The fast path of sql/stage_lines.sql: TREC-format files ($files) whose fields are separated
  by one delimiter character ($delim: a tab, or a space) are read by DuckDB's CSV reader
  instead of being split line by line. A row is marked nf = -1 when the reader cannot stand
  for the whitespace splitter -- an empty field, or a field holding the other separator
  ($other), a vertical tab or a form feed -- and the caller then stages every file again with
  stage_lines.sql, so both paths accept exactly the same input. A line with the wrong number
  of fields makes the reader fail, with the same consequence. Numbers: see stage_lines.sql.
-#}
{% set line %}concat({% for i in range(1, nfields + 1) %}c{{ i }}{{ ", " if not loop.last }}{% endfor %}){% endset %}
INSERT INTO {{ target }}
SELECT filename,
       CASE WHEN {% for i in range(1, nfields + 1) %}c{{ i }} IS NULL OR {% endfor -%}
                 contains({{ line }}, $other) OR contains({{ line }}, chr(11)) OR contains({{ line }}, chr(12))
            THEN -1 ELSE {{ nfields }} END AS nf
{% for name, index, cast, syntax in columns %}
     , {% if cast %}CASE WHEN regexp_full_match(c{{ index }}, {{ syntax | literal }}) THEN try_cast(c{{ index }} AS {{ cast }}) END{% else %}c{{ index }}{% endif %} AS {{ name }}
{% endfor %}
FROM read_csv($files, delim = $delim,
              columns = { {%- for i in range(1, nfields + 1) %}'c{{ i }}': 'VARCHAR'{{ ", " if not loop.last }}{% endfor -%} },
              quote = '', escape = '', header = false, auto_detect = false, filename = true,
              compression = $compression, encoding = $encoding, max_line_size = $max_line);
