# exercise: vector_add
# expect: forbidden
"""Crashes the interpreter through ctypes."""
import ctypes

ctypes.string_at(0)
