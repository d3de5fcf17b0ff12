#!/usr/bin/env bash
# ICSI meetings as in QMSum (004 Table 6): AMI's steps, speakers numbered by appearance: README.md
SETTINGS_DATASET=${SETTINGS_DATASET:-icsi} SPEAKER_IDS=${SPEAKER_IDS:-appearance} \
  SEGMENTS=${SEGMENTS:-auto} exec bash "$(dirname "$0")/../hat_ami/recipe.sh" "$@"
