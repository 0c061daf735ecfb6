"""The result contract of ``analysis.reports`` (Spot The Bot and A/B), typed for the
OpenAPI schema: what each key of a run's result holds, so that a client can be generated
from /api/schema/ instead of guessing a free-form object.

The shape is documented in ``analysis/reports/__init__.py``; tests check that a report of
each kind goes through `ReportSerializer` unchanged (no key dropped, no type changed).
Numbers a statistic may not have (too few judgments) are nullable.
"""

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from analysis.models import AnalysisRun


def _float(**kwargs):
    return serializers.FloatField(allow_null=True, **kwargs)


def _pair(child):
    return serializers.ListField(child=child, min_length=2, max_length=2)


class PairwiseSerializer(serializers.Serializer):
    a = serializers.CharField()
    b = serializers.CharField()
    wins_a = serializers.IntegerField()
    wins_b = serializers.IntegerField()
    ties = serializers.IntegerField()
    win_rate_a = _float()
    p_value = _float()
    p_adjusted = _float()


class RankingSerializer(serializers.Serializer):
    system = serializers.CharField()
    win_rate = _float()
    mu = _float(help_text="TrueSkill mean over the bootstrap replicates.")
    sigma = _float()
    rank_range = _pair(serializers.IntegerField())
    cluster = serializers.IntegerField(help_text="1 is the best cluster.")


class BradleyTerrySerializer(serializers.Serializer):
    system = serializers.CharField()
    rating = _float(help_text="Elo-like scale, mean 1000.")
    ci = _pair(serializers.FloatField(allow_null=True))
    rank = serializers.IntegerField(help_text="1 + the number of significantly better systems.")


class LogrankSerializer(serializers.Serializer):
    a = serializers.CharField()
    b = serializers.CharField()
    statistic = _float()
    p_value = _float()
    p_adjusted = _float()


class LogrankAllSerializer(serializers.Serializer):
    statistic = _float()
    df = serializers.IntegerField()
    p_value = _float()


class CoxTermSerializer(serializers.Serializer):
    coef = _float(help_text="Below 0: speakers preferred on the feature survive longer.")
    se = _float()
    p_value = _float()


class SurvivalSerializer(serializers.Serializer):
    segment_lengths = serializers.ListField(child=serializers.IntegerField())
    curves = serializers.DictField(
        child=serializers.ListField(child=serializers.FloatField(allow_null=True)),
        help_text="{system: survival S(k) at each segment length} (Turnbull NPMLE).",
    )
    human = serializers.ListField(child=serializers.FloatField(allow_null=True), allow_null=True)
    spotted = serializers.DictField(
        child=serializers.ListField(child=_pair(serializers.IntegerField())),
        help_text="{system: [[spotted, judged] at each segment length]}.",
    )
    logrank = LogrankSerializer(many=True)
    logrank_all = LogrankAllSerializer(allow_null=True)
    logrank_variance = serializers.CharField(
        required=False, help_text="permutation, hypergeometric or zhao-sun (analysis parameters)."
    )
    cox = serializers.DictField(
        child=serializers.DictField(child=CoxTermSerializer()),
        help_text="{system: {feature: Cox term}}.",
    )


class FeatureWinSerializer(serializers.Serializer):
    win_rate = _float()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    no_difference = serializers.IntegerField()


class FeaturesSerializer(serializers.Serializer):
    names = serializers.ListField(child=serializers.CharField())
    win_rates = serializers.DictField(
        child=serializers.DictField(child=FeatureWinSerializer()),
        help_text="{system: {feature: win rate}} (Spot The Bot, Table 2).",
    )


class CooccurrenceSerializer(serializers.Serializer):
    system = serializers.CharField()
    label = serializers.CharField()
    pairs_with_label = serializers.IntegerField()
    pairs_both = serializers.IntegerField()
    share = _float()


class NominalAlphaSerializer(serializers.Serializer):
    alpha = _float()
    low = _float()
    high = _float()
    units = serializers.IntegerField()


class OrdinalAlphaSerializer(serializers.Serializer):
    alpha = _float()


class KrippendorffSerializer(serializers.Serializer):
    nominal = NominalAlphaSerializer()
    ordinal = OrdinalAlphaSerializer(required=False)


class AgreementSerializer(serializers.Serializer):
    units_judged_twice = serializers.IntegerField()
    cooccurrence = CooccurrenceSerializer(many=True)
    krippendorff = KrippendorffSerializer(allow_null=True)


