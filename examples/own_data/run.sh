#!/usr/bin/env bash
# Your own data, JSON lines -> a report: one command per stage, for every summarisation
# architecture (examples/own_data/README.md says what each stage writes and how it chooses).
#
# usage: DATA=DIR WORK=DIR run.sh prepare ARCH
#                          run.sh train ARCH [fairseq-train args: each replaces the setting]
#                          run.sh decode ARCH [fairseq-generate args]
#                          run.sh score ARCH
#                          run.sh report [RUN ...]
#        document translation, any pair (documents {"id"?, "src": [...], "tgt": [...]}):
#                          run.sh prepare-mt SRC TGT
#                          run.sh train-mt SRC TGT hat|plain [fairseq-train args]
#                          run.sh decode-mt SRC TGT [fairseq-generate args] (and document BLEU)
#                          run.sh report-mt
#   ARCH: transformer pht vht liu_ht parsingsum_ft parsingsum_ht hat_bart_base hat_bart_large
#         long_bart_base long_bart_large
# env: DATA      the folder of train.jsonl, valid.jsonl (or val.jsonl), test.jsonl (the schema:
#                docs/data-formats.md, "Your own data")
#      WORK      the output folder (WORK/runs/RUN: one folder per trained system)
#      RUN       the run's name (default ARCH)
#      PARAGRAPHS documents (default) | blocks | lines: what becomes a paragraph
#      RANK      none (default: paragraphs in input order) | tfidf (by tf-idf similarity to the
#                title, else to the example's paragraphs) | ranker (RANKER=checkpoint of a
#                fairseq-hier paragraph ranker trained on the same raw tokens, RANKER_DICT=its
#                data-bin's dict.src.txt)
#      VOCAB     sentencepiece pieces (32000)
#      BART      BART_DIR for hat_bart_* / long_bart_*: fairseq's (model.pt, dict.txt,
#                encoder.json, vocab.bpe) or a Hugging Face directory; nothing is downloaded
#      GPUS      GPUs of one run (default: those torch sees); the effective batch stays the paper's
#      SUBSET    the decoded split (test)
#      WORKERS   processes of the preparation steps (nproc)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
STAGES="prepare train decode score report prepare-mt train-mt decode-mt report-mt"
say() { echo "run.sh: $*" >&2; }
fail() { say "$*"; exit 2; }
if [[ $# -eq 0 ]]; then sed -n '4,14p' "$0" >&2; exit 2; fi  # the usage
STAGE=$1; shift
[[ " $STAGES " == *" $STAGE "* ]] || fail "unknown stage '$STAGE' (one of: $STAGES)"
: "${WORK:?set WORK to the output folder}"
PARAGRAPHS=${PARAGRAPHS:-documents}; RANK=${RANK:-none}; VOCAB=${VOCAB:-32000}
SUBSET=${SUBSET:-test}; WORKERS=${WORKERS:-$(nproc)}
SPLITS=(train valid test)

# the variables, checked before any stage does work
[[ ! -e "$WORK" || -d "$WORK" ]] || fail "WORK=$WORK is a file (the output folder is expected)"
case "$PARAGRAPHS" in documents|blocks|lines) ;;
  *) fail "PARAGRAPHS must be documents, blocks or lines, got '$PARAGRAPHS'" ;; esac
case "$RANK" in none|tfidf|ranker) ;;
  *) fail "RANK must be none, tfidf or ranker, got '$RANK'" ;; esac
for var in VOCAB WORKERS ${GPUS:+GPUS}; do
  [[ "${!var}" =~ ^[1-9][0-9]*$ ]] || fail "$var must be a positive integer, got '${!var}'"
done

