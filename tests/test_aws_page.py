"""The GPUs-on-AWS page renders from the data files (no site build needed)."""

from __future__ import annotations

from helpers import ROOT
from renderers.page import render_page

PAGE = ROOT / "docs" / "setup" / "gpus-on-aws.md"


def test_page_renders_every_directive():
    out = render_page(PAGE.read_text(), ROOT / "docs", "setup/gpus-on-aws.md")
    assert "<!-- render" not in out
    assert '=== "Training (' in out and '=== "Retired (' in out
    assert "| `p5.48xlarge` | 98.32 (2025-04-28) | 55.04 (2025-06-23) | -44.0% |" in out
    # Issue 21: seven narrow columns, the key one first; sources as links under the table.
    assert out.count("| instance | accelerators | vCPUs | $/hour | $/GPU-hour | BF16 / FP8 | notes |") == 4
    assert "[1] <https://github.com/aws/karpenter-provider-aws/" in out
    assert "aws-sagemaker" not in out  # no SageMaker prices without a primary source
    assert "`L-DB2E81BA`" in out and "17.18 GB" in out
    assert "| `p5.48xlarge` | 8 × NVIDIA H100 | 7,912 |" in out