class LeaveOneOutSerializer(serializers.Serializer):
    left_out = serializers.CharField()
    n_conversations = serializers.ListField(child=serializers.IntegerField())
    share_reproduced = serializers.ListField(child=serializers.FloatField(allow_null=True))
    reproduced_low = serializers.ListField(child=serializers.FloatField(allow_null=True))
    reproduced_high = serializers.ListField(child=serializers.FloatField(allow_null=True))
    subsamples_drawn = serializers.ListField(child=serializers.IntegerField())
    keeps_full_ranking = serializers.BooleanField(allow_null=True)


class StabilitySerializer(serializers.Serializer):
    """Empty for A/B tournaments."""

    n_conversations = serializers.ListField(child=serializers.IntegerField(), required=False)
    share_reproduced = serializers.ListField(
        child=serializers.FloatField(allow_null=True), required=False
    )
    reproduced_low = serializers.ListField(
        child=serializers.FloatField(allow_null=True),
        required=False,
        help_text="Lower bound of the 95% Wilson interval of each share reproduced.",
    )
    reproduced_high = serializers.ListField(
        child=serializers.FloatField(allow_null=True), required=False
    )
    share_modal = serializers.ListField(
        child=serializers.FloatField(allow_null=True), required=False
    )
    reference = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()), required=False
    )
    subsamples = serializers.IntegerField(
        required=False, help_text="The most subsamples a point may draw."
    )
    subsamples_drawn = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        help_text="Subsamples drawn per point, 50 at a time until its interval is within "
        "± precision.",
    )
    precision = serializers.FloatField(required=False)
    replicates = serializers.IntegerField(required=False)
    leave_one_out = LeaveOneOutSerializer(many=True, required=False)


class SystemScoresSerializer(serializers.Serializer):
    judged = serializers.IntegerField()
    human = serializers.IntegerField()
    unsure = serializers.IntegerField()
    bot = serializers.IntegerField()
    share_human = _float()
    ci = _pair(serializers.FloatField(allow_null=True))
    conversations = serializers.IntegerField()
    self_play_judged = serializers.IntegerField(help_text="Judgments of self-play speakers.")


class PartnerAgainstSerializer(serializers.Serializer):
    target = serializers.CharField()
    target_wins = serializers.IntegerField()
    partner_wins = serializers.IntegerField()
    ties = serializers.IntegerField()
    p_value = _float()
    p_adjusted = _float()


class PartnerSerializer(serializers.Serializer):
    """A bipartite-play partner: its record against the targets, never a rank."""

    system = serializers.CharField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    ties = serializers.IntegerField()
    win_rate = _float()
    judged = serializers.IntegerField()
    share_human = _float()
    ci = _pair(serializers.FloatField(allow_null=True))
    against = PartnerAgainstSerializer(many=True)


class ChatEvalBaselineSerializer(serializers.Serializer):
    system = serializers.CharField()
    baseline = serializers.CharField()
    n = serializers.IntegerField()
    wins = serializers.IntegerField()
    ties = serializers.IntegerField()
    losses = serializers.IntegerField()
    win_share = _float()
    win_low = _float()
    win_high = _float()
    tie_share = _float()
    loss_share = _float()
    sign_statistic = _float()
    p_value = _float()
    p_adjusted = _float()


class ChatEvalKappaSerializer(serializers.Serializer):
    weights = serializers.CharField()
    kappa = _float()
    items = serializers.IntegerField()


class ChatEvalWorkerSerializer(serializers.Serializer):
    worker_id = serializers.IntegerField(
        help_text="The worker's row id (staff see who in the admin)."
    )
    items = serializers.IntegerField()
    kappa = _float()
    outlier = serializers.BooleanField()


class ChatEvalSerializer(serializers.Serializer):
    """A/B reported the ChatEval way: win/tie/loss against each baseline with a sign test,
    Cohen's weighted kappa with every worker and without the outliers, and workers whose
    kappa with the others is low (left out of the analysis with ``remove_outliers``)."""

    baselines = ChatEvalBaselineSerializer(many=True)
    kappa = ChatEvalKappaSerializer(allow_null=True, help_text="With every worker.")
    kappa_without_outliers = ChatEvalKappaSerializer(
        allow_null=True, help_text="Without the workers flagged as outliers."
    )
    workers = ChatEvalWorkerSerializer(many=True)
    outliers = serializers.IntegerField()
    removed_outliers = serializers.BooleanField(
        help_text="Whether the outliers' judgments were left out of the analysis."
    )
    removed_judgments = serializers.IntegerField()


