# Decoding of the Multi-News / WCEP recipes, per family (see README.md, "Decoding"). Sourced by
# decode.sh, and recorded with the data-bin by prepare.sh (fairseq-hier-record; GENERATION, the
# flat systems' rules), so fairseq-hier-summarize decodes alike.
# Flat systems (transformer = 003's FT, parsingsum_ft): Fabbri et al.'s run_test_transformer.sh
# (003 footnote 3): -beam_size 5 -min_length 200 -max_length 300 -length_penalty wu -alpha 0.9
# -coverage_penalty summary -beta 5 -stepwise_penalty -block_ngram_repeat 3 (lengths in pieces
# here, in OpenNMT's whitespace tokens there).
GENERATION_FLAT=(--beam 5 --min-len "${MIN_LEN:-200}" --max-len-a 0 --max-len-b "${MAX_LEN:-300}"
                 --length-penalty-form wu --lenpen 0.9 --coverage-penalty summary
                 --coverage-beta 5 --no-repeat-ngram-size 3)
# Hierarchical systems (liu_ht = 003's HT, parsingsum_ht): Liu & Lapata's code (hiersumm, which
# 003 footnote 2 follows): beam 5, Wu's length penalty with alpha 0.4, no coverage penalty, no
# n-gram blocking, the search ended when its top beam ends (predictor_builder.py l. 328-329);
# the dataset's lengths.
GENERATION_HIER=(--beam 5 --min-len "${MIN_LEN:-200}" --max-len-a 0 --max-len-b "${MAX_LEN:-300}"
                 --length-penalty-form wu --lenpen 0.4 --stop-on-top-beam)
GENERATION=("${GENERATION_FLAT[@]}")
