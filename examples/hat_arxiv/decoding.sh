# arXiv / PubMed decoding (004 Sec. 4.1: beam 2, length penalty 1, min 72 and max 966 tokens);
# sourced by prepare.sh (recorded in the data-bin) and decode.sh. Each can be overridden.
# The values are the table's (fairseq_hier/recipes/architectures.py, HAT's data set arxiv); BEAM
# LENPEN MIN_LEN MAX_LEN replace them (../hat_common/generation.sh).
: "${SETTINGS_DATASET:=arxiv}"
export SETTINGS_DATASET
