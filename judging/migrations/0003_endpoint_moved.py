"""A judge's endpoint is now endpoints.BotEndpoint: the same table, so state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("endpoints", "0001_initial"),
        ("judging", "0002_default_rubrics"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name="judge",
                    name="endpoint",
                    field=models.ForeignKey(
                        help_text="An OpenAI-compatible chat completions endpoint (a system's endpoint).",
                        limit_choices_to={"protocol": "openai"},
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="judges",
                        to="endpoints.botendpoint",
                    ),
                )
            ],
        ),
    ]
