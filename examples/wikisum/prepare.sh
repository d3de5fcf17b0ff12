#!/usr/bin/env bash
# Step 1-2: ranked WikiSum .pt shards -> raw text (title <P> paragraphs) -> fairseq data-bin.
# usage: prepare.sh DATA_PREFIX SPM_MODEL WORK_DIR
#   DATA_PREFIX  e.g. /data/ranked_abs3_fast_b40/WIKI (shards WIKI.{train,valid,test}.N.pt)
#   SPM_MODEL    hiersumm's spm9998_3.model (comes with the data)
# env TITLE_PLACEMENT: first (default: WORK_DIR/raw, WORK_DIR/data-bin; the title once, before
#   the paragraphs, as 000 reads it: PHT, VHT, FT) or every (WORK_DIR/raw-every,
#   WORK_DIR/data-bin-every; 'title <T>' in front of every paragraph as the shards hold it, which
#   liu_ht's local layers read, each paragraph alone)
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 DATA_PREFIX SPM_MODEL WORK_DIR" >&2; exit 2; }
PREFIX=$1; SPM=$2; WORK=$3
WORKERS=${WORKERS:-$(nproc)}
case "${TITLE_PLACEMENT:=first}" in
  first) LAYOUT= ;;
  every) LAYOUT=-every ;;
  *) echo "prepare.sh: error: TITLE_PLACEMENT must be first or every, not '$TITLE_PLACEMENT'" >&2; exit 2 ;;
esac
RAW="$WORK/raw$LAYOUT"; BIN="$WORK/data-bin$LAYOUT"
mkdir -p "$WORK"
if [[ ! -f "$RAW/test.ref" ]]; then
  python -m fairseq_hier.cli.wikisum_to_raw --data-prefix "$PREFIX" --spm "$SPM" --out-dir "$RAW" \
    --title-placement "$TITLE_PLACEMENT"
fi
if [[ ! -f "$BIN/dict.src.txt" ]]; then
  # the sentencepiece vocabulary is the dictionary (shared by source and target)
  fairseq-preprocess --source-lang src --target-lang tgt --trainpref "$RAW/train" \
    --validpref "$RAW/valid" --testpref "$RAW/test" --destdir "$BIN" \
    --srcdict "$RAW/dict.txt" --joined-dictionary --workers "$WORKERS"
fi
# how raw text becomes these lines, for fairseq-hier-summarize: the title as TITLE_PLACEMENT puts
# it (once first, or 'title <T>' before every paragraph), a document's lines
# as paragraphs, lowercased (the published pieces are lowercase), the published sentencepiece
# model; paragraphs stay in input order (the published data was ranked by Liu & Lapata's ranker,
# which is not released: add --option rank=ranker with a fairseq-hier ranker's checkpoint);
# the decoding rules of each architecture (generation.sh)
if [[ ! -f "$BIN/hier_preprocess.json" ]]; then
  # shellcheck source=generation.sh
  source "$(dirname "$0")/generation.sh"
  fairseq-hier-record "$BIN" --task hierarchical_summarization --pipeline paragraphs \
    --option lowercase=true --option subword=sentencepiece --option post_process=sentencepiece \
    --option title_placement="$TITLE_PLACEMENT" \
    --asset spm.model="$SPM" --generation "${GENERATION[*]}" \
    --generation-for liu_ht="${LIU_GENERATION[*]}" --generation-for transformer="${FT_GENERATION[*]}"
fi
