# Decoding of the Multi-News / WCEP recipes (003's setup): beam 5, at least MIN_LEN and at most
# MAX_LEN pieces, trigram blocking. Sourced by decode.sh, and recorded with the data-bin by
# prepare.sh (fairseq-hier-record), so fairseq-hier-summarize decodes alike.
GENERATION=(--beam 5 --min-len "${MIN_LEN:-200}" --max-len-a 0 --max-len-b "${MAX_LEN:-400}"
            --no-repeat-ngram-size 3)
