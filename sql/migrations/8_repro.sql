{#- Schema version 8: the saved results of `irw repro` (tables repro_effects and
    repro_order). They are new tables, which the schema's statements create where they are
    missing; the step records the version, so that a reader of an older warehouse is told. -#}

{% macro before(columns) -%}
{%- endmacro %}

{% macro after(columns) -%}
{%- endmacro %}
