# HAT recipes: the fairseq-generate options of the decode step, stated once. Sourced by decode.sh
# (passed to fairseq-generate) and by prepare.sh (recorded in the data-bin with fairseq-hier-record
# --generation, so fairseq-hier-summarize decodes raw documents as the recipe decodes the test
# split). env: BEAM LENPEN MIN_LEN MAX_LEN, the paper's per dataset (each dataset's decoding.sh).
GENERATION=(--beam "${BEAM:-4}" --lenpen "${LENPEN:-1.0}" --min-len "${MIN_LEN:-1}" --max-len-a 0
            --max-len-b "${MAX_LEN:-200}")
