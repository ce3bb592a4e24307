"""Prints reference values of calibration metrics for (confidence, correct) samples,
each from its library and from a plain-numpy re-implementation written here.

Fixtures: tests/fixtures/calibration_small.csv (80 rows), calibrated_500 and
weak_1000 of tests/fixtures/ltt_fixtures.json, and metrics_extremes (240 rows with
confidences exactly 0 and 1, on the decile edges, and two-decimal ties), which this
script writes to tests/fixtures/metrics_extremes.json. Printed with repr():

* smECE (relplot 1.0.3, relplot.smECE(f, y, return_width=True)) and its bandwidth
  sigma*. Re-implemented in smece_numpy() below (no relplot); the algorithm:
  - smooth(sigma, w)[j], at t_j = linspace(0, 1, E)[j], E = max(round(10 / sigma),
    200) (Python round, half to even): a grid of M = max(2000, round(20 / sigma))
    // 2 + 1 points g_k = k / (M - 1); each item i puts w_i (1 - a) on grid point
    k = clip(floor(f_i (M - 1)), 0, M - 2) and w_i a on k + 1, a = f_i (M - 1) - k
    (f = 1 puts all on the last point); the grid is convolved with the Gaussian
    weights ker[m] = exp(-(u_m - 0.5)^2 / (2 sigma^2)) / (sqrt(2 pi) sigma),
    u = linspace(0, 1, M), reflecting at both ends (v[-q] = v[q],
    v[M - 1 + q] = v[M - 1 - q]; the kernel reaches 0.5 either side, no further),
    s[k] = sum_m ker[m] v[refl(k + M // 2 - m)]; and s is read at t_j by linear
    interpolation between grid points. No 1/(M - 1) factor, no normalisation.
  - smECE_sigma = sum_j |N_j| / sum_j D_j, N = smooth(sigma, f - y),
    D = smooth(sigma, 1) + 1e-4 (relplot forms rs = N / D and sum(|rs| D) / sum(D)).
  - sigma*: bisection on [0, 1], 10 halvings from (lo, hi) = (0, 1): mid = (hi +
    lo) / 2 goes to lo when mid < 0.001 or mid < smECE_mid, else to hi; sigma* = hi
    (a multiple of 1/1024) and smECE = smECE_{sigma*}.
  The smooth reliability curve of relplot.rel_diagram, without its bootstrap, is
  smooth(sigma*, y) / (smooth(sigma*, 1) + 1e-4) on linspace(0, 1, 200), and its
  density band smooth(sigma*, 1 / n) there; a few mesh points are printed.
* CORP Brier decomposition (model-diagnostics, model_diagnostics.scoring.decompose
  with SquaredError()): UNC = mean((ybar - y)^2), score = Brier = mean((f - y)^2),
  r = isotonic (PAV, scikit-learn IsotonicRegression) fit of y on f, ties in f
  pooled first (their mean label, weighted by count), MCB = score - mean((r - y)^2),
  DSC = UNC - mean((r - y)^2). Re-implemented in corp_numpy().
* Murphy decomposition on 10 equal-width bins (i/10, (i+1)/10], 0 in the first:
  REL = sum_b n_b/n (fbar_b - ybar_b)^2, RES = sum_b n_b/n (ybar_b - ybar)^2,
  UNC = ybar (1 - ybar), with the Brier score beside them (they need not add up).
* Debiased L2 calibration error (uncertainty-calibration 0.1.4,
  calibration.lower_bound_scaling_ce(f, y, p=2, debias=True, num_bins=15), equal
  mass): sort f, np.array_split into 15 runs, cut at the midpoints of adjacent
  runs' last and first values, plus 1.0, duplicates dropped; an item goes to the
  first cut >= f (bins (c_{b-1}, c_b]). sqrt(max(0, sum_b n_b/n [(fbar_b -
  ybar_b)^2 - ybar_b (1 - ybar_b) / (n_b - 1)])), bins with n_b < 2 adding 0.
  calibration.get_calibration_error(f, y) (p=2, debias=True) is printed too: it
  takes that path only when f has at least n/4 distinct values, and otherwise
  get_binning_ce, one bin per distinct value.
* Spiegelhalter (MAPIE 1.6.0, mapie.metrics.calibration): Z = sum (y - f)(1 - 2f)
  / sqrt(sum (1 - 2f)^2 f (1 - f)); MAPIE's p-value is one-sided, 1 - Phi(Z);
  the two-sided 2 (1 - Phi(|Z|)) is printed beside it.

Run it in the pinned venv (the output is tests/metrics_expected.out):
python3 -m venv target/ref-venv
target/ref-venv/bin/pip install --require-hashes -r benches/requirements.txt
target/ref-venv/bin/python tests/metrics_expected.py > tests/metrics_expected.out
With --time it instead times relplot.smECE on 100,000 rows (confidence ~ Beta(4, 1),
P(correct | c) = c, numpy seed 0), once and on 20 bootstrap resamples.
"""
import json
import math
import pathlib
import sys
import time
import warnings

