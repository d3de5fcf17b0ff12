# The WikiSum decoding rules, sourced by decode.sh and recorded with the data-bin by prepare.sh
# (fairseq-hier-record: GENERATION for every architecture, LIU_GENERATION and FT_GENERATION for
# liu_ht and transformer), so decode.sh and fairseq-hier-summarize decode each checkpoint with
# its own architecture's rules.
# PHT/VHT (000 Sec. 4.2, 001 Sec. 5): beam 5, average length normalisation (score / |y|:
# fairseq's default with --lenpen 1), at most 200 tokens, trigram blocking, no repeat of the two
# previous tokens except the comma ('▁,').
GENERATION=(--beam 5 --lenpen 1.0 --max-len-a 0 --max-len-b 200 --no-repeat-ngram-size 3
            --block-previous-tokens 2 --block-previous-exceptions "▁,")
# liu_ht and FT (002 Sec. 4; hiersumm's predictor: max_length 400, min_length 20): beam 5, Wu et
# al.'s length penalty ((5 + |y|) / 6)^0.4, until EOS (at most 400 tokens), at least 20, no
# n-gram blocking; the title + 24 paragraphs of at most 500 tokens read in training; FT cut to
# its 800 tokens
LIU_GENERATION=(--beam 5 --length-penalty-form wu --lenpen 0.4 --max-len-a 0 --max-len-b 400
                --min-len 20 --no-repeat-ngram-size 0 --block-previous-tokens 0
                --max-paragraphs 24 --max-paragraph-tokens 500)
FT_GENERATION=("${LIU_GENERATION[@]}" --max-source-positions 800)
