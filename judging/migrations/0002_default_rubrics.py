from django.db import migrations


def install(apps, schema_editor):
    from judging.defaults import install_default_rubrics

    install_default_rubrics(apps.get_model("judging", "Rubric"))


class Migration(migrations.Migration):
    dependencies = [("judging", "0001_initial")]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
