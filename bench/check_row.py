"""One line of a table from `zerogpu check --json` on stdin: file, verdict, speedup over the
baseline, fraction of the target's speed, speed tier, seconds, message."""

import json
import sys

result = json.load(sys.stdin)
details = (result.get("speed") or {}).get("details") or {}
speedup = (details.get("speedup_vs_baseline") or {}).get("median")
of_target = (details.get("fraction_of_target") or {}).get("median")
figures = f"{speedup:8.2f}x {of_target:6.0%}" if speedup is not None else f"{'-':>9} {'-':>6}"
print(
    f"{sys.argv[1]:<44} {result['verdict']:<16} {figures} {details.get('tier') or '-':<15} "
    f"{result['seconds']:>6} s  {result['message'][:80]}"
)
