# Sourced by the demo scripts: the repository root as working directory, this virtualenv's
# commands first on PATH, two CPU threads unless set.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$(pwd)
export PATH="${VIRTUAL_ENV:-${CONDA_PREFIX:-$ROOT/.venv}}/bin:$PATH"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
