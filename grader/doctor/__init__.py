"""The kernel doctor: runs Numba CUDA kernels on the CPU, in this process, one OS thread for
all CUDA threads, and diagnoses what Numba's simulator cannot see: races, missing atomics,
divergent barriers, negative or out-of-range indices, reads of unwritten shared memory, and
how well each access would use a GPU's memory (coalescing, bank conflicts).

    grader.doctor.execute.execute(spec, launch, inputs, dims) -> DoctorOutcome
    grader.doctor.run(fn, *args)   # host code that launches kernels (notebook cells)

docs/DOCTOR.md describes the design and the choices made where the issue was silent.
"""

from grader.doctor.errors import Unsupported
from grader.doctor.host import KernelDoctorError, run

__all__ = ["KernelDoctorError", "Unsupported", "run"]
