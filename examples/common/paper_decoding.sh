# paper_decoding ARCH DATASET: GENERATION (an array) = the fairseq-generate options of the table
# (fairseq_hier/recipes/architectures.py) for ARCH on DATASET; env BEAM LENPEN MIN_LEN MAX_LEN_A
# MAX_LEN_B (MAX_LEN: MAX_LEN_B) replace its values. Sourced by the HAT and document-MT steps.
paper_decoding() {
  local text max_len_b=${MAX_LEN_B:-${MAX_LEN:-}}
  text=$(fairseq-hier-settings "$1" --stage paper-decode --dataset "$2" -- \
    ${BEAM:+--beam "$BEAM"} ${LENPEN:+--lenpen "$LENPEN"} ${MIN_LEN:+--min-len "$MIN_LEN"} \
    ${MAX_LEN_A:+--max-len-a "$MAX_LEN_A"} ${max_len_b:+--max-len-b "$max_len_b"})
  mapfile -t GENERATION <<< "$text"
}
