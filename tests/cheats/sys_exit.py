# exercise: vector_add
# expect: forbidden
"""Raises SystemExit(0), hoping the grader reads it as success."""
import sys

sys.exit(0)