# the architecture's facts: TASK SUBWORD PARSE PRETRAINED SRC TGT PAPER; then what the stage
# needs of the variables for this architecture, before any work
arch_facts() {
  local facts
  ARCH=$1; RUN=${RUN:-$ARCH}; DIR="$WORK/runs/$RUN"
  facts=$(fairseq-hier-settings "$ARCH" --stage facts)  # an unknown ARCH stops here
  eval "$facts"
  if [[ "$SUBWORD" == gpt2 ]]; then KIND=gpt2
  elif [[ "$PARSE" == 1 ]]; then KIND=spacy_spm
  else KIND=spm; fi
  BIN="$WORK/$KIND/data-bin"
  if [[ "$STAGE" == prepare ]]; then
    if [[ "$RANK" != none && "$KIND" == spacy_spm ]]; then
      fail "RANK=$RANK: $ARCH reads spaCy's parse of the input order; rank the documents in the JSON lines instead"
    elif [[ "$RANK" != none && "$KIND" == gpt2 ]]; then
      fail "RANK=$RANK: $ARCH reads sentences, not ranked paragraphs"
    elif [[ "$RANK" == ranker ]]; then
      [[ -f "${RANKER:-}" ]] || fail "RANK=ranker: set RANKER to the ranker checkpoint (a file; got '${RANKER:-}')"
      [[ -f "${RANKER_DICT:-}" ]] || fail "RANK=ranker: set RANKER_DICT to dict.src.txt of the ranker data-bin (a file; got '${RANKER_DICT:-}')"
    fi
    [[ "$KIND" != gpt2 ]] || [[ -d "${BART:-}" ]] || \
      fail "set BART to the BART folder for $ARCH (fairseq model.pt + dict.txt, encoder.json, vocab.bpe, or Hugging Face; got '${BART:-}')"
    local split need_data=0
    [[ "$KIND" == gpt2 ]] && need_data=1  # its prepare step reads the JSON lines themselves
    for split in "${SPLITS[@]}"; do [[ -f "$WORK/raw/$split.tgt" ]] || need_data=1; done
    [[ "$need_data" == 0 || -d "${DATA:-}" ]] || \
      fail "set DATA to the folder of train.jsonl, valid.jsonl, test.jsonl (got '${DATA:-}')"
  fi
  if [[ "$STAGE" == train && -n "$PRETRAINED" ]]; then
    [[ -d "${BART:-}" ]] || fail "set BART to the $PRETRAINED folder for $ARCH (got '${BART:-}')"
  fi
}

# ---------------------------------------------------------------------------- prepare
raw() {  # 1. the schema -> WORK/raw/{split}.src/.tgt/.ids (+ .refs.jsonl)
  local missing=()
  for split in "${SPLITS[@]}"; do [[ -f "$WORK/raw/$split.tgt" ]] || missing+=("$split"); done
  if [[ ${#missing[@]} -gt 0 ]]; then
    : "${DATA:?set DATA to the folder of train.jsonl, valid.jsonl, test.jsonl}"
    fairseq-hier-jsonl-to-raw --input-dir "$DATA" --output-dir "$WORK/raw" \
      --splits "$(IFS=,; echo "${missing[*]}")" --paragraphs "$PARAGRAPHS"
  fi
}

rank() {  # rank one split's encoded sources, as the record's rank option redoes it on new text
  local pieces=$1 out=$2
  case "$RANK" in
    none) cp "$pieces" "$out.tmp" ;;
    tfidf) fairseq-hier-rank --method tfidf --source "$pieces" --output "$out.tmp" ;;
    ranker) fairseq-hier-rank --path "$RANKER" --data "$(dirname "$RANKER_DICT")" \
              --source "$pieces" --output "$out.tmp" ;;
  esac
  mv "$out.tmp" "$out"
}

record() {  # how raw documents become the binarized lines, for fairseq-hier-summarize: the
            # pipeline of KIND, and the decode step's options
  local options generation
  case "$KIND" in
    gpt2) options=(--pipeline sentence_bos --option format=jsonl
                   --option max_source_positions="${MAX_SOURCE:-3072}"
                   --asset encoder.json="$(bpe_files)/encoder.json"
                   --asset vocab.bpe="$(bpe_files)/vocab.bpe") ;;
    *) options=(--pipeline paragraphs --option title=true --option paragraphs="$PARAGRAPHS"
                --option rank="$RANK" --option subword=sentencepiece
                --option post_process=sentencepiece --asset spm.model="$WORK/$KIND/spm/spm.model")
       [[ "$KIND" == spacy_spm ]] && options+=(--option tokenizer=spacy)
       [[ "$RANK" == ranker ]] && options+=(--asset ranker.pt="$RANKER"
                                            --asset ranker.dict.txt="$RANKER_DICT") ;;
  esac
  generation=$(fairseq-hier-settings "$ARCH" --stage generate \
               --targets "$WORK/$KIND/bpe/train.$TGT" 2>/dev/null | tr '\n' ' ')
  fairseq-hier-record "$BIN" --task "$TASK" "${options[@]}" --generation "$generation"
}

bpe_files() {  # BART's fairseq files (derived from a Hugging Face BART by prepare_gpt2)
  if [[ -f "$BART/config.json" ]]; then echo "$WORK/gpt2/bart_files"; else echo "$BART"; fi
}

prepare_spm() {  # 2-4. sentencepiece on the raw text -> data-bin (pht, vht, liu_ht, transformer)
  local out="$WORK/spm"
  mkdir -p "$out/bpe" "$out/spm"
  [[ -f "$out/spm/spm.model" ]] || fairseq-hier-spm train --input "$WORK/raw/train.src" \
    "$WORK/raw/train.tgt" --model-prefix "$out/spm/spm" --vocab-size "$VOCAB" --threads "$WORKERS"
  mkdir -p "$out/pieces"
  for split in "${SPLITS[@]}"; do
    for side in src tgt; do
      [[ -f "$out/pieces/$split.$side" ]] || fairseq-hier-spm encode \
        --model "$out/spm/spm.model" --input "$WORK/raw/$split.$side" \
        --output "$out/pieces/$split.$side" --no-progress-bar
    done
    [[ -f "$out/bpe/$split.tgt" ]] || cp "$out/pieces/$split.tgt" "$out/bpe/$split.tgt"
    [[ -f "$out/bpe/$split.src" ]] || rank "$out/pieces/$split.src" "$out/bpe/$split.src"
  done
  binarize "$out"
}

