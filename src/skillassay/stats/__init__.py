"""Pure statistics over plain numbers, one file per method family: `binomial` (rates within
an eval), `multiplicity` (exact per-eval tests, Benjamini-Hochberg), `decide` (an interval
against a threshold), `sizing` (sample sizes), `distributions` and `ufuncs` (scipy's quantiles
without importing scipy.stats). No skillassay domain types here: analyze/ turns records into
figures with these. What each method is and how it was checked: docs/statistics.md."""
