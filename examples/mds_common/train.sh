#!/usr/bin/env bash
# ParsingSum recipes, step 6 (shared by examples/multi_news and examples/wcep): train one of the
# four systems of 003 Tables 2-3 on $WORK/data-bin, all with 003 Sec. 3.2's optimisation: Adam
# (0.9, 0.998), dropout 0.1, lr 1e-3 reached by 8000 linear warm-up updates, then a multi-step
# reduction (fairseq's step scheduler: x0.5 every DECAY_PERIOD updates; the period is OUR
# choice, the paper gives none). Label smoothing: none for the flat systems (OpenNMT trains a
# copy model with its copy loss, which ignores -label_smoothing), 0.1 for the hierarchical ones
# (Liu & Lapata's code). These values and the batches, updates and decay periods below are the
# table's (fairseq_hier/recipes/architectures.py): transformer_copy's row (FT) for the flat
# systems, parsingsum_ht's (HT) for the hierarchical ones (fairseq-hier-settings ROW --stage
# paper-train and --stage batch).
#   parsingsum_ft  flat, 4+4 layers, d 512, FFN 2048, 8 heads, copy attention, alpha 2 (arch
#                  defaults); 20,000 updates of 4096 tokens (003 footnote 3); decay every 4000
#   transformer    transformer_copy, the FT baseline: Fabbri et al.'s OpenNMT Transformer with
#                  copy attention, parsingsum_ft without LGA (arch defaults); FT's schedule
#   parsingsum_ht  liu_ht with 6 local + 2 global layers, 8 heads, alpha 3 (arch defaults);
#                  100,000 updates of 13,000 tokens (003 footnote 2); decay every 20,000
#   liu_ht         the HT baseline: --encoder-layers 8 --global-layers 6,7, 8 heads; HT's schedule
# The flat systems read the documents concatenated and cut to FLAT_POSITIONS pieces, EOS
# included (Fabbri's -src_seq_length_trunc 500; documents are not cut one by one); the
# hierarchical ones MAX_PARAGRAPHS documents of MAX_PARAGRAPH_TOKENS pieces each.
#
# usage: WORK=DIR train.sh SYSTEM [extra fairseq-train args, e.g. --lga-alpha 1]
# env: WORK; MAX_PARAGRAPHS MAX_PARAGRAPH_TOKENS FLAT_POSITIONS SETTINGS_DATASET (the table's data
#      set: multi_news, wcep; set by the dataset's run.sh);
#      RUN (SYSTEM: the run's name; its folder $WORK/checkpoints/$RUN holds the checkpoints,
#      train.log (fairseq-train's output, appended), run.json and decode.sh's outputs); MAX_TOKENS
#      (the paper's per update on its one GPU) and PAPER_UPDATE_FREQ (1), the table's: kept on this machine's
#      GPUS (default: those torch sees) by fairseq-hier-settings --stage batch, the per-GPU
#      tokens shrinking to no less than one example at the cut; UPDATE_FREQ: yours instead;
#      MAX_UPDATE, DECAY_PERIOD (the system's values above);
#      SAVE_INTERVAL (2000 flat, 5000 hierarchical); PRECISION (empty: fp32 as the paper; e.g.
#      --bf16)
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: WORK=DIR $0 SYSTEM [fairseq-train args...]" >&2; exit 2; }
SYSTEM=$1; shift
: "${WORK:?set WORK to the output folder of the recipe}"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RUN=${RUN:-$SYSTEM}
SAVE="$WORK/checkpoints/$RUN"
if [[ -f "$SAVE/done" ]]; then echo "train.sh: $SAVE/done exists, skipping"; exit 0; fi

HIER=(--max-paragraphs "${MAX_PARAGRAPHS:-10}" --max-paragraph-tokens "${MAX_PARAGRAPH_TOKENS:-160}")
FLAT=(--max-paragraphs "${MAX_PARAGRAPHS:-10}" --max-paragraph-tokens "${FLAT_POSITIONS:-500}"
      --max-source-positions "${FLAT_POSITIONS:-500}")
