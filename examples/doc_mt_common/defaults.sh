# Document translation: the default of every setting of the shared steps, stated once and sourced
# by prepare.sh, train.sh and decode.sh (README.md, "Settings", gives where each value comes
# from). A value already set (by the dataset's recipe.sh or the environment) is kept. The defaults
# are the paper's WMT20 En-De settings (004 Sec. 4.2, examples/wmt20_doc/recipe.sh), so that
# `prepare.sh WORK SRC TGT`, `train.sh WORK SRC TGT hat|plain` and `decode.sh WORK SRC TGT` run
# for any language pair with nothing else set.
# prepare.sh
: "${BPE_CODES:=40000}"          # joint fastBPE merges
: "${MAX_CHUNK:=512}"            # most BPE tokens of a chunk on either side (also train, decode)
: "${WORKERS:=$(nproc)}"         # worker processes of tokenisation and binarisation
: "${TOKENIZER:=auto}"           # fairseq-hier-doc-tokenize --tokenizer: auto|moses|jieba|none
: "${SRC_TOKENIZER:=$TOKENIZER}" # the source side's (default: TOKENIZER)
: "${TGT_TOKENIZER:=$TOKENIZER}" # the target side's (default: TOKENIZER)
# train.sh
: "${HAT_ARCH:=hat_transformer_wmt_en_de}"
: "${PLAIN_ARCH:=transformer_wmt_en_de_big}"
: "${SETTINGS_ARCH:=hat_transformer_wmt_en_de}" # the table's row of the training and decoding
: "${SETTINGS_DATASET:=wmt20_en_de}"           # settings (fairseq_hier/recipes/architectures.py)
# UPDATES WARMUP LR MAX_TOKENS (per GPU and step) PAPER_GPUS PAPER_UPDATE_FREQ DROPOUT SMOOTHING
# WEIGHT_DECAY: unset, the table's; set, they replace its values
: "${LOG_INTERVAL:=100}"
# decode.sh (BEAM MAX_LEN_A MAX_LEN_B: generation.sh)
: "${BATCH_TOKENS:=8192}"        # fairseq-generate --max-tokens
: "${SYSTEMS:=plain hat}"        # the systems decoded, the first the baseline of the bootstrap
