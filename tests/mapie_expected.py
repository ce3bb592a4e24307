"""Prints MAPIE's Learn-then-Test acceptance cutoffs with a precision guarantee,
and the exact binomial fixed-sequence procedure beside them, for the fixtures it
writes to tests/fixtures/ltt_fixtures.json.

Each fixture is (confidence in [0, 1], correct 0/1), from a seeded numpy RNG. An
item is accepted at cutoff t when confidence >= t. For target precision 1 - alpha
(alpha in 0.2, 0.1, 0.05) at delta = 0.1:

* MAPIE 1.6.0: BinaryClassificationController(risk="precision",
  target_level=1 - alpha, confidence_level=0.9, fwer_method="fixed_sequence"),
  default grid np.linspace(0, 0.99, 100), the predictor returning [1 - c, c].
  Printed: best_predict_param (None when no cutoff is valid) and the valid range.
* The binomial procedure, written here without MAPIE, on the same grid: walk it
  from the strictest cutoff down; at t, n = #(confidence >= t), k = errors among
  them, p = P(Binomial(n, alpha) <= k) (n = 0 gives p = 1); stop at the first t
  with p > delta; the answer is the last t before it. Printed with n, k, p and
  the one-sided Clopper-Pearson upper bound on the error rate at level 1 - delta.

MAPIE's binary Hoeffding-Bentkus p-value, min(exp(-n KL(r || alpha)), binom.cdf(
ceil(n r), n, alpha)), is that binomial p-value (the Chernoff bound never undercuts
the exact tail) but for three departures, which the printed lines show:
* r = 1 - (n - k) / n in floating point, so n r is often k + 1e-14 and its ceil
  k + 1: a larger p-value at about half the cutoffs ("mapie ceil fixed" reruns
  MAPIE with the count read as k);
* among valid cutoffs accepting the same calibration items it returns the first
  its walk reached, the strictest when walking down (the binomial walk here
  returns the loosest; "same accepted set");
* it picks the walking direction from the data (empty cutoffs count as error
  rate 1, so on edges_1000 it walks 0 -> 0.99), and an empty cutoff's p-value is
  NaN, which fails the test as the walk's p = 1 does.
calibrated_500 and calibrated_2000 use seeds 0 and 6, among the first few tried,
kept because they show the first two departures.
Run it in the pinned venv:
python3 -m venv target/ref-venv
target/ref-venv/bin/pip install --require-hashes -r benches/requirements.txt
target/ref-venv/bin/python tests/mapie_expected.py > tests/mapie_expected.out
"""
import json
import math
import pathlib
import warnings

import numpy as np
from scipy.stats import beta, binom

import mapie
from mapie.risk_control import BinaryClassificationController, precision
from mapie.risk_control import _base_controller as base_controller
from mapie.risk_control.methods import _check_risk_monotonicity

ALPHAS = [0.2, 0.1, 0.05]
DELTA = 0.1
GRID = np.linspace(0, 0.99, 100)  # MAPIE's default list_predict_params
OUT = pathlib.Path(__file__).parent / "fixtures" / "ltt_fixtures.json"


def micro(u):
    """Confidences on the midpoints of a 1e-6 lattice: short in JSON, never on a cutoff."""
    return (np.floor(u * 1e6) + 0.5) / 1e6


def fixtures():
    out = {}
    for name, n, seed in [("calibrated_500", 500, 0), ("calibrated_2000", 2000, 6)]:
        rng = np.random.default_rng(seed)
        c = micro(rng.beta(4.0, 1.0, n))
        out[name] = (f"seed {seed}; confidence ~ Beta(4, 1); P(correct | c) = c", c, rng.random(n) < c)
    rng = np.random.default_rng(100)
    c = micro(rng.random(1000))
    out["weak_1000"] = (
        "seed 100; confidence ~ U(0, 1); P(correct | c) = 0.45 + 0.4 c (never 0.9)",
        c,
        rng.random(1000) < 0.45 + 0.4 * c,
    )
    # Two decimals, at most 0.93: the cutoffs 0.94..0.99 accept nothing, and ties
    # with the grid decide (0.35 is below np.linspace's 0.35000000000000003).
    rng = np.random.default_rng(101)
    c = np.floor(94 * rng.beta(10.0, 1.0, 1000)) / 100
    out["edges_1000"] = (
        "seed 101; confidence = floor(94 Beta(10, 1)) / 100, max 0.93; P(correct | c) = c",
        c,
        rng.random(1000) < c,
    )
    return {k: (d, c, y.astype(int)) for k, (d, c, y) in out.items()}


