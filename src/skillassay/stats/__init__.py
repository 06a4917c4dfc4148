"""Pure statistics over plain numbers, one file per method family: `binomial` (rates within an
eval), `beta_binomial` (the random-effects model of per-eval counts), `multiplicity` (exact
per-eval tests, Benjamini-Hochberg), `decide` (an interval against a threshold), `sizing`
(sample sizes), `means` (means over evals), `lognormal` (the cost interval), `paired` (the
paired difference and its sign-flip test), `ratio` (ratios of paired means), `sign_flip` (the
paired test's limits), `distributions` and `ufuncs` (scipy's
quantiles without importing scipy.stats). No skillassay domain types here: analyze/ turns
records into figures with these. What each method is and how it was checked: docs/statistics.md."""
