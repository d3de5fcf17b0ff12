#!/usr/bin/env bash
# Open the demo's report in headless Chromium: save a screenshot next to it and fail unless every
# image of the page loaded. `make report-check` (not part of `make test`: it installs a browser).
#
#   bash scripts/report_check.sh [REPORT]      # default demo_work/report/report.html; or REPORT=...
#
# Installs Debian's chromium if /usr/bin/chromium is missing (apt-get, with sudo unless root).
# The page's own inline script (fairseq_hier/report/render.py) sets document.title to
# "report: images ok N" or "report: images failed K/N" once loaded; Chromium's --dump-dom, given a
# virtual-time budget so that the load event fires, prints it. Passes only for "images ok N", N > 0.
# Output: REPORT's folder/report.png (1400 x 4000 px: the top of the page) and one line.
set -euo pipefail
REPORT=${1:-${REPORT:-}}
# a path given as argument or REPORT=... is read from the caller's folder
[[ -n "$REPORT" && "$REPORT" != /* ]] && REPORT="$PWD/$REPORT"
cd "$(dirname "$0")/.."
REPORT=${REPORT:-demo_work/report/report.html}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

if [[ ! -f "$REPORT" ]]; then
  echo "report_check: $REPORT not found: run \`make demo\` first (it ends by writing it)" >&2
  exit 1
fi
if [[ ! -x "$CHROMIUM" ]]; then
  echo "[report-check] installing Debian's chromium (apt-get, about a minute)"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium >/dev/null
fi

PAGE="file://$(cd "$(dirname "$REPORT")" && pwd)/$(basename "$REPORT")"
SHOT="$(dirname "$REPORT")/report.png"
PROFILE=$(mktemp -d)
LOG=$(mktemp)
trap 'rm -rf "$PROFILE" "$LOG"' EXIT
FLAGS=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --user-data-dir="$PROFILE")

# Chromium logs D-Bus complaints on stderr in a container: kept in $LOG, shown only on failure
if ! timeout 120 "$CHROMIUM" "${FLAGS[@]}" --screenshot="$SHOT" --window-size=1400,4000 \
    "$PAGE" >"$LOG" 2>&1 || [[ ! -s "$SHOT" ]]; then
  tail -5 "$LOG" >&2
  echo "report_check: chromium could not take a screenshot of $REPORT" >&2
  exit 1
fi
DOM=$(timeout 120 "$CHROMIUM" "${FLAGS[@]}" --virtual-time-budget=10000 --dump-dom "$PAGE" \
      2>"$LOG") \
  || { tail -5 "$LOG" >&2; echo "report_check: chromium --dump-dom failed" >&2; exit 1; }
TITLE=$(grep -o '<title>[^<]*</title>' <<<"$DOM" | head -1 | sed -e 's/<[^>]*>//g')

if [[ "$TITLE" =~ ^report:\ images\ ok\ ([0-9]+)$ ]] && (( BASH_REMATCH[1] > 0 )); then
  echo "report_check: OK: ${BASH_REMATCH[1]} images loaded in $REPORT; screenshot $SHOT"
else
  echo "report_check: FAILED: $REPORT: page title '${TITLE:-none}' (expected" \
       "'report: images ok N', N > 0); screenshot $SHOT" >&2
  exit 1
fi
