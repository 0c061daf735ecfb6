"""BotEndpoint and EndpointUsage move here from tournaments, tables and rows untouched.

The tables keep their names (`db_table`), so this migration only changes Django's state:
on an existing database the rows are where they were; on a new one tournaments' migrations
created the tables first (hence the dependency). The content types follow the models, so
admin permissions and history stay attached to them.
"""

import django.core.validators
import django.db.models.deletion
import endpoints.models
from django.db import migrations, models

MOVED = ("botendpoint", "endpointusage")


def _relabel(apps, old, new):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for model in MOVED:
        if not ContentType.objects.filter(app_label=new, model=model).exists():
            ContentType.objects.filter(app_label=old, model=model).update(app_label=new)


def move_content_types(apps, schema_editor):
    _relabel(apps, "tournaments", "endpoints")


def move_content_types_back(apps, schema_editor):
    _relabel(apps, "endpoints", "tournaments")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("evalhub", "0008_chat_turns"),
        ("tournaments", "0005_numbers_in_range"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="BotEndpoint",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "protocol",
                            models.CharField(
                                choices=[
                                    ("evalhub", "EvalHub bot protocol"),
                                    ("openai", "OpenAI-compatible chat completions"),
                                ],
                                default="evalhub",
                                max_length=10,
                            ),
                        ),
                        (
                            "url",
                            models.URLField(
                                help_text="EvalHub protocol: the URL to POST to. OpenAI-compatible: the base URL, e.g. https://host/v1 (EvalHub appends /chat/completions).",
                                max_length=500,
                                validators=[
                                    django.core.validators.URLValidator(schemes=["http", "https"])
                                ],
                                verbose_name="URL",
                            ),
                        ),
                        (
                            "model_name",
                            models.CharField(
                                blank=True,
                                help_text="The `model` sent with OpenAI-compatible requests.",
                                max_length=200,
                            ),
                        ),
                        (
                            "auth_token",
                            models.CharField(
                                blank=True,
                                help_text="Sent as 'Authorization: Bearer <token>'. Never shown again after saving.",
                                max_length=500,
                                verbose_name="token or API key",
                            ),
                        ),
                        (
                            "system_prompt",
                            models.TextField(
                                blank=True,
                                help_text="OpenAI-compatible: sent first, as the system.",
                                max_length=4000,
                            ),
                        ),
                        (
                            "temperature",
                            models.FloatField(
                                blank=True,
                                null=True,
                                validators=[
                                    django.core.validators.MinValueValidator(0.0),
                                    django.core.validators.MaxValueValidator(2.0),
                                ],
                            ),
                        ),
                        (
                            "top_p",
                            models.FloatField(
                                blank=True,
                                null=True,
                                validators=[
                                    django.core.validators.MinValueValidator(0.0),
                                    django.core.validators.MaxValueValidator(1.0),
                                ],
                                verbose_name="top p",
                            ),
                        ),
                        (
                            "max_tokens",
                            models.PositiveIntegerField(
                                blank=True,
                                null=True,
                                validators=[
                                    django.core.validators.MinValueValidator(1),
                                    django.core.validators.MaxValueValidator(32768),
                                ],
                            ),
                        ),
                        (
                            "stop",
                            models.JSONField(
                                blank=True,
                                default=list,
                                validators=[endpoints.models.validate_stop_sequences],
                                verbose_name="stop sequences",
                            ),
                        ),
                        (
                            "timeout_seconds",
                            models.FloatField(
                                default=endpoints.models.default_bot_timeout,
                                help_text="Total time allowed for one request, from connecting to the last byte.",
                                validators=[
                                    django.core.validators.MinValueValidator(1.0),
                                    django.core.validators.MaxValueValidator(600.0),
                                ],
                            ),
                        ),
                        (
                            "max_concurrency",
                            models.PositiveSmallIntegerField(
                                default=endpoints.models.default_bot_concurrency,
                                help_text="Requests in flight at once.",
                                validators=[
                                    django.core.validators.MinValueValidator(1),
                                    django.core.validators.MaxValueValidator(64),
                                ],
                            ),
                        ),
                        (
                            "daily_budget",
                            models.PositiveIntegerField(
                                default=endpoints.models.default_bot_daily_budget,
                                help_text="Requests per day (UTC) at most, retries included, from every tournament.",
                                validators=[
                                    django.core.validators.MinValueValidator(1),
                                    django.core.validators.MaxValueValidator(1000000),
                                ],
                            ),
                        ),
                        (
                            "allow_other_owners",
                            models.BooleanField(
                                default=False,
                                help_text="Let tournaments of other researchers call this endpoint, within the budget.",
                                verbose_name="allow other owners' tournaments",
                            ),
                        ),
                        ("updated", models.DateTimeField(auto_now=True)),
                        (
                            "system",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="endpoint",
                                to="evalhub.system",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "tournaments_botendpoint",
                    },
                ),
                migrations.CreateModel(
                    name="EndpointUsage",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("day", models.DateField()),
                        ("requests", models.PositiveIntegerField(default=0)),
                        (
                            "endpoint",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="usage",
                                to="endpoints.botendpoint",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "tournaments_endpointusage",
                    },
                ),
                migrations.AddConstraint(
                    model_name="botendpoint",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("timeout_seconds__gte", 1.0), ("timeout_seconds__lte", 600.0)
                        ),
                        name="bot_endpoint_timeout_range",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="botendpoint",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("max_concurrency__gte", 1), ("max_concurrency__lte", 64)
                        ),
                        name="bot_endpoint_concurrency_range",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="botendpoint",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("daily_budget__gte", 1), ("daily_budget__lte", 1000000)
                        ),
                        name="bot_endpoint_budget_range",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="botendpoint",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("temperature__isnull", True),
                            models.Q(("temperature__gte", 0.0), ("temperature__lte", 2.0)),
                            _connector="OR",
                        ),
                        name="bot_endpoint_temperature_range",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="botendpoint",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("top_p__isnull", True),
                            models.Q(("top_p__gte", 0.0), ("top_p__lte", 1.0)),
                            _connector="OR",
                        ),
                        name="bot_endpoint_top_p_range",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="botendpoint",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("max_tokens__isnull", True),
                            models.Q(("max_tokens__gte", 1), ("max_tokens__lte", 32768)),
                            _connector="OR",
                        ),
                        name="bot_endpoint_max_tokens_range",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="endpointusage",
                    constraint=models.UniqueConstraint(
                        fields=("endpoint", "day"), name="endpoint_usage_day"
                    ),
                ),
            ],
        ),
        migrations.RunPython(move_content_types, move_content_types_back, elidable=True),
    ]
