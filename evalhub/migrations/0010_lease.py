from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evalhub", "0009_conversation_owner"),
    ]

    operations = [
        migrations.CreateModel(
            name="Lease",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("key", models.CharField(max_length=200, unique=True)),
                ("owner", models.CharField(max_length=200)),
                ("acquired_at", models.DateTimeField()),
                ("heartbeat_at", models.DateTimeField()),
                ("expires_at", models.DateTimeField(db_index=True)),
                ("attempts", models.PositiveIntegerField(default=1)),
            ],
        ),
    ]
