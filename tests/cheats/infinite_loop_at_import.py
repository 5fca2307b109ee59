# exercise: vector_add
# expect: timeout
"""Never finishes importing."""
while True:
    pass


def launch(a, b, c):
    pass
