"""Subcommands of `zerogpu` beyond list/check/grade: each module defines `register(sub)`,
adding its argparse subparser(s) with `set_defaults(func=...)`; the function returns an exit
code (0 ok, 1 failed, 2 usage error)."""
