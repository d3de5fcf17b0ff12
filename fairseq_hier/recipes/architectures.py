"""The one table of fairseq-hier's architectures (:data:`ARCHITECTURES`): for each registered
name its task, subword kind, dependency parse, pretrained start, kind of source, its paper's
training and decoding settings as the paper states them (with the data-set variants the recipes
decode or train with, :data:`VARIANTS`), and the tiny test dimensions.

``fairseq-hier settings`` prints from it (:mod:`fairseq_hier.recipes.settings` scales it to a
user's data; ``--stage paper-train``, ``paper-decode`` and ``paper-batch`` give the recipes in
``examples/`` the paper's own options); the efficiency table, the GPU check, the benchmarks and
the tests read their traits and tiny dimensions here. Traits a model answers at run time stay class attributes
of the models; a test holds the two together.

May import: ``errors`` and the standard library.
"""

from dataclasses import dataclass, field, replace
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import HierError

#: kinds of source (``Architecture.layout``)
HIERARCHICAL = "hierarchical"  # B x P x L: paragraphs of tokens
SENTENCES = "sentences"  # B x S, a BOS opening every sentence (HAT, 004)
FLAT = "flat"  # B x S
LAYOUTS = (HIERARCHICAL, SENTENCES, FLAT)
#: the options that state a decoding length (kept last by the scaled settings of own data)
LENGTH_OPTIONS = ("--min-len", "--max-len-a", "--max-len-b")


@dataclass(frozen=True)
class Architecture:
    """One registered architecture: its traits, its paper's settings (``source`` ... ``langs``;
    ``source`` None: no paper settings) and its tiny test dimensions."""

    arch: str
    task: str
    layout: str  # HIERARCHICAL | SENTENCES | FLAT
    subword: str = "sentencepiece"  # sentencepiece | gpt2 | bpe | none
    parse: bool = False  # needs a dependency parse (--dependency-parse)
    pretrained: Optional[str] = None  # fine-tuned from this BART (fairseq's name)
    tiny_family: str = "flat"  # the tests' tiny batch: hier(_parse) flat(_parse) sentences ...
    tiny: Mapping[str, object] = field(default_factory=dict)  # tiny dims (legacy arg names)
    ours: bool = True  # registered by fairseq-hier (False: fairseq's own, e.g. transformer)
    scaled: bool = True  # its paper settings scale to a user's data (fairseq-hier settings)
    # ---- the paper's settings (see docs/papers.md for the ids)
    source: Optional[str] = None  # where the settings are stated
    dataset: Optional[str] = None  # the data set they were tuned on
    train_examples: int = 0  # its training examples
    model: Tuple[str, ...] = ()  # arch, shape and the task's input cut
    optimisation: Tuple[str, ...] = ()  # optimiser, lr, schedule (without lengths), criterion ...
    batch_option: str = "--batch-size"  # --batch-size (examples) or --max-tokens, per GPU
    batch: int = 0
    gpus: int = 1  # the paper's GPUs
    update_freq: int = 1  # and its accumulation
    updates: int = 0
    warmup: int = 0
    interval: int = 0  # updates between checkpoints (and validations)
    generation: Tuple[str, ...] = ()  # fairseq-generate's options, lengths included
    decay_period: Optional[int] = None  # the step scheduler's --lr-deacy-period
    polynomial: bool = False  # --total-num-update = the updates
    max_target_positions: int = 1024
    langs: Tuple[str, str] = ("src", "tgt")  # the binarized files' suffixes

    @property
    def max_len(self) -> int:
        """The paper's longest output (``--max-len-b`` of :attr:`generation`)."""
        return int(_value(self.generation, "--max-len-b"))

    @property
    def min_len(self) -> Optional[int]:
        """Its shortest, where it sets one (``--min-len``)."""
        value = _value(self.generation, "--min-len")
        return None if value is None else int(value)

    @property
    def rules(self) -> Tuple[str, ...]:
        """:attr:`generation` without its lengths (:data:`LENGTH_OPTIONS`)."""
        out: List[str] = []
        skip = False
        for word in self.generation:
            if skip:
                skip = False
                continue
            if word in LENGTH_OPTIONS:
                skip = True
                continue
            out.append(word)
        return tuple(out)

    def paper_train(self) -> List[str]:
        """The paper's optimisation as fairseq-train options: optimiser, lr, schedule with its
        warm-up (and decay period, or ``--total-num-update``), criterion, ``--max-update`` (the
        warm-up and updates where the paper states them)."""
        args = list(self.optimisation)
        if self.warmup:
            args += ["--warmup-updates", str(self.warmup)]
        if self.decay_period:
            args += ["--lr-deacy-period", str(self.decay_period)]  # fairseq's spelling
        if self.polynomial:
            args += ["--total-num-update", str(self.updates)]
        return args + (["--max-update", str(self.updates)] if self.updates else [])


