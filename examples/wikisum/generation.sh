# The WikiSum decoding rules (000 Sec. 4.2, 001 Sec. 5): beam 5, average length normalisation
# (score / |y|: fairseq's default with --lenpen 1), at most 200 tokens, trigram blocking, no repeat
# of the two previous tokens except the comma ('▁,'). Sourced by decode.sh, and recorded with the
# data-bin by prepare.sh (fairseq-hier-record), so fairseq-hier-summarize decodes alike.
GENERATION=(--beam 5 --lenpen 1.0 --max-len-a 0 --max-len-b 200 --no-repeat-ngram-size 3
            --block-previous-tokens 2 --block-previous-exceptions "▁,")
