# Document translation: the steps of a dataset recipe, sourced by examples/wmt20_doc/recipe.sh and
# examples/ted_zh_en/recipe.sh after they set WORK, SRC, TGT and the paper's settings and defined
# their own `extract` function (published files -> WORK/raw).
# run_step extract|prepare|train|decode|all [fairseq-train / fairseq-generate args]
#   train: the plain baseline, then HAT; all: every step with the defaults
COMMON=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
run_step() {
  local step=$1 kind; shift
  case "$step" in
    extract) extract;;
    prepare) bash "$COMMON/prepare.sh" "$WORK" "$SRC" "$TGT";;
    train) for kind in plain hat; do bash "$COMMON/train.sh" "$WORK" "$SRC" "$TGT" "$kind" "$@"; done;;
    decode) bash "$COMMON/decode.sh" "$WORK" "$SRC" "$TGT" "$@";;
    all) for step in extract prepare train decode; do run_step "$step"; done;;
    *) echo "recipe.sh: the step must be extract, prepare, train, decode or all, got '$step'" >&2
       exit 2;;
  esac
}
