#!/usr/bin/env bash
# The last step of `make demo` (docs/results.md): one report of every run folder the demo wrote, the
# baselines' completed here, in WORK/report. env: WORK (demo_work) ARCHS
set -euo pipefail
source "$(dirname "$0")/../common/env.sh"
WORK=${WORK:-$ROOT/demo_work}
ARCHS=${ARCHS:-transformer pht vht liu_ht}
[[ -f "$WORK/raw/test.tgt" ]] || { echo "report.sh: $WORK/raw/test.tgt not found: run examples/demo/run_demo.sh first" >&2; exit 1; }
RUNS=()
for ARCH in $ARCHS; do
  [[ -f "$WORK/runs/$ARCH/test.hyp" ]] && RUNS+=("$WORK/runs/$ARCH")
done
for PAIR in lead=Lead frequent=most-frequent first=first-stated; do
  FILE=${PAIR%%=*} NAME=${PAIR#*=} RUN="$WORK/runs/${PAIR#*=}"
  [[ -f "$WORK/$FILE.hyp" ]] || continue
  fairseq-hier-record run "$RUN" --name "$NAME" --arch "$FILE" \
    --task hierarchical_summarization --metric rouge > /dev/null
  cp "$WORK/$FILE.hyp" "$RUN/test.hyp.raw"
  fairseq-hier-score "$RUN" --protocol plain --references "$WORK/raw/test.tgt" > /dev/null
  RUNS+=("$RUN")
done
for NAME in strcov extprob attalign attalign_live attalign_top5; do
  [[ -f "$WORK/runs/pht_$NAME/test.hyp" ]] && RUNS+=("$WORK/runs/pht_$NAME")
done
echo "== report: ${#RUNS[@]} systems, significance against ${ARCHS%% *}"
fairseq-hier-report "${RUNS[@]}" --title "fairseq-hier demo" --baseline "${ARCHS%% *}" \
  --output-dir "$WORK/report"
