# exercise: vector_add
# expect: forbidden
"""Spawns processes through multiprocessing."""
import multiprocessing


def launch(a, b, c):
    for _ in range(1000):
        multiprocessing.Process(target=launch, args=(a, b, c)).start()
