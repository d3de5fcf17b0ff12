#!/usr/bin/env bash
# Side-by-side table of the systems scored in WORK_DIR/decode_*/rouge.txt: official ROUGE-1.5.5 F1
# x100 with ROUGE-1.5.5's own 95% bootstrap interval, then, right of the '|', Google's rouge-score
# F1 x100 (rouge1/2/L/Lsum, from the --also-rouge-score block of rouge.txt; '-' when the file has
# none): a different scorer, not comparable with ROUGE-1.5.5.
# usage: table.sh WORK_DIR [SYSTEM ...]   (default: every WORK_DIR/decode_*)
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 WORK_DIR [SYSTEM ...]" >&2; exit 2; }
WORK=$1; shift
if [[ $# -eq 0 ]]; then
  set -- $(cd "$WORK" && ls -d decode_* | sed 's/^decode_//')
fi
FORMAT="%-16s %-24s %-24s %-24s | %-7s %-7s %-7s %-9s\n"
printf "%-16s %-74s | %s\n" "" "ROUGE-1.5.5 (official)" "rouge-score (Google; not comparable)"
printf "$FORMAT" system "ROUGE-1 F [95% CI]" "ROUGE-2 F [95% CI]" "ROUGE-L F [95% CI]" \
  rouge1 rouge2 rougeL rougeLsum
for S in "$@"; do
  F="$WORK/decode_$S/rouge.txt"
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
