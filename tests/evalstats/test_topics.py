import pytest

from evalstats.topics import KeywordTopicClassifier, TopicClassifier


def test_keyword_classifier_picks_the_topic_with_most_hits():
    classifier = KeywordTopicClassifier()
    assert isinstance(classifier, TopicClassifier)
    assert classifier.classify("Who is your favorite musician?") == "music"
    assert classifier.classify("Did you watch the NBA game? My team lost the match") == "sports"
    assert classifier.classify("Hello there, how are you?") is None


def test_custom_keywords_ties_go_to_the_first_topic():
    classifier = KeywordTopicClassifier({"space": ("mars", "rocket"), "politics": ("senate",)})
    assert classifier.classify("The Senate voted on the Mars rocket") == "space"
    assert classifier.classify("the senate and mars") == "space"
    assert classifier.classify("SENATE") == "politics"


def test_a_topic_without_keywords_is_rejected():
    with pytest.raises(ValueError, match="topic 'x' needs a non-empty sequence"):
        KeywordTopicClassifier({"x": "abc"})