class ReportSerializer(serializers.Serializer):
    """A Spot The Bot or A/B report (``analysis.reports.build_report``)."""

    tournament = serializers.CharField()
    kind = serializers.ChoiceField(choices=["spot_the_bot", "ab"])
    systems = serializers.ListField(child=serializers.CharField())
    judgments = serializers.IntegerField()
    automatic_ties = serializers.IntegerField(required=False, help_text="A/B only.")
    pairwise = PairwiseSerializer(many=True)
    ranking = RankingSerializer(many=True)
    bradley_terry = BradleyTerrySerializer(many=True)
    survival = SurvivalSerializer()
    features = FeaturesSerializer()
    agreement = AgreementSerializer()
    stability = StabilitySerializer(
        allow_null=True,
        help_text="null while the run's stability curve is computed as a part of its own "
        "(run.stability says how far it is); {} when there is none (A/B).",
    )
    scores = serializers.DictField(
        child=SystemScoresSerializer(), required=False, help_text="Spot The Bot only."
    )
    partners = PartnerSerializer(many=True, required=False, help_text="Bipartite-play only.")
    chateval = ChatEvalSerializer(required=False, help_text="A/B only.")
    warnings = serializers.ListField(child=serializers.CharField())


class ProvenanceSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    finished_at = serializers.DateTimeField(allow_null=True)
    parameters = serializers.DictField(help_text="analysis/runs/parameters.py, defaults filled in.")
    inputs_digest = serializers.CharField()
    versions = serializers.DictField(child=serializers.CharField())
    stability = serializers.ChoiceField(
        choices=["pending", "running", "done", "failed"],
        allow_null=True,
        help_text="The stability curve computed after the report, as a part of its own: "
        "pending or running (the result's stability is null until then), done, or failed "
        "(asking for the same analysis again retries it); null: it came with the report.",
    )


class ResultContractSerializer(ReportSerializer):
    """What `GET /api/tournaments/<slug>/results/` answers: the report and its run."""

    run = ProvenanceSerializer()


# --- Human versus automatic (analysis.reports.human_vs_automatic) ------------------------------


class ComparedJudgeSerializer(serializers.Serializer):
    run = serializers.IntegerField(help_text="The judge run (judging.JudgeRun) compared.")
    label = serializers.CharField()


class VersusAgreementSerializer(serializers.Serializer):
    units = serializers.IntegerField(help_text="Units labelled by the humans and the judge.")
    kappa = _float(help_text="Cohen's kappa of the judge with the human majority.")
    raw_agreement = _float(
        help_text="The share of kappa's units where the judge's label is the majority's."
    )
    kappa_weights = serializers.ChoiceField(choices=["none", "linear", "quadratic"])
    kappa_units = serializers.IntegerField(help_text="Units with a human majority.")
    tied_majority = serializers.IntegerField()
    alpha_humans = _float(help_text="Krippendorff's alpha of the humans alone.")
    alpha_with_judge = _float(help_text="... with the judge as one more coder.")
    alpha_units = serializers.IntegerField(
        help_text="Units both alphas use: two human labels or more and the judge's."
    )


class VersusSystemSerializer(serializers.Serializer):
    system = serializers.CharField()
    human_mean = _float()
    human_conversations = serializers.IntegerField()
    human_rank = _float(help_text="1 = highest mean; ties share their average rank.")
    judge_mean = _float()
    judge_conversations = serializers.IntegerField()
    judge_rank = _float()


class VersusCorrelationSerializer(serializers.Serializer):
    spearman = _float()
    spearman_low = _float()
    spearman_high = _float()
    kendall = _float()
    kendall_low = _float()
    kendall_high = _float()
    systems = serializers.IntegerField()
    conversations = serializers.IntegerField(help_text="Conversations scored by both.")
    confidence_level = serializers.FloatField()
    resamples = serializers.IntegerField()


class ConvergencePointSerializer(serializers.Serializer):
    n_dialogues = serializers.IntegerField()
    spearman_mean = _float()
    spearman_low = _float()
    spearman_high = _float()
    kendall_mean = _float()
    kendall_low = _float()
    kendall_high = _float()
    repeats = serializers.IntegerField()


