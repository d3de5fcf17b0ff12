#!/usr/bin/env bash
# Step 3: train PHT with the papers' settings (000 Sec. 4.2, 001 Sec. 5.2): 3+3 layers, d=256,
# FFN 1024, 4 heads, dropout 0.3, top 30 paragraphs x 100 tokens, Adam (0.9, 0.98, 1e-9) with the
# Noam schedule and 16,000 warm-up steps (Noam's peak lr d^-0.5 * warmup^-0.5 = 4.94e-4 with
# fairseq's inverse_sqrt), ~600k updates, a checkpoint every 20k updates; batch 16, the authors'
# (not in 000/001: yema2018/wiki_sum's README and main.py default). The optimiser, schedule,
# updates and batch come from the table of architectures (fairseq-hier-settings pht --stage
# paper-train; fairseq_hier/recipes/architectures.py). The batch of 16 examples per update holds
# on any number of GPUs (GPUS: default those torch sees): --stage batch gives each GPU its share.
# usage: train_pht.sh DATA_BIN RUN_DIR [extra fairseq-train args, e.g. --arch vht]
#   RUN_DIR (fairseq-train's --save-dir), e.g. work/wikisum/checkpoints/pht: checkpoints, train.log
#   (fairseq-train's output, appended) and run.json; decode.sh adds the decoded test set
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 DATA_BIN RUN_DIR [fairseq-train args...]" >&2; exit 2; }
DATA=$1; SAVE=$2; shift 2
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
ARCH=pht  # the last --arch of the extra arguments wins, as in fairseq-train
PREVIOUS=
for ARG in "$@"; do
  [[ "$PREVIOUS" == --arch ]] && ARCH=$ARG
  [[ "$ARG" == --arch=* ]] && ARCH=${ARG#--arch=}
  PREVIOUS=$ARG
done
source "$(dirname "$0")/paper_settings.sh"
paper_settings pht "$ARCH" "$SAVE"
fairseq-train "$DATA" --user-dir "$USER_DIR" --task hierarchical_summarization \
  --max-paragraphs 30 --max-paragraph-tokens 100 --arch pht \
  "${OPTIMISATION[@]}" "${BATCHING[@]}" --save-dir "$SAVE" \
  --save-interval-updates 20000 --validate-interval-updates 20000 --keep-interval-updates 5 \
  --skip-invalid-size-inputs-valid-test "$@" 2>&1 | tee -a "$SAVE/train.log"
