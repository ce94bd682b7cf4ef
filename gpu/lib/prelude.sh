# Sourced by topic scripts (gpu/<topic>.sh) that compile and run: strict mode, the repository
# root, the results folder run_all.sh gives them, and `step` for a timed heading in the log.
set -u -o pipefail
cd "$(dirname "$0")/.."
: "${RESULTS_DIR:?set RESULTS_DIR to an empty folder for the results}"
mkdir -p build "$RESULTS_DIR"
status=0
step() { echo "== $* ($(date +%T))"; }
source gpu/lib/card.sh  # CARD: h100, h200, ... for file names
