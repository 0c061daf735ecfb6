"""The parameters of an analysis run, declared once: names, types, ranges and defaults.

`AnalysisParameters` is the schema; `normalize_parameters` checks a mapping against it (an
unknown name, a wrong type or a value out of range is a ValueError naming the parameter
and what is allowed) and returns every parameter with the defaults filled in, which is
what an AnalysisRun stores and digests. `DEFAULT_PARAMETERS` is that full set for `{}`.

`PRESETS` are named starting points a researcher picks on the tournament page or in the
API: "defaults" (the platform's choices: exact binomial pair test, Holm, permutation
log-rank variance) and "as-published" (what Deriu et al. (2020) and their released code
computed: the 2x2 chi-square test with Yates' correction, Bonferroni across pairs, the
generalized log-rank test with Zhao & Sun's (2004) multiple-imputation variance, and TrueSkill
as the released code ran it; for an A/B tournament, also ChatEval's removal of outlier
workers, Sedoc et al. (2019)).
"""

from collections.abc import Mapping
from typing import ClassVar, Literal

from pydantic import Field, field_validator

from evalhub.declared import Declared, DeclaredInvalid, check, describe


class AnalysisParameters(Declared):
    """Every parameter of a run. `exclude_blocked` is applied when the inputs are loaded;
    the others steer the statistics."""

    noun: ClassVar[str] = "analysis parameter"

    exclude_blocked: bool = Field(False, description="Leave out blocked workers' judgments.")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="Seed of every bootstrap.")
    replicates: int = Field(
        1000,
        ge=1,
        le=100_000,
        description="TrueSkill bootstrap replicates (rank ranges, clusters).",
    )
    bt_bootstrap: int = Field(
        1000, ge=1, le=100_000, description="Bradley-Terry bootstrap replicates."
    )
    coverage: float = Field(
        0.95,
        gt=0,
        lt=1,
        description="Share of replicate ranks a rank range keeps; also the Bradley-Terry "
        "confidence level.",
    )
    correction: Literal["holm", "bonferroni", "none"] = Field(
        "holm", description="Multiple-comparison correction of the pairwise tests."
    )
    pair_test: Literal["binomial", "chi-square", "chi-square-2x2"] = Field(
        "binomial",
        description="Test of each pair's win rate: exact binomial of wins vs losses, its "
        "chi-square approximation, or the released Spot The Bot code's 2x2 chi-square "
        "test with Yates' correction on [[wins, losses], [n - wins, n - losses]].",
    )
    trueskill: Literal["intended", "released-code"] = Field(
        "intended",
        description="TrueSkill clusters: 'intended' is the setting the Spot The Bot code "
        "sets up (mu 0, sigma 0.5, beta = 0.025 sigma^2 n, no dynamics, draw probability = "
        "share of draws) on bootstrap resamples, rank ranges of the central 'coverage'; "
        "'released-code' is what that code ran (the trueskill package's global beta 25/6, "
        "tau 25/300 and draw probability 0.10 with its builtin normal approximations, the "
        "matches only shuffled, not resampled, and 99.5% rank ranges).",
    )
    logrank_variance: Literal["permutation", "hypergeometric", "zhao-sun"] = Field(
        "permutation",
        description="Variance of the generalized log-rank test of the survival curves: "
        "permutation (Fay & Shaw), hypergeometric risk tables, or Zhao & Sun's (2004) "
        "multiple imputation (the paper's).",
    )
    logrank_imputations: int = Field(
        50, ge=2, le=1000, description="Imputations of the Zhao & Sun variance (R glrt: 50)."
    )
    alpha_resamples: int = Field(
        2000, ge=1, le=100_000, description="BCa resamples for Krippendorff's alpha."
    )
    stability_points: int = Field(
        4, ge=1, le=50, description="Grid points of conversations per pair (stability)."
    )
    stability_subsamples: int = Field(
        400,
        ge=1,
        le=5000,
        description="The most subsamples per grid point (stability): each point draws "
        "subsamples 50 at a time until its share's 95% Wilson interval is within "
        "stability_precision (385 always suffice for 0.05).",
    )
    stability_precision: float = Field(
        0.05,
        ge=0.01,
        le=0.5,
        description="Half-width to which each point of the stability curve is estimated (the "
        "share of subsamples reproducing the ranking, 95% Wilson interval).",
    )
    stability_replicates: int = Field(
        40,
        ge=1,
        le=10_000,
        description="Replicates per subsample; 40 keeps exactly the central 95% (drops 1 "
        "each side).",
    )
    leave_one_out: bool = Field(False, description="Also rank with each system left out in turn.")

    # --- Dimensional reports: abc_eval, likert, comparative, study, and the ChatEval section
    # of the A/B report (they also read correction, alpha_resamples and seed above). Kept
    # together so that the pairwise reports' parameters above change apart from these.
    annotations: Literal["all", "first"] = Field(
        "first",
        description="Annotations a unit (bot turn, rated or compared conversation) counts: "
        "only the first annotation of each conversation ('first', the paper's design: its "
        "second annotations served agreement) or all ('all': a unit's annotations are "
        "clustered, behaviour rates corrected by the design effect, Likert ratings and "
        "comparative verdicts summarised into one observation per unit).",
    )
    behaviour_clusters: Literal["turn", "conversation"] = Field(
        "turn",
        description="Behaviour rates: observations correlated within a bot turn ('turn': "
        "its annotations; the paper's independent turns when each is annotated once) or "
        "within a whole conversation ('conversation': also its turns).",
    )
    significance_levels: list[float] = Field(
        default_factory=lambda: [0.01, 0.05, 0.1],
        min_length=1,
        max_length=10,
        description="Levels at which significant pairs are counted (ABC-Eval Table 5).",
    )
    sensitivity_adjusted: bool = Field(
        False,
        description="Count significant pairs on corrected p-values (the paper counts "
        "uncorrected ones).",
    )
    sensitivity_downsample: bool = Field(
        True,
        description="Table 5 also after downsampling every method to the same number of "
        "conversations per bot (pairs per bot pair), as the paper compares methods.",
    )
    sensitivity_conversations: int = Field(
        32,
        ge=2,
        le=100_000,
        description="Conversations per bot (comparative: pairs per bot pair) in each draw "
        "of the downsampled Table 5 (the paper: 32); fewer when a method has fewer.",
    )
    sensitivity_draws: int = Field(
        200,
        ge=1,
        le=10_000,
        description="Random draws of the downsampled Table 5 (mean and spread over them).",
    )
    likert_turn_unit: Literal["conversation", "turn"] = Field(
        "conversation",
        description="Turn-level Likert: average each annotation's turn ratings per "
        "conversation first ('conversation') or treat every turn as an observation.",
    )
    likert_equal_var: bool = Field(
        True, description="Student's pooled t-test (true) or Welch's (false) between systems."
    )
    outlier_kappa: float = Field(
        0.0,
        ge=-1,
        le=1,
        description="ChatEval A/B: a worker whose weighted kappa with the other workers' "
        "majority is below this is flagged as an outlier.",
    )
    remove_outliers: bool = Field(
        False,
        description="ChatEval A/B: leave the outlier workers' judgments out of the analysis, "
        "as the paper did (agreement is reported with and without them either way).",
    )
    outlier_min_items: int = Field(
        5,
        ge=1,
        le=10_000,
        description="ChatEval A/B: items shared with other workers needed to judge a worker.",
    )

    @field_validator("significance_levels")
    @classmethod
    def _levels(cls, levels: list[float]) -> list[float]:
        if any(not 0 < level < 1 for level in levels):
            raise ValueError("significance_levels must lie strictly between 0 and 1.")
        return sorted(set(levels))

    # --- end of the dimensional reports' parameters

    # --- Human versus automatic (analysis.reports.human_vs_automatic): a judge run beside
    # the campaign's human judgments (it also reads coverage and seed above).
    judge_kappa_weights: Literal["none", "linear", "quadratic"] = Field(
        "quadratic",
        description="Weights of Cohen's kappa between the judge and the human majority on "
        "ordinal (Likert) labels; nominal labels are always compared unweighted.",
    )
    judge_resamples: int = Field(
        2000,
        ge=1,
        le=100_000,
        description="Bootstrap resamples of conversations for the intervals of the ranking "
        "correlations between humans and the judge.",
    )
    convergence_points: int = Field(
        6,
        ge=1,
        le=50,
        description="Grid points of dialogues per system in the convergence curve "
        "(bipartite-play): from 1 to the fewest dialogues the judge scored for a system.",
    )
    convergence_repeats: int = Field(
        200,
        ge=1,
        le=10_000,
        description="Random subsets drawn per grid point of the convergence curve.",
    )


