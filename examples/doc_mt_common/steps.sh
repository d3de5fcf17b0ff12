# The document-translation steps of a dataset's recipe.sh (README.md), sourced after it set WORK,
# SRC, TGT, the paper's settings and its own `extract` function (published files -> WORK/raw).
# run_step extract|prepare|train|decode|all [fairseq-train / fairseq-generate args]
COMMON=$(cd "$(dirname "${BASH_SOURCE[0]}")/../common" && pwd)
run_step() {
  local step=$1 kind; shift
  case "$step" in
    extract) extract;;
    prepare) bash "$COMMON/doc_mt_prepare.sh" "$WORK" "$SRC" "$TGT";;
    train) for kind in plain hat; do bash "$COMMON/doc_mt_train.sh" "$WORK" "$SRC" "$TGT" "$kind" "$@"; done;;
    decode) bash "$COMMON/doc_mt_decode.sh" "$WORK" "$SRC" "$TGT" "$@";;
    all) for step in extract prepare train decode; do run_step "$step"; done;;
    *) echo "recipe.sh: the step must be extract, prepare, train, decode or all, got '$step'" >&2
       exit 2;;
  esac
}
