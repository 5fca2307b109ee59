"""Compile before running: Numba's real CUDA compiler checks every kernel a CPU engine runs
(client.py in the grading process, server.py in a helper process of its own)."""
