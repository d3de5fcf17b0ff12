# HAT recipes: the fairseq-generate options of the decode step, stated once. Sourced by decode.sh
# (passed to fairseq-generate) and by prepare.sh (recorded in the data-bin with fairseq-hier-record
# --generation, so fairseq-hier-summarize decodes raw documents as the recipe decodes the test
# split). The values are the table's (fairseq_hier/recipes/architectures.py, HAT's row and its
# data sets): SETTINGS_DATASET (each dataset's decoding.sh: arxiv cnndm samsum ami icsi; unset:
# other, beam 4, 1-200 tokens) picks them; BEAM LENPEN MIN_LEN MAX_LEN replace them.
HAT_DECODING=$(fairseq-hier-settings hat_bart_large --stage paper-decode \
  --dataset "${SETTINGS_DATASET:-other}" -- ${BEAM:+--beam "$BEAM"} ${LENPEN:+--lenpen "$LENPEN"} \
  ${MIN_LEN:+--min-len "$MIN_LEN"} ${MAX_LEN:+--max-len-b "$MAX_LEN"})
mapfile -t GENERATION <<< "$HAT_DECODING"
