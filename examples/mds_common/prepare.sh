#!/usr/bin/env bash
# ParsingSum recipes, steps 1-5 (shared by examples/multi_news and examples/wcep): the published
# files in $DATA -> $WORK/data-bin with the dependency parse beside the binarized source.
#   1. fairseq-hier-mds-to-raw   $DATA -> $WORK/raw/{split}.src/.tgt (documents as paragraphs)
#   2. fairseq-hier-parse        spaCy: $WORK/parsed/{split}.conllu/.tok (sources) and
#                                $WORK/parsed/{split}.tgt.tok (targets: the same tokenizer)
#   3. fairseq-hier-spm          train on the train tokens (sources + targets), encode every file
#                                -> $WORK/bpe/{split}.src/.tgt (<P> kept as one token); train and
#                                valid targets cut to TARGET_PIECES (Fabbri et al.'s
#                                -tgt_seq_length_trunc 300; test targets are scored whole)
#   4. fairseq-preprocess        --joined-dictionary -> $WORK/data-bin
#   5. fairseq-hier-deps         -> $WORK/data-bin/{split}.parse.spacy.{bin,idx}
# Every step is skipped when its outputs exist (each is written whole or not at all).
#
# usage: DATA=DIR WORK=DIR prepare.sh DATASET [fairseq-hier-mds-to-raw args]
#   e.g. prepare.sh wcep --max-articles 100
# env: DATA (the published files) WORK (outputs) VOCAB (32000 sentencepiece pieces)
#      TARGET_PIECES (300: the training targets' cut)
#      WORKERS (nproc: parsing processes and fairseq-preprocess workers)
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: DATA=DIR WORK=DIR $0 DATASET [reader args...]" >&2; exit 2; }
DATASET=$1; shift
: "${DATA:?set DATA to the folder of the published files}"
: "${WORK:?set WORK to the output folder}"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
VOCAB=${VOCAB:-32000}
TARGET_PIECES=${TARGET_PIECES:-300}
WORKERS=${WORKERS:-$(nproc)}
SPLITS=(train valid test)

# 1. reader: only the splits whose files are missing
MISSING=()
for split in "${SPLITS[@]}"; do
  [[ -f "$WORK/raw/$split.tgt" ]] || MISSING+=("$split")
done
if [[ ${#MISSING[@]} -gt 0 ]]; then
  python -m fairseq_hier.cli.mds_to_raw --dataset "$DATASET" --input-dir "$DATA" \
    --output-dir "$WORK/raw" --splits "$(IFS=,; echo "${MISSING[*]}")" "$@"
fi

# 2. parse (sources) and tokenise (targets) with the same spaCy pipeline; the parse of the
#    targets is not used, their tokens are: source and target words are spelled alike
tokens() { [[ "$2" == src ]] && echo "$WORK/parsed/$1.tok" || echo "$WORK/parsed/$1.tgt.tok"; }
mkdir -p "$WORK/parsed" "$WORK/bpe"
for split in "${SPLITS[@]}"; do
  for side in src tgt; do
    tok=$(tokens "$split" "$side")
    [[ -f "$tok" ]] || python -m fairseq_hier.cli.parse --input "$WORK/raw/$split.$side" \
      --output-prefix "${tok%.tok}" --workers "$WORKERS"
  done
done

# 3. sentencepiece on the parser's train tokens (both sides); every file encoded with it,
#    separators kept as single <P> tokens
if [[ ! -f "$WORK/spm/spm.model" ]]; then
  python -m fairseq_hier.cli.spm train --input "$(tokens train src)" "$(tokens train tgt)" \
    --model-prefix "$WORK/spm/spm" --vocab-size "$VOCAB"
fi
for split in "${SPLITS[@]}"; do
  for side in src tgt; do
    out="$WORK/bpe/$split.$side"
    [[ -f "$out" ]] && continue
    if [[ "$side" == tgt && "$split" != test ]]; then  # the training targets' cut
      python -m fairseq_hier.cli.spm encode --model "$WORK/spm/spm.model" \
        --input "$(tokens "$split" "$side")" --output "$out.whole"
      awk -v n="$TARGET_PIECES" '{ if (NF > n) NF = n; print }' "$out.whole" > "$out.tmp"
      mv "$out.tmp" "$out"
    else
      python -m fairseq_hier.cli.spm encode --model "$WORK/spm/spm.model" \
        --input "$(tokens "$split" "$side")" --output "$out"
    fi
  done
done

# 4. binarize, one dictionary for source and target (flat models share all embeddings)
if [[ ! -f "$WORK/data-bin/dict.src.txt" ]]; then
  rm -rf "$WORK/data-bin.tmp"
  fairseq-preprocess --source-lang src --target-lang tgt --trainpref "$WORK/bpe/train" \
    --validpref "$WORK/bpe/valid" --testpref "$WORK/bpe/test" --destdir "$WORK/data-bin.tmp" \
    --joined-dictionary --workers "$WORKERS"
  mv "$WORK/data-bin.tmp" "$WORK/data-bin"
fi

# 5. one dependency code per binarized source token (--task ... --dependency-parse spacy)
for split in "${SPLITS[@]}"; do
  if [[ ! -f "$WORK/data-bin/$split.parse.spacy.idx" ]]; then
    python -m fairseq_hier.cli.dependencies --conllu "$WORK/parsed/$split.conllu" \
      --source "$WORK/bpe/$split.src" --subword sentencepiece \
      --output-prefix "$WORK/data-bin/$split.parse.spacy"
  fi
done
# how raw documents become these lines, for fairseq-hier-summarize: no title, every document one
# paragraph (fairseq-hier-mds-to-raw), spaCy's tokens and parse (fairseq-hier-parse), this
# sentencepiece model; decode.sh's options per architecture: the flat systems' (GENERATION) by
# default, the hierarchical ones' (GENERATION_HIER, generation.sh) for liu_ht and parsingsum_ht
if [[ ! -f "$WORK/data-bin/hier_preprocess.json" ]]; then
  # shellcheck source=generation.sh
  source "$ROOT/examples/mds_common/generation.sh"
  python -m fairseq_hier.cli.record "$WORK/data-bin" --task hierarchical_summarization \
    --pipeline paragraphs --option title=false --option paragraphs=documents \
    --option tokenizer=spacy --option subword=sentencepiece --option post_process=sentencepiece \
    --asset spm.model="$WORK/spm/spm.model" --generation "${GENERATION[*]}" \
    --generation-for liu_ht="${GENERATION_HIER[*]}" \
    --generation-for parsingsum_ht="${GENERATION_HIER[*]}"
fi
echo "prepare.sh: $WORK/data-bin ready"
