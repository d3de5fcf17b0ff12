#!/usr/bin/env bash
# Your own data, JSON lines -> a report, one stage a call (README.md: the stages, the variables).
# usage: DATA=DIR WORK=DIR run.sh prepare ARCH | train ARCH [fairseq-train args]
#          | decode ARCH [fairseq-generate args] | score ARCH | report [RUN ...]
#        document translation: run.sh prepare-mt SRC TGT | train-mt SRC TGT hat|plain [args]
#          | decode-mt SRC TGT [fairseq-generate args] | report-mt
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
COMMON=$(dirname "$HERE")/common
ROOT=$(dirname "$(dirname "$HERE")")
STAGES="prepare train decode score report prepare-mt train-mt decode-mt report-mt"
say() { echo "run.sh: $*" >&2; }
fail() { say "$*"; exit 2; }
if [[ $# -eq 0 ]]; then sed -n '3,6p' "$0" >&2; exit 2; fi
STAGE=$1; shift
[[ " $STAGES " == *" $STAGE "* ]] || fail "unknown stage '$STAGE' (one of: $STAGES)"
: "${WORK:?set WORK to the output folder}"
export PARAGRAPHS=${PARAGRAPHS:-documents} RANK=${RANK:-none} VOCAB=${VOCAB:-32000} SPM_TYPE=${SPM_TYPE:-unigram} \
  SUBSET=${SUBSET:-test} WORKERS=${WORKERS:-$(nproc)}
SPLITS=(train valid test)
python "$HERE/stage.py"  # the variables, checked before any stage does work (stage.py)
arch_facts() {  # the table's facts of ARCH, KIND BIN RUN DIR, and what the stage needs, checked
  local facts
  facts=$(python "$HERE/stage.py" "$STAGE" "$1")
  eval "$facts"
}

bpe_files() {  # BART's fairseq files (made from a Hugging Face BART by bart_prepare.sh)
  if [[ -f "$BART/config.json" ]]; then echo "$WORK/gpt2/bart_files"; else echo "$BART"; fi
}

prepare() {
  local missing=() split valid options generation
  for split in "${SPLITS[@]}"; do [[ -f "$WORK/raw/$split.tgt" ]] || missing+=("$split"); done
  [[ ${#missing[@]} -eq 0 ]] || fairseq-hier-to-raw --format jsonl --input-dir "$DATA" \
    --output-dir "$WORK/raw" --splits "$(IFS=,; echo "${missing[*]}")" --paragraphs "$PARAGRAPHS"
  case "$KIND" in
    spm) bash "$COMMON/spm.sh" "$WORK/raw/%s" "$WORK/spm"
         mkdir -p "$WORK/spm/bpe"
         for split in "${SPLITS[@]}"; do
           [[ -f "$WORK/spm/bpe/$split.tgt" ]] || cp "$WORK/spm/pieces/$split.tgt" "$WORK/spm/bpe/"
           [[ -f "$WORK/spm/bpe/$split.src" ]] || rank "$WORK/spm/pieces/$split.src" "$WORK/spm/bpe/$split.src"
         done
         bash "$COMMON/binarize.sh" "$WORK/spm/bpe" "$BIN" ;;
    spacy_spm) bash "$COMMON/parse_prepare.sh" "$WORK/raw" "$WORK/spacy_spm" ;;
    gpt2) valid="$DATA/valid.jsonl"
          [[ -f "$valid" ]] || valid="$DATA/val.jsonl"
          MAX_SOURCE=${MAX_SOURCE:-3072} bash "$COMMON/bart_prepare.sh" jsonl "$WORK/gpt2" "$BART" \
            "$DATA/train.jsonl" "$valid" "$DATA/test.jsonl" ;;
  esac
  # the record (rewritten): how raw documents became these lines, and the decoding options
  if [[ "$KIND" == gpt2 ]]; then
    options=(--pipeline sentence_bos --option format=jsonl --option max_source_positions="${MAX_SOURCE:-3072}"
             --asset encoder.json="$(bpe_files)/encoder.json" --asset vocab.bpe="$(bpe_files)/vocab.bpe")
  else
    options=(--pipeline paragraphs --option title=true --option paragraphs="$PARAGRAPHS"
             --option rank="$RANK" --option subword=sentencepiece
             --option post_process=sentencepiece --asset spm.model="$WORK/$KIND/spm/spm.model")
    [[ "$KIND" == spacy_spm ]] && options+=(--option tokenizer=spacy)
    [[ "$RANK" == ranker ]] && options+=(--asset ranker.pt="$RANKER" --asset ranker.dict.txt="$RANKER_DICT")
  fi
  generation=$(fairseq-hier-settings "$ARCH" --stage generate \
               --targets "$WORK/$KIND/bpe/train.$TGT" 2>/dev/null | tr '\n' ' ')
  fairseq-hier-record data "$BIN" --task "$TASK" "${options[@]}" --generation "$generation"
  say "$BIN ready for $ARCH"
}

rank() {  # one split's encoded sources in RANK's order, as the record's rank option redoes it
  case "$RANK" in
    none) cp "$1" "$2.tmp" ;;
    tfidf) fairseq-hier-rank apply --method tfidf -i "$1" -o "$2.tmp" ;;
    ranker) fairseq-hier-rank apply --path "$RANKER" --data "$(dirname "$RANKER_DICT")" -i "$1" -o "$2.tmp" ;;
  esac
  mv "$2.tmp" "$2"
}

