#!/usr/bin/env bash
# The last step of `make demo`: one report page of every system the demo ran
# (fairseq-hier-report: scores with paired-bootstrap significance against the flat transformer,
# the efficiency table, training and validation curves, paragraph-attention heatmaps), written to
# $WORK/report/report.{html,md}. Run folders, each read as it is (its test.hyp against its own
# test.ref: no --reference): the trained models (checkpoints/ARCH, from run_demo.sh), the three
# baselines (baselines/NAME, completed here from run_demo.sh's outputs), and PHT's decoding
# strategies of the attention-alignment demo when it ran (alignment/NAME, from
# examples/attention_alignment/run_demo.sh). `make report-check` then opens it in headless
# Chromium.
# Environment: WORK (demo_work), ARCHS ("transformer pht vht liu_ht").
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
VENV=${VIRTUAL_ENV:-${CONDA_PREFIX:-$ROOT/.venv}}
export PATH="$VENV/bin:$PATH"
WORK=${WORK:-$ROOT/demo_work}
ARCHS=${ARCHS:-transformer pht vht liu_ht}
[[ -f "$WORK/raw/test.tgt" ]] || { echo "report.sh: $WORK/raw/test.tgt not found: run examples/demo/run_demo.sh first" >&2; exit 1; }

RUNS=()
for ARCH in $ARCHS; do
  [[ -f "$WORK/checkpoints/$ARCH/test.hyp" ]] && RUNS+=("$WORK/checkpoints/$ARCH")
done
# the baselines have no training run: a run folder each, baselines/NAME, with run.json, test.hyp,
# the references (test.ref) and ROUGE-1.5.5's report (test.rouge.txt)
for PAIR in lead=Lead frequent=most-frequent first=first-stated; do
  FILE=${PAIR%%=*} NAME=${PAIR#*=}
  [[ -f "$WORK/$FILE.hyp" ]] || continue
  RUN="$WORK/baselines/$NAME"
  fairseq-hier-run-json "$RUN" --name "$NAME" --arch "$FILE" \
    --task hierarchical_summarization --metric rouge > /dev/null
  cp "$WORK/$FILE.hyp" "$RUN/test.hyp"
  cp "$WORK/raw/test.tgt" "$RUN/test.ref"
  fairseq-hier-rouge "$RUN/test.ref" "$RUN/test.hyp" -zs --saveto "$RUN/test.rouge.txt" > /dev/null
  RUNS+=("$RUN")
done
for NAME in strcov extprob attalign attalign_live attalign_top5; do
  [[ -f "$WORK/alignment/$NAME/test.hyp" ]] && RUNS+=("$WORK/alignment/$NAME")
done
echo "== report: ${#RUNS[@]} systems, significance against ${ARCHS%% *}"
fairseq-hier-report "${RUNS[@]}" --title "fairseq-hier demo" --baseline "${ARCHS%% *}" \
  --output-dir "$WORK/report"