def normalize_parameters(parameters: Mapping | None = None) -> dict:
    """The full parameter set: defaults filled in, types and ranges checked.

    Raises a ValueError (`evalhub.declared.DeclaredInvalid`) naming each wrong parameter."""
    return check(AnalysisParameters, parameters)


DEFAULT_PARAMETERS: dict[str, object] = normalize_parameters(None)


PRESETS: dict[str, dict[str, object]] = {
    "defaults": {},
    "as-published": {
        "pair_test": "chi-square-2x2",
        "correction": "bonferroni",
        "logrank_variance": "zhao-sun",
        "trueskill": "released-code",
        "remove_outliers": True,
    },
}

PRESET_DESCRIPTIONS: dict[str, str] = {
    "defaults": "EvalHub's defaults: exact binomial pair test, Holm's correction, "
    "permutation variance of the log-rank test.",
    "as-published": "Spot The Bot as published: 2x2 chi-square test with Yates' correction "
    "(the released code), Bonferroni across pairs, Zhao & Sun's generalized log-rank test, "
    "and TrueSkill as the released code ran it (the package's global constants, matches "
    "shuffled without resampling, 99.5% rank ranges), where the paper describes bootstrap "
    "resampling and EvalHub's default uses the constants the code sets up; ChatEval A/B as "
    "published: outlier workers removed.",
}


def preset_parameters(preset: str, overrides: Mapping | None = None) -> dict:
    """The full parameter set of a named preset with `overrides` on top, checked.

    Raises DeclaredInvalid naming `preset` when there is no such preset."""
    if preset not in PRESETS:
        allowed = ", ".join(repr(name) for name in PRESETS)
        raise DeclaredInvalid({"preset": f"preset must be one of {allowed}, not {preset!r}."})
    return normalize_parameters({**PRESETS[preset], **(overrides or {})})


def parameter_rows() -> list[dict]:
    """Name, description, default and range of each parameter, for pages and help."""
    return describe(AnalysisParameters)
