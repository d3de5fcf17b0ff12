#!/usr/bin/env bash
# Side-by-side table of the runs scored in WORK_DIR/checkpoints/RUN/SUBSET.rouge.txt (decode.sh,
# baselines.sh): official ROUGE-1.5.5 F1 x100 with ROUGE-1.5.5's own 95% bootstrap interval,
# then, right of the '|', Google's rouge-score F1 x100 (rouge1/2/L/Lsum, from the
# --also-rouge-score block of the report; '-' when the file has none): a different scorer, not
# comparable with ROUGE-1.5.5.
# usage: table.sh WORK_DIR [RUN ...]   (default: every run folder of WORK_DIR/checkpoints with a
#        SUBSET.rouge.txt); env SUBSET (test)
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 WORK_DIR [RUN ...]" >&2; exit 2; }
WORK=$1; shift
SUBSET=${SUBSET:-test}
if [[ $# -eq 0 ]]; then
  for F in "$WORK"/checkpoints/*/"$SUBSET.rouge.txt"; do
    if [[ -f "$F" ]]; then set -- "$@" "$(basename "$(dirname "$F")")"; fi
  done
  [[ $# -gt 0 ]] || { echo "table.sh: error: no $WORK/checkpoints/*/$SUBSET.rouge.txt (run decode.sh first)" >&2; exit 1; }
fi
FORMAT="%-16s %-24s %-24s %-24s | %-7s %-7s %-7s %-9s\n"
printf "%-16s %-74s | %s\n" "" "ROUGE-1.5.5 (official)" "rouge-score (Google; not comparable)"
printf "$FORMAT" system "ROUGE-1 F [95% CI]" "ROUGE-2 F [95% CI]" "ROUGE-L F [95% CI]" \
  rouge1 rouge2 rougeL rougeLsum
for S in "$@"; do
  F="$WORK/checkpoints/$S/$SUBSET.rouge.txt"
  [[ -f "$F" ]] || { echo "table.sh: error: $F not found (score $S first)" >&2; exit 1; }
  awk -v s="$S" -v fmt="$FORMAT" '
    / ROUGE-[12L] Average_F:/ { gsub(/[()]/, ""); v[$2] = sprintf("%5.2f [%5.2f, %5.2f]", 100*$4, 100*$6, 100*$8) }
    /^rouge-score rouge[^ ]* F1: / { r[$2] = sprintf("%5.2f", 100*$4) }
    END {
      split("rouge1 rouge2 rougeL rougeLsum", k, " ")
      for (i = 1; i <= 4; i++) if (!(k[i] in r)) r[k[i]] = "-"
      printf fmt, s, v["ROUGE-1"], v["ROUGE-2"], v["ROUGE-L"], r["rouge1"], r["rouge2"], r["rougeL"], r["rougeLsum"]
    }' "$F"
done
