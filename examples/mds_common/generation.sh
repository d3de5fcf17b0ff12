# The decoding of the Multi-News / WCEP recipes (README.md, "Decoding"), the table's for
# SETTINGS_DATASET: the flat systems' (GENERATION_FLAT, transformer_copy's row) and the
# hierarchical ones' (GENERATION_HIER, parsingsum_ht's); MIN_LEN / MAX_LEN replace the lengths.
# Sourced by decode.sh and prepare.sh (which records them).
LENGTHS=(${MIN_LEN:+--min-len "$MIN_LEN"} ${MAX_LEN:+--max-len-b "$MAX_LEN"})
FLAT_DECODING=$(fairseq-hier-settings transformer_copy --stage paper-decode \
  --dataset "${SETTINGS_DATASET:-multi_news}" -- "${LENGTHS[@]}")
mapfile -t GENERATION_FLAT <<< "$FLAT_DECODING"
HIER_DECODING=$(fairseq-hier-settings parsingsum_ht --stage paper-decode \
  --dataset "${SETTINGS_DATASET:-multi_news}" -- "${LENGTHS[@]}")
mapfile -t GENERATION_HIER <<< "$HIER_DECODING"
GENERATION=("${GENERATION_FLAT[@]}")
