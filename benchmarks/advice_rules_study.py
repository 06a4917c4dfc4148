"""Which sample-size rule keeps an 80% promise? A fast study of candidate advice rules for the
paired skill-vs-baseline difference (`power.evals_needed`), outside the library's slow path.

The setting is benchmarks/advice_power.py's: per-eval baseline rates ~ Beta(2,2), skill =
baseline + effect clipped to [0, 1], K trials per arm per eval, a pilot of E evals; a fresh run of
n evals succeeds when the exact two-sided sign-flip test of the per-eval differences (what
`paired_difference` runs) gives p < 0.05 with the truth's sign (advice_power.py's fixed-truth
criterion; with truths drawn from the prior, as `--truth prior` there, the pilot's sign, which is
what an assurance is the probability of). What makes it fast:

* A run's per-eval differences are i.i.d. on the lattice {-K, ..., K} / K, with a distribution
  pi(effect, K) computed once by quadrature over Beta(2,2). A fresh run is a multinomial draw of
  lattice counts, and its exact sign-flip p-value comes from the characteristic function
  prod_j cos(w j)^{c_j} by one FFT (every sign assignment, as the exact test enumerates them);
  above n K = EXACT_MAX the normal approximation with a continuity correction (the library's
  own Monte Carlo test is an approximation of the exact one there too). The power of the real
  test at each (effect, K, n) is tabulated from POWER_DRAWS such runs, and a rule's realized
  power at a fixed truth is the mean over its advised pilots of that table at the advised n
  (uncapped: no re-run at 200).
* Pilots are drawn in full (rates, trials) and summarised as the library summarises them.

Rules (each returns the advised n or None, and the promise it would state):

* `assurance`: the library's advice before it was planned for a stated effect (power_stats then:
  assurance.evals_for_assurance on the sign-flip criterion,
  prior flat on log sigma and on the mean cut to difference_range, never below
  evals_with_differing's floor, none when the sign probability is 0.8 or less); the library's
  own functions, called per pilot.
* `assurance, sign >= s`: the same, withheld unless the sign probability is at least s.
* `dirichlet T in all`: posterior predictive of the per-eval differences as a categorical on
  the lattice, Dirichlet(T / (2K + 1) + pilot counts) (the saturated hierarchical model of rate
  pairs: any beta-binomial hierarchy of per-eval rate pairs induces such a categorical; T = the
  prior's pseudo-evals, spread evenly over the lattice), each posterior draw's power of the
  sign-flip test from its normal form with the continuity correction.
* `skeptical tau`: normal model, prior N(0, tau^2) on the mean difference (flat on log sigma),
  the same criterion: a proper prior centred on no effect.
* `lower bound g`: size for 80% power (same criterion, sigma = s) at the one-sided g lower
  confidence bound of the mean difference (t, m - 1 df); none when that bound is <= 0. Its
  promise is conditional: "80% if the difference is at least L".
* `degenerate: 2 or 100,000`: not a candidate (rule_degenerate): it shows that power averaged
  over pilots at a fixed truth can be 80% without any pilot's promise being true.

Results (400 pilots per cell, seed 0, 655 CPU-s; the degenerate row `--only degenerate
--no-prior`, 24 CPU-s) and what they show: benchmarks/README.md, "Advice rules".

    python benchmarks/advice_rules_study.py                 # benchmarks/README.md's tables (about 11 CPU-min)
    python benchmarks/advice_rules_study.py --pilots 200    # a quicker look

Deterministic for a given --seed.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import assurance_sizing as assurance  # benchmarks/ (the retired sizing the study compares)
import numpy as np
from scipy import special as sp
from scipy import stats as sps

from skillassay.analyze import advice as statistics_module
from skillassay.stats.sizing import evals_with_differing

EFFECTS = (0.15, 0.3)
KS = (1, 3, 10)
EVALS = (5, 10, 20)
EFFECT_PRIOR = (-0.1, 0.5)  # advice_power.py --truth prior
TARGET = 0.8
ALPHA = 0.05
EXACT_MAX = 400  # exact sign-flip p-values (FFT) up to n K = EXACT_MAX, normal form above
POWER_DRAWS = 2000
N_GRID = np.unique(np.concatenate([np.arange(2, 41), [45, 50, 60, 70, 80, 90, 100],
                                   np.round(np.geomspace(110, 100_000, 75))])).astype(int)
MAX_N = 100_000


# ---------------------------------------------------------------------------------------------
# The truth: the lattice distribution of one eval's difference, and the real test's power


def lattice_pmf(effect: float, k: int, nodes: int = 2000) -> np.ndarray:
    """P(X_a - X_b = j), j = -K..K: X_b ~ Bin(K, p), X_a ~ Bin(K, clip(p + effect)), p ~
    Beta(2,2) (midpoint rule)."""
    p = (np.arange(nodes) + 0.5) / nodes
    w = 6 * p * (1 - p) / nodes
    pa = np.clip(p + effect, 0, 1)
    x = np.arange(k + 1)
    fa = sps.binom.pmf(x[None, :], k, pa[:, None])  # (nodes, K+1)
    fb = sps.binom.pmf(x[None, :], k, p[:, None])
    out = np.zeros(2 * k + 1)
    for xa in range(k + 1):
        for xb in range(k + 1):
            out[xa - xb + k] += float(np.sum(w * fa[:, xa] * fb[:, xb]))
    return out / out.sum()


def signflip_p(counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided sign-flip p-values and sums S for runs given as lattice counts (R, 2K+1):
    exact (every sign assignment, by FFT of the characteristic function) when n K <= EXACT_MAX,
    else the normal form with a continuity correction."""
    j = np.arange(-k, k + 1)
    s = counts @ j
    n = int(counts[0].sum())
    absc = counts[:, k + 1:] + counts[:, :k][:, ::-1]  # counts of |d| = 1..K
    if n * k > EXACT_MAX:
        q = absc @ (np.arange(1, k + 1) ** 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (np.abs(s) - 1) / np.sqrt(q)
        p = np.where(s == 0, 1.0, np.minimum(1.0, 2 * sp.ndtr(-z)))
        return p, s
    m = 2 * n * k + 1
    w = 2 * np.pi * np.arange(m) / m
    c = np.cos(np.outer(np.arange(1, k + 1), w))  # (K, M)
    logphi = absc @ np.log(np.abs(c))
    neg = (absc @ (c < 0).astype(float)) % 2
    phi = np.where(neg > 0.5, -1.0, 1.0) * np.exp(logphi)
    pmf = np.real(np.fft.fft(phi, axis=1)) / m  # pmf[s mod M]
    order = np.concatenate([np.arange(n * k, -1, -1)])  # s = nK, ..., 0
    upper = np.cumsum(pmf[:, order], axis=1)[:, ::-1]  # upper[:, s] = P(S* >= s), s = 0..nK
    a = np.abs(s).astype(int)
    p = np.where(s == 0, 1.0, np.minimum(1.0, 2 * upper[np.arange(len(s)), a]))
    return np.clip(p, 0, 1), s


def power_table(effects: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(power in the positive direction, in the negative) of the real test: (effects, N_GRID)."""
    up = np.zeros((len(effects), len(N_GRID)))
    down = np.zeros_like(up)
    for i, e in enumerate(effects):
        pmf = lattice_pmf(float(e), k)
        for jn, n in enumerate(N_GRID):
            counts = rng.multinomial(int(n), pmf, size=POWER_DRAWS)
            p, s = signflip_p(counts, k)
            up[i, jn] = np.mean((p < ALPHA) & (s > 0))
            down[i, jn] = np.mean((p < ALPHA) & (s < 0))
    return up, down


def interp_power(table: np.ndarray, effects: np.ndarray, effect: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Bilinear interpolation in (effect, log n); n beyond the grid takes its last column."""
    x = np.log(np.clip(n, N_GRID[0], N_GRID[-1]).astype(float))
    lg = np.log(N_GRID.astype(float))
    jn = np.clip(np.searchsorted(lg, x) - 1, 0, len(lg) - 2)
    fn = np.clip((x - lg[jn]) / (lg[jn + 1] - lg[jn]), 0, 1)
    if len(effects) == 1:
        row = table[0]
        return row[jn] * (1 - fn) + row[jn + 1] * fn
    ie = np.clip(np.searchsorted(effects, effect) - 1, 0, len(effects) - 2)
    fe = np.clip((effect - effects[ie]) / (effects[ie + 1] - effects[ie]), 0, 1)
    v0 = table[ie, jn] * (1 - fn) + table[ie, jn + 1] * fn
    v1 = table[ie + 1, jn] * (1 - fn) + table[ie + 1, jn + 1] * fn
    return v0 * (1 - fe) + v1 * fe


# ---------------------------------------------------------------------------------------------
# Pilots


@dataclass
class Pilot:
    k: int
    m: int
    xa: np.ndarray  # (E,) skill passes per eval
    xb: np.ndarray

    @property
    def d(self) -> np.ndarray:
        return (self.xa - self.xb) / self.k

    def lattice_counts(self) -> np.ndarray:
        return np.bincount(self.xa - self.xb + self.k, minlength=2 * self.k + 1)


def draw_pilots(rng: np.random.Generator, n: int, m: int, k: int, effects: np.ndarray) -> list[Pilot]:
    pb = rng.beta(2, 2, (n, m))
    pa = np.clip(pb + effects[:, None], 0, 1)
    xa, xb = rng.binomial(k, pa), rng.binomial(k, pb)
    return [Pilot(k, m, xa[i], xb[i]) for i in range(n)]


@dataclass
class Summary:
    """What power_stats sizes on."""

    mean: float
    sd: float  # planning sd
    floor: int | None
    t: float
    step: float  # lattice over sd
    bounds: tuple[float, float] | None
    ok: bool  # power_stats gives a size at all (non-zero mean, spread known, a floor)


def summarise(p: Pilot) -> Summary:
    d = p.d
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0 and p.k >= 2:
        ra, rb = p.xa / p.k, p.xb / p.k
        noise = (np.mean(ra * (1 - ra) * p.k / (p.k - 1)) + np.mean(rb * (1 - rb) * p.k / (p.k - 1))) / p.k
        sd = math.sqrt(noise)
    frac = float(np.count_nonzero(p.xa != p.xb)) / p.m
    floor = evals_with_differing(frac)
    ok = not math.isclose(mean, 0.0, abs_tol=1e-9) and sd > 0 and floor is not None
    se = sd / math.sqrt(p.m) if sd > 0 else math.nan
    lo, hi = statistics_module.difference_range(float(np.mean(p.xb / p.k)))
    bounds = (lo / se, hi / se) if ok else None
    return Summary(mean, sd, floor, mean / se if ok else math.nan, (1 / p.k) / sd if sd > 0 else 0.0, bounds, ok)


# ---------------------------------------------------------------------------------------------
# Rules: (advised n or None, promise stated; for Bayesian rules the assurance at n)


Advice = tuple[int | None, float]


def rule_assurance(p: Pilot, s: Summary, min_sign: float = TARGET) -> Advice:
    if not s.ok:
        return None, math.nan
    side = assurance.fresh_ceiling(s.t, p.m, s.bounds)
    if side <= min_sign:
        return None, math.nan
    e = assurance.evals_for_assurance(s.t, p.m, sign_flip_step=s.step, bounds=s.bounds)
    if e is None:
        return None, math.nan
    n = max(e, s.floor or 0)
    return n, assurance.signflip_assurance(s.t, p.m, n, s.step, bounds=s.bounds)


def _z(n: np.ndarray) -> np.ndarray:
    tc = sps.t.ppf(1 - ALPHA / 2, n - 1)
    return tc * np.sqrt(n / (n - 1 + tc * tc))


N_SEARCH = np.unique(np.round(np.geomspace(2, MAX_N, 120))).astype(int)
Z_SEARCH = _z(N_SEARCH.astype(float))


def _power_normal(mu: np.ndarray, sigma: np.ndarray, n: np.ndarray, z: np.ndarray, step: float) -> np.ndarray:
    """The sign-flip test's power from its normal form: S - step > z sqrt(Q), S ~ N(n mu, n sigma^2),
    Q ~ n (sigma^2 + mu^2); draws (rows) by sizes (columns)."""
    mu, sigma = mu[:, None], np.maximum(sigma[:, None], 1e-9)
    return sp.ndtr((n * mu - step - z * np.sqrt(n * (sigma**2 + mu**2))) / (sigma * np.sqrt(n)))


def _smallest_on_grid(assur: np.ndarray) -> int | None:
    ok = np.nonzero(assur >= TARGET)[0]
    return int(N_SEARCH[ok[0]]) if ok.size else None


def _draw_based(mu: np.ndarray, sigma: np.ndarray, wts: np.ndarray, s: Summary, k: int) -> Advice:
    """Advice from posterior draws of (mu, sigma) oriented to the pilot's side: none when their
    sign probability is 0.8 or less; else the smallest grid size with assurance >= 0.8, refined
    by bisection between grid points."""
    if np.sum(wts * (mu > 0)) <= TARGET:
        return None, math.nan
    assur = wts @ _power_normal(mu, sigma, N_SEARCH[None, :], Z_SEARCH[None, :], 1 / k)
    g = _smallest_on_grid(assur)
    if g is None:
        return None, math.nan
    i = int(np.searchsorted(N_SEARCH, g))
    lo = int(N_SEARCH[i - 1]) if i > 0 else 1
    cand = np.arange(lo + 1, g + 1)
    a2 = wts @ _power_normal(mu, sigma, cand[None, :], _z(cand.astype(float))[None, :], 1 / k)
    n = int(cand[np.nonzero(a2 >= TARGET)[0][0]])
    n = max(n, s.floor or 0)
    return n, float(wts @ _power_normal(mu, sigma, np.array([[n]]), _z(np.array([[float(n)]])), 1 / k)[:, 0])


def rule_dirichlet(p: Pilot, s: Summary, a: float, rng: np.random.Generator, draws: int = 1000) -> Advice:
    if not s.ok:
        return None, math.nan
    g = rng.gamma(p.lattice_counts() + a, size=(draws, 2 * p.k + 1))
    pi = g / g.sum(axis=1, keepdims=True)
    v = np.arange(-p.k, p.k + 1) / p.k
    mu = pi @ v
    m2 = pi @ v**2
    sign = 1.0 if s.mean > 0 else -1.0
    return _draw_based(sign * mu, np.sqrt(np.maximum(m2 - mu**2, 0)), np.full(draws, 1 / draws), s, p.k)


def rule_skeptical(p: Pilot, s: Summary, tau: float, rng: np.random.Generator, draws: int = 1000) -> Advice:
    """Prior N(0, tau^2) on the mean, flat on log sigma: sigma drawn from the flat posterior and
    reweighted by the marginal likelihood of the mean under the prior; the mean given sigma is
    the normal posterior."""
    if not s.ok:
        return None, math.nan
    m = p.m
    sig = s.sd * np.sqrt((m - 1) / rng.chisquare(m - 1, draws))
    se2 = sig**2 / m
    logw = 0.5 * np.log(se2 / (se2 + tau**2)) - s.mean**2 / (2 * (se2 + tau**2))
    w = np.exp(logw - logw.max())
    w /= w.sum()
    v = 1 / (1 / se2 + 1 / tau**2)
    mu = v * s.mean / se2 + np.sqrt(v) * rng.standard_normal(draws)
    sign = 1.0 if s.mean > 0 else -1.0
    return _draw_based(sign * mu, sig, w, s, p.k)


def rule_lower_bound(p: Pilot, s: Summary, level: float) -> Advice:
    """80% power (normal form of the sign-flip test, sigma = s) at the one-sided `level` lower
    bound of |mean|; none when that bound is at or below 0. The promise is the bound it used."""
    if not s.ok:
        return None, math.nan
    se = s.sd / math.sqrt(p.m)
    lb = abs(s.mean) - float(sps.t.ppf(level, p.m - 1)) * se
    if lb <= 0:
        return None, math.nan
    pw = _power_normal(np.array([lb]), np.array([s.sd]), N_SEARCH[None, :], Z_SEARCH[None, :], 1 / p.k)[0]
    g = _smallest_on_grid(pw)
    if g is None:
        return None, lb
    i = int(np.searchsorted(N_SEARCH, g))
    lo = int(N_SEARCH[i - 1]) if i > 0 else 1
    cand = np.arange(lo + 1, g + 1)
    pw2 = _power_normal(np.array([lb]), np.array([s.sd]), cand[None, :], _z(cand.astype(float))[None, :], 1 / p.k)[0]
    n = int(cand[np.nonzero(pw2 >= TARGET)[0][0]])
    return max(n, s.floor or 0), lb


# ---------------------------------------------------------------------------------------------
# The study


@dataclass
class Outcome:
    given: int = 0
    pilots: int = 0
    power: list[float] | None = None  # realized power at each advised n
    promise: list[float] | None = None
    sizes: list[int] | None = None
    kept_if_above: list[float] | None = None  # lower-bound rules: power where the truth >= the bound

    def __post_init__(self) -> None:
        self.power, self.promise, self.sizes, self.kept_if_above = [], [], [], []


def rules(rng: np.random.Generator) -> dict[str, Callable[[Pilot, Summary, dict], Advice]]:
    """name -> rule(pilot, summary, cache); the assurance variants share one library call."""

    def base(p: Pilot, s: Summary, cache: dict) -> Advice:
        if "a" not in cache:
            side = assurance.fresh_ceiling(s.t, p.m, s.bounds) if s.ok else math.nan
            cache["side"] = side
            cache["a"] = rule_assurance(p, s)
        return cache["a"]

    def withheld(level: float) -> Callable[[Pilot, Summary, dict], Advice]:
        def f(p: Pilot, s: Summary, cache: dict) -> Advice:
            n, pr = base(p, s, cache)
            return (n, pr) if n is not None and cache["side"] >= level else (None, math.nan)
        return f

    out: dict[str, Callable[[Pilot, Summary, dict], Advice]] = {"assurance (former advice)": base}
    for lv in (0.9, 0.95, 0.99):
        out[f"assurance, sign >= {lv:g}"] = withheld(lv)
    for total in (1.0, 3.0):  # prior counts over the 2K + 1 lattice points, in all
        out[f"dirichlet {total:g} in all"] = lambda p, s, c, t=total: rule_dirichlet(p, s, t / (2 * p.k + 1), rng)
    for tau in (0.1, 0.2):
        out[f"skeptical tau={tau:g}"] = lambda p, s, c, tau=tau: rule_skeptical(p, s, tau, rng)
    for lv in (0.6, 0.8, 0.9, 0.95):
        out[f"lower bound {lv:g}"] = lambda p, s, c, lv=lv: rule_lower_bound(p, s, lv)
    out["degenerate: 2 or 100,000"] = lambda p, s, c: rule_degenerate(p)
    return out


def rule_degenerate(p: Pilot) -> Advice:
    """Not a candidate: 2 evals (where p < 0.05 is impossible) for about a fifth of the pilots,
    chosen by a checksum of their data, 100,000 for the rest. Its power averaged over pilots is
    about 80% at every fixed truth that 100,000 evals detect, and no pilot's promise is true:
    the fixed-truth average alone cannot tell an honest rule from this one."""
    h = zlib.crc32(p.xa.astype(np.int64).tobytes() + p.xb.astype(np.int64).tobytes()) % 1000
    return (2 if h < 200 else MAX_N), math.nan


def fmt_cell(o: Outcome, conditional: bool) -> str:
    if not o.given:
        return f"0/{o.pilots}"
    pw = np.asarray(o.power)
    mean = pw.mean() * 100
    se = pw.std(ddof=1) / math.sqrt(len(pw)) * 100 if len(pw) > 1 else math.nan
    med = int(np.median(o.sizes))
    text = f"{o.given / o.pilots * 100:.0f}%: {mean:.1f} ±{1.96 * se:.1f}, n {med}"
    if conditional and o.kept_if_above:
        text += f", {np.mean(o.kept_if_above) * 100:.0f} if ≥L"
    return text


def advise_one(rule_set: dict[str, Callable[[Pilot, Summary, dict], Advice]], p: Pilot,
               cell: dict[str, Outcome], power_of: Callable[[Summary, int], float],
               truth_difference: float | None) -> None:
    """Every rule's advice for one pilot, and the power each advised size has, into `cell`; with
    a fixed truth (`truth_difference`), also the lower-bound rules' power where their bound held."""
    s = summarise(p)
    cache: dict = {}
    for name, rule in rule_set.items():
        n, pr = rule(p, s, cache)
        o = cell[name]
        o.pilots += 1
        if n is None:
            continue
        o.given += 1
        pw = power_of(s, n)
        o.power.append(pw)
        o.promise.append(pr)
        o.sizes.append(n)
        if truth_difference is not None and name.startswith("lower bound") and s.mean > 0 and pr <= truth_difference:
            o.kept_if_above.append(pw)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pilots", type=int, default=600, help="pilots per cell")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ks", type=int, nargs="*", default=list(KS))
    ap.add_argument("--evals", type=int, nargs="*", default=list(EVALS))
    ap.add_argument("--effects", type=float, nargs="*", default=list(EFFECTS), help="the fixed truths")
    ap.add_argument("--no-prior", action="store_true", help="skip the prior-averaged cells")
    ap.add_argument("--only", nargs="*", default=None, help="rule names to run (prefixes)")
    args = ap.parse_args(argv)
    started = time.process_time()
    rng = np.random.default_rng(args.seed)
    rule_set = rules(rng)
    if args.only:
        rule_set = {k: v for k, v in rule_set.items() if any(k.startswith(o) for o in args.only)}
    prior_effects = np.round(np.arange(EFFECT_PRIOR[0], EFFECT_PRIOR[1] + 1e-9, 0.05), 4)
    fixed: dict[tuple[int, int, float], dict[str, Outcome]] = {}
    prior: dict[tuple[int, int], dict[str, Outcome]] = {}
    for k in args.ks:
        tables = {e: power_table(np.array([e]), k, rng) for e in args.effects}
        ptab = None if args.no_prior else power_table(prior_effects, k, rng)
        print(f"K={k}: power tables {time.process_time() - started:.0f} CPU-s", file=sys.stderr, flush=True)
        for m in args.evals:
            for e in args.effects:
                cell = fixed[(k, m, e)] = {name: Outcome() for name in rule_set}
                up, _ = tables[e]
                for p in draw_pilots(rng, args.pilots, m, k, np.full(args.pilots, e)):
                    # a fixed truth's success is the truth's sign (advice_power.py's), whatever the pilot saw
                    advise_one(rule_set, p, cell, lambda s, n, e=e, up=up: float(
                        interp_power(up, np.array([e]), np.array([e]), np.array([n]))[0]), mean_difference(e))
            if ptab is not None:
                cell = prior[(k, m)] = {name: Outcome() for name in rule_set}
                effects = rng.uniform(*EFFECT_PRIOR, args.pilots)
                for p, eff in zip(draw_pilots(rng, args.pilots, m, k, effects), effects, strict=True):
                    advise_one(rule_set, p, cell, lambda s, n, eff=eff, tabs=ptab: float(interp_power(
                        tabs[0] if s.mean > 0 else tabs[1], prior_effects, np.array([eff]), np.array([n]))[0]), None)
            print(f"K={k}, {m} evals: {time.process_time() - started:.0f} CPU-s", file=sys.stderr, flush=True)
    report(fixed, prior, rule_set, args, time.process_time() - started)


def mean_difference(effect: float) -> float:
    b = (np.arange(20_000) + 0.5) / 20_000
    w = 6 * b * (1 - b) / 20_000
    return float(np.sum(w * (np.clip(b + effect, 0, 1) - b)))


def report(fixed: dict, prior: dict, rule_set: dict, args: argparse.Namespace, cpu: float) -> None:
    names = list(rule_set)
    print("Fixed truths: share of pilots advised: realized power (%, ±95%), median advised n")
    print("(lower-bound rules: and the power among pilots whose bound was at or below the truth)\n")
    header = ["rule", *[f"K={k}, {m}, +{e:g}" for (k, m, e) in fixed]]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name in names:
        print("| " + " | ".join([name, *(fmt_cell(fixed[c][name], True) for c in fixed)]) + " |")
    print()
    print("Summary per rule over the fixed-truth cells: cells more than 5 points under 80% "
          "(realized < 75%), over (> 85%), share of pilots advised, median of the cells' median n")
    print("\n| rule | cells < 75% | cells > 85% | worst cell | advised | median n (cells' medians) |")
    print("|---|---|---|---|---|---|")
    for name in names:
        outs = [fixed[c][name] for c in fixed]
        pw = [(np.mean(o.power) * 100 if o.given else math.nan, c) for o, c in zip(outs, fixed, strict=True)]
        under = [f"K={c[0]},{c[1]},+{c[2]:g}" for v, c in pw if v < 75]
        over = sum(v > 85 for v, _ in pw)
        worst = min(((v, c) for v, c in pw if not math.isnan(v)), default=(math.nan, (0, 0, 0.0)))
        given = sum(o.given for o in outs) / sum(o.pilots for o in outs) * 100
        meds = [np.median(o.sizes) for o in outs if o.given] or [math.nan]
        print(f"| {name} | {len(under)}: {', '.join(under) or '-'} | {over} | {worst[0]:.1f} "
              f"(K={worst[1][0]}, {worst[1][1]}, +{worst[1][2]:g}) | {given:.0f}% | {np.median(meds):.0f} |")
    if prior:
        print(f"\nTruths from the prior (effect ~ U{EFFECT_PRIOR}): advised share: realized vs promised "
              "(mean assurance at the advised n; lower-bound rules promise no average)\n")
        header = ["rule", *[f"K={k}, {m}" for (k, m) in prior], "all cells"]
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for name in names:
            cells = []
            allp, allr = [], []
            for c in prior:
                o = prior[c][name]
                allp += o.power
                allr += o.promise
                if not o.given:
                    cells.append(f"0/{o.pilots}")
                    continue
                promised = "" if name.startswith("lower") else f" vs {np.nanmean(o.promise) * 100:.1f}"
                cells.append(f"{o.given / o.pilots * 100:.0f}%: {np.mean(o.power) * 100:.1f}{promised}")
            promised = "" if name.startswith("lower") else f" vs {np.nanmean(allr) * 100:.1f}"
            cells.append(f"{np.mean(allp) * 100:.1f}{promised}" if allp else "n/a")
            print("| " + " | ".join([name, *cells]) + " |")
    print(f"\n{args.pilots} pilots per cell, {POWER_DRAWS} runs per power-table entry, seed {args.seed}; "
          f"{cpu:.0f} CPU-s.")


if __name__ == "__main__":
    main()
