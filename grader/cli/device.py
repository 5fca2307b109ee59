"""`zerogpu device`: measure (or show the cached) ceilings of this GPU. The work is
grader/gpu/ceilings.py `device_report`; this prints it."""

from __future__ import annotations

from grader.gpu.ceilings import NoGPU, device_report


def cmd_device(args) -> int:
    from rich.console import Console

    console = Console(highlight=False)
    measuring = "Measuring this GPU's ceilings (about 25 s, once per GPU model and driver)"
    try:
        c = device_report(refresh=args.refresh, measuring=lambda: console.status(measuring))
    except NoGPU as err:
        console.print(str(err))
        return 1
    except RuntimeError as err:
        console.print(f"[red]error:[/] {err}")
        return 1
    console.print(
        f"[bold]{c['name']}[/] (driver {c['driver']}, {c['sms']} SMs, compute capability "
        f"{'.'.join(map(str, c['compute_capability']))}), measured {c['measured_at']}"
    )
    for key, unit, scale in (
        ("copy_bandwidth", "GB/s", 1e9),
        ("read_bandwidth", "GB/s", 1e9),
        ("fp32_flops", "TFLOP/s", 1e12),
    ):
        if key in c:
            console.print(f"  {key:<15} {c[key] / scale:10.1f} {unit}   [dim]{c['method'][key]}[/]")
        if key == "copy_bandwidth" and c.get("copy_parts"):
            console.print(f"  {'':<15} [dim]({_copy_parts(c, unit, scale)})[/]")
    return 0


def _copy_parts(c: dict, unit: str, scale: float) -> str:
    """Each copy method's best figure, and its range over the processes that measured it."""
    spread = c.get("copy_runs", {})
    parts = []
    for name, best in c["copy_parts"].items():
        text = f"{name} {best / scale:.1f} {unit}"
        if len(spread.get(name, ())) > 1:
            text += f" (processes: {min(spread[name]) / scale:.0f}-{max(spread[name]) / scale:.0f})"
        parts.append(text)
    return ", ".join(parts)


def register(sub) -> None:
    parser = sub.add_parser("device", help="this GPU's measured ceilings (copy bandwidth, fp32 FMA)")
    parser.add_argument("--refresh", action="store_true", help="measure again instead of using the cache")
    parser.set_defaults(func=cmd_device)
