# paper_settings TABLE_ARCH RUN_ARCH RUN_DIR [--stage batch options]: OPTIMISATION and BATCHING
# (on GPUS GPUs, logged in RUN_DIR/train.log) from the table of architectures, and RUN_DIR's
# run.json. Sourced by train_pht.sh and train_002.sh; a refused setting stops the recipe here.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
paper_settings() {
  local table_arch=$1 run_arch=$2 save=$3 text
  shift 3
  mkdir -p "$save"
  text=$(fairseq-hier-settings "$table_arch" --stage batch "$@" ${GPUS:+--gpus "$GPUS"} \
    --log "$save/train.log")
  mapfile -t BATCHING <<< "$text"
  text=$(fairseq-hier-settings "$table_arch" --stage paper-train)
  mapfile -t OPTIMISATION <<< "$text"
  fairseq-hier-record run "$save" --name "$(basename "$save")" --arch "$run_arch" \
    --task hierarchical_summarization --metric rouge > /dev/null
}