def _value(args: Sequence[str], name: str) -> Optional[str]:
    args = list(args)
    return args[args.index(name) + 1] if name in args else None


# ---------------------------------------------------------------------------------- tiny dims
# the tests' tiny widths (tests/support/tiny_models.py); dropout 0 unless a test overrides it
TINY_HIER = dict(encoder_layers=2, decoder_layers=2, encoder_embed_dim=16, decoder_embed_dim=16,
                 encoder_ffn_embed_dim=24, decoder_ffn_embed_dim=24, encoder_attention_heads=2,
                 decoder_attention_heads=2, pooling_heads=2, dropout=0.0)
TINY_LIU = dict(encoder_layers=3, global_layers="1", decoder_layers=2, encoder_embed_dim=16,
                decoder_embed_dim=16, encoder_ffn_embed_dim=24, decoder_ffn_embed_dim=24,
                encoder_attention_heads=2, global_heads=2, decoder_attention_heads=2,
                dropout=0.0, attention_dropout=0.0, activation_dropout=0.0)
TINY_FLAT = dict(encoder_layers=2, decoder_layers=2, encoder_embed_dim=16, decoder_embed_dim=16,
                 encoder_ffn_embed_dim=24, decoder_ffn_embed_dim=24, encoder_attention_heads=2,
                 decoder_attention_heads=2, dropout=0.0, attention_dropout=0.0,
                 activation_dropout=0.0, max_source_positions=64, max_target_positions=64)
#: HAT's tiny widths (tests/conftest.py's TINY_HAT)
TINY_HAT = dict(encoder_layers=2, decoder_layers=2, encoder_embed_dim=16, decoder_embed_dim=16,
                encoder_ffn_embed_dim=32, decoder_ffn_embed_dim=32, encoder_attention_heads=4,
                decoder_attention_heads=4, max_source_positions=64, max_target_positions=64,
                dropout=0.0)
TINY_SENTENCES = dict(TINY_HAT, attention_dropout=0.0, activation_dropout=0.0)
#: the benchmarks' and the efficiency table's tiny widths (``--widths tiny``), every architecture
TINY_WIDTHS = dict(encoder_layers=2, decoder_layers=1, encoder_embed_dim=32, decoder_embed_dim=32,
                   encoder_ffn_embed_dim=64, decoder_ffn_embed_dim=64, encoder_attention_heads=2,
                   decoder_attention_heads=2, dropout=0.3, pooling_heads=2)
#: the small model of the end-to-end tests (fairseq-train's options: :func:`cli_args`)
SMALL = dict(encoder_layers=1, decoder_layers=1, encoder_embed_dim=32, decoder_embed_dim=32,
             encoder_ffn_embed_dim=64, decoder_ffn_embed_dim=64, encoder_attention_heads=2,
             decoder_attention_heads=2)

# ------------------------------------------------------------------------------ paper settings
ADAM_NOAM = ("--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--adam-eps", "1e-09",
             "--lr-scheduler", "inverse_sqrt")
LABEL_SMOOTHING = ("--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1")