import numpy as np
from scipy.stats import norm

warnings.filterwarnings("ignore", category=DeprecationWarning)

import relplot  # noqa: E402
import calibration  # noqa: E402  (uncertainty-calibration)
import mapie  # noqa: E402
from mapie.metrics.calibration import spiegelhalter_p_value, spiegelhalter_statistic  # noqa: E402
from model_diagnostics.scoring import SquaredError, decompose  # noqa: E402
from importlib.metadata import version  # noqa: E402

HERE = pathlib.Path(__file__).parent
EXTREMES = HERE / "fixtures" / "metrics_extremes.json"


# ---------------------------------------------------------------- fixtures

def extremes():
    """Ties and extremes: 40 at 0, 40 at 1, 60 on the edges k/10, 100 two-decimal values."""
    rng = np.random.default_rng(11)
    c = np.concatenate([
        np.zeros(40),
        np.ones(40),
        rng.integers(1, 10, 60) / 10,
        np.floor(100 * rng.beta(2.0, 1.5, 100)) / 100,
    ])
    y = (rng.random(240) < 0.05 + 0.9 * c).astype(int)
    y[:2] = 1  # two of the zeros are correct
    y[40:42] = 0  # two of the ones are wrong
    perm = rng.permutation(240)
    return c[perm], y[perm]


def fixtures():
    out = {}
    csv = HERE / "fixtures" / "calibration_small.csv"
    data = np.genfromtxt(csv, delimiter=",", names=True, dtype=None, encoding="utf-8")
    out["calibration_small"] = (data["confidence"].astype(float), data["correct"].astype(int))
    ltt = json.loads((HERE / "fixtures" / "ltt_fixtures.json").read_text())["fixtures"]
    for name in ["calibrated_500", "weak_1000"]:
        out[name] = (np.array(ltt[name]["confidence"], float), np.array(ltt[name]["correct"], int))
    c, y = extremes()
    EXTREMES.write_text(json.dumps({
        "about": "Written by tests/metrics_expected.py: 40 confidences at 0 (2 correct), "
                 "40 at 1 (2 wrong), 60 on k/10, 100 floor(100 Beta(2, 1.5))/100; "
                 "P(correct | c) = 0.05 + 0.9 c; numpy seed 11, shuffled.",
        "confidence": c.tolist(),
        "correct": y.tolist(),
    }, separators=(",", ":")) + "\n")
    back = json.loads(EXTREMES.read_text())
    out["metrics_extremes"] = (np.array(back["confidence"], float), np.array(back["correct"], int))
    return out


# ---------------------------------------------------------------- numpy re-implementations

def linspace01(n):
    """numpy.linspace(0, 1, n): i * (1 / (n - 1)), the last point exactly 1."""
    t = np.arange(n, dtype=float) * (1.0 / (n - 1))
    t[-1] = 1.0
    return t


