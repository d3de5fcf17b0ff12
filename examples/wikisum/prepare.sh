#!/usr/bin/env bash
# Step 1-2: ranked WikiSum .pt shards -> raw text (title <P> paragraphs) -> fairseq data-bin.
# usage: prepare.sh DATA_PREFIX SPM_MODEL WORK_DIR
#   DATA_PREFIX  e.g. /data/ranked_abs3_fast_b40/WIKI (shards WIKI.{train,valid,test}.N.pt)
#   SPM_MODEL    hiersumm's spm9998_3.model (comes with the data)
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 DATA_PREFIX SPM_MODEL WORK_DIR" >&2; exit 2; }
PREFIX=$1; SPM=$2; WORK=$3
WORKERS=${WORKERS:-$(nproc)}
mkdir -p "$WORK"
if [[ ! -f "$WORK/raw/test.ref" ]]; then
  python -m fairseq_hier.cli.wikisum_to_raw --data-prefix "$PREFIX" --spm "$SPM" --out-dir "$WORK/raw"
fi
if [[ ! -f "$WORK/data-bin/dict.src.txt" ]]; then
  # the sentencepiece vocabulary is the dictionary (shared by source and target)
  fairseq-preprocess --source-lang src --target-lang tgt --trainpref "$WORK/raw/train" \
    --validpref "$WORK/raw/valid" --testpref "$WORK/raw/test" --destdir "$WORK/data-bin" \
    --srcdict "$WORK/raw/dict.txt" --joined-dictionary --workers "$WORKERS"
fi
# how raw text becomes these lines, for fairseq-hier-summarize: title first, a document's lines
# as paragraphs, lowercased (the published pieces are lowercase), the published sentencepiece
# model; paragraphs stay in input order (the published data was ranked by Liu & Lapata's ranker,
# which is not released: add --option rank=ranker with a fairseq-hier ranker's checkpoint)
if [[ ! -f "$WORK/data-bin/hier_preprocess.json" ]]; then
  # shellcheck source=generation.sh
  source "$(dirname "$0")/generation.sh"
  fairseq-hier-record "$WORK/data-bin" --task hierarchical_summarization --pipeline paragraphs \
    --option lowercase=true --option subword=sentencepiece --option post_process=sentencepiece \
    --asset spm.model="$SPM" --generation "${GENERATION[*]}"
fi