# PHT/VHT: 000 Sec. 4.2 and 001 Sec. 5.2 (model, optimiser, decoding rules). Not in 000 or 001:
# the batch of 16 examples is the authors' (yema2018/wiki_sum README.md line 15 "--batch_size
# 16", main.py line 26 default=16 at fb7d827; earlier commits of main.py default to 28); the
# comma exempt from blocking is their id 10, '\u2581,' (main.py eval_by_beam_search, "while 10 in
# bnw_block"), skipped when the two previous tokens are counted (PreviousTokenBlocker)
PHT = dict(
    task="hierarchical_summarization", layout=HIERARCHICAL, tiny_family="hier", tiny=TINY_HIER,
    source="000 Sec. 4.2, 001 Sec. 5.2", dataset="WikiSum (ranked)", train_examples=1_579_360,
    optimisation=ADAM_NOAM + ("--lr", "4.94e-4", "--criterion", "cross_entropy"),
    batch_option="--batch-size", batch=16, updates=600_000, warmup=16_000, interval=20_000,
    generation=("--beam", "5", "--lenpen", "1.0", "--max-len-a", "0", "--max-len-b", "200",
                "--no-repeat-ngram-size", "3", "--block-previous-tokens", "2",
                "--block-previous-exceptions", "\u2581,"))
PHT_CUT = ("--max-paragraphs", "30", "--max-paragraph-tokens", "100")
# 002 Sec. 4; hiersumm (nlpyang/hiersumm), the paper's code
LIU_HT = dict(
    task="hierarchical_summarization", layout=HIERARCHICAL, tiny_family="hier", tiny=TINY_LIU,
    source="002 Sec. 4", dataset="WikiSum (ranked)", train_examples=1_579_360,
    optimisation=("--optimizer", "adam", "--adam-betas", "(0.9, 0.998)", "--adam-eps", "1e-09",
                  "--lr-scheduler", "inverse_sqrt", "--lr", "1.3975e-3", "--warmup-init-lr",
                  "0") + LABEL_SMOOTHING,
    batch_option="--max-tokens", batch=10_500, update_freq=16, updates=500_000, warmup=8000,
    interval=5000,
    # 002 Sec. 4: beam 5, Wu's length penalty alpha 0.4, "until an end-of-sequence token";
    # hiersumm README.md line 43, the evaluation command, "-alpha 0.4 -max_length 400";
    # src/train_abstractive.py line 376 "-min_length', default=20" (the command keeps it); its
    # predictor ends a search when the top beam ends (src/abstractive/predictor_builder.py line
    # 328 "End condition is top beam is finished")
    generation=("--beam", "5", "--length-penalty-form", "wu", "--lenpen", "0.4", "--max-len-a",
                "0", "--max-len-b", "400", "--min-len", "20", "--stop-on-top-beam"))
# 003 Sec. 3.2 and footnotes 2-3 (examples/mds_common/README.md)
MDS = dict(
    task="hierarchical_summarization", dataset="Multi-News", train_examples=44_972,
    batch_option="--max-tokens",
    optimisation=("--optimizer", "adam", "--adam-betas", "(0.9, 0.998)", "--dropout", "0.1",
                  "--lr", "1e-3", "--lr-scheduler", "step", "--lr-decay", "0.5"))
MDS_LENGTHS = ("--min-len", "200", "--max-len-a", "0", "--max-len-b", "300")
MDS_CUT = ("--max-paragraphs", "10", "--max-paragraph-tokens", "160")
# the flat systems: the documents concatenated and cut to 500 pieces (Fabbri et al.'s
# -src_seq_length_trunc 500, examples/mds_common/train.sh)
MDS_FLAT = ("--max-paragraphs", "10", "--max-paragraph-tokens", "500",
            "--max-source-positions", "500")
# FT: Fabbri et al.'s OpenNMT scripts (003 footnote 3): no label smoothing (OpenNMT's copy loss
# ignores it); Wu's length penalty 0.9, the summary coverage penalty 5, trigram blocking
FT = dict(MDS, layout=FLAT, tiny_family="flat", tiny=TINY_FLAT, source="003 Sec. 3.2, footnote 3",
          batch=4096, updates=20_000, warmup=8000, decay_period=4000, interval=2000,
          optimisation=MDS["optimisation"] + ("--criterion", "label_smoothed_cross_entropy",
                                              "--label-smoothing", "0"),
          generation=("--beam", "5") + MDS_LENGTHS + (
              "--length-penalty-form", "wu", "--lenpen", "0.9", "--coverage-penalty", "summary",
              "--coverage-beta", "5", "--no-repeat-ngram-size", "3"))