prepare_spacy_spm() {  # 2-5. spaCy tokens and parse, sentencepiece, deps (parsingsum_*)
  local out="$WORK/spacy_spm"
  mkdir -p "$out/raw"
  for split in "${SPLITS[@]}"; do
    for side in src tgt; do
      [[ -f "$out/raw/$split.$side" ]] || cp "$WORK/raw/$split.$side" "$out/raw/"
    done
  done
  # examples/mds_common/prepare.sh skips its reader (raw/ is there)
  VOCAB=$VOCAB WORKERS=$WORKERS DATA=${DATA:-} WORK=$out \
    bash "$ROOT/examples/mds_common/prepare.sh" own_data
}

prepare_gpt2() {  # 2-3. BOS-marked GPT-2 BPE lines -> data-bin with BART's dictionary
  : "${DATA:?set DATA to the folder of train.jsonl, valid.jsonl, test.jsonl}"
  local valid="$DATA/valid.jsonl"
  [[ -f "$valid" ]] || valid="$DATA/val.jsonl"
  MAX_SOURCE=${MAX_SOURCE:-3072} WORKERS=$WORKERS bash "$ROOT/examples/hat_common/prepare.sh" \
    jsonl "$WORK/gpt2" "$BART" "$DATA/train.jsonl" "$valid" "$DATA/test.jsonl"
}

binarize() {
  local out=$1
  if [[ ! -f "$out/data-bin/dict.src.txt" ]]; then
    rm -rf "$out/data-bin.tmp"
    fairseq-preprocess --source-lang src --target-lang tgt --trainpref "$out/bpe/train" \
      --validpref "$out/bpe/valid" --testpref "$out/bpe/test" --destdir "$out/data-bin.tmp" \
      --joined-dictionary --workers "$WORKERS"
    mv "$out/data-bin.tmp" "$out/data-bin"
  fi
}

# ---------------------------------------------------------------------------- train
train() {
  local examples init=() args settings notes
  [[ -f "$DIR/done" ]] && { say "$DIR/done exists, skipping"; return; }
  [[ -f "$BIN/dict.$SRC.txt" ]] || { say "$BIN not found: run.sh prepare $ARCH first"; exit 1; }
  examples=$(wc -l < "$WORK/raw/train.tgt")
  if [[ -n "$PRETRAINED" ]]; then
    if [[ -f "$BART/config.json" ]]; then init=(--finetune-from-model "$BART")
    else init=(--finetune-from-model "$BART/model.pt"); fi
  fi
  # your fairseq arguments are checked before the run folder is made
  notes=$(mktemp)
  settings=$(fairseq-hier-settings "$ARCH" --stage train --examples "$examples" \
               ${GPUS:+--gpus "$GPUS"} -- "$@" 2>"$notes") || { cat "$notes" >&2; rm -f "$notes"; exit 1; }
  mkdir -p "$DIR"
  tee -a "$DIR/settings.log" < "$notes" >&2
  rm -f "$notes"
  mapfile -t args <<< "$settings"
  fairseq-hier-run-json "$DIR" --name "$RUN" --arch "$ARCH" --task "$TASK" --metric rouge \
    > /dev/null
  fairseq-train "$BIN" --user-dir "$ROOT/fairseq_hier" "${init[@]}" "${args[@]}" \
    --save-dir "$DIR" --log-format simple --log-interval "${LOG_INTERVAL:-100}" \
    2>&1 | tee -a "$DIR/train.log"
  touch "$DIR/done"
}

