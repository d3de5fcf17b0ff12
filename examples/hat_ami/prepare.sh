#!/usr/bin/env bash
# AMI meetings as in QMSum (DATA_DIR/{train,val,test}.jsonl, e.g. QMSum's Product domain, one
# meeting per line) -> WORK/data-bin. 004 Sec. 4.1: meaningless words are filtered by a small
# lexicon (FILLERS, default fairseq_hier.readers.qmsum.AMI_FILLERS written to WORK/fillers.txt),
# each with the punctuation it leaves alone (readers.filter_fillers),
# then a BOS before every turn (role + utterance), one segment id per role (004 Sec. 4.1:
# SPEAKER_IDS=roles, AMI's four roles as QMSum names them: Project Manager 0, Marketing 1, User
# Interface 2, Industrial Designer 3; another speaker name stops with one line naming the file,
# line and name; SPEAKER_IDS=appearance numbers each meeting's speakers instead). The target is the
# answer to "Summarize the whole meeting". 3072 source / 512 target tokens (AMI transcripts are
# ~4000 tokens: 004 Table 1).
# usage: prepare.sh DATA_DIR WORK BART_DIR
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # recorded in the data-bin for fairseq-hier-summarize
[[ $# -eq 3 ]] || { echo "usage: $0 DATA_DIR WORK BART_DIR" >&2; exit 2; }
D=$1; WORK=$2
mkdir -p "$WORK"
if [[ -z "${FILLERS:-}" ]]; then
  FILLERS="$WORK/fillers.txt"
  python -c 'from fairseq_hier.readers.qmsum import AMI_FILLERS; print("\n".join(sorted(AMI_FILLERS)))' > "$FILLERS"
fi
FILLERS=$FILLERS SPEAKERS=1 SPEAKER_IDS=${SPEAKER_IDS:-roles} MAX_SOURCE=${MAX_SOURCE:-3072} MAX_TARGET=${MAX_TARGET:-512} \
  bash "$(dirname "$0")/../hat_common/prepare.sh" qmsum "$WORK" "$3" "$D/train.jsonl" "$D/val.jsonl" "$D/test.jsonl"
