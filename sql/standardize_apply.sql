{#-
  Standardize per-topic scores with a set of factors: z = std_z(value, mu, sigma) and
  phi = std_normal_cdf(z), matched on (measure, topic).

  The scores come from the registered relation irw_std_scores_in (run_id, topic, measure,
  value). The factors come from the stored set $factors (stored = true) or from the
  registered relation irw_std_factors_in (measure, topic, mu, sigma).
  Rows without factors are dropped: the caller checks coverage first.
-#}
SELECT p.run_id, p.topic, p.measure, p.value, f.mu, f.sigma,
       std_z(p.value, f.mu, f.sigma) AS z,
       std_normal_cdf(std_z(p.value, f.mu, f.sigma)) AS phi
FROM irw_std_scores_in p
{% if stored %}
JOIN (SELECT measure, topic, mu, sigma FROM std_factors WHERE factors = $factors) f
{% else %}
JOIN irw_std_factors_in f
{% endif %}
  ON f.measure = p.measure AND f.topic = p.topic
ORDER BY p.run_id, p.topic, p.measure
