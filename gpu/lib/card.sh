# Sourced by run_all.sh (which exports it to every topic) and prelude.sh (a topic run alone):
# CARD, the card this run measures, for the results files' names (a file is named for its card):
# "NVIDIA H100 80GB HBM3" -> h100, "NVIDIA H200" -> h200; "gpu" when nvidia-smi names no model.
if [ -z "${CARD:-}" ]; then
    CARD=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 \
        | grep -oE '\b[A-Z]+[0-9]{2,4}[A-Z]*\b' | head -1 | tr '[:upper:]' '[:lower:]')
    CARD=${CARD:-gpu}
fi
