"""The benchmark harness: `python snippets/bench/run.py <topic>` times a topic's registered
variants the fair way and writes a results file (see runner.py and results.py)."""
