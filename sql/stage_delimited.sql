{#-
  The fast path of sql/stage_lines.sql: TREC-format files ($files) whose fields are separated
  by one delimiter character ($delim: a tab, or a space) are read by DuckDB's CSV reader
  instead of being split line by line. A row is marked nf = -1 when the reader cannot stand
  for the whitespace splitter -- an empty field, or a field holding the other separator
  ($other) -- and the caller then stages every file again with stage_lines.sql, so both
  paths accept exactly the same input. A line with the wrong number of fields makes the
  reader fail, with the same consequence.
-#}
INSERT INTO {{ target }}
SELECT filename,
       CASE WHEN {% for i in range(1, nfields + 1) %}c{{ i }} IS NULL OR {% endfor -%}
                 contains(concat({% for i in range(1, nfields + 1) %}c{{ i }}{{ ", " if not loop.last }}{% endfor %}), $other)
            THEN -1 ELSE {{ nfields }} END AS nf
{% for name, index, cast in columns %}
     , {% if cast %}try_cast(c{{ index }} AS {{ cast }}){% else %}c{{ index }}{% endif %} AS {{ name }}
{% endfor %}
FROM read_csv($files, delim = $delim,
              columns = { {%- for i in range(1, nfields + 1) %}'c{{ i }}': 'VARCHAR'{{ ", " if not loop.last }}{% endfor -%} },
              quote = '', escape = '', header = false, auto_detect = false, filename = true);
