# SAMSum decoding: the paper gives no settings; beam 4, length penalty 1, 5 to 100 tokens are ours.
# Sourced by prepare.sh (recorded in the data-bin) and decode.sh.
: "${BEAM:=4}" "${LENPEN:=1.0}" "${MIN_LEN:=5}" "${MAX_LEN:=100}"
export BEAM LENPEN MIN_LEN MAX_LEN
