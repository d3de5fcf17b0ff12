# Sourced by the demo scripts: the repository root as working directory, this environment's
# commands on PATH (first, unless the commands are on PATH already), two CPU threads unless set.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$(pwd)
command -v fairseq-hier-rouge > /dev/null \
  || export PATH="${VIRTUAL_ENV:-${CONDA_PREFIX:-$ROOT/.venv}}/bin:$PATH"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
