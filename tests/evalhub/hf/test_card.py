"""The dataset card's front matter is the Hub's YAML and its features `datasets`' own."""

import datasets
import pyarrow as pa
import pytest
import yaml

from evalhub.errors import UserInputError
from evalhub.hf import card

SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("n", pa.int64()),
        ("messages", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
        ("context", pa.list_(pa.string())),
        ("ok", pa.bool_()),
    ]
)


def test_features_are_written_as_datasets_writes_them():
    ours = [{"name": f.name, **card._named(f.type)} for f in SCHEMA]
    assert ours == datasets.Features.from_arrow_schema(SCHEMA)._to_yaml_list()


def test_the_front_matter_is_yaml_with_every_table():
    tables = [
        card.TableInfo("conversations", "data/conversations.parquet", 2, SCHEMA),
        card.TableInfo("judgments", "data/judgments.parquet", 5, pa.schema([("x", pa.int64())])),
    ]
    text = card.CardText(title='A "quoted": title', description="About.", license="mit")
    readme = card.render(text, tables)
    meta = yaml.safe_load(readme.split("---\n")[1])
    assert meta["pretty_name"] == 'A "quoted": title' and meta["license"] == "mit"
    assert [c["config_name"] for c in meta["configs"]] == ["conversations", "judgments"]
    assert meta["configs"][0]["default"] is True and "default" not in meta["configs"][1]
    assert meta["dataset_info"][1]["splits"] == [{"name": "train", "num_examples": 5}]
    assert "\nAbout.\n" in readme and "## Citation" not in readme


@pytest.mark.parametrize(
    ("params", "field"),
    [({"license": "beerware"}, "license"), ({"citation": "x" * 5001}, "citation")],
)
def test_card_options_refuse_an_unknown_licence_and_a_long_citation(params, field):
    with pytest.raises(UserInputError) as refused:
        card.card_options(params)
    assert refused.value.problems[0].field == field


def test_card_options_default_to_an_unknown_licence():
    assert card.card_options({}) == ("unknown", "")
