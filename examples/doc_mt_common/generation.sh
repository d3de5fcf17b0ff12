# Document translation: the fairseq-generate options of the decode step, stated once. Sourced by
# decode.sh (passed to fairseq-generate) and prepare.sh (recorded in the data-bin with
# fairseq-hier-record --generation). 004 Sec. 4.2: beam 4, "we generate until we encounter an EOS
# token": the length cap is the models' 1024 positions. The values are the table's
# (fairseq_hier/recipes/architectures.py, SETTINGS_ARCH's row: defaults.sh); env BEAM MAX_LEN_A
# MAX_LEN_B replace them.
MT_DECODING=$(fairseq-hier-settings "${SETTINGS_ARCH:-hat_transformer_wmt_en_de}" \
  --stage paper-decode --dataset "${SETTINGS_DATASET:-wmt20_en_de}" -- ${BEAM:+--beam "$BEAM"} \
  ${MAX_LEN_A:+--max-len-a "$MAX_LEN_A"} ${MAX_LEN_B:+--max-len-b "$MAX_LEN_B"})
mapfile -t GENERATION <<< "$MT_DECODING"