# HT: Liu & Lapata's code (003 footnote 2): label smoothing 0.1, Wu's length penalty 0.4, no
# blocking, the search ended when its top beam ends (hiersumm's predictor_builder.py l. 328-329)
HT = dict(MDS, layout=HIERARCHICAL, tiny_family="hier", source="003 Sec. 3.2, footnote 2",
          batch=13_000, updates=100_000, warmup=8000, decay_period=20_000, interval=5000,
          optimisation=MDS["optimisation"] + LABEL_SMOOTHING,
          generation=("--beam", "5") + MDS_LENGTHS + (
              "--length-penalty-form", "wu", "--lenpen", "0.4", "--stop-on-top-beam"))
# 004 Sec. 4.1, arXiv/PubMed (examples/hat_common, examples/hat_arxiv)
HAT = dict(
    task="hat_summarization", layout=SENTENCES, subword="gpt2", tiny_family="sentences",
    tiny=TINY_SENTENCES, source="004 Sec. 4.1", dataset="arXiv", train_examples=203_037,
    langs=("source", "target"),
    optimisation=("--dropout", "0.1", "--attention-dropout", "0.1", "--weight-decay", "0.01",
                  "--optimizer", "adam", "--adam-betas", "(0.9, 0.999)", "--adam-eps", "1e-08",
                  "--lr-scheduler", "polynomial_decay", "--lr", "3e-5",
                  "--required-batch-size-multiple", "1") + LABEL_SMOOTHING,
    batch_option="--batch-size", batch=4, gpus=2, update_freq=16, updates=30_000, warmup=900,
    interval=3000, polynomial=True,
    generation=("--beam", "2", "--lenpen", "1.0", "--min-len", "72", "--max-len-a", "0",
                "--max-len-b", "966"))
HAT_SOURCE = ("--max-source-positions", "3072")
# 004's document MT (examples/doc_mt_common; the plain Transformer trains alike: "All models are
# initialized randomly with the same training setup"); not scaled by fairseq-hier settings
MT = dict(task="document_translation", layout=SENTENCES, subword="bpe", tiny_family="sentences",
          tiny=TINY_SENTENCES)


def _doc_mt(lr, warmup, updates, dropout, smoothing, weight_decay, **kw) -> dict:
    """004 Sec. 4.2's training of one data set: Adam (0.9, 0.98) eps 1e-6, linear warm-up to
    ``lr`` then linear decay to 0; beam 4 up to the models' 1024 positions."""
    optimisation = ("--dropout", dropout, "--criterion", "label_smoothed_cross_entropy",
                    "--label-smoothing", smoothing, "--optimizer", "adam", "--adam-betas",
                    "(0.9, 0.98)", "--adam-eps", "1e-06", "--weight-decay", weight_decay,
                    "--lr-scheduler", "polynomial_decay", "--lr", lr, "--end-learning-rate", "0",
                    "--power", "1")
    return dict(source="004 Sec. 4.2", optimisation=optimisation, warmup=warmup,
                updates=updates, polynomial=True, batch_option="--max-tokens", scaled=False,
                generation=("--beam", "4", "--max-len-a", "0", "--max-len-b", "1023"), **kw)


# WMT20 En-De: 1024 tokens x 16 accumulation x 8 V100, 50000 steps, warm-up 1250 to 1e-4
WMT20_EN_DE = _doc_mt("1e-4", 1250, 50_000, "0.1", "0.1", "0.0", dataset="WMT20 En-De",
                      batch=1024, gpus=8, update_freq=16)
# IWSLT17 TED Zh-En: 8192 tokens x 2 accumulation on one V100, 8000 steps, warm-up 100 to 1e-3
TED_ZH_EN = _doc_mt("1e-3", 100, 8000, "0.3", "0.2", "0.1", dataset="IWSLT17 TED Zh-En",
                    batch=8192, gpus=1, update_freq=2)

