{# The estimated number of relevant documents (R), as sample_eval computes it (inum_rel):
   over the strata with a sampled document, relevant sampled x size / sampled. #}
{% macro value(m) -%}
coalesce(est_R, 0)
{%- endmacro %}
