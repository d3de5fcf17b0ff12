"""Re-scoring a recipe's written files, for the recipe tests: the scores a recipe printed (its
``rouge.txt``) must equal the files it wrote, scored again independently of the recipe:

- ROUGE-1.5.5: :func:`fairseq_hier.scoring.rouge.rouge_scores` with the recipe's own flags (``-e``,
  ``-zs``), whose output tests/scoring/test_rouge.py compares with a direct run of the official perl;
- rouge-score (the ``--also-rouge-score`` block): Google's own ``RougeScorer`` on texts built
  here (the summaries' sentences on newlines);
- several references per summary, any number each: ROUGE-1.5.5.pl itself run on SEE files and
  a config written here (:func:`perl_direct`), not by fairseq_hier's runner.
"""

import os
import subprocess
from typing import Dict, List

from fairseq_hier.io import read_lines
from fairseq_hier.scoring import rouge

RSCORE_KEYS = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


def newline_sentences(text: str, eos: str) -> str:
    """The summary's sentences one per line, split at every ``<q>`` (the separator of reference
    sentences) and on `` eos`` (the markers dropped)."""
    return "\n".join(p.strip() for part in text.split("<q>") for p in part.split(f" {eos}")
                      if p.strip())


def rouge_score_oracle(refs: List[str], hyps: List[str], eos: str,
                       stemming: bool = True) -> Dict[str, float]:
    """Mean F1 of rouge-score's RougeScorer over the pairs, rounded as ``rouge`` prints it."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(RSCORE_KEYS, use_stemmer=stemming)
    scores = [scorer.score(newline_sentences(r, eos), newline_sentences(h, eos))
              for r, h in zip(refs, hyps)]
    return {k: float(f"{sum(s[k].fmeasure for s in scores) / len(scores):.5f}")
            for k in RSCORE_KEYS}


def assert_rescored(printed: str, ref_path, hyp_path, eos: str = ".",
                    zero_empty_summary: bool = True, rouge_score: bool = True) -> None:
    """The R, P and F of ROUGE-1/2/L in ``printed`` (a ``rouge`` output) equal the written
    files re-scored to 5 decimals, and so does its rouge-score block (when ``rouge_score``)."""
    refs, hyps = read_lines(str(ref_path)), read_lines(str(hyp_path))
    expected = rouge.rouge_scores(refs, hyps, eos, zero_empty_summary=zero_empty_summary)
    got = rouge.parse_report(printed)
    assert set(got) == {"rouge-1", "rouge-2", "rouge-l"}, printed[-2000:]
    for metric in got:
        for key in "rpf":
            assert round(got[metric][key], 5) == round(expected[metric][key], 5), (metric, key)
    if rouge_score:
        assert rouge.parse_rouge_score(printed) == rouge_score_oracle(refs, hyps, eos), \
            printed[-2000:]


def hand_see(path, sentences):
    """A SEE file as ROUGE-1.5.5's README describes it, one sentence per anchor."""
    body = "".join(f'<a name="{n}">[{n}]</a> <a href="#{n}" id={n}>{s}</a>\n'
                   for n, s in enumerate(sentences, start=1))
    path.write_text(f"<html>\n<head>\n<title>t</title>\n</head>\n<body bgcolor=\"white\">\n"
                    f"{body}</body>\n</html>", encoding="utf-8")


def perl_direct(folder, models, hyps):
    """Run ROUGE-1.5.5.pl itself (files2rouge's arguments) on a config written here:
    ``models[i]``: the sentence lists of summary i's references (any number per summary),
    listed as <M ID="A">, "B", ...; ``hyps[i]``: summary i, sentences ending in " ."."""
    model, peer = folder / "models", folder / "peers"
    model.mkdir(parents=True)
    peer.mkdir()
    evals = []
    for i, (refs, hyp) in enumerate(zip(models, hyps)):
        hand_see(peer / f"p{i}.html", [s + " ." for s in hyp.split(" . ") if s.strip(" .")])
        entries = []
        for k, sentences in enumerate(refs):
            hand_see(model / f"m{i}_{k}.html", sentences)
            entries.append(f'<M ID="{chr(ord("A") + k)}">m{i}_{k}.html</M>')
        evals.append(f'<EVAL ID="{i + 1}"><MODEL-ROOT>{model}</MODEL-ROOT><PEER-ROOT>{peer}'
                     f'</PEER-ROOT><INPUT-FORMAT TYPE="SEE"></INPUT-FORMAT><PEERS><P ID="1">'
                     f'p{i}.html</P></PEERS><MODELS>{"".join(entries)}</MODELS></EVAL>\n')
    config = folder / "config.xml"
    config.write_text('<ROUGE-EVAL version="1.55">\n' + "".join(evals) + "</ROUGE-EVAL>\n")
    home = rouge.rouge_home()
    proc = subprocess.run(["perl", os.path.join(home, "ROUGE-1.5.5.pl"), "-e",
                           os.path.join(home, "data"), "-c", "95", "-r", "1000", "-n", "2", "-a",
                           "-m", str(config)], text=True, capture_output=True, check=True)
    return proc.stdout


def report_lines(text):
    """The score lines of a ROUGE-1.5.5 report (``1 ROUGE-1 Average_R: ...``)."""
    return [line for line in text.splitlines() if " Average_" in line]
