# The WikiSum decoding rules (README.md, step 3), the table's (fairseq-hier-settings ARCH --stage
# paper-decode): PHT's for every architecture (GENERATION), 002's for liu_ht (LIU_GENERATION) and
# FT (FT_GENERATION). Sourced by prepare.sh, which records them with the data-bin.
PHT_DECODING=$(fairseq-hier-settings pht --stage paper-decode)
mapfile -t GENERATION <<< "$PHT_DECODING"
LIU_DECODING=$(fairseq-hier-settings liu_ht --stage paper-decode)
mapfile -t LIU_GENERATION <<< "$LIU_DECODING"
LIU_GENERATION+=(--no-repeat-ngram-size 0 --block-previous-tokens 0 --max-paragraphs 24
                 --max-paragraph-tokens 500)
FT_GENERATION=("${LIU_GENERATION[@]}" --max-source-positions 800)