def exact_k_p_value(r_hat, n_obs, alpha, binary=False):
    """MAPIE's p-value with its ceil(n * r_hat) read as the integer error count.

    r_hat = 1 - (n - k) / n in floating point, so n * r_hat is often k + 1e-14 and
    the ceil makes it k + 1. min(HB, cdf(k + 1), cdf(k)) = min(HB, cdf(k)): the
    fix only lowers p-values, and keeps MAPIE's NaN at empty cutoffs (n = -1).
    """
    p = SHIPPED_P_VALUE(r_hat, n_obs, alpha, binary)
    n = np.asarray(n_obs, dtype=float)[:, None]
    k = np.round(n * np.asarray(r_hat)[:, None])
    return np.minimum(p, binom.cdf(k, n, np.asarray(alpha)[None, :]))


SHIPPED_P_VALUE = base_controller.compute_hoeffding_bentkus_p_value


def mapie_cutoff(c, y, alpha, fix_ceil=False):
    ctl = BinaryClassificationController(
        predict_function=lambda X: np.column_stack([1 - X[:, 0], X[:, 0]]),
        risk="precision",
        target_level=1 - alpha,
        confidence_level=1 - DELTA,
        fwer_method="fixed_sequence",
    )
    base_controller.compute_hoeffding_bentkus_p_value = (
        exact_k_p_value if fix_ceil else SHIPPED_P_VALUE
    )
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ctl.calibrate(c.reshape(-1, 1), y)
    finally:
        base_controller.compute_hoeffding_bentkus_p_value = SHIPPED_P_VALUE
    return ctl, [str(w.message).split(".")[0] for w in caught]


def binomial_fst(c, y, alpha, grid):
    """Exact binomial fixed-sequence test, strict to loose. Returns (answer, stop)."""
    last, rows = None, []
    for t in grid[::-1]:
        accepted = c >= t
        n = int(accepted.sum())
        k = int((accepted & (y == 0)).sum())
        p = float(binom.cdf(k, n, alpha)) if n > 0 else 1.0
        row = (float(t), n, k, p)
        if p > DELTA:
            return last, row
        last = row
    return last, None


def cp_upper(n, k):
    return 1.0 if k >= n else float(beta.ppf(1 - DELTA, k + 1, n - k))


def fmt_row(row):
    if row is None:
        return "None"
    t, n, k, p = row
    return f"t={t!r} n={n} k={k} p={p:.6g} cp_upper={cp_upper(n, k):.6f}"


def valid_range(ctl):
    v = ctl.valid_predict_params
    return f"[{float(v.min())!r}, {float(v.max())!r}] ({len(v)})" if len(v) else "[] (0)"


def same_set(c, a, b):
    """Whether cutoffs a and b accept the same calibration items (None: none valid)."""
    if a is None or b is None:
        return a is None and b is None
    return bool(np.array_equal(c >= a, c >= b))


