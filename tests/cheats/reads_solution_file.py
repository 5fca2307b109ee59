# exercise: vector_add
# expect: forbidden
"""Reads the bundled solution and runs it."""
source = open("../../../solutions/vector_add.py").read()
namespace = {}
exec(source, namespace)
launch = namespace["launch"]
