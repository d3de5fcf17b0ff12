# ICSI decoding: the paper gives no ICSI settings, so arXiv's long-document ones (beam 2, length
# penalty 1, 72 to 966 tokens), as for AMI; sourced by prepare.sh (recorded in the data-bin) and
# decode.sh.
: "${BEAM:=2}" "${LENPEN:=1.0}" "${MIN_LEN:=72}" "${MAX_LEN:=966}"
export BEAM LENPEN MIN_LEN MAX_LEN
