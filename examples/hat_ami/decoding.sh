# AMI decoding: the paper gives no AMI settings, so arXiv's long-document ones (beam 2, length
# penalty 1, 72 to 966 tokens); sourced by prepare.sh (recorded in the data-bin) and decode.sh.
# The values are the table's (fairseq_hier/recipes/architectures.py, HAT's data set ami); BEAM
# LENPEN MIN_LEN MAX_LEN replace them (../hat_common/generation.sh).
: "${SETTINGS_DATASET:=ami}"
export SETTINGS_DATASET
