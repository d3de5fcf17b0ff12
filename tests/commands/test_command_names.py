"""The commands as a user meets them (docs/commands.md): at most 24 commands in ``fairseq-hier
--help`` and no old name; one module per command, on one template; one vocabulary of output
options in every parser (an old spelling hidden, registered and still working with one line on
stderr); every old name an alias that prints one line naming its new command and then gives that
command's output; a family given no subcommand runs its default one after one line."""

import argparse
import importlib
import pkgutil
import re

import pytest
from conftest import run_cli

import fairseq_hier.cli
from fairseq_hier.cli import aliases, main
from fairseq_hier.cli.common import CommandParser

#: the output options of the vocabulary (docs/commands.md); every other one is an old spelling
OUTPUT_OPTIONS = {"-o", "--output", "--output-dir", "--output-prefix"}
#: what names an output in an option string or a positional's name ("out" opening a word:
#: --output, --scores-out, OUT_DIR, not --layout)
WRITES = re.compile(r"(?<![a-z])out|dest|save", re.IGNORECASE)
NOT_COMMANDS = {"main", "common", "aliases"}


def walk(parser):
    """``parser`` and every subcommand's parser under it, depth first."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from walk(sub)


def every_parser():
    """(command, parser) of every command and subcommand."""
    return [(name, p) for name, module in main.COMMANDS.items()
            for p in walk(importlib.import_module(module).get_parser())]


def help_of(capsys, run, *argv):
    """What ``run(argv)`` prints for --help: (stdout, stderr lines)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        run(list(argv))
    assert stop.value.code == 0
    out, err = capsys.readouterr()
    return out, err.splitlines()