def main():
    fx = fixtures()
    OUT.parent.mkdir(exist_ok=True)
    doc = {
        "about": "Written by tests/mapie_expected.py; item accepted when confidence >= t.",
        "grid": GRID.tolist(),
        "delta": DELTA,
        "alphas": ALPHAS,
        "fixtures": {
            name: {"description": d, "confidence": c.tolist(), "correct": y.tolist()}
            for name, (d, c, y) in fx.items()
        },
    }
    OUT.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"mapie {mapie.__version__}; grid np.linspace(0, 0.99, 100); delta {DELTA}")
    print("fixtures written to tests/fixtures/ltt_fixtures.json")
    summary = []
    for name, (desc, c, y) in fx.items():
        print(f"\n== {name}: {desc}")
        print(f"   n={len(c)} correct={int(y.sum())} max_conf={float(c.max())!r}")
        n_t = np.array([(c >= t).sum() for t in GRID])
        k_t = np.array([((c >= t) & (y == 0)).sum() for t in GRID])
        for alpha in ALPHAS:
            ctl, notes = mapie_cutoff(c, y, alpha)
            fixed, _ = mapie_cutoff(c, y, alpha, fix_ceil=True)
            r_hat, n_eff = ctl._get_risk_values_and_eff_sample_sizes(
                y, ctl._get_predictions_per_param(c.reshape(-1, 1), GRID), [precision]
            )
            direction = _check_risk_monotonicity(r_hat[0])
            if direction == "none":  # as mapie's ltt_procedure
                direction = "increasing" if np.mean(np.diff(r_hat[0])) > 0 else "decreasing"
            best, best_fixed = ctl.best_predict_param, fixed.best_predict_param
            answer, stop = binomial_fst(c, y, alpha, GRID)
            ours = None if answer is None else answer[0]
            # MAPIE's p-values against the exact binomial tail at every cutoff.
            exact = np.where(n_t > 0, binom.cdf(k_t, np.maximum(n_t, 1), alpha), 1.0)
            mp = ctl.p_values[:, 0]
            finite = np.isfinite(mp)
            ceil_off = sum(
                math.ceil(ne * r) != k for ne, r, k in zip(n_eff[0], r_hat[0], k_t) if ne > 0
            )
            flips = [
                float(t) for t, a, b in zip(GRID, mp <= 1 - (1 - DELTA), exact <= DELTA) if a != b
            ]
            print(f"-- alpha={alpha} (target precision {1 - alpha:g})")
            walk = "0.99 -> 0" if direction == "decreasing" else "0 -> 0.99"
            print(f"   mapie:            best={best!r} valid={valid_range(ctl)} walk={walk}")
            print(f"   mapie ceil fixed: best={best_fixed!r} valid={valid_range(fixed)}")
            for note in dict.fromkeys(notes):
                print(f"   mapie warned: {note}")
            print(
                f"   mapie p vs binom.cdf(k, n, alpha): max|diff| = "
                f"{np.max(np.abs(mp[finite] - exact[finite])):.3g}; ceil(n*r_hat) = k + 1 at "
                f"{ceil_off} cutoffs; NaN (empty) at {int((~finite).sum())}; "
                f"p <= delta differs at {flips}"
            )
            print(f"   binomial answer: {fmt_row(answer)}")
            print(f"   binomial stop:   {fmt_row(stop)}")
            if name == "edges_1000":
                skip = binomial_fst(c, y, alpha, GRID[n_t > 0])[0]
                decimal = np.arange(100) / 100
                dec = binomial_fst(c, y, alpha, decimal[[(c >= t).any() for t in decimal]])[0]
                print(f"   binomial, empty cutoffs skipped:             {fmt_row(skip)}")
                print(f"   the same on the decimal grid k/100 (0.35 accepts 0.35): {fmt_row(dec)}")
                if alpha == ALPHAS[0]:
                    ties = [
                        f"{i / 100}: {n_t[i]} vs {(c >= i / 100).sum()}"
                        for i in range(100)
                        if GRID[i] != i / 100
                    ]
                    print(f"   accepted at linspace's t vs at k/100 (where they differ): {ties}")
            print(
                f"   agree: mapie {best == ours}, same accepted set {same_set(c, best, ours)}; "
                f"ceil fixed {best_fixed == ours}, same accepted set {same_set(c, best_fixed, ours)}"
            )
            summary.append((name, alpha, best, best_fixed, answer))
    print("\n// (fixture, alpha, mapie best, mapie best with ceil fixed, binomial (t, n, k))")
    for name, alpha, best, best_fixed, answer in summary:
        b = "None" if best is None else f"Some({best!r})"
        f = "None" if best_fixed is None else f"Some({best_fixed!r})"
        a = "None" if answer is None else f"Some(({answer[0]!r}, {answer[1]}, {answer[2]}))"
        print(f'("{name}", {alpha}, {b}, {f}, {a}),')


if __name__ == "__main__":
    main()
