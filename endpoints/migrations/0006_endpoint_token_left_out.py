from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("endpoints", "0005_text_length_limits")]

    operations = [
        migrations.AddField(
            model_name="botendpoint",
            name="token_left_out",
            field=models.BooleanField(
                default=False,
                editable=False,
                help_text="The endpoint had a token that an export left out (exports never "
                "carry secrets): its owner enters it again.",
            ),
        ),
    ]
