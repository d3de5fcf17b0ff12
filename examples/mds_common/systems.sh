# system SYSTEM: ARCH (fairseq-train's model options), TASK (the task's options, the same in
# training and decoding), KIND (flat | hier) and ROW (the table's row of its settings) of one of
# the four systems of 003 Tables 2-3 (README.md). Sourced by train.sh and decode.sh.
system() {
  local hier=(--max-paragraphs "${MAX_PARAGRAPHS:-10}" --max-paragraph-tokens "${MAX_PARAGRAPH_TOKENS:-160}")
  # flat: the documents are not cut one by one, their concatenation is (Fabbri's -src_seq_length_trunc)
  local flat=(--max-paragraphs "${MAX_PARAGRAPHS:-10}" --max-paragraph-tokens "${FLAT_POSITIONS:-500}"
              --max-source-positions "${FLAT_POSITIONS:-500}")
  case "$1" in
    parsingsum_ft) ARCH=(--arch parsingsum_ft); TASK=(--dependency-parse spacy "${flat[@]}"); KIND=flat ;;
    transformer)   ARCH=(--arch transformer_copy); TASK=("${flat[@]}"); KIND=flat ;;
    parsingsum_ht) ARCH=(--arch parsingsum_ht); TASK=(--dependency-parse spacy "${hier[@]}"); KIND=hier ;;
    liu_ht)        ARCH=(--arch liu_ht --encoder-layers 8 --global-layers 6,7
                         --encoder-attention-heads 8 --global-heads 8); TASK=("${hier[@]}"); KIND=hier ;;
    *) echo "$(basename "$0"): unknown SYSTEM $1 (parsingsum_ft, transformer, parsingsum_ht, liu_ht)" >&2
       exit 2 ;;
  esac
  ROW=transformer_copy
  [[ "$KIND" == hier ]] && ROW=parsingsum_ht
  return 0
}
