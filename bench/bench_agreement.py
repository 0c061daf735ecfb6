"""Median run time of our Krippendorff's alpha against the ``krippendorff`` package.

Usage: ``.venv/bin/python bench/bench_agreement.py`` from the repository root.
Also times one BCa bootstrap (10,000 resamples, median of 3).
Data: 3 raters x 5,000 units of 1-5 ratings with 20% missing, seeded.
"""

import sys
from pathlib import Path

import harness  # noqa: I001  (sets BLAS threads before numpy loads)
import krippendorff
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalstats.agreement import krippendorff_alpha, krippendorff_alpha_bca  # noqa: E402

N_RATERS, N_UNITS, REPEATS = 3, 5_000, 21


def median_seconds(function, repeats=REPEATS):
    return harness.median_time(function, repeats=repeats)


def main():
    generator = np.random.default_rng(0)
    data = generator.integers(1, 6, size=(N_RATERS, N_UNITS)).astype(float)
    data[generator.random(data.shape) < 0.2] = np.nan
    print(f"{N_RATERS} raters x {N_UNITS} units, median of {REPEATS} runs")
    figures = {}
    for level in ("nominal", "ordinal", "interval"):
        ours_value = krippendorff_alpha(data, level).statistic
        package_value = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert abs(ours_value - package_value) < 1e-9, f"{level} alpha differs"
        ours = median_seconds(lambda level=level: krippendorff_alpha(data, level))
        package = median_seconds(
            lambda level=level: krippendorff.alpha(
                reliability_data=data, level_of_measurement=level
            )
        )
        print(
            f"{level:>9}: ours {ours * 1e3:7.2f} ms   krippendorff {package * 1e3:7.2f} ms   "
            f"ratio (package / ours) {package / ours:5.1f}"
        )
        figures[level] = {
            "ours_ms": round(ours * 1e3, 3),
            "package_ms": round(package * 1e3, 3),
            "ratio": round(package / ours, 2),
        }
    bca = median_seconds(lambda: krippendorff_alpha_bca(data, "ordinal"), repeats=3)
    print(f"ordinal alpha with BCa interval, 10,000 unit resamples: {bca:.2f} s")
    harness.record(
        "agreement", raters=N_RATERS, units=N_UNITS, levels=figures, bca_ordinal_s=round(bca, 3)
    )


if __name__ == "__main__":
    main()
