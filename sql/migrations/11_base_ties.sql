{#- Schema version 11: the cache irw_base gains the columns tie_a and tie_n (the tie each
    document is in, for tie policy expected) and the table irw_base_ties_built records whose
    base holds them. Only caches change: a migration drops them first, and the schema's
    statements create them anew; they are rebuilt on demand. -#}

{% macro before(columns) -%}
{%- endmacro %}

{% macro after(columns) -%}
{%- endmacro %}