ARCHITECTURES: Dict[str, Architecture] = {a.arch: a for a in (
    Architecture("pht", model=("--arch", "pht") + PHT_CUT, **PHT),
    Architecture("vht", model=("--arch", "vht") + PHT_CUT, **PHT),
    Architecture("liu_ht", model=("--arch", "liu_ht", "--max-paragraphs", "24",
                                  "--max-paragraph-tokens", "500"), **LIU_HT),
    Architecture("transformer_copy", model=("--arch", "transformer_copy") + MDS_FLAT, **FT),
    # fairseq's post-LN Transformer with FT's shape and settings (not OpenNMT's pre-LN form of
    # transformer_copy): a plain fairseq baseline beside 003's FT
    Architecture("transformer", model=("--arch", "transformer", "--encoder-layers", "4",
                                       "--decoder-layers", "4", "--share-all-embeddings")
                 + MDS_FLAT, ours=False, **FT),
    Architecture("parsingsum_ft", model=("--arch", "parsingsum_ft", "--dependency-parse",
                                         "spacy") + MDS_FLAT,
                 parse=True, **dict(FT, tiny_family="flat_parse")),
    Architecture("parsingsum_ht", model=("--arch", "parsingsum_ht", "--dependency-parse",
                                         "spacy") + MDS_CUT,
                 parse=True, **dict(HT, tiny_family="hier_parse",
                                    tiny=dict(TINY_LIU, global_layers="2"))),
    Architecture("hat_bart_large", model=("--arch", "hat_bart_large") + HAT_SOURCE,
                 pretrained="bart.large", **HAT),
    Architecture("long_bart_large", model=("--arch", "long_bart_large") + HAT_SOURCE,
                 pretrained="bart.large", **HAT),
    Architecture("hat_bart_base", model=("--arch", "hat_bart_base") + HAT_SOURCE,
                 pretrained="bart.base", **HAT),
    Architecture("long_bart_base", model=("--arch", "long_bart_base") + HAT_SOURCE,
                 pretrained="bart.base", **HAT),
    # ---- without paper settings of their own
    Architecture("pht_1layer", task="hierarchical_summarization", layout=HIERARCHICAL,
                 tiny_family="hier", tiny=dict(TINY_HIER, encoder_layers=1, decoder_layers=1)),
    Architecture("vht_1layer", task="hierarchical_summarization", layout=HIERARCHICAL,
                 tiny_family="hier", tiny=dict(TINY_HIER, encoder_layers=1, decoder_layers=1)),
    Architecture("hat_transformer_wmt_en_de", **MT, **WMT20_EN_DE),
    Architecture("hat_transformer_iwslt_zh_en", **MT, **TED_ZH_EN),
    Architecture("transformer_iwslt_zh_en", **MT, **TED_ZH_EN),
    Architecture("transformer_wmt_en_de_big", **dict(MT, ours=False), **WMT20_EN_DE),
    # 001 Sec. 4.2.1's attention predictor (Adam at 5e-4: examples/attention_alignment's choice)
    Architecture("attention_predictor", task="attention_prediction", layout=HIERARCHICAL,
                 tiny_family="predictor",
                 tiny=dict(input_dim=8, encoder_layers=2, encoder_attention_heads=2,
                           encoder_ffn_embed_dim=16, dropout=0.0),
                 source="001 Sec. 4.2.1", dataset="WikiSum (PHT's attention)", scaled=False,
                 optimisation=("--optimizer", "adam", "--lr", "5e-4")),
    # 002 Sec. 4: the ranker trains with Adagrad, lr 0.15
    Architecture("paragraph_ranker", task="paragraph_ranking", layout=HIERARCHICAL,
                 tiny_family="ranker",
                 tiny=dict(embed_dim=8, hidden_size=8, feature_dim=8, dropout=0.0),
                 source="002 Sec. 4", dataset="WikiSum", scaled=False,
                 optimisation=("--optimizer", "adagrad", "--lr", "0.15")),
)}

#: the data-set variants of a paper's settings that the recipes use: (arch, data set) -> the
#: fields that differ (the other data sets of a paper, and the recipes' own choices where the
#: paper states none; each recipe README says which)
VARIANTS: Dict[Tuple[str, str], Dict[str, object]] = {}


