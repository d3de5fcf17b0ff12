"""Speaker segment ids of the HAT dialogue recipes (paper 004 Sec. 4.1, Table 6): AMI's four
roles (as QMSum names the speakers of its Product meetings) get fixed ids; per-meeting order of
appearance is the option for corpora without roles (ICSI, SAMSum). Fixtures in QMSum's exact
layout (one meeting per line, the keys QMSum's files carry)."""

import json

import pytest

from conftest import run_cli, write_tiny_gpt2_bpe
from fairseq_hier.readers.qmsum import AMI_FILLERS
from fairseq_hier.preparation.sentence_bos import (AMI_ROLES, default_speaker_ids, encode_split,
                                                   role_indices, speaker_ids_of, speaker_indices)


def test_the_roles_and_the_defaults_are_pinned():
    assert AMI_ROLES == ("Project Manager", "Marketing", "User Interface", "Industrial Designer")
    assert default_speaker_ids("qmsum") == "roles"
    for layout in ("samsum", "cohan", "source_target", "presumm", "jsonl"):
        assert default_speaker_ids(layout) == "appearance"


def test_role_ids_are_fixed_and_appearance_ids_follow_each_meeting():
    meeting = ["Marketing", "Industrial Designer", "Marketing", "project manager",
               "User Interface"]
    assert role_indices(meeting, "f:1") == [1, 3, 1, 0, 2]
    assert speaker_ids_of(meeting, "roles", "f:1") == [1, 3, 1, 0, 2]
    assert speaker_ids_of(meeting, "appearance", "f:1") == [0, 1, 0, 2, 3]
    assert speaker_indices(["B", "A", "B", "C"]) == [0, 1, 0, 2]
    # the same role has the same id in another meeting, whoever speaks first
    assert role_indices(["User Interface", "Marketing"], "f:2") == [2, 1]
    with pytest.raises(ValueError, match=r"^f:3: speaker 'Grad F' is not one of AMI's roles "
                                         r"\(Project Manager, Marketing, User Interface, "
                                         r"Industrial Designer\); --speaker-ids appearance"):
        role_indices(["Marketing", "Grad F"], "f:3")


def meeting(turns, answer="The team agrees on the design ."):
    """One line of QMSum's jsonl: the keys and nesting of its published files."""
    return json.dumps({
        "topic_list": [{"topic": "opening", "relevant_text_span": [["0", str(len(turns) - 1)]]}],
        "general_query_list": [{"query": "Summarize the whole meeting.", "answer": answer},
                               {"query": "What did the group discuss?", "answer": "design ."}],
        "specific_query_list": [{"query": "What did Marketing say?", "answer": "price .",
                                 "relevant_text_span": [["1", "2"]]}],
        "meeting_transcripts": [{"speaker": s, "content": c} for s, c in turns]})


AMI = [[("Industrial Designer", "um the remote has a case ."),
        ("Project Manager", "we study the design {vocalsound} ."),
        ("Industrial Designer", "the price is short ."),
        ("Marketing", "Mm-hmm ."),  # a filler-only turn: dropped
        ("User Interface", "the colour reads well .")],
       [("Marketing", "the team agrees ."), ("User Interface", "new data show gains ."),
        ("Marketing", "every remote has a marker .")]]
ICSI = [[("Professor B", "we study the results ."), ("Grad F", "the model reads papers ."),
         ("Professor B", "uh the tests show gains .")]]


@pytest.fixture(scope="module")
def bpe(tmp_path_factory):
    folder = write_tiny_gpt2_bpe(tmp_path_factory.mktemp("bpe"))
    return str(folder / "encoder.json"), str(folder / "vocab.bpe")


def write(path, meetings):
    path.write_text("\n".join(meeting(m) for m in meetings) + "\n")
    return path


def segments(tmp_path, bpe, meetings, **kw):
    path = write(tmp_path / "test.jsonl", meetings)
    fillers = tmp_path / "fillers.txt"
    fillers.write_text("\n".join(sorted(AMI_FILLERS)) + "\n")
    encode_split("qmsum", str(path), str(tmp_path / "out"), *bpe, 512, 64, speakers=True,
                 filler_words=str(fillers), progress_bar=False, **kw)
    lines = (tmp_path / "out.segments").read_text().splitlines()
    return [[int(x) for x in line.split()] for line in lines]


def test_ami_meetings_get_role_ids_by_default(tmp_path, bpe, caplog):
    with caplog.at_level("INFO"):
        assert segments(tmp_path, bpe, AMI) == [[3, 0, 3, 2], [1, 2, 1]]
    assert "numbered by roles" in caplog.text
    assert segments(tmp_path, bpe, AMI, speaker_ids="roles") == [[3, 0, 3, 2], [1, 2, 1]]
    assert segments(tmp_path, bpe, AMI, speaker_ids="appearance") == [[0, 1, 0, 2], [0, 1, 0]]
    assert (tmp_path / "out.sentences").read_text().split() == ["4", "3"]


def test_an_unknown_speaker_in_role_mode_names_file_line_and_name(tmp_path, bpe):
    path = tmp_path / "test.jsonl"
    with pytest.raises(ValueError, match=rf"^{path}:1: speaker 'Professor B' is not one of "
                                         rf"AMI's roles"):
        segments(tmp_path, bpe, ICSI)
    assert segments(tmp_path, bpe, ICSI, speaker_ids="appearance") == [[0, 1, 0]]
    with pytest.raises(ValueError, match="--speaker-ids numbers the speakers that --speakers "
                                         "writes: give both"):
        encode_split("qmsum", str(path), str(tmp_path / "o"), *bpe, 512, 64,
                     speaker_ids="roles", progress_bar=False)


def test_the_command_takes_the_option_and_fails_in_one_line(tmp_path, bpe):
    path = write(tmp_path / "val.jsonl", [AMI[1], ICSI[0]])
    common = ["--format", "qmsum", "--input", path, "--gpt2-encoder-json", bpe[0],
              "--gpt2-vocab-bpe", bpe[1], "--speakers", "--no-progress-bar"]
    out = run_cli("fairseq-hier-sentence-bos", *common, "--output-prefix", tmp_path / "a",
                  check=False)
    assert out.returncode == 1
    assert (f"{path}:2: speaker 'Professor B' is not one of AMI's roles (Project Manager, "
            f"Marketing, User Interface, Industrial Designer); --speaker-ids appearance numbers "
            f"the speakers of each meeting in order of appearance") in out.stdout
    assert "Traceback" not in out.stdout
    run_cli("fairseq-hier-sentence-bos", *common, "--output-prefix", tmp_path / "b",
            "--speaker-ids", "appearance")
    assert (tmp_path / "b.segments").read_text() == "0 1 0\n0 1 0\n"
