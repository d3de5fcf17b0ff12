#!/usr/bin/env bash
# Bad inputs, as a new user makes them, through the console scripts: prints a Markdown table of
# each command line, its exit status and the last line it printed. Builds a tiny corpus, data-bin
# and a 2-update pht checkpoint in $WORK first (about a minute on 2 cores).
# Usage: bash scripts/bad_inputs.sh [WORK]   (default: a new temporary folder)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export PATH="${VIRTUAL_ENV:-${CONDA_PREFIX:-$ROOT/.venv}}/bin:$PATH" OMP_NUM_THREADS=1 PYTHONWARNINGS=ignore
WORK=${1:-$(mktemp -d)}
mkdir -p "$WORK" && cd "$WORK" || exit 1
U=(--user-dir "$ROOT/fairseq_hier")

setup() {
  fairseq-hier-demo corpus --output-dir raw --train 40 --valid 8 --test 8 --seed 1 \
    && fairseq-preprocess --source-lang src --target-lang tgt --trainpref raw/train \
      --validpref raw/valid --testpref raw/test --destdir bin --joined-dictionary --workers 1 \
    && fairseq-hier-record data bin --task hierarchical_summarization --pipeline paragraphs \
      --generation "--beam 2 --max-len-b 10" \
    && fairseq-train bin "${U[@]}" --task hierarchical_summarization --arch pht \
      --max-paragraphs 4 --max-paragraph-tokens 8 --max-source-positions 40 \
      --encoder-layers 1 --decoder-layers 1 --encoder-embed-dim 16 --decoder-embed-dim 16 \
      --encoder-ffn-embed-dim 32 --decoder-ffn-embed-dim 32 --encoder-attention-heads 2 \
      --decoder-attention-heads 2 --optimizer adam --lr 1e-3 --batch-size 8 --max-update 2 \
      --save-dir ck --no-epoch-checkpoints --num-workers 0 --no-progress-bar
}
setup > setup.log 2>&1 || { tail -5 setup.log; exit 1; }
head -c 3000 ck/checkpoint_last.pt > ck/cut.pt
head -c 4000 /dev/urandom > random.pt
printf 'w1 w2 5\nw3' > cut.codes
printf '\xef\xbb\xbfone two\nthree four\n' > bom.txt
cp raw/test.src in.txt
mkdir -p empty_run_dir
printf '{"the": 0, "cat": \n' > bad_encoder.json
printf '#version: 0.2\nt h\n' > vocab.bpe
mkdir -p bad_dict && cp bin/*.bin bin/*.idx bad_dict/ && sed '5s/ [0-9]*$//' bin/dict.src.txt > bad_dict/dict.src.txt \
  && cp bad_dict/dict.src.txt bad_dict/dict.tgt.txt
printf 'title w1 <P> w2 w3\ntitle w4 <P> w5\ntitle w6 <P> w7\ntitle w8 <P> w9\ntitle w10 no separator\n' > bad5.txt
cat > evil.py <<'PY'
import os, sys, torch
class Evil:
    def __reduce__(self):
        return (os.system, (f"touch {os.path.abspath('EVIL_RAN')}",))
state = torch.load("ck/checkpoint_last.pt", weights_only=False)
state["extra_state"]["evil"] = Evil()
os.makedirs("evil", exist_ok=True)
torch.save(state, "evil/checkpoint_best.pt")
PY
python evil.py

echo "| command line | exit | last line printed |"
echo "|---|---|---|"
case_() {
  local out rc
  out=$("$@" 2>&1 </dev/null)
  rc=$?
  local last
  last=$(printf '%s\n' "$out" | grep -v '^\s*$' | tail -1 | cut -c1-400)
  printf '| `%s` | %s | `%s` |\n' "$*" "$rc" "${last//|/\\|}"
}
G=(fairseq-generate bin "${U[@]}" --task hierarchical_summarization --path ck/checkpoint_last.pt
   --max-paragraphs 4 --max-paragraph-tokens 8 --batch-size 4 --max-len-b 5)
case_ timeout --preserve-status -s INT 3 fairseq-hier-demo corpus --output-dir big --train 400000 --seed 2
case_ test ! -e big/train.src
case_ fairseq-hier-baseline lead --source raw/test.src --reference raw/test.tgt -o raw/test.src
case_ fairseq-hier-baseline lead --source raw/test.src --reference raw/test.tgt -o /dev/full
case_ fairseq-hier-baseline lead --source raw/test.src --reference raw/test.tgt -o raw
case_ fairseq-hier-baseline lead --source raw/test.src --reference raw/test.tgt -o /proc/lead.txt
case_ fairseq-hier-baseline lead --source nope.src --reference raw/test.tgt -o lead.txt
"${G[@]}" > gen.log 2>&1
head -c -200 gen.log > cut.log
case_ fairseq-hier-hypotheses setup.log
case_ fairseq-hier-hypotheses cut.log
case_ fairseq-hier-hypotheses gen.log --output gen.log
case_ fairseq-hier-ptb-tokenize raw/test.tgt -o raw/test.tgt
case_ fairseq-hier-rouge raw/test.tgt in.txt -o raw/test.tgt --fallback
case_ fairseq-hier-significance rouge raw/test.tgt A=in.txt B=in.txt --samples -5
case_ fairseq-hier-demo doc-corpus --output-dir dd --train-docs -5
case_ fairseq-hier-doc tokenize --input-prefix x --output-prefix y --src-lang en --tgt-lang de --workers -3
case_ fairseq-hier-record data bin --task hierarchical_summarization --pipeline paragraphs --generation "--beam -3"
case_ fairseq-hier-record data bin --task hierarchical_summarization --pipeline paragraphs --generation "--no-such-option 3"
case_ fairseq-hier-doc chunk --input-prefix x --output-prefix y --src-lang en --tgt-lang de --codes cut.codes
case_ fairseq-hier-doc chunk --input-prefix x --output-prefix y --src-lang en --tgt-lang de --codes random.pt
case_ fairseq-hier-report empty_run_dir --output-dir rep
case_ fairseq-hier-demo corpus --output-dir demo --repeat-prob nan
case_ fairseq-hier-rank eval --source raw/test.src --target raw/test.tgt --bootstrap -5
case_ fairseq-hier-summarize ck in.txt -o in.txt
case_ fairseq-hier-summarize ck in.txt --batch-size 0
case_ fairseq-hier-summarize evil in.txt
case_ test ! -e EVIL_RAN
case_ fairseq-hier-summarize ck in.txt --checkpoint-file cut.pt
case_ fairseq-hier-extract-attention bin --path random.pt --output-dir lab
case_ fairseq-hier-extract-attention bin --path ck/checkpoint_last.pt --output-dir lab --batch-size 0
case_ "${G[@]}" --beam -3
case_ "${G[@]}" --max-len-b -5
case_ "${G[@]}" --beam 2 --nbest 3
case_ "${G[@]}" --max-target-positions 2
case_ fairseq-generate bin "${U[@]}" --task hierarchical_summarization --path random.pt
case_ fairseq-generate bin "${U[@]}" --task hierarchical_summarization --path evil/checkpoint_best.pt
case_ test ! -e EVIL_RAN
T=(fairseq-train bin "${U[@]}" --task hierarchical_summarization --arch pht --max-update 1
   --save-dir ck_bad --optimizer adam --lr 1e-3 --batch-size 4 --num-workers 0)
case_ "${T[@]}" --max-paragraphs 0
case_ "${T[@]}" --max-paragraph-tokens -1
case_ "${T[@]}" --max-target-positions 3
case_ "${T[@]}" --encoder-attention-heads 3
case_ "${T[@]}" --dropout 1.5
case_ test ! -e ck_bad/checkpoint_last.pt
case_ fairseq-interactive bin "${U[@]}" --task hierarchical_summarization \
  --path ck/checkpoint_last.pt --input in.txt --beam 2 --max-len-b -5
case_ fairseq-hier-sentence-bos --format source_target --input raw/test --output-prefix sb \
  --gpt2-encoder-json bad_encoder.json --gpt2-vocab-bpe vocab.bpe
case_ fairseq-train bad_dict "${U[@]}" --task hierarchical_summarization --arch pht --max-update 1 \
  --save-dir ck_bad --optimizer adam --lr 1e-3 --batch-size 4
case_ fairseq-interactive bin "${U[@]}" --task hierarchical_summarization \
  --path ck/checkpoint_last.pt --input bad5.txt --buffer-size 2 --beam 2 --max-len-b 5

# --------------------------------------------------------------- workers, signals, full disks
python - <<'PY'
import random
rng = random.Random(0)
words = [f"w{i}" for i in range(300)]
with open("big.src", "w") as s, open("big.tgt", "w") as t:
    for _ in range(12000):
        s.write("title " + " <P> ".join(" ".join(rng.choices(words, k=40)) for _ in range(8)) + "\n")
        t.write(" ".join(rng.choices(words, k=30)) + "\n")
PY
# a worker killed by the system: kill -9 a spawned worker once the command has worked 2 s
worker_killed() {
  local pid worker
  "$@" > killed.log 2>&1 &
  pid=$!
  sleep 2
  worker=$(pgrep -P "$pid" -f spawn_main | head -1)
  kill -9 "$worker"
  wait "$pid"
  printf '| `%s` (worker %s killed with SIGKILL) | %s | `%s` |\n' "$*" "$worker" "$?" \
    "$(grep -v ' | INFO | ' killed.log | tail -1)"
}
# SIGTERM to the whole process group, as Slurm, systemd and timeout send it
group_terminated() {
  setsid "$@" > term.log 2>&1 &
  local pid=$!
  sleep 1.5
  kill -TERM -- "-$pid"
  wait "$pid"
  printf '| `%s` (SIGTERM to its process group) | %s | `%s` |\n' "$*" "$?" \
    "$(grep -v ' | INFO | ' term.log | tail -1)"
}
worker_killed fairseq-hier-rank labels --source big.src --target big.tgt -o w/big.labels --workers 2
worker_killed fairseq-hier-graph --input big.src --kind tfidf --output-prefix w/big.graph.tfidf --workers 2
group_terminated fairseq-hier-rank labels --source big.src --target big.tgt -o w/big.labels --workers 2
case_ ls -A w
if mkdir -p full && mount -t tmpfs -o size=16k tmpfs full 2>/dev/null; then
  case_ fairseq-hier-graph --input big.src --kind tfidf --output-prefix full/big.graph.tfidf
  case_ fairseq-hier-rank labels --source big.src --target big.tgt -o full/big.labels
  case_ ls -A full
  umount full
fi
echo 'a file' > afile
case_ fairseq-hier-baseline lead --source raw/test.src --reference raw/test.tgt -o afile/lead.hyp

# ---------------------------------------------------------------- options holding options
case_ fairseq-hier-record data bin --task hierarchical_summarization --pipeline paragraphs --generation "--beam '2"
case_ fairseq-hier-rouge raw/test.tgt in.txt -a "-c 95 -n '2"
case_ fairseq-hier-analyse efficiency --data bin --task-args '--max-paragraphs "4'
case_ fairseq-hier-summarize ck in.txt "--generation=--beam '2"

# ------------------------------------------------------------------- checkpoints and tasks
python - <<'PY'
import torch
data = open("ck/checkpoint_last.pt", "rb").read()
for k in range(1, 64):  # a cut where torch raises OSError(EINVAL), not RuntimeError
    open("ck/einval.pt", "wb").write(data[: len(data) * k // 64])
    try:
        torch.load("ck/einval.pt", weights_only=False)
    except OSError:
        break
    except Exception:
        pass
PY
case_ fairseq-generate bin "${U[@]}" --task hierarchical_summarization --path ck/einval.pt
case_ fairseq-hier-summarize ck in.txt --checkpoint-file einval.pt
case_ fairseq-hier-rank apply --path ck/einval.pt --input in.txt --output ranked.txt
case_ "${T[@]/pht/hat_bart_base}"
case_ test ! -e ck_bad/crash.pt
case_ fairseq-train bin "${U[@]}" --task paragraph_ranking --arch paragraph_ranker --criterion paragraph_ranking \
  --optimizer adam --lr 1e-3 --batch-size 2 --max-update 1 --save-dir ck_bad
case_ "${T[@]/pht/liu_ht}" --encoder-layers 2 --global-layers 1 --paragraph-graph tfidf
cp in.txt latin1.txt && printf 'title caf\xe9 <P> w1 w2\n' >> latin1.txt
case_ fairseq-interactive bin "${U[@]}" --task hierarchical_summarization \
  --path ck/checkpoint_last.pt --input latin1.txt --beam 2 --max-len-b 5

# ------------------------------------------------------------------------ success on bad input
mkdir -p only_sub/sub && cp in.txt only_sub/sub/a.txt
case_ fairseq-hier-summarize ck only_sub -o only_sub.txt
case_ test ! -e only_sub.txt
case_ fairseq-hier-settings pht --stage train --examples 100 --gpus 1 -- --lrr 3
case_ fairseq-hier-settings pht --stage generate -- --beam x
case_ fairseq-hier-record run runs/x --name x --arch phtt --task hierarchical_summarization --metric rouge
mkdir -p trained/foo && cp ck/checkpoint_last.pt trained/foo/
case_ fairseq-hier-record run runs/y --inherit trained/foo --task hierarchical_summarization --metric rouge
case_ fairseq-hier-report ck --output-dir afile
case_ env WORK=own bash "$ROOT/examples/own_data/run.sh" frob
case_ env WORK=own DATA=raw RANK=bogus bash "$ROOT/examples/own_data/run.sh" prepare pht
case_ test ! -e own
