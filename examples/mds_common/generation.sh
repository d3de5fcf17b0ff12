# Decoding of the Multi-News / WCEP recipes, per family (see README.md, "Decoding"). Sourced by
# decode.sh, and recorded with the data-bin by prepare.sh (fairseq-hier-record; GENERATION, the
# flat systems' rules), so fairseq-hier-summarize decodes alike. The values are the table's
# (fairseq_hier/recipes/architectures.py: transformer_copy's row, FT, for the flat systems,
# parsingsum_ht's, HT, for the hierarchical ones; of the data set SETTINGS_DATASET, the dataset's
# run.sh: multi_news by default, wcep); MIN_LEN / MAX_LEN replace its lengths.
LENGTHS=(${MIN_LEN:+--min-len "$MIN_LEN"} ${MAX_LEN:+--max-len-b "$MAX_LEN"})
# Flat systems (transformer = 003's FT, parsingsum_ft): Fabbri et al.'s run_test_transformer.sh
# (003 footnote 3): -beam_size 5 -min_length 200 -max_length 300 -length_penalty wu -alpha 0.9
# -coverage_penalty summary -beta 5 -stepwise_penalty -block_ngram_repeat 3 (lengths in pieces
# here, in OpenNMT's whitespace tokens there).
FLAT_DECODING=$(fairseq-hier-settings transformer_copy --stage paper-decode \
  --dataset "${SETTINGS_DATASET:-multi_news}" -- "${LENGTHS[@]}")
mapfile -t GENERATION_FLAT <<< "$FLAT_DECODING"
# Hierarchical systems (liu_ht = 003's HT, parsingsum_ht): Liu & Lapata's code (hiersumm, which
# 003 footnote 2 follows): beam 5, Wu's length penalty with alpha 0.4, no coverage penalty, no
# n-gram blocking, the search ended when its top beam ends (predictor_builder.py l. 328-329);
# the dataset's lengths.
HIER_DECODING=$(fairseq-hier-settings parsingsum_ht --stage paper-decode \
  --dataset "${SETTINGS_DATASET:-multi_news}" -- "${LENGTHS[@]}")
mapfile -t GENERATION_HIER <<< "$HIER_DECODING"
GENERATION=("${GENERATION_FLAT[@]}")