class VersusDimensionSerializer(serializers.Serializer):
    dimension = serializers.CharField()
    level = serializers.ChoiceField(choices=["nominal", "ordinal"])
    agreement = VersusAgreementSerializer()
    systems = VersusSystemSerializer(many=True)
    correlation = VersusCorrelationSerializer(allow_null=True)
    convergence_target = serializers.ChoiceField(
        choices=["human", "judge"],
        allow_null=True,
        help_text="Whose ranking on all dialogues the curve approaches: the humans', or the "
        "judge's own while no human has judged.",
    )
    convergence = ConvergencePointSerializer(many=True)


class VersusRatingSerializer(serializers.Serializer):
    system = serializers.CharField()
    human_rating = _float(help_text="Bradley-Terry rating from the votes (mean 1000).")
    human_rank = _float(help_text="1 = highest rating; ties share their average rank.")
    judge_rating = _float(help_text="Bradley-Terry rating from the judge's verdicts.")
    judge_rank = _float()


class VersusBradleyTerrySerializer(serializers.Serializer):
    battles = serializers.IntegerField(help_text="Battles both the votes and the judge decided.")
    spearman = _float()
    kendall = _float()
    systems = VersusRatingSerializer(many=True)


class HumanVsAutomaticSerializer(serializers.Serializer):
    """A judge run against its campaign's humans, or against an arena's votes
    (``analysis.reports.human_vs_automatic``)."""

    subject = serializers.CharField(help_text="The campaign's slug (an arena's for an arena).")
    kind = serializers.ChoiceField(choices=["human_vs_automatic"])
    # A plain string: the campaign kinds' enum is named elsewhere in the schema.
    task_kind = serializers.CharField(
        help_text="The campaign's kind: ab, likert, abc_eval, spot_the_bot or comparative; "
        "arena for an arena's battles."
    )
    judge = ComparedJudgeSerializer()
    systems = serializers.ListField(child=serializers.CharField())
    partners = serializers.ListField(
        child=serializers.CharField(), help_text="Bipartite-play partners: never ranked."
    )
    judgments = serializers.IntegerField()
    automatic_judgments = serializers.IntegerField()
    dimensions = VersusDimensionSerializer(many=True)
    bradley_terry = VersusBradleyTerrySerializer(
        allow_null=True,
        help_text="Arenas: the ratings of the battles by the votes and by the judge; "
        "null for campaigns.",
    )
    warnings = serializers.ListField(child=serializers.CharField())


class HumanVsAutomaticResultSerializer(HumanVsAutomaticSerializer):
    run = ProvenanceSerializer()


class AnalysisRunSerializer(serializers.ModelSerializer):
    tournament = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    campaign = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)

    class Meta:
        model = AnalysisRun
        fields = [
            "id",
            "tournament",
            "campaign",
            "status",
            "progress",
            "parameters",
            "inputs_digest",
            "versions",
            "created",
            "started_at",
            "finished_at",
            "error",
            "stability_state",
            "stability_error",
        ]
        read_only_fields = fields


class OtherReportSerializer(serializers.Serializer):
    """A campaign's, a study's or a dialogue-metrics report: each kind has its own keys
    (analysis/reports/<kind>.py); the API gives it as the run stored it."""

    kind = serializers.CharField(
        help_text="likert, comparative, abc_eval, spot_the_bot, ab, ranking, study, "
        "dialogue_metrics or human_vs_automatic."
    )

    def to_representation(self, instance):
        return instance


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="AnalysisResult",
        serializers=[ReportSerializer, OtherReportSerializer],
        resource_type_field_name=None,
    )
)
class AnalysisResultField(serializers.Field):
    """A run's result in its own report's shape: a tournament's report (keyed by
    `tournament`) or any other subject's report (a campaign, a study, a judge run against
    its humans). A campaign's run has no `tournament` key: described as a tournament's, it
    was a 500."""

    def __init__(self, **kwargs):
        super().__init__(read_only=True, **kwargs)

    def to_representation(self, value):
        if "tournament" in value:
            return ReportSerializer(value).data
        return OtherReportSerializer(value).data


class AnalysisRunDetailSerializer(AnalysisRunSerializer):
    result = AnalysisResultField(allow_null=True, help_text="Set once the run succeeded.")

    class Meta(AnalysisRunSerializer.Meta):
        fields = [*AnalysisRunSerializer.Meta.fields, "result"]
        read_only_fields = fields