case "$SYSTEM" in  # the table's row of the paper's settings: FT's (flat), HT's (hierarchical)
  parsingsum_ft) ARCH=(--arch parsingsum_ft --dependency-parse spacy "${FLAT[@]}"); KIND=flat
                 ROW=transformer_copy ;;
  transformer)   ARCH=(--arch transformer_copy "${FLAT[@]}"); KIND=flat; ROW=transformer_copy ;;
  parsingsum_ht) ARCH=(--arch parsingsum_ht --dependency-parse spacy "${HIER[@]}"); KIND=hier
                 ROW=parsingsum_ht ;;
  liu_ht)        ARCH=(--arch liu_ht --encoder-layers 8 --global-layers 6,7
                       --encoder-attention-heads 8 --global-heads 8 "${HIER[@]}"); KIND=hier
                 ROW=parsingsum_ht ;;
  *) echo "train.sh: unknown SYSTEM $SYSTEM (parsingsum_ft, transformer, parsingsum_ht, liu_ht)" >&2
     exit 2 ;;
esac
if [[ "$KIND" == flat ]]; then SAVE_INTERVAL=${SAVE_INTERVAL:-2000}
else SAVE_INTERVAL=${SAVE_INTERVAL:-5000}
fi
PRECISION_FLAGS=()
[[ -n "${PRECISION:-}" ]] && PRECISION_FLAGS=("$PRECISION")

mkdir -p "$SAVE"
# one example: the concatenation's positions (flat), the paragraph grid (hierarchical)
SMALLEST=${FLAT_POSITIONS:-500}
[[ "$KIND" == hier ]] && SMALLEST=$(( ${MAX_PARAGRAPHS:-10} * ${MAX_PARAGRAPH_TOKENS:-160} ))
# $(...), not mapfile < <(...): a refused setting stops the recipe here
SETTINGS=("$ROW" --dataset "${SETTINGS_DATASET:-multi_news}")  # the table's row and data set
BATCHING_TEXT=$(fairseq-hier-settings "${SETTINGS[@]}" --stage batch ${MAX_TOKENS:+--max-tokens "$MAX_TOKENS"} \
  ${PAPER_UPDATE_FREQ:+--paper-update-freq "$PAPER_UPDATE_FREQ"} --smallest "$SMALLEST" \
  ${UPDATE_FREQ:+--update-freq "$UPDATE_FREQ"} ${GPUS:+--gpus "$GPUS"} --log "$SAVE/train.log")
mapfile -t BATCHING <<< "$BATCHING_TEXT"
OPTIMISATION_TEXT=$(fairseq-hier-settings "${SETTINGS[@]}" --stage paper-train -- \
  ${MAX_UPDATE:+--max-update "$MAX_UPDATE"} ${DECAY_PERIOD:+--lr-deacy-period "$DECAY_PERIOD"})
mapfile -t OPTIMISATION <<< "$OPTIMISATION_TEXT"

fairseq-hier-run-json "$SAVE" --name "$RUN" --arch "$SYSTEM" \
  --task hierarchical_summarization --metric rouge > /dev/null
# OPTIMISATION: dropout, Adam, the step schedule (fairseq spells its period --lr-deacy-period),
# the criterion and --max-update
fairseq-train "$WORK/data-bin" --user-dir "$ROOT/fairseq_hier" --task hierarchical_summarization \
  "${ARCH[@]}" "${OPTIMISATION[@]}" "${BATCHING[@]}" \
  --save-dir "$SAVE" --save-interval-updates "$SAVE_INTERVAL" \
  --validate-interval-updates "$SAVE_INTERVAL" --keep-interval-updates 2 --no-epoch-checkpoints \
  --skip-invalid-size-inputs-valid-test --log-format simple --log-interval 100 \
  "${PRECISION_FLAGS[@]}" "$@" 2>&1 | tee -a "$SAVE/train.log"
touch "$SAVE/done"
