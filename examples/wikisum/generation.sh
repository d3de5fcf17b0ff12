# The WikiSum decoding rules, sourced by decode.sh and recorded with the data-bin by prepare.sh
# (fairseq-hier-record: GENERATION for every architecture, LIU_GENERATION and FT_GENERATION for
# liu_ht and transformer), so decode.sh and fairseq-hier-summarize decode each checkpoint with
# its own architecture's rules. The values are the table's (fairseq_hier/recipes/architectures.py,
# fairseq-hier-settings ARCH --stage paper-decode); the rest of this file says where they come from.
# PHT/VHT (000 Sec. 4.2, 001 Sec. 5.2): beam 5, average length normalisation (score / |y|:
# fairseq's default with --lenpen 1), at most 200 tokens, trigram blocking, no repeat of the two
# previous tokens except the comma: the authors' code (yema2018/wiki_sum main.py,
# eval_by_beam_search) exempts id 10, '▁,', and skips it when it counts the two previous tokens
# (the task's default count).
PHT_DECODING=$(fairseq-hier-settings pht --stage paper-decode)
mapfile -t GENERATION <<< "$PHT_DECODING"
# liu_ht and FT (002 Sec. 4: beam 5, Wu et al.'s length penalty alpha 0.4, "until an
# end-of-sequence token is reached"), as hiersumm's evaluation command decodes (README.md:
# "-alpha 0.4 -max_length 400"; -min_length keeps its default 20, src/train_abstractive.py) with
# its predictor's stopping rule (the search ends when its top beam ends: --stop-on-top-beam); no
# n-gram blocking; the title + 24 paragraphs of at most 500 tokens read in training; FT cut to
# its 800 tokens
LIU_DECODING=$(fairseq-hier-settings liu_ht --stage paper-decode)
mapfile -t LIU_GENERATION <<< "$LIU_DECODING"
LIU_GENERATION+=(--no-repeat-ngram-size 0 --block-previous-tokens 0 --max-paragraphs 24
                 --max-paragraph-tokens 500)
FT_GENERATION=("${LIU_GENERATION[@]}" --max-source-positions 800)
