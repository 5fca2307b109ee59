# exercise: vector_add
# expect: forbidden
"""Sends data out over the network through a socket module reached via numba."""
from numba.core.serialize import pickle

socket = pickle.sys.modules.get("socket") or pickle.sys.modules["builtins"].__import__("socket")
socket.create_connection(("127.0.0.1", 22), timeout=1)


def launch(a, b, c):
    pass
