# SAMSum decoding: the paper gives no settings; beam 4, length penalty 1, 5 to 100 tokens are ours.
# Sourced by prepare.sh (recorded in the data-bin) and decode.sh.
# The values are the table's (fairseq_hier/recipes/architectures.py, HAT's data set samsum); BEAM
# LENPEN MIN_LEN MAX_LEN replace them (../hat_common/generation.sh).
: "${SETTINGS_DATASET:=samsum}"
export SETTINGS_DATASET
