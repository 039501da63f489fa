{#-
  The fast path of sql/stage_lines.sql: TREC-format files ($files, numbered $numbers) whose
  fields are separated by one delimiter character ($delim: a tab, or a space) are read by
  DuckDB's CSV reader instead of being split line by line. A row with an empty field is
  marked nf = -1 (a comment line, whatever its fields, nf = 0: load.sql, comment), and a
  line with the wrong number of fields makes the reader fail; the
  caller then stages every file again with stage_lines.sql, so both paths accept exactly the
  same input. A file holding whitespace the reader would keep inside a field (the other
  separator, a vertical tab or a form feed) never comes here: the caller finds those bytes
  when it reads the file in Python first (loader._sources). The files are plain text.
  Numbers: see stage_lines.sql.
-#}
{% import 'load.sql' as load %}
INSERT INTO {{ target }}
SELECT list_extract($numbers, file_index::INTEGER + 1) AS file,
       CASE WHEN {{ load.comment('c1') }} THEN 0
            WHEN {% for i in range(1, nfields + 1) %}c{{ i }} IS NULL{{ " OR " if not loop.last }}{% endfor %}
            THEN -1 ELSE {{ nfields }} END AS nf
{% for name, index, cast, syntax in columns %}
     , {% if cast %}CASE WHEN regexp_full_match(c{{ index }}, {{ syntax | literal }}) THEN try_cast(c{{ index }} AS {{ cast }}) END{% else %}c{{ index }}{% endif %} AS {{ name }}
{% endfor %}
FROM read_csv($files, delim = $delim,
              columns = { {%- for i in range(1, nfields + 1) %}'c{{ i }}': 'VARCHAR'{{ ", " if not loop.last }}{% endfor -%} },
              quote = '', escape = '', header = false, auto_detect = false,
              compression = 'none', encoding = $encoding, max_line_size = $max_line);
