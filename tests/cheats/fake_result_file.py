# exercise: vector_add
# expect: forbidden
"""Writes a result file claiming success."""
import json


def launch(a, b, c):
    with open("outcome-0.json", "w") as fh:
        fh.write(json.dumps({"error": None, "seconds": 0.0}))
