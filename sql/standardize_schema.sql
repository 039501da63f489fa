{% import '_dialect.sql' as d %}
{#-
  Score standardization (Webber, Moffat & Zobel, SIGIR 2008; SPEC section 4): the tables
  that hold factor sets, the SQL macros z and Phi, and the views of standardized scores.

  Run on every write connection (db.SCHEMA_TEMPLATES), so every statement is idempotent.
  Nothing here needs the Python package: a plain DuckDB connection to the warehouse file
  can read std_scores / std_score_means.

  Phi is computed in pure SQL (DuckDB has no erf), from the normal density
  pdf(z) = exp(-z^2/2) / sqrt(2 pi) and two classical expansions, each in u = z^2:
    |z| < 2 sqrt(2):  Phi(z) = 1/2 + pdf(z) z S(u), S(u) = sum_{n>=0} u^n / (1.3.5...(2n+1))
                      (the series of erf with positive terms: no cancellation), SERIES_TERMS
                      terms in nested Horner form 1 + u/3 (1 + u/5 (1 + ...));
    otherwise:        the tail q = Phi(-|z|) = pdf(z) |z| / D(u) from the even contraction of
                      Laplace's continued fraction for erfc:
                      D(u) = u + 1 - 1.2/(u + 5 - 3.4/(u + 9 - 5.6/(...))), level k being
                      u + 4k - 3 - (2k-1)(2k)/(...), evaluated bottom-up at depth CF_DEPTH;
                      Phi = q for z < 0 and 1 - q for z > 0.
  Against scipy.special.ndtr on [-8, 8]: absolute error < 1e-15, relative error in the lower
  tail < 1e-12 (tests/test_standardize.py checks 1e-9 absolute on a dense grid). The
  argument is referenced ~60 times after macro expansion: pass a column, not a long
  expression (the views compute z in a subquery first).
-#}
{% set SERIES_TERMS = 30 %}
{% set CF_DEPTH = 24 %}
{% set PI = 3.141592653589793 %}
{% set SQRT2 = 2 ** 0.5 %}
{% set ns = namespace(series='1.0::DOUBLE', cf='(u + ' ~ ((4 * CF_DEPTH + 1) | num) ~ ')') %}
{% for n in range(SERIES_TERMS, 0, -1) %}
{% set ns.series = '(1.0 + u / ' ~ ((2 * n + 1) | num) ~ ' * ' ~ ns.series ~ ')' %}
{% endfor %}
{% for k in range(CF_DEPTH, 0, -1) %}
{% set ns.cf = '(u + ' ~ ((4 * k - 3) | num) ~ ' - ' ~ (((2 * k - 1) * 2 * k) | num) ~ ' / ' ~ ns.cf ~ ')' %}
{% endfor %}

-- The catalogue of factor sets. One set = one qrels, one or more measures, one reference.
--   factors     the set's name (user-chosen; several sets coexist)
--   qrels       the qrels whose scores the factors standardize (for an imported set: the
--               local qrels it was mapped to)
--   measures    the canonical measure names, for reading (", "-separated)
--   reference   description of the reference runs (run spec and count, or as imported)
--   n_ref       number of reference runs
--   source      'computed', or the file an imported set came from
CREATE TABLE IF NOT EXISTS std_factor_sets (
    factors     VARCHAR PRIMARY KEY,
    qrels       VARCHAR NOT NULL,
    measures    VARCHAR NOT NULL,
    reference   VARCHAR NOT NULL,
    n_ref       INTEGER NOT NULL,
    description VARCHAR,
    source      VARCHAR NOT NULL,
    created_at  TIMESTAMP NOT NULL
);

-- The factors: per set, measure and topic, mu = mean and sigma = sample standard deviation
-- (n - 1) of the reference runs' scores, n_ref = how many reference scores there were.
CREATE TABLE IF NOT EXISTS std_factors (
    factors VARCHAR NOT NULL,
    qrels   VARCHAR NOT NULL,
    measure VARCHAR NOT NULL,
    topic   VARCHAR NOT NULL,
    mu      DOUBLE  NOT NULL,
    sigma   DOUBLE  NOT NULL,
    n_ref   INTEGER NOT NULL
);

-- The reference runs of the sets computed in this warehouse (imported sets have none): runs
-- of the collection of the set's qrels.
CREATE TABLE IF NOT EXISTS std_reference_runs (
    factors VARCHAR NOT NULL,
    run_id  VARCHAR NOT NULL
);

-- Internal: S(u) and D(u) of the header, and Phi of a DOUBLE.
{{ d.scalar_function('irw_phi_series', ['u']) }}
    {{ ns.series }};

{{ d.scalar_function('irw_phi_cf', ['u']) }}
    {{ ns.cf }};

{{ d.scalar_function('irw_normal_cdf', ['z']) }}
    CASE
        WHEN isnan(z) THEN z
        WHEN z <= -40 THEN 0.0::DOUBLE
        WHEN z >= 40 THEN 1.0::DOUBLE
        WHEN abs(z) < {{ (2 * SQRT2) | num }}
            THEN 0.5 + {{ (1 / (2 * PI) ** 0.5) | num }} * exp(-0.5 * z * z) * z * irw_phi_series(z * z)
        ELSE (CASE WHEN z < 0 THEN 0.0 ELSE 1.0 END)
             + (CASE WHEN z < 0 THEN 1.0 ELSE -1.0 END)
               * {{ (1 / (2 * PI) ** 0.5) | num }} * exp(-0.5 * z * z) * abs(z) / irw_phi_cf(z * z)
    END;

-- std_normal_cdf(z): the standard normal CDF Phi(z), accurate to ~1e-15 (NULL stays NULL).
{{ d.scalar_function('std_normal_cdf', ['z']) }}
    irw_normal_cdf(CAST(z AS DOUBLE));

-- std_z(x, mu, sigma): the standardized score (x - mu) / sigma; 0 when sigma = 0.
{{ d.scalar_function('std_z', ['x', 'mu', 'sigma']) }}
    CASE WHEN sigma = 0 THEN 0.0::DOUBLE ELSE (x - mu) / sigma END;

-- Standardized per-topic scores: every stored score (table scores, tie policy trec_eval) of
-- a qrels and measure that a factor set covers, with its factors, z and phi = Phi(z). A topic the set has no
-- factors for keeps its row with mu, sigma, z and phi NULL. in_reference: was the run one of
-- the set's reference runs (NULL for an imported set, whose reference runs are not known).
CREATE OR REPLACE VIEW std_scores AS
SELECT factors, qrels, measure, collection, run_id, topic, value, mu, sigma, n_ref, z,
       std_normal_cdf(z) AS phi, in_reference
FROM (
    SELECT c.factors, s.qrels, s.measure, s.collection, s.run_id, s.topic, s.value,
           f.mu, f.sigma, f.n_ref,
           std_z(s.value, f.mu, f.sigma) AS z,
           CASE WHEN k.factors IS NULL THEN NULL ELSE r.run_id IS NOT NULL END AS in_reference
    FROM scores s
    LEFT JOIN qrels_info qi ON qi.qrels = s.qrels
    JOIN (SELECT DISTINCT factors, qrels, measure FROM std_factors) c
      ON c.qrels = s.qrels AND c.measure = s.measure
    LEFT JOIN std_factors f
      ON f.factors = c.factors AND f.qrels = s.qrels AND f.measure = s.measure AND f.topic = s.topic
    LEFT JOIN (SELECT DISTINCT factors FROM std_reference_runs) k ON k.factors = c.factors
    LEFT JOIN std_reference_runs r
      ON r.factors = c.factors AND r.run_id = s.run_id AND s.collection = qi.collection
    WHERE s.ties = 'trec_eval'
) AS standardized;

-- Per run: the means over topics of phi, z and the raw value (over the topics that have
-- factors: n_topics), and n_missing = stored topics without factors (the means are then
-- not comparable with other runs').
CREATE OR REPLACE VIEW std_score_means AS
SELECT factors, qrels, measure, collection, run_id,
       avg(phi) AS mean_phi,
       avg(z) AS mean_z,
       avg(value) FILTER (WHERE phi IS NOT NULL) AS mean_value,
       count(phi)::INTEGER AS n_topics,
       (count(*) - count(phi))::INTEGER AS n_missing,
       bool_or(in_reference) AS in_reference
FROM std_scores
GROUP BY factors, qrels, measure, collection, run_id;
