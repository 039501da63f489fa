{#-
  Move ranked run lines (irw_staging.irw_ranked, with ranking lengths per (run, topic) in
  irw_staged_topics) into the public tables: the warehouse's final transaction of a load.
  Bound: $policy (the ranking policy's name), $collection (the runs' collection).
-#}
{% import 'load.sql' as load %}
INSERT INTO runs
{{ load.runs_rows('$collection') }};

INSERT INTO run_topics
{{ load.run_topics_rows('$collection') }};

INSERT INTO run_loads
{{ load.run_loads_rows('$collection', '$policy') }};