def _hat_variants() -> None:
    # 004 Sec. 4.1, CNN/DM: beam 1, no length penalty, 40-120 tokens; 20,000 updates of 64
    # articles (the warm-up, 500, is BART's CNN/DM recipe's: not stated)
    cnndm = dict(dataset="CNN/DM", update_freq=8, updates=20_000, warmup=500,
                 generation=("--beam", "1", "--lenpen", "1.0", "--min-len", "40", "--max-len-a",
                             "0", "--max-len-b", "120"))
    # SAMSum: not in the paper; ours (5,000 updates of 32 dialogues, warm-up 200; beam 4, 5-100)
    samsum = dict(dataset="SAMSum", update_freq=4, updates=5000, warmup=200,
                  generation=("--beam", "4", "--lenpen", "1.0", "--min-len", "5", "--max-len-a",
                              "0", "--max-len-b", "100"))
    # AMI / ICSI: not in the paper; arXiv's decoding, 1,000 / 500 updates of 8 meetings, warm-up 50
    ami = dict(dataset="AMI", batch=1, gpus=1, update_freq=8, updates=1000, warmup=50)
    icsi = dict(ami, dataset="ICSI", updates=500)
    # a data set the recipes do not name (hat_common's scripts on their own): beam 4, 1-200
    other = dict(dataset="other", generation=("--beam", "4", "--lenpen", "1.0", "--min-len", "1",
                                              "--max-len-a", "0", "--max-len-b", "200"))
    for arch in ("hat_bart_large", "long_bart_large", "hat_bart_base", "long_bart_base"):
        VARIANTS.update({(arch, "arxiv"): {}, (arch, "cnndm"): cnndm, (arch, "samsum"): samsum,
                         (arch, "ami"): ami, (arch, "icsi"): icsi, (arch, "other"): other})


_hat_variants()


def _with_lengths(generation: Tuple[str, ...], min_len: int, max_len: int) -> Tuple[str, ...]:
    """``generation`` with its ``--min-len`` and ``--max-len-b`` replaced."""
    out = list(generation)
    out[out.index("--min-len") + 1], out[out.index("--max-len-b") + 1] = str(min_len), str(max_len)
    return tuple(out)


def _other_variants() -> None:
    # Multi-News (003's); WCEP: not in 003, 20-80 pieces are ours (examples/wcep/README.md)
    for arch in ("transformer_copy", "transformer", "parsingsum_ft", "parsingsum_ht"):
        VARIANTS[(arch, "multi_news")] = {}
        VARIANTS[(arch, "wcep")] = dict(
            dataset="WCEP", generation=_with_lengths(ARCHITECTURES[arch].generation, 20, 80))
    # WMT20 En-Cs (004 Sec. 4.2): 15000 steps, warm-up 500 to 5e-4, label smoothing 0.2, dropout
    # 0.2, weight decay 0.1; the demo of examples/wmt20_doc/demo.sh (ours): 1200 updates of 2048
    # tokens, warm-up 100 to 1e-3
    en_cs = _doc_mt("5e-4", 500, 15_000, "0.2", "0.2", "0.1", dataset="WMT20 En-Cs")
    demo = _doc_mt("1e-3", 100, 1200, "0.1", "0.1", "0.0", dataset="demo (made-up En-De)",
                   batch=2048)
    for arch in ("hat_transformer_wmt_en_de", "transformer_wmt_en_de_big"):
        VARIANTS.update({(arch, "wmt20_en_de"): {}, (arch, "wmt20_en_cs"): en_cs,
                         (arch, "demo"): demo})
    for arch in ("hat_transformer_iwslt_zh_en", "transformer_iwslt_zh_en"):
        VARIANTS[(arch, "ted_zh_en")] = {}


_other_variants()


