#!/usr/bin/env bash
# Document translation, step 2: train the HAT Transformer (hat) or the plain fairseq Transformer
# baseline (plain) from scratch on the same chunks (004 Sec. 4.2: "All models are initialized
# randomly with the same training setup"): Adam (0.9, 0.98) eps 1e-6, label-smoothed cross
# entropy, linear warmup to LR then linear decay to 0 (polynomial_decay, power 1), shared joint
# embeddings, mixed precision on GPUs. A relaunch resumes from checkpoint_last.
#
# usage: train.sh WORK SRC TGT hat|plain [extra fairseq-train args]
# env (the dataset's recipe sets the paper's values): HAT_ARCH PLAIN_ARCH UPDATES WARMUP LR
#      MAX_TOKENS UPDATE_FREQ (per GPU; default PAPER_GPUS x PAPER_UPDATE_FREQ / GPUs, so the
#      paper's effective batch holds on any number of GPUs) DROPOUT SMOOTHING WEIGHT_DECAY
#      PRECISION (--fp16 on a GPU, empty on CPU) MAX_CHUNK (512)
set -euo pipefail
[[ $# -ge 4 ]] || { echo "usage: $0 WORK SRC TGT hat|plain [fairseq-train args...]" >&2; exit 2; }
WORK=$1; SRC=$2; TGT=$3; KIND=$4; shift 4
case "$KIND" in hat) ARCH=$HAT_ARCH;; plain) ARCH=$PLAIN_ARCH;;
  *) echo "train.sh: the model kind must be hat or plain, got '$KIND'" >&2; exit 2;; esac
SAVE="$WORK/checkpoints/$KIND"
if [[ -f "$SAVE/done" ]]; then echo "train.sh: $SAVE/done exists, skipping"; exit 0; fi
USER_DIR=$(python -c 'import fairseq_hier, os; print(os.path.dirname(fairseq_hier.__file__))')
GPUS=$(python -c 'import torch; print(max(1, torch.cuda.device_count()))')
UPDATE_FREQ=${UPDATE_FREQ:-$(( (PAPER_GPUS * PAPER_UPDATE_FREQ + GPUS - 1) / GPUS ))}
if [[ -z "${PRECISION+x}" ]]; then
  PRECISION=$(python -c 'import torch; print("--fp16" if torch.cuda.is_available() else "")')
fi
echo "train.sh: $ARCH, $GPUS device(s) x $MAX_TOKENS tokens x update-freq $UPDATE_FREQ," \
  "$UPDATES updates (the paper: $PAPER_GPUS GPUs x $PAPER_UPDATE_FREQ)"
mkdir -p "$SAVE"
t0=$SECONDS
# shellcheck disable=SC2086  # PRECISION is empty or one flag
fairseq-train "$WORK/data-bin" --user-dir "$USER_DIR" --task document_translation \
  --source-lang "$SRC" --target-lang "$TGT" --max-chunk-tokens "${MAX_CHUNK:-512}" \
  --arch "$ARCH" --share-all-embeddings --dropout "$DROPOUT" \
  --criterion label_smoothed_cross_entropy --label-smoothing "$SMOOTHING" \
  --optimizer adam --adam-betas "(0.9, 0.98)" --adam-eps 1e-06 --weight-decay "$WEIGHT_DECAY" \
  --lr-scheduler polynomial_decay --lr "$LR" --end-learning-rate 0 --power 1 \
  --warmup-updates "$WARMUP" --total-num-update "$UPDATES" --max-update "$UPDATES" \
  --max-tokens "$MAX_TOKENS" --update-freq "$UPDATE_FREQ" --save-dir "$SAVE" \
  --no-epoch-checkpoints --log-format simple --log-interval "${LOG_INTERVAL:-100}" \
  $PRECISION "$@" 2>&1 | tee -a "$SAVE/train.log"
echo "train.sh: $KIND trained in $((SECONDS - t0)) s"
touch "$SAVE/done"
