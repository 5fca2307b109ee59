# exercise: vector_add
# expect: forbidden
"""Forks without end."""
import os

while True:
    os.fork()
