{#-
  Split the lines of TREC-format files ($files, numbered $numbers: the staged rows' `file`)
  into fields separated by runs of ASCII whitespace (space, tab, vertical tab, form feed;
  lines end at \n, \r\n or a lone \r).
  Fast path: whitespace becomes spaces and a line that splits into exactly `nfields`
  non-empty fields is taken as is; any other line is split by a regular expression. Blank
  lines are skipped; a comment line (load.sql, comment) is staged with nf = 0. A number is cast only when its text has the documented syntax (`syntax`
  of each column, see loader.py); anything else -- and a value out of its type's range --
  stays NULL, so that the caller finds and reports it, never silently drops or rounds it.
  The files are plain text (loader._sources decompresses the others); $encoding (utf-8 or
  latin-1) and $max_line (bytes) are passed to the reader.
-#}
{% import 'load.sql' as load %}
INSERT INTO {{ target }}
WITH raw AS (
    SELECT list_extract($numbers, file_index::INTEGER + 1) AS file,
           translate(line, chr(9) || chr(11) || chr(12) || chr(13), '    ') AS line
    FROM read_csv($files, columns = {'line': 'VARCHAR'}, delim = '\x01', quote = '',
                  escape = '', header = false, auto_detect = false,
                  strict_mode = false, compression = 'none', encoding = $encoding,
                  max_line_size = $max_line)
    WHERE line IS NOT NULL
),
split AS (
    SELECT file, line, string_split(line, ' ') AS f FROM raw
),
fields AS (
    SELECT file,
           CASE WHEN len(f) = {{ nfields }} AND NOT list_contains(f, '') THEN f
                ELSE regexp_split_to_array(trim(line), ' +')
           END AS f
    FROM split
)
SELECT file, CASE WHEN {{ load.comment('f[1]') }} THEN 0 ELSE len(f) END AS nf
{% for name, index, cast, syntax in columns %}
     , {% if cast %}CASE WHEN regexp_full_match(f[{{ index }}], {{ syntax | literal }}) THEN try_cast(f[{{ index }}] AS {{ cast }}) END{% else %}f[{{ index }}]{% endif %} AS {{ name }}
{% endfor %}
FROM fields
WHERE f <> [''];
