{#-
  Split the lines of TREC-format files ($files) into whitespace-separated fields.
  Fast path: tabs and carriage returns become spaces and a line that splits into exactly
  `nfields` non-empty fields is taken as is; any other line is split by a regular expression.
  Blank lines are skipped. Casting to numbers is left to the caller (try_cast), so that a bad
  value is found and reported, never silently dropped.
-#}
INSERT INTO {{ target }}
WITH raw AS (
    SELECT filename, replace(replace(line, chr(9), ' '), chr(13), ' ') AS line
    FROM read_csv($files, columns = {'line': 'VARCHAR'}, delim = '\x01', quote = '',
                  escape = '', header = false, auto_detect = false, filename = true,
                  strict_mode = false)
    WHERE line IS NOT NULL
),
split AS (
    SELECT filename, line, string_split(line, ' ') AS f FROM raw
),
fields AS (
    SELECT filename,
           CASE WHEN len(f) = {{ nfields }} AND NOT list_contains(f, '') THEN f
                ELSE regexp_split_to_array(regexp_replace(line, '^\s+|\s+$', '', 'g'), '\s+')
           END AS f
    FROM split
)
SELECT filename, len(f) AS nf
{% for name, index, cast in columns %}
     , {% if cast %}try_cast(f[{{ index }}] AS {{ cast }}){% else %}f[{{ index }}]{% endif %} AS {{ name }}
{% endfor %}
FROM fields
WHERE f <> [''];
