"""Prints selective-prediction metrics (AURC, E-AURC, AUGRC, coverage at a
precision, the risk-coverage curve) that the unit tests of
`calibrate::selective` compare against, to 1e-12.

Written from the definitions alone, not from the Rust code, as a second
implementation. n items with confidence c_i and correct y_i in {0, 1}, ranked
by confidence, highest first. E_k = errors (y = 0) among the first k items:

* selective risk at coverage k/n: E_k / k;
  AURC = (1/n) sum_{k=1..n} E_k / k.
* oracle: all C correct items first, E*_k = max(0, k - C);
  E-AURC = AURC - (1/n) sum_k E*_k / k.
* AUGRC (Traub et al. 2024, generalized risk = accepted and wrong over all
  items): AUGRC = (1/n) sum_{k=1..n} E_k / n.
* coverage at precision q (q in 0.8, 0.9, 0.95): the largest K/n over K at the
  end of a run of tied confidences (the realisable cutoffs "accept if
  confidence >= t") with 1 - E_K/K >= q; 0 when there is none. At a run end
  E_K is an integer, so the test is done exactly, in integers
  ((K - E_K) * den >= num * K for q = num/den). Cutoffs where it holds with
  equality are listed with three float forms of the test, since they can
  disagree there: E/K <= 1 - q fails at 1/5 vs 0.8 (1 - 0.8 is
  0.19999999999999996), while 1 - E/K >= q and (K - E)/K >= q pass at every
  boundary cutoff of these fixtures; three of them (K=5 in
  calibration_small, K=340 and K=180 in calibrated_500) decide the answer.
* ties: in a run of m tied items holding e errors, after K_before items and
  E_before errors, E_{K_before + j} (j = 1..m) is its expectation over a
  uniformly random order within the run, E_before + j e / m. Here that is
  np.interp, linear interpolation of E between run ends (0, 0), (K_1, E_K_1),
  ..., found with np.unique and cumsum, rather than a loop over positions.
  A loop over positions in exact fractions.Fraction arithmetic checks it (the
  "exact" lines), and for the rounded fixture the mean AURC over random
  tie-breaking orders checks that the rule is the expectation ("brute force").
* risk-coverage curve: one point per run end, highest confidence first:
  (confidence, coverage K/n, risk E_K/K).

Fixtures:
1. calibration_small: tests/fixtures/calibration_small.csv, columns confidence
   and correct (80 rows).
2. calibration_small_rounded: the same rows with confidence rounded to one
   decimal as np.floor(c * 10 + 0.5) / 10 (round half up; in Rust
   (c * 10.0 + 0.5).floor() / 10.0, the same IEEE operations. Not Python's
   round(), half to even, nor f64::round, half away from zero).
3. calibrated_500: tests/fixtures/ltt_fixtures.json, fixtures.calibrated_500,
   keys confidence and correct.
4. hand_4: confidence [0.6, 0.9, 0.7, 0.8], correct [0, 1, 1, 0];
   hand_tie_2: confidence [0.5, 0.5], correct [1, 0].

Floats are printed with repr() (shortest round-trip, up to 17 significant
digits). Run it in the pinned venv (only numpy is needed):
target/ref-venv/bin/python tests/selective_expected.py > tests/selective_expected.out
"""
import json
import pathlib
from fractions import Fraction

import numpy as np

HERE = pathlib.Path(__file__).parent / "fixtures"
PRECISIONS = [(0.8, 4, 5), (0.9, 9, 10), (0.95, 19, 20)]


def run_ends(c, y):
    """Runs of tied confidence, highest first: (confidence, K at run end, E_K)."""
    values, inverse = np.unique(c, return_inverse=True)  # ascending
    counts = np.bincount(inverse, minlength=len(values))[::-1]
    errors = np.bincount(inverse, weights=1 - y, minlength=len(values))[::-1]
    return values[::-1], np.cumsum(counts), np.cumsum(errors)


def errors_at(c, y):
    """E_k for k = 1..n, ties at their within-run expectation."""
    _, ends, errs = run_ends(c, y)
    k = np.arange(1, len(c) + 1, dtype=float)
    return np.interp(k, np.concatenate([[0.0], ends]), np.concatenate([[0.0], errs]))


