"""Every table a lower layer reads and a higher layer provides, filled in one place, in the order
written here (as numba-cuda's `load_additional_registries` and pytest's `default_plugins` list
theirs). Importing a module fills nothing; `install()` does, from the one entry point every
process passes through: `import grader` (the notebook, `zerogpu`, `python -m
grader.children`, bench/)."""

from __future__ import annotations

from grader import render
from grader.backend import simulator
from grader.compiler import simulator_hook
from grader.doctor import devicemath, fakecuda, kernel, memory, spaces, summary
from grader.result.views import VIEWS


def wiring() -> tuple:
    """(table, what goes in it) in the order installed: a list gets its entries in this order,
    a dict its items, any other table the attributes named."""
    return (
        # Numba's simulator: patches applied with ours, the steps of a launch from the host,
        # what a simulated kernel's globals become (the GPU's float32 math)
        (simulator.ON_INSTALL, [simulator_hook.add_scalar_types]),
        (simulator.BEFORE_LAUNCH, [simulator_hook.compiled_first]),
        (simulator.KERNEL_VALUES, [devicemath.in_kernel]),
        # the kernel doctor: its array views by space, its `cuda.jit`
        (memory.VIEW_CLASSES, spaces.CLASSES),
        (fakecuda.FAKE_CUDA, {"make_kernel": kernel.doctor_jit}),
        # how results show themselves
        (
            VIEWS,
            {
                "text": render.result_text,
                "html": render.result_html,
                "doctor_text": summary.report_text,
                "doctor_html": summary.report_html,
            },
        ),
    )


def install() -> None:
    """Fill every table (again: each list is replaced, never appended to twice)."""
    for table, entries in wiring():
        if isinstance(table, list):
            table[:] = entries
        elif isinstance(table, dict):
            table.update(entries)
        else:
            for name, value in entries.items():
                setattr(table, name, value)
