"""fairseq-hier: hierarchical Transformers for long and multi-document inputs, as a fairseq plugin."""
from setuptools import find_packages, setup

setup(
    name="fairseq-hier",
    version="0.1.0",
    description="Hierarchical Transformers (PHT, VHT, ...) for fairseq: tasks, models, recipes",
    packages=find_packages(include=["fairseq_hier", "fairseq_hier.*"]),
    python_requires=">=3.8",
    # Runtime deps are pinned and installed by scripts/install.sh: fairseq-fixed must be installed
    # with --no-deps (its declared torchaudio dependency drags in a second torch), so we cannot
    # let pip resolve it from here.
    install_requires=[],
    entry_points={
        "console_scripts": [
            "rouge = fairseq_hier.cli.rouge:cli_main",
            "fairseq-hier-lead = fairseq_hier.cli.lead:cli_main",
            "fairseq-hier-demo-corpus = fairseq_hier.cli.make_demo_corpus:cli_main",
            "fairseq-hier-demo-facts = fairseq_hier.cli.demo_facts:cli_main",
            "fairseq-hier-wikisum-to-raw = fairseq_hier.cli.wikisum_to_raw:cli_main",
            "fairseq-hier-extract-attention = fairseq_hier.cli.extract_attention:cli_main",
            "fairseq-hier-hypotheses = fairseq_hier.cli.hypotheses:cli_main",
            "fairseq-hier-sentence-bos = fairseq_hier.cli.sentence_bos:cli_main",
            "fairseq-hier-bart-files = fairseq_hier.cli.bart_files:cli_main",
            "fairseq-hier-heatmap = fairseq_hier.cli.heatmap:cli_main",
            "fairseq-hier-ptb-tokenize = fairseq_hier.cli.ptb_tokenize:cli_main",
            "fairseq-hier-doc-extract = fairseq_hier.cli.doc_extract:cli_main",
            "fairseq-hier-doc-tokenize = fairseq_hier.cli.doc_tokenize:cli_main",
            "fairseq-hier-doc-chunk = fairseq_hier.cli.doc_chunk:cli_main",
            "fairseq-hier-doc-bleu = fairseq_hier.cli.doc_bleu:cli_main",
            "fairseq-hier-doc-demo-corpus = fairseq_hier.cli.doc_demo_corpus:cli_main",
            "fairseq-hier-rank-labels = fairseq_hier.cli.rank_labels:cli_main",
            "fairseq-hier-rank = fairseq_hier.cli.rank_paragraphs:cli_main",
            "fairseq-hier-rank-eval = fairseq_hier.cli.rank_eval:cli_main",
            "fairseq-hier-graph = fairseq_hier.cli.paragraph_graph:cli_main",
            "fairseq-hier-lexrank = fairseq_hier.cli.lexrank:cli_main",
            "fairseq-hier-parse = fairseq_hier.cli.parse:cli_main",
            "fairseq-hier-deps = fairseq_hier.cli.dependencies:cli_main",
            "fairseq-hier-spm = fairseq_hier.cli.spm:cli_main",
            "fairseq-hier-mds-to-raw = fairseq_hier.cli.mds_to_raw:cli_main",
            "fairseq-hier-record = fairseq_hier.cli.record:cli_main",
            "fairseq-hier-summarize = fairseq_hier.cli.summarize:cli_main",
            "fairseq-hier-attention-cosine = fairseq_hier.cli.attention_cosine:cli_main",
            "fairseq-hier-significance = fairseq_hier.cli.significance:cli_main",
            "fairseq-hier-efficiency = fairseq_hier.cli.efficiency:cli_main",
            "fairseq-hier-report = fairseq_hier.cli.report:cli_main",
        ],
    },
)
