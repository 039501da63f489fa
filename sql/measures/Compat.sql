{# Compat(p) (Clarke, Vtyurina & Smucker, TOIS 2021; ir_measures' Compat): the rank-biased
   overlap of the ranking with the ideal ranking most compatible with it -- the relevant
   documents by grade, descending, those of one grade in the ranking's order, then the ones it
   does not retrieve -- over the ideal ranking's RBO with itself.
   With D = max(n, R) (n the ranking's length, R the relevant documents), F(x) the partial sum
   sum_{i<=x} p^(i-1)/i, and m_d = max(rank, ideal position) of each relevant document
   retrieved (ideal position: m.grade_above, the documents of higher grades, plus its place
   among the retrieved ones of its grade), the overlap sum is
   sum_{i<=D} p^(i-1) |ranking[:i] & ideal[:i]| / i = sum_d (F(D) - F(m_d - 1)), and the
   ideal's is (1 - p^R)/(1 - p) + R (F(D) - F(R)); normalize=False divides by the weights'
   sum (1 - p^D)/(1 - p) instead.
   F in closed form: with u = -ln(1 - s), F(x) = (1/p) int_0^U (1 - (1 - e^-u)^x) du,
   U = -ln(1 - p), whose integrand is a smooth step: 32-point Gauss-Legendre quadrature
   gives it within 1e-12 for every x and p up to 0.999, 1e-9 at 0.9999 (tests/test_compat.py). #}
{% import '_dialect.sql' as d %}
{% set NODES = [0.001368069075259215, 0.007194244227365809, 0.017618872206246805, 0.03254696203113017, 0.051839422116973954, 0.07531619313371501, 0.10275810201602881, 0.13390894062985514, 0.16847786653489238, 0.20614212137961885, 0.24655004553388532, 0.28932436193468236, 0.33406569885893617, 0.38035631887393145, 0.42776401920860174, 0.4758461671561308, 0.5241538328438692, 0.5722359807913983, 0.6196436811260685, 0.6659343011410639, 0.7106756380653176, 0.7534499544661146, 0.7938578786203812, 0.8315221334651076, 0.8660910593701449, 0.8972418979839711, 0.924683806866285, 0.948160577883026, 0.9674530379688698, 0.9823811277937532, 0.9928057557726342, 0.9986319309247408] %}
{% set WEIGHTS = [0.003509305004735253, 0.008137197365452872, 0.012696032654631012, 0.017136931456510882, 0.021417949011113418, 0.025499029631188046, 0.029342046739267783, 0.03291111138818084, 0.03617289705442417, 0.039096947893535114, 0.041655962113473353, 0.04382604650220189, 0.04558693934788189, 0.046922199540402255, 0.047819360039637354, 0.04827004425736383, 0.04827004425736383, 0.047819360039637354, 0.046922199540402255, 0.04558693934788189, 0.04382604650220189, 0.041655962113473353, 0.039096947893535114, 0.03617289705442417, 0.03291111138818084, 0.029342046739267783, 0.025499029631188046, 0.021417949011113418, 0.017136931456510882, 0.012696032654631012, 0.008137197365452872, 0.003509305004735253] %}
{% macro partial(m, x) -%}
{% set terms = [] %}
{% for c in NODES %}{% set _ = terms.append(WEIGHTS[loop.index0] ~ ' * pow(1 - pow(1 - ' ~ m.p ~ ', ' ~ c ~ '), ' ~ x ~ ')') %}{% endfor %}
({{ d.div('-ln(1 - ' ~ m.p ~ ')', m.p) }} * (1 - ({{ terms | join(' + ') }})))
{%- endmacro %}
{% macro prepare(m) -%}
{{ m.grade_above }} + row_number() OVER (PARTITION BY run_id, topic, grade ORDER BY {{ m.pos }}) AS {{ m.id }}_q
{%- endmacro %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE grade >= 1) AS {{ m.id }}_c,
{{ d.fsum() }}({{ partial(m, 'greatest(' ~ m.pos ~ ', ' ~ m.id ~ '_q) - 1') }}) FILTER (WHERE grade >= 1) AS {{ m.id }}_f
{%- endmacro %}
{% macro value(m) -%}
{% set depth = 'greatest(' ~ m.n ~ ', ' ~ m.R ~ ')' %}
{% set overlap = '(coalesce(' ~ m.id ~ '_c, 0) * ' ~ partial(m, depth) ~ ' - coalesce(' ~ m.id ~ '_f, 0.0))' %}
{% set ideal = d.div('1 - pow(' ~ m.p ~ ', ' ~ m.R ~ ')', '1 - ' ~ m.p) ~ ' + ' ~ m.R ~ ' * (' ~ partial(m, depth) ~ ' - ' ~ partial(m, m.R) ~ ')' %}
CASE WHEN {{ m.normalize }} THEN (CASE WHEN {{ m.R }} > 0 THEN {{ d.div(overlap, ideal) }} ELSE 0.0 END)
     WHEN {{ depth }} > 0 THEN {{ d.div(overlap ~ ' * (1 - ' ~ m.p ~ ')', '1 - pow(' ~ m.p ~ ', ' ~ depth ~ ')') }} ELSE 0.0 END
{%- endmacro %}