def test_the_listing_has_at_most_24_commands_and_no_old_name(capsys):
    assert main.cli_main(["--help"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()
              if line.startswith("  ") and not line.startswith("   ")]
    assert listed == list(main.COMMANDS) and 20 <= len(listed) <= 24
    assert not set(listed) & set(aliases.ALIASES)
    # an old name is run (below), never offered: not even as the closest match of a typo
    assert main.unknown("lexrnk") == ("fairseq-hier: error: unknown command 'lexrnk' "
                                      "(did you mean 'lexrank'?)")


def test_every_command_module_is_named_for_its_command_and_has_the_template():
    modules = {m.name for m in pkgutil.iter_modules(fairseq_hier.cli.__path__)} - NOT_COMMANDS
    assert modules == {name.replace("-", "_") for name in main.COMMANDS}
    for name, module in main.COMMANDS.items():
        command = importlib.import_module(module)
        assert module == f"fairseq_hier.cli.{name.replace('-', '_')}"
        assert command.PROG == f"fairseq-hier-{name}", module
        for function in ("get_parser", "run", "cli_main"):
            assert callable(getattr(command, function, None)), (module, function)
        parser = command.get_parser()
        assert parser.prog == command.PROG and isinstance(parser, CommandParser)
        for sub in list(walk(parser))[1:]:  # a subcommand's usage and errors: "PROG SUB"
            assert sub.prog.startswith(command.PROG + " "), sub.prog


@pytest.mark.parametrize("name,parser", every_parser(), ids=lambda x: getattr(x, "prog", x))
def test_output_options_are_the_vocabulary_and_old_spellings_are_registered(name, parser):
    for action in parser._actions:
        if isinstance(action, (argparse._SubParsersAction, argparse._HelpAction)):
            continue
        spellings = action.option_strings or [action.metavar or action.dest]
        if action.help == argparse.SUPPRESS:  # hidden: an old spelling, and nothing else
            for spelling in spellings:
                assert spelling in parser.renames, (parser.prog, spelling)
                assert parser.renames[spelling] in parser._option_string_actions
            continue
        written = {s for s in spellings if WRITES.search(s)}
        if not action.option_strings:
            assert not written, f"{parser.prog}: positional {spellings} names an output"
        assert written <= OUTPUT_OPTIONS, (parser.prog, written)
        if "--output" in action.option_strings:  # one file: the short -o too
            assert "-o" in action.option_strings, parser.prog


@pytest.mark.parametrize("old", sorted(aliases.ALIASES))
def test_every_alias_prints_one_line_naming_its_command_then_runs_it(old, capsys):
    new = aliases.ALIASES[old]
    out, err = help_of(capsys, lambda argv: aliases.run_alias(old, argv), "--help")
    if old == "hypotheses":  # a step of decode now: its own old command line
        assert err == [f"fairseq-hier-{old}: now a step of 'fairseq-hier decode' (this name "
                       f"will go)"]
        assert out.startswith("usage: fairseq-hier-hypotheses ")
        return
    assert err == [f"fairseq-hier-{old}: now 'fairseq-hier {' '.join(new)}' (this name will go)"]
    command = importlib.import_module(aliases.module_of(new[0]))
    expected, quiet = help_of(capsys, command.cli_main, *new[1:], "--help")
    assert out == expected and quiet == []
    # and through the front command, the same
    assert help_of(capsys, main.cli_main, old, "--help") == (out, err)


def test_an_alias_gives_the_output_of_its_command_on_the_same_files(tmp_path):
    src, ref = tmp_path / "test.src", tmp_path / "test.tgt"
    src.write_text("title a <P> the cat sat on the mat .\nt b <P> one two three four five\n")
    ref.write_text("the cat sat .\none two .\n")
    new = run_cli("fairseq-hier-baseline", "lead", "--source", src, "--reference", ref,
                  "-o", tmp_path / "new.hyp")
    old = run_cli("fairseq-hier-lead", "--source", src, "--reference", ref,
                  "--output", tmp_path / "old.hyp")
    assert (tmp_path / "old.hyp").read_text() == (tmp_path / "new.hyp").read_text() == (
        "title a the cat\nt b one\n")
    logged = [line.split(" | ")[-1].replace("old.hyp", "new.hyp")
              for line in old.stdout.splitlines()]
    assert logged == ["fairseq-hier-lead: now 'fairseq-hier baseline lead' (this name will go)",
                      *(line.split(" | ")[-1] for line in new.stdout.splitlines())]


def test_a_family_without_a_subcommand_runs_its_default_after_one_line(tmp_path):
    src = tmp_path / "test.src"
    src.write_text("t <P> a b <P> t x <P> c d\nu <P> e f <P> u u g\n")
    new = run_cli("fairseq-hier-rank", "apply", "--method", "tfidf", "-i", src,
                  "-o", tmp_path / "new.src")
    old = run_cli("fairseq-hier-rank", "--method", "tfidf", "--source", src,
                  "--output", tmp_path / "old.src")
    assert (tmp_path / "old.src").read_text() == (tmp_path / "new.src").read_text() == (
        "t <P> t x <P> a b <P> c d\nu <P> u u g <P> e f\n")
    notes = [line for line in old.stdout.splitlines() if " | " not in line]
    assert notes == ["fairseq-hier-rank: now 'fairseq-hier rank apply' (give the subcommand; "
                     "this form will go)",
                     "fairseq-hier-rank apply: '--source' is now '--input' (this spelling will "
                     "go)"]
    assert [line for line in new.stdout.splitlines() if " | " not in line] == []
    # a family with no default subcommand asks for one
    proc = run_cli("fairseq-hier-baseline", check=False)
    assert (proc.returncode, proc.stdout) == (
        2, "fairseq-hier-baseline: error: the following arguments are required: SUBCOMMAND\n")


def test_record_lists_its_pipelines_with_or_without_the_subcommand(capsys):
    from fairseq_hier.cli import record

    assert record.cli_main(["data", "--list"]) == 0
    listed, err = capsys.readouterr()
    assert record.cli_main(["--list"]) == 0
    assert capsys.readouterr() == (listed, "fairseq-hier-record: now 'fairseq-hier record data' "
                                           "(give the subcommand; this form will go)\n")
    assert "paragraphs" in listed and err == ""


def test_an_old_option_spelling_works_and_prints_one_line(tmp_path, capsys):
    from fairseq_hier.cli import demo, ptb_tokenize

    sizes = ["--train", "3", "--valid", "1", "--test", "1", "--seed", "4"]
    assert demo.cli_main(["corpus", "--output-dir", str(tmp_path / "new"), *sizes]) == 0
    assert capsys.readouterr().err == ""
    assert demo.cli_main(["corpus", "--out-dir", str(tmp_path / "old"), *sizes]) == 0
    assert capsys.readouterr().err == ("fairseq-hier-demo corpus: '--out-dir' is now "
                                       "'--output-dir' (this spelling will go)\n")
    for name in ("train.src", "test.tgt", "valid.facts.jsonl"):
        assert (tmp_path / "old" / name).read_text() == (tmp_path / "new" / name).read_text()
    # a positional output, now -o
    text = tmp_path / "in.txt"
    text.write_text("He can't go. She said \"yes\".\n")
    assert ptb_tokenize.cli_main([str(text), str(tmp_path / "old.tok")]) == 0
    assert capsys.readouterr().err == ("fairseq-hier-ptb-tokenize: positional OUT is now "
                                       "'--output OUT' (this spelling will go)\n")
    assert ptb_tokenize.cli_main([str(text), "-o", str(tmp_path / "new.tok")]) == 0
    assert (tmp_path / "old.tok").read_text() == (tmp_path / "new.tok").read_text() == (
        "He ca n't go . She said `` yes '' .\n")
    # both spellings at once: one line naming the conflict, nothing written
    with pytest.raises(SystemExit) as stop:
        ptb_tokenize.cli_main([str(text), str(tmp_path / "a.tok"), "-o", str(tmp_path / "b.tok")])
    assert stop.value.code == 2 and capsys.readouterr().err == (
        "fairseq-hier-ptb-tokenize: error: give --output only (positional OUT is its old "
        "spelling)\n")
    assert not (tmp_path / "a.tok").exists() and not (tmp_path / "b.tok").exists()
