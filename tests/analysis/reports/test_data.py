import numpy as np
import pytest

from analysis.reports.data import (
    ABData,
    BehaviourData,
    ComparativeData,
    LikertData,
    SpotTheBotData,
    column,
    plain_rows,
)

FEATURES = ("sensibleness", "fluency")


def spot_the_bot(**changes) -> SpotTheBotData:
    columns = {
        "judgment": (7, 7),
        "worker": (3, 3),
        "conversation": ("c-1", "c-1"),
        "speaker": (0, 1),
        "system": ("bot-a", "human"),
        "opponent": ("human", "bot-a"),
        "exchanges": (2, 2),
        "label": ("bot", "unsure"),
        "opponent_label": ("unsure", "bot"),
        "preferences": ((1, -1), (-1, 1)),
    }
    return SpotTheBotData(subject="s", features=FEATURES, **{**columns, **changes})


def ab() -> ABData:
    return ABData(
        subject="s",
        item=(1, 1, 2),
        worker=(4, 5, -1),
        system_a=("x", "x", "y"),
        system_b=("y", "y", "z"),
        choice=("a", "tie", "tie"),
        automatic=(False, False, True),
    )


def behaviours() -> BehaviourData:
    return BehaviourData(
        subject="s",
        conversation=("c-1", "c-1"),
        system=("bot-a", "bot-a"),
        turn=(1, 3),
        annotation=(10, 10),
        label=("empathetic", "ignore"),
        present=(True, False),
    )


def likert() -> LikertData:
    return LikertData(
        subject="s",
        conversation=("c-1", "c-1"),
        system=("bot-a", "bot-a"),
        annotation=(10, 11),
        dimension=("quality", "quality"),
        score=(4, 2),
        turn=(None, 3),
    )


def comparative() -> ComparativeData:
    return ComparativeData(
        subject="s",
        item=(5,),
        annotation=(12,),
        conversation_a=("c-1",),
        conversation_b=("c-2",),
        system_a=("bot-a",),
        system_b=("bot-b",),
        dimension=("quality",),
        choice=("neither",),
    )


def test_spot_the_bot_ids_and_counts_are_int64_arrays():
    data = spot_the_bot()
    for name in ("judgment", "worker", "speaker", "exchanges"):
        assert getattr(data, name).dtype == np.int64
    assert data.exchanges.tolist() == [2, 2]


def test_spot_the_bot_strings_are_unicode_arrays_equal_to_the_tuples():
    data = spot_the_bot()
    for name in ("conversation", "system", "opponent", "label", "opponent_label"):
        assert getattr(data, name).dtype.kind == "U"
    assert data.system.tolist() == ["bot-a", "human"]


def test_spot_the_bot_preferences_are_an_int8_matrix_of_rows_by_features():
    preferences = spot_the_bot().preferences
    assert (preferences.dtype, preferences.shape) == (np.int8, (2, len(FEATURES)))
    assert preferences.tolist() == [[1, -1], [-1, 1]]


def test_spot_the_bot_without_rows_has_preferences_of_zero_rows():
    names = ("judgment", "worker", "conversation", "speaker", "system", "opponent", "exchanges")
    empty = dict.fromkeys((*names, "label", "opponent_label", "preferences"), ())
    assert spot_the_bot(**empty).preferences.shape == (0, len(FEATURES))


def test_spot_the_bot_arrays_are_read_only():
    with pytest.raises(ValueError, match="read-only"):
        spot_the_bot().preferences[0, 0] = 0


def test_spot_the_bot_scalar_fields_stay_as_given():
    data = spot_the_bot(partners=("bot-a",))
    assert (data.features, data.partners, data.kind) == (FEATURES, ("bot-a",), "spot_the_bot")


def test_ab_columns_are_int64_unicode_and_bool_arrays():
    data = ab()
    dtypes = [getattr(data, name).dtype.kind for name in ("item", "worker", "choice", "automatic")]
    assert dtypes == ["i", "i", "U", "b"]
    assert data.item.dtype == np.int64 and data.automatic.tolist() == [False, False, True]


def test_ab_arrays_are_read_only():
    with pytest.raises(ValueError, match="read-only"):
        ab().choice[0] = "b"


def test_an_array_of_the_column_dtype_is_kept_not_copied():
    item = np.array([1, 2], dtype=np.int64)
    data = ABData("s", item, item, ("x", "x"), ("y", "y"), ("a", "b"), (False, False))
    assert data.item is item and not item.flags.writeable


def test_behaviour_columns_are_arrays_of_their_kinds():
    data = behaviours()
    assert [data.turn.dtype, data.annotation.dtype, data.present.dtype] == [
        np.int64,
        np.int64,
        np.bool_,
    ]
    assert data.label.dtype.kind == "U" and data.label.shape == (2,)


def test_likert_turn_keeps_none_for_dialogue_level_ratings():
    data = likert()
    assert data.turn.dtype == object and data.turn.tolist() == [None, 3]
    assert data.score.dtype == np.int64 and data.dimension.dtype.kind == "U"


def test_comparative_columns_are_arrays_of_their_kinds():
    data = comparative()
    assert data.item.dtype == np.int64 and data.annotation.dtype == np.int64
    assert [data.choice.dtype.kind, data.system_b.dtype.kind] == ["U", "U"]


def test_dimensional_arrays_are_read_only():
    with pytest.raises(ValueError, match="read-only"):
        behaviours().present[0] = False


def test_dimensional_data_without_entries_is_empty():
    data = BehaviourData("s", (), (), (), (), (), ())
    assert data.is_empty() and data.annotation.shape == (0,)


def test_a_column_must_be_one_dimensional():
    with pytest.raises(ValueError, match="one-dimensional"):
        column(((1, 2), (3, 4)), np.int64)


def test_plain_rows_zip_named_columns_as_python_values_under_an_optional_mask():
    data = ABData(
        subject="s",
        item=(1, 2),
        worker=(7, -1),
        system_a=("x", "x"),
        system_b=("y", "y"),
        choice=("a", "tie"),
        automatic=(False, True),
    )
    assert list(plain_rows(data, "item", "choice")) == [(1, "a"), (2, "tie")]
    assert list(plain_rows(data, "worker", where=~data.automatic)) == [(7,)]
    assert all(type(item) is int for item, _ in plain_rows(data, "item", "choice"))
