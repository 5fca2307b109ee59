# exercise: vector_add
# expect: forbidden
"""Ends the process with status 0 before any check."""
import os

os._exit(0)
