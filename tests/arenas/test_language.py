"""The prompt's language, detected by py3langid."""

from arenas.language import detect_language


def test_common_languages_are_told_apart():
    assert detect_language("Write a short poem about the sea and the wind.") == "en"
    assert detect_language("Écris un court poème sur la mer et le vent, s'il te plaît.") == "fr"
    assert detect_language("Schreib bitte ein kurzes Gedicht über das Meer und den Wind.") == "de"
    assert detect_language("Escribe un poema corto sobre el mar y el viento, por favor.") == "es"


def test_too_few_letters_tell_nothing():
    assert detect_language("?? 42 !") == ""
    assert detect_language("ok") == ""
