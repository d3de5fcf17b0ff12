# arXiv / PubMed decoding (004 Sec. 4.1: beam 2, length penalty 1, min 72 and max 966 tokens);
# sourced by prepare.sh (recorded in the data-bin) and decode.sh. Each can be overridden.
: "${BEAM:=2}" "${LENPEN:=1.0}" "${MIN_LEN:=72}" "${MAX_LEN:=966}"
export BEAM LENPEN MIN_LEN MAX_LEN
