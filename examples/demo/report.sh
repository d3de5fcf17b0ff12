#!/usr/bin/env bash
# The last step of `make demo`: one report page of every system the demo ran
# (fairseq-hier-report: scores with paired-bootstrap significance against the flat transformer,
# the efficiency table, training and validation curves, paragraph-attention heatmaps), written to
# $WORK/report/report.{html,md}. Run directories: the trained models (checkpoints/ARCH, from
# run_demo.sh), the three baselines, and PHT's decoding strategies of the attention-alignment demo
# when it ran (alignment/NAME.hyp). `make report-check` then opens it in headless Chromium.
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
# systems without a training run of their own: a folder holding test.hyp (and run.json)
runs_of_outputs() {  # FOLDER NAME=HYP ...
  local folder=$1; shift
  for pair in "$@"; do
    local name=${pair%%=*} hyp=${pair#*=}
    [[ -f "$hyp" ]] || continue
    mkdir -p "$WORK/$folder/$name"
    cp "$hyp" "$WORK/$folder/$name/test.hyp"
    printf '{"name": "%s"}\n' "$name" > "$WORK/$folder/$name/run.json"
    RUNS+=("$WORK/$folder/$name")
  done
}
runs_of_outputs baselines Lead="$WORK/lead.hyp" most-frequent="$WORK/frequent.hyp" \
  first-stated="$WORK/first.hyp"
A="$WORK/alignment"
runs_of_outputs alignment_runs "pht+strCov=$A/strcov.hyp" "pht+extProb=$A/extprob.hyp" \
  "pht+attAlign=$A/attalign.hyp" "pht+attAlign,live=$A/attalign_live.hyp" \
  "pht+attAlign,top-5=$A/attalign_top5.hyp"
echo "== report: ${#RUNS[@]} systems, significance against ${ARCHS%% *}"
fairseq-hier-report "${RUNS[@]}" --reference "$WORK/raw/test.tgt" --title "fairseq-hier demo" \
  --baseline "${ARCHS%% *}" --output-dir "$WORK/report"