def _demo_variants() -> None:
    """The demos' own settings (ours, small data on a CPU; each demo script names its data set)."""
    # examples/demo/run_demo.sh: every architecture alike, Adam at 2e-3 after 100 warm-up updates,
    # no label smoothing; beam 5, trigram blocking, at most 80 tokens
    demo = dict(dataset="demo corpus", warmup=100, decay_period=None, polynomial=False,
                optimisation=("--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--lr",
                              "2e-3", "--lr-scheduler", "inverse_sqrt", "--criterion",
                              "label_smoothed_cross_entropy", "--label-smoothing", "0"),
                generation=("--beam", "5", "--no-repeat-ngram-size", "3", "--max-len-b", "80"))
    for arch in ("transformer", "pht", "vht", "liu_ht"):
        VARIANTS[(arch, "demo")] = demo
    # examples/attention_alignment/run_demo.sh: the demo's PHT decoded by every strategy alike
    VARIANTS[("pht", "alignment_demo")] = dict(
        dataset="demo corpus", generation=("--beam", "5", "--no-repeat-ngram-size", "3",
                                           "--block-previous-tokens", "2", "--max-len-b", "80"))
    # examples/demo/run_parsingsum.sh: 003's systems with 100 warm-up updates, no decay, 5-60
    for arch in ("transformer_copy", "transformer", "parsingsum_ft", "parsingsum_ht"):
        VARIANTS[(arch, "parsingsum_demo")] = dict(
            dataset="demo corpus (Multi-News layout)", warmup=100, decay_period=100_000,
            generation=_with_lengths(ARCHITECTURES[arch].generation, 5, 60))
    # examples/hat_common/heatmap_demo.sh: a small HAT Transformer from scratch, Adam at 2e-3
    VARIANTS[("hat_transformer_iwslt_zh_en", "heatmap_demo")] = dict(
        dataset="made-up sentences", warmup=100, updates=5000, polynomial=False,
        optimisation=("--dropout", "0.0", "--optimizer", "adam", "--lr", "2e-3", "--lr-scheduler",
                      "inverse_sqrt", "--criterion", "cross_entropy"),
        generation=("--beam", "4"))


_demo_variants()


# ---------------------------------------------------------------------------------- look-ups
def architecture(arch: str) -> Architecture:
    """The table's row of ``arch`` (:class:`HierError` naming the known ones)."""
    if arch not in ARCHITECTURES:
        raise HierError(f"--arch {arch}: not in fairseq-hier's table of architectures (expected "
                        f"one of {', '.join(ARCHITECTURES)})")
    return ARCHITECTURES[arch]


def with_paper(arch: str) -> bool:
    return ARCHITECTURES[arch].source is not None


#: the architectures with paper settings (``fairseq-hier settings ARCH --stage paper-train``)
PAPER_SETTINGS: Dict[str, Architecture] = {a: row for a, row in ARCHITECTURES.items()
                                           if with_paper(a)}
#: those whose paper settings scale to a user's data (``fairseq-hier settings ARCH
#: --stage train|generate|facts``, examples/own_data)
PAPERS: Dict[str, Architecture] = {a: row for a, row in ARCHITECTURES.items()
                                   if with_paper(a) and row.scaled}


def variant(arch: str, dataset: Optional[str] = None) -> Architecture:
    """``arch``'s paper settings, for ``dataset`` where a recipe trains or decodes another data
    set than the paper's first (:data:`VARIANTS`)."""
    row = architecture(arch)
    if row.source is None:
        raise HierError(f"no paper settings for --arch {arch} (expected one of "
                        f"{', '.join(PAPERS)})")
    if dataset is None:
        return row
    if (arch, dataset) not in VARIANTS:
        known = sorted(d for a, d in VARIANTS if a == arch)
        raise HierError(f"--dataset {dataset}: no settings of {arch} for it (expected "
                        f"{', '.join(known) if known else 'none: its paper has one data set'})")
    return replace(row, **VARIANTS[(arch, dataset)])


def archs_with(layout: Optional[str] = None, parse: Optional[bool] = None,
               task: Optional[str] = None, paper: Optional[bool] = None,
               ours: Optional[bool] = None) -> Tuple[str, ...]:
    """The table's architectures (in its order) with the given traits."""
    return tuple(a for a, row in ARCHITECTURES.items()
                 if (layout is None or row.layout == layout)
                 and (ours is None or row.ours == ours)
                 and (parse is None or row.parse == parse)
                 and (task is None or row.task == task)
                 and (paper is None or (row.source is not None) == paper))


def tiny_dims(arch: str) -> Dict[str, object]:
    """``arch``'s tiny test dimensions (legacy argument names), a fresh dict."""
    return dict(architecture(arch).tiny)


def cli_args(dims: Mapping[str, object]) -> List[str]:
    """``dict(encoder_layers=1)`` -> ``["--encoder-layers", "1"]``: dims as fairseq options."""
    return [word for k, v in dims.items() for word in (f"--{k.replace('_', '-')}", str(v))]
