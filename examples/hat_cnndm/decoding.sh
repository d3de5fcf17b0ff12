# CNN/DM decoding (004 Sec. 4.1: beam 1, no length penalty, min 40 and max 120 tokens). XSum (the
# paper gives no XSum settings): BEAM=6 MIN_LEN=10 MAX_LEN=60, fairseq's BART XSum settings.
# Sourced by prepare.sh (recorded in the data-bin) and decode.sh.
# The values are the table's (fairseq_hier/recipes/architectures.py, HAT's data set cnndm); BEAM
# LENPEN MIN_LEN MAX_LEN replace them (../hat_common/generation.sh).
: "${SETTINGS_DATASET:=cnndm}"
export SETTINGS_DATASET