def metrics(c, y):
    c = np.asarray(c, dtype=float)
    y = np.asarray(y, dtype=int)
    n = len(c)
    k = np.arange(1, n + 1, dtype=float)
    e = errors_at(c, y)
    aurc = float(np.mean(e / k))
    oracle = np.maximum(0.0, k - y.sum())
    e_aurc = aurc - float(np.mean(oracle / k))
    augrc = float(np.sum(e) / n / n)
    conf, ends, errs = run_ends(c, y)
    coverage, boundary = {}, {}
    for q, num, den in PRECISIONS:
        wrong = np.rint(errs).astype(np.int64)
        ok = (ends - wrong) * den >= num * ends
        coverage[q] = float(ends[ok].max() / n) if ok.any() else 0.0
        boundary[q] = [(int(K), int(E)) for K, E in zip(ends, wrong) if (K - E) * den == num * K]
    curve = [(float(t), float(K / n), float(E / K)) for t, K, E in zip(conf, ends, errs)]
    return dict(aurc=aurc, e_aurc=e_aurc, augrc=augrc, coverage=coverage,
                boundary=boundary, curve=curve)


def exact(c, y):
    """Per-position loop in Fractions: (AURC, E-AURC, AUGRC) exactly."""
    order = sorted(range(len(c)), key=lambda i: -c[i])
    n, big_c = len(c), sum(int(v) for v in y)
    aurc = oracle = augrc = Fraction(0)
    k, done_errors = 0, 0
    i = 0
    while i < n:
        j = i
        while j < n and c[order[j]] == c[order[i]]:
            j += 1
        m = j - i
        e = sum(1 - int(y[order[t]]) for t in range(i, j))
        for step in range(1, m + 1):
            k += 1
            ek = done_errors + Fraction(step * e, m)
            aurc += ek / k
            augrc += ek
            oracle += Fraction(max(0, k - big_c), k)
        done_errors += e
        i = j
    return aurc / n, (aurc - oracle) / n, augrc / (n * n)


def brute_force_aurc(c, y, draws, seed):
    """Mean and standard error of AURC over uniformly random tie-breaking."""
    c = np.asarray(c, dtype=float)
    wrong = 1 - np.asarray(y, dtype=int)
    n = len(c)
    rng = np.random.default_rng(seed)
    k = np.arange(1, n + 1, dtype=float)
    out = np.empty(draws)
    chunk = 10000
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        noise = rng.random((size, n))
        order = np.lexsort((noise, np.broadcast_to(-c, (size, n))), axis=-1)
        e = np.cumsum(wrong[order], axis=1)
        out[start:start + size] = np.mean(e / k, axis=1)
    return float(out.mean()), float(out.std(ddof=1) / np.sqrt(draws))


def show(name, value):
    print(f"{name} = {value!r}")


def report(name, c, y):
    c = [float(v) for v in c]
    y = [int(v) for v in y]
    m = metrics(c, y)
    print(f"== {name}: n={len(c)} correct={sum(y)} distinct confidences={len(set(c))}")
    show("aurc", m["aurc"])
    show("e_aurc", m["e_aurc"])
    show("augrc", m["augrc"])
    for q, _, _ in PRECISIONS:
        show(f"coverage_at_precision({q})", m["coverage"][q])
    for q, _, _ in PRECISIONS:
        for K, E in m["boundary"][q]:
            print(f"   precision == {q} exactly at K={K}, E_K={E}: float tests "
                  f"1 - E/K >= q {1 - E / K >= q}, (K - E)/K >= q {(K - E) / K >= q}, "
                  f"E/K <= 1 - q {E / K <= 1 - q}")
    show("curve points", len(m["curve"]))
    for point in m["curve"][:3]:
        show("   curve (confidence, coverage, risk)", point)
    for key, want in zip(["aurc", "e_aurc", "augrc"], exact(c, y)):
        shown = f" = {want}" if want.denominator < 10**6 else ""
        print(f"   exact {key}{shown} = {float(want)!r} (above minus exact: "
              f"{m[key] - float(want):.3g})")
        assert abs(m[key] - float(want)) < 1e-14, (name, key, m[key], want)
    return m


data = np.genfromtxt(HERE / "calibration_small.csv", delimiter=",", names=True,
                     dtype=None, encoding="utf-8")
p = data["confidence"].astype(float)
y = data["correct"].astype(int)
report("calibration_small", p, y)

rounded = np.floor(p * 10 + 0.5) / 10
halves = [float(v) for v in p if abs(v * 10 - np.floor(v * 10) - 0.5) < 1e-9]
show("   raw confidences at a .x5 boundary", halves)
m = report("calibration_small_rounded", rounded, y)
draws = 200000
mean, se = brute_force_aurc(rounded, y, draws, seed=20240607)
show(f"   brute-force aurc ({draws} random tie orders, seed 20240607)", mean)
show("   brute-force minus tie rule", mean - m["aurc"])
show("   standard error", se)

ltt = json.loads((HERE / "ltt_fixtures.json").read_text())["fixtures"]["calibrated_500"]
report("calibrated_500", ltt["confidence"], ltt["correct"])

report("hand_4", [0.6, 0.9, 0.7, 0.8], [0, 1, 1, 0])
report("hand_tie_2", [0.5, 0.5], [1, 0])
