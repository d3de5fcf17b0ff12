#!/usr/bin/env bash
# Side-by-side table of the systems scored in WORK_DIR/decode_*/rouge.txt (ROUGE-1.5.5 F1 x100,
# with ROUGE-1.5.5's own 95% bootstrap interval).
# usage: table.sh WORK_DIR [SYSTEM ...]   (default: every WORK_DIR/decode_*)
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 WORK_DIR [SYSTEM ...]" >&2; exit 2; }
WORK=$1; shift
if [[ $# -eq 0 ]]; then
  set -- $(cd "$WORK" && ls -d decode_* | sed 's/^decode_//')
fi
printf "%-16s %-24s %-24s %-24s\n" system "ROUGE-1 F [95% CI]" "ROUGE-2 F [95% CI]" "ROUGE-L F [95% CI]"
for S in "$@"; do
  F="$WORK/decode_$S/rouge.txt"
  [[ -f "$F" ]] || { echo "table.sh: error: $F not found (score $S first)" >&2; exit 1; }
  awk -v s="$S" '
    / ROUGE-[12L] Average_F:/ { gsub(/[()]/, ""); v[$2] = sprintf("%5.2f [%5.2f, %5.2f]", 100*$4, 100*$6, 100*$8) }
    END { printf "%-16s %-24s %-24s %-24s\n", s, v["ROUGE-1"], v["ROUGE-2"], v["ROUGE-L"] }' "$F"
done