train() {
  local init=() args settings notes
  [[ -f "$DIR/done" ]] && { say "$DIR/done exists, skipping"; return; }
  [[ -f "$BIN/dict.$SRC.txt" ]] || { say "$BIN not found: run.sh prepare $ARCH first"; exit 1; }
  if [[ -n "$PRETRAINED" && -f "$BART/config.json" ]]; then init=(--finetune-from-model "$BART")
  elif [[ -n "$PRETRAINED" ]]; then init=(--finetune-from-model "$BART/model.pt"); fi
  notes=$(mktemp)  # your fairseq arguments are checked before the run folder is made
  settings=$(fairseq-hier-settings "$ARCH" --stage train --examples "$(wc -l < "$WORK/raw/train.tgt")" \
               ${GPUS:+--gpus "$GPUS"} -- "$@" 2>"$notes") || { cat "$notes" >&2; rm -f "$notes"; exit 1; }
  mkdir -p "$DIR"
  tee -a "$DIR/settings.log" < "$notes" >&2
  rm -f "$notes"
  mapfile -t args <<< "$settings"
  fairseq-hier-record run "$DIR" --name "$RUN" --arch "$ARCH" --task "$TASK" --metric rouge > /dev/null
  fairseq-train "$BIN" --user-dir "$ROOT/fairseq_hier" "${init[@]}" "${args[@]}" \
    --save-dir "$DIR" --log-format simple --log-interval "${LOG_INTERVAL:-100}" \
    2>&1 | tee -a "$DIR/train.log"
  touch "$DIR/done"
}

decode() {
  local ckpt=${CHECKPOINT:-$DIR/checkpoint_best.pt} settings gen=() bpe=(--post-process sentencepiece) refs=()
  [[ -f "$ckpt" ]] || { say "$ckpt not found: run.sh train $ARCH first"; exit 1; }
  settings=$(fairseq-hier-settings "$ARCH" --stage generate \
               --targets "$WORK/$KIND/bpe/train.$TGT" -- "$@")  # your arguments checked here
  mapfile -t gen <<< "$settings"
  [[ "$KIND" == gpt2 ]] && bpe=(--bpe gpt2 --gpt2-encoder-json "$(bpe_files)/encoder.json"
                                --gpt2-vocab-bpe "$(bpe_files)/vocab.bpe")
  [[ -f "$WORK/raw/$SUBSET.refs.jsonl" ]] && refs=(--multi-references "$WORK/raw/$SUBSET.refs.jsonl")
  fairseq-hier-decode "$DIR" --data "$BIN" --references "$WORK/raw/$SUBSET.tgt" "${refs[@]}" \
    --checkpoint "$ckpt" --subset "$SUBSET" --task "$TASK" --generation="${gen[*]}" \
    --batch-size "${BATCH:-16}" -- --source-lang "$SRC" --target-lang "$TGT" "${bpe[@]}"
}

case "$STAGE" in
  prepare-mt)
    [[ $# -eq 2 ]] || fail "prepare-mt takes SRC TGT, got $# argument(s)"
    : "${DATA:?set DATA to the folder of train.jsonl, valid.jsonl, test.jsonl}"
    mkdir -p "$WORK/mt/raw"
    for split in "${SPLITS[@]}"; do
      file="$DATA/$split.jsonl"
      [[ "$split" == valid && ! -f "$file" ]] && file="$DATA/val.jsonl"
      [[ -f "$WORK/mt/raw/$split.docids" ]] || fairseq-hier-doc extract --format jsonl \
        --src-lang "$1" --tgt-lang "$2" --output-prefix "$WORK/mt/raw/$split" --file "$file"
    done
    bash "$COMMON/doc_mt_prepare.sh" "$WORK/mt" "$@" ;;
  train-mt)
    [[ $# -ge 3 ]] || fail "train-mt takes SRC TGT hat|plain, got $# argument(s)"
    bash "$COMMON/doc_mt_train.sh" "$WORK/mt" "$@" ;;
  decode-mt)  # each system's document BLEU in its run folder, then the systems side by side
    [[ $# -ge 2 ]] || fail "decode-mt takes SRC TGT, got $# argument(s)"
    bash "$COMMON/doc_mt_decode.sh" "$WORK/mt" "$@" ;;
  report-mt)
    if [[ $# -eq 0 ]]; then set -- "$WORK"/mt/runs/*/; fi
    fairseq-hier-report "$@" --subset "$SUBSET" --output-dir "$WORK/mt/report" ;;
  prepare)
    [[ $# -eq 1 ]] || fail "prepare takes one ARCH, got $# argument(s)"
    arch_facts "$1"
    prepare ;;
  train|decode)
    [[ $# -ge 1 ]] || fail "$STAGE takes ARCH"
    arch_facts "$1"; shift
    "$STAGE" "$@" ;;
  score)
    [[ $# -eq 1 ]] || fail "score takes ARCH"
    arch_facts "$1"
    fairseq-hier-score "$DIR" --subset "$SUBSET" --protocol plain ;;
  report)
    if [[ $# -eq 0 ]]; then set -- "$WORK"/runs/*/; fi
    fairseq-hier-report "$@" --subset "$SUBSET" --output-dir "$WORK/report" ;;
esac
