"""BotEndpoint and EndpointUsage now belong to endpoints (endpoints/0001): they leave
tournaments' state only; their tables and rows stay, under the same names."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("endpoints", "0001_initial"),
        ("judging", "0003_endpoint_moved"),
        ("tournaments", "0005_numbers_in_range"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.RemoveField(
                    model_name="endpointusage",
                    name="endpoint",
                ),
                migrations.DeleteModel(
                    name="BotEndpoint",
                ),
                migrations.DeleteModel(
                    name="EndpointUsage",
                ),
            ],
        ),
    ]