# ---------------------------------------------------------------------------- decode, score
decode() {
  local ckpt=${CHECKPOINT:-$DIR/checkpoint_best.pt} settings gen=() bpe=()
  [[ -f "$ckpt" ]] || { say "$ckpt not found: run.sh train $ARCH first"; exit 1; }
  settings=$(fairseq-hier-settings "$ARCH" --stage generate \
               --targets "$WORK/$KIND/bpe/train.$TGT" -- "$@")  # your arguments checked here
  mapfile -t gen <<< "$settings"
  if [[ "$KIND" == gpt2 ]]; then
    local files
    files=$(bpe_files)
    bpe=(--bpe gpt2 --gpt2-encoder-json "$files/encoder.json" --gpt2-vocab-bpe "$files/vocab.bpe")
  else
    bpe=(--post-process sentencepiece)
  fi
  if [[ ! -f "$DIR/generate-$SUBSET.txt" ]]; then
    fairseq-generate "$BIN" --user-dir "$ROOT/fairseq_hier" --task "$TASK" --source-lang "$SRC" \
      --target-lang "$TGT" --path "$ckpt" --gen-subset "$SUBSET" "${gen[@]}" "${bpe[@]}" \
      --batch-size "${BATCH:-16}" --required-batch-size-multiple 1 \
      > "$DIR/generate-$SUBSET.txt.tmp" 2>&1 || { rm -f "$DIR/generate-$SUBSET.txt.tmp"; exit 1; }
    mv "$DIR/generate-$SUBSET.txt.tmp" "$DIR/generate-$SUBSET.txt"
  fi
  local n lines=H
  n=$(wc -l < "$WORK/raw/$SUBSET.tgt")
  [[ "$KIND" == gpt2 ]] && lines=D
  fairseq-hier-hypotheses "$DIR/generate-$SUBSET.txt" --expected "$n" --lines "$lines" \
    -o "$DIR/$SUBSET.hyp"
  cp "$WORK/raw/$SUBSET.tgt" "$DIR/$SUBSET.ref"
  rm -f "$DIR/$SUBSET.refs.jsonl"
  [[ -f "$WORK/raw/$SUBSET.refs.jsonl" ]] && cp "$WORK/raw/$SUBSET.refs.jsonl" "$DIR/"
  say "$DIR/$SUBSET.hyp: $n summaries; references $DIR/$SUBSET.ref"
}

score() {
  local refs="$DIR/$SUBSET.ref"
  [[ -f "$DIR/$SUBSET.refs.jsonl" ]] && refs="$DIR/$SUBSET.refs.jsonl"
  [[ -f "$DIR/$SUBSET.hyp" ]] || { say "$DIR/$SUBSET.hyp not found: run.sh decode $ARCH first"; exit 1; }
  fairseq-hier-rouge "$refs" "$DIR/$SUBSET.hyp" -zs --saveto "$DIR/$SUBSET.rouge.txt" > /dev/null
  cat "$DIR/$SUBSET.rouge.txt"
}

# ---------------------------------------------------------------------------- document MT
# examples/doc_mt_common's steps in WORK/mt, every setting defaulted (its defaults.sh); the run
# folders are WORK/mt/checkpoints/{hat,plain}
prepare_mt() {
  local src=$1 tgt=$2 file
  : "${DATA:?set DATA to the folder of train.jsonl, valid.jsonl, test.jsonl}"
  mkdir -p "$WORK/mt/raw"
  for split in "${SPLITS[@]}"; do
    file="$DATA/$split.jsonl"
    [[ "$split" == valid && ! -f "$file" ]] && file="$DATA/val.jsonl"
    [[ -f "$WORK/mt/raw/$split.docids" ]] || fairseq-hier-doc-extract --format jsonl \
      --src-lang "$src" --tgt-lang "$tgt" --output "$WORK/mt/raw/$split" --file "$file"
  done
  bash "$ROOT/examples/doc_mt_common/prepare.sh" "$WORK/mt" "$src" "$tgt"
}

case "$STAGE" in
  prepare-mt)
    [[ $# -eq 2 ]] || fail "prepare-mt takes SRC TGT, got $# argument(s)"
    prepare_mt "$@" ;;
  train-mt)
    [[ $# -ge 3 ]] || fail "train-mt takes SRC TGT hat|plain, got $# argument(s)"
    bash "$ROOT/examples/doc_mt_common/train.sh" "$WORK/mt" "$@" ;;
  decode-mt)
    [[ $# -ge 2 ]] || fail "decode-mt takes SRC TGT, got $# argument(s)"
    bash "$ROOT/examples/doc_mt_common/decode.sh" "$WORK/mt" "$@" ;;
  report-mt)
    if [[ $# -eq 0 ]]; then set -- "$WORK"/mt/checkpoints/*/; fi
    fairseq-hier-report "$@" --subset "$SUBSET" --output-dir "$WORK/mt/report" ;;
  prepare)
    [[ $# -eq 1 ]] || fail "prepare takes one ARCH, got $# argument(s)"
    arch_facts "$1"
    raw
    "prepare_$KIND"
    record  # (re)written: the pipeline of this recipe and the decoding of its settings
    say "$BIN ready for $ARCH" ;;
  train|decode|score)
    [[ $# -ge 1 ]] || fail "$STAGE takes ARCH"
    arch_facts "$1"; shift
    "$STAGE" "$@" ;;
  report)
    if [[ $# -eq 0 ]]; then set -- "$WORK"/runs/*/; fi
    fairseq-hier-report "$@" --subset "$SUBSET" --output-dir "$WORK/report" ;;
esac
