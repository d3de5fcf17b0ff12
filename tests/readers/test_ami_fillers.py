"""AMI filler removal (fairseq_hier/readers/qmsum.py ``filter_fillers``, used by ``read_qmsum`` and
the raw-text pipeline ``sentence_bos``): a filler goes together with the punctuation it leaves
alone, in QMSum's tokenisation (punctuation as tokens of their own) and in untokenised text.

Meetings are written in QMSum's jsonl layout with made-up turns."""

import collections
import json

import pytest

from fairseq_hier.inference.pipelines import PIPELINES
from fairseq_hier.inference.record import Assets
from fairseq_hier.readers.qmsum import AMI_FILLERS, filter_fillers, read_qmsum


@pytest.mark.parametrize("content, expected", [
    # rule 1: the pause marks after a filler go with it
    ("Um , I'm here .", ("I'm here .", 1, 1)),
    ("Um, I'm here.", ("I'm here.", 1, 1)),
    ("the , um , price", ("the , price", 1, 1)),
    ("the, um, price", ("the, price", 1, 1)),
    ("okay , um , so , uh , we start", ("okay , so , we start", 2, 2)),
    ("Um, um, I think", ("I think", 2, 2)),
    ("um - I mean the remote", ("I mean the remote", 1, 1)),
    ("the um price", ("the price", 1, 0)),
    # rule 2: a sentence end stays in the filler's place; the pause mark before it goes
    ("so , um .", ("so .", 1, 1)),
    ("so, um.", ("so.", 1, 1)),
    ("you know , uh ?", ("you know ?", 1, 1)),
    ("I agree {vocalsound} .", ("I agree .", 1, 0)),
    # ... unless no word is left before it in its sentence
    ("Yeah . Mm-hmm .", ("Yeah .", 1, 1)),
    ("Mm-hmm .", ("", 1, 1)),
    ("Hmm? well ,  uh-huh! umbrella", ("well! umbrella", 2, 2)),
    # rule 3: what the removal leaves at the start, or a pause mark at the end
    (", um , I agree", ("I agree", 1, 2)),
    ("so , um", ("so", 1, 1)),
    ("The umbrella, um", ("The umbrella", 1, 1)),
    # other tokens are never touched; no filler, nothing changes
    ('I said " um " there', ('I said " " there', 1, 0)),
    ("Well , the price , right ?", ("Well , the price , right ?", 0, 0)),
])
def test_filler_goes_with_the_punctuation_it_leaves_alone(content, expected):
    assert filter_fillers(content, AMI_FILLERS) == expected


def test_empty_lexicon_drops_nothing():
    assert filter_fillers("Um ,  I'm here .", frozenset()) == ("Um , I'm here .", 0, 0)


def meeting(turns):
    return {"topic_list": [], "specific_query_list": [],
            "general_query_list": [{"query": "Summarize the whole meeting.",
                                    "answer": "The team chose a remote."}],
            "meeting_transcripts": [{"speaker": s, "content": c} for s, c in turns]}


TURNS = [("Project Manager", "Um , so we start with the budget ."),
         ("Marketing", "Mm-hmm ."),
         ("User Interface", "I think the , uh , buttons should be big , um ."),
         ("Industrial Designer", "{vocalsound} Um, I'm here.")]


def test_qmsum_counts_the_punctuation_dropped_with_fillers(tmp_path):
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps(meeting(TURNS)) + "\n", encoding="utf-8")
    stats = collections.Counter()
    (record,) = read_qmsum(str(path), AMI_FILLERS, stats=stats)
    assert record.sentences == ["Project Manager: so we start with the budget .",
                                "User Interface: I think the , buttons should be big .",
                                "Industrial Designer: I'm here."]
    assert record.speakers == ["Project Manager", "User Interface", "Industrial Designer"]
    # commas after "Um" and "uh", the "." of the "Mm-hmm ." turn, the comma before "um .",
    # the comma attached to "Um,"
    assert stats == {"records": 1, "filler_tokens_dropped": 6, "filler_punctuation_dropped": 5,
                     "turns_dropped": 1}


def test_raw_text_pipeline_removes_fillers_as_the_reader(tmp_path):
    (tmp_path / "fillers.txt").write_text("um\nuh\nmm-hmm\n{vocalsound}\n", encoding="utf-8")
    assets = Assets({"filler_words.txt": str(tmp_path / "fillers.txt")})
    pipeline = PIPELINES["sentence_bos"]({"format": "qmsum", "filler_words": True}, assets)
    record = pipeline.record("\n".join(f"{s}: {c}" for s, c in TURNS), "example 1")
    assert record.sentences == ["Project Manager: so we start with the budget .",
                                "User Interface: I think the , buttons should be big .",
                                "Industrial Designer: I'm here."]
    assert pipeline.counts == {"qmsum reader: filler_tokens_dropped": 6,
                               "qmsum reader: filler_punctuation_dropped": 5,
                               "qmsum reader: turns_dropped": 1}
