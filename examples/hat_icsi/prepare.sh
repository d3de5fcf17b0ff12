#!/usr/bin/env bash
# ICSI meetings as in QMSum (DATA_DIR/{train,val,test}.jsonl, e.g. QMSum's Academic domain, one
# meeting per line) -> WORK/data-bin, as examples/hat_ami does: the filler lexicon (FILLERS,
# default fairseq_hier.readers.qmsum.AMI_FILLERS, QMSum's markup of both corpora) written to
# WORK/fillers.txt, a BOS before every turn (speaker + ": " + content). ICSI speakers have no
# fixed roles (QMSum names them by code: "Grad F", "Professor B", ...), so their segments are
# numbered per meeting in order of appearance (SPEAKER_IDS=appearance). The target is the answer
# to "Summarize the whole meeting". 3072 source / 512 target tokens.
# usage: prepare.sh DATA_DIR WORK BART_DIR
# The steps are AMI's (examples/hat_ami/prepare.sh: the same QMSum layout, filler lexicon, cuts
# and decoding options, decoding.sh being arXiv's for both), with appearance-order speaker ids.
set -euo pipefail
SPEAKER_IDS=${SPEAKER_IDS:-appearance} exec bash "$(dirname "$0")/../hat_ami/prepare.sh" "$@"
