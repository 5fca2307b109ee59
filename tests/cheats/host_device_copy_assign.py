# exercise: transpose
# expect: forbidden
"""A device-to-device copy of a transposed view: no kernel of the learner's."""


def launch(a, out):
    out[:, :] = a.T