def smooth_np(f, w, t_eval, sigma):
    m0 = max(2000, round(20 / sigma))
    m = m0 // 2 + 1
    # Linear split of each weight between its two grid neighbours.
    pos = f * (m - 1)
    k = np.clip(np.floor(pos).astype(int), 0, m - 2)
    a = pos - k
    v = np.zeros(m)
    np.add.at(v, k, (1 - a) * w)  # item by item, in input order
    np.add.at(v, k + 1, a * w)
    # Reflected Gaussian, truncated at 0.5 either side.
    u = linspace01(m)
    ker = np.exp(-(u - 0.5) * (u - 0.5) / (2 * sigma**2)) / (math.sqrt(2 * math.pi) * sigma)

    def refl(q):
        q = np.where(q < 0, -q, q)
        return np.where(q > m - 1, 2 * (m - 1) - q, q)

    idx = np.arange(m)
    s = np.zeros(m)
    for j in range(m):
        s += ker[j] * v[refl(idx + m // 2 - j)]
    # Linear interpolation of s at t_eval.
    h = 1 / (m - 1)
    kk = np.clip((t_eval * (m - 1)).astype(int), 0, m - 2)
    r = (t_eval - kk * h) / h
    return s[kk] * (1 - r) + s[kk + 1] * r


def smece_sigma_np(f, y, sigma):
    t = linspace01(max(round(10 / sigma), 200))
    num = smooth_np(f, f - y, t, sigma)
    den = smooth_np(f, np.ones_like(f), t, sigma) + 1e-4
    return float(np.sum(np.abs(num / den) * den) / np.sum(den))


def smece_numpy(f, y):
    if 1 < smece_sigma_np(f, y, 1.0):
        return smece_sigma_np(f, y, 1.0), 1.0
    lo, hi = 0.0, 1.0
    for _ in range(10):
        mid = (hi + lo) / 2
        if mid < 0.001 or mid < smece_sigma_np(f, y, mid):
            lo = mid
        else:
            hi = mid
    return smece_sigma_np(f, y, hi), hi


def curve_numpy(f, y, sigma):
    t = linspace01(200)
    mu = smooth_np(f, y.astype(float), t, sigma) / (smooth_np(f, np.ones_like(f), t, sigma) + 1e-4)
    dens = smooth_np(f, np.full(len(f), 1 / len(f)), t, sigma)
    return mu, dens


def pav(values, weights):
    """Pool adjacent violators, increasing; returns the fitted value per input."""
    blocks = []  # [mean, weight, count]
    for v, w in zip(values, weights):
        blocks.append([v, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2, c2 = blocks.pop()
            m1, w1, c1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, c1 + c2])
    return np.concatenate([np.full(c, m) for m, _, c in blocks])


def corp_numpy(f, y):
    y = y.astype(float)
    order = np.lexsort((y, f))
    fs, ys = f[order], y[order]
    # Pool tied confidences (scikit-learn's _make_unique: within 1e-15 of the first).
    starts = [0]
    for i in range(1, len(fs)):
        if fs[i] - fs[starts[-1]] >= 1e-15:
            starts.append(i)
    ends = starts[1:] + [len(fs)]
    means = np.array([ys[a:b].mean() for a, b in zip(starts, ends)])
    counts = np.array([b - a for a, b in zip(starts, ends)], float)
    fitted = pav(means, counts)
    r = np.empty(len(f))
    for g, (a, b) in enumerate(zip(starts, ends)):
        r[order[a:b]] = fitted[g]
    ybar = y.mean()
    unc = np.mean((ybar - y) ** 2)
    score = np.mean((f - y) ** 2)
    score_r = np.mean((r - y) ** 2)
    return float(score - score_r), float(unc - score_r), float(unc), float(score)


def murphy10(f, y):
    edges = np.arange(1, 10) / 10  # i / 10, as the Rust i as f64 / 10.0
    b = np.searchsorted(edges, f, side="left")  # (i/10, (i+1)/10], 0 in bin 0
    n, ybar = len(f), y.mean()
    rel = res = 0.0
    for k in range(10):
        sel = b == k
        if sel.any():
            nb = sel.sum()
            rel += nb / n * (f[sel].mean() - y[sel].mean()) ** 2
            res += nb / n * (y[sel].mean() - ybar) ** 2
    return float(rel), float(res), float(ybar * (1 - ybar)), float(np.mean((f - y) ** 2))


def equal_mass_cuts(f, bins=15):
    s = np.sort(f)
    runs = np.array_split(s, min(bins, len(s)))
    cuts = [(runs[i][-1] + runs[i + 1][0]) / 2.0 for i in range(len(runs) - 1)] + [1.0]
    return sorted(set(cuts))


def debiased_l2_numpy(f, y, bins=15):
    cuts = equal_mass_cuts(f, bins)
    b = np.searchsorted(cuts, f, side="left")
    n, total = len(f), 0.0
    for k in range(len(cuts)):
        sel = b == k
        nb = int(sel.sum())
        if nb < 2:
            continue
        yb = y[sel].mean()
        total += nb / n * ((f[sel].mean() - yb) ** 2 - yb * (1 - yb) / (nb - 1))
    return max(total, 0.0) ** 0.5, total, len(cuts)


def spiegelhalter_numpy(f, y):
    z = np.sum((y - f) * (1 - 2 * f)) / math.sqrt(np.sum((1 - 2 * f) ** 2 * f * (1 - f)))
    return float(z), 0.5 * math.erfc(z / math.sqrt(2)), math.erfc(abs(z) / math.sqrt(2))


# ---------------------------------------------------------------- report

def check(label, lib, ours, tol=1e-9, show=True):
    lib, ours = np.asarray(lib, float), np.asarray(ours, float)
    diff = float(np.max(np.abs(lib - ours)))
    flag = "ok" if diff <= tol else "MISMATCH"
    values = f"{tuple(float(v) for v in ours)!r}  " if show else ""
    print(f"   {label} numpy: {values}max|diff| {diff:.3g} {flag}")
    return diff <= tol


def report(name, f, y):
    print(f"\n== {name}: n={len(f)} correct={int(y.sum())} distinct={len(np.unique(f))} "
          f"min={float(f.min())!r} max={float(f.max())!r}")
    ok = True
    ece, sigma = relplot.smECE(f, y.astype(float), return_width=True)
    ece, sigma = float(ece), float(sigma)
    print(f"   smECE relplot: smece={ece!r} sigma={sigma!r}")
    ok &= check("smECE", (ece, sigma), smece_numpy(f, y.astype(float)))

    d = decompose(y_obs=y.astype(float), y_pred=f, scoring_function=SquaredError())
    corp = tuple(float(d[c][0]) for c in ["miscalibration", "discrimination", "uncertainty", "score"])
    print(f"   CORP model-diagnostics: MCB={corp[0]!r} DSC={corp[1]!r} UNC={corp[2]!r} Brier={corp[3]!r}")
    ok &= check("CORP", corp, corp_numpy(f, y))

    rel, res, unc, brier = murphy10(f, y.astype(float))
    print(f"   Murphy 10 equal-width: REL={rel!r} RES={res!r} UNC={unc!r} Brier={brier!r} "
          f"REL-RES+UNC={rel - res + unc!r}")

    lib = float(calibration.lower_bound_scaling_ce(f, y, p=2, debias=True, num_bins=15))
    auto = float(calibration.get_calibration_error(f, y, p=2, debias=True))
    path = "get_binning_ce (one bin per value)" if calibration.utils.is_discrete(f) else "15 equal-mass bins"
    ce, square, nbins = debiased_l2_numpy(f, y.astype(float))
    cuts = calibration.utils.get_equal_bins(f, num_bins=15)
    lib_sq = float(calibration.utils.unbiased_square_ce(calibration.utils.bin(list(zip(f, y)), cuts)))
    print(f"   debiased L2-CE, 15 equal-mass bins: {lib!r} (squared, before max(0, .): {lib_sq!r}; "
          f"{len(cuts)} bins after dropping duplicate cuts)")
    print(f"   get_calibration_error(p=2, debias=True): {auto!r} via {path}")
    ok &= check("debiased L2-CE (and squared)", (lib, lib_sq), (ce, square))

    z = spiegelhalter_statistic(y, f)
    p = spiegelhalter_p_value(y, f)
    two = float(2 * (1 - norm.cdf(abs(z))))
    print(f"   Spiegelhalter MAPIE: Z={z!r} p_one_sided={p!r} (two-sided {two!r})")
    ok &= check("Spiegelhalter", (z, p, two), spiegelhalter_numpy(f, y.astype(float)))

    if name == "calibration_small":
        diag = relplot.prepare_rel_diagram(f, y, plot_confidence_band=False, report_CE_std=False)
        mu, dens = curve_numpy(f, y, diag["sigma"])
        pts = [0, 1, 50, 100, 150, 198, 199]
        print(f"   rel_diagram (no bootstrap) sigma={float(diag['sigma'])!r} mesh linspace(0, 1, 200)")
        for i in pts:
            print(f"     t[{i}]={float(diag['mesh'][i])!r} mu={float(diag['mu'][i])!r} "
                  f"density={float(diag['density'][i])!r}")
        ok &= check("curve (mu, density / max) at all 200 points",
                    np.concatenate([diag["mu"], diag["density"] / dens.max()]),
                    np.concatenate([mu, dens / dens.max()]), show=False)
    return ok


def timing():
    rng = np.random.default_rng(0)
    n = 100_000
    c = rng.beta(4.0, 1.0, n)
    y = (rng.random(n) < c).astype(float)
    t0 = time.perf_counter()
    ece, sigma = relplot.smECE(c, y, return_width=True)
    t1 = time.perf_counter()
    print(f"relplot.smECE, {n} rows: {t1 - t0:.3f} s  smece={float(ece)!r} sigma={float(sigma)!r}")
    vals = []
    t0 = time.perf_counter()
    for _ in range(20):
        idx = rng.integers(0, n, n)
        vals.append(relplot.smECE(c[idx], y[idx]))
    t1 = time.perf_counter()
    print(f"20 bootstrap resamples: {t1 - t0:.3f} s ({(t1 - t0) / 20:.3f} s each); "
          f"smece range [{min(vals):.6f}, {max(vals):.6f}]")
    t0 = time.perf_counter()
    ours = smece_numpy(c, y)
    print(f"numpy re-implementation: {ours!r} in {time.perf_counter() - t0:.3f} s")


def main():
    if "--time" in sys.argv:
        timing()
        return
    print(f"relplot {version('relplot')}, model-diagnostics {version('model-diagnostics')}, "
          f"uncertainty-calibration {version('uncertainty-calibration')}, mapie {mapie.__version__}, "
          f"numpy {np.__version__}")
    print("fixture written to tests/fixtures/metrics_extremes.json")
    ok = all([report(name, f, y) for name, (f, y) in fixtures().items()])
    print(f"\nall numpy re-implementations within 1e-9: {ok}")


if __name__ == "__main__":
    main()
