# Document translation: the fairseq-generate options of the decode step, stated once. Sourced by
# decode.sh (passed to fairseq-generate) and prepare.sh (recorded in the data-bin with
# fairseq-hier-record --generation). 004 Sec. 4.2: beam 4, "we generate until we encounter an EOS
# token": the length cap is the models' 1024 positions. env: BEAM (4) MAX_LEN_A (0) MAX_LEN_B (1023)
GENERATION=(--beam "${BEAM:-4}" --max-len-a "${MAX_LEN_A:-0}" --max-len-b "${MAX_LEN_B:-1023}")
